/*
 * sema.c: wait queues keyed by address (Go's semaRoot idea).
 *
 * Nothing lives in the program's objects but their own words: waiters sit
 * in a table hashed by address (Go's 251 buckets), each bucket a spinlock
 * and a FIFO list. Waiters are goroutines (parked) or foreign threads
 * (futex on their own word). Three disciplines share the table:
 *
 *  - futex-like: sema_wait sleeps only if the word still holds the value
 *    the caller saw, checked under the bucket lock that sema_wake takes.
 *  - Go's semaphore: sema_acquire waits for *addr > 0 and decrements;
 *    sema_release increments and wakes one, optionally handing the count
 *    straight to it (sync.Mutex's starvation mode). lifo puts a waiter
 *    that already waited back at the head.
 *  - Go's notifyList: a waiter takes a ticket, a notify grants tickets in
 *    order, so each signal wakes exactly one waiter that was waiting. Unlike
 *    Go's, the waiter is queued as it takes its ticket (under the bucket
 *    lock, before it releases the caller's lock), not when it goes to
 *    sleep, so every ticket not yet granted belongs either to a queued
 *    waiter or to one that left (timed out, or never slept). A notify
 *    skips the latter and claims the oldest queued one: a waiter that gives
 *    up cannot take a signal with it. A waiter claimed before it has begun
 *    to block (state W_PREPARED) finds the claim itself and does not sleep.
 *
 * A waker claims a waiter under the bucket lock (a waiter whose deadline
 * fired first cannot be claimed and does not count) and delivers the
 * wakeup after unlocking.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "runtime.h"
#include "runtime2.h"
#include "waiter.h"

#define SEMTAB_SIZE 251

struct bucket {
	struct spinlock lock;
	_Atomic uint32_t nwait; /* goroutines in sema_acquire here */
	struct waitq q;
} __attribute__((aligned(64)));

static struct bucket semtab[SEMTAB_SIZE];

/* Buckets that sema_release_async marked, one bit each. */
static _Atomic uint64_t deferred[(SEMTAB_SIZE + 63) / 64];
static _Atomic bool deferred_any;
static _Atomic int32_t runners; /* in sema_run_async, maybe readying */

/* In the child of fork every waiter is gone, and a bucket lock may be
 * held by a thread that is gone too; so may a run of sema_run_async. */
void sema_fork_child(void)
{
	memset(semtab, 0, sizeof semtab);
	for (size_t i = 0; i < sizeof deferred / sizeof deferred[0]; i++)
		atomic_store(&deferred[i], 0);
	atomic_store(&deferred_any, false);
	atomic_store(&runners, 0);
}

static struct bucket *bucket_of(const void *addr)
{
	return &semtab[((uintptr_t)addr >> 3) % SEMTAB_SIZE];
}

void sema_run_async(void);
static void run_async_now(void);

/*
 * Before the scheduler starts (and when it never does) there is no
 * sysmon to run what sem_post marked (sema_release_async): the poster
 * runs it itself if it can take the bucket lock, and whoever holds a
 * bucket lock runs what was marked meanwhile as it lets go (a poster in a
 * signal handler may have found this very thread holding it). So a unit
 * never waits for a sysmon that is not there.
 */
static void bucket_release(struct bucket *b)
{
	spin_unlock(&b->lock);
	if (!atomic_load_explicit(&runtime_running, memory_order_relaxed)) {
		atomic_thread_fence(memory_order_seq_cst); /* run_async_now */
		sema_run_async();
	}
}

static void bucket_unlock(void *b)
{
	bucket_release(b);
}

/* Unlink the first waiter on addr. */
static struct waiter *dequeue(struct bucket *b, const void *addr)
{
	struct waiter **pp = &b->q.head, *prev = NULL;
	for (; *pp; prev = *pp, pp = &(*pp)->next) {
		struct waiter *w = *pp;
		if (w->key == addr) {
			waitq_unlink(&b->q, pp, prev);
			return w;
		}
	}
	return NULL;
}

