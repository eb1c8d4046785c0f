/*
 * waiter.h: a waiter (Go's sudog), the one way a goroutine or a thread the
 * runtime did not create waits for an event or a deadline, and the wait
 * queue lists waiters sit on (waiter.c).
 *
 * A goroutine parks; a foreign thread sleeps on a futex on the waiter's own
 * state word. A waker claims a waiter under its queue's lock and delivers
 * after unlocking; the owner does not return before delivery, since its
 * waiter lives on its stack. A deadline is a runtime timer that claims the
 * waiter like any waker.
 */
#ifndef GOSHIM_WAITER_H
#define GOSHIM_WAITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include "timer.h"

struct g;

/* W_PREPARED: queued but not yet blocking (sema.c's notify waiters); a
 * waker that claims it then must not deliver. W_CLAIMED: claimed but not
 * yet delivered. The owner may look at its state before the wakeup comes
 * (a foreign thread watches the word; a goroutine runs a signal's handler
 * in the middle of its wait), and must not return (and reuse its stack,
 * where w lives) while its waker still reads or links w. */
enum { W_WAITING, W_WOKEN, W_TIMEDOUT, W_PREPARED, W_CLAIMED };

struct waiter {
	struct g *g; /* NULL: a thread the runtime did not create */
	_Atomic uint32_t state;
	int prio; /* its goroutine's rtprio when it queued */
	struct timer timer;
	const void *key;     /* address it waits on (sema.c) */
	uint32_t ticket;     /* notify list ticket (sema.c) */
	bool acquiring;	     /* in sema_acquire: counted in nwait */
	bool handoff;	     /* sema_release passed the count directly */
	bool queued;	     /* on a waitq */
	struct waiter *next, *prev; /* for the queue the waiter sits on */
};

/* A wait queue's list of waiters, highest priority first and oldest first
 * among equals, as the kernel's futex queues wake real-time threads; its
 * owner's lock guards it (sema.c's and futex.c's buckets). Without
 * real-time waiters every priority is 0 and it is a FIFO. Doubly linked:
 * a waiter whose deadline fired leaves a queue of thousands at once. */
struct waitq {
	struct waiter *head, *tail;
};

/* Queue w last, or first (front: a waiter that waited already), among the
 * waiters of its priority. Only a real-time waiter that goes ahead of
 * lower ones walks the list. */
static inline void waitq_push(struct waitq *q, struct waiter *w, bool front)
{
	struct waiter *prev = NULL, *next = front ? q->head : NULL;

	if (front ? q->head && q->head->prio > w->prio
		  : q->tail && q->tail->prio < w->prio) {
		for (next = q->head; next && (front ? next->prio > w->prio
						    : next->prio >= w->prio);
		     next = next->next)
			prev = next;
	} else if (!front) {
		prev = q->tail;
	}
	w->queued = true;
	w->prev = prev;
	w->next = next;
	if (prev)
		prev->next = w;
	else
		q->head = w;
	if (next)
		next->prev = w;
	else
		q->tail = w;
}

/* Take out *pp, whose predecessor is prev (NULL at the head). */
static inline void waitq_unlink(struct waitq *q, struct waiter **pp,
				struct waiter *prev)
{
	struct waiter *w = *pp;
	*pp = w->next;
	if (w->next)
		w->next->prev = prev;
	else
		q->tail = prev;
	w->next = w->prev = NULL;
	w->queued = false;
}

/* Take out w, wherever it sits: a waiter that leaves on its own (its
 * deadline, a signal) finds its place without walking the queue. */
static inline void waitq_remove(struct waitq *q, struct waiter *w)
{
	waitq_unlink(q, w->prev ? &w->prev->next : &q->head, w->prev);
}

void waiter_init(struct waiter *w);
/* Wake w if it is still waiting; true if this call woke it. */
bool waiter_wake(struct waiter *w);
/*
 * The same in two steps, so the slow part can run outside the lock that
 * keeps w registered: claim (true: this caller owns the wakeup, and w stays
 * valid because its owner cannot return until delivered), then deliver.
 */
bool waiter_claim(struct waiter *w);
void waiter_deliver(struct waiter *w);
/* Deliver a claimed w with final state W_WOKEN or W_TIMEDOUT. */
void waiter_finish(struct waiter *w, uint32_t final);
/*
 * Block the caller on w until waiter_wake or the deadline (monotonic ns,
 * -1 for none). unlock(lock) releases whatever protects w's registration
 * and runs first: a waker may then claim w before the goroutine has
 * parked, and goready waits for the park. Returns W_WOKEN or W_TIMEDOUT.
 */
uint32_t waiter_block(struct waiter *w, void (*unlock)(void *), void *lock,
		      const char *reason, int64_t deadline);

#endif
