/*
 * pthread_join.c: join, tryjoin, timedjoin and clockjoin (core/join.c).
 * Threads goshim did not create are joined by glibc.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include "../core/deadline.h"
#include "shim.h"

/* A cancel that ends the wait is acted on here, with the target left
 * joinable (glibc's join unregisters itself the same way). */
static int join(struct g *gp, void **ret, int64_t deadline)
{
	int err;

	while ((err = go_join(gp, ret, false, deadline)) == ECANCELED)
		shim_testcancel();
	return err;
}

GOSHIM_EXPORT int pthread_join(pthread_t t, void **ret)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_join(t, ret);
	return join(gp, ret, -1);
}

GOSHIM_EXPORT int pthread_tryjoin_np(pthread_t t, void **ret)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_tryjoin_np(t, ret);
	return go_join(gp, ret, true, -1);
}

GOSHIM_EXPORT int pthread_clockjoin_np(pthread_t t, void **ret, clockid_t clk,
				       const struct timespec *abstime)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_clockjoin_np(t, ret, clk, abstime);
	if (abstime_check(clk, abstime))
		return EINVAL;
	return join(gp, ret, deadline_at(clk, abstime));
}

GOSHIM_EXPORT int pthread_timedjoin_np(pthread_t t, void **ret,
				       const struct timespec *abstime)
{
	return pthread_clockjoin_np(t, ret, CLOCK_REALTIME, abstime);
}
