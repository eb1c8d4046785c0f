/*
 * Unit tests for core/deadline.c: glibc's checks of an absolute timeout
 * (the clock first, then tv_nsec; a negative tv_sec allowed), the
 * kernel's (a negative tv_sec refused), and the deadlines: absolute on
 * CLOCK_MONOTONIC as it is, on CLOCK_REALTIME by the time left, past
 * times now, far ones saturating instead of overflowing.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include "../../core/deadline.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"

static struct timespec ts(long sec, long nsec)
{
	return (struct timespec){ sec, nsec };
}

START_TEST(test_abstime_check)
{
	struct timespec ok = ts(1, 0), past = ts(-1, 0), big = ts(0, NS_PER_SEC);
	struct timespec neg = ts(0, -1);

	ck_assert_int_eq(abstime_check(CLOCK_REALTIME, &ok), 0);
	ck_assert_int_eq(abstime_check(CLOCK_MONOTONIC, &past), 0);
	ck_assert_int_eq(abstime_check(CLOCK_REALTIME, &big), EINVAL);
	ck_assert_int_eq(abstime_check(CLOCK_REALTIME, &neg), EINVAL);
	ck_assert_int_eq(abstime_check(CLOCK_BOOTTIME, &ok), EINVAL);
	/* The clock alone, before the timespec is read. */
	ck_assert_int_eq(abstime_check(CLOCK_MONOTONIC, NULL), 0);
	ck_assert_int_eq(abstime_check(CLOCK_PROCESS_CPUTIME_ID, NULL), EINVAL);
}
END_TEST

START_TEST(test_ts_valid)
{
	struct timespec a = ts(0, 999999999), b = ts(-1, 0), c = ts(0, -1);
	struct timespec d = ts(0, NS_PER_SEC);

	ck_assert(ts_valid(&a));
	ck_assert(!ts_valid(&b));
	ck_assert(!ts_valid(&c));
	ck_assert(!ts_valid(&d));
}
END_TEST

START_TEST(test_ns)
{
	struct timespec a = ts(3, 7), far = ts(INT64_MAX / NS_PER_SEC, 0);

	ck_assert_int_eq(ts_to_ns(&a), 3 * (int64_t)NS_PER_SEC + 7);
	ck_assert_int_eq(ts_to_ns(&far), INT64_MAX);
	struct timespec b = ts_from_ns(5 * (int64_t)NS_PER_SEC + 9);
	ck_assert_int_eq(b.tv_sec, 5);
	ck_assert_int_eq(b.tv_nsec, 9);
}
END_TEST

START_TEST(test_deadline_at)
{
	struct timespec now, at, past = ts(-5, 0), far = ts(INT64_MAX / 2, 0);

	ck_assert_int_eq(deadline_at(CLOCK_REALTIME, NULL), -1);
	/* Monotonic: the time itself. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	at = ts(now.tv_sec + 10, now.tv_nsec);
	ck_assert_int_eq(deadline_at(CLOCK_MONOTONIC, &at), ts_to_ns(&at));
	/* Past: now. */
	int64_t before = nanotime();
	ck_assert_int_ge(deadline_at(CLOCK_MONOTONIC, &past), before);
	ck_assert_int_le(deadline_at(CLOCK_REALTIME, &past), nanotime());
	ck_assert_int_ge(deadline_at(CLOCK_REALTIME, &now), before);
	/* Realtime: the time left, never less. */
	clock_gettime(CLOCK_REALTIME, &now);
	at = ts(now.tv_sec + 10, now.tv_nsec);
	before = nanotime();
	int64_t d = deadline_at(CLOCK_REALTIME, &at);
	ck_assert_int_ge(d, before + 10 * (int64_t)NS_PER_SEC - 1000000);
	ck_assert_int_le(d, nanotime() + 10 * (int64_t)NS_PER_SEC);
	/* Far: saturated, not wrapped. */
	ck_assert_int_eq(deadline_at(CLOCK_REALTIME, &far), INT64_MAX);
	ck_assert_int_eq(deadline_at(CLOCK_MONOTONIC, &far), INT64_MAX);
}
END_TEST

START_TEST(test_deadline_after)
{
	struct timespec zero = ts(0, 0), sec = ts(1, 0), far = ts(INT64_MAX / 2, 0);
	int64_t before = nanotime();

	ck_assert_int_ge(deadline_after(&zero), before);
	ck_assert_int_le(deadline_after(&zero), nanotime());
	ck_assert_int_ge(deadline_after(&sec), before + NS_PER_SEC);
	ck_assert_int_eq(deadline_after(&far), INT64_MAX);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deadline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_abstime_check);
	tcase_add_test(tc, test_ts_valid);
	tcase_add_test(tc, test_ns);
	tcase_add_test(tc, test_deadline_at);
	tcase_add_test(tc, test_deadline_after);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
