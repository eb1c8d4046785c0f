/*
 * cond.h: condition variables whose waiters park (see cond.c).
 *
 * struct cond is the algorithm's counters, placed by the caller inside the
 * program's object (shim/pthread_cond.c: the first 16 bytes of a
 * pthread_cond_t); all zero is a cond nobody waits on. Deadlines:
 * monotonic ns, or -1.
 */
#ifndef GOSHIM_COND_H
#define GOSHIM_COND_H

#include <pthread.h>
#include <stdint.h>

struct cond {
	_Atomic uint32_t wait;	 /* next ticket */
	_Atomic uint32_t notify; /* tickets below it are granted */
	_Atomic uint32_t refs;	 /* waiters inside wait() << 1 | destroying */
	_Atomic uint32_t bcast;	 /* the latest broadcast's horizon */
};

void cond_signal(struct cond *c);
void cond_broadcast(struct cond *c);
/* Waits until no waiter is inside cond_wait. */
void cond_destroy(struct cond *c);
/* Releases m, waits, takes m back: 0 (woken, or spuriously), ETIMEDOUT,
 * the mutex's error (m not released or not taken back), or ECANCELED: a
 * cancel request ended the wait, m is held again and the request is the
 * caller's to act on. */
int cond_wait(struct cond *c, pthread_mutex_t *m, int64_t deadline);

#endif
