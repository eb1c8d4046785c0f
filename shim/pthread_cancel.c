/*
 * pthread_cancel.c: deferred cancellation of a goroutine.
 *
 * glibc keeps a thread's cancel state, type and pending request in its
 * TCB, and every goroutine has a TCB of its own: glibc's pthread_cancel
 * marks the goroutine, and pthread_setcancelstate, pthread_setcanceltype,
 * pthread_testcancel and glibc's own cancellation points work as they
 * are. Acting on the request unwinds the stack (cleanup handlers, C++
 * destructors) to g_entry's buffer, as pthread_exit does, and the joiner
 * gets PTHREAD_CANCELED (g_entry's retval until pthread_exit or a return
 * sets it). What glibc cannot do is end a wait goshim parks the goroutine
 * in: here pthread_cancel also ends the target's cancellable wait (sleeps
 * and sem_wait; see intr_begin_cancel), or makes its next one end at
 * once, and that wait calls shim_testcancel before waiting on. Not yet: condvar, join and fd waits (they go on until they
 * end by themselves), asynchronous cancellation (glibc's signal goes to
 * the goroutine's fake tid), cancelling the main goroutine.
 */
#include <pthread.h>
#include "shim.h"

void shim_testcancel(void)
{
	struct g *gp;

	if (!on_goroutine())
		return;
	gp = getg();
	/* main's unwind buffer is glibc's own, which would end the M. */
	if (gp->is_main)
		return;
	/* If it acts, it unwinds to g_entry, whose retval says
	 * PTHREAD_CANCELED. */
	real.pthread_testcancel();
}

GOSHIM_EXPORT int pthread_cancel(pthread_t t)
{
	struct g *gp = shim_thread(t);
	int err = real.pthread_cancel(t);

	if (err == 0 && gp && gp != getg())
		gcancel_wake(gp);
	return err;
}

GOSHIM_EXPORT void pthread_testcancel(void)
{
	if (shim_active())
		shim_testcancel();
	else
		real.pthread_testcancel();
}
