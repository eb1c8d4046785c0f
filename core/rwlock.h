/*
 * rwlock.h: reader-writer locks whose waiters park (see rwlock.c).
 *
 * struct rwlock is the algorithm's words, placed by the caller inside the
 * program's object (shim/pthread_rwlock.c: the first 24 bytes of a
 * pthread_rwlock_t); all zero is an unlocked lock. kind is glibc's
 * (PTHREAD_RWLOCK_PREFER_READER_NP, _PREFER_WRITER_NP,
 * _PREFER_WRITER_NONRECURSIVE_NP), kept by the caller and passed to every
 * call that may decide whom to let in. Deadlines: monotonic ns, or -1.
 */
#ifndef GOSHIM_RWLOCK_H
#define GOSHIM_RWLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "lock.h"

struct rwlock {
	_Atomic uint32_t state;
	_Atomic uint32_t rseq; /* readers sleep here */
	_Atomic uint32_t wseq; /* writers sleep here */
	uint32_t nr, nw;       /* registered waiters, under lock */
	struct spinlock lock;
};

/* Reading: a try (0, EAGAIN past the reader limit, EBUSY), and after an
 * EBUSY the wait (0, EAGAIN, ETIMEDOUT). */
int rwlock_tryrdlock(struct rwlock *rw, int kind);
int rwlock_rdlock_wait(struct rwlock *rw, int kind, int64_t deadline);
/* Writing: a try, and after a false one the wait (0, ETIMEDOUT). */
bool rwlock_trywrlock(struct rwlock *rw);
int rwlock_wrlock_wait(struct rwlock *rw, int kind, int64_t deadline);
/* Whether someone holds it for writing (the caller knows whether it is
 * itself). */
bool rwlock_wrheld(const struct rwlock *rw);
void rwlock_wrunlock(struct rwlock *rw, int kind);
/* A read unlock of a lock nobody holds for reading changes nothing. */
void rwlock_rdunlock(struct rwlock *rw, int kind);

#endif
