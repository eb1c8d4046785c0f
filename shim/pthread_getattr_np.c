/*
 * pthread_getattr_np.c: a goroutine's attributes. glibc would read them
 * from the TCB and the kernel (by tid), which for a goroutine describe
 * nothing real: report its own stack, guard, detach state and the
 * scheduling attributes it was created with. The main thread's TCB is
 * glibc's, so glibc answers for it.
 */
#include <errno.h>
#include <pthread.h>
#include "shim.h"

GOSHIM_EXPORT int pthread_getattr_np(pthread_t t, pthread_attr_t *attr)
{
	struct g *gp = shim_thread(t);
	struct sched_param param = { 0 };
	int err;

	if (gp == NULL || gp->is_main)
		return real.pthread_getattr_np(t, attr);
	if ((err = pthread_attr_init(attr)) != 0)
		return err;
	spin_lock(&gp->jlock);
	bool detached = gp->detached;
	spin_unlock(&gp->jlock);
	param.sched_priority = gp->sched_priority;
	pthread_attr_setdetachstate(attr, detached ? PTHREAD_CREATE_DETACHED
						   : PTHREAD_CREATE_JOINABLE);
	/* As glibc reports it: the whole block above the guard, TLS
	 * included. */
	err = pthread_attr_setstack(attr, gp->map + gp->guard_size,
				    gp->map_size - gp->guard_size);
	if (err == 0)
		err = pthread_attr_setguardsize(attr, gp->guard_size);
	if (err == 0)
		err = pthread_attr_setschedpolicy(attr, gp->sched_policy);
	if (err == 0)
		err = pthread_attr_setschedparam(attr, &param);
	if (err == 0)
		err = pthread_attr_setinheritsched(attr, gp->inheritsched);
	if (err == 0)
		err = pthread_attr_setscope(attr, gp->scope);
	if (err)
		pthread_attr_destroy(attr);
	return err;
}
