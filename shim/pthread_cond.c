/*
 * pthread_cond.c: condition variables whose waiters park.
 *
 * A cond is Go's notifyList (sema.c) over counters in the program's
 * pthread_cond_t, so the all-zero PTHREAD_COND_INITIALIZER is a valid cond:
 *
 *   @0   wait     next ticket
 *   @4   notify   tickets below it are granted
 *   @8   refs     waiters inside wait() << 1 | destroy() waits for them
 *   @12  bcast    the latest broadcast's horizon: tickets below it may
 *                 still have to pass a broadcast's wakeup on
 *   @36  flags    glibc's __wrefs bits: 1 process-shared, 2 CLOCK_MONOTONIC
 *
 * A waiter is queued with its ticket before it releases the mutex, so a
 * signal that the mutex orders after the wait finds it even if it has not
 * gone to sleep yet: no wakeup is lost. A waiter that leaves without being
 * woken (timeout) leaves only an unused ticket, which the next signal
 * skips: a signal always wakes a waiter that is still waiting, if any.
 * A waiter whose deadline passes returns ETIMEDOUT only if no signal
 * claimed it first; one that was claimed returns 0.

 * Broadcast grants every ticket but wakes one waiter; each woken waiter,
 * once it holds the mutex again, wakes the next granted one, so they file
 * through the mutex instead of stampeding onto it. A waiter passes the
 * wakeup on when its ticket is below the broadcast horizon, which the
 * broadcaster raises before it wakes anyone: every waiter reached that way
 * sees it.
 *
 * After a waiter has taken the mutex back it may no longer touch the cond:
 * the program may destroy and free it (POSIX's own example broadcasts,
 * unlocks, destroys and frees). So the waiter reads what it needs before it
 * leaves (refs), and passes the wakeup on by address only: sema.c's queues
 * use the address as a key and the notify snapshot is the waiter's own.
 * A stale pass-on can only wake a waiter of a new cond at the same address
 * early (a spurious wakeup, which POSIX allows; its ticket is then left
 * unused, as a timed-out one's). destroy() waits, as glibc 2.36 does,
 * until no waiter is inside wait(): it wakes the granted ones itself,
 * since the pass-on chain may be stuck on a mutex the destroyer holds. It never says EBUSY; a waiter that
 * was never signalled keeps it waiting (undefined behaviour in POSIX).
 *
 * Process-shared conds are glibc's (they must work across processes; their
 * waits, and destroy, which waits for them, block the OS thread under
 * entersyscall, so not the P), and need a process-shared mutex.
 *
 * A wait is a cancellation point: pthread_cancel ends it as a timeout
 * would (a signal that claimed the waiter first wins, so a cancelled
 * waiter never swallows one), and the waiter acts once it holds the mutex
 * again, so cleanup handlers run with it held.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include "../core/mutex.h"
#include "../core/waiter.h"
#include "shim.h"

#define COND_SHARED 1u
#define COND_MONOTONIC 2u

struct gcond {
	_Atomic uint32_t wait;
	_Atomic uint32_t notify;
	_Atomic uint32_t refs;
	_Atomic uint32_t bcast;
	uint32_t unused[5];
	_Atomic uint32_t flags;
	uint32_t unused2[2];
};

_Static_assert(sizeof(struct gcond) == sizeof(pthread_cond_t),
	       "cond state must fill pthread_cond_t");
_Static_assert(offsetof(struct gcond, flags) ==
		       offsetof(pthread_cond_t, __data.__wrefs),
	       "the flags must be where glibc keeps them");

/* a before b, on counters that wrap */
static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* A cond goshim runs, or NULL when glibc owns it. */
static struct gcond *ours(pthread_cond_t *c)
{
	struct gcond *gc = (struct gcond *)c;
	if (!shim_active() ||
	    (atomic_load_explicit(&gc->flags, memory_order_relaxed) &
	     COND_SHARED))
		return NULL;
	return gc;
}

GOSHIM_EXPORT int pthread_cond_init(pthread_cond_t *c,
				    const pthread_condattr_t *attr)
{
	struct gcond *gc = (struct gcond *)c;
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clk = CLOCK_REALTIME;

	if (!shim_active())
		return real.pthread_cond_init(c, attr);
	if (attr) {
		pthread_condattr_getpshared(attr, &pshared);
		pthread_condattr_getclock(attr, &clk);
	}
	if (pshared == PTHREAD_PROCESS_SHARED)
		return real.pthread_cond_init(c, attr);
	memset(c, 0, sizeof *c);
	if (clk != CLOCK_REALTIME)
		atomic_store(&gc->flags, COND_MONOTONIC);
	return 0;
}

