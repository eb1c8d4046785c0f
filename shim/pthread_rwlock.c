/*
 * pthread_rwlock.c: pthread rwlocks on core/rwlock.c.
 *
 * The program's pthread_rwlock_t (56 bytes) holds it all, zero being an
 * unlocked lock, so PTHREAD_RWLOCK_INITIALIZER works: the algorithm's
 * words (struct rwlock) in its first 24 bytes, and three fields at glibc's
 * offsets with glibc's meaning: __cur_writer (the TCB tid of the thread
 * that holds it for writing: EDEADLK, and unlock tells a write unlock from
 * a read unlock by it, as glibc does), __shared (nonzero: process-shared,
 * glibc's lock, whose waits block the OS thread but not the P: a try, then
 * the wait under entersyscall; glibc's owner is the goroutine's own TCB
 * tid, so nothing ties it to the M) and __flags (the kind, which
 * PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP sets).
 *
 * Errors as glibc 2.36: EINVAL for a bad clock or tv_nsec (checked first,
 * even when the lock is free), EDEADLK for a lock or timed lock by the
 * thread that holds it for writing (the try forms return EBUSY then),
 * ETIMEDOUT only once the deadline has passed, EAGAIN on reader overflow.
 * Unlock and destroy return 0 always; glibc's unlock of a lock the caller
 * does not hold corrupts the reader count, here it changes nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "../core/deadline.h"
#include "../core/rwlock.h"
#include "../core/tls.h"
#include "shim.h"

struct grwlock {
	struct rwlock rw;
	_Atomic int writer; /* glibc's __cur_writer */
	int shared;	    /* glibc's __shared */
	unsigned char pad[16];
	unsigned kind;	    /* glibc's __flags */
};

_Static_assert(sizeof(struct grwlock) <= sizeof(pthread_rwlock_t),
	       "rwlock state must fit in pthread_rwlock_t");
_Static_assert(offsetof(struct grwlock, writer) ==
		       offsetof(pthread_rwlock_t, __data.__cur_writer) &&
	       offsetof(struct grwlock, shared) ==
		       offsetof(pthread_rwlock_t, __data.__shared) &&
	       offsetof(struct grwlock, kind) ==
		       offsetof(pthread_rwlock_t, __data.__flags),
	       "glibc's fields keep their offsets");

/* A lock goshim runs, or NULL when it is glibc's. */
static struct grwlock *ours(pthread_rwlock_t *l)
{
	struct grwlock *g = (struct grwlock *)l;
	return shim_active() && g->shared == 0 ? g : NULL;
}

static int self_tid(void)
{
	return tls_tid(__builtin_thread_pointer());
}

/* glibc's lock (process-shared): a try first, then the wait, which may
 * sleep in the kernel, under entersyscall. abstime NULL: no deadline;
 * clocked: the clock form on clk, else the timed one. */
static int real_lock(pthread_rwlock_t *l, bool write, bool clocked,
		     clockid_t clk, const struct timespec *abstime)
{
	int err = write ? real.pthread_rwlock_trywrlock(l)
			: real.pthread_rwlock_tryrdlock(l);

	if (err != EBUSY)
		return err;
	if (abstime == NULL)
		return IN_SYSCALL(write ? real.pthread_rwlock_wrlock(l)
					: real.pthread_rwlock_rdlock(l));
	if (clocked)
		return IN_SYSCALL(
			write ? real.pthread_rwlock_clockwrlock(l, clk, abstime)
			      : real.pthread_rwlock_clockrdlock(l, clk,
								abstime));
	return IN_SYSCALL(write ? real.pthread_rwlock_timedwrlock(l, abstime)
				: real.pthread_rwlock_timedrdlock(l, abstime));
}

/* Every blocking form: abstime NULL waits for good; clocked: the clock
 * form on clk, else the timed one on CLOCK_REALTIME. */
static int lock(pthread_rwlock_t *l, bool write, bool clocked, clockid_t clk,
		const struct timespec *abstime)
{
	/* glibc checks a deadline before anything else, even a free lock. */
	if (abstime && abstime_check(clk, abstime))
		return EINVAL;
	struct grwlock *g = ours(l);
	if (g == NULL)
		return real_lock(l, write, clocked, clk, abstime);
	int tid = self_tid(), err;
	if (atomic_load_explicit(&g->writer, memory_order_relaxed) == tid)
		return EDEADLK;
	if (!write) {
		err = rwlock_tryrdlock(&g->rw, g->kind);
		if (err != EBUSY)
			return err;
		return rwlock_rdlock_wait(&g->rw, g->kind,
					  deadline_at(clk, abstime));
	}
	if (!rwlock_trywrlock(&g->rw)) {
		err = rwlock_wrlock_wait(&g->rw, g->kind,
					 deadline_at(clk, abstime));
		if (err)
			return err;
	}
	atomic_store_explicit(&g->writer, tid, memory_order_relaxed);
	return 0;
}

GOSHIM_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l,
				      const pthread_rwlockattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	int kind = PTHREAD_RWLOCK_DEFAULT_NP;

	if (attr) {
		pthread_rwlockattr_getpshared(attr, &pshared);
		pthread_rwlockattr_getkind_np(attr, &kind);
	}
	if (!shim_active() || pshared == PTHREAD_PROCESS_SHARED)
		return real.pthread_rwlock_init(l, attr);
	memset(l, 0, sizeof *l);
	((struct grwlock *)l)->kind = kind;
	return 0;
}

GOSHIM_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	return ours(l) ? 0 : real.pthread_rwlock_destroy(l);
}

GOSHIM_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	return lock(l, false, false, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l,
					     const struct timespec *abstime)
{
	return lock(l, false, false, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l,
					     clockid_t clk,
					     const struct timespec *abstime)
{
	return lock(l, false, true, clk, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	return lock(l, true, false, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l,
					     const struct timespec *abstime)
{
	return lock(l, true, false, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l,
					     clockid_t clk,
					     const struct timespec *abstime)
{
	return lock(l, true, true, clk, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	struct grwlock *g = ours(l);
	if (g == NULL)
		return real.pthread_rwlock_tryrdlock(l);
	return rwlock_tryrdlock(&g->rw, g->kind);
}

GOSHIM_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	struct grwlock *g = ours(l);
	if (g == NULL)
		return real.pthread_rwlock_trywrlock(l);
	if (!rwlock_trywrlock(&g->rw))
		return EBUSY;
	atomic_store_explicit(&g->writer, self_tid(), memory_order_relaxed);
	return 0;
}

GOSHIM_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	struct grwlock *g = ours(l);
	if (g == NULL)
		return real.pthread_rwlock_unlock(l);
	if (rwlock_wrheld(&g->rw) &&
	    atomic_load_explicit(&g->writer, memory_order_relaxed) ==
		    self_tid()) {
		atomic_store_explicit(&g->writer, 0, memory_order_relaxed);
		rwlock_wrunlock(&g->rw, g->kind);
	} else {
		rwlock_rdunlock(&g->rw, g->kind);
	}
	return 0;
}
