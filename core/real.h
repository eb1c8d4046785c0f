/*
 * real.h: the C library's own functions behind goshim's interposers.
 *
 * Filled once by real.c (dlsym RTLD_NEXT / dlvsym) before the runtime
 * starts; core reaches libc's pthread functions only through this table, so
 * it never calls an interposer by accident.
 */
#ifndef GOSHIM_REAL_H
#define GOSHIM_REAL_H

#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

struct real_fns {
	int (*pthread_create)(pthread_t *, const pthread_attr_t *,
			      void *(*)(void *), void *);
	void (*pthread_exit)(void *) __attribute__((noreturn));
	int (*pthread_join)(pthread_t, void **);
	int (*pthread_tryjoin_np)(pthread_t, void **);
	int (*pthread_clockjoin_np)(pthread_t, void **, clockid_t,
				    const struct timespec *);
	int (*pthread_detach)(pthread_t);
	int (*pthread_getattr_np)(pthread_t, pthread_attr_t *);
	int (*pthread_setaffinity_np)(pthread_t, size_t, const cpu_set_t *);
	int (*pthread_getaffinity_np)(pthread_t, size_t, cpu_set_t *);
	int (*pthread_setschedparam)(pthread_t, int,
				     const struct sched_param *);
	int (*pthread_getschedparam)(pthread_t, int *, struct sched_param *);
	int (*pthread_setschedprio)(pthread_t, int);
	int (*pthread_kill)(pthread_t, int);
	int (*raise)(int);
	int (*pthread_cancel)(pthread_t);
	void (*pthread_testcancel)(void);
	int (*pthread_sigqueue)(pthread_t, int, const union sigval);
	int (*pthread_key_create)(pthread_key_t *, void (*)(void *));
	int (*pthread_key_delete)(pthread_key_t);
	void *(*pthread_getspecific)(pthread_key_t);
	int (*pthread_setspecific)(pthread_key_t, const void *);
	int (*pthread_setname_np)(pthread_t, const char *);
	int (*pthread_getname_np)(pthread_t, char *, size_t);
	int (*sched_yield)(void);
	void *(*dlopen)(const char *, int);
	void *(*dlmopen)(long, const char *, int);
	int (*dlclose)(void *);
	int (*pthread_once)(pthread_once_t *, void (*)(void));
	int (*pthread_barrier_init)(pthread_barrier_t *,
				    const pthread_barrierattr_t *, unsigned);
	int (*pthread_barrier_wait)(pthread_barrier_t *);
	int (*pthread_barrier_destroy)(pthread_barrier_t *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *,
			       struct timespec *);
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*clock_getres)(clockid_t, struct timespec *);
	int (*pthread_getcpuclockid)(pthread_t, clockid_t *);
	int (*getrusage)(int, struct rusage *);
	int (*timer_create)(clockid_t, struct sigevent *, timer_t *);
	int (*timer_settime)(timer_t, int, const struct itimerspec *,
			     struct itimerspec *);
	int (*timer_gettime)(timer_t, struct itimerspec *);
	int (*timer_getoverrun)(timer_t);
	int (*timer_delete)(timer_t);

	/* glibc's own synchronisation: process-shared objects, and threads
	 * when the runtime is off */
	int (*pthread_mutex_init)(pthread_mutex_t *,
				  const pthread_mutexattr_t *);
	int (*pthread_mutex_destroy)(pthread_mutex_t *);
	int (*pthread_mutex_lock)(pthread_mutex_t *);
	int (*pthread_mutex_trylock)(pthread_mutex_t *);
	int (*pthread_mutex_timedlock)(pthread_mutex_t *,
				       const struct timespec *);
	int (*pthread_mutex_clocklock)(pthread_mutex_t *, clockid_t,
				       const struct timespec *);
	int (*pthread_mutex_unlock)(pthread_mutex_t *);
	int (*pthread_mutex_consistent)(pthread_mutex_t *);
	int (*pthread_mutex_getprioceiling)(const pthread_mutex_t *, int *);
	int (*pthread_mutex_setprioceiling)(pthread_mutex_t *, int, int *);
	int (*pthread_cond_init)(pthread_cond_t *, const pthread_condattr_t *);
	int (*pthread_cond_destroy)(pthread_cond_t *);
	int (*pthread_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*pthread_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
				      const struct timespec *);
	int (*pthread_cond_clockwait)(pthread_cond_t *, pthread_mutex_t *,
				      clockid_t, const struct timespec *);
	int (*pthread_cond_signal)(pthread_cond_t *);
	int (*pthread_cond_broadcast)(pthread_cond_t *);
	int (*pthread_rwlock_init)(pthread_rwlock_t *,
				   const pthread_rwlockattr_t *);
	int (*pthread_rwlock_destroy)(pthread_rwlock_t *);
	int (*pthread_rwlock_rdlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_tryrdlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_timedrdlock)(pthread_rwlock_t *,
					  const struct timespec *);
	int (*pthread_rwlock_clockrdlock)(pthread_rwlock_t *, clockid_t,
					  const struct timespec *);
	int (*pthread_rwlock_wrlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_trywrlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_timedwrlock)(pthread_rwlock_t *,
					  const struct timespec *);
	int (*pthread_rwlock_clockwrlock)(pthread_rwlock_t *, clockid_t,
					  const struct timespec *);
	int (*pthread_rwlock_unlock)(pthread_rwlock_t *);
	int (*pthread_spin_init)(pthread_spinlock_t *, int);
	int (*pthread_spin_destroy)(pthread_spinlock_t *);
	int (*pthread_spin_lock)(pthread_spinlock_t *);
	int (*pthread_spin_trylock)(pthread_spinlock_t *);
	int (*pthread_spin_unlock)(pthread_spinlock_t *);
	int (*sem_init)(sem_t *, int, unsigned);
	int (*sem_destroy)(sem_t *);
	int (*sem_wait)(sem_t *);
	int (*sem_trywait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*sem_post)(sem_t *);
	int (*sem_getvalue)(sem_t *, int *);
	sem_t *(*sem_open)(const char *, int, ...);
	int (*sem_close)(sem_t *);
	int (*sem_unlink)(const char *);

	/* fd calls that may wait (shim/fd_*.c) */
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, __SOCKADDR_ARG,
			    socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  __CONST_SOCKADDR_ARG, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*accept)(int, __SOCKADDR_ARG, socklen_t *);
	int (*accept4)(int, __SOCKADDR_ARG, socklen_t *, int);
	int (*connect)(int, __CONST_SOCKADDR_ARG, socklen_t);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
		       const struct timespec *, const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	/* NULL before glibc 2.35 */
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
	int (*close)(int);
	int (*socket)(int, int, int);
	int (*socketpair)(int, int, int, int[2]);
	int (*pipe)(int[2]);
	int (*pipe2)(int[2], int);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	/* siglongjmp (glibc's longjmp is the same) and _FORTIFY_SOURCE's */
	void (*longjmp)(struct __jmp_buf_tag *, int) __attribute__((noreturn));
	void (*longjmp_chk)(struct __jmp_buf_tag *, int)
		__attribute__((noreturn));
	/* The runtime's start-up calls this, never through an interposer:
	 * ASan's start-up may start goshim's (its sigaction call), and ASan's
	 * atexit refuses calls made before it is done. */
	int (*cxa_atexit)(void (*)(void *), void *, void *);
};

