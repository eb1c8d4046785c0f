/*
 * semaphore.c: POSIX counting semaphores on Go's runtime semaphore.
 *
 * The value is Go's runtime semaphore (sema_acquire): a waiter takes a
 * unit or sleeps on the value's address; a thread the runtime did not
 * create sleeps on its own futex word (sema.c), in the same queue.
 *
 * A post must be async-signal-safe (POSIX's sem_post): a signal handler
 * may post while the code it interrupted, on this very thread, holds the
 * runtime's locks or is half-way through a run queue. So semaphore_up
 * adds its unit with a compare-and-swap (which also refuses to pass
 * SEM_VALUE_MAX: EOVERFLOW), and then, if anyone sleeps there, only a
 * goroutine outside any handler of the program's runs the wait queue
 * itself (sema_release_added). A handler, or a thread goshim does not
 * run, marks the queue for sysmon (sema_release_async), which it wakes
 * with a futex call.
 * The unit then goes straight to the longest sleeper (a handoff; real-time
 * sleepers first, by priority), run by sysmon or by the next trydown,
 * which does that first: a poster that loops back to wait would otherwise
 * take its own unit again before the sleeper runs (it runs only when a P
 * is free), and the sleeper could starve, under GOMAXPROCS=1 for good. A
 * sleeper whose deadline fires takes nothing; its unit goes to the next
 * one, or stays in the value.
 */
#include <errno.h>
#include <limits.h>
#include "runtime.h"
#include "runtime2.h"
#include "semaphore.h"

bool semaphore_trydown(_Atomic uint32_t *value)
{
	sema_run_async(); /* handoffs first (see the top of the file) */
	uint32_t v = atomic_load_explicit(value, memory_order_relaxed);

	while (v > 0)
		if (atomic_compare_exchange_weak_explicit(
			    value, &v, v - 1, memory_order_acquire,
			    memory_order_relaxed))
			return true;
	return false;
}

int semaphore_up(_Atomic uint32_t *value)
{
	uint32_t v = atomic_load_explicit(value, memory_order_relaxed);

	do {
		if (v == SEM_VALUE_MAX)
			return EOVERFLOW;
	} while (!atomic_compare_exchange_weak(value, &v, v + 1));
	/* A goroutine outside any handler holds no runtime lock: it hands
	 * the unit over itself, without sysmon's round trip (a futex wake
	 * and a switch to sysmon's thread on every contended post). */
	if (on_goroutine() && getg()->in_sighandler == 0)
		sema_release_added(value);
	else
		sema_release_async(value);
	return 0;
}

int semaphore_down(_Atomic uint32_t *value, int64_t deadline, bool restart)
{
	if (deadline >= 0 && nanotime() >= deadline)
		return ETIMEDOUT;
	intr_begin_cancel();
	int err = sema_acquire(value, false, deadline, "semaphore");
	int intr = intr_end(restart);
	return intr ? intr : err;
}
