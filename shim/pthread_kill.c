/*
 * pthread_kill.c: signals for one thread, when the thread is a goroutine.
 *
 * glibc's pthread_kill and pthread_sigqueue aim at the TCB's tid, which
 * names no OS thread for a goroutine: core/gsignal.c sends it to the
 * goroutine's M while it runs, or keeps it until it runs. The calls that
 * wait for or look at a thread's pending signals (sigwait, sigwaitinfo,
 * sigtimedwait, sigsuspend, sigpending) see the kept ones too; the waits
 * run under entersyscall, since they block in the kernel.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "../core/sys.h"
#include "shim.h"

/* SIGCANCEL and SIGSETXID are glibc's own: EINVAL, as glibc answers. */
static bool valid_signal(int sig)
{
	return sig >= 0 && sig < 65 && sig != 32 && sig != 33;
}

GOSHIM_EXPORT int pthread_kill(pthread_t t, int sig)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL)
		return real.pthread_kill(t, sig);
	if (!valid_signal(sig))
		return EINVAL;
	spin_lock(&gp->jlock);
	bool exited = gp->exited;
	spin_unlock(&gp->jlock);
	/* As glibc since 2.34: a thread that has exited takes nothing, and
	 * that is no error. */
	if (exited || sig == 0)
		return 0;
	return gsignal_send(gp, sig);
}

GOSHIM_EXPORT int pthread_sigqueue(pthread_t t, int sig,
				   const union sigval value)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL)
		return real.pthread_sigqueue(t, sig, value);
	if (!valid_signal(sig))
		return EINVAL;
	if (gp != getg())
		return pthread_kill(t, sig); /* the value is not carried */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = sys_getpid();
	si.si_uid = getuid();
	si.si_value = value;
	long r = SYS4(SYS_rt_tgsigqueueinfo, sys_getpid(), gp->m->tid, sig,
		      &si);
	return r < 0 ? (int)-r : 0;
}

static uint64_t set_bits(const sigset_t *set)
{
	uint64_t s;
	memcpy(&s, set, sizeof s);
	return s;
}

/* A kept signal in set, taken for a wait: its number, or 0. */
static int take_kept(const sigset_t *set, siginfo_t *si)
{
	if (!shim_active() || !on_goroutine())
		return 0;
	int sig = gsignal_take(getg(), set_bits(set));
	if (sig && si) {
		memset(si, 0, sizeof *si);
		si->si_signo = sig;
		si->si_code = SI_TKILL;
		si->si_pid = sys_getpid();
		si->si_uid = getuid();
	}
	return sig;
}

static int sys_wait(const sigset_t *set, siginfo_t *si,
		    const struct timespec *t)
{
	long r = IN_SYSCALL(SYS4(SYS_rt_sigtimedwait, set, si, t, 8));
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

/* The wait, with the set published (gsignal_send sends what it holds to
 * the M while the goroutine sits in the kernel); a signal kept just
 * before the publishing is taken instead. */
GOSHIM_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *si,
			       const struct timespec *t)
{
	int sig = take_kept(set, si);
	if (sig || !shim_active() || !on_goroutine())
		return sig ? sig : sys_wait(set, si, t);
	struct g *gp = getg();
	atomic_store(&gp->sigwait_set, set_bits(set));
	sig = take_kept(set, si);
	int r = sig ? sig : sys_wait(set, si, t);
	int e = errno;
	atomic_store(&gp->sigwait_set, 0);
	errno = e;
	return r;
}

GOSHIM_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *si)
{
	return sigtimedwait(set, si, NULL);
}

GOSHIM_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	int r;

	/* POSIX: sigwait is not interrupted (glibc retries on EINTR). */
	do
		r = sigtimedwait(set, NULL, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno;
	*sig = r;
	return 0;
}

GOSHIM_EXPORT int sigsuspend(const sigset_t *set)
{
	struct g *gp = shim_active() && on_goroutine() ? getg() : NULL;

	/* A kept signal the temporary mask lets through is delivered now,
	 * under that mask, as the kernel would have. */
	if (gp && (atomic_load(&gp->sigpending) & ~set_bits(set))) {
		uint64_t tmp = set_bits(set) & ~SIG_GLIBC_INTERNAL, old;
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &tmp, &old, 8);
		uint64_t keep = gp->sigmask;
		gp->sigmask = tmp;
		gsignal_deliver(gp);
		gp->sigmask = keep;
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
		errno = EINTR;
		return -1;
	}
	long r = IN_SYSCALL(SYS2(SYS_rt_sigsuspend, set, 8));
	errno = (int)-r;
	return -1;
}

GOSHIM_EXPORT int sigpending(sigset_t *set)
{
	/* Asked first: the thread's pending set is the M's it runs on. */
	bool on_g = shim_active() && on_goroutine();
	long r = SYS2(SYS_rt_sigpending, set, 8);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (on_g) {
		uint64_t s = set_bits(set) | atomic_load(&getg()->sigpending);
		memcpy(set, &s, sizeof s);
	}
	return 0;
}
