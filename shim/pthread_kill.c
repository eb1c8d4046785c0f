/*
 * pthread_kill.c: signals for one thread, when the thread is a goroutine.
 *
 * glibc's pthread_kill and pthread_sigqueue aim at the TCB's tid, which
 * names no OS thread for a goroutine: core/sigthread.c sends it to the
 * goroutine's M while it runs, or keeps it until it runs. The calls that
 * wait for or look at a thread's pending signals (sigwait, sigwaitinfo,
 * sigtimedwait, sigsuspend, sigpending) see the kept ones too; the waits
 * run under entersyscall, since they block in the kernel.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "../core/deadline.h"
#include "../core/sys.h"
#include "shim.h"

/* SIGCANCEL and SIGSETXID are glibc's own: EINVAL, as glibc answers. */
static bool internal_signal(int sig)
{
	return sig == 32 || sig == 33;
}

/* What the kernel takes (0 only probes). */
static bool valid_signal(int sig)
{
	return sig >= 0 && sig < 65;
}

/* glibc's order: its own signals are refused, then a thread that has
 * exited takes nothing and that is no error (since 2.34), whatever the
 * number; the kernel judges the number only for a live thread. */
GOSHIM_EXPORT int pthread_kill(pthread_t t, int sig)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL)
		return real.pthread_kill(t, sig);
	if (internal_signal(sig))
		return EINVAL;
	if (g_exited(gp) || sig == 0)
		return 0;
	if (!valid_signal(sig))
		return EINVAL;
	return sigthread_send(gp, sig);
}

/* glibc's order: ESRCH for a thread whose tid the kernel has cleared,
 * before any look at the signal. */
GOSHIM_EXPORT int pthread_sigqueue(pthread_t t, int sig,
				   const union sigval value)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL)
		return real.pthread_sigqueue(t, sig, value);
	if (g_exited(gp))
		return ESRCH;
	if (internal_signal(sig) || !valid_signal(sig))
		return EINVAL;
	if (sig == 0) /* the kernel's check that the thread is there */
		return 0;
	siginfo_t si;
	sigthread_siginfo(&si, sig, SI_QUEUE);
	si.si_value = value;
	return sigthread_queue(gp, &si);
}

/* glibc's raise sends to the TCB's tid (the M's thread) without going
 * through pthread_kill: the goroutine sends it itself, so that it stays
 * the goroutine's if it leaves the M while it blocks it. */
GOSHIM_EXPORT int raise(int sig)
{
	if (!shim_active() || !on_goroutine() || sig == 0 ||
	    internal_signal(sig) || !valid_signal(sig))
		return real.raise(sig);
	int err = sigthread_send(getg(), sig);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* A kept signal in set, taken for a wait: its number, 0 if none, or -1
 * (EFAULT) where si cannot be written (taken all the same, as the
 * kernel's). */
static int take_kept(uint64_t set, siginfo_t *si)
{
	siginfo_t got;
	int sig = sigthread_take(getg(), set, &got);
	if (sig && si) {
		if (sys_copy_out(si, &got, sizeof got) < 0) {
			errno = EFAULT;
			return -1;
		}
	}
	return sig;
}

/* The program's set, read the kernel's way (a bad pointer is EFAULT, as
 * natively): 0 or -1 with errno. */
static int set_bits(const sigset_t *set, uint64_t *bits)
{
	long r = sys_copy_in(bits, set, sizeof *bits);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

/*
 * The wait. A signal sent to this M for another goroutine (sigthread.c)
 * goes back to it, and the wait goes on. A cancellation point: ECANCELED
 * when a cancel ended it, for the caller to act on once it has undone its
 * state.
 *
 * On a goroutine, bits (the set) is published (sigthread_sigwait_begin)
 * only while the goroutine sits on its M in the system call: entersyscall
 * pins it there, so a signal sent for it waits on that thread, blocked,
 * until rt_sigtimedwait takes it. Published before, the goroutine could
 * leave the M first (a yield at entersyscall) and the signal wait on a
 * thread it never came back to (its sigwait would never return). One kept
 * before the publishing is taken instead.
 */
static int sys_wait(const sigset_t *set, uint64_t bits, siginfo_t *si,
		    const struct timespec *t)
{
	siginfo_t got;
	struct g *gp;
	bool here = false;
	uint32_t ran = g_handlers_ran();
	struct timespec left;
	long r;

	/* The timeout is relative: an EINTR of goshim's (own_eintr) waits
	 * again for what is left of it. One the kernel refuses goes to it
	 * as it is. */
	int64_t deadline = t && sys_ts_check(t) == 0 ? deadline_after(t) : -1;
	do {
		if (deadline >= 0)
			t = deadline_left(&left, deadline);
		gp = cancel_syscall_enter();
		r = 0;
		if (gp) {
			sigthread_sigwait_begin(gp, bits);
			r = sigthread_take(gp, bits, &got);
		}
		if (r == 0)
			r = SYS4(SYS_rt_sigtimedwait, set, &got, t, 8);
		if (gp)
			sigthread_sigwait_end(gp, bits);
		cancel_syscall_exit(gp);
	} while ((r > 0 && gp &&
		  (sigthread_misdirected((int)r, &got, &here) ||
		   (here && !sigthread_kept_siginfo(gp, (int)r, &got)))) ||
		 (r == -EINTR && gp && own_eintr(ran) && !g_cancel_due(gp)));
	if (r == -EINTR && gp && g_cancel_due(gp))
		r = -ECANCELED;
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	/* Taken all the same where it cannot be written, as natively. */
	if (si && sys_copy_out(si, &got, sizeof got) < 0) {
		errno = EFAULT;
		return -1;
	}
	return (int)r;
}

GOSHIM_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *si,
			       const struct timespec *t)
{
	uint64_t bits;

	if (!shim_active() || !on_goroutine())
		return sys_wait(set, 0, si, t);
	shim_testcancel();
	if (set_bits(set, &bits) < 0)
		return -1;
	int r = take_kept(bits, si);
	if (r == 0)
		r = sys_wait(set, bits, si, t);
	int e = errno;
	if (r < 0 && e == ECANCELED)
		shim_testcancel();
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
	uint64_t bits;

	if (gp == NULL || set_bits(set, &bits) < 0) {
		long r = SYS2(SYS_rt_sigsuspend, set, 8);
		errno = (int)-r;
		return -1;
	}
	/* The temporary mask is the goroutine's while it waits: what it
	 * lets through is sent to this M, where the kernel takes it. Set
	 * before looking for kept signals: a sender keeps one only while
	 * the goroutine's mask blocks it (sigthread.c looks after adding). */
	shim_testcancel();
	uint64_t keep = sigthread_mask_temporary(gp, bits);
	uint32_t ran = g_handlers_ran();
	long r;
	/* It returns once a handler of the program's has run: an EINTR of
	 * goshim's (own_eintr) waits again. */
	do {
		if (sigthread_deliver_temporary(gp)) {
			r = -EINTR;
		} else {
			cancel_syscall_enter();
			r = SYS2(SYS_rt_sigsuspend, set, 8);
			cancel_syscall_exit(gp);
		}
	} while (r == -EINTR && own_eintr(ran) && !g_cancel_due(gp));
	sigthread_mask_restore(gp, keep);
	/* A cancellation point: pthread_cancel's signal ended it. */
	shim_testcancel();
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
		uint64_t s; /* the kernel has just written it */
		memcpy(&s, set, sizeof s);
		s |= sigthread_kept(getg());
		memcpy(set, &s, sizeof s);
	}
	return 0;
}
