/*
 * sleep.c: sleeping parks the goroutine on a runtime timer; its M runs
 * others meanwhile. Arguments are checked as the kernel checks them.
 * Sleeps on clocks the runtime does not keep (CPU-time clocks) and sleeps
 * of threads goshim did not create go to the C library. A parked goroutine
 * is not interrupted by signals yet, so EINTR and the remaining time do not
 * arise.
 */
#include <errno.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include "../core/timer.h"
#include "shim.h"

static void nothing_to_unlock(void *unused)
{
	(void)unused;
}

static void park_until(int64_t deadline)
{
	struct waiter w;
	waiter_init(&w);
	waiter_block(&w, nothing_to_unlock, NULL, "sleep", deadline);
}

static bool runtime_clock(clockid_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC ||
	       clk == CLOCK_BOOTTIME || clk == CLOCK_TAI;
}

GOSHIM_EXPORT int clock_nanosleep(clockid_t clk, int flags,
				  const struct timespec *req,
				  struct timespec *rem)
{
	if (!shim_active() || !on_goroutine() || !runtime_clock(clk))
		return real.clock_nanosleep(clk, flags, req, rem);
	if (req->tv_nsec < 0 || req->tv_nsec >= 1000000000)
		return EINVAL;
	if (flags & TIMER_ABSTIME) {
		park_until(shim_deadline(clk, req));
		return 0;
	}
	if (req->tv_sec < 0)
		return EINVAL;
	int64_t now = nanotime();
	int64_t ns = req->tv_sec > (INT64_MAX - now) / 1000000000 - 1
			     ? INT64_MAX - now
			     : req->tv_sec * 1000000000 + req->tv_nsec;
	park_until(now + ns);
	return 0;
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
	struct timespec ts = { seconds, 0 };
	nanosleep(&ts, NULL);
	return 0;
}

GOSHIM_EXPORT int thrd_sleep(const struct timespec *dur, struct timespec *rem)
{
	int err = clock_nanosleep(CLOCK_REALTIME, 0, dur, rem);
	return err == 0 ? 0 : err == EINTR ? -1 : -2;
}
