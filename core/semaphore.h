/*
 * semaphore.h: counting semaphores whose waiters park (see semaphore.c).
 *
 * The value is a word in the program's object (shim/sem.c: the low half
 * of glibc's 64-bit word in sem_t).
 */
#ifndef GOSHIM_SEMAPHORE_H
#define GOSHIM_SEMAPHORE_H

#include <stdbool.h>
#include <stdint.h>

/* A unit, if there is one, without waiting. */
bool semaphore_trydown(_Atomic uint32_t *value);
/* Adds a unit: 0, or EOVERFLOW at SEM_VALUE_MAX. Async-signal-safe. */
int semaphore_up(_Atomic uint32_t *value);
/*
 * One wait for a unit, after a failed semaphore_trydown: a wait that
 * signals and cancellation end (intr_begin_cancel). deadline: monotonic
 * ns or -1; restart: whether SA_RESTART handlers restart it. 0, ETIMEDOUT
 * (also at once, past the deadline), EINTR, or intr_end's ERESTART_CALL
 * or ECANCEL_CALL, which the caller acts on and calls again.
 */
int semaphore_down(_Atomic uint32_t *value, int64_t deadline, bool restart);

#endif
