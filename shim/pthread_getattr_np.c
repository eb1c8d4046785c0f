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
	struct spawn_attr a;
	int err;

	if (gp == NULL || g_is_main(gp))
		return real.pthread_getattr_np(t, attr);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	if ((err = pthread_attr_init(attr)) != 0)
		return err;
	g_attr(gp, &a);
	param.sched_priority = a.sched_priority;
	pthread_attr_setdetachstate(attr, a.detached ? PTHREAD_CREATE_DETACHED
						     : PTHREAD_CREATE_JOINABLE);
	err = pthread_attr_setstack(attr, a.stackaddr, a.stacksize);
	if (err == 0)
		err = pthread_attr_setguardsize(attr, a.guardsize);
	if (err == 0)
		err = pthread_attr_setschedpolicy(
			attr, a.sched_policy & ~SCHED_RESET_ON_FORK);
	if (err == 0)
		err = pthread_attr_setschedparam(attr, &param);
	if (err == 0)
		err = pthread_attr_setinheritsched(attr, a.inheritsched);
	if (err == 0)
		err = pthread_attr_setscope(attr, a.scope);
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
