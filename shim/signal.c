/*
 * signal.c: the program's signal dispositions. The kernel's disposition
 * of a signal the program handles is goshim's handler, which runs the
 * program's on the goroutine the kernel chose, or hands the signal to a
 * goroutine when the kernel chose a thread that runs none (core/
 * sigroute.c); SIGURG is also goshim's preemption signal (core/
 * preempt.c). Either way the program sets, and reads back, its own.
 * Before the scheduler starts, or with goshim off, it is the C library's:
 * at the start, handlers installed until then go behind goshim's
 * (sigroute_adopt).
 *
 * glibc's signal() and sysv_signal() call its sigaction internally, out
 * of reach of interposing, so each is interposed with the flags glibc
 * gives it.
 */
#include <signal.h>
#include "../core/preempt.h"
#include "shim.h"

/* The program's sigaction, through goshim: 0 or errno. */
static int set_action(int sig, const struct sigaction *act,
		      struct sigaction *old)
{
	if (sig == SIGURG && preempt_on())
		return preempt_sigaction(act, old);
	return sigroute_sigaction(sig, act, old);
}

GOSHIM_EXPORT int sigaction(int sig, const struct sigaction *act,
			    struct sigaction *old)
{
	if (!shim_active() || !sigroute_adopted()) {
		real_init();
		int r = real.sigaction(sig, act, old);
		/* The scheduler started meanwhile, on another thread. */
		if (r == 0 && act && runtime_enabled && sigroute_adopted())
			sigroute_adopt_one(sig);
		return r;
	}
	int err = set_action(sig, act, old);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
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
	if (sigaction(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics, glibc's signal(): restarting, the signal masked in its
 * own handler. */
GOSHIM_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
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
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, false);
}

/* What <signal.h> makes of signal() under strict ISO C. */
GOSHIM_EXPORT __sighandler_t goshim___sysv_signal(int sig, __sighandler_t h)
	__asm__("__sysv_signal");
__sighandler_t goshim___sysv_signal(int sig, __sighandler_t h)
{
	return sysv_signal(sig, h);
}
