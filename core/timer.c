/*
 * timer.c: one 4-ary heap of runtime timers, and the waiters built on it.
 *
 * Timers are run by whichever M looks for work (findrunnable) once the
 * earliest is due; when no M has work, one idle M sleeps with a timeout on
 * its park note until the earliest deadline (Go blocks that M in netpoll;
 * the netpoller will take this role), and is kicked when an earlier timer
 * is added. A timer's function runs without the heap lock, so it may
 * ready goroutines; timer_del waits for a running function so the caller
 * can free the timer (waiters live on the waiting goroutine's stack).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <time.h>
#include "runtime.h"
#include "sys.h"
#include "timer.h"

static struct {
	struct rlock lock;
	struct timer **heap;
	int32_t len, cap;
	_Atomic int64_t next;	   /* earliest when, or INT64_MAX */
	_Atomic(struct m *) sleeper; /* idle M sleeping until sleep_until */
	_Atomic int64_t sleep_until;
} tt = { .next = INT64_MAX, .sleep_until = INT64_MAX };

static void swap_at(int32_t i, int32_t j)
{
	struct timer *a = tt.heap[i], *b = tt.heap[j];
	tt.heap[i] = b;
	tt.heap[j] = a;
	b->idx = i;
	a->idx = j;
}

static void sift_up(int32_t i)
{
	while (i > 0) {
		int32_t p = (i - 1) / 4;
		if (tt.heap[p]->when <= tt.heap[i]->when)
			break;
		swap_at(i, p);
		i = p;
	}
}

static void sift_down(int32_t i)
{
	for (;;) {
		int32_t best = i, c = 4 * i + 1;
		for (int32_t k = c; k < c + 4 && k < tt.len; k++)
			if (tt.heap[k]->when < tt.heap[best]->when)
				best = k;
		if (best == i)
			return;
		swap_at(i, best);
		i = best;
	}
}

static void heap_remove(int32_t i)
{
	struct timer *t = tt.heap[i];
	tt.len--;
	if (i != tt.len) {
		tt.heap[i] = tt.heap[tt.len];
		tt.heap[i]->idx = i;
		sift_down(i);
		sift_up(i);
	}
	t->idx = -1;
	atomic_store(&tt.next, tt.len ? tt.heap[0]->when : INT64_MAX);
}

void timer_add(struct timer *t, int64_t when, void (*f)(struct timer *))
{
	t->when = when;
	t->f = f;
	atomic_store(&t->running, 0);
	rlock_lock(&tt.lock);
	if (tt.len == tt.cap) {
		int32_t cap = tt.cap ? tt.cap * 2 : 64;
		struct timer **h = realloc(tt.heap, (size_t)cap * sizeof *h);
		if (h == NULL)
			runtime_throw("timer_add: out of memory");
		tt.heap = h;
		tt.cap = cap;
	}
	t->idx = tt.len;
	tt.heap[tt.len++] = t;
	sift_up(t->idx);
	atomic_store(&tt.next, tt.heap[0]->when);
	rlock_unlock(&tt.lock);
	/* An idle M sleeping past this deadline must wake up for it; with
	 * none, the next M to look for work runs it. */
	if (when < atomic_load(&tt.sleep_until)) {
		struct m *mp = atomic_load(&tt.sleeper);
		if (mp)
			m_kick(mp);
	}
}

void timer_del(struct timer *t)
{
	rlock_lock(&tt.lock);
	if (t->idx >= 0)
		heap_remove(t->idx);
	rlock_unlock(&tt.lock);
	while (atomic_load(&t->running))
		arch_cpu_relax();
}

void timers_fork_child(void)
{
	/* The array may be the one a realloc of the moment freed: left. */
	tt.heap = NULL;
	tt.len = tt.cap = 0;
	atomic_store(&tt.lock.key, 0);
	atomic_store(&tt.next, INT64_MAX);
	atomic_store(&tt.sleeper, NULL);
	atomic_store(&tt.sleep_until, INT64_MAX);
}

int64_t timers_next(void)
{
	int64_t n = atomic_load(&tt.next);
	return n == INT64_MAX ? -1 : n;
}

int64_t timers_run(int64_t now)
{
	for (;;) {
		if (atomic_load(&tt.next) > now)
			return timers_next();
		rlock_lock(&tt.lock);
		if (tt.len == 0 || tt.heap[0]->when > now) {
			rlock_unlock(&tt.lock);
			continue;
		}
		struct timer *t = tt.heap[0];
		heap_remove(0);
		atomic_store(&t->running, 1);
		rlock_unlock(&tt.lock);
		t->f(t);
		atomic_store_explicit(&t->running, 0, memory_order_release);
	}
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
	atomic_store(&w->state, W_WAITING);
	w->acquiring = false;
	w->timer.idx = -1;
	atomic_store(&w->timer.running, 0);
	w->next = NULL;
}

void waiter_deliver(struct waiter *w)
{
	if (w->g)
		goready(w->g);
	else
		sys_futex(&w->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

bool waiter_claim(struct waiter *w)
{
	uint32_t st = W_WAITING;
	return atomic_compare_exchange_strong(&w->state, &st, W_WOKEN);
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
	uint32_t st = W_WAITING;
	if (atomic_compare_exchange_strong(&w->state, &st, W_TIMEDOUT))
		waiter_deliver(w);
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

uint32_t waiter_block(struct waiter *w, void (*unlock)(void *), void *lock,
		      const char *reason, int64_t deadline)
{
	unlock(lock);
	if (w->g) {
		struct g *gp = w->g;
		bool intr = gp->intr_ok;
		/* A signal may end this wait (gsignal_interrupt) while it is
		 * published here; never once it returned. */
		if (intr) {
			spin_lock(&gp->jlock);
			gp->intr_w = w;
			spin_unlock(&gp->jlock);
		}
		w->timer.when = deadline;
		gopark(deadline >= 0 ? arm_timer : NULL, w, reason);
		if (deadline >= 0)
			timer_del(&w->timer);
		if (intr) {
			spin_lock(&gp->jlock);
			gp->intr_w = NULL;
			spin_unlock(&gp->jlock);
		}
		return atomic_load(&w->state);
	}
	/* A foreign thread blocks its own OS thread on the state word. */
	for (;;) {
		uint32_t st = atomic_load(&w->state);
		if (st != W_WAITING)
			return st;
		struct timespec ts, *tsp = NULL;
		if (deadline >= 0) {
			int64_t left = deadline - nanotime();
			if (left <= 0) {
				if (atomic_compare_exchange_strong(
					    &w->state, &st, W_TIMEDOUT))
					return W_TIMEDOUT;
				continue;
			}
			ts.tv_sec = left / 1000000000;
			ts.tv_nsec = left % 1000000000;
			tsp = &ts;
		}
		sys_futex(&w->state, FUTEX_WAIT_PRIVATE, W_WAITING, tsp,
			  NULL, 0);
	}
}
