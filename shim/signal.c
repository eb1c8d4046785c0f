/*
 * signal.c: the program's SIGURG. goshim's preemption signal is SIGURG
 * (as Go's), so the kernel's disposition for it is always goshim's
 * handler; the disposition the program sets, and reads back, is kept in
 * core/preempt.c, whose handler runs it for every SIGURG goshim did not
 * send. Every other signal, and SIGURG when preemption is off (GOSHIM_
 * DISABLE, a CPU without a trampoline), is the C library's business.
 *
 * glibc's signal() and sysv_signal() call its sigaction internally, out
 * of reach of interposing, so each is interposed with the flags glibc
 * gives it.
 */
#include <dlfcn.h>
#include <signal.h>
#include "../core/preempt.h"
#include "shim.h"

static bool ours(int sig)
{
	return sig == SIGURG && shim_active() && preempt_on();
}

GOSHIM_EXPORT int sigaction(int sig, const struct sigaction *act,
			    struct sigaction *old)
{
	if (!ours(sig)) {
		real_init();
		return real.sigaction(sig, act, old);
	}
	return preempt_sigaction(act, old);
}

static __sighandler_t set_handler(int sig, __sighandler_t h, int flags,
				  bool mask_self)
{
	struct sigaction act = { .sa_flags = flags }, old;

	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	act.sa_handler = h;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	preempt_sigaction(&act, &old);
	return old.sa_handler;
}

/* BSD semantics, glibc's signal(): restarting, the signal masked in its
 * own handler. */
GOSHIM_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
	static __sighandler_t (*fn)(int, __sighandler_t);

	if (!ours(sig)) {
		if (fn == NULL)
			fn = (__sighandler_t(*)(int, __sighandler_t))dlsym(
				RTLD_NEXT, "signal");
		return fn(sig, h);
	}
	return set_handler(sig, h, SA_RESTART, true);
}

GOSHIM_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t h)
{
	return signal(sig, h);
}

/* System V semantics (signal() under strict ISO C): reset to the default
 * on delivery, not masked, interrupting. */
GOSHIM_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t h)
{
	static __sighandler_t (*fn)(int, __sighandler_t);

	if (!ours(sig)) {
		if (fn == NULL)
			fn = (__sighandler_t(*)(int, __sighandler_t))dlsym(
				RTLD_NEXT, "sysv_signal");
		return fn(sig, h);
	}
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, false);
}

/* What <signal.h> makes of signal() under strict ISO C. */
GOSHIM_EXPORT __sighandler_t goshim___sysv_signal(int sig, __sighandler_t h)
	__asm__("__sysv_signal");
__sighandler_t goshim___sysv_signal(int sig, __sighandler_t h)
{
	return sysv_signal(sig, h);
}
