/*
 * checkdead.c: "all goroutines are asleep - deadlock!", as Go says it.
 *
 * When the last M goes idle with no timer pending and nothing runnable,
 * no goroutine can ever run again — unless something outside the
 * scheduler wakes one: a thread goshim did not create (glibc's helper
 * threads, raw clone) may still signal a condvar, and a signal handler of
 * the program's may post a semaphore (a daemon waiting for SIGTERM). So
 * the verdict needs every OS thread of the process to be one of the
 * runtime's own and no handler the program installed. Then the
 * process ends with Go's message, the goroutines with what each waits on
 * and where (traceback.c), and Go's exit status 2, instead of hanging silently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "debug.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "timer.h"

static int process_threads(void)
{
	int n = proc_status_get("Threads:");

	return n < 0 ? -1 : n;
}

/* Called with sched.lock held by an M about to sleep with no deadline,
 * or about to exit (exiting: its thread still shows in /proc). */
void checkdead_exiting(int exiting)
{
	if (sched.nmidle + sched.nmidlelocked != sched.mcount)
		return; /* some M still runs, or is being started */
	/* timers_idle after timers_next: a timer that left its heap was
	 * counted before, and stays counted until its goroutine is queued. */
	if (timers_next() >= 0 || !timers_idle() ||
	    atomic_load(&sched.runqsize) > 0 || !sema_async_idle() ||
	    sigroute_handlers())
		return;
	for (int32_t i = 0; i < gomaxprocs; i++)
		if (!runqempty(allp[i]))
			return;
	if (live_none())
		return;
	/* A thread goshim did not create could still wake someone. */
	if (process_threads() !=
	    sched.mcount + sched.nruntime_threads + exiting)
		return;
	print("fatal error: all goroutines are asleep - deadlock!\n");
	goroutines_dump(NULL);
	_exit(2);
}

void checkdead(void)
{
	checkdead_exiting(0);
}
