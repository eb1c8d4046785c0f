/*
 * real.c: the one table of the C library's own functions (see real.h).
 * Filled with dlsym(RTLD_NEXT) as the library loads, and by any entry that
 * may run before that (another library's constructor calling one of
 * goshim's interposers); a missing entry is a broken C library, so it is
 * fatal. A program linked with core's objects (the unit tests) gets the
 * same table from its constructor: the next definitions after the
 * program's are the C library's.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include "print.h"
#include "real.h"

struct real_fns real;

/* pthread_cond_* exist in two versions; programs built today use 2.3.2. */
static void *must_v(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version);
	if (f == NULL) {
		print("goshim: libc lacks %s@%s\n", name, version);
		abort();
	}
	return f;
}

static void *must(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f == NULL) {
		print("goshim: libc lacks %s\n", name);
		abort();
	}
	return f;
}

/* The section of REAL_NEXT entries; absent (both NULL) from a program
 * with no interposer in it. */
extern struct real_next __start_goshim_next[]
	__attribute__((weak, visibility("hidden")));
extern struct real_next __stop_goshim_next[]
	__attribute__((weak, visibility("hidden")));

void *real_next_find(struct real_next *n)
{
	void *f = dlsym(RTLD_NEXT, n->name);
	__atomic_store_n(&n->fn, f, __ATOMIC_RELEASE);
	return f;
}

