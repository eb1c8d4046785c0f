/*
 * pthread_mutex.c: mutexes whose waiters park (core/mutex.c).
 *
 * Every mutex call lands here; a process-shared mutex, or any mutex while
 * the runtime is off, is glibc's. Process-shared mutexes must work across
 * processes, so their waits block the OS thread, but not the P: after a
 * failed try the wait runs under entersyscall (mutex_real_lock). While a
 * goroutine holds a robust or priority-inheritance one it is wired to its
 * M with the M's tid and robust list (wire_hold): a PI futex names a real
 * thread, and a robust one is marked owner-died when that thread, or the
 * goroutine, ends.
 *
 * Priority protection (PTHREAD_PRIO_PROTECT) keeps its ceiling, but a
 * goroutine's priority means nothing to the kernel: such mutexes lock as
 * plain ones (glibc instead changes the thread's scheduling priority, and
 * fails the lock with EINVAL for a thread that is not real-time).
 */
#include <errno.h>
#include <pthread.h>
#include "../core/deadline.h"
#include "../core/mutex.h"
#include "../core/wire.h"
#include "shim.h"

/* glibc's __kind flags (nptl/pthreadP.h). */
#define PTHREAD_MUTEX_ROBUST_NORMAL_NP_BIT 16
#define PTHREAD_MUTEX_PRIO_INHERIT_NP_BIT 32

static bool ours(const pthread_mutex_t *m)
{
	return shim_active() && mutex_is_ours(m);
}

/* A process-shared (glibc's) mutex taken by a goroutine, of a kind whose
 * owner must be a real thread: robust or priority-inheritance (glibc's
 * kind bits; a plain one only needs a tid that stays the goroutine's). */
static bool pshared_needs_thread(const pthread_mutex_t *m)
{
	return shim_active() && on_goroutine() &&
	       (m->__data.__kind & (PTHREAD_MUTEX_ROBUST_NORMAL_NP_BIT |
				    PTHREAD_MUTEX_PRIO_INHERIT_NP_BIT));
}

/* glibc's lock of a process-shared mutex, the caller wired meanwhile. */
static int pshared_lock(pthread_mutex_t *m, bool try, bool clocked,
			clockid_t clk, const struct timespec *abstime)
{
	bool hold = pshared_needs_thread(m);
	int err;

	if (hold)
		wire_hold();
	err = try ? real.pthread_mutex_trylock(m)
		  : mutex_real_lock(m, clocked, clk, abstime);
	if (hold && err != 0 && err != EOWNERDEAD)
		wire_drop();
	return err;
}

GOSHIM_EXPORT int pthread_mutex_init(pthread_mutex_t *m,
				     const pthread_mutexattr_t *attr)
{
	int type = PTHREAD_MUTEX_DEFAULT, robust = PTHREAD_MUTEX_STALLED;
	int protocol = PTHREAD_PRIO_NONE, ceiling = 0;
	int pshared = PTHREAD_PROCESS_PRIVATE;

	if (!shim_active())
		return real.pthread_mutex_init(m, attr);
	if (attr) {
		pthread_mutexattr_gettype(attr, &type);
		pthread_mutexattr_getrobust(attr, &robust);
		pthread_mutexattr_getprotocol(attr, &protocol);
		pthread_mutexattr_getprioceiling(attr, &ceiling);
		pthread_mutexattr_getpshared(attr, &pshared);
	}
	if (pshared == PTHREAD_PROCESS_SHARED)
		return real.pthread_mutex_init(m, attr);
	return mutex_init(m, type, robust == PTHREAD_MUTEX_ROBUST, protocol,
			  ceiling);
}

GOSHIM_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	if (!ours(m))
		return real.pthread_mutex_destroy(m);
	return mutex_destroy(m);
}

/* The caller is a goroutine of type PTHREAD_CANCEL_ASYNCHRONOUS. */
static bool cancel_async(void)
{
	return on_goroutine() && g_cancel_async(getg());
}

