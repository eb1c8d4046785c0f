/*
 * Unit tests for the GOSHIM_* value parsers (GOMAXPROCS has its own in
 * check_gomaxprocs.c): GOSHIM_STACK_SIZE and GOSHIM_MAX_THREADS, with the
 * inputs the fuzz harness tests/fuzz/fuzz_env.c found wrong.
 */
#include <check.h>
#include <stdint.h>
#include "../../core/real.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"
#include "../../core/stack.h"

START_TEST(stack_size_good)
{
	ck_assert_uint_eq(stack_parse_size("16384"), 16384);
	ck_assert_uint_eq(stack_parse_size("64k"), 65536);
	ck_assert_uint_eq(stack_parse_size("64K"), 65536);
	ck_assert_uint_eq(stack_parse_size("8m"), 8u << 20);
	ck_assert_uint_eq(stack_parse_size("8M"), 8u << 20);
	ck_assert_uint_eq(stack_parse_size("0008M"), 8u << 20);
	ck_assert_uint_eq(stack_parse_size("18446744073709551615"), SIZE_MAX);
}
END_TEST

START_TEST(stack_size_bad)
{
	static const char *bad[] = {
		"", "k", "M", "64kk", "64 k", "64G", "0x1000", "1e6", "64k ",
		/* strtoull took these: a sign, space, and values wrapped by
		 * the shift ("-1" was SIZE_MAX, then rounded to a page: 0) */
		"-1", "-16384", "+65536", " 65536", "\n7",
		"18446744073709551616", "18014398509482000k",
		"17592186044416m",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(stack_parse_size(bad[i]) == 0,
			      "stack_parse_size(\"%s\") = %zu", bad[i],
			      stack_parse_size(bad[i]));
}
END_TEST

START_TEST(max_threads)
{
	ck_assert_int_eq(threadlimit_parse("1"), 1);
	ck_assert_int_eq(threadlimit_parse("10000"), 10000);
	ck_assert_int_eq(threadlimit_parse("2147483647"), INT32_MAX);
	ck_assert_int_eq(threadlimit_parse(""), -1);
	ck_assert_int_eq(threadlimit_parse("0"), -1);
	ck_assert_int_eq(threadlimit_parse("-5"), -1);
	ck_assert_int_eq(threadlimit_parse("2147483648"), -1);
	ck_assert_int_eq(threadlimit_parse("99999999999999999999"), -1);
	ck_assert_int_eq(threadlimit_parse("12x"), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("envparse");
	TCase *tc = tcase_create("envparse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, stack_size_good);
	tcase_add_test(tc, stack_size_bad);
	tcase_add_test(tc, max_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
