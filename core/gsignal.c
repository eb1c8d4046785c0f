/*
 * gsignal.c: signals sent to one goroutine (pthread_kill).
 *
 * The kernel can direct a signal only at an OS thread, and a goroutine
 * has one only while it runs. So a signal for a goroutine that is running
 * (or in a system call) goes to its M with tgkill; for one that is parked
 * or waiting to run it is kept in the G, and raised on the goroutine's own
 * M as soon as it runs again (mcall's return, its first start) with the
 * signal unblocked in its mask (sigmask.c raises them when it unblocks).
 * A parked goroutine is therefore not interrupted: the handler runs when
 * its wait ends, and the wait does not fail with EINTR. A signal with no
 * handler acts on the whole process whichever thread takes it: the
 * default action happens at once (on the sender's M), an ignored one is
 * dropped, unless the target blocks it (then it waits, for sigwait).
 */
#include <errno.h>
#include <signal.h>
#include "runtime.h"
#include "sys.h"

static uint64_t sigbit(int sig)
{
	return (uint64_t)1 << (sig - 1);
}

static long m_tgkill(pid_t tid, int sig)
{
	return SYS3(SYS_tgkill, sys_getpid(), tid, sig);
}

/* The kernel's disposition of sig: SIG_DFL, SIG_IGN or a handler. */
static uintptr_t disposition(int sig)
{
	struct {
		uintptr_t handler;
		unsigned long flags;
		uintptr_t restorer;
		uint64_t mask;
	} sa;
	if (SYS4(SYS_rt_sigaction, sig, NULL, &sa, 8) < 0)
		return (uintptr_t)SIG_DFL;
	return sa.handler;
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
	if (st != G_RUNNING && st != G_SYSCALL)
		return 0;
	/* On an M now: it takes it there. (It may leave that M in the
	 * instant before the kernel delivers; then the M's next goroutine
	 * gets it, a window the runtime cannot close without running on the
	 * target.) */
	struct m *mp = gp->m;
	if (mp && (atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		   sigbit(sig)))
		m_tgkill(mp->tid, sig);
	return 0;
}

void gsignal_deliver(struct g *gp)
{
	uint64_t ready = atomic_load(&gp->sigpending) & ~gp->sigmask;

	while (ready) {
		int sig = __builtin_ctzll(ready) + 1;
		ready &= ready - 1;
		if (atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		    sigbit(sig))
			m_tgkill(gp->m->tid, sig);
	}
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
