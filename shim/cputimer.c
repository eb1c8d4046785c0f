/*
 * cputimer.c: timer_create on a goroutine's thread CPU clock
 * (CLOCK_THREAD_CPUTIME_ID on a goroutine, or a clockid from
 * pthread_getcpuclockid) makes one of core/cputimer.c's timers; every
 * other clock, and every other timer, is the C library's.
 */
#include <time.h>
#include "../core/cpuclock.h"
#include "../core/sys.h"
#include "shim.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

GOSHIM_EXPORT int timer_create(clockid_t clk, struct sigevent *sev,
			       timer_t *id)
{
	struct g *gp;
	int which;
	uintptr_t v;

	real_init();
	switch (shim_cpuclock_target(clk, &gp, &which)) {
	case CPU_INVALID:
		return fail(EINVAL);
	case CPU_GOROUTINE: {
		struct sigevent ev;
		if (sev && sys_copy_in(&ev, sev, sizeof ev) != 0)
			return fail(EFAULT);
		int err = cputimer_create(gp, which, sev ? &ev : NULL, &v);
		if (err)
			return fail(err);
		*id = (timer_t)v;
		return 0;
	}
	}
	return real.timer_create(clk, sev, id);
}

GOSHIM_EXPORT int timer_settime(timer_t id, int flags,
				const struct itimerspec *nv,
				struct itimerspec *old)
{
	real_init();
	if (!cputimer_id((uintptr_t)id))
		return real.timer_settime(id, flags, nv, old);
	struct itimerspec in, out;
	if (sys_copy_in(&in, nv, sizeof in) != 0)
		return fail(EFAULT);
	int err = cputimer_settime((uintptr_t)id, flags, &in, &out);
	if (err)
		return fail(err);
	if (old && sys_copy_out(old, &out, sizeof out) != 0)
		return fail(EFAULT);
	return 0;
}

GOSHIM_EXPORT int timer_gettime(timer_t id, struct itimerspec *cur)
{
	real_init();
	if (!cputimer_id((uintptr_t)id))
		return real.timer_gettime(id, cur);
	struct itimerspec out;
	int err = cputimer_gettime((uintptr_t)id, &out);
	if (err)
		return fail(err);
	return sys_copy_out(cur, &out, sizeof out) != 0 ? fail(EFAULT) : 0;
}

GOSHIM_EXPORT int timer_getoverrun(timer_t id)
{
	real_init();
	if (!cputimer_id((uintptr_t)id))
		return real.timer_getoverrun(id);
	int r = cputimer_getoverrun((uintptr_t)id);
	return r < 0 ? fail(-r) : r;
}

GOSHIM_EXPORT int timer_delete(timer_t id)
{
	real_init();
	if (!cputimer_id((uintptr_t)id))
		return real.timer_delete(id);
	int err = cputimer_delete((uintptr_t)id);
	return err ? fail(err) : 0;
}
