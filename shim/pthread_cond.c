/*
 * pthread_cond.c: pthread condvars on core/cond.c.
 *
 * The program's pthread_cond_t holds the state, so the all-zero
 * PTHREAD_COND_INITIALIZER is a valid cond: core's counters (struct cond)
 * in its first 16 bytes, and at @36, glibc's __wrefs, the flags (glibc's
 * bits: 1 process-shared, 2 CLOCK_MONOTONIC).
 *
 * Process-shared conds are glibc's (they must work across processes; their
 * waits, and destroy, which waits for them, block the OS thread under
 * entersyscall, so not the P), and need a process-shared mutex.
 *
 * A wait is a cancellation point: a request that ends it is acted on here
 * once cond_wait has the mutex back, so cleanup handlers run with it held.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include "../core/cond.h"
#include "../core/deadline.h"
#include "shim.h"

#define COND_SHARED 1u
#define COND_MONOTONIC 2u

struct gcond {
	struct cond c;
	uint32_t unused[5];
	_Atomic uint32_t flags;
	uint32_t unused2[2];
};

_Static_assert(sizeof(struct gcond) == sizeof(pthread_cond_t),
	       "cond state must fill pthread_cond_t");
_Static_assert(offsetof(struct gcond, flags) ==
		       offsetof(pthread_cond_t, __data.__wrefs),
	       "the flags must be where glibc keeps them");

/* A cond goshim runs, or NULL when glibc owns it. */
static struct gcond *ours(pthread_cond_t *c)
{
	struct gcond *gc = (struct gcond *)c;
	if (!shim_active() ||
	    (atomic_load_explicit(&gc->flags, memory_order_relaxed) &
	     COND_SHARED))
		return NULL;
	return gc;
}

GOSHIM_EXPORT int pthread_cond_init(pthread_cond_t *c,
				    const pthread_condattr_t *attr)
{
	struct gcond *gc = (struct gcond *)c;
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clk = CLOCK_REALTIME;

	if (!shim_active())
		return real.pthread_cond_init(c, attr);
	if (attr) {
		pthread_condattr_getpshared(attr, &pshared);
		pthread_condattr_getclock(attr, &clk);
	}
	if (pshared == PTHREAD_PROCESS_SHARED)
		return real.pthread_cond_init(c, attr);
	memset(c, 0, sizeof *c);
	if (clk != CLOCK_REALTIME)
		atomic_store(&gc->flags, COND_MONOTONIC);
	return 0;
}

GOSHIM_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(real.pthread_cond_destroy(c));
	cond_destroy(&gc->c);
	return 0;
}

GOSHIM_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return real.pthread_cond_signal(c);
	cond_signal(&gc->c);
	return 0;
}

GOSHIM_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return real.pthread_cond_broadcast(c);
	cond_broadcast(&gc->c);
	return 0;
}

/* A cancel that ended the wait acts with the mutex held again. */
static int cancellable_wait(struct gcond *gc, pthread_mutex_t *m,
			    clockid_t clk, const struct timespec *abstime)
{
	int err = cond_wait(&gc->c, m, deadline_at(clk, abstime));

	if (err == ECANCELED) {
		shim_testcancel();
		return 0; /* not reached */
	}
	return err;
}

GOSHIM_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(real.pthread_cond_wait(c, m));
	return cancellable_wait(gc, m, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c,
					 pthread_mutex_t *m,
					 const struct timespec *abstime)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(real.pthread_cond_timedwait(c, m, abstime));
	clockid_t clk = atomic_load(&gc->flags) & COND_MONOTONIC
				? CLOCK_MONOTONIC
				: CLOCK_REALTIME;
	if (abstime_check(clk, abstime))
		return EINVAL;
	return cancellable_wait(gc, m, clk, abstime);
}

GOSHIM_EXPORT int pthread_cond_clockwait(pthread_cond_t *c,
					 pthread_mutex_t *m, clockid_t clk,
					 const struct timespec *abstime)
{
	struct gcond *gc = ours(c);

	if (gc == NULL)
		return IN_SYSCALL(
			real.pthread_cond_clockwait(c, m, clk, abstime));
	if (abstime_check(clk, abstime))
		return EINVAL;
	return cancellable_wait(gc, m, clk, abstime);
}