/* After a deadline: leave the queue if no waker took us off it. */
static void leave(struct bucket *b, struct waiter *w)
{
	spin_lock(&b->lock);
	if (w->queued)
		waitq_remove(&b->q, w);
	bucket_release(b);
}

/* ---- futex-like --------------------------------------------------------- */

int sema_wait(const _Atomic uint32_t *addr, uint32_t val, int64_t deadline,
	      const char *reason)
{
	struct bucket *b = bucket_of(addr);
	struct waiter w;

	spin_lock(&b->lock);
	if (atomic_load(addr) != val) {
		bucket_release(b);
		return EAGAIN;
	}
	waiter_init(&w);
	w.key = addr;
	waitq_push(&b->q, &w, false);
	if (waiter_block(&w, bucket_unlock, b, reason, deadline) ==
	    W_TIMEDOUT) {
		leave(b, &w);
		return ETIMEDOUT;
	}
	return 0;
}

/* Claim a dequeued waiter (b locked): W_WOKEN if the wakeup must be
 * delivered after unlocking, W_PREPARED if it had not begun to block (it
 * finds the claim itself and may be gone once b is unlocked), W_TIMEDOUT
 * if its deadline came first. */
static uint32_t claim(struct waiter *w)
{
	/* One CAS, from the state it is seen in: a failed lock cmpxchg
	 * costs as much as one that succeeds. */
	uint32_t st = atomic_load_explicit(&w->state, memory_order_relaxed);
	for (;;) {
		if (st != W_PREPARED && st != W_WAITING)
			return W_TIMEDOUT; /* its deadline or a cancel won */
		uint32_t to = st == W_PREPARED ? W_WOKEN : W_CLAIMED;
		if (atomic_compare_exchange_weak(&w->state, &st, to))
			return to == W_WOKEN ? W_PREPARED : W_WOKEN;
	}
}

static void deliver_all(struct waiter *list)
{
	while (list) {
		struct waiter *w = list;
		list = w->next;
		waiter_deliver(w);
	}
}

/* Unlink and claim up to n waiters on key (b locked): those to deliver
 * are chained on *list, to be delivered after unlocking. One that timed
 * out meanwhile does not count; a claimed one waits for its wakeup, so it
 * stays valid until delivered. */
static int claim_waiters(struct bucket *b, const void *key, int n,
			 struct waiter **list)
{
	struct waiter **tail = list;
	int woken = 0;

	*list = NULL;
	while (woken < n) {
		struct waiter *w = dequeue(b, key);
		if (w == NULL)
			break;
		switch (claim(w)) {
		case W_WOKEN:
			*tail = w;
			tail = &w->next;
			/* fall through */
		case W_PREPARED:
			woken++;
		}
	}
	return woken;
}

int sema_wake(const _Atomic uint32_t *addr, int n)
{
	struct bucket *b = bucket_of(addr);
	struct waiter *claimed;

	spin_lock(&b->lock);
	int woken = claim_waiters(b, addr, n, &claimed);
	bucket_release(b);
	deliver_all(claimed);
	return woken;
}

/* ---- Go's semaphore ----------------------------------------------------- */

static bool cansemacquire(_Atomic uint32_t *addr)
{
	uint32_t v = atomic_load(addr);
	while (v > 0)
		if (atomic_compare_exchange_weak(addr, &v, v - 1))
			return true;
	return false;
}

int sema_acquire(_Atomic uint32_t *addr, bool lifo, int64_t deadline,
		 const char *reason)
{
	struct bucket *b = bucket_of(addr);
	struct waiter w;

	if (cansemacquire(addr))
		return 0;
	for (;;) {
		spin_lock(&b->lock);
		atomic_fetch_add(&b->nwait, 1);
		if (cansemacquire(addr)) {
			atomic_fetch_sub(&b->nwait, 1);
			bucket_release(b);
			return 0;
		}
		waiter_init(&w);
		w.key = addr;
		w.acquiring = true;
		w.handoff = false;
		waitq_push(&b->q, &w, lifo);
		if (waiter_block(&w, bucket_unlock, b, reason, deadline) ==
		    W_TIMEDOUT) {
			spin_lock(&b->lock);
			if (w.queued) {
				waitq_remove(&b->q, &w);
				atomic_fetch_sub(&b->nwait, 1);
			}
			bucket_release(b);
			return ETIMEDOUT;
		}
		if (w.handoff || cansemacquire(addr))
			return 0;
		lifo = true; /* waited already: go first next time */
	}
}

