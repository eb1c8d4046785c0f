/*
 * Unit tests for core/procparse.c: /proc status fields, stat lines and
 * maps lines, from real lines, the kernel's own files, and the inputs the
 * fuzz harnesses (tests/fuzz) found wrong.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "../../core/procparse.h"

#define S(lit) lit, sizeof lit - 1
#define SIGURG_BIT ((uint64_t)1 << (SIGURG - 1))

/* A thread of cat that blocks SIGURG (field 32) with nothing pending
 * (field 31). */
static const char stat_line[] =
	"6770 (cat) R 6765 6765 1982 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 "
	"0 1932509 3133440 415 18446744073709551615 94059302211584 "
	"94059302231465 140723360211488 0 0 0 4194304 0 0 0 0 0 17 1 0 0 0 "
	"0 0\n";

START_TEST(stat_blocked_is_field_32)
{
	uint64_t blocked = 0;

	ck_assert_int_eq(proc_stat_state(S(stat_line), &blocked), 'R');
	ck_assert_uint_eq(blocked, SIGURG_BIT);
}
END_TEST

START_TEST(stat_comm_with_parens)
{
	uint64_t blocked = 0;
	static const char l[] = "1234 (a) b) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 "
				"20 0 1 0 1 1 1 1 1 1 1 0 0 0 7 0 0 0\n";

	ck_assert_int_eq(proc_stat_state(S(l), &blocked), 'S');
	ck_assert_uint_eq(blocked, 7);
}
END_TEST

START_TEST(stat_malformed)
{
	uint64_t blocked = 0;

	ck_assert_int_eq(proc_stat_state(S(""), &blocked), 0);
	ck_assert_int_eq(proc_stat_state(S("1 (x)"), &blocked), 0);
	ck_assert_int_eq(proc_stat_state(S("1 (x) "), &blocked), 0);
	ck_assert_int_eq(proc_stat_state(S("1 (x)S"), &blocked), 0);
	/* cut before 'blocked': the state, and every signal blocked */
	ck_assert_int_eq(proc_stat_state(S("1 (x) D 1 2"), &blocked), 'D');
	ck_assert_uint_eq(blocked, ~(uint64_t)0);
	/* the line stops where len says, not at a NUL */
	ck_assert_int_eq(proc_stat_state(stat_line, 5, &blocked), 0);
}
END_TEST

/* This thread's own line, with SIGURG blocked and then not. */
START_TEST(stat_live)
{
	char buf[1024];
	sigset_t urg, old;
	uint64_t blocked;

	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	for (int on = 1; on >= 0; on--) {
		pthread_sigmask(on ? SIG_BLOCK : SIG_UNBLOCK, &urg, &old);
		int fd = open("/proc/thread-self/stat", O_RDONLY);
		ck_assert_int_ge(fd, 0);
		ssize_t n = read(fd, buf, sizeof buf);
		close(fd);
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(proc_stat_state(buf, (size_t)n, &blocked),
				 'R');
		ck_assert_uint_eq(blocked & SIGURG_BIT, on ? SIGURG_BIT : 0);
	}
}
END_TEST

START_TEST(status_fields)
{
	static const char st[] = "Name:\tcat\nUmask:\t0022\nState:\tR (running)\n"
				 "FDSize:\t256\nThreads:\t1\n"
				 "Threads_x:\t9\nSigQ:\t0/63405";

	ck_assert_int_eq(proc_status_field(S(st), "FDSize:"), 256);
	ck_assert_int_eq(proc_status_field(S(st), "Threads:"), 1);
	ck_assert_int_eq(proc_status_field(S(st), "Name:"), -1);
	ck_assert_int_eq(proc_status_field(S(st), "Missing:"), -1);
	ck_assert_int_eq(proc_status_field(S("Threads:\t2147483647"),
					   "Threads:"), 2147483647);
	ck_assert_int_eq(proc_status_field(S("Threads:\t2147483648"),
					   "Threads:"), -1);
	ck_assert_int_eq(proc_status_field(S("Threads:"), "Threads:"), -1);
	ck_assert_int_eq(proc_status_field(S("FDSize:\t64"), "FDSize:"), 64);
	/* cut by len inside the number */
	ck_assert_int_eq(proc_status_field("FDSize:\t64", 9, "FDSize:"), 6);
}
END_TEST

START_TEST(status_live)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof buf);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(proc_status_field(buf, (size_t)n, "Threads:"), 1);
	ck_assert_int_ge(proc_status_field(buf, (size_t)n, "FDSize:"), 3);
}
END_TEST

START_TEST(maps_lines)
{
	uintptr_t lo = 0, hi = 0;

	/* HotSpot's code cache; a line's newline is optional */
	ck_assert_int_eq(proc_maps_anon_exec(S("7f46fd400000-7f46fd670000 rwxp 00000000 00:00 0 \n"),
					     &lo, &hi), 1);
	ck_assert_uint_eq(lo, 0x7f46fd400000);
	ck_assert_uint_eq(hi, 0x7f46fd670000);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2000 r-xp 00000000 00:00 0"), &lo, &hi), 1);
	/* a file's code, a named mapping, data, an inode of 10 */
	ck_assert_int_eq(proc_maps_anon_exec(S("7f4704a00000-7f4704a28000 r-xp 00028000 fe:01 1317 "
					       "    /usr/lib/x86_64-linux-gnu/libc.so.6\n"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("7ffd1-7ffd3 r-xp 00000000 00:00 0     [vdso]\n"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2000 rw-p 00000000 00:00 0\n"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2000 r-xs 00000000 00:05 10\n"), &lo, &hi), 0);
	/* malformed: cut short, an empty range, no inode, upper-case hex */
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2000 r-xp 0000"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-1000 r-xp 00000000 00:00 0\n"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2000 r-xp 00000000 00:00 \n"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2A00 r-xp 00000000 00:00 0\n"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-2000 r-x"), &lo, &hi), 0);
	ck_assert_int_eq(proc_maps_anon_exec(S(""), &lo, &hi), 0);
	/* more hex digits than 64 bits hold */
	ck_assert_int_eq(proc_maps_anon_exec(S("1000-10000000000000000 r-xp 00000000 00:00 0\n"), &lo, &hi), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("procparse");
	TCase *tc = tcase_create("procparse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, stat_blocked_is_field_32);
	tcase_add_test(tc, stat_comm_with_parens);
	tcase_add_test(tc, stat_malformed);
	tcase_add_test(tc, stat_live);
	tcase_add_test(tc, status_fields);
	tcase_add_test(tc, status_live);
	tcase_add_test(tc, maps_lines);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
