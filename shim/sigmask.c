/*
 * sigmask.c: pthread_sigmask and sigprocmask, per goroutine.
 *
 * A signal mask belongs to a thread, so under goshim to a goroutine: the
 * call changes the M's thread mask at once (the goroutine is running on
 * it) and records it in the G, and the scheduler sets it on whichever M
 * runs the goroutine next (execute). As glibc does, the two signals it
 * uses itself (SIGCANCEL, SIGSETXID) are never blocked.
 */
#include <signal.h>
#include <string.h>
#include "../core/sys.h"
#include "shim.h"

static int sigmask_change(int how, const sigset_t *set, sigset_t *old)
{
	uint64_t nset, prev;
	const uint64_t *p = NULL;
	/* Asked first: the change and its record must be made on one M. */
	bool on_g = set && shim_active() && on_goroutine();

	if (set) {
		memcpy(&nset, set, sizeof nset);
		if (how != SIG_UNBLOCK)
			nset &= ~SIG_GLIBC_INTERNAL;
		p = &nset;
	}
	long r = SYS4(SYS_rt_sigprocmask, how, p, &prev, sizeof prev);
	if (r < 0)
		return (int)-r;
	if (old)
		memcpy(old, &prev, sizeof prev); /* as the kernel: 8 bytes */
	if (on_g) {
		struct g *gp = getg();
		uint64_t now = how == SIG_BLOCK ? prev | nset
			       : how == SIG_UNBLOCK ? prev & ~nset
						    : nset;
		sigroute_mask_change(gp->sigmask, now, true, true);
		gp->sigmask = now;
		gp->m->sigmask = now;
		sigroute_unblocked(gp, now);
		if (atomic_load(&gp->sigpending) & ~now)
			gsignal_deliver(gp);
	}
	return 0;
}

GOSHIM_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return sigmask_change(how, set, old);
}

GOSHIM_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int err = sigmask_change(how, set, old);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
