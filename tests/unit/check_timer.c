/*
 * Unit tests for core/timer.c's per-P timer heaps: timers on several Ps
 * fire in deadline order, the global earliest (timers_next) follows every
 * heap, a timer added on one P is deleted by a caller on another, a heap
 * of thousands with random deletes fires exactly the rest, a dying
 * P's timers move to P0, and a concurrent run (adders and deleters on
 * their own Ps against a thread running every P's timers) loses no timer,
 * fires none twice or after its deletion, and leaves timers_next exact.
 * Also the wait queue list beside struct waiter: highest priority first,
 * FIFO among equals, the tail kept.
 *
 * No runtime is started: the tests make their own Ps, and a fake g0 and M
 * per thread whose P says which heap timer_add uses.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/gomaxprocs.h"
#include "../../core/real.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"
#include "../../core/timer.h"
#include "../../core/waiter.h"

#define NP 3

static struct p *ps[NP];

static void setup(void)
{
	allp = calloc(GOMAXPROCS_MAX, sizeof *allp);
	ck_assert_ptr_nonnull(allp);
	for (int i = 0; i < NP; i++) {
		ps[i] = calloc(1, sizeof *ps[i]);
		ck_assert_ptr_nonnull(ps[i]);
		ps[i]->id = i;
		ps[i]->status = P_RUNNING;
		allp[i] = ps[i];
	}
	atomic_store(&allp_len, NP);
	atomic_store(&gomaxprocs, NP);
	timers_fork_child();
}

/* This thread runs "on g0 of an M that holds pp" (NULL: holds none). */
static __thread struct m fake_m;
static __thread struct g fake_g0;

static void on_p(struct p *pp)
{
	fake_g0.is_g0 = true;
	fake_g0.m = &fake_m;
	fake_m.p = pp;
	g_current = &fake_g0;
}

/* ---- deterministic --------------------------------------------------------- */

static int64_t fired[3000];
static int nfired;

static void record(struct timer *t)
{
	fired[nfired++] = t->when;
}

static int heap_len(struct p *pp)
{
	return pp->timers.len;
}

START_TEST(deadline_order_across_ps)
{
	static const int64_t whens[] = { 50, 10, 40, 20, 30, 60, 15, 45, 5 };
	enum { N = sizeof whens / sizeof whens[0] };
	struct timer t[N];

	nfired = 0;
	for (int i = 0; i < N; i++) {
		on_p(ps[i % NP]);
		timer_add(&t[i], whens[i], record);
	}
	for (int i = 0; i < NP; i++)
		ck_assert_int_eq(heap_len(ps[i]), N / NP);
	ck_assert_int_eq(timers_next(), 5);
	ck_assert_int_eq(timers_run(30), 40);
	ck_assert_int_eq(nfired, 5);
	ck_assert_int_eq(timers_run(100), -1);
	ck_assert_int_eq(nfired, N);
	for (int i = 1; i < N; i++)
		ck_assert_int_lt(fired[i - 1], fired[i]);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_null(atomic_load(&t[i].heap));
}
END_TEST

START_TEST(run_p_runs_only_its_own)
{
	struct timer a, b;

	nfired = 0;
	on_p(ps[1]);
	timer_add(&a, 10, record);
	on_p(ps[2]);
	timer_add(&b, 5, record);
	ck_assert(!timers_run_p(ps[0], 100));
	ck_assert(timers_run_p(ps[1], 100));
	ck_assert_int_eq(nfired, 1);
	ck_assert_int_eq(fired[0], 10);
	ck_assert_int_eq(timers_next(), 5);
	ck_assert(!timers_run_p(ps[2], 4));
	ck_assert(timers_run_p(ps[2], 5));
	ck_assert_int_eq(timers_next(), -1);
}
END_TEST

START_TEST(delete_from_another_p)
{
	struct timer a, b, c;

	nfired = 0;
	on_p(ps[1]);
	timer_add(&a, 5, record);
	timer_add(&c, 9, record);
	on_p(ps[2]);
	timer_add(&b, 7, record);
	ck_assert_int_eq(timers_next(), 5);
	/* The waiter woke on P2: its timer is still on P1's heap. */
	timer_del(&a);
	ck_assert_ptr_null(atomic_load(&a.heap));
	ck_assert_int_eq(heap_len(ps[1]), 1);
	ck_assert_int_eq(heap_len(ps[2]), 1);
	ck_assert_int_eq(timers_next(), 7);
	timer_del(&b);
	ck_assert_int_eq(timers_next(), 9);
	/* Deleting twice, or after it fired, is harmless. */
	timer_del(&b);
	ck_assert_int_eq(timers_run(100), -1);
	ck_assert_int_eq(nfired, 1);
	ck_assert_int_eq(fired[0], 9);
	timer_del(&c);
}
END_TEST