void sema_release(_Atomic uint32_t *addr, bool handoff)
{
	struct bucket *b = bucket_of(addr);
	struct waiter *w;
	bool yield = false;

	atomic_fetch_add(addr, 1);
	if (atomic_load(&b->nwait) == 0)
		return;
	spin_lock(&b->lock);
	for (;;) {
		w = dequeue(b, addr);
		if (w == NULL)
			break;
		atomic_fetch_sub(&b->nwait, 1);
		/* The handoff is decided before the claim: a waiter (a
		 * foreign thread spinning on its state) may run as soon as it
		 * is claimed and must find it. */
		bool took = handoff && cansemacquire(addr);
		w->handoff = took;
		/* Read before the wakeup: w lives on the waiter's stack, and
		 * once delivered the waiter may return and reuse it. */
		yield = w->g && handoff;
		if (waiter_claim(w))
			break;
		/* It timed out: its count is still there for the next. */
		if (took)
			atomic_fetch_add(addr, 1);
	}
	bucket_release(b);
	if (w) {
		waiter_deliver(w);
		/* Starvation mode: let the new owner run now (Go's goyield). */
		if (yield && on_goroutine()) {
			getg()->outranked_by = NULL; /* this is that yield */
			goyield();
		}
	}
}

/* ---- releases from signal handlers ------------------------------------- */

/*
 * The caller has added its unit already. Waking a waiter takes the bucket
 * lock and the scheduler's, which the code a signal handler interrupted
 * may hold, so this side only marks the bucket and wakes sysmon (a futex
 * call), all async-signal-safe; sysmon, which holds nothing, or the next
 * sema_run_async caller does the rest. A waiter is not missed: it counts
 * itself (nwait) before it looks at the value, the poster adds before it
 * looks at the count.
 */
void sema_release_async(_Atomic uint32_t *addr)
{
	struct bucket *b = bucket_of(addr);
	size_t i = (size_t)(b - semtab);

	if (atomic_load(&b->nwait) == 0)
		return;
	atomic_fetch_or(&deferred[i / 64], (uint64_t)1 << (i % 64));
	atomic_store(&deferred_any, true);
	if (atomic_load(&runtime_running))
		sysmon_wake();
	else
		run_async_now();
}

/* w, unlinked from b (locked), gets a unit if took (taken for it from
 * key): chained on **tail to be delivered after unlocking, or, if its
 * deadline came first, the unit goes back. */
static void hand_over(struct bucket *b, struct waiter *w, bool took,
		      struct waiter ***tail)
{
	atomic_fetch_sub(&b->nwait, 1);
	w->handoff = took;
	if (waiter_claim(w)) {
		**tail = w;
		*tail = &w->next;
	} else if (took) {
		atomic_fetch_add((_Atomic uint32_t *)w->key, 1);
	}
}

/* Hand units of the semaphores in b to their waiters, oldest first, while
 * there are units: as sema_release with handoff does, so a poster that
 * loops back to wait cannot take its own unit again first. A queued
 * sema_acquire waiter keeps its semaphore alive, so its value may be
 * touched. */
static void run_bucket_locked(struct bucket *b)
{
	struct waiter *claimed = NULL, **tail = &claimed;

	struct waiter **pp = &b->q.head, *prev = NULL;
	while (*pp) {
		struct waiter *w = *pp;
		if (!w->acquiring ||
		    !cansemacquire((_Atomic uint32_t *)w->key)) {
			prev = w;
			pp = &w->next;
			continue;
		}
		waitq_unlink(&b->q, pp, prev);
		hand_over(b, w, true, &tail);
	}
	bucket_release(b);
	deliver_all(claimed);
}

static void run_bucket(struct bucket *b)
{
	spin_lock(&b->lock);
	run_bucket_locked(b);
}

