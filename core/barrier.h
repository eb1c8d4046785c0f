/*
 * barrier.h: barriers whose waiters park (see barrier.c).
 *
 * struct barrier lives in the program's object (shim/pthread_barrier.c:
 * in a pthread_barrier_t).
 */
#ifndef GOSHIM_BARRIER_H
#define GOSHIM_BARRIER_H

#include <stdbool.h>
#include <stdint.h>
#include "lock.h"

struct barrier {
	struct spinlock lock;	/* guards count and arrived */
	uint32_t count;
	uint32_t arrived;
	_Atomic uint32_t round;	 /* waiters sleep here */
	_Atomic uint32_t inside; /* threads inside barrier_wait */
};

void barrier_init(struct barrier *b, uint32_t count);
/* true for the one thread that completed the round. */
bool barrier_wait(struct barrier *b);
/* false (EBUSY) while a round is filling; else waits until the last
 * round's waiters are out. */
bool barrier_destroy(struct barrier *b);

#endif
