/*
 * Unit tests for core/gomaxprocs.c: the env parser, the default rule, the
 * affinity count, and the cgroup walk over fake /proc + cgroupfs trees in
 * tests/unit/fixtures/cgroup/<case>/ (proc/self/{cgroup,mountinfo} and the
 * mounted trees under the same directory). Run from the repository root.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../../core/gomaxprocs.h"

#define FIXTURES "tests/unit/fixtures/cgroup/"

/* ---- gomaxprocs_parse ---------------------------------------------------- */

START_TEST(parse_good)
{
	ck_assert_int_eq(gomaxprocs_parse("1"), 1);
	ck_assert_int_eq(gomaxprocs_parse("4"), 4);
	ck_assert_int_eq(gomaxprocs_parse("007"), 7);
	ck_assert_int_eq(gomaxprocs_parse("1024"), 1024);
	ck_assert_int_eq(gomaxprocs_parse("5000"), 5000); /* capped later */
	ck_assert_int_eq(gomaxprocs_parse("2147483647"), INT_MAX);
}
END_TEST

START_TEST(parse_bad)
{
	static const char *bad[] = {
		"",  "0",  "00",   "-1",  "+4",  "3x",	 " 4",
		"4 ", "4\n", "abc", "0x10", "1e3", "2147483648",
		"99999999999999999999999999",
	};

	ck_assert_int_eq(gomaxprocs_parse(NULL), -1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(gomaxprocs_parse(bad[i]) == -1,
			      "gomaxprocs_parse(\"%s\") accepted", bad[i]);
}
END_TEST

/* ---- gomaxprocs_default -------------------------------------------------- */

START_TEST(default_rule)
{
	ck_assert_int_eq(gomaxprocs_default(8, 0), 8);	/* no limit */
	ck_assert_int_eq(gomaxprocs_default(1, 0), 1);
	ck_assert_int_eq(gomaxprocs_default(8, 1), 2);	/* floor of 2 */
	ck_assert_int_eq(gomaxprocs_default(1, 1), 1);	/* but never > A */
	ck_assert_int_eq(gomaxprocs_default(8, 3), 3);
	ck_assert_int_eq(gomaxprocs_default(4, 16), 4); /* limit > A */
	ck_assert_int_eq(gomaxprocs_default(4, 4), 4);
}
END_TEST

/* ---- gomaxprocs_affinity_count ------------------------------------------- */

START_TEST(affinity_matches_libc)
{
	cpu_set_t set;

	ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
	ck_assert_int_ge(gomaxprocs_affinity_count(), 1);
	ck_assert_int_eq(gomaxprocs_affinity_count(), CPU_COUNT(&set));
}
END_TEST

START_TEST(affinity_follows_mask)
{
	cpu_set_t saved, set;
	int first = -1;

	ck_assert_int_eq(sched_getaffinity(0, sizeof saved, &saved), 0);
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &saved))
			first = i;
	CPU_ZERO(&set);
	CPU_SET(first, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
	ck_assert_int_eq(gomaxprocs_affinity_count(), 1);
	ck_assert_int_eq(sched_setaffinity(0, sizeof saved, &saved), 0);
}
END_TEST

/* ---- the quota file parsers ---------------------------------------------- */

#define S(lit) lit, sizeof lit - 1

START_TEST(quota_files)
{
	ck_assert_int_eq(cg_cpu_max(S("max 100000\n")), 0);
	ck_assert_int_eq(cg_cpu_max(S("150000 100000\n")), 2);
	ck_assert_int_eq(cg_cpu_max(S("50000 100000")), 1);
	ck_assert_int_eq(cg_cpu_max(S("150000 100000\n\n")), 0);
	ck_assert_int_eq(cg_cpu_max(S("150000  100000")), 0);
	ck_assert_int_eq(cg_cpu_max(S("0 100000")), 0);
	ck_assert_int_eq(cg_cpu_max(S("100000 0")), 0);
	/* the length, not a NUL, ends the content */
	ck_assert_int_eq(cg_cpu_max(S("150000 100000\0junk")), 0);
	ck_assert_int_eq(cg_cpu_max("150000 1000007", 13), 2);
	/* fuzz_quota: 64-bit maxima were refused (overflow check off by
	 * the last digit), so "no limit" came back */
	ck_assert_int_eq(cg_cpu_max(S("22 0000000000000018446744073709551615")),
			 1);
	ck_assert_int_eq(cg_cpu_max(S("18446744073709551615 1")), INT_MAX);
	ck_assert_int_eq(cg_cpu_max(S("18446744073709551616 1")), 0);

	ck_assert_int_eq(cg_cfs(S("-1\n"), S("100000\n")), 0);
	ck_assert_int_eq(cg_cfs(S("250000\n"), S("100000\n")), 3);
	ck_assert_int_eq(cg_cfs(S("250000"), S("")), 0);
	ck_assert_int_eq(cg_cfs(S(""), S("100000")), 0);
	ck_assert_int_eq(cg_cfs(S("1"), S("18446744073709551615")), 1);
}
END_TEST