extern struct real_fns real;
/* Fill it (idempotent): first in every entry that may run before the
 * library's constructors. */
void real_init(void);

/*
 * The next definition of each other interposed call, named where it is
 * used (REAL_NEXT_GET, REAL_NEXT_PEEK) rather than listed here. Each such name is an entry in
 * the section goshim_next, and real_init looks them all up, so no
 * interposer calls dlsym once the program runs: the child of a vfork or
 * _Fork (glibc resets none of its locks there) would wait for good on the
 * loader's lock if another thread of the parent held it at the fork. An
 * entry used before real_init (another library's constructor) is looked
 * up then. Aligned to its size, so the section is an array of them.
 */
struct real_next {
	const char *name;
	void *fn;
} __attribute__((aligned(2 * sizeof(void *))));

void *real_next_find(struct real_next *n);

static inline void *real_next_get(struct real_next *n)
{
	void *f = __atomic_load_n(&n->fn, __ATOMIC_ACQUIRE);
	return f ? f : real_next_find(n);
}

/* The entry for name, which REAL_NEXT_GET reads (NULL if the C library
 * has no such function) and REAL_NEXT_PEEK reads only once real_init has
 * filled the table (NULL before). */
#define REAL_NEXT_ENTRY(name)                                            \
	({                                                               \
		static struct real_next next_ __attribute__((            \
			used, section("goshim_next"))) = { #name, NULL }; \
		&next_;                                                  \
	})
#define REAL_NEXT_GET(name) real_next_get(REAL_NEXT_ENTRY(name))
#define REAL_NEXT_PEEK(name) \
	__atomic_load_n(&REAL_NEXT_ENTRY(name)->fn, __ATOMIC_ACQUIRE)

#endif