GOSHIM_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	struct gcond *gc = ours(c);
	uint32_t refs;

	if (gc == NULL)
		return IN_SYSCALL(real.pthread_cond_destroy(c));
	refs = atomic_fetch_or(&gc->refs, 1);
	notify_wake_granted(&gc->wait, atomic_load(&gc->notify), INT_MAX);
	while (refs >> 1) {
		sema_wait(&gc->refs, refs, -1, "cond destroy");
		refs = atomic_load(&gc->refs);
	}
	return 0;
}

GOSHIM_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return real.pthread_cond_signal(c);
	notify_one(&gc->wait, &gc->notify);
	rt_yield();
	return 0;
}

GOSHIM_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	struct gcond *gc = ours(c);
	uint32_t h;

	if (gc == NULL)
		return real.pthread_cond_broadcast(c);
	if (atomic_load(&gc->wait) == atomic_load(&gc->notify))
		return 0; /* nobody waits */
	notify_all(&gc->wait, &gc->notify);
	uint32_t horizon = atomic_load(&gc->notify);
	h = atomic_load(&gc->bcast);
	while (before(h, horizon) &&
	       !atomic_compare_exchange_weak(&gc->bcast, &h, horizon))
		;
	notify_wake_granted(&gc->wait, horizon, 1);
	rt_yield();
	return 0;
}

static int cond_wait(struct gcond *gc, pthread_mutex_t *m, clockid_t clk,
		     const struct timespec *abstime)
{
	struct waiter w;
	bool woken;
	int ret = 0; /* read only when err is 0; gcc cannot tell under ASan */

	bool cancelled = false;

	atomic_fetch_add(&gc->refs, 2);
	notify_enqueue(&w, &gc->wait);
	int err = mutex_cond_unlock(m);
	if (!err) {
		cancel_begin();
		ret = notify_wait(&w,
				  abstime ? shim_deadline(clk, abstime) : -1,
				  "cond");
		cancelled = intr_end(false) == ECANCEL_CALL;
		woken = ret == 0;
	} else {
		/* It never waited: a signal that reached it goes on to
		 * another waiter (a broadcast's wakeup is passed on below). */
		woken = notify_cancel(&w);
		if (woken && !before(w.ticket, atomic_load(&gc->bcast)))
			notify_one(&gc->wait, &gc->notify);
	}
	uint32_t notify = atomic_load(&gc->notify);
	bool pass_on = woken && before(w.ticket, atomic_load(&gc->bcast));
	uint32_t refs = atomic_fetch_sub(&gc->refs, 2);
	if (refs >> 1 == 1 && (refs & 1))
		sema_wake(&gc->refs, INT_MAX);
	/* gc may be gone from here on: its addresses are only keys. */
	if (!err)
		err = mutex_cond_lock(m);
	if (pass_on)
		notify_wake_granted(&gc->wait, notify, 1);
	/* Cancelled, it consumed no signal (the cancel claimed the wait):
	 * it acts with the mutex held again, as POSIX asks. */
	if (cancelled && !err) {
		shim_testcancel();
		ret = 0; /* not reached */
	}
	return err ? err : ret;
}

GOSHIM_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(real.pthread_cond_wait(c, m));
	return cond_wait(gc, m, CLOCK_REALTIME, NULL);
}

static bool valid_nsec(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}

GOSHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c,
					 pthread_mutex_t *m,
					 const struct timespec *abstime)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(real.pthread_cond_timedwait(c, m, abstime));
	if (!valid_nsec(abstime))
		return EINVAL;
	return cond_wait(gc, m,
			 atomic_load(&gc->flags) & COND_MONOTONIC
				 ? CLOCK_MONOTONIC
				 : CLOCK_REALTIME,
			 abstime);
}

GOSHIM_EXPORT int pthread_cond_clockwait(pthread_cond_t *c,
					 pthread_mutex_t *m, clockid_t clk,
					 const struct timespec *abstime)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(
			real.pthread_cond_clockwait(c, m, clk, abstime));
	if (!valid_nsec(abstime) ||
	    (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC))
		return EINVAL;
	return cond_wait(gc, m, clk, abstime);
}
