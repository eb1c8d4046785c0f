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
 *    order, so each signal wakes exactly one waiter that was waiting and
 *    none is lost between taking a ticket and sleeping.
 *
 * A waker claims a waiter under the bucket lock (a waiter whose deadline
 * fired first cannot be claimed and does not count) and delivers the
 * wakeup after unlocking.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "runtime.h"
#include "timer.h"

#define SEMTAB_SIZE 251

struct bucket {
	struct spinlock lock;
	_Atomic uint32_t nwait; /* goroutines in sema_acquire here */
	struct waiter *head, *tail;
} __attribute__((aligned(64)));

static struct bucket semtab[SEMTAB_SIZE];

/* In the child of fork every waiter is gone, and a bucket lock may be
 * held by a thread that is gone too. */
void sema_fork_child(void)
{
	memset(semtab, 0, sizeof semtab);
}

static struct bucket *bucket_of(const void *addr)
{
	return &semtab[((uintptr_t)addr >> 3) % SEMTAB_SIZE];
}

static void bucket_unlock(void *b)
{
	spin_unlock(&((struct bucket *)b)->lock);
}

static void enqueue(struct bucket *b, struct waiter *w, bool lifo)
{
	w->queued = true;
	if (lifo) {
		w->next = b->head;
		b->head = w;
		if (b->tail == NULL)
			b->tail = w;
		return;
	}
	w->next = NULL;
	if (b->tail)
		b->tail->next = w;
	else
		b->head = w;
	b->tail = w;
}

static void unlink_after(struct bucket *b, struct waiter **pp,
			 struct waiter *prev)
{
	struct waiter *w = *pp;
	*pp = w->next;
	if (b->tail == w)
		b->tail = prev;
	w->next = NULL;
	w->queued = false;
}

static void unlink_waiter(struct bucket *b, struct waiter *w)
{
	struct waiter **pp = &b->head, *prev = NULL;
	for (; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == w) {
			unlink_after(b, pp, prev);
			return;
		}
	}
}

