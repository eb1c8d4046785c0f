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
#include <string.h>
#include "../arch/arch.h"

struct rlock {
	_Atomic uint32_t key; /* 0 unlocked, 1 locked, 2 locked with waiters */
};

struct spinlock {
	_Atomic uint32_t v;
};

struct note {
	/* bit 0: woken; above it, a count of kicks (note_kick) */
	_Atomic uint32_t key;
};

void rlock_lock(struct rlock *l);
void rlock_unlock(struct rlock *l);

void spin_lock_wait(struct spinlock *l);
static inline void spin_lock(struct spinlock *l)
{
	if (__builtin_expect(!atomic_exchange_explicit(&l->v, 1,
							memory_order_acquire),
			     1))
		return;
	spin_lock_wait(l);
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

/*
 * A seqcount over a small record that signal handlers read (the program's
 * dispositions): a reader copies it out and copies again if a writer was
 * in it meanwhile, so it never waits on a lock its own thread may hold.
 * Writers are serialized by the caller, and block the signals whose
 * handlers read the record while they write it.
 */
struct seqcount {
	_Atomic uint32_t seq;
};

static inline void seq_read(struct seqcount *sc, void *dst, const void *src,
			    size_t n)
{
	for (;;) {
		uint32_t s = atomic_load_explicit(&sc->seq,
						  memory_order_acquire);
		if (s & 1) {
			cpu_relax();
			continue;
		}
		memcpy(dst, src, n);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&sc->seq, memory_order_relaxed) == s)
			return;
	}
}

static inline void seq_write(struct seqcount *sc, void *dst, const void *src,
			     size_t n)
{
	atomic_fetch_add_explicit(&sc->seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(dst, src, n);
	atomic_fetch_add_explicit(&sc->seq, 1, memory_order_release);
}

void note_clear(struct note *n);
void note_sleep(struct note *n);
/* Sleep until woken or ns nanoseconds pass; true if woken. */
bool note_sleep_ns(struct note *n, int64_t ns);
void note_wakeup(struct note *n);
/* Wake the sleeper without waking the note: note_sleep sleeps on, and
 * note_kicks says a kick came (an idle M's cue to read its mask again). */
void note_kick(struct note *n);
static inline uint32_t note_kicks(struct note *n)
{
	return atomic_load_explicit(&n->key, memory_order_acquire) >> 1;
}
static inline bool note_woken(struct note *n)
{
	return atomic_load_explicit(&n->key, memory_order_acquire) & 1;
}
/* Sleep until woken (true), the deadline passes (monotonic ns, -1 none:
 * false), or a kick comes after `seen` kicks (true, still not woken). */
bool note_sleep_until_kick(struct note *n, int64_t deadline, uint32_t seen);

#endif
