/*
 * pthread_cancel.c: cancellation of goroutines.
 *
 * glibc keeps a thread's cancel state, type and request in its TCB, and
 * every goroutine has a TCB of its own: glibc's pthread_cancel marks the
 * goroutine, and pthread_setcancelstate, pthread_setcanceltype,
 * pthread_testcancel and glibc's own cancellation points work as they
 * are. Acting on a request unwinds the stack (cleanup handlers, C++
 * destructors) to g_entry's buffer, as pthread_exit does, and the joiner
 * gets PTHREAD_CANCELED.
 *
 * What glibc cannot do alone is reach a goroutine that waits: glibc
 * signals the thread, and a goroutine's tid is fake. So after glibc's
 * pthread_cancel, gcancel (core/sigthread.c) ends the target's cancellable
 * wait (sleeps, sem_wait, condvar and join waits, fd waits; each acts on
 * a request that is due when it begins, too), interrupts a raw
 * cancellable system call (SYS_CANCEL), and hands glibc's SIGCANCEL to a
 * goroutine glibc meant to cancel asynchronously: inside one of glibc's
 * own cancellable calls (run under entersyscall) or of type
 * PTHREAD_CANCEL_ASYNCHRONOUS. The main goroutine is not cancelled: its
 * unwind buffer is glibc's, and the unwind would end its M.
 */
#include <errno.h>
#include <pthread.h>
#include "shim.h"

void shim_testcancel(void)
{
	/* If it acts, it unwinds to g_entry, whose retval says
	 * PTHREAD_CANCELED. */
	if (on_goroutine() && g_cancel_due(getg()))
		real.pthread_testcancel();
}

GOSHIM_EXPORT int pthread_cancel(pthread_t t)
{
	struct g *gp = shim_thread(t);
	int err = real.pthread_cancel(t);

	/* glibc says ESRCH when its signal found no thread by the fake
	 * tid: the request is marked all the same, and gcancel delivers. */
	if ((err == 0 || err == ESRCH) && gp && gp != getg()) {
		sigroute_adopt_sigcancel();
		gcancel(gp);
		err = 0;
	}
	return err;
}

GOSHIM_EXPORT void pthread_testcancel(void)
{
	if (shim_active())
		shim_testcancel();
	else
		real.pthread_testcancel();
}