/*
 * An asynchronous cancel acts wherever the thread is, a mutex wait too
 * (natively glibc's SIGCANCEL handler unwinds out of the futex wait). So
 * for such a goroutine the wait is made cancellable: a request ends it,
 * and the goroutine acts on it at once, without the mutex (if the wait
 * took it as it ended, it gives it back first, as the native thread,
 * cancelled in the futex wait, never had it).
 */
static int lock_wait_async_cancel(pthread_mutex_t *m)
{
	for (;;) {
		cancel_begin();
		int err = mutex_lock_wait(m, -1);
		if (intr_end(false) != ECANCEL_CALL)
			return err;
		if (err == 0)
			mutex_unlock_kind(m);
		shim_testcancel(); /* does not return if it acts */
	}
}

static int lock_wait(pthread_mutex_t *m)
{
	return cancel_async() ? lock_wait_async_cancel(m)
			      : mutex_lock_wait(m, -1);
}

static __attribute__((noinline)) int lock_full(pthread_mutex_t *m)
{
	int err;

	if (!ours(m))
		return pshared_lock(m, false, false, 0, NULL);
	err = mutex_lock(m, false);
	return err != EBUSY ? err : lock_wait(m);
}

/* A plain mutex, the runtime running: leaf code that saves nothing; the
 * rest is out of line. */
GOSHIM_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (__builtin_expect(shim_on() && mutex_plain(m), 1))
		return mutex_take(m) ? 0 : lock_wait(m);
	return lock_full(m);
}

GOSHIM_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (!ours(m))
		return pshared_lock(m, true, false, 0, NULL);
	return mutex_lock(m, true);
}

/* glibc's order: the kind's rules and a free mutex first; the
 * timeout is looked at only when the caller has to wait. */
static int clocklock(pthread_mutex_t *m, clockid_t clk,
		     const struct timespec *abstime)
{
	int err = mutex_lock(m, false);

	if (err != EBUSY)
		return err;
	if (abstime_check(clk, abstime))
		return EINVAL;
	if (abstime->tv_sec < 0)
		return ETIMEDOUT;
	return mutex_lock_wait(m, deadline_at(clk, abstime));
}

GOSHIM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m,
					  const struct timespec *abstime)
{
	if (!ours(m))
		return pshared_lock(m, false, false, 0, abstime);
	return clocklock(m, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk,
					  const struct timespec *abstime)
{
	/* glibc checks the clock before anything else. */
	if (abstime_check(clk, NULL))
		return EINVAL;
	if (!ours(m))
		return pshared_lock(m, false, true, clk, abstime);
	return clocklock(m, clk, abstime);
}

static __attribute__((noinline)) int unlock_full(pthread_mutex_t *m)
{
	if (!ours(m)) {
		bool held = pshared_needs_thread(m);
		int err = real.pthread_mutex_unlock(m);
		if (err == 0 && held)
			wire_drop();
		return err;
	}
	return mutex_unlock(m);
}

GOSHIM_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (__builtin_expect(shim_on() && mutex_plain(m), 1))
		return mutex_give(m);
	return unlock_full(m);
}

GOSHIM_EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	if (!ours(m))
		return real.pthread_mutex_consistent(m);
	return mutex_consistent(m);
}

GOSHIM_EXPORT int pthread_mutex_getprioceiling(const pthread_mutex_t *m,
					       int *ceiling)
{
	if (!ours(m))
		return real.pthread_mutex_getprioceiling(m, ceiling);
	return mutex_getprioceiling(m, ceiling);
}

GOSHIM_EXPORT int pthread_mutex_setprioceiling(pthread_mutex_t *m,
					       int ceiling, int *old)
{
	if (!ours(m))
		return IN_SYSCALL(
			real.pthread_mutex_setprioceiling(m, ceiling, old));
	return mutex_setprioceiling(m, ceiling, old);
}
