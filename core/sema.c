/*
 * sema.c: wait queues keyed by address (Go's semaRoot idea, with Linux
 * futex semantics).
 *
 * Nothing lives in the program's objects but their own words: a waiter
 * sleeps on an address only if the word there still holds the value it
 * expects, checked under the bucket lock that sema_wake also takes, so a
 * change + wake can never slip between the check and the sleep. Waiters
 * are goroutines (parked) or foreign threads (futex on their own word),
 * FIFO per address. Buckets are hashed by address, Go's 251.
 */
#include <errno.h>
#include <limits.h>
#include "runtime.h"
#include "timer.h"

#define SEMTAB_SIZE 251

struct bucket {
	struct spinlock lock;
	struct waiter *head, *tail;
} __attribute__((aligned(64)));

static struct bucket semtab[SEMTAB_SIZE];

static struct bucket *bucket_of(const void *addr)
{
	return &semtab[((uintptr_t)addr >> 3) % SEMTAB_SIZE];
}

static void bucket_unlock(void *b)
{
	spin_unlock(&((struct bucket *)b)->lock);
}

static void unlink_waiter(struct bucket *b, struct waiter *w)
{
	struct waiter **pp = &b->head, *prev = NULL;
	for (; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			if (b->tail == w)
				b->tail = prev;
			w->next = NULL;
			return;
		}
	}
}

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
	if (b->tail)
		b->tail->next = &w;
	else
		b->head = &w;
	b->tail = &w;
	if (waiter_block(&w, bucket_unlock, b, reason, deadline) ==
	    W_TIMEDOUT) {
		spin_lock(&b->lock);
		unlink_waiter(b, &w);
		spin_unlock(&b->lock);
		return ETIMEDOUT;
	}
	return 0;
}

int sema_wake(const _Atomic uint32_t *addr, int n)
{
	struct bucket *b = bucket_of(addr);
	struct waiter *claimed = NULL, **tail = &claimed;
	int woken = 0;

	spin_lock(&b->lock);
	struct waiter **pp = &b->head, *prev = NULL;
	while (*pp && woken < n) {
		struct waiter *w = *pp;
		if (w->key != addr) {
			prev = w;
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		if (b->tail == w)
			b->tail = prev;
		w->next = NULL;
		/* One that timed out meanwhile does not count. A claimed one
		 * waits for its wakeup, so it can be delivered unlocked. */
		if (waiter_claim(w)) {
			*tail = w;
			tail = &w->next;
			woken++;
		}
	}
	spin_unlock(&b->lock);
	while (claimed) {
		struct waiter *w = claimed;
		claimed = w->next;
		waiter_deliver(w);
	}
	return woken;
}
