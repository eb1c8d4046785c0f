/*
 * lock.c: futex-based runtime mutex and notes (see lock.h).
 *
 * Waits go to the kernel directly: a runtime lock is held for a few hundred
 * nanoseconds, so blocking the whole M is the right cost, and the holder is
 * never parked (the runtime never parks while holding one).
 */
#include <errno.h>
#include <linux/futex.h>
#include "deadline.h"
#include "lock.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"

#define SPIN_TRIES 100
#define SPIN_WAIT_PAUSES 1000 /* ~20 us on a 2020s Xeon */
#define SPIN_WAIT_SLEEP_NS 20000

/*
 * A spinlock is held for a few instructions, but its holder can lose its
 * CPU to the kernel in the middle (a thread it has just woken preempts
 * it): a waiter that only spins then spins for the rest of a kernel time
 * slice. Measured in a create+join loop: up to 4 ms at a time, 7% of the
 * run, exiting goroutines waiting on their jlock while the joiner's M was
 * preempted in go_join. So after SPIN_WAIT_PAUSES pauses the waiter
 * sleeps a little: its CPU goes idle, and the kernel can run the holder
 * there.
 */
void spin_lock_wait(struct spinlock *l)
{
	const struct timespec nap = { 0, SPIN_WAIT_SLEEP_NS };

	for (int n = 0;;) {
		while (atomic_load_explicit(&l->v, memory_order_relaxed)) {
			if (++n < SPIN_WAIT_PAUSES) {
				arch_cpu_relax();
				continue;
			}
			n = 0;
			SYS2(SYS_nanosleep, &nap, NULL);
		}
		if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
			return;
	}
}

void rlock_lock(struct rlock *l)
{
	uint32_t c = 0;

	if (atomic_compare_exchange_strong_explicit(&l->key, &c, 1,
						    memory_order_acquire,
						    memory_order_relaxed))
		return;
	for (int i = 0; i < SPIN_TRIES; i++) {
		c = 0;
		if (atomic_load_explicit(&l->key, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(
			    &l->key, &c, 1, memory_order_acquire,
			    memory_order_relaxed))
			return;
		arch_cpu_relax();
	}
	/* Mark contended; whoever unlocks must wake. */
	while (atomic_exchange_explicit(&l->key, 2, memory_order_acquire) != 0)
		sys_futex(&l->key, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void rlock_unlock(struct rlock *l)
{
	if (atomic_exchange_explicit(&l->key, 0, memory_order_release) == 2)
		sys_futex(&l->key, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void note_clear(struct note *n)
{
	atomic_store_explicit(&n->key, 0, memory_order_relaxed);
}

void note_sleep(struct note *n)
{
	uint32_t v;

	/* A kick changes the word: wait on what was read. */
	while (!((v = atomic_load_explicit(&n->key, memory_order_acquire)) &
		 1))
		sys_futex(&n->key, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

bool note_sleep_ns(struct note *n, int64_t ns)
{
	int64_t end = nanotime() + ns;
	uint32_t v;

	while (!((v = atomic_load_explicit(&n->key, memory_order_acquire)) &
		 1)) {
		int64_t left = end - nanotime();
		if (left < 0)
			return false;
		struct timespec rel = ts_from_ns(left);
		sys_futex(&n->key, FUTEX_WAIT_PRIVATE, v, &rel, NULL, 0);
	}
	return true;
}

bool note_sleep_until_kick(struct note *n, int64_t deadline, uint32_t seen)
{
	uint32_t v;

	while (!((v = atomic_load_explicit(&n->key, memory_order_acquire)) &
		 1)) {
		if (v >> 1 != seen)
			return true;
		struct timespec rel, *tmo = NULL;
		if (deadline >= 0) {
			int64_t left = deadline - nanotime();
			if (left < 0)
				return false;
			rel = ts_from_ns(left);
			tmo = &rel;
		}
		sys_futex(&n->key, FUTEX_WAIT_PRIVATE, v, tmo, NULL, 0);
	}
	return true;
}

void note_wakeup(struct note *n)
{
	if (atomic_fetch_or_explicit(&n->key, 1, memory_order_release) & 1)
		return; /* already woken: a note is one-shot */
	sys_futex(&n->key, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void note_kick(struct note *n)
{
	atomic_fetch_add_explicit(&n->key, 2, memory_order_release);
	sys_futex(&n->key, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
