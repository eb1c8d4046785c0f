/*
 * sched_yield.c: yielding a goroutine is Go's Gosched: it goes to the
 * global run queue and its M runs something else. glibc's pthread_yield
 * and thrd_yield call sched_yield internally, out of reach of interposing,
 * so each is interposed.
 */
#include <sched.h>
#include <threads.h>
#include "shim.h"

GOSHIM_EXPORT int sched_yield(void)
{
	if (!shim_active() || !on_goroutine())
		return real.sched_yield();
	gosched();
	return 0;
}

/* <pthread.h> redirects pthread_yield to sched_yield; the library's
 * exported pthread_yield still exists and needs its own definition. */
GOSHIM_EXPORT int goshim_pthread_yield(void) __asm__("pthread_yield");
int goshim_pthread_yield(void)
{
	return sched_yield();
}

GOSHIM_EXPORT void thrd_yield(void)
{
	sched_yield();
}
