/*
 * pthread_rwlock.c: reader-writer locks whose waiters park.
 *
 * The state lives in the program's pthread_rwlock_t (56 bytes), zero being
 * an unlocked lock, so PTHREAD_RWLOCK_INITIALIZER works. Three fields keep
 * glibc's offsets and meaning: __cur_writer (the TCB tid of the thread that
 * holds it for writing: EDEADLK, and unlock tells a write unlock from a read
 * unlock by it, as glibc does), __shared (nonzero: process-shared, glibc's
 * lock, whose waits block the OS thread but not the P: a try, then the
 * wait under entersyscall; glibc's owner is
 * the goroutine's own TCB tid, so nothing ties it to the M) and __flags
 * (the kind, which PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP sets).
 *
 * One word, state, says who holds the lock and whether anyone waits:
 * WRITER, a reader count (glibc's limit: EAGAIN past 2^28 - 1 readers), and
 * WWAIT / RWAIT, set while writers / readers are registered as waiting.
 * Uncontended lock and unlock are one CAS on it. Everything else runs under
 * a spin word in the object (lock) held for a few instructions, never
 * across a park: the waiter counts nw and nr, and two sequence words that
 * waiters sleep on (sema_wait), writers on wseq, readers on rseq.
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
 * slept.
 *
 * Kinds, as glibc: PREFER_READER (default) lets readers in while writers
 * wait and wakes waiting readers before writers; PREFER_WRITER differs only
 * in waking writers first; PREFER_WRITER_NONRECURSIVE also keeps new
 * readers out while a writer waits (a reader that takes it recursively then
 * deadlocks, as with glibc).
 *
 * Errors as glibc 2.36: EINVAL for a bad clock or tv_nsec (checked first,
 * even when the lock is free), EDEADLK for a lock or timed lock by the
 * thread that holds it for writing (the try forms return EBUSY then),
 * ETIMEDOUT only once the deadline has passed, EAGAIN on reader overflow.
 * Unlock and destroy return 0 always; glibc's unlock of a lock the caller
 * does not hold corrupts the reader count, here it changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "../core/deadline.h"
#include "../core/tls.h"
#include "shim.h"

#define RW_WRITER 1u
#define RW_WWAIT 2u
#define RW_RWAIT 4u
#define RW_READER 8u
#define RW_MAX_READERS ((1u << 28) - 1)

struct grwlock {
	_Atomic uint32_t state;
	_Atomic uint32_t rseq; /* readers sleep here */
	_Atomic uint32_t wseq; /* writers sleep here */
	uint32_t nr, nw;       /* registered waiters, under lock */
	struct spinlock lock;
	_Atomic int writer;    /* glibc's __cur_writer */
	int shared;	       /* glibc's __shared */
	unsigned char pad[16];
	unsigned kind;	       /* glibc's __flags */
};

_Static_assert(sizeof(struct grwlock) <= sizeof(pthread_rwlock_t),
	       "rwlock state must fit in pthread_rwlock_t");
_Static_assert(offsetof(struct grwlock, writer) ==
		       offsetof(pthread_rwlock_t, __data.__cur_writer) &&
	       offsetof(struct grwlock, shared) ==
		       offsetof(pthread_rwlock_t, __data.__shared) &&
	       offsetof(struct grwlock, kind) ==
		       offsetof(pthread_rwlock_t, __data.__flags),
	       "glibc's fields keep their offsets");

enum wake { WAKE_NONE, WAKE_READERS, WAKE_WRITER };

/* A lock goshim runs, or NULL when it is glibc's. */
static struct grwlock *ours(pthread_rwlock_t *l)
{
	struct grwlock *rw = (struct grwlock *)l;
	return shim_active() && rw->shared == 0 ? rw : NULL;
}

static int self_tid(void)
{
	return tls_tid(arch_get_tp());
}

static uint32_t readers(uint32_t s)
{
	return s / RW_READER;
}

