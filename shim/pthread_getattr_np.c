/*
 * pthread_getattr_np.c: a goroutine's attributes. glibc would read them
 * from the TCB and the kernel (by tid), which for a goroutine describe
 * nothing real: report its own stack, guard, detach state, the
 * scheduling policy and priority it has now (and the inherit and scope
 * attributes it was created with), and its CPU affinity. The main thread's TCB is
 * glibc's, so glibc answers for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "../core/wire.h"
#include "shim.h"

GOSHIM_EXPORT int pthread_getattr_np(pthread_t t, pthread_attr_t *attr)
{
	struct g *gp = shim_thread(t);
	struct sched_param param = { 0 };
	int err;

	if (gp == NULL || gp->is_main)
		return real.pthread_getattr_np(t, attr);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	if ((err = pthread_attr_init(attr)) != 0)
		return err;
	spin_lock(&gp->jlock);
	bool detached = gp->detached;
	spin_unlock(&gp->jlock);
	int policy;
	wire_get_sched(gp, &policy, &param.sched_priority);
	pthread_attr_setdetachstate(attr, detached ? PTHREAD_CREATE_DETACHED
						   : PTHREAD_CREATE_JOINABLE);
	/* As glibc reports it: the whole block above the guard, TLS
	 * included. */
	err = pthread_attr_setstack(attr, gp->map + gp->guard_size,
				    gp->map_size - gp->guard_size);
	if (err == 0)
		err = pthread_attr_setguardsize(attr, gp->guard_size);
	if (err == 0)
		err = pthread_attr_setschedpolicy(attr,
						  policy & ~SCHED_RESET_ON_FORK);
	if (err == 0)
		err = pthread_attr_setschedparam(attr, &param);
	if (err == 0)
		err = pthread_attr_setinheritsched(attr, gp->inheritsched);
	if (err == 0)
		err = pthread_attr_setscope(attr, gp->scope);
	if (err == 0) {
		size_t len = wire_mask_bytes();
		cpu_set_t *mask = calloc(1, len);
		err = mask ? wire_get_affinity(gp, len, mask) : ENOMEM;
		if (err == 0)
			err = pthread_attr_setaffinity_np(attr, len, mask);
		free(mask);
	}
	if (err)
		pthread_attr_destroy(attr);
	return err;
}
