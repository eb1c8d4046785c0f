/*
 * c11_mtx.c: C11 mutexes and condition variables. glibc builds them on its
 * internal pthread functions, which interposing cannot reach, so each is
 * routed to goshim's pthread one (mtx_t and cnd_t are pthread_mutex_t and
 * pthread_cond_t), with glibc's mapping of the results.
 */
#include <pthread.h>
#include <threads.h>
#include "c11.h"
#include "shim.h"

GOSHIM_EXPORT int mtx_init(mtx_t *mtx, int type)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	/* As glibc: any other type is a plain mutex. */
	if (type == (mtx_plain | mtx_recursive) ||
	    type == (mtx_timed | mtx_recursive))
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	return thrd_result(pthread_mutex_init((pthread_mutex_t *)mtx, &attr));
}

GOSHIM_EXPORT int mtx_lock(mtx_t *mtx)
{
	return thrd_result(pthread_mutex_lock((pthread_mutex_t *)mtx));
}

GOSHIM_EXPORT int mtx_trylock(mtx_t *mtx)
{
	return thrd_result(pthread_mutex_trylock((pthread_mutex_t *)mtx));
}

GOSHIM_EXPORT int mtx_timedlock(mtx_t *restrict mtx,
				const struct timespec *restrict ts)
{
	return thrd_result(pthread_mutex_timedlock((pthread_mutex_t *)mtx, ts));
}

GOSHIM_EXPORT int mtx_unlock(mtx_t *mtx)
{
	return thrd_result(pthread_mutex_unlock((pthread_mutex_t *)mtx));
}

GOSHIM_EXPORT void mtx_destroy(mtx_t *mtx)
{
	pthread_mutex_destroy((pthread_mutex_t *)mtx);
}

GOSHIM_EXPORT int cnd_init(cnd_t *cond)
{
	return thrd_result(pthread_cond_init((pthread_cond_t *)cond, NULL));
}

GOSHIM_EXPORT int cnd_signal(cnd_t *cond)
{
	return thrd_result(pthread_cond_signal((pthread_cond_t *)cond));
}

GOSHIM_EXPORT int cnd_broadcast(cnd_t *cond)
{
	return thrd_result(pthread_cond_broadcast((pthread_cond_t *)cond));
}

GOSHIM_EXPORT int cnd_wait(cnd_t *cond, mtx_t *mtx)
{
	return thrd_result(pthread_cond_wait((pthread_cond_t *)cond,
					     (pthread_mutex_t *)mtx));
}

GOSHIM_EXPORT int cnd_timedwait(cnd_t *restrict cond, mtx_t *restrict mtx,
				const struct timespec *restrict ts)
{
	return thrd_result(pthread_cond_timedwait((pthread_cond_t *)cond,
						  (pthread_mutex_t *)mtx, ts));
}

GOSHIM_EXPORT void cnd_destroy(cnd_t *cond)
{
	pthread_cond_destroy((pthread_cond_t *)cond);
}
