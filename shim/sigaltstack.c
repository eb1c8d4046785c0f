/*
 * sigaltstack.c: an alternate signal stack per goroutine.
 *
 * The kernel keeps one per OS thread, and an M runs many goroutines: the
 * stack one goroutine set up (Rust's runtime does it for every thread, to
 * report stack overflows) must not serve another goroutine's handler, nor
 * outlive the goroutine that frees it. The call acts on the M now and is
 * recorded in the G; the scheduler sets it on whichever M runs the
 * goroutine next (execute), so the kernel's checks (EINVAL, ENOMEM,
 * EPERM while on it) and its answers stay the kernel's. It never starts
 * the runtime: before it runs there is no goroutine to record in (the
 * main one reads the kernel's at start-up), and ASan's start-up calls it.
 */
#include <signal.h>
#include "../core/sys.h"
#include "shim.h"

GOSHIM_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	/* Asked first: the change and its record must be made on one M.
	 * Not shim_active(): this call starts no runtime (a sanitizer's
	 * start-up makes it). */
	bool on_g = ss && on_goroutine();
	long r = SYS2(SYS_sigaltstack, ss, old);

	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (on_g)
		g_altstack_update(getg());
	return 0;
}