void real_init(void)
{
	if (real.pthread_create)
		return;
	for (struct real_next *n = __start_goshim_next; n < __stop_goshim_next;
	     n++)
		if (n->fn == NULL)
			real_next_find(n);
	real.pthread_exit = must("pthread_exit");
	real.pthread_join = must("pthread_join");
	real.pthread_tryjoin_np = must("pthread_tryjoin_np");
	real.pthread_clockjoin_np = must("pthread_clockjoin_np");
	real.pthread_detach = must("pthread_detach");
	real.pthread_getattr_np = must("pthread_getattr_np");
	real.pthread_setaffinity_np = must("pthread_setaffinity_np");
	real.pthread_getaffinity_np = must("pthread_getaffinity_np");
	real.pthread_setschedparam = must("pthread_setschedparam");
	real.pthread_getschedparam = must("pthread_getschedparam");
	real.pthread_setschedprio = must("pthread_setschedprio");
	real.pthread_kill = must("pthread_kill");
	real.raise = must("raise");
	real.pthread_cancel = must("pthread_cancel");
	real.pthread_testcancel = must("pthread_testcancel");
	real.pthread_sigqueue = must("pthread_sigqueue");
	real.pthread_key_create = must("pthread_key_create");
	real.pthread_key_delete = must("pthread_key_delete");
	real.pthread_getspecific = must("pthread_getspecific");
	real.pthread_setspecific = must("pthread_setspecific");
	real.pthread_setname_np = must("pthread_setname_np");
	real.pthread_getname_np = must("pthread_getname_np");
	real.sched_yield = must("sched_yield");
	real.dlopen = must("dlopen");
	real.dlmopen = must("dlmopen");
	real.dlclose = must("dlclose");
	real.pthread_once = must("pthread_once");
	real.pthread_barrier_init = must("pthread_barrier_init");
	real.pthread_barrier_wait = must("pthread_barrier_wait");
	real.pthread_barrier_destroy = must("pthread_barrier_destroy");
	real.clock_nanosleep = must("clock_nanosleep");
	real.clock_getres = must("clock_getres");
	real.pthread_getcpuclockid = must("pthread_getcpuclockid");
	real.getrusage = must("getrusage");
	real.timer_create = must("timer_create");
	real.timer_settime = must("timer_settime");
	real.timer_gettime = must("timer_gettime");
	real.timer_getoverrun = must("timer_getoverrun");
	real.timer_delete = must("timer_delete");
	real.clock_gettime = must("clock_gettime");
	real.pthread_mutex_init = must("pthread_mutex_init");
	real.pthread_mutex_destroy = must("pthread_mutex_destroy");
	real.pthread_mutex_lock = must("pthread_mutex_lock");
	real.pthread_mutex_trylock = must("pthread_mutex_trylock");
	real.pthread_mutex_timedlock = must("pthread_mutex_timedlock");
	real.pthread_mutex_clocklock = must("pthread_mutex_clocklock");
	real.pthread_mutex_unlock = must("pthread_mutex_unlock");
	real.pthread_mutex_consistent = must("pthread_mutex_consistent");
	real.pthread_mutex_getprioceiling =
		must("pthread_mutex_getprioceiling");
	real.pthread_mutex_setprioceiling =
		must("pthread_mutex_setprioceiling");
	real.pthread_cond_init = must_v("pthread_cond_init", "GLIBC_2.3.2");
	real.pthread_cond_destroy =
		must_v("pthread_cond_destroy", "GLIBC_2.3.2");
	real.pthread_cond_wait = must_v("pthread_cond_wait", "GLIBC_2.3.2");
	real.pthread_cond_timedwait =
		must_v("pthread_cond_timedwait", "GLIBC_2.3.2");
	real.pthread_cond_clockwait = must("pthread_cond_clockwait");
	real.pthread_cond_signal =
		must_v("pthread_cond_signal", "GLIBC_2.3.2");
	real.pthread_cond_broadcast =
		must_v("pthread_cond_broadcast", "GLIBC_2.3.2");
	real.pthread_rwlock_init = must("pthread_rwlock_init");
	real.pthread_rwlock_destroy = must("pthread_rwlock_destroy");
	real.pthread_rwlock_rdlock = must("pthread_rwlock_rdlock");
	real.pthread_rwlock_tryrdlock = must("pthread_rwlock_tryrdlock");
	real.pthread_rwlock_timedrdlock = must("pthread_rwlock_timedrdlock");
	real.pthread_rwlock_clockrdlock = must("pthread_rwlock_clockrdlock");
	real.pthread_rwlock_wrlock = must("pthread_rwlock_wrlock");
	real.pthread_rwlock_trywrlock = must("pthread_rwlock_trywrlock");
	real.pthread_rwlock_timedwrlock = must("pthread_rwlock_timedwrlock");
	real.pthread_rwlock_clockwrlock = must("pthread_rwlock_clockwrlock");
	real.pthread_rwlock_unlock = must("pthread_rwlock_unlock");
	real.pthread_spin_init = must("pthread_spin_init");
	real.pthread_spin_destroy = must("pthread_spin_destroy");
	real.pthread_spin_lock = must("pthread_spin_lock");
	real.pthread_spin_trylock = must("pthread_spin_trylock");
	real.pthread_spin_unlock = must("pthread_spin_unlock");
	real.sem_init = must("sem_init");
	real.sem_destroy = must("sem_destroy");
	real.sem_wait = must("sem_wait");
	real.sem_trywait = must("sem_trywait");
	real.sem_timedwait = must("sem_timedwait");
	real.sem_clockwait = must("sem_clockwait");
	real.sem_post = must("sem_post");
	real.sem_getvalue = must("sem_getvalue");
	real.sem_open = must("sem_open");
	real.sem_close = must("sem_close");
	real.sem_unlink = must("sem_unlink");
	real.read = must("read");
	real.write = must("write");
	real.readv = must("readv");
	real.writev = must("writev");
	real.recv = must("recv");
	real.recvfrom = must("recvfrom");
	real.recvmsg = must("recvmsg");
	real.send = must("send");
	real.sendto = must("sendto");
	real.sendmsg = must("sendmsg");
	real.accept = must("accept");
	real.accept4 = must("accept4");
	real.connect = must("connect");
	real.poll = must("poll");
	real.select = must("select");
	real.ppoll = must("ppoll");
	real.pselect = must("pselect");
	real.epoll_wait = must("epoll_wait");
	real.epoll_pwait = must("epoll_pwait");
	real.epoll_pwait2 = dlsym(RTLD_NEXT, "epoll_pwait2");
	real.close = must("close");
	real.socket = must("socket");
	real.socketpair = must("socketpair");
	real.pipe = must("pipe");
	real.pipe2 = must("pipe2");
	real.sigaction = must("sigaction");
	real.longjmp = must("siglongjmp");
	real.longjmp_chk = must("__longjmp_chk");
	real.cxa_atexit = must("__cxa_atexit");
	real.pthread_create = must("pthread_create");
}

__attribute__((constructor)) static void real_ctor(void)
{
	real_init();
}