/* Only addr's waiters, and only while there are units: the walk ends at
 * the first waiter that would find none, not at the end of the queue (a
 * pool of 4 with 1,000 waiting walked all 1,000 on every post). */
void sema_release_added(_Atomic uint32_t *addr)
{
	struct bucket *b = bucket_of(addr);
	struct waiter *claimed = NULL, **tail = &claimed, *w;

	if (atomic_load(&b->nwait) == 0)
		return;
	spin_lock(&b->lock);
	/* A trywait may take the unit first: then the waiter is woken to
	 * look again, as a wakeup without handoff. */
	while (atomic_load(addr) > 0 && (w = dequeue(b, addr)) != NULL)
		hand_over(b, w, cansemacquire(addr), &tail);
	bucket_release(b);
	deliver_all(claimed);
}

/* sema_release_async with no sysmon, maybe in a signal handler: only the
 * buckets whose lock is free; the rest stay marked for whoever holds
 * theirs (bucket_release). The marks are put back before a last look at
 * those locks, and a holder lets go before it looks at the marks: one of
 * the two sees the other. */
static void run_async_now(void)
{
	atomic_fetch_add(&runners, 1);
	while (atomic_exchange(&deferred_any, false)) {
		bool retry = false;
		for (size_t i = 0; i < sizeof deferred / sizeof deferred[0];
		     i++) {
			uint64_t bits = atomic_exchange(&deferred[i], 0);
			uint64_t left = 0;
			while (bits) {
				int bit = __builtin_ctzll(bits);
				struct bucket *b = &semtab[i * 64 + (size_t)bit];
				bits &= bits - 1;
				if (spin_trylock(&b->lock))
					run_bucket_locked(b);
				else
					left |= (uint64_t)1 << bit;
			}
			if (left == 0)
				continue;
			atomic_fetch_or(&deferred[i], left);
			atomic_store(&deferred_any, true);
			while (left) {
				int bit = __builtin_ctzll(left);
				left &= left - 1;
				retry |= atomic_load(&semtab[i * 64 + (size_t)bit]
							      .lock.v) == 0;
			}
		}
		if (!retry)
			break;
	}
	atomic_fetch_sub(&runners, 1);
}

void sema_run_async(void)
{
	if (!atomic_load_explicit(&deferred_any, memory_order_relaxed))
		return;
	/* Counted before the flag goes: sema_async_idle never sees neither. */
	atomic_fetch_add(&runners, 1);
	if (!atomic_exchange(&deferred_any, false)) {
		atomic_fetch_sub(&runners, 1);
		return;
	}
	for (size_t i = 0; i < sizeof deferred / sizeof deferred[0]; i++) {
		uint64_t bits = atomic_exchange(&deferred[i], 0);
		while (bits) {
			int bit = __builtin_ctzll(bits);
			bits &= bits - 1;
			run_bucket(&semtab[i * 64 + (size_t)bit]);
		}
	}
	atomic_fetch_sub(&runners, 1);
}

bool sema_async_idle(void)
{
	return !atomic_load(&deferred_any) && atomic_load(&runners) == 0;
}

/* ---- Go's notifyList ---------------------------------------------------- */

static bool granted(uint32_t ticket, uint32_t notify)
{
	return (int32_t)(ticket - notify) < 0;
}

void notify_enqueue(struct waiter *w, _Atomic uint32_t *wait)
{
	struct bucket *b = bucket_of(wait);

	waiter_init(w);
	/* Relaxed: w is its owner's until queued, and the bucket lock's
	 * release publishes it. The ticket counter's only writer holds
	 * the lock, and lock-free readers only compare it with notify
	 * (nobody waits): a load and a store, not a locked add. */
	atomic_store_explicit(&w->state, W_PREPARED, memory_order_relaxed);
	w->key = wait;
	spin_lock(&b->lock);
	w->ticket = atomic_load_explicit(wait, memory_order_relaxed);
	atomic_store_explicit(wait, w->ticket + 1, memory_order_release);
	waitq_push(&b->q, w, false);
	bucket_release(b);
}

static void nothing_to_unlock(void *unused)
{
	(void)unused;
}

