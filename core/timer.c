/*
 * timer.c: runtime timers on one 4-ary heap per P (Go 1.14's layout).
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
 * running function so the caller can free the timer (a waiter's, waiter.c,
 * lives on the waiting goroutine's stack).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#include "runtime2.h"
#include "timer.h"

static struct {
	/* min over every P's earliest when (INT64_MAX: none); never later
	 * than the true min, at worst briefly earlier (see next_rescan) */
	_Atomic int64_t next;
	_Atomic(struct m *) sleeper; /* idle M sleeping until sleep_until */
	_Atomic int64_t sleep_until;
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
	int64_t when = h->len ? h->heap[0].when : INT64_MAX;
	int64_t old = heap_next(h);

	if (when == old)
		return;
	atomic_store(&h->rnext, (uint64_t)INT64_MAX - (uint64_t)when);
	if (when < old)
		next_lower(when);
	else if (old <= atomic_load(&tt.next))
		next_rescan(); /* it may have been the earliest of all */
}

/* Slot s at i: its number now says where it is. */
static void slot_put(struct timers *h, int32_t i, struct timer_slot s)
{
	h->heap[i] = s;
	h->pos[s.id] = i;
}

static void sift_up(struct timers *h, int32_t i)
{
	struct timer_slot s = h->heap[i];

	while (i > 0) {
		int32_t p = (i - 1) / 4;
		if (h->heap[p].when <= s.when)
			break;
		slot_put(h, i, h->heap[p]);
		i = p;
	}
	slot_put(h, i, s);
}

static void sift_down(struct timers *h, int32_t i)
{
	struct timer_slot s = h->heap[i];

	for (;;) {
		int32_t best = -1, c = 4 * i + 1;
		int64_t when = s.when;
		for (int32_t k = c; k < c + 4 && k < h->len; k++)
			if (h->heap[k].when < when) {
				best = k;
				when = h->heap[k].when;
			}
		if (best < 0)
			break;
		slot_put(h, i, h->heap[best]);
		i = best;
	}
	slot_put(h, i, s);
}

/* h locked, full: twice the room, the new numbers all free. */
static void heap_grow(struct timers *h)
{
	int32_t cap = h->cap ? h->cap * 2 : 64;
	struct timer_slot *heap = realloc(h->heap, (size_t)cap * sizeof *heap);
	if (heap)
		h->heap = heap;
	struct timer **by_id = realloc(h->by_id, (size_t)cap * sizeof *by_id);
	if (by_id)
		h->by_id = by_id;
	int32_t *pos = realloc(h->pos, (size_t)cap * sizeof *pos);
	if (pos)
		h->pos = pos;
	if (heap == NULL || by_id == NULL || pos == NULL)
		runtime_throw("timer_add: out of memory");
	for (int32_t id = h->cap; id < cap; id++)
		h->pos[id] = id + 1;
	h->free_id = h->cap;
	h->cap = cap;
}

/* h locked. */
static void heap_push(struct timers *h, struct timer *t)
{
	if (h->len == h->cap)
		heap_grow(h);
	uint32_t id = (uint32_t)h->free_id;
	h->free_id = h->pos[id];
	h->by_id[id] = t;
	t->id = id;
	h->heap[h->len++] = (struct timer_slot){ t->when, id };
	atomic_store_explicit(&t->heap, h, memory_order_release);
	sift_up(h, h->len - 1);
	heap_publish(h);
}

/* h locked: the timer in slot i leaves, its number freed. */
static struct timer *heap_take(struct timers *h, int32_t i)
{
	uint32_t id = h->heap[i].id;
	struct timer *t = h->by_id[id];

	h->len--;
	if (i != h->len) {
		slot_put(h, i, h->heap[h->len]);
		sift_down(h, i);
		sift_up(h, i);
	}
	h->pos[id] = h->free_id;
	h->free_id = (int32_t)id;
	atomic_store_explicit(&t->heap, NULL, memory_order_release);
	return t;
}

/* h locked. */
static void heap_remove(struct timers *h, int32_t i)
{
	heap_take(h, i);
	heap_publish(h);
}

void timer_add(struct timer *t, int64_t when, void (*f)(struct timer *))
{
	struct g *gp = getg();
	struct m *mp = gp ? gp->m : NULL;
	uint32_t prev = MP_RUNTIME;
	/* The M's P, claimed (arm_timer runs in the runtime, on g0 or on
	 * the goroutine a park handed the M to: already a claim). A caller
	 * with none uses P0's heap: P0 never dies. */
	struct p *pp = mp ? p_claim(mp, &prev) : NULL;
	struct timers *h = &(pp ? pp : allp[0])->timers;

	t->when = when;
	t->f = f;
	atomic_store_explicit(&t->running, 0, memory_order_relaxed);
	rlock_lock(&h->lock);
	heap_push(h, t);
	rlock_unlock(&h->lock);
	if (mp)
		p_unclaim(mp, prev);
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
			heap_remove(h, h->pos[t->id]);
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
		heap_push(to, heap_take(from, from->len - 1));
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
}

int64_t timers_next(void)
{
	int64_t n = atomic_load(&tt.next);
	return n == INT64_MAX ? -1 : n;
}

bool timers_idle(void)
{
	int32_t n = atomic_load(&allp_len);

	for (int32_t i = 0; i < n; i++) {
		struct p *pp = __atomic_load_n(&allp[i], __ATOMIC_ACQUIRE);
		if (pp && atomic_load(&pp->timers.running) != 0)
			return false;
	}
	return true;
}

/* Run h's earliest timer if it is due; false if none is. */
static bool run_one(struct timers *h, int64_t now)
{
	rlock_lock(&h->lock);
	if (h->len == 0 || h->heap[0].when > now) {
		rlock_unlock(&h->lock);
		return false;
	}
	struct timer *t = h->by_id[h->heap[0].id];
	/* timer_del looks under the lock, we set it under the lock. */
	atomic_store_explicit(&t->running, 1, memory_order_relaxed);
	atomic_fetch_add(&h->running, 1);
	heap_remove(h, 0);
	rlock_unlock(&h->lock);
	t->f(t);
	atomic_store_explicit(&t->running, 0, memory_order_release);
	atomic_fetch_sub_explicit(&h->running, 1, memory_order_release);
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
