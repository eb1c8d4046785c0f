/*
 * cond.c: condition variables on Go's notifyList (sema.c).
 *
 * glibc's condvar sleeps on a futex, which would block the M; here a
 * waiter parks, and a thread the runtime did not create sleeps on its own
 * futex word (sema.c), in the same queue. The state is four counters in
 * the program's object (cond.h), so a zeroed cond is valid.
 *
 * A waiter is queued with its ticket before it releases the mutex, so a
 * signal that the mutex orders after the wait finds it even if it has not
 * gone to sleep yet: no wakeup is lost. A waiter that leaves without being
 * woken (timeout) leaves only an unused ticket, which the next signal
 * skips: a signal always wakes a waiter that is still waiting, if any.
 * A waiter whose deadline passes returns ETIMEDOUT only if no signal
 * claimed it first; one that was claimed returns 0. Real-time waiters are
 * woken in priority order (sema.c), and a signal or broadcast that wakes
 * a higher one steps aside for it (rt_yield).
 *
 * Broadcast grants every ticket but wakes one waiter; each woken waiter,
 * once it holds the mutex again, wakes the next granted one, so they file
 * through the mutex instead of stampeding onto it. A waiter passes the
 * wakeup on when its ticket is below the broadcast horizon (bcast), which
 * the broadcaster raises before it wakes anyone: every waiter reached that
 * way sees it.
 *
 * After a waiter has taken the mutex back it may no longer touch the cond:
 * the program may destroy and free it (POSIX's own example broadcasts,
 * unlocks, destroys and frees). So the waiter reads what it needs before it
 * leaves (refs), and passes the wakeup on by address only: sema.c's queues
 * use the address as a key and the notify snapshot is the waiter's own.
 * A stale pass-on can only wake a waiter of a new cond at the same address
 * early (a spurious wakeup, which POSIX allows; its ticket is then left
 * unused, as a timed-out one's). cond_destroy waits, as glibc 2.36 does,
 * until no waiter is inside wait(): it wakes the granted ones itself,
 * since the pass-on chain may be stuck on a mutex the destroyer holds. It
 * never says EBUSY; a waiter that was never signalled keeps it waiting
 * (undefined behaviour in POSIX).
 *
 * A wait is a cancellation point: a cancel request ends it as a timeout
 * would (a signal that claimed the waiter first wins, so a cancelled
 * waiter never swallows one), and cond_wait returns ECANCELED once it holds
 * the mutex again, so the caller's cleanup handlers run with it held.
 */
#include <errno.h>
#include <limits.h>
#include "cond.h"
#include "mutex.h"
#include "runtime.h"
#include "runtime2.h"
#include "waiter.h"

/* a before b, on counters that wrap */
static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

void cond_destroy(struct cond *c)
{
	uint32_t refs = atomic_fetch_or(&c->refs, 1);

	notify_wake_granted(&c->wait, atomic_load(&c->notify), INT_MAX);
	while (refs >> 1) {
		sema_wait(&c->refs, refs, -1, "cond destroy");
		refs = atomic_load(&c->refs);
	}
}

void cond_signal(struct cond *c)
{
	notify_one(&c->wait, &c->notify);
	rt_yield();
}

void cond_broadcast(struct cond *c)
{
	if (atomic_load(&c->wait) == atomic_load(&c->notify))
		return; /* nobody waits */
	notify_all(&c->wait, &c->notify);
	uint32_t horizon = atomic_load(&c->notify);
	uint32_t h = atomic_load(&c->bcast);
	while (before(h, horizon) &&
	       !atomic_compare_exchange_weak(&c->bcast, &h, horizon))
		;
	notify_wake_granted(&c->wait, horizon, 1);
	rt_yield();
}

int cond_wait(struct cond *c, pthread_mutex_t *m, int64_t deadline)
{
	struct waiter w;
	bool woken, cancelled = false;
	int ret = 0; /* read only when err is 0; gcc cannot tell under ASan */

	atomic_fetch_add(&c->refs, 2);
	notify_enqueue(&w, &c->wait);
	int err = mutex_cond_unlock(m);
	if (!err) {
		cancel_begin();
		ret = notify_wait(&w, deadline, "cond");
		cancelled = intr_end(false) == ECANCEL_CALL;
		woken = ret == 0;
	} else {
		/* It never waited: a signal that reached it goes on to
		 * another waiter (a broadcast's wakeup is passed on below). */
		woken = notify_cancel(&w);
		if (woken && !before(w.ticket, atomic_load(&c->bcast)))
			notify_one(&c->wait, &c->notify);
	}
	uint32_t notify = atomic_load(&c->notify);
	bool pass_on = woken && before(w.ticket, atomic_load(&c->bcast));
	uint32_t refs = atomic_fetch_sub(&c->refs, 2);
	if (refs >> 1 == 1 && (refs & 1))
		sema_wake(&c->refs, INT_MAX);
	/* c may be gone from here on: its addresses are only keys. */
	if (!err)
		err = mutex_cond_lock(m);
	if (pass_on)
		notify_wake_granted(&c->wait, notify, 1);
	/* Cancelled, it consumed no signal (the cancel claimed the wait). */
	if (err)
		return err;
	return cancelled ? ECANCELED : ret;
}
