/*
 * barrier.c: barriers whose waiters park.
 *
 * A round fills under a spin word held for a few instructions; its last
 * arrival bumps the round number, which the others sleep on (sema_wait:
 * a sleeper that finds the number moved never sleeps, so no wakeup is
 * lost), wakes them all, and steps aside for a higher real-time one it
 * woke (rt_yield). The threads still inside wait() are counted, and
 * destroy waits them out as glibc does: a waiter of the last round may
 * not have read the round number yet when the program destroys the
 * barrier.
 */
#include <limits.h>
#include "barrier.h"
#include "runtime.h"
#include "runtime2.h"

void barrier_init(struct barrier *b, uint32_t count)
{
	*b = (struct barrier){ .count = count };
}

bool barrier_wait(struct barrier *b)
{
	bool serial = false;

	atomic_fetch_add(&b->inside, 1);
	spin_lock(&b->lock);
	uint32_t round = atomic_load(&b->round);
	if (++b->arrived == b->count) {
		b->arrived = 0;
		atomic_store(&b->round, round + 1);
		spin_unlock(&b->lock);
		sema_wake(&b->round, INT_MAX);
		rt_yield();
		serial = true;
	} else {
		spin_unlock(&b->lock);
		while (atomic_load(&b->round) == round)
			sema_wait(&b->round, round, -1, "barrier");
	}
	if (atomic_fetch_sub(&b->inside, 1) == 1)
		sema_wake(&b->inside, INT_MAX);
	return serial;
}

bool barrier_destroy(struct barrier *b)
{
	uint32_t in;

	spin_lock(&b->lock);
	bool busy = b->arrived != 0;
	spin_unlock(&b->lock);
	if (busy)
		return false;
	/* Waiters of the last round may still be on their way out. */
	while ((in = atomic_load(&b->inside)) != 0)
		sema_wait(&b->inside, in, -1, "barrier destroy");
	return true;
}
