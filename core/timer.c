/*
 * timer.c: runtime timers on one 4-ary heap per P (Go 1.14's layout), and
 * the waiters built on them.
 *
 * A timer goes on the heap of the P its caller runs on, so Ms on different
 * Ps add, run and delete timers under different locks. An M looking for
 * work runs its own P's due timers, and other Ps' while it steals
 * (findrunnable); when no M has work, one idle M sleeps with a timeout on
 * its park note (or in netpoll) until the earliest deadline over all Ps,
 * and is kicked when an earlier timer is added anywhere; sysmon runs what
 * is overdue when every M is busy. That earliest deadline is kept in one
 * word (tt.next), so timers_next is one load. A timer's function runs
 * without the heap lock, so it may ready goroutines; timer_del waits for a
 * running function so the caller can free the timer (waiters live on the
 * waiting goroutine's stack).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chaos.h"
#include "deadline.h"
#include "runtime.h"
#include "sys.h"
#include "timer.h"

static struct {
	/* min over every P's earliest when (INT64_MAX: none); never later
	 * than the true min, at worst briefly earlier (see next_rescan) */
	_Atomic int64_t next;
	_Atomic(struct m *) sleeper; /* idle M sleeping until sleep_until */
	_Atomic int64_t sleep_until;
	/* timers taken off a heap whose function has not returned: counted
	 * before they leave the heap, so that "no timer" is never seen while
	 * one is readying a goroutine that is on no queue yet */
	_Atomic int32_t running;
} tt = { .next = INT64_MAX, .sleep_until = INT64_MAX };

/* h->rnext stores INT64_MAX - when, so that a zeroed heap reads empty. */
static int64_t heap_next(struct timers *h)
{
	return (int64_t)((uint64_t)INT64_MAX - atomic_load(&h->rnext));
}

/* The earliest when over every P ever made (a dead P's heap is empty but
 * for the moment its drain takes). */
static int64_t next_scan(void)
{
	int64_t min = INT64_MAX;
	int32_t n = atomic_load(&allp_len);

	for (int32_t i = 0; i < n; i++) {
		struct p *pp = __atomic_load_n(&allp[i], __ATOMIC_ACQUIRE);
		if (pp && heap_next(&pp->timers) < min)
			min = heap_next(&pp->timers);
	}
	return min;
}

static void next_lower(int64_t when)
{
	int64_t cur = atomic_load(&tt.next);

	while (when < cur &&
	       !atomic_compare_exchange_weak(&tt.next, &cur, when))
		;
}

/*
 * A heap's earliest grew: recompute tt.next. A P that lowers its own
 * earliest stores it, then lowers tt.next; if that happened after our
 * first scan, it either lowered tt.next after our store or before it, and
 * then the second scan sees it. (The second scan may see an earliest that
 * has grown since: tt.next is then early, which costs one idle wakeup and
 * timers_run heals.)
 */
static void next_rescan(void)
{
	atomic_store(&tt.next, next_scan());
	next_lower(next_scan());
}

/* h locked; its top may have changed: publish its earliest. */
static void heap_publish(struct timers *h)
{
	int64_t when = h->len ? h->heap[0]->when : INT64_MAX;
	int64_t old = heap_next(h);

	if (when == old)
		return;
	atomic_store(&h->rnext, (uint64_t)INT64_MAX - (uint64_t)when);
	if (when < old)
		next_lower(when);
	else if (old <= atomic_load(&tt.next))
		next_rescan(); /* it may have been the earliest of all */
}

static void swap_at(struct timers *h, int32_t i, int32_t j)
{
	struct timer *a = h->heap[i], *b = h->heap[j];
	h->heap[i] = b;
	h->heap[j] = a;
	b->idx = i;
	a->idx = j;
}

static void sift_up(struct timers *h, int32_t i)
{
	while (i > 0) {
		int32_t p = (i - 1) / 4;
		if (h->heap[p]->when <= h->heap[i]->when)
			break;
		swap_at(h, i, p);
		i = p;
	}
}

static void sift_down(struct timers *h, int32_t i)
{
	for (;;) {
		int32_t best = i, c = 4 * i + 1;
		for (int32_t k = c; k < c + 4 && k < h->len; k++)
			if (h->heap[k]->when < h->heap[best]->when)
				best = k;
		if (best == i)
			return;
		swap_at(h, i, best);
		i = best;
	}
}

/* h locked. */
static void heap_push(struct timers *h, struct timer *t)
{
	if (h->len == h->cap) {
		int32_t cap = h->cap ? h->cap * 2 : 64;
		struct timer **a = realloc(h->heap, (size_t)cap * sizeof *a);
		if (a == NULL)
			runtime_throw("timer_add: out of memory");
		h->heap = a;
		h->cap = cap;
	}
	t->idx = h->len;
	h->heap[h->len++] = t;
	atomic_store(&t->heap, h);
	sift_up(h, t->idx);
	heap_publish(h);
}

/* h locked. */
static void heap_remove(struct timers *h, int32_t i)
{
	struct timer *t = h->heap[i];
	h->len--;
	if (i != h->len) {
		h->heap[i] = h->heap[h->len];
		h->heap[i]->idx = i;
		sift_down(h, i);
		sift_up(h, i);
	}
	atomic_store(&t->heap, NULL);
	heap_publish(h);
}