int notify_wait(struct waiter *w, int64_t deadline, const char *reason)
{
	uint32_t st = W_PREPARED;

	/* A notify that claimed it first has dequeued it already. */
	if (!atomic_compare_exchange_strong(&w->state, &st, W_WAITING))
		return 0;
	if (waiter_block(w, nothing_to_unlock, NULL, reason, deadline) ==
	    W_WOKEN)
		return 0;
	leave(bucket_of(w->key), w);
	return ETIMEDOUT;
}

bool notify_cancel(struct waiter *w)
{
	struct bucket *b = bucket_of(w->key);
	uint32_t st = W_PREPARED;

	spin_lock(&b->lock);
	bool claimed =
		!atomic_compare_exchange_strong(&w->state, &st, W_TIMEDOUT);
	if (w->queued)
		waitq_remove(&b->q, w);
	bucket_release(b);
	return claimed;
}

/* A waiter queued after w (a lower priority) holds an older ticket that
 * is not granted yet: w is woken out of ticket order, and the tickets
 * below its own must stay ungranted for the waiters that hold them. */
static bool older_queued(const struct waiter *w, const void *wait,
			 uint32_t notify)
{
	for (const struct waiter *o = w->next; o; o = o->next)
		if (o->key == wait && !granted(o->ticket, notify) &&
		    granted(o->ticket, w->ticket))
			return true;
	return false;
}

bool notify_one(_Atomic uint32_t *wait, _Atomic uint32_t *notify)
{
	struct bucket *b = bucket_of(wait);
	struct waiter *w = NULL;
	uint32_t st = W_TIMEDOUT;

	if (atomic_load(wait) == atomic_load(notify))
		return false; /* nobody waits: the common case, no lock */
	spin_lock(&b->lock);
	uint32_t nt = atomic_load(notify);
	struct waiter **pp = &b->q.head, *prev = NULL;
	while (*pp) {
		w = *pp;
		if (w->key != wait || granted(w->ticket, nt)) {
			prev = w;
			pp = &w->next;
			continue;
		}
		/* The first ticket still queued, highest priority first: the
		 * tickets before it belong to waiters that left, unless it
		 * is a real-time waiter's that goes ahead of older ones;
		 * grant them with it. */
		bool ahead = w->prio > 0 && older_queued(w, wait, nt);
		waitq_unlink(&b->q, pp, prev);
		if (!ahead)
			nt = w->ticket + 1;
		st = claim(w);
		if (st != W_TIMEDOUT)
			break;
		/* Its deadline fired first: the signal goes to the next. */
	}
	/* Nobody left in the queue: every outstanding ticket was given up. */
	if (st == W_TIMEDOUT)
		nt = atomic_load(wait);
	/* Written under the lock only; a release store, not an xchg. */
	atomic_store_explicit(notify, nt, memory_order_release);
	bucket_release(b);
	if (st == W_WOKEN)
		waiter_deliver(w);
	return st != W_TIMEDOUT;
}

void notify_all(_Atomic uint32_t *wait, _Atomic uint32_t *notify)
{
	struct bucket *b = bucket_of(wait);

	spin_lock(&b->lock);
	atomic_store_explicit(notify, atomic_load(wait), memory_order_release);
	bucket_release(b);
}

int notify_wake_granted(const void *wait, uint32_t notify, int n)
{
	struct bucket *b = bucket_of(wait);
	struct waiter *claimed = NULL, **tail = &claimed;
	int woken = 0;

	spin_lock(&b->lock);
	struct waiter **pp = &b->q.head, *prev = NULL;
	while (*pp && woken < n) {
		struct waiter *w = *pp;
		if (w->key != wait || !granted(w->ticket, notify)) {
			prev = w;
			pp = &w->next;
			continue;
		}
		waitq_unlink(&b->q, pp, prev);
		switch (claim(w)) {
		case W_WOKEN:
			*tail = w;
			tail = &w->next;
			/* fall through */
		case W_PREPARED:
			woken++;
		}
	}
	bucket_release(b);
	deliver_all(claimed);
	return woken;
}
