/*
 * timer.h: runtime timers (CLOCK_MONOTONIC nanoseconds) on per-P heaps
 * (timer.c). What waits on them is a waiter (waiter.h).
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
	uint32_t id;		/* its number in the heap it is in */
	/* The heap it is in (NULL: none); changes under that heap's lock. */
	_Atomic(struct timers *) heap;
	_Atomic uint32_t running; /* f is being called */
};

/* A P's timers: a 4-ary heap. All zero is empty (Ps are calloc'd, and
 * zeroed in the child of fork).
 *
 * A heap slot holds its timer's when and number, and a sift moves slots
 * in one array and writes each moved one's new place in another (pos):
 * it never touches a timer. Timers live in waiters on goroutine stacks, a
 * cache and TLB miss apiece; writing each moved timer's index cost 70% of
 * a removal from a heap of 5,000 sleepers. A number is the heap's, given
 * out while its timer is on it: by_id finds the timer, pos its slot, and
 * a free number's pos links it to the next free one. */
struct timer_slot {
	int64_t when;
	uint32_t id;
};

struct timers {
	struct rlock lock;
	struct timer_slot *heap;
	struct timer **by_id;
	int32_t *pos;
	int32_t len, cap;
	int32_t free_id; /* the first free number (any when len < cap) */
	/* INT64_MAX - the earliest when (0: none), read without the lock. */
	_Atomic uint64_t rnext;
	/* Its timers taken off the heap whose function has not returned:
	 * counted before they leave, so that "no timer" is never seen while
	 * one is readying a goroutine that is on no queue yet (timers_idle).
	 * Per heap: a global count was a line both Ps wrote twice a timer. */
	_Atomic int32_t running;
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
/* pp is past GOMAXPROCS: its timers move to P0 (p.c). */
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
/* m.c: wake an idle M without giving it a P. */
void m_kick(struct m *mp);

#endif
