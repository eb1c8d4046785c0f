/*
 * Unit tests for the runtime's formatter and number parser (core/print.c,
 * core/number.c): vsnprint must give what glibc's snprintf gives for
 * every directive of its subset, since goshim's messages are compared
 * byte for byte (tests/run/diag-check.py, tools-check), and cut where
 * snprintf cuts; parse_uint takes digits only and refuses overflow.
 */
#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../../core/number.h"
#include "../../core/print.h"

/* Both formatters on the same arguments, whole and cut to `cut` bytes
 * (volatile: gcc would see the cut coming and refuse the build). */
static volatile size_t cut = 5;
#define SAME(...)                                                          \
	do {                                                               \
		char want[256], got[256];                                  \
		int wn = snprintf(want, sizeof want, __VA_ARGS__);         \
		size_t gn = snprint(got, sizeof got, __VA_ARGS__);         \
		ck_assert_str_eq(got, want);                               \
		ck_assert_uint_eq(gn, (size_t)wn);                         \
		wn = snprintf(want, cut, __VA_ARGS__);                     \
		gn = snprint(got, cut, __VA_ARGS__);                       \
		ck_assert_str_eq(got, want);                               \
		ck_assert_uint_eq(gn, (size_t)wn);                         \
	} while (0)

START_TEST(like_snprintf)
{
	SAME("plain text");
	SAME("%d %d %d %d", 0, 7, -7, INT_MIN);
	SAME("%u %u", 0u, UINT_MAX);
	SAME("%ld %lx %lx", LONG_MIN, 0ul, 0xdeadbeeful);
	SAME("%lld %lld %llu", LLONG_MAX, LLONG_MIN, ULLONG_MAX);
	SAME("%#llx %#llx %#llx", 0ull, 1ull, ULLONG_MAX);
	SAME("%zu", SIZE_MAX);
	SAME("[%s] [%s]", "", "goroutine");
	SAME("%.3s|%.0s|%.40s", "abcdef", "abc", "short");
	SAME("%.*s|%.*s", 2, "abcdef", 64, "abc");
	SAME("100%% %s", "done");
	SAME("goroutine %llu [%s, %lld minutes]:%s\n", 42ull, "semacquire",
	     3ll, " locked");
}
END_TEST

START_TEST(int_digits)
{
	char buf[32];

	*print_int(buf, 0) = '\0';
	ck_assert_str_eq(buf, "0");
	*print_int(buf, -42) = '\0';
	ck_assert_str_eq(buf, "-42");
	*print_int(buf, INT64_MIN) = '\0';
	ck_assert_str_eq(buf, "-9223372036854775808");
	*print_int(buf, INT64_MAX) = '\0';
	ck_assert_str_eq(buf, "9223372036854775807");
}
END_TEST

/* parse_uint over the whole of s: 1 and *v when all of s is digits. */
static int whole(const char *s, unsigned base, uint64_t max, uint64_t *v)
{
	const char *end = s + strlen(s);

	return parse_uint(&s, end, base, max, v) && s == end;
}

START_TEST(numbers)
{
	uint64_t v = 99;
	const char *s = "123abc", *p = s;

	ck_assert(whole("0", 10, UINT64_MAX, &v) && v == 0);
	ck_assert(whole("18446744073709551615", 10, UINT64_MAX, &v) &&
		  v == UINT64_MAX);
	ck_assert(whole("2147483647", 10, INT_MAX, &v) && v == INT_MAX);
	ck_assert(whole("ffffffffffffffff", 16, UINT64_MAX, &v) &&
		  v == UINT64_MAX);
	ck_assert(whole("00ff", 16, UINT64_MAX, &v) && v == 255);
	/* a prefix: *s stops at the first byte that is no digit */
	ck_assert(parse_uint(&p, s + 6, 10, UINT64_MAX, &v) && v == 123 &&
		  p == s + 3);
	/* end bounds it: no byte at or past end is read */
	p = s;
	ck_assert(parse_uint(&p, s + 2, 10, UINT64_MAX, &v) && v == 12 &&
		  p == s + 2);
	/* refusals leave *s and *v as they were */
	v = 99;
	p = s + 3;
	ck_assert(!parse_uint(&p, s + 6, 10, UINT64_MAX, &v));
	ck_assert(p == s + 3 && v == 99);
	ck_assert(!whole("", 10, UINT64_MAX, &v) && v == 99);
	ck_assert(!whole("18446744073709551616", 10, UINT64_MAX, &v));
	ck_assert(!whole("2147483648", 10, INT_MAX, &v));
	ck_assert(!whole("10000000000000000", 16, UINT64_MAX, &v));
	ck_assert(!whole("-1", 10, UINT64_MAX, &v));
	ck_assert(!whole("+1", 10, UINT64_MAX, &v));
	ck_assert(!whole(" 1", 10, UINT64_MAX, &v));
	ck_assert(!whole("FF", 16, UINT64_MAX, &v));
	ck_assert(v == 99);
	ck_assert(!whole("0x10", 16, UINT64_MAX, &v)); /* "0", then 'x' */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("print");
	TCase *tc = tcase_create("print");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, like_snprintf);
	tcase_add_test(tc, int_digits);
	tcase_add_test(tc, numbers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