/* ---- gomaxprocs_cgroup_limit on fixture trees ---------------------------- */

static const struct {
	const char *dir;
	int want;
	const char *why;
} cases[] = {
	{ "v2_leaf", 1, "leaf 0.5 cpu under a 1.5 cpu parent" },
	{ "v2_parent", 3, "leaf max; parent 2.5, grandparent 4: walks up" },
	{ "v2_max", 0, "max at every level" },
	{ "v1", 2, "cpu,cpuacct: leaf -1, parent 2; cpuset decoy ignored" },
	{ "hybrid", 2, "v1 cpu 1.5 + empty cgroup2; cpuacct decoy ignored" },
	{ "container", 3, "mount ROOT is our cgroup; stops at mount point" },
	{ "outside", 0, "cgroup not below the mount's ROOT" },
	{ "dotdot", 0, "cgroup outside our namespace (/../x)" },
	{ "escaped", 3, "mount point with \\040, cgroup path with a space" },
	{ "two_mounts", 2, "mount with the shorter ROOT shows the quota" },
	{ "both", 3, "v2 has cpu.max: preferred over a v1 cpu line" },
	{ "malformed_v2", 3, "broken files skipped, ancestor 2.5 counts" },
	{ "malformed_v1", 0, "nothing parseable" },
	{ "empty", 0, "no lines in /proc/self/cgroup" },
	{ "does_not_exist", 0, "no /proc at all" },
};

START_TEST(cgroup_fixture)
{
	char proc[256], fs[256];

	snprintf(fs, sizeof fs, FIXTURES "%s", cases[_i].dir);
	snprintf(proc, sizeof proc, FIXTURES "%s/proc", cases[_i].dir);
	ck_assert_msg(gomaxprocs_cgroup_limit(proc, fs) == cases[_i].want,
		      "%s (%s): got %d, want %d", cases[_i].dir, cases[_i].why,
		      gomaxprocs_cgroup_limit(proc, fs), cases[_i].want);
}
END_TEST

/* A mountinfo far larger than any buffer, with an over-long line just
 * before the one that matters and no final newline: the reader streams. */