START_TEST(no_p_uses_p0)
{
	struct timer a, b;

	g_current = NULL;
	timer_add(&a, 20, record);
	ck_assert_int_eq(heap_len(ps[0]), 1);
	on_p(NULL); /* an M without a P */
	timer_add(&b, 10, record);
	ck_assert_int_eq(heap_len(ps[0]), 2);
	ck_assert_int_eq(timers_next(), 10);
	timer_del(&a);
	timer_del(&b);
	ck_assert_int_eq(timers_next(), -1);
}
END_TEST

START_TEST(drain_moves_to_p0)
{
	struct timer t[4];

	nfired = 0;
	on_p(ps[2]);
	timer_add(&t[0], 5, record);
	timer_add(&t[1], 15, record);
	timer_add(&t[2], 25, record);
	on_p(ps[0]);
	timer_add(&t[3], 10, record);
	timers_drain(ps[2]);
	ck_assert_int_eq(heap_len(ps[2]), 0);
	ck_assert_int_eq(heap_len(ps[0]), 4);
	ck_assert_int_eq(timers_next(), 5);
	/* Deleted from its new heap, by a caller on yet another P. */
	on_p(ps[1]);
	timer_del(&t[1]);
	ck_assert(timers_run_p(ps[0], 100));
	ck_assert_int_eq(nfired, 3);
	ck_assert_int_eq(fired[0], 5);
	ck_assert_int_eq(fired[1], 10);
	ck_assert_int_eq(fired[2], 25);
	ck_assert_int_eq(timers_next(), -1);
	/* Draining P0 itself, or an empty P, changes nothing. */
	timer_add(&t[0], 7, record);
	timers_drain(ps[2]);
	ck_assert_int_eq(heap_len(ps[1]), 1);
	timers_drain(ps[1]);
	ck_assert_int_eq(heap_len(ps[0]), 1);
	ck_assert_int_eq(timers_next(), 7);
	timer_del(&t[0]);
}
END_TEST

/* Past several growths, with numbers freed and given out again: what
 * fires is exactly what was not deleted, in deadline order. */
START_TEST(big_heap_random_deletes)
{
	enum { N = 3000 };
	static struct timer t[N];
	static bool gone[N];
	unsigned seed = 12345;
	int live = 0;

	nfired = 0;
	on_p(ps[1]);
	for (int round = 0; round < 3; round++) {
		for (int i = round; i < N; i += 3) {
			timer_add(&t[i], 1 + rand_r(&seed) % 100000, record);
			gone[i] = false;
			live++;
		}
		for (int i = 0; i < N; i++) {
			if (atomic_load(&t[i].heap) && rand_r(&seed) % 3 == 0) {
				timer_del(&t[i]);
				gone[i] = true;
				live--;
			}
		}
		ck_assert_int_eq(heap_len(ps[1]), live);
	}
	int64_t min = INT64_MAX;
	for (int i = 0; i < N; i++)
		if (!gone[i] && t[i].when < min)
			min = t[i].when;
	ck_assert_int_eq(timers_next(), min);
	ck_assert_int_eq(timers_run(INT64_MAX - 1), -1);
	ck_assert_int_eq(nfired, live);
	for (int i = 1; i < nfired; i++)
		ck_assert_int_le(fired[i - 1], fired[i]);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_null(atomic_load(&t[i].heap));
}
END_TEST

/* ---- concurrent ------------------------------------------------------------ */

#define PER_THREAD 20000

struct ctimer {
	struct timer t;
	_Atomic int fires;
	_Atomic bool deleted;
};

static _Atomic bool stop;
static _Atomic int64_t clock_now; /* the runner's "now" */
static _Atomic int bad;

static void cfire(struct timer *t)
{
	struct ctimer *c = (struct ctimer *)t;

	if (atomic_load(&c->deleted))
		atomic_fetch_add(&bad, 1);
	atomic_fetch_add(&c->fires, 1);
}

/* Adds timers on its own P, due a little after the runner's clock, and
 * deletes every other one (sometimes after it fired). */
static void *adder(void *arg)
{
	struct p *pp = arg;
	struct ctimer *cs = calloc(PER_THREAD, sizeof *cs);
	unsigned seed = (unsigned)pp->id;

	on_p(pp);
	for (int i = 0; i < PER_THREAD; i++) {
		int64_t when = atomic_load(&clock_now) + rand_r(&seed) % 64;
		timer_add(&cs[i].t, when, cfire);
		if (i % 2 == 1) {
			timer_del(&cs[i - 1].t);
			atomic_store(&cs[i - 1].deleted, true);
		}
	}
	/* Let every kept timer fire, then check each once. */
	for (int i = 1; i < PER_THREAD; i += 2)
		while (atomic_load(&cs[i].fires) == 0)
			sched_yield();
	for (int i = 0; i < PER_THREAD; i++)
		if (atomic_load(&cs[i].fires) > 1)
			atomic_fetch_add(&bad, 1);
	free(cs);
	return NULL;
}

