/*
 * timer.h: runtime timers (CLOCK_MONOTONIC nanoseconds) on per-P heaps, and
 * waiters, the one way a goroutine or a foreign thread waits for an event or
 * a deadline.
 */
#ifndef GOSHIM_TIMER_H
#define GOSHIM_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include "lock.h"

struct g;
struct p;

struct timers;

struct timer {
	int64_t when;
	void (*f)(struct timer *);
	int32_t idx;		/* index in heap's array */
	/* The heap it is in (NULL: none); changes under that heap's lock. */
	_Atomic(struct timers *) heap;
	_Atomic uint32_t running; /* f is being called */
};

/* A P's timers: a 4-ary heap. All zero is empty (Ps are calloc'd, and
 * zeroed in the child of fork). */
struct timers {
	struct rlock lock;
	struct timer **heap;
	int32_t len, cap;
	/* INT64_MAX - the earliest when (0: none), read without the lock. */
	_Atomic uint64_t rnext;
};

void timer_add(struct timer *t, int64_t when, void (*f)(struct timer *));
/* Remove t; if its function is running, wait until it returns. */
void timer_del(struct timer *t);
/* Run every P's expired timers, earliest first; returns the next deadline
 * over all Ps or -1. */
int64_t timers_run(int64_t now);
/* Run pp's expired timers; true if it ran any. */
bool timers_run_p(struct p *pp, int64_t now);
/* The earliest deadline over all Ps, or -1: one load. */
int64_t timers_next(void);
/* No timer is between its heap and the end of its function (checkdead:
 * sysmon, on no M, may be readying a goroutine from one). */
bool timers_idle(void);
/* pp is past GOMAXPROCS: its timers move to P0 (proc.c's p_drain). */
void timers_drain(struct p *pp);
/* In the child of fork: no timers (their goroutines are gone), unlocked. */
void timers_fork_child(void);

/* One idle M at a time sleeps until the next timer: claim that role (false
 * if another M has it), and give it up after waking. */
struct m;
bool timers_claim_sleeper(struct m *mp, int64_t until);
void timers_release_sleeper(void);
/* Some idle M sleeps until the next timer. */
bool timers_have_sleeper(void);
/* proc.c: wake an idle M without giving it a P. */
void m_kick(struct m *mp);

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
	struct waiter *next; /* for the queue the waiter sits on */
};

/* A wait queue's list of waiters, highest priority first and oldest first
 * among equals, as the kernel's futex queues wake real-time threads; its
 * owner's lock guards it (sema.c's and futex.c's buckets). Without
 * real-time waiters every priority is 0 and it is a FIFO. */
struct waitq {
	struct waiter *head, *tail;
};

/* Queue w last, or first (front: a waiter that waited already), among the
 * waiters of its priority. Only a real-time waiter that goes ahead of
 * lower ones walks the list. */
static inline void waitq_push(struct waitq *q, struct waiter *w, bool front)
{
	w->queued = true;
	if (front ? q->head && q->head->prio > w->prio
		  : q->tail && q->tail->prio < w->prio) {
		struct waiter **pp = &q->head;
		while (*pp && (front ? (*pp)->prio > w->prio
				     : (*pp)->prio >= w->prio))
			pp = &(*pp)->next;
		w->next = *pp;
		*pp = w;
		if (w->next == NULL)
			q->tail = w;
		return;
	}
	if (front) {
		w->next = q->head;
		q->head = w;
		if (q->tail == NULL)
			q->tail = w;
		return;
	}
	w->next = NULL;
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
}

/* Take out *pp, whose predecessor is prev (NULL at the head). */
static inline void waitq_unlink(struct waitq *q, struct waiter **pp,
				struct waiter *prev)
{
	struct waiter *w = *pp;
	*pp = w->next;
	if (q->tail == w)
		q->tail = prev;
	w->next = NULL;
	w->queued = false;
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
