/*
 * time.c: absolute POSIX deadlines as runtime (monotonic) deadlines.
 *
 * Runtime timers run on CLOCK_MONOTONIC. An absolute time on another clock
 * is converted once, when the wait starts: a later jump of the wall clock
 * does not move it (glibc's futex waits on CLOCK_REALTIME would follow it).
 */
#include <time.h>
#include "shim.h"

int64_t shim_deadline(clockid_t clk, const struct timespec *abstime)
{
	struct timespec now;
	int64_t mono = nanotime();

	if (abstime->tv_sec < 0 || clock_gettime(clk, &now) != 0)
		return mono;
	int64_t left = (int64_t)(abstime->tv_sec - now.tv_sec) * 1000000000 +
		       (abstime->tv_nsec - now.tv_nsec);
	if (left <= 0)
		return mono;
	if (left > INT64_MAX - mono)
		return INT64_MAX;
	return mono + left;
}
