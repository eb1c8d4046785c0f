/*
 * rwlock.c: reader-writer locks whose waiters park.
 *
 * glibc's rwlock sleeps on futexes, which would block the M and every
 * goroutine queued behind it; here a waiter parks on a sequence word
 * (sema_wait), and a thread the runtime did not create sleeps on its own
 * futex word (sema.c), on the same state.
 *
 * One word, state, says who holds the lock and whether anyone waits:
 * WRITER, a reader count (glibc's limit: EAGAIN past 2^28 - 1 readers), and
 * WWAIT / RWAIT, set while writers / readers are registered as waiting.
 * Uncontended lock and unlock are one CAS on it. Everything else runs under
 * a spin word (lock) held for a few instructions, never across a park: the
 * waiter counts nw and nr, and two sequence words that waiters sleep on,
 * writers on wseq, readers on rseq.
 *
 * No lost wakeups. A waiter sets its wait bit with a CAS that also checks
 * the lock is still unavailable, so any release after that check sees the
 * bit, leaves the fast path and takes lock; the waiter reads its sequence
 * word under lock before releasing it, and a waker bumps the word under
 * lock before waking, so the waiter either sees the new value (sema_wait
 * returns at once) or is asleep on it when the wake comes. Who to wake is
 * decided in one place (decide), from the state as it is, every time the
 * state may have let someone in: a writer's unlock, the last reader's
 * unlock while writers wait, and every exit from a slow path (a waiter that
 * leaves changes the counts; a writer that gives up may unblock readers).
 * A woken waiter tries again and waits again only if someone holds the
 * lock, whose release decides again; so extra wakeups cost time, never
 * correctness. Writers are woken one at a time; sema_wake skips a waiter
 * whose deadline already fired, and one that times out unseen still runs
 * decide on its way out, so a timeout never swallows a wakeup. Readers are
 * woken all at once: the waker also unregisters them (nr = 0, bump rseq),
 * so a woken reader retries the lock-free path without taking lock; a
 * reader that times out unregisters only if rseq has not moved since it
 * slept. A timed wait never times out while the lock can be taken (POSIX):
 * past its deadline it tries once more before it gives up. Real-time
 * waiters are woken in priority order (sema.c), and an unlock that wakes a
 * higher one steps aside for it (rt_yield).
 *
 * Kinds, as glibc: PREFER_READER (default) lets readers in while writers
 * wait and wakes waiting readers before writers; PREFER_WRITER differs only
 * in waking writers first; PREFER_WRITER_NONRECURSIVE also keeps new
 * readers out while a writer waits (a reader that takes it recursively then
 * deadlocks, as with glibc).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include "runtime.h"
#include "runtime2.h"
#include "rwlock.h"

#define RW_WRITER 1u
#define RW_WWAIT 2u
#define RW_RWAIT 4u
#define RW_READER 8u
#define RW_MAX_READERS ((1u << 28) - 1)

enum wake { WAKE_NONE, WAKE_READERS, WAKE_WRITER };

static uint32_t readers(uint32_t s)
{
	return s / RW_READER;
}

static bool can_read(int kind, uint32_t s)
{
	return !(s & RW_WRITER) &&
	       (!(s & RW_WWAIT) ||
		kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
}

static bool can_write(uint32_t s)
{
	return !(s & RW_WRITER) && readers(s) == 0;
}

static bool expired(int64_t deadline)
{
	return deadline >= 0 && nanotime() >= deadline;
}

/* 0, EAGAIN (too many readers) or EBUSY (not now). */
int rwlock_tryrdlock(struct rwlock *rw, int kind)
{
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);

	while (can_read(kind, s)) {
		if (readers(s) == RW_MAX_READERS)
			return EAGAIN;
		if (atomic_compare_exchange_weak_explicit(
			    &rw->state, &s, s + RW_READER,
			    memory_order_acquire, memory_order_relaxed))
			return 0;
	}
	return EBUSY;
}

bool rwlock_trywrlock(struct rwlock *rw)
{
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);

	while (can_write(s))
		if (atomic_compare_exchange_weak_explicit(
			    &rw->state, &s, s | RW_WRITER,
			    memory_order_acquire, memory_order_relaxed))
			return true;
	return false;
}

/* Under lock: whom the lock lets in now. Unregisters the readers it picks
 * and bumps the sequence word of those it picks. */
static enum wake decide(struct rwlock *rw, int kind)
{
	uint32_t s = atomic_load(&rw->state);

	if (s & RW_WRITER)
		return WAKE_NONE; /* its unlock decides */
	if (rw->nw && readers(s) == 0 &&
	    (rw->nr == 0 || kind != PTHREAD_RWLOCK_PREFER_READER_NP)) {
		atomic_fetch_add(&rw->wseq, 1);
		return WAKE_WRITER;
	}
	if (rw->nr && (rw->nw == 0 || kind !=
			    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)) {
		rw->nr = 0;
		atomic_fetch_and(&rw->state, ~RW_RWAIT);
		atomic_fetch_add(&rw->rseq, 1);
		return WAKE_READERS;
	}
	return WAKE_NONE;
}

