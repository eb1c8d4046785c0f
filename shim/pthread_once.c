/*
 * pthread_once.c: pthread_once and C11 call_once on core/once.c.
 */
#include <pthread.h>
#include <threads.h>
#include "../core/once.h"
#include "shim.h"

GOSHIM_EXPORT int pthread_once(pthread_once_t *once, void (*init)(void))
{
	if (!shim_active())
		return real.pthread_once(once, init);
	once_run((_Atomic uint32_t *)once, init);
	return 0;
}

GOSHIM_EXPORT void call_once(once_flag *flag, void (*func)(void))
{
	pthread_once((pthread_once_t *)flag, func);
}
