/*
 * mutex.h: pthread mutexes whose waiters park (see mutex.c).
 *
 * The state lives in the program's pthread_mutex_t, in glibc's layout, with
 * zero meaning unlocked: static initialisers work without an init call. A
 * process-shared mutex (kind bit 128, which goshim never sets itself and a
 * destroyed mutex's kind of -1 also has) is glibc's: callers check
 * mutex_is_ours first and use `real` otherwise.
 */
#ifndef GOSHIM_MUTEX_H
#define GOSHIM_MUTEX_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/single_threaded.h>
#include "tls.h"

struct g;

/* A robust mutex's link in the list of its owner goroutine (struct g):
 * glibc's __list words. */
struct mutex_link {
	struct mutex_link *prev, *next;
};

static inline bool mutex_is_ours(const pthread_mutex_t *m)
{
	return !(__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & 128);
}

/* type: PTHREAD_MUTEX_*; protocol: PTHREAD_PRIO_*; ceiling 0: the lowest
 * SCHED_FIFO priority. Robust priority-protected is ENOTSUP, as in glibc. */
int mutex_init(pthread_mutex_t *m, int type, bool robust, int protocol,
	       int ceiling);

/*
 * Locking in two steps, so a timed lock can validate its timeout only when
 * it has to wait, as glibc does. mutex_lock (below) applies the mutex's
 * kind rules (EINVAL, EDEADLK, recursion and EAGAIN, EOWNERDEAD,
 * ENOTRECOVERABLE) and takes a free mutex; try: pthread_mutex_trylock's
 * rules, EBUSY is final. Otherwise EBUSY means "call mutex_lock_wait"
 * (deadline: monotonic ns, or -1), which returns 0, ETIMEDOUT or a robust
 * code.
 */
int mutex_lock_kind(pthread_mutex_t *m, bool try);
int mutex_lock_wait(pthread_mutex_t *m, int64_t deadline);
int mutex_unlock_kind(pthread_mutex_t *m);
/* A plain mutex's unlock whose CAS found waiters (owner and user count
 * already cleared). Returns 0. */
int mutex_unlock_contended(pthread_mutex_t *m);

/* __lock's locked bit (Go's mutexLocked; the rest is mutex.c's). */
#define MUTEX_LOCKED 1u

/* Normal and adaptive mutexes: no rules for the holder, so an uncontended
 * lock or unlock is one CAS and glibc's bookkeeping, inline here (leaf
 * code in the interposers); the other kinds, the process-shared bit among
 * them, and a plain mutex that is taken, go to mutex.c. */
static inline bool mutex_plain(const pthread_mutex_t *m)
{
	int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
	return kind == PTHREAD_MUTEX_NORMAL ||
	       kind == PTHREAD_MUTEX_ADAPTIVE_NP;
}

/*
 * While glibc counts the process single-threaded (no second thread yet:
 * goshim clears the flag as its scheduler starts, and in a child of fork),
 * nobody else can touch a private mutex, so a free one is taken and given
 * back with plain stores, as glibc's own lock does (nptl's
 * lll_mutex_lock_optimized); a taken one goes the usual way.
 */
static inline bool mutex_alone(void)
{
	return __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED);
}

/* Take a plain mutex if it is free; false: it is taken (wait with
 * mutex_lock_wait). */
static inline bool mutex_take(pthread_mutex_t *m)
{
	int free = 0;

	if (mutex_alone() &&
	    __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&m->__data.__lock, MUTEX_LOCKED,
				 __ATOMIC_RELAXED);
	else if (!__atomic_compare_exchange_n(&m->__data.__lock, &free,
					      MUTEX_LOCKED, false,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&m->__data.__owner,
			 tls_tid(__builtin_thread_pointer()),
			 __ATOMIC_RELAXED);
	m->__data.__count = 1;
	m->__data.__nusers++;
	return true;
}

/* Give back a plain mutex; counted waiters make it mutex.c's. 0. */
static inline int mutex_give(pthread_mutex_t *m)
{
	int locked = MUTEX_LOCKED;

	__atomic_store_n(&m->__data.__owner, 0, __ATOMIC_RELAXED);
	m->__data.__nusers--;
	if (mutex_alone() && __atomic_load_n(&m->__data.__lock,
					     __ATOMIC_RELAXED) == MUTEX_LOCKED)
		__atomic_store_n(&m->__data.__lock, 0, __ATOMIC_RELAXED);
	else if (!__atomic_compare_exchange_n(&m->__data.__lock, &locked, 0,
					      false, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED))
		return mutex_unlock_contended(m);
	return 0;
}

static inline int mutex_lock(pthread_mutex_t *m, bool try)
{
	if (!__builtin_expect(mutex_plain(m), 1) || try)
		return mutex_lock_kind(m, try);
	return mutex_take(m) ? 0 : EBUSY;
}

static inline int mutex_unlock(pthread_mutex_t *m)
{
	if (!__builtin_expect(mutex_plain(m), 1))
		return mutex_unlock_kind(m);
	return mutex_give(m);
}
int mutex_destroy(pthread_mutex_t *m);
int mutex_consistent(pthread_mutex_t *m);
int mutex_getprioceiling(const pthread_mutex_t *m, int *ceiling);
int mutex_setprioceiling(pthread_mutex_t *m, int ceiling, int *old);

/*
 * For condition variables: release the mutex for a wait and take it back,
 * without changing its user count (so destroy says EBUSY meanwhile, as in
 * glibc). A recursive mutex held more than once is not released: its count
 * drops by one and is restored. Process-shared mutexes go to glibc here.
 */
int mutex_cond_unlock(pthread_mutex_t *m);
int mutex_cond_lock(pthread_mutex_t *m);

/*
 * A process-shared mutex (or any, with the runtime off) is glibc's. Its
 * lock tries first; the wait, which may sleep in the kernel, runs under
 * entersyscall so the P runs other goroutines meanwhile. abstime NULL: no
 * deadline; clocked: pthread_mutex_clocklock on clk, else timedlock.
 */
int mutex_real_lock(pthread_mutex_t *m, bool clocked, clockid_t clk,
		    const struct timespec *abstime);

/* At goroutine exit: robust mutexes gp still holds pass to their next
 * locker with EOWNERDEAD. */
void mutex_goexit(struct g *gp);

#endif