static bool can_read(const struct grwlock *rw, uint32_t s)
{
	return !(s & RW_WRITER) &&
	       (!(s & RW_WWAIT) ||
		rw->kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
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
static int tryrd(struct grwlock *rw)
{
	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);

	while (can_read(rw, s)) {
		if (readers(s) == RW_MAX_READERS)
			return EAGAIN;
		if (atomic_compare_exchange_weak_explicit(
			    &rw->state, &s, s + RW_READER,
			    memory_order_acquire, memory_order_relaxed))
			return 0;
	}
	return EBUSY;
}

static bool trywr(struct grwlock *rw)
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
static enum wake decide(struct grwlock *rw)
{
	uint32_t s = atomic_load(&rw->state);

	if (s & RW_WRITER)
		return WAKE_NONE; /* its unlock decides */
	if (rw->nw && readers(s) == 0 &&
	    (rw->nr == 0 || rw->kind != PTHREAD_RWLOCK_PREFER_READER_NP)) {
		atomic_fetch_add(&rw->wseq, 1);
		return WAKE_WRITER;
	}
	if (rw->nr && (rw->nw == 0 || rw->kind !=
			    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)) {
		rw->nr = 0;
		atomic_fetch_and(&rw->state, ~RW_RWAIT);
		atomic_fetch_add(&rw->rseq, 1);
		return WAKE_READERS;
	}
	return WAKE_NONE;
}

static void unlock_and_wake(struct grwlock *rw)
{
	enum wake w = decide(rw);

	spin_unlock(&rw->lock);
	if (w == WAKE_WRITER)
		sema_wake(&rw->wseq, 1);
	else if (w == WAKE_READERS)
		sema_wake(&rw->rseq, INT_MAX);
	rt_yield();
}

/* Under lock: take a read lock (0, EAGAIN), give up (ETIMEDOUT), or
 * register to wait for one (EBUSY). */
static int rd_or_register(struct grwlock *rw, int64_t deadline)
{
	uint32_t s = atomic_load(&rw->state);

	for (;;) {
		if (can_read(rw, s)) {
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

static int rdlock_slow(struct grwlock *rw, int64_t deadline)
{
	for (;;) {
		spin_lock(&rw->lock);
		int err = rd_or_register(rw, deadline);
		if (err != EBUSY) {
			unlock_and_wake(rw);
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
			err = rd_or_register(rw, deadline);
			unlock_and_wake(rw);
			return err;
		}
		/* Woken, or rseq moved: the waker unregistered us. */
		err = tryrd(rw);
		if (err != EBUSY)
			return err;
	}
}

static int wrlock_slow(struct grwlock *rw, int64_t deadline)
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
	unlock_and_wake(rw);
	return err;
}

static int rdlock(struct grwlock *rw, clockid_t clk,
		  const struct timespec *abstime)
{
	if (atomic_load_explicit(&rw->writer, memory_order_relaxed) ==
	    self_tid())
		return EDEADLK;
	int err = tryrd(rw);
	if (err != EBUSY)
		return err;
	return rdlock_slow(rw, deadline_at(clk, abstime));
}

static int wrlock(struct grwlock *rw, clockid_t clk,
		  const struct timespec *abstime)
{
	int tid = self_tid();

	if (atomic_load_explicit(&rw->writer, memory_order_relaxed) == tid)
		return EDEADLK;
	if (!trywr(rw)) {
		int err = wrlock_slow(rw, deadline_at(clk, abstime));
		if (err)
			return err;
	}
	atomic_store_explicit(&rw->writer, tid, memory_order_relaxed);
	return 0;
}

/* glibc checks a deadline before anything else, even a free lock. */
static bool bad_deadline(clockid_t clk, const struct timespec *abstime)
{
	return abstime && abstime_check(clk, abstime);
}

/* glibc's lock (process-shared): a try first, then the wait, which may
 * sleep in the kernel, under entersyscall. abstime NULL: no deadline;
 * clocked: the clock form on clk, else the timed one. */
static int real_rdlock(pthread_rwlock_t *l, bool clocked, clockid_t clk,
		       const struct timespec *abstime)
{
	int err = real.pthread_rwlock_tryrdlock(l);

	if (err != EBUSY)
		return err;
	if (abstime == NULL)
		return IN_SYSCALL(real.pthread_rwlock_rdlock(l));
	if (clocked)
		return IN_SYSCALL(
			real.pthread_rwlock_clockrdlock(l, clk, abstime));
	return IN_SYSCALL(real.pthread_rwlock_timedrdlock(l, abstime));
}

static int real_wrlock(pthread_rwlock_t *l, bool clocked, clockid_t clk,
		       const struct timespec *abstime)
{
	int err = real.pthread_rwlock_trywrlock(l);

	if (err != EBUSY)
		return err;
	if (abstime == NULL)
		return IN_SYSCALL(real.pthread_rwlock_wrlock(l));
	if (clocked)
		return IN_SYSCALL(
			real.pthread_rwlock_clockwrlock(l, clk, abstime));
	return IN_SYSCALL(real.pthread_rwlock_timedwrlock(l, abstime));
}

GOSHIM_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l,
				      const pthread_rwlockattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	int kind = PTHREAD_RWLOCK_DEFAULT_NP;

	if (attr) {
		pthread_rwlockattr_getpshared(attr, &pshared);
		pthread_rwlockattr_getkind_np(attr, &kind);
	}
	if (!shim_active() || pshared == PTHREAD_PROCESS_SHARED)
		return real.pthread_rwlock_init(l, attr);
	memset(l, 0, sizeof *l);
	((struct grwlock *)l)->kind = kind;
	return 0;
}

GOSHIM_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	return ours(l) ? 0 : real.pthread_rwlock_destroy(l);
}

GOSHIM_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	struct grwlock *rw = ours(l);
	if (rw == NULL)
		return real_rdlock(l, false, 0, NULL);
	return rdlock(rw, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	struct grwlock *rw = ours(l);
	if (rw == NULL)
		return real.pthread_rwlock_tryrdlock(l);
	return tryrd(rw);
}

GOSHIM_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l,
					     const struct timespec *abstime)
{
	struct grwlock *rw = ours(l);
	if (bad_deadline(CLOCK_REALTIME, abstime))
		return EINVAL;
	if (rw == NULL)
		return real_rdlock(l, false, 0, abstime);
	return rdlock(rw, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l,
					     clockid_t clk,
					     const struct timespec *abstime)
{
	struct grwlock *rw = ours(l);
	if (bad_deadline(clk, abstime))
		return EINVAL;
	if (rw == NULL)
		return real_rdlock(l, true, clk, abstime);
	return rdlock(rw, clk, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	struct grwlock *rw = ours(l);
	if (rw == NULL)
		return real_wrlock(l, false, 0, NULL);
	return wrlock(rw, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	struct grwlock *rw = ours(l);
	if (rw == NULL)
		return real.pthread_rwlock_trywrlock(l);
	if (!trywr(rw))
		return EBUSY;
	atomic_store_explicit(&rw->writer, self_tid(), memory_order_relaxed);
	return 0;
}

GOSHIM_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l,
					     const struct timespec *abstime)
{
	struct grwlock *rw = ours(l);
	if (bad_deadline(CLOCK_REALTIME, abstime))
		return EINVAL;
	if (rw == NULL)
		return real_wrlock(l, false, 0, abstime);
	return wrlock(rw, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l,
					     clockid_t clk,
					     const struct timespec *abstime)
{
	struct grwlock *rw = ours(l);
	if (bad_deadline(clk, abstime))
		return EINVAL;
	if (rw == NULL)
		return real_wrlock(l, true, clk, abstime);
	return wrlock(rw, clk, abstime);
}

GOSHIM_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	struct grwlock *rw = ours(l);
	if (rw == NULL)
		return real.pthread_rwlock_unlock(l);

	uint32_t s = atomic_load_explicit(&rw->state, memory_order_relaxed);
	if ((s & RW_WRITER) &&
	    atomic_load_explicit(&rw->writer, memory_order_relaxed) ==
		    self_tid()) {
		atomic_store_explicit(&rw->writer, 0, memory_order_relaxed);
		s = RW_WRITER;
		if (atomic_compare_exchange_strong_explicit(
			    &rw->state, &s, 0, memory_order_release,
			    memory_order_relaxed))
			return 0;
		spin_lock(&rw->lock);
		atomic_fetch_and_explicit(&rw->state, ~RW_WRITER,
					  memory_order_release);
		unlock_and_wake(rw);
		return 0;
	}
	do {
		if (readers(s) == 0)
			return 0; /* not held for reading */
	} while (!atomic_compare_exchange_weak_explicit(
		&rw->state, &s, s - RW_READER, memory_order_release,
		memory_order_relaxed));
	/* The last reader lets a waiting writer in. */
	if (readers(s) == 1 && (s & RW_WWAIT)) {
		spin_lock(&rw->lock);
		unlock_and_wake(rw);
	}
	return 0;
}