static void unlock_and_wake(struct rwlock *rw, int kind)
{
	enum wake w = decide(rw, kind);

	spin_unlock(&rw->lock);
	if (w == WAKE_WRITER)
		sema_wake(&rw->wseq, 1);
	else if (w == WAKE_READERS)
		sema_wake(&rw->rseq, INT_MAX);
	rt_yield();
}

/* Under lock: take a read lock (0, EAGAIN), give up (ETIMEDOUT), or
 * register to wait for one (EBUSY). */
static int rd_or_register(struct rwlock *rw, int kind, int64_t deadline)
{
	uint32_t s = atomic_load(&rw->state);

	for (;;) {
		if (can_read(kind, s)) {
			if (readers(s) == RW_MAX_READERS)
				return EAGAIN;
			if (atomic_compare_exchange_weak(&rw->state, &s,
							 s + RW_READER))
				return 0;
		} else if (expired(deadline)) {
			return ETIMEDOUT;
		} else if ((s & RW_RWAIT) ||
			   atomic_compare_exchange_weak(&rw->state, &s,
							s | RW_RWAIT)) {
			rw->nr++;
			return EBUSY;
		}
	}
}

int rwlock_rdlock_wait(struct rwlock *rw, int kind, int64_t deadline)
{
	for (;;) {
		spin_lock(&rw->lock);
		int err = rd_or_register(rw, kind, deadline);
		if (err != EBUSY) {
			unlock_and_wake(rw, kind);
			return err;
		}
		uint32_t seq = atomic_load(&rw->rseq);
		spin_unlock(&rw->lock);
		if (sema_wait(&rw->rseq, seq, deadline, "rwlock read") ==
		    ETIMEDOUT) {
			spin_lock(&rw->lock);
			if (atomic_load(&rw->rseq) == seq && --rw->nr == 0)
				atomic_fetch_and(&rw->state, ~RW_RWAIT);
			/* Never a timeout while the lock can be taken (POSIX):
			 * it may have come free while a signal handler ran
			 * past the deadline. Past it, this never registers. */
			err = rd_or_register(rw, kind, deadline);
			unlock_and_wake(rw, kind);
			return err;
		}
		/* Woken, or rseq moved: the waker unregistered us. */
		err = rwlock_tryrdlock(rw, kind);
		if (err != EBUSY)
			return err;
	}
}

int rwlock_wrlock_wait(struct rwlock *rw, int kind, int64_t deadline)
{
	int err = 0;

	spin_lock(&rw->lock);
	uint32_t s = atomic_load(&rw->state);
	for (;;) {
		if (can_write(s)) {
			if (atomic_compare_exchange_weak(&rw->state, &s,
							 s | RW_WRITER))
				break;
			continue;
		}
		if (expired(deadline)) {
			err = ETIMEDOUT;
			break;
		}
		if (!(s & RW_WWAIT) &&
		    !atomic_compare_exchange_weak(&rw->state, &s,
						  s | RW_WWAIT))
			continue;
		rw->nw++;
		uint32_t seq = atomic_load(&rw->wseq);
		spin_unlock(&rw->lock);
		err = sema_wait(&rw->wseq, seq, deadline, "rwlock write");
		spin_lock(&rw->lock);
		if (--rw->nw == 0)
			atomic_fetch_and(&rw->state, ~RW_WWAIT);
		/* Timed out or not, the loop takes the lock if it can before
		 * it looks at the deadline (POSIX: never a timeout while the
		 * lock can be taken). */
		err = 0;
		s = atomic_load(&rw->state);
	}
	unlock_and_wake(rw, kind);
	return err;
}

bool rwlock_wrheld(const struct rwlock *rw)
{
	return atomic_load_explicit(&rw->state, memory_order_relaxed) &
	       RW_WRITER;
}

void rwlock_wrunlock(struct rwlock *rw, int kind)
{
	uint32_t s = RW_WRITER;

	if (atomic_compare_exchange_strong_explicit(&rw->state, &s, 0,
						    memory_order_release,
						    memory_order_relaxed))
		return;
	spin_lock(&rw->lock);
	atomic_fetch_and_explicit(&rw->state, ~RW_WRITER,
				  memory_order_release);
	unlock_and_wake(rw, kind);
}

void rwlock_rdunlock(struct rwlock *rw, int kind)
{
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);

	do {
		if (readers(s) == 0)
			return; /* not held for reading */
	} while (!atomic_compare_exchange_weak_explicit(
		&rw->state, &s, s - RW_READER, memory_order_release,
		memory_order_relaxed));
	/* The last reader lets a waiting writer in. */
	if (readers(s) == 1 && (s & RW_WWAIT)) {
		spin_lock(&rw->lock);
		unlock_and_wake(rw, kind);
	}
}
