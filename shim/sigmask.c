/*
 * sigmask.c: pthread_sigmask and sigprocmask, per goroutine.
 *
 * A signal mask belongs to a thread, so under goshim to a goroutine: the
 * call records it in the G and changes the M's thread mask at once (the
 * goroutine is running on it), and the scheduler sets it on whichever M
 * runs the goroutine next (execute). As glibc does, the two signals it
 * uses itself (SIGCANCEL, SIGSETXID) are never blocked; nor, on the
 * thread, is goshim's preemption signal (preempt_unblockable). SIGKILL
 * and SIGSTOP are never reported blocked, as the kernel never has them.
 */
#include <signal.h>
#include <string.h>
#include "../core/chaos.h"
#include "../core/sys.h"
#include "shim.h"

/* On a goroutine: its own mask is the one the program sees and changes;
 * its thread's leaves out what the runtime must receive (SIGURG). */
static int goroutine_sigmask(struct g *gp, int how, const sigset_t *set,
			     sigset_t *old)
{
	uint64_t nset, prev = g_sigmask(gp), now = prev;
	int err = 0;

	if (chaos())
		sigmask_check(gp, "sigprocmask, before");
	if (set) {
		if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
			return EINVAL;
		memcpy(&nset, set, sizeof nset); /* glibc reads it too */
		if (how != SIG_UNBLOCK)
			nset &= ~SIG_GLIBC_INTERNAL;
		now = how == SIG_BLOCK	  ? prev | nset
		      : how == SIG_UNBLOCK ? prev & ~nset
					   : nset;
		now &= ~SIG_KERNEL_UNBLOCKABLE;
	}
	/* Where the old mask cannot be written the change is made all the
	 * same and the answer is EFAULT, as natively. */
	if (old && sys_copy_out(old, &prev, sizeof prev) < 0)
		err = EFAULT;
	if (set)
		sigthread_setmask(gp, prev, now);
	return err;
}

static int sigmask_change(int how, const sigset_t *set, sigset_t *old)
{
	uint64_t nset;
	const uint64_t *p = NULL;

	if (shim_active() && on_goroutine())
		return goroutine_sigmask(getg(), how, set, old);
	if (set) {
		memcpy(&nset, set, sizeof nset); /* glibc reads it too */
		if (how != SIG_UNBLOCK)
			nset &= ~SIG_GLIBC_INTERNAL;
		p = &nset;
	}
	/* The kernel writes the old mask (8 bytes) into the program's
	 * memory itself; where it cannot, it has made the change all the
	 * same and answers EFAULT. */
	return (int)-SYS4(SYS_rt_sigprocmask, how, p, old, sizeof nset);
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
