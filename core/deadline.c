/*
 * deadline.c: absolute and relative timeouts as monotonic deadlines (see
 * deadline.h).
 *
 * Runtime timers run on CLOCK_MONOTONIC, which is nanotime's clock: an
 * absolute time on it is its deadline as it is. On another clock the time
 * left is measured on that clock and added to nanotime, the other clock
 * read first so a deadline never comes before its time. Deadlines
 * saturate at INT64_MAX (never, in effect) instead of overflowing.
 */
#include <errno.h>
#include "deadline.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"

int abstime_check(clockid_t clk, const struct timespec *abstime)
{
	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)
		return EINVAL;
	if (abstime &&
	    (abstime->tv_nsec < 0 || abstime->tv_nsec >= NS_PER_SEC))
		return EINVAL;
	return 0;
}

static int64_t after(int64_t mono, int64_t left)
{
	if (left <= 0)
		return mono;
	return left > INT64_MAX - mono ? INT64_MAX : mono + left;
}

int64_t deadline_in(int64_t ns)
{
	return after(nanotime(), ns);
}

int64_t deadline_ms(int ms)
{
	return ms < 0 ? -1 : deadline_in(ms * 1000000LL);
}

struct timespec *deadline_left(struct timespec *ts, int64_t deadline)
{
	if (deadline < 0)
		return NULL;
	int64_t left = deadline - nanotime();
	*ts = ts_from_ns(left < 0 ? 0 : left);
	return ts;
}

int64_t deadline_at(clockid_t clk, const struct timespec *abstime)
{
	struct timespec now;

	if (abstime == NULL)
		return -1;
	if (abstime->tv_sec < 0)
		return nanotime();
	int64_t at = ts_to_ns(abstime);
	if (at == INT64_MAX)
		return INT64_MAX;
	if (clk == CLOCK_MONOTONIC) {
		int64_t mono = nanotime();
		return at < mono ? mono : at;
	}
	if (real.clock_gettime(clk, &now) != 0)
		return nanotime();
	return after(nanotime(), at - ts_to_ns(&now));
}

int64_t deadline_after(const struct timespec *rel)
{
	return rel ? deadline_in(ts_to_ns(rel)) : -1;
}
