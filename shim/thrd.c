/*
 * thrd.c: C11 threads. glibc builds them on its internal pthread
 * functions, which interposing cannot reach, so each is routed to goshim's
 * own. A C11 start routine returns int; glibc passes it to the pthread
 * machinery as a void * result and truncates it back in thrd_join.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <threads.h>
#include "c11.h"
#include "shim.h"

GOSHIM_EXPORT int thrd_create(thrd_t *thr, thrd_start_t func, void *arg)
{
	int err = pthread_create(thr, NULL,
				 (void *(*)(void *))(void (*)(void))func, arg);
	/* Out of threads is out of memory to C11. */
	return thrd_result(err == EAGAIN ? ENOMEM : err);
}

GOSHIM_EXPORT int thrd_join(thrd_t thr, int *res)
{
	void *ret;
	int err = pthread_join(thr, &ret);
	if (err == 0 && res)
		*res = (int)(intptr_t)ret;
	return thrd_result(err);
}

GOSHIM_EXPORT int thrd_detach(thrd_t thr)
{
	return thrd_result(pthread_detach(thr));
}

GOSHIM_EXPORT void thrd_exit(int res)
{
	pthread_exit((void *)(intptr_t)res);
}
