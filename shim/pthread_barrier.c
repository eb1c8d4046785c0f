/*
 * pthread_barrier.c: pthread barriers on core/barrier.c.
 *
 * The state lives in the program's pthread_barrier_t (32 bytes): core's
 * struct barrier, then a process-shared flag and a magic word that says
 * goshim made it. Process-shared barriers are glibc's (they must work
 * across processes): their waits, and destroy, which waits out the last
 * round, block the OS thread under entersyscall, so not the P.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include "../core/barrier.h"
#include "shim.h"

#define BARRIER_MAGIC 0x62617272u /* "barr" */

struct gbarrier {
	struct barrier b;
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
	*gb = (struct gbarrier){ .magic = BARRIER_MAGIC };
	barrier_init(&gb->b, count);
	return 0;
}

GOSHIM_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	struct gbarrier *gb = ours(b);

	if (gb == NULL)
		return IN_SYSCALL(real.pthread_barrier_wait(b));
	return barrier_wait(&gb->b) ? PTHREAD_BARRIER_SERIAL_THREAD : 0;
}

GOSHIM_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	struct gbarrier *gb = ours(b);

	if (gb == NULL)
		return IN_SYSCALL(real.pthread_barrier_destroy(b));
	if (!barrier_destroy(&gb->b))
		return EBUSY;
	gb->magic = 0;
	return 0;
}