static void *runner(void *arg)
{
	(void)arg;
	on_p(NULL);
	while (!atomic_load(&stop)) {
		int64_t now = atomic_fetch_add(&clock_now, 1) + 1;
		timers_run(now);
		/* Stealing Ms run one P's timers at a time. */
		timers_run_p(ps[now % NP], now);
	}
	return NULL;
}

START_TEST(concurrent_add_del_run)
{
	pthread_t run, add[NP];

	atomic_store(&clock_now, 1000);
	ck_assert_int_eq(pthread_create(&run, NULL, runner, NULL), 0);
	for (int i = 0; i < NP; i++)
		ck_assert_int_eq(pthread_create(&add[i], NULL, adder, ps[i]),
				 0);
	for (int i = 0; i < NP; i++)
		pthread_join(add[i], NULL);
	atomic_store(&stop, true);
	pthread_join(run, NULL);
	ck_assert_int_eq(atomic_load(&bad), 0);
	for (int i = 0; i < NP; i++)
		ck_assert_int_eq(heap_len(ps[i]), 0);
	/* timers_next may be early after a race (timer.c's next_rescan),
	 * never late; a run puts it right. */
	ck_assert_int_eq(timers_run(atomic_load(&clock_now)), -1);
	ck_assert_int_eq(timers_next(), -1);
}
END_TEST

/* ---- struct waitq: highest priority first, FIFO among equals ---- */

static void push(struct waitq *q, struct waiter *w, int prio, bool front)
{
	w->prio = prio;
	waitq_push(q, w, front);
}

/* The queue's priorities in order, and its tail is the last one. */
static void expect_order(struct waitq *q, struct waiter *ws, const char *want)
{
	char got[64] = "", *o = got;
	struct waiter *last = NULL;

	for (struct waiter *w = q->head; w; w = w->next) {
		*o++ = (char)('a' + (w - ws));
		last = w;
	}
	*o = 0;
	ck_assert_str_eq(got, want);
	ck_assert_ptr_eq(q->tail, last);
}

START_TEST(waitq_priority_order)
{
	struct waitq q = { 0 };
	struct waiter w[9];

	/* Priority 0 alone is a FIFO; a front push goes to the head. */
	push(&q, &w[0], 0, false);
	push(&q, &w[1], 0, false);
	push(&q, &w[2], 0, true);
	expect_order(&q, w, "cab");
	/* Real-time waiters go ahead of lower ones, behind equal ones. */
	push(&q, &w[3], 5, false);
	push(&q, &w[4], 20, false);
	push(&q, &w[5], 5, false);
	expect_order(&q, w, "edfcab");
	/* A front push goes first among its equals only. */
	push(&q, &w[6], 5, true);
	expect_order(&q, w, "egdfcab");
	push(&q, &w[7], 1, true);
	expect_order(&q, w, "egdfhcab");
	push(&q, &w[8], 0, false);
	expect_order(&q, w, "egdfhcabi");
}
END_TEST

START_TEST(waitq_tail_follows)
{
	struct waitq q = { 0 };
	struct waiter w[4];

	/* A front push below every waiter goes last: the tail moves... */
	push(&q, &w[0], 30, false);
	push(&q, &w[1], 20, false);
	push(&q, &w[2], 10, true);
	expect_order(&q, w, "abc");
	/* ...so a push at the back is linked after it. */
	push(&q, &w[3], 10, false);
	expect_order(&q, w, "abcd");
	waitq_unlink(&q, &q.head, NULL);
	expect_order(&q, w, "bcd");
	waitq_unlink(&q, &w[2].next, &w[2]);
	expect_order(&q, w, "bc");
}
END_TEST

static Suite *timer_suite(void)
{
	Suite *s = suite_create("timer");
	TCase *tc = tcase_create("heaps");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, deadline_order_across_ps);
	tcase_add_test(tc, run_p_runs_only_its_own);
	tcase_add_test(tc, delete_from_another_p);
	tcase_add_test(tc, no_p_uses_p0);
	tcase_add_test(tc, drain_moves_to_p0);
	tcase_add_test(tc, big_heap_random_deletes);
	suite_add_tcase(s, tc);

	tc = tcase_create("waitq");
	tcase_add_test(tc, waitq_priority_order);
	tcase_add_test(tc, waitq_tail_follows);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrent");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, concurrent_add_del_run);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(timer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
