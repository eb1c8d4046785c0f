/*
 * sleep.c: sleeping parks the goroutine on a runtime timer; its M runs
 * others meanwhile. Arguments are checked as the kernel checks them.
 * The request is read only after the kernel has judged it (EFAULT, EINVAL),
 * and the time left is written back the kernel's way: a bad pointer gets
 * EFAULT, as natively, not a SIGSEGV inside goshim.
 * A sleep on another goroutine's CPU clock parks on runtime timers (see
 * cpu_sleep); on the caller's own thread clock it is EINVAL, as Linux has
 * it. Sleeps on clocks only the kernel keeps (process CPU clocks) are
 * system calls, and sleeps of threads goshim did not create go to the C
 * library. A signal with a
 * handler sent to the sleeping goroutine ends the sleep: EINTR and the
 * time left, as the kernel gives them (never restarted, SA_RESTART or
 * not). pthread_cancel ends a sleep too (shim/pthread_cancel.c).
 */
#include <errno.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include "../core/deadline.h"
#include "../core/sys.h"
#include "../core/cpuclock.h"
#include "../core/waiter.h"
#include "shim.h"

static void nothing_to_unlock(void *unused)
{
	(void)unused;
}

/* Sleep until the deadline; false if a signal's handler cut it short.
 * A sleep is a cancellation point: a cancel request ends it (the sleep
 * goes on when the goroutine has cancellation disabled). */
static bool park_until(int64_t deadline)
{
	for (;;) {
		struct waiter w;
		shim_testcancel();
		waiter_init(&w);
		intr_begin_cancel();
		waiter_block(&w, nothing_to_unlock, NULL, "sleep", deadline);
		int intr = intr_end(false);
		if (intr != ECANCEL_CALL)
			return intr == 0;
	}
}

static bool runtime_clock(clockid_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC ||
	       clk == CLOCK_BOOTTIME || clk == CLOCK_TAI;
}


/*
 * Until gp's CPU clock reaches the time asked. A thread's CPU clock runs
 * no faster than time itself, so it cannot get there sooner than the time
 * still missing: sleep that long, look again. As on Linux, the sleep goes
 * on for good (until a signal) if gp ends first; an interrupted relative
 * sleep gives back the CPU time still missing.
 */
static int cpu_sleep(struct g *gp, int which, int flags,
		     const struct timespec *req, struct timespec *rem)
{
	pid_t tid = g_tid(gp);
	int64_t now = cpuclock_value(gp, tid, which, NULL), target;

	if (now < 0)
		return EINVAL;
	target = ts_to_ns(req);
	if (!(flags & TIMER_ABSTIME))
		target = target > INT64_MAX - now ? INT64_MAX : now + target;
	while (now < target) {
		int64_t wall = nanotime();
		if (!park_until(target - now > INT64_MAX - wall
					? INT64_MAX
					: wall + (target - now))) {
			if (flags & TIMER_ABSTIME || rem == NULL)
				return EINTR;
			now = cpuclock_value(gp, tid, which, NULL);
			int64_t left = now < 0 ? target : target - now;
			if (left < 0)
				left = 0;
			struct timespec ts = ts_from_ns(left);
			return sys_copy_out(rem, &ts, sizeof ts) ? EFAULT
								 : EINTR;
		}
		int64_t t = cpuclock_value(gp, tid, which, NULL);
		if (t < 0)
			return park_until(INT64_MAX) ? 0 : EINTR;
		now = t;
	}
	return 0;
}

GOSHIM_EXPORT int clock_nanosleep(clockid_t clk, int flags,
				  const struct timespec *req,
				  struct timespec *rem)
{
	struct g *gp;
	int which;

	if (!shim_active() || !on_goroutine())
		return real.clock_nanosleep(clk, flags, req, rem);
	if (!runtime_clock(clk)) {
		switch (shim_cpuclock_target(clk, &gp, &which)) {
		case CPU_INVALID:
			return EINVAL;
		case CPU_GOROUTINE: {
			if (gp == getg())
				return EINVAL;
			long err = sys_ts_check(req);
			if (err)
				return (int)-err;
			return cpu_sleep(gp, which, flags, req, rem);
		}
		}
		return IN_SYSCALL(real.clock_nanosleep(clk, flags, req, rem));
	}
	long err = sys_ts_check(req);
	if (err)
		return (int)-err;
	if (flags & TIMER_ABSTIME)
		return park_until(deadline_at(clk, req)) ? 0 : EINTR;
	int64_t deadline = deadline_after(req);
	if (park_until(deadline))
		return 0;
	if (rem) {
		struct timespec ts;
		deadline_left(&ts, deadline);
		if (sys_copy_out(rem, &ts, sizeof ts) != 0)
			return EFAULT;
	}
	return EINTR;
}

GOSHIM_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int err = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

GOSHIM_EXPORT int usleep(useconds_t usec)
{
	struct timespec ts = { usec / 1000000, (long)(usec % 1000000) * 1000 };
	return nanosleep(&ts, NULL);
}

GOSHIM_EXPORT unsigned int sleep(unsigned int seconds)
{
	struct timespec ts = { seconds, 0 }, rem;
	if (nanosleep(&ts, &rem) == 0)
		return 0;
	/* Interrupted: the seconds left, rounded up as glibc does. */
	return (unsigned int)rem.tv_sec + (rem.tv_nsec >= 500000000);
}

GOSHIM_EXPORT int thrd_sleep(const struct timespec *dur, struct timespec *rem)
{
	int err = clock_nanosleep(CLOCK_REALTIME, 0, dur, rem);
	return err == 0 ? 0 : err == EINTR ? -1 : -2;
}
