/*
 * lock.h: the runtime's own locks and one-shot notes.
 *
 * Runtime code cannot use pthread mutexes (goshim interposes them, and they
 * would park). rlock is a futex mutex for short critical sections between
 * OS threads; spinlock is for a few instructions; note is Go's one-shot
 * sleep/wakeup used to park an idle M.
 */
#ifndef GOSHIM_LOCK_H
#define GOSHIM_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "../arch/arch.h"

struct rlock {
	_Atomic uint32_t key; /* 0 unlocked, 1 locked, 2 locked with waiters */
};

struct spinlock {
	_Atomic uint32_t v;
};

struct note {
	_Atomic uint32_t key; /* 0 clear, 1 woken */
};

void rlock_lock(struct rlock *l);
void rlock_unlock(struct rlock *l);

static inline void spin_lock(struct spinlock *l)
{
	for (;;) {
		if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
			return;
		while (atomic_load_explicit(&l->v, memory_order_relaxed))
			arch_cpu_relax();
	}
}
static inline bool spin_trylock(struct spinlock *l)
{
	return !atomic_exchange_explicit(&l->v, 1, memory_order_acquire);
}
static inline void spin_unlock(struct spinlock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* A pause in a spin loop: the CPU's hint that it waits on another. */
static inline void cpu_relax(void)
{
	arch_cpu_relax();
}

void note_clear(struct note *n);
void note_sleep(struct note *n);
/* Sleep until woken or ns nanoseconds pass; true if woken. */
bool note_sleep_ns(struct note *n, int64_t ns);
void note_wakeup(struct note *n);

#endif
