/*
 * Unit tests for core/lock.c's notes and their kicks: a kick (how the
 * runtime tells an idle M to read the idle mask again) never wakes a
 * note, so note_sleep sleeps on through any number of them, and
 * note_sleep_until_kick reports a kick, a wakeup or its deadline, with
 * no wakeup lost among the kicks. And its spinlocks: mutual exclusion
 * among more threads than CPUs (holders preempted by the kernel), and a
 * waiter that outlasts its spin (it sleeps) still gets the lock once it is
 * free, without using a CPU the while.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "../../core/lock.h"
#include "../../core/runtime.h"

static struct note n;
static atomic_bool returned;

static void *sleeper(void *arg)
{
	(void)arg;
	note_sleep(&n);
	atomic_store(&returned, true);
	return NULL;
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	nanosleep(&ts, NULL);
}

START_TEST(kicks_do_not_wake)
{
	pthread_t t;

	note_clear(&n);
	atomic_store(&returned, false);
	ck_assert_int_eq(pthread_create(&t, NULL, sleeper, NULL), 0);
	for (int i = 0; i < 1000; i++)
		note_kick(&n);
	pause_ms(50);
	ck_assert(!atomic_load(&returned));
	ck_assert(!note_woken(&n));
	ck_assert_uint_eq(note_kicks(&n), 1000);
	note_wakeup(&n);
	pthread_join(t, NULL);
	ck_assert(atomic_load(&returned));
	/* a kick after the wakeup leaves it woken */
	note_kick(&n);
	ck_assert(note_woken(&n));
	note_sleep(&n);
	note_clear(&n);
	ck_assert(!note_woken(&n));
	ck_assert_uint_eq(note_kicks(&n), 0);
}
END_TEST

START_TEST(until_kick_answers)
{
	note_clear(&n);
	/* deadline passed: false */
	ck_assert(!note_sleep_until_kick(&n, nanotime() + 1000000, 0));
	/* a kick since `seen`: true, not woken */
	note_kick(&n);
	ck_assert(note_sleep_until_kick(&n, -1, 0));
	ck_assert(!note_woken(&n));
	/* seen up to date: sleeps to the deadline */
	ck_assert(!note_sleep_until_kick(&n, nanotime() + 1000000,
					 note_kicks(&n)));
	/* woken: true */
	note_wakeup(&n);
	ck_assert(note_sleep_until_kick(&n, -1, note_kicks(&n)));
	ck_assert(note_woken(&n));
	/* note_sleep_ns: a kick is no wakeup */
	note_clear(&n);
	note_kick(&n);
	ck_assert(!note_sleep_ns(&n, 1000000));
}
END_TEST

static atomic_bool stop;

static void *kicker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		note_kick(&n);
	return NULL;
}

/* An idle M's loop: sleep, and on each kick sleep on, until woken. */
static void *idle_loop(void *arg)
{
	(void)arg;
	uint32_t seen = note_kicks(&n);
	while (note_sleep_until_kick(&n, -1, seen) && !note_woken(&n))
		seen = note_kicks(&n);
	return NULL;
}

START_TEST(no_wakeup_lost_among_kicks)
{
	pthread_t k, s;

	ck_assert_int_eq(pthread_create(&k, NULL, kicker, NULL), 0);
	for (int round = 0; round < 2000; round++) {
		note_clear(&n);
		ck_assert_int_eq(pthread_create(&s, NULL, idle_loop, NULL), 0);
		note_wakeup(&n);
		pthread_join(s, NULL);
	}
	atomic_store(&stop, true);
	pthread_join(k, NULL);
}
END_TEST

static struct spinlock sl;
static long sl_count;
static atomic_int sl_inside;
#define SL_THREADS 8
#define SL_ROUNDS 200000

static void *sl_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < SL_ROUNDS; i++) {
		spin_lock(&sl);
		ck_assert_int_eq(atomic_fetch_add(&sl_inside, 1), 0);
		sl_count++;
		atomic_fetch_sub(&sl_inside, 1);
		spin_unlock(&sl);
	}
	return NULL;
}

START_TEST(spinlock_excludes)
{
	pthread_t t[SL_THREADS];

	sl_count = 0;
	for (int i = 0; i < SL_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, sl_worker, NULL),
				 0);
	for (int i = 0; i < SL_THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(sl_count, (long)SL_THREADS * SL_ROUNDS);
}
END_TEST

static atomic_bool sl_got;

static void *sl_waiter(void *arg)
{
	(void)arg;
	spin_lock(&sl);
	atomic_store(&sl_got, true);
	spin_unlock(&sl);
	return NULL;
}

static double thread_cpu_ms(pthread_t t)
{
	clockid_t c;
	struct timespec ts;
	ck_assert_int_eq(pthread_getcpuclockid(t, &c), 0);
	ck_assert_int_eq(clock_gettime(c, &ts), 0);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

START_TEST(spinlock_long_hold)
{
	pthread_t w;

	atomic_store(&sl_got, false);
	spin_lock(&sl);
	ck_assert_int_eq(pthread_create(&w, NULL, sl_waiter, NULL), 0);
	pause_ms(200);
	ck_assert(!atomic_load(&sl_got));
	/* It spins ~20 us, then sleeps 20 us at a time: well under half a
	 * CPU over the hold (spinning alone would take all of it). */
	double cpu = thread_cpu_ms(w);
	spin_unlock(&sl);
	pthread_join(w, NULL);
	ck_assert(atomic_load(&sl_got));
	ck_assert_msg(cpu < 100, "waiter used %.1f ms of CPU in 200 ms", cpu);
}
END_TEST

static Suite *note_suite(void)
{
	Suite *s = suite_create("note");
	TCase *tc = tcase_create("kicks");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, kicks_do_not_wake);
	tcase_add_test(tc, until_kick_answers);
	tcase_add_test(tc, no_wakeup_lost_among_kicks);
	suite_add_tcase(s, tc);
	tc = tcase_create("spinlock");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, spinlock_excludes);
	tcase_add_test(tc, spinlock_long_hold);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(note_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