void timer_add(struct timer *t, int64_t when, void (*f)(struct timer *))
{
	struct g *gp = getg();
	/* On g0 (arm_timer) the M's P cannot change under us. A caller with
	 * none uses P0's heap: P0 never dies. */
	struct p *pp = gp && gp->is_g0 && gp->m->p ? gp->m->p : allp[0];
	struct timers *h = &pp->timers;

	t->when = when;
	t->f = f;
	atomic_store(&t->running, 0);
	rlock_lock(&h->lock);
	heap_push(h, t);
	rlock_unlock(&h->lock);
	/* An idle M sleeping past this deadline must wake up for it; with
	 * none, the next M to look for work (or to steal) runs it. */
	if (when < atomic_load(&tt.sleep_until)) {
		struct m *mp = atomic_load(&tt.sleeper);
		if (mp)
			m_kick(mp);
	}
}

void timer_del(struct timer *t)
{
	/* The heap may change under us (timers_drain): lock the one it is
	 * in, and look again. */
	for (;;) {
		struct timers *h = atomic_load(&t->heap);
		if (h == NULL)
			break;
		rlock_lock(&h->lock);
		bool here = atomic_load(&t->heap) == h;
		if (here)
			heap_remove(h, t->idx);
		rlock_unlock(&h->lock);
		if (here)
			break;
	}
	/* run_one sets running before it takes t off its heap. */
	while (atomic_load(&t->running))
		arch_cpu_relax();
}

void timers_drain(struct p *pp)
{
	struct timers *from = &pp->timers, *to = &allp[0]->timers;

	if (from == to)
		return;
	/* The one place that holds two heap locks. The moved timers are
	 * in to before from's earliest grows, so tt.next never passes
	 * one of them. */
	rlock_lock(&to->lock);
	rlock_lock(&from->lock);
	while (from->len > 0)
		heap_push(to, from->heap[--from->len]);
	heap_publish(from);
	rlock_unlock(&from->lock);
	rlock_unlock(&to->lock);
}

void timers_fork_child(void)
{
	/* The arrays may be ones a realloc of the moment freed: left. */
	for (int32_t i = 0; i < allp_len; i++)
		if (allp[i])
			memset(&allp[i]->timers, 0, sizeof allp[i]->timers);
	atomic_store(&tt.next, INT64_MAX);
	atomic_store(&tt.sleeper, NULL);
	atomic_store(&tt.sleep_until, INT64_MAX);
	atomic_store(&tt.running, 0);
}

int64_t timers_next(void)
{
	int64_t n = atomic_load(&tt.next);
	return n == INT64_MAX ? -1 : n;
}

bool timers_idle(void)
{
	return atomic_load(&tt.running) == 0;
}

/* Run h's earliest timer if it is due; false if none is. */
static bool run_one(struct timers *h, int64_t now)
{
	rlock_lock(&h->lock);
	if (h->len == 0 || h->heap[0]->when > now) {
		rlock_unlock(&h->lock);
		return false;
	}
	struct timer *t = h->heap[0];
	atomic_store(&t->running, 1);
	atomic_fetch_add(&tt.running, 1);
	heap_remove(h, 0);
	rlock_unlock(&h->lock);
	t->f(t);
	atomic_store_explicit(&t->running, 0, memory_order_release);
	atomic_fetch_sub(&tt.running, 1);
	return true;
}

bool timers_run_p(struct p *pp, int64_t now)
{
	bool ran = false;

	while (heap_next(&pp->timers) <= now && run_one(&pp->timers, now))
		ran = true;
	return ran;
}

int64_t timers_run(int64_t now)
{
	while (atomic_load(&tt.next) <= now) {
		struct timers *best = NULL;
		int64_t when = INT64_MAX;
		int32_t n = atomic_load(&allp_len);
		for (int32_t i = 0; i < n; i++) {
			struct p *pp = __atomic_load_n(&allp[i],
						       __ATOMIC_ACQUIRE);
			if (pp && heap_next(&pp->timers) < when) {
				best = &pp->timers;
				when = heap_next(best);
			}
		}
		if (when > now)
			next_rescan(); /* tt.next was early */
		else
			run_one(best, now);
	}
	return timers_next();
}

bool timers_claim_sleeper(struct m *mp, int64_t until)
{
	struct m *none = NULL;
	if (!atomic_compare_exchange_strong(&tt.sleeper, &none, mp))
		return false;
	atomic_store(&tt.sleep_until, until);
	return true;
}

bool timers_have_sleeper(void)
{
	return atomic_load(&tt.sleeper) != NULL;
}

void timers_release_sleeper(void)
{
	atomic_store(&tt.sleep_until, INT64_MAX);
	atomic_store(&tt.sleeper, NULL);
}

/* ---- waiters ------------------------------------------------------------ */

void waiter_init(struct waiter *w)
{
	struct g *gp = getg();
	w->g = gp && !gp->is_g0 ? gp : NULL;
	w->prio = w->g ? atomic_load_explicit(&gp->rtprio,
					      memory_order_relaxed)
		       : 0;
	atomic_store(&w->state, W_WAITING);
	w->acquiring = false;
	atomic_store(&w->timer.heap, NULL);
	atomic_store(&w->timer.running, 0);
	w->next = NULL;
}

void waiter_finish(struct waiter *w, uint32_t final)
{
	struct g *gp = w->g;

	/* From here the owner may return, and w go with its stack: what
	 * follows uses gp (a G is never freed) or w's address only. */
	atomic_store(&w->state, final);
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
		/* A signal may end this wait (gsignal_interrupt) while it is
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
		 * (gsignal_send), pthread_cancel came (gcancel: a
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
