/*
 * join.c: pthread_join, tryjoin, timed joins and detach.
 *
 * A joinable G stays whole (G, stack, TCB: its pthread_t) after it exits,
 * until joined. The joiner registers a waiter on the target under its jlock
 * and parks; the exiting G's g0 wakes it under the same lock, so the waiter
 * (on the joiner's stack) is never touched after the joiner has returned,
 * not even when a deadline and the exit race. Errors are glibc's: EDEADLK
 * for self and for two threads joining each other, EINVAL for a detached
 * target or a second joiner, EBUSY from tryjoin, ETIMEDOUT. A G already
 * joined or reaped waits in a free list (G_IDLE) until a new thread takes
 * it, and is never freed twice: its handle gets what glibc answers from the
 * descriptor it caches, EINVAL for a thread that was detached, else ESRCH
 * (EBUSY from tryjoin). A join that waits is a cancellation point: a
 * cancel ends it as a timeout would, the target stays joinable, and the
 * caller (shim/pthread_join.c) acts on it: ECANCELED.
 */
#include <errno.h>
#include "runtime.h"
#include "runtime2.h"
#include "waiter.h"

static void jlock_unlock(void *l)
{
	spin_unlock(l);
}

int go_join(struct g *gp, void **ret, bool try, int64_t deadline)
{
	struct g *me = getg();
	struct waiter w;

	if (me && me->is_g0)
		me = NULL;
	spin_lock(&gp->jlock);
	if (g_gone(gp)) {
		spin_unlock(&gp->jlock);
		return gp->detached ? EINVAL : try ? EBUSY : ESRCH;
	}
	if (try && !gp->exited) {
		spin_unlock(&gp->jlock);
		return EBUSY;
	}
	if (gp->detached) {
		spin_unlock(&gp->jlock);
		return EINVAL;
	}
	if (gp == me) {
		spin_unlock(&gp->jlock);
		return EDEADLK;
	}
	/* The target waits to join us: neither could ever return. */
	if (me && !gp->exited && me->joiner && me->joiner->g == gp) {
		spin_unlock(&gp->jlock);
		return EDEADLK;
	}
	if (gp->joiner) {
		spin_unlock(&gp->jlock);
		return EINVAL;
	}
	if (!gp->exited) {
		if (deadline >= 0 && deadline <= nanotime()) {
			spin_unlock(&gp->jlock);
			return ETIMEDOUT;
		}
		waiter_init(&w);
		gp->joiner = &w;
		cancel_begin();
		uint32_t st = waiter_block(&w, jlock_unlock, &gp->jlock,
					   "join", deadline);
		bool cancelled = intr_end(false) == ECANCEL_CALL;
		if (st == W_TIMEDOUT) {
			spin_lock(&gp->jlock);
			if (gp->joiner == &w)
				gp->joiner = NULL;
			spin_unlock(&gp->jlock);
			return cancelled ? ECANCELED : ETIMEDOUT;
		}
	} else {
		spin_unlock(&gp->jlock);
	}
	if (ret)
		*ret = gp->retval;
	g_free(gp);
	return 0;
}

int go_detach(struct g *gp)
{
	spin_lock(&gp->jlock);
	if (g_gone(gp)) {
		spin_unlock(&gp->jlock);
		return gp->detached ? EINVAL : ESRCH;
	}
	if (gp->detached) {
		spin_unlock(&gp->jlock);
		return EINVAL;
	}
	if (gp->joiner) {
		/* glibc: someone is joining; detach quietly does nothing. */
		spin_unlock(&gp->jlock);
		return 0;
	}
	gp->detached = true; /* kept while the G waits to be reused */
	if (gp->exited) {
		spin_unlock(&gp->jlock);
		g_free(gp);
		return 0;
	}
	spin_unlock(&gp->jlock);
	return 0;
}

bool g_exited(struct g *gp)
{
	spin_lock(&gp->jlock);
	bool exited = gp->exited;
	spin_unlock(&gp->jlock);
	return exited;
}

void go_exited(struct g *gp)
{
	spin_lock(&gp->jlock);
	atomic_store(&gp->status, G_DEAD);
	gp->exited = true;
	struct waiter *w = gp->joiner;
	/* Claimed under jlock, the joiner cannot leave until delivered. A
	 * joiner that timed out at this moment wins: the G stays joinable. */
	bool wake = w && waiter_claim(w);
	bool reap = !w && gp->detached;
	spin_unlock(&gp->jlock);
	if (wake)
		waiter_deliver(w);
	if (reap)
		g_free(gp);
}