START_TEST(cgroup_long_mountinfo)
{
	char tmp[] = "/tmp/check_gomaxprocs.XXXXXX", path[512], fs[512];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(path, sizeof path, "%s/self", tmp);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/self/cgroup", tmp);
	f = fopen(path, "w");
	fputs("0::/app.slice/job.scope\n", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/self/mountinfo", tmp);
	f = fopen(path, "w");
	for (int i = 0; i < 3000; i++)
		fprintf(f, "%d 23 0:%d / /var/lib/docker/overlay2/%064d/merged "
			   "rw,relatime - overlay overlay rw\n", 100 + i, i, i);
	fputs("9 23 0:9 / /over rw - overlay overlay rw,lowerdir=", f);
	for (int i = 0; i < 20000; i++)
		fputc('a' + i % 26, f);
	fputs("\n30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw", f);
	fclose(f);

	/* The cgroup tree of v2_leaf: 0.5 under 1.5 -> 1. */
	snprintf(fs, sizeof fs, FIXTURES "v2_leaf");
	ck_assert_int_eq(gomaxprocs_cgroup_limit(tmp, fs), 1);

	snprintf(path, sizeof path, "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* ---- kept quota files ---------------------------------------------------- */

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void close_fd(int fd)
{
	close(fd);
}

static const struct kept_ops plain = { open_ro, close_fd };

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	f = fopen(path, "w"); /* same file, new content, as cgroupfs */
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The files stay open and are read again from their start: a new quota
 * is seen, at the leaf and at a kept ancestor; levels past CG_KEEP count
 * as read at start-up; a kept number closed behind the runtime's back
 * and given to another file is not read, its level keeps its last value. */
START_TEST(cgroup_follow)
{
	char tmp[] = "/tmp/check_gomaxprocs.XXXXXX", path[1024], cmd[1100];
	struct cg_files cg;
	int leaf = CG_KEEP + 2; /* levels l1 .. l10 */
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(path, sizeof path, "%s/self", tmp);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	len = (size_t)snprintf(path, sizeof path, "%s/cg", tmp);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	put_file(tmp, "self/mountinfo",
		 "30 23 0:26 / /cg rw - cgroup2 cgroup2 rw\n");
	char cgline[256] = "0::";
	for (int i = 1; i <= leaf; i++) {
		len += (size_t)snprintf(path + len, sizeof path - len, "/l%d", i);
		ck_assert_int_eq(mkdir(path, 0700), 0);
		put_file(path, "cpu.max", "max 100000\n");
		snprintf(cgline + strlen(cgline), sizeof cgline - strlen(cgline),
			 "/l%d", i);
	}
	strcat(cgline, "\n");
	put_file(tmp, "self/cgroup", cgline);
	char *leafdir = strdup(path), *l3 = strdup(path);
	*strstr(l3, "/l4/") = '\0';
	char *l1 = strdup(path);
	*strstr(l1, "/l2/") = '\0';

	/* l1 (past CG_KEEP) 2.5 CPUs, read once */
	put_file(l1, "cpu.max", "250000 100000\n");
	cg_files_open(&cg, tmp, tmp, &plain);
	ck_assert_int_eq(cg.v2, 1);
	ck_assert_int_eq(cg.n, CG_KEEP);
	ck_assert_int_eq(cg_files_limit(&cg), 3);
	put_file(l1, "cpu.max", "100000 100000\n");
	ck_assert_int_eq(cg_files_limit(&cg), 3);
	put_file(l3, "cpu.max", "150000 100000\n"); /* kept: followed */
	ck_assert_int_eq(cg_files_limit(&cg), 2);
	put_file(leafdir, "cpu.max", "100000 100000\n");
	ck_assert_int_eq(cg_files_limit(&cg), 1);
	put_file(leafdir, "cpu.max", "max 100000\n");
	ck_assert_int_eq(cg_files_limit(&cg), 2);
	put_file(leafdir, "cpu.max", "50000 100000\n");
	ck_assert_int_eq(cg_files_limit(&cg), 1);

	/* The leaf's number now names another file, saying "max". */
	snprintf(path, sizeof path, "%s/decoy", tmp);
	put_file(tmp, "decoy", "max 100000\n");
	int decoy = open(path, O_RDONLY);
	ck_assert_int_ge(decoy, 0);
	ck_assert_int_eq(dup2(decoy, cg.lv[0].quota.fd), cg.lv[0].quota.fd);
	close(decoy);
	ck_assert_int_eq(cg_files_limit(&cg), 1);

	cg_files_close(&cg, &plain);
	free(leafdir);
	free(l3);
	free(l1);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- gomaxprocs_compute -------------------------------------------------- */

/* Run gomaxprocs_compute with stderr captured; returns its result. */
static int compute_capture(char *err, size_t cap)
{
	FILE *f = tmpfile();
	int saved = dup(2), n;
	size_t len;

	struct cg_files cg;

	ck_assert_ptr_nonnull(f);
	dup2(fileno(f), 2);
	n = gomaxprocs_compute(&cg, &plain);
	dup2(saved, 2);
	/* It follows the quota unless the environment fixed the count. */
	ck_assert_int_eq(gomaxprocs_update(&cg),
			 cg.follow ? n : -1);
	cg_files_close(&cg, &plain);
	close(saved);
	rewind(f);
	len = fread(err, 1, cap - 1, f);
	err[len] = '\0';
	fclose(f);
	return n;
}

static int real_default(void)
{
	return gomaxprocs_default(gomaxprocs_affinity_count(),
				  gomaxprocs_cgroup_limit("/proc", ""));
}

START_TEST(compute_env)
{
	char err[512], want[512];

	unsetenv("GOMAXPROCS");
	ck_assert_int_eq(compute_capture(err, sizeof err), real_default());
	ck_assert_str_eq(err, "");

	setenv("GOMAXPROCS", "3", 1);
	ck_assert_int_eq(compute_capture(err, sizeof err), 3);
	ck_assert_str_eq(err, "");

	setenv("GOMAXPROCS", "5000", 1);
	ck_assert_int_eq(compute_capture(err, sizeof err), GOMAXPROCS_MAX);
	ck_assert_str_eq(err,
			 "goshim: GOMAXPROCS=5000 is more than 1024; using 1024\n");

	setenv("GOMAXPROCS", "abc", 1);
	ck_assert_int_eq(compute_capture(err, sizeof err), real_default());
	snprintf(want, sizeof want,
		 "goshim: GOMAXPROCS=\"abc\" is not a positive integer; "
		 "using %d\n",
		 real_default());
	ck_assert_str_eq(err, want);

	setenv("GOMAXPROCS", "", 1);
	ck_assert_int_eq(compute_capture(err, sizeof err), real_default());
	snprintf(want, sizeof want,
		 "goshim: GOMAXPROCS=\"\" is not a positive integer; "
		 "using %d\n",
		 real_default());
	ck_assert_str_eq(err, want);

	/* A newline in the value must not break the message into two lines. */
	setenv("GOMAXPROCS", "2\nx", 1);
	ck_assert_int_eq(compute_capture(err, sizeof err), real_default());
	ck_assert_ptr_eq(strchr(err, '\n'), err + strlen(err) - 1);
}
END_TEST

static Suite *gomaxprocs_suite(void)
{
	Suite *s = suite_create("gomaxprocs");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, parse_good);
	tcase_add_test(tc, parse_bad);
	tcase_add_test(tc, default_rule);
	tcase_add_test(tc, affinity_matches_libc);
	tcase_add_test(tc, affinity_follows_mask);
	suite_add_tcase(s, tc);

	tc = tcase_create("cgroup");
	tcase_add_test(tc, quota_files);
	tcase_add_loop_test(tc, cgroup_fixture, 0,
			    (int)(sizeof cases / sizeof cases[0]));
	tcase_add_test(tc, cgroup_long_mountinfo);
	tcase_add_test(tc, cgroup_follow);
	suite_add_tcase(s, tc);

	tc = tcase_create("compute");
	tcase_add_test(tc, compute_env);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(gomaxprocs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
