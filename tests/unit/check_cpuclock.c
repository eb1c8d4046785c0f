/*
 * Unit tests for core/cpuclock.c: a goroutine's CPU clock counts the
 * runs its M ran it, only once counting is on; a run in progress when it
 * is turned on counts from then (from the thread's start for an M's
 * first run); a run begins where the M's last one ended; readers on
 * other threads never see the clock go back; the user/system split
 * never goes back either.
 *
 * No runtime is started: each test makes its own struct m, whose thread
 * is the test's (or one it starts), and struct g objects. Each test runs
 * in a child of its own (check's fork mode): cpuclock_on starts false.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../../core/cpuclock.h"
#include "../../core/real.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"

#define MS 1000000LL

static long long self_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void burn(long long ns)
{
	long long end = self_ns() + ns;
	while (self_ns() < end)
		;
}

static void m_init(struct m *mp)
{
	memset(mp, 0, sizeof *mp);
	mp->tid = (pid_t)syscall(SYS_gettid);
	sched.allms = mp;
}

static void run(struct m *mp, struct g *gp)
{
	mp->curg = gp;
	cpuclock_switch_in(mp, gp);
}

static void stop(struct m *mp, struct g *gp)
{
	cpuclock_switch_out(mp, gp);
	mp->curg = NULL;
}

START_TEST(off_counts_nothing)
{
	struct m m;
	struct g g = { 0 };

	m_init(&m);
	run(&m, &g);
	burn(5 * MS);
	stop(&m, &g);
	ck_assert_uint_eq(atomic_load(&m.runseq), 2);
	ck_assert_ptr_null(g.cpu_m);
	ck_assert_int_eq(cpuclock_read(&g), 0);
}
END_TEST

START_TEST(counts_its_runs_only)
{
	struct m m;
	struct g g = { 0 };

	m_init(&m);
	cpuclock_enable();
	run(&m, &g);
	burn(20 * MS);
	int64_t running = cpuclock_read(&g);
	ck_assert_int_ge(running, 20 * MS);
	stop(&m, &g);
	int64_t done = cpuclock_read(&g);
	ck_assert_int_ge(done, running);
	ck_assert_int_lt(done, 21 * MS);
	/* Not running: the M's time is another goroutine's. */
	burn(10 * MS);
	ck_assert_int_eq(cpuclock_read(&g), done);
	/* That M time was its search for work (findrunnable says so),
	 * not the next goroutine's. */
	m.cpu_last_seq = 0;
	run(&m, &g);
	burn(10 * MS);
	stop(&m, &g);
	ck_assert_int_ge(cpuclock_read(&g), done + 10 * MS);
	ck_assert_int_lt(cpuclock_read(&g), done + 11 * MS);
}
END_TEST

START_TEST(begins_where_last_ended)
{
	struct m m;
	struct g a = { 0 }, b = { 0 };

	m_init(&m);
	cpuclock_enable();
	run(&m, &a);
	stop(&m, &a);
	run(&m, &b);
	ck_assert_int_eq(b.cpu_since, m.cpu_last);
	stop(&m, &b);
}
END_TEST

/* Turned on while a run is in progress: it counts from then. */
START_TEST(enable_mid_run)
{
	struct m m;
	struct g a = { 0 }, g = { 0 };

	m_init(&m);
	run(&m, &a); /* the M's first run */
	stop(&m, &a);
	run(&m, &g);
	burn(10 * MS);
	cpuclock_enable();
	ck_assert_ptr_eq(g.cpu_m, &m);
	burn(10 * MS);
	stop(&m, &g);
	ck_assert_int_ge(cpuclock_read(&g), 10 * MS);
	ck_assert_int_lt(cpuclock_read(&g), 15 * MS);
	ck_assert_int_eq(cpuclock_read(&a), 0);
}
END_TEST

/* ...and the M's first run counts from the thread's start. */
START_TEST(enable_first_run)
{
	struct m m;
	struct g g = { 0 };

	m_init(&m);
	run(&m, &g);
	burn(10 * MS);
	cpuclock_enable();
	stop(&m, &g);
	ck_assert_int_ge(cpuclock_read(&g), 10 * MS);
}
END_TEST

/* An M switching between two goroutines while another thread reads one
 * of their clocks: never backwards, and in the end what it ran. */
static struct m rm;
static struct g rg[2];
static atomic_int rdone;

static void *m_thread(void *unused)
{
	(void)unused;
	m_init(&rm);
	cpuclock_enable();
	for (int i = 0; i < 4000; i++) {
		struct g *gp = &rg[i & 1];
		run(&rm, gp);
		burn(10000);
		stop(&rm, gp);
	}
	atomic_store(&rdone, 1);
	return NULL;
}

START_TEST(readers_never_go_back)
{
	pthread_t t;
	int64_t last = 0;
	long reads = 0;

	pthread_create(&t, NULL, m_thread, NULL);
	while (!atomic_load(&rdone)) {
		int64_t v = cpuclock_read(&rg[0]);
		ck_assert_int_ge(v, last);
		last = v;
		reads++;
	}
	pthread_join(t, NULL);
	ck_assert_int_gt(reads, 0);
	/* 2000 runs of at least 10 us each. */
	ck_assert_int_ge(cpuclock_read(&rg[0]), 20 * MS);
	ck_assert_ptr_null(rg[0].cpu_m);
}
END_TEST

START_TEST(split_never_goes_back)
{
	struct g g = { 0 };
	int64_t u, s;

	cpuclock_split(&g, 100, 50, 50, &u, &s);
	ck_assert_int_eq(u, 50);
	ck_assert_int_eq(s, 50);
	/* The process turned all user: the system part keeps its 50. */
	cpuclock_split(&g, 120, 100, 0, &u, &s);
	ck_assert_int_eq(s, 50);
	ck_assert_int_eq(u, 70);
	/* All system now: the user part keeps its 70. */
	cpuclock_split(&g, 130, 0, 100, &u, &s);
	ck_assert_int_eq(u, 70);
	ck_assert_int_eq(s, 60);
	/* Less than reported before: nothing moves. */
	cpuclock_split(&g, 10, 1, 1, &u, &s);
	ck_assert_int_eq(u + s, 130);
	/* No process time at all yet: all user. */
	struct g h = { 0 };
	cpuclock_split(&h, 40, 0, 0, &u, &s);
	ck_assert_int_eq(u, 40);
	ck_assert_int_eq(s, 0);
}
END_TEST

static Suite *cpuclock_suite(void)
{
	Suite *s = suite_create("cpuclock");
	TCase *tc = tcase_create("runs");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, off_counts_nothing);
	tcase_add_test(tc, counts_its_runs_only);
	tcase_add_test(tc, begins_where_last_ended);
	tcase_add_test(tc, enable_mid_run);
	tcase_add_test(tc, enable_first_run);
	tcase_add_test(tc, readers_never_go_back);
	tcase_add_test(tc, split_never_goes_back);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cpuclock_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
