/*
 * gsignal.c: signals sent to one goroutine (pthread_kill).
 *
 * The kernel can direct a signal only at an OS thread, and a goroutine
 * has one only while it runs. So a signal for a goroutine that is running
 * (or in a system call) goes to its M with tgkill; for one that is parked
 * or waiting to run it is kept in the G, and raised on the goroutine's own
 * M as soon as it runs again (mcall's return, its first start) with the
 * signal unblocked in its mask (sigmask.c raises them when it unblocks).
 * A goroutine parked in a wait that a signal interrupts (a sleep, an fd
 * wait, sem_wait: see intr_begin) has the wait ended as if it had timed
 * out, and its call fails with EINTR (or starts over, for SA_RESTART)
 * once the handler has run; other waits (mutexes, condvars, joins) end
 * as they would have, and the handler runs then. A signal with no
 * handler acts on the whole process whichever thread takes it: the
 * default action happens at once (on the sender's M), an ignored one is
 * dropped, unless the target blocks it (then it waits, for sigwait).
 */
#include <errno.h>
#include <signal.h>
#include "runtime.h"
#include "sys.h"
#include "timer.h"


static long m_tgkill(pid_t tid, int sig)
{
	return SYS3(SYS_tgkill, sys_getpid(), tid, sig);
}

/* The kernel's disposition of sig: SIG_DFL, SIG_IGN or a handler (and
 * its flags). */
static uintptr_t disposition_flags(int sig, unsigned long *flags)
{
	struct {
		uintptr_t handler;
		unsigned long flags;
		uintptr_t restorer;
		uint64_t mask;
	} sa;
	if (SYS4(SYS_rt_sigaction, sig, NULL, &sa, 8) < 0)
		return (uintptr_t)SIG_DFL;
	*flags = sa.flags;
	return sa.handler;
}

static uintptr_t disposition(int sig)
{
	unsigned long flags;
	return disposition_flags(sig, &flags);
}

/* End gp's interruptible wait, if it is in one. */
static void gsignal_interrupt(struct g *gp)
{
	spin_lock(&gp->jlock);
	struct waiter *w = gp->intr_w;
	uint32_t st = W_WAITING;
	bool hit = w && atomic_compare_exchange_strong(&w->state, &st,
						       W_TIMEDOUT);
	if (hit)
		gp->intr_hit = true;
	spin_unlock(&gp->jlock);
	/* w stays valid: its owner cannot return before this wakes it. */
	if (hit)
		waiter_deliver(w);
}

void gcancel_wake(struct g *gp)
{
	spin_lock(&gp->jlock);
	struct waiter *w = gp->cancel_ok ? gp->intr_w : NULL;
	uint32_t st = W_WAITING;
	bool hit = w && atomic_compare_exchange_strong(&w->state, &st,
						       W_TIMEDOUT);
	if (hit)
		gp->cancel_hit = true;
	else
		gp->cancel_req = true; /* waiter_block looks at it */
	spin_unlock(&gp->jlock);
	if (hit)
		waiter_deliver(w);
}

static bool ignored_by_default(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
	       sig == SIGCONT;
}

int gsignal_send(struct g *gp, int sig)
{
	struct g *me = getg();
	bool self = gp == me && me && !me->is_g0;

	if (self)
		return (int)-m_tgkill(me->m->tid, sig);
	if (!(gp->sigmask & sigbit(sig))) {
		uintptr_t h = disposition(sig);
		if (h == (uintptr_t)SIG_IGN ||
		    (h == (uintptr_t)SIG_DFL && ignored_by_default(sig)))
			return 0;
		if (h == (uintptr_t)SIG_DFL)
			return (int)-m_tgkill((pid_t)SYS0(SYS_gettid), sig);
	}
	atomic_fetch_or(&gp->sigpending, sigbit(sig));
	uint32_t st = atomic_load(&gp->status);
	bool blocked = gp->sigmask & sigbit(sig);
	if (st == G_WAITING && !blocked)
		gsignal_interrupt(gp);
	/* On an M now: it takes it there, if its mask lets it (a blocked
	 * one stays kept in the G: made pending on the M's thread it would
	 * go to the M's next goroutine), or if it waits for exactly that in
	 * sigwait. (It may leave that M in the instant before the kernel
	 * delivers; then the M's next goroutine gets it, a window the
	 * runtime cannot close without running on the target.) */
	if (!(st == G_RUNNING && !blocked) &&
	    !(st == G_SYSCALL &&
	      (!blocked || (atomic_load(&gp->sigwait_set) & sigbit(sig)))))
		return 0;
	struct m *mp = gp->m;
	if (mp && (atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		   sigbit(sig)))
		m_tgkill(mp->tid, sig);
	return 0;
}

void gsignal_deliver(struct g *gp)
{
	uint64_t ready = atomic_load(&gp->sigpending) & ~gp->sigmask;
	bool restart = true;

	while (ready) {
		int sig = __builtin_ctzll(ready) + 1;
		unsigned long flags = 0;
		ready &= ready - 1;
		if (!(atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		      sigbit(sig)))
			continue;
		if (disposition_flags(sig, &flags) > (uintptr_t)SIG_IGN &&
		    !(flags & SA_RESTART))
			restart = false;
		m_tgkill(gp->m->tid, sig);
	}
	gp->intr_restart = restart;
}

int gsignal_take(struct g *gp, uint64_t set)
{
	uint64_t have = atomic_load(&gp->sigpending) & set;

	while (have) {
		int sig = __builtin_ctzll(have) + 1;
		have &= have - 1;
		if (atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		    sigbit(sig))
			return sig;
	}
	return 0;
}