/* Unlink the first waiter on addr that fits (ticket < 0: any). */
static struct waiter *dequeue(struct bucket *b, const void *addr,
			      int64_t ticket)
{
	struct waiter **pp = &b->head, *prev = NULL;
	for (; *pp; prev = *pp, pp = &(*pp)->next) {
		struct waiter *w = *pp;
		if (w->key == addr && (ticket < 0 || w->ticket == ticket)) {
			unlink_after(b, pp, prev);
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
		unlink_waiter(b, w);
	spin_unlock(&b->lock);
}

/* ---- futex-like --------------------------------------------------------- */

int sema_wait(const _Atomic uint32_t *addr, uint32_t val, int64_t deadline,
	      const char *reason)
{
	struct bucket *b = bucket_of(addr);
	struct waiter w;

	spin_lock(&b->lock);
	if (atomic_load(addr) != val) {
		spin_unlock(&b->lock);
		return EAGAIN;
	}
	waiter_init(&w);
	w.key = addr;
	enqueue(b, &w, false);
	if (waiter_block(&w, bucket_unlock, b, reason, deadline) ==
	    W_TIMEDOUT) {
		leave(b, &w);
		return ETIMEDOUT;
	}
	return 0;
}

static void deliver_all(struct waiter *list)
{
	while (list) {
		struct waiter *w = list;
		list = w->next;
		waiter_deliver(w);
	}
}

/* Unlink and claim up to n waiters on key (b locked): the claimed ones are
 * chained on *list, to be delivered after unlocking. One that timed out
 * meanwhile does not count; a claimed one waits for its wakeup, so it
 * stays valid until delivered. */
static int claim_waiters(struct bucket *b, const void *key, int n,
			 struct waiter **list)
{
	struct waiter **tail = list;
	int woken = 0;

	*list = NULL;
	while (woken < n) {
		struct waiter *w = dequeue(b, key, -1);
		if (w == NULL)
			break;
		if (waiter_claim(w)) {
			*tail = w;
			tail = &w->next;
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
	spin_unlock(&b->lock);
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
			spin_unlock(&b->lock);
			return 0;
		}
		waiter_init(&w);
		w.key = addr;
		w.handoff = false;
		enqueue(b, &w, lifo);
		if (waiter_block(&w, bucket_unlock, b, reason, deadline) ==
		    W_TIMEDOUT) {
			spin_lock(&b->lock);
			if (w.queued) {
				unlink_waiter(b, &w);
				atomic_fetch_sub(&b->nwait, 1);
			}
			spin_unlock(&b->lock);
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

	atomic_fetch_add(addr, 1);
	if (atomic_load(&b->nwait) == 0)
		return;
	spin_lock(&b->lock);
	for (;;) {
		w = dequeue(b, addr, -1);
		if (w == NULL)
			break;
		atomic_fetch_sub(&b->nwait, 1);
		/* The handoff is decided before the claim: a waiter (a
		 * foreign thread spinning on its state) may run as soon as it
		 * is claimed and must find it. */
		bool took = handoff && cansemacquire(addr);
		w->handoff = took;
		if (waiter_claim(w))
			break;
		/* It timed out: its count is still there for the next. */
		if (took)
			atomic_fetch_add(addr, 1);
	}
	spin_unlock(&b->lock);
	if (w) {
		waiter_deliver(w);
		/* Starvation mode: let the new owner run now (Go's goyield). */
		if (w->g && handoff && on_goroutine())
			goyield();
	}
}

/* ---- Go's notifyList ---------------------------------------------------- */

static bool granted(uint32_t ticket, uint32_t notify)
{
	return (int32_t)(ticket - notify) < 0;
}

uint32_t notify_add(_Atomic uint32_t *wait)
{
	return atomic_fetch_add(wait, 1);
}

int notify_wait(_Atomic uint32_t *wait, _Atomic uint32_t *notify,
		uint32_t ticket, int64_t deadline, const char *reason)
{
	struct bucket *b = bucket_of(wait);
	struct waiter w;

	spin_lock(&b->lock);
	if (granted(ticket, atomic_load(notify))) {
		spin_unlock(&b->lock);
		return 0;
	}
	waiter_init(&w);
	w.key = wait;
	w.ticket = ticket;
	enqueue(b, &w, false);
	if (waiter_block(&w, bucket_unlock, b, reason, deadline) ==
	    W_TIMEDOUT) {
		leave(b, &w);
		return ETIMEDOUT;
	}
	return 0;
}

int notify_one(_Atomic uint32_t *wait, _Atomic uint32_t *notify)
{
	struct bucket *b = bucket_of(wait);
	struct waiter *w = NULL;
	int granted_n = 0;

	if (atomic_load(wait) == atomic_load(notify))
		return 0; /* nobody waits: the common case, no lock */
	spin_lock(&b->lock);
	while (atomic_load(wait) != atomic_load(notify)) {
		uint32_t t = atomic_fetch_add(notify, 1);
		granted_n++;
		w = dequeue(b, wait, t);
		/* Not asleep yet: it sees the grant and does not sleep. */
		if (w == NULL)
			break;
		if (waiter_claim(w))
			break;
		w = NULL; /* it timed out: the signal goes to the next */
	}
	spin_unlock(&b->lock);
	if (w)
		waiter_deliver(w);
	return granted_n;
}

int notify_all(_Atomic uint32_t *wait, _Atomic uint32_t *notify, int nwake)
{
	struct bucket *b = bucket_of(wait);
	struct waiter *claimed;

	if (atomic_load(wait) == atomic_load(notify))
		return 0;
	spin_lock(&b->lock);
	atomic_store(notify, atomic_load(wait));
	int woken = claim_waiters(b, wait, nwake, &claimed);
	spin_unlock(&b->lock);
	deliver_all(claimed);
	return woken;
}

int notify_wake_granted(_Atomic uint32_t *wait, _Atomic uint32_t *notify,
			int n)
{
	struct bucket *b = bucket_of(wait);
	struct waiter *claimed = NULL, **tail = &claimed;
	int woken = 0;

	spin_lock(&b->lock);
	uint32_t nt = atomic_load(notify);
	struct waiter **pp = &b->head, *prev = NULL;
	while (*pp && woken < n) {
		struct waiter *w = *pp;
		if (w->key != wait || !granted(w->ticket, nt)) {
			prev = w;
			pp = &w->next;
			continue;
		}
		unlink_after(b, pp, prev);
		if (waiter_claim(w)) {
			*tail = w;
			tail = &w->next;
			woken++;
		}
	}
	spin_unlock(&b->lock);
	deliver_all(claimed);
	return woken;
}
