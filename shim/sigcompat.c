/*
 * sigcompat.c: the C library's older signal calls, made on goshim's.
 *
 * glibc builds BSD sigsetmask, sigblock, siggetmask and sigpause, System
 * V sighold, sigrelse, sigset, sigignore and sigpause, siginterrupt, and
 * siglongjmp's mask restore on its internal sigprocmask, sigsuspend and
 * sigaction, out of reach of interposing: the thread's mask would change
 * behind the goroutine's, which sigprocmask reports and signals are
 * routed by (dash blocks every signal with sigprocmask and clears the mask
 * with sigsetmask(0): its next sigprocmask answered "all blocked", and it
 * waited in sigsuspend under that mask for good), and a handler installed
 * with sigset would run without goshim's in front of it. So each is made
 * here as glibc makes it, on the interposed calls.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include "shim.h"

/* BSD masks hold signals 1 to 31, bit sig - 1 (glibc's
 * sigset_set_old_mask and sigset_get_old_mask). */
static void set_from_bsd(sigset_t *set, int mask)
{
	sigemptyset(set);
	for (int sig = 1; sig < 32; sig++)
		if ((unsigned)mask & (1u << (sig - 1)))
			sigaddset(set, sig);
}

static int bsd_from_set(const sigset_t *set)
{
	unsigned mask = 0;

	for (int sig = 1; sig < 32; sig++)
		if (sigismember(set, sig) == 1)
			mask |= 1u << (sig - 1);
	return (int)mask;
}

static int bsd_mask(int how, int mask)
{
	sigset_t set, old;

	set_from_bsd(&set, mask);
	if (sigprocmask(how, &set, &old) < 0)
		return -1;
	return bsd_from_set(&old);
}

GOSHIM_EXPORT int sigblock(int mask)
{
	return bsd_mask(SIG_BLOCK, mask);
}

GOSHIM_EXPORT int sigsetmask(int mask)
{
	return bsd_mask(SIG_SETMASK, mask);
}

GOSHIM_EXPORT int siggetmask(void)
{
	return bsd_mask(SIG_BLOCK, 0);
}

/* One signal; sigaddset judges it (EINVAL for glibc's own two too). */
static int one_signal(int how, int sig)
{
	sigset_t set;

	sigemptyset(&set);
	if (sigaddset(&set, sig) < 0)
		return -1;
	return sigprocmask(how, &set, NULL);
}

GOSHIM_EXPORT int sighold(int sig)
{
	return one_signal(SIG_BLOCK, sig);
}

GOSHIM_EXPORT int sigrelse(int sig)
{
	return one_signal(SIG_UNBLOCK, sig);
}

GOSHIM_EXPORT int sigignore(int sig)
{
	struct sigaction act = { .sa_handler = SIG_IGN };

	sigemptyset(&act.sa_mask);
	return sigaction(sig, &act, NULL);
}

/* glibc's: SIG_HOLD blocks sig and leaves its action; anything else
 * sets the action and unblocks sig. SIG_HOLD comes back for a signal that
 * was blocked, else the action before. */
GOSHIM_EXPORT __sighandler_t sigset(int sig, __sighandler_t disp)
{
	struct sigaction act, oact;
	sigset_t set, old;

	sigemptyset(&set);
	if (disp == SIG_ERR || sigaddset(&set, sig) < 0) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (disp == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &set, &old) < 0 ||
		    sigaction(sig, NULL, &oact) < 0)
			return SIG_ERR;
		return sigismember(&old, sig) ? SIG_HOLD : oact.sa_handler;
	}
	act.sa_handler = disp;
	sigemptyset(&act.sa_mask);
	act.sa_flags = 0;
	if (sigaction(sig, &act, &oact) < 0 ||
	    sigprocmask(SIG_UNBLOCK, &set, &old) < 0)
		return SIG_ERR;
	return sigismember(&old, sig) ? SIG_HOLD : oact.sa_handler;
}

GOSHIM_EXPORT int siginterrupt(int sig, int interrupt)
{
	struct sigaction act;

	if (sigaction(sig, NULL, &act) < 0)
		return -1;
	if (interrupt)
		act.sa_flags &= ~SA_RESTART;
	else
		act.sa_flags |= SA_RESTART;
	return sigaction(sig, &act, NULL);
}

/* is_sig: X/Open, sig leaves the mask for the wait; else BSD, the mask
 * is the wait's. */
GOSHIM_EXPORT int __sigpause(int sig_or_mask, int is_sig)
{
	sigset_t set;

	if (is_sig) {
		if (sigprocmask(SIG_BLOCK, NULL, &set) < 0 ||
		    sigdelset(&set, sig_or_mask) < 0)
			return -1;
	} else {
		set_from_bsd(&set, sig_or_mask);
	}
	return sigsuspend(&set);
}

/* The plain name is BSD's (<signal.h> gives it to X/Open's). */
GOSHIM_EXPORT int goshim_sigpause(int mask) __asm__("sigpause");
int goshim_sigpause(int mask)
{
	return __sigpause(mask, 0);
}

GOSHIM_EXPORT int __xpg_sigpause(int sig)
{
	return __sigpause(sig, 1);
}

/*
 * A jump to a sigsetjmp that saved the mask sets it the way sigprocmask
 * does, then jumps from a copy that says it saved none. The mask was read
 * from the thread, so it lacks what goshim keeps unblocked there
 * (SIGURG) even where the goroutine blocked it. sigsetjmp itself cannot
 * be wrapped: it must return in its caller's frame.
 */
__attribute__((noreturn)) static void jump(struct __jmp_buf_tag *env,
					   int val, bool chk)
{
	if (real.longjmp == NULL)
		real_init(); /* a jump before start-up */
	void (*real_jump)(struct __jmp_buf_tag *, int) __attribute__((
		noreturn)) = chk ? real.longjmp_chk : real.longjmp;
	if (env->__mask_was_saved) {
		struct __jmp_buf_tag copy;

		memcpy(&copy, env, sizeof copy);
		copy.__mask_was_saved = 0;
		sigprocmask(SIG_SETMASK, (sigset_t *)&env->__saved_mask, NULL);
		real_jump(&copy, val);
	}
	real_jump(env, val);
}

GOSHIM_EXPORT void siglongjmp(sigjmp_buf env, int val)
{
	jump(env, val, false);
}

GOSHIM_EXPORT void longjmp(jmp_buf env, int val)
{
	jump(env, val, false);
}

GOSHIM_EXPORT void _longjmp(jmp_buf env, int val)
{
	jump(env, val, false);
}

/* _FORTIFY_SOURCE's: the same, and it checks the jump goes up the stack
 * (or off the signal stack), which the copy here does too. */
GOSHIM_EXPORT __attribute__((noreturn)) void __longjmp_chk(jmp_buf env,
							   int val);
void __longjmp_chk(jmp_buf env, int val)
{
	jump(env, val, true);
}
