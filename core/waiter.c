/*
 * waiter.c: waiters (waiter.h), the one way to wait: a goroutine parks
 * (gopark), a thread the runtime did not create sleeps on a futex on the
 * waiter's state word (invariant 4).
 *
 * Whoever moves the state from W_WAITING first owns the wakeup: a waker
 * (waiter_claim, under the lock of the queue the waiter is on), the
 * deadline's timer, a due cancel request. The owner then delivers
 * (waiter_finish) after leaving that lock; the waiter's owner does not
 * return before delivery, so w, which lives on its stack, stays valid for
 * the waker. A goroutine's park is a loop on the state: a wakeup that ends
 * nothing (a permit from an earlier wait, a signal's handler run in the
 * middle of the wait) only parks it again (invariant 6).
 */
#include <linux/futex.h>
#include <stddef.h>
#include <time.h>
#include "chaos.h"
#include "deadline.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "waiter.h"

void waiter_init(struct waiter *w)
{
	struct g *gp = getg();
	w->g = gp && !gp->is_g0 ? gp : NULL;
	w->prio = w->g ? atomic_load_explicit(&gp->rtprio,
					      memory_order_relaxed)
		       : 0;
	/* Relaxed: w is on its owner's stack, no one else's until queued
	 * under a lock (whose release publishes these stores); seq_cst
	 * stores were three xchg per wait, 7% of a condvar ping-pong. */
	atomic_store_explicit(&w->state, W_WAITING, memory_order_relaxed);
	w->acquiring = false;
	atomic_store_explicit(&w->timer.heap, NULL, memory_order_relaxed);
	atomic_store_explicit(&w->timer.running, 0, memory_order_relaxed);
	w->next = NULL;
}

void waiter_finish(struct waiter *w, uint32_t final)
{
	struct g *gp = w->g;

	/* From here the owner may return, and w go with its stack: what
	 * follows uses gp (a G is never freed) or w's address only.
	 * Release: the owner reads it after goready's queueing (whose
	 * release carries it) or after the futex wake. */
	atomic_store_explicit(&w->state, final, memory_order_release);
	if (gp)
		goready(gp);
	else
		sys_futex(&w->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void waiter_deliver(struct waiter *w)
{
	waiter_finish(w, W_WOKEN);
}

/* w->g does not change while w waits, and the caller's lock keeps w
 * registered, so it may be read until delivered. */
bool waiter_claim(struct waiter *w)
{
	uint32_t st = W_WAITING;
	return atomic_compare_exchange_strong(&w->state, &st, W_CLAIMED);
}

bool waiter_wake(struct waiter *w)
{
	if (!waiter_claim(w))
		return false;
	waiter_deliver(w);
	return true;
}

static void waiter_timeout(struct timer *t)
{
	struct waiter *w = (struct waiter *)((char *)t -
					     offsetof(struct waiter, timer));
	if (waiter_claim(w))
		waiter_finish(w, W_TIMEDOUT);
}

/* On g0, before the goroutine is marked waiting: a timer firing at once
 * finds it parked soon enough (goready waits for that). */
static bool arm_timer(struct g *gp, void *arg)
{
	struct waiter *w = arg;
	(void)gp;
	timer_add(&w->timer, w->timer.when, waiter_timeout);
	return true;
}

/* gp's wait is a cancellation point (cancel_begin) and a request is due:
 * it ends as a timeout would, unless a wakeup claimed it first. */
static bool cancel_claim(struct g *gp, struct waiter *w)
{
	uint32_t st = W_WAITING;

	if (!gp->cancel_ok || !g_cancel_due(gp) ||
	    !atomic_compare_exchange_strong(&w->state, &st, W_TIMEDOUT))
		return false;
	gp->cancel_hit = true;
	return true;
}

uint32_t waiter_block(struct waiter *w, void (*unlock)(void *), void *lock,
		      const char *reason, int64_t deadline)
{
	unlock(lock);
	if (w->g) {
		struct g *gp = w->g;
		bool intr = gp->intr_ok;
		/* A cancel request due before this wait ends it now. */
		if (cancel_claim(gp, w))
			return W_TIMEDOUT;
		/* A signal may end this wait (sigthread_interrupt) while it is
		 * published here; never once it returned. */
		if (intr) {
			spin_lock(&gp->jlock);
			gp->intr_w = w;
			spin_unlock(&gp->jlock);
		}
		w->timer.when = deadline;
		/* Chaos: a waker often finds it still on its way in. */
		if (chaos())
			chaos_delay();
		gopark(deadline >= 0 ? arm_timer : NULL, w, reason);
		/* Woken with the wait not over: it ran a signal's handler
		 * (sigthread_send), pthread_cancel came (gcancel: a
		 * cancellable wait ends), or a permit was left from an
		 * earlier wait. */
		for (;;) {
			uint32_t st = atomic_load(&w->state);
			if (st != W_WAITING && st != W_CLAIMED)
				break;
			if (cancel_claim(gp, w))
				break;
			gopark(NULL, NULL, reason);
		}
		if (deadline >= 0)
			timer_del(&w->timer);
		if (intr) {
			spin_lock(&gp->jlock);
			gp->intr_w = NULL;
			spin_unlock(&gp->jlock);
		}
		uint32_t st = atomic_load(&w->state);
		/* Woken: others may get in before it goes on. */
		if (chaos())
			chaos_yield();
		return st;
	}
	/* A foreign thread blocks its own OS thread on the state word. Once
	 * claimed, the wakeup is on its way whatever the deadline. */
	for (;;) {
		uint32_t st = atomic_load(&w->state);
		if (st == W_WOKEN || st == W_TIMEDOUT)
			return st;
		struct timespec ts, *tsp = NULL;
		if (st == W_WAITING && deadline >= 0) {
			int64_t left = deadline - nanotime();
			if (left <= 0) {
				if (atomic_compare_exchange_strong(
					    &w->state, &st, W_TIMEDOUT))
					return W_TIMEDOUT;
				continue;
			}
			ts = ts_from_ns(left);
			tsp = &ts;
		}
		sys_futex(&w->state, FUTEX_WAIT_PRIVATE, st, tsp, NULL, 0);
	}
}
