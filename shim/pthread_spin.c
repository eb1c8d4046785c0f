/*
 * pthread_spin.c: a spinlock that yields instead of spinning on.
 *
 * glibc's pthread_spin_lock spins on the CPU until the word is free. A
 * goroutine that does that keeps its P, so a holder waiting for a P, or
 * sharing the spinner's M, may never run to release it. Here the waiter
 * spins briefly (the holder may be running on another M and about to let
 * go), then yields like sched_yield: a goroutine goes to the back of the
 * global run queue, a thread goshim did not create yields its CPU.
 *
 * The word is glibc's own, with glibc's encoding, so the other spinlock
 * functions stay glibc's and a process-shared spinlock still works with a
 * process that uses glibc's: on x86 (glibc's assembly) unlocked is 1 and a
 * holder or waiter makes it 0 or less, elsewhere (glibc's C) unlocked is 0
 * and locked 1.
 */
#include <pthread.h>
#include <sched.h>
#include "shim.h"

#if defined(__x86_64__) || defined(__i386__)
#define SPIN_HELD 0
static bool spin_free(int v) { return v > 0; }
#else
#define SPIN_HELD 1
static bool spin_free(int v) { return v == 0; }
#endif

/* Pauses between yields: a few microseconds at most. */
#define SPIN_TRIES 100

GOSHIM_EXPORT int pthread_spin_lock(pthread_spinlock_t *lock)
{
	_Atomic int *l = (_Atomic int *)lock;

	for (;;) {
		int v = atomic_load_explicit(l, memory_order_relaxed);
		for (int i = 0; !spin_free(v); i++) {
			if (i == SPIN_TRIES) {
				sched_yield();
				i = 0;
			}
			cpu_relax();
			v = atomic_load_explicit(l, memory_order_relaxed);
		}
		if (atomic_compare_exchange_weak_explicit(
			    l, &v, SPIN_HELD, memory_order_acquire,
			    memory_order_relaxed))
			return 0;
	}
}
