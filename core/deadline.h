/*
 * deadline.h: a program's timeouts as the runtime's deadlines.
 *
 * Every wait of the runtime ends at a deadline in monotonic nanoseconds
 * (nanotime), or never (-1). Programs give timeouts as timespecs, absolute
 * on a clock (locks, condvars, semaphores, joins, FUTEX_WAIT_BITSET) or
 * relative (FUTEX_WAIT). They are judged and converted here, once, when
 * the wait starts: a later jump of the wall clock does not move a deadline
 * (glibc's futex waits on CLOCK_REALTIME would follow it).
 *
 * Two judges, because they differ: glibc's clocked waits take only
 * CLOCK_REALTIME and CLOCK_MONOTONIC and a tv_nsec in [0, 1e9), a negative
 * tv_sec being a time long past (abstime_check); the kernel also refuses a
 * negative tv_sec (ts_valid). Each caller asks at the point its POSIX
 * function does (a free mutex takes no notice of a bad timeout).
 */
#ifndef GOSHIM_DEADLINE_H
#define GOSHIM_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define NS_PER_SEC 1000000000

/* The kernel's check of a timespec it reads (timespec64_valid). */
static inline bool ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NS_PER_SEC;
}

/* A valid timespec in nanoseconds; past INT64_MAX, INT64_MAX. */
static inline int64_t ts_to_ns(const struct timespec *ts)
{
	return ts->tv_sec > INT64_MAX / NS_PER_SEC - 1
		       ? INT64_MAX
		       : (int64_t)ts->tv_sec * NS_PER_SEC + ts->tv_nsec;
}

static inline struct timespec ts_from_ns(int64_t ns)
{
	return (struct timespec){ ns / NS_PER_SEC, ns % NS_PER_SEC };
}

/* glibc's checks of an absolute timeout, in its order: EINVAL for a clock
 * its waits do not take, then (abstime not NULL) for a bad tv_nsec; 0 if
 * the wait may go on. abstime NULL: the clock alone. */
int abstime_check(clockid_t clk, const struct timespec *abstime);

/* The deadline of an absolute time on clk (checked), converted now: a
 * time already past is now. abstime NULL: -1, none. */
int64_t deadline_at(clockid_t clk, const struct timespec *abstime);

/* The deadline ns >= 0 nanoseconds from now (too far saturates). */
int64_t deadline_in(int64_t ns);

/* The deadline of a relative time (ts_valid) from now; NULL: -1. */
int64_t deadline_after(const struct timespec *rel);

/* The deadline of a poll-style timeout in milliseconds, negative for
 * none. */
int64_t deadline_ms(int ms);

/* What is left until deadline, into *ts (0 once past): for the blocking
 * call that waits in the kernel, and for the callers Linux tells. NULL
 * for deadline -1 (forever). */
struct timespec *deadline_left(struct timespec *ts, int64_t deadline);

#endif
