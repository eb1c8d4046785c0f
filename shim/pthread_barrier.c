/*
 * pthread_barrier.c: barriers whose waiters park.
 *
 * The state lives in the program's pthread_barrier_t (32 bytes): a spin
 * word guarding the counts, the round number waiters sleep on (sema.c), and
 * how many threads are still inside wait(), which destroy() waits out as
 * glibc does. Process-shared barriers are glibc's (they must work across
 * processes): their waits, and destroy, which waits out the last round,
 * block the OS thread under entersyscall, so not the P.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include "shim.h"

#define BARRIER_MAGIC 0x62617272u /* "barr" */

struct gbarrier {
	struct spinlock lock;
	uint32_t count;
	uint32_t arrived;
	_Atomic uint32_t round;
	_Atomic uint32_t inside;
	uint32_t pshared;
	uint32_t magic;
};

_Static_assert(sizeof(struct gbarrier) <= sizeof(pthread_barrier_t),
	       "barrier state must fit in pthread_barrier_t");

/* A barrier goshim made, or NULL when glibc owns it. */
static struct gbarrier *ours(pthread_barrier_t *b)
{
	struct gbarrier *gb = (struct gbarrier *)b;
	return gb->magic == BARRIER_MAGIC && !gb->pshared ? gb : NULL;
}

GOSHIM_EXPORT int pthread_barrier_init(pthread_barrier_t *b,
				       const pthread_barrierattr_t *attr,
				       unsigned count)
{
	struct gbarrier *gb = (struct gbarrier *)b;
	int pshared = PTHREAD_PROCESS_PRIVATE;

	if (attr && pthread_barrierattr_getpshared(attr, &pshared))
		return EINVAL;
	if (!shim_active() || pshared == PTHREAD_PROCESS_SHARED)
		return real.pthread_barrier_init(b, attr, count);
	/* glibc's limit: count < UINT_MAX / 2 (its BARRIER_IN_THRESHOLD) */
	if (count == 0 || count >= UINT_MAX / 2)
		return EINVAL;
	*gb = (struct gbarrier){ .count = count, .magic = BARRIER_MAGIC };
	return 0;
}

GOSHIM_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	struct gbarrier *gb = ours(b);

	if (gb == NULL)
		return IN_SYSCALL(real.pthread_barrier_wait(b));
	atomic_fetch_add(&gb->inside, 1);
	spin_lock(&gb->lock);
	uint32_t round = atomic_load(&gb->round);
	int ret = 0;
	if (++gb->arrived == gb->count) {
		gb->arrived = 0;
		atomic_store(&gb->round, round + 1);
		spin_unlock(&gb->lock);
		sema_wake(&gb->round, INT_MAX);
		rt_yield();
		ret = PTHREAD_BARRIER_SERIAL_THREAD;
	} else {
		spin_unlock(&gb->lock);
		while (atomic_load(&gb->round) == round)
			sema_wait(&gb->round, round, -1, "barrier");
	}
	if (atomic_fetch_sub(&gb->inside, 1) == 1)
		sema_wake(&gb->inside, INT_MAX);
	return ret;
}

GOSHIM_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	struct gbarrier *gb = ours(b);
	uint32_t in;

	if (gb == NULL)
		return IN_SYSCALL(real.pthread_barrier_destroy(b));
	spin_lock(&gb->lock);
	bool busy = gb->arrived != 0;
	spin_unlock(&gb->lock);
	if (busy)
		return EBUSY;
	/* Waiters of the last round may still be on their way out. */
	while ((in = atomic_load(&gb->inside)) != 0)
		sema_wait(&gb->inside, in, -1, "barrier destroy");
	gb->magic = 0;
	return 0;
}
