/*
 * pthread_once.c: pthread_once and C11 call_once.
 *
 * glibc's once waits on a futex, which would block the whole M while the
 * initialiser (maybe parked) runs on another goroutine. The state word is
 * the program's pthread_once_t: 0 not run (the static initialiser), 1
 * running, 2 done; waiters park on its address. If the initialiser is
 * cancelled or calls pthread_exit, the word goes back to 0 and a waiter
 * takes over, as POSIX asks. A running word also holds the fork
 * generation it started in (glibc's scheme): in the child of a fork the
 * initialiser's thread is gone, and the child runs it again.
 */
#include <limits.h>
#include <pthread.h>
#include <threads.h>
#include "shim.h"

enum { ONCE_NEW = 0, ONCE_RUNNING = 1, ONCE_DONE = 2 };

static void once_abandoned(_Atomic uint32_t **state)
{
	if (*state == NULL)
		return;
	atomic_store(*state, ONCE_NEW);
	sema_wake(*state, INT_MAX);
}

static void once_run(_Atomic uint32_t *state, void (*init)(void))
{
	for (;;) {
		uint32_t v = atomic_load_explicit(state, memory_order_acquire);
		if (v == ONCE_DONE)
			return;
		uint32_t running = ONCE_RUNNING |
				   atomic_load(&fork_generation) << 2;
		if (v != ONCE_NEW && v != running) {
			/* Started before a fork, by a thread that is gone. */
			atomic_compare_exchange_strong(state, &v, ONCE_NEW);
			continue;
		}
		if (v == ONCE_NEW) {
			if (!atomic_compare_exchange_strong(state, &v, running))
				continue;
			/* Runs if init unwinds out (pthread_exit, cancel). */
			_Atomic uint32_t *guard
				__attribute__((cleanup(once_abandoned))) = state;
			init();
			guard = NULL;
			atomic_store_explicit(state, ONCE_DONE,
					      memory_order_release);
			sema_wake(state, INT_MAX);
			return;
		}
		sema_wait(state, v, -1, "once");
	}
}

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
