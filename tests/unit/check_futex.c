/*
 * Unit tests for core/futex.c's table: waits that compare the value,
 * deadlines, wake counts in queue order, bitsets, requeues within a
 * bucket and between buckets (with the compare), a waiter that times out
 * after a requeue leaving from where it was moved, private and shared
 * keys never meeting, and FUTEX_WAKE_OP's arithmetic.
 *
 * No runtime is started: the waiters are plain threads, which the table
 * blocks on their own words as it does threads goshim did not create.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "../../core/futex.h"
#include "../../core/real.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"

struct waiter_arg {
	pthread_t t;
	_Atomic uint32_t *word;
	bool shared;
	uint32_t bitset;
	int64_t timeout_ns; /* -1: none */
	int ret;
	_Atomic bool done;
};

static void *waiter(void *p)
{
	struct waiter_arg *w = p;
	int64_t deadline = w->timeout_ns < 0 ? -1 : nanotime() + w->timeout_ns;
	w->ret = futex_wait(w->word, w->shared, atomic_load(w->word),
			    w->bitset ? w->bitset : ~0u, deadline);
	atomic_store(&w->done, true);
	return NULL;
}

static void start(struct waiter_arg *w, _Atomic uint32_t *word, bool shared,
		  uint32_t bitset, int64_t timeout_ns)
{
	*w = (struct waiter_arg){ .word = word, .shared = shared,
				  .bitset = bitset, .timeout_ns = timeout_ns };
	ck_assert_int_eq(pthread_create(&w->t, NULL, waiter, w), 0);
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	nanosleep(&ts, NULL);
}

/* Move n waiters of from to to, one requeue at a time as they arrive:
 * each counted move proves one waits. */
static void gather(_Atomic uint32_t *from, _Atomic uint32_t *to, bool shared,
		   int n)
{
	int moved = 0, m;
	while (moved < n) {
		ck_assert_int_eq(futex_requeue(from, to, shared, 0, INT_MAX,
					       false, 0, &m),
				 0);
		moved += m;
		if (m == 0)
			nap_ms(1);
	}
	ck_assert_int_eq(moved, n);
}

static void join(struct waiter_arg *w, int ret)
{
	pthread_join(w->t, NULL);
	ck_assert_int_eq(w->ret, ret);
}

/* Keys 4 * 251 bytes apart share a bucket (251 buckets of 4-byte words). */
static _Atomic uint32_t words[4 * 251 + 8];
#define SAME_BUCKET(i) (&words[(i) * 251])

START_TEST(value_and_deadline)
{
	_Atomic uint32_t w = 3;
	ck_assert_int_eq(futex_wait(&w, false, 2, ~0u, -1), EAGAIN);
	ck_assert_int_eq(futex_wait(&w, false, 3, ~0u, nanotime() - 1),
			 ETIMEDOUT);
	int64_t t0 = nanotime();
	ck_assert_int_eq(futex_wait(&w, false, 3, ~0u, t0 + 20000000),
			 ETIMEDOUT);
	ck_assert(nanotime() - t0 >= 20000000);
	ck_assert_int_eq(futex_wake(&w, false, INT_MAX, ~0u), 0);
}
END_TEST

START_TEST(wake_counts_and_order)
{
	static _Atomic uint32_t gate, park;
	struct waiter_arg w[3];

	for (int i = 0; i < 3; i++) {
		start(&w[i], &gate, false, 0, -1);
		gather(&gate, &park, false, 1); /* park's queue: w0 w1 w2 */
	}
	ck_assert_int_eq(futex_wake(&park, false, 1, ~0u), 1);
	join(&w[0], 0);
	ck_assert(!atomic_load(&w[1].done) && !atomic_load(&w[2].done));
	ck_assert_int_eq(futex_wake(&park, false, 5, ~0u), 2);
	join(&w[1], 0);
	join(&w[2], 0);
	ck_assert_int_eq(futex_wake(&park, false, 1, ~0u), 0);
}
END_TEST

START_TEST(bitsets)
{
	static _Atomic uint32_t gate, park;
	struct waiter_arg a, b;

	start(&a, &gate, false, 1, -1);
	gather(&gate, &park, false, 1);
	start(&b, &gate, false, 6, -1);
	gather(&gate, &park, false, 1);
	ck_assert_int_eq(futex_wake(&park, false, INT_MAX, 8), 0);
	ck_assert_int_eq(futex_wake(&park, false, INT_MAX, 4), 1);
	join(&b, 0);
	ck_assert_int_eq(futex_wake(&park, false, INT_MAX, ~0u), 1);
	join(&a, 0);
}
END_TEST

START_TEST(requeue_buckets)
{
	_Atomic uint32_t *from = SAME_BUCKET(0), *near = SAME_BUCKET(1),
			 *far = &words[3];
	struct waiter_arg w[4];
	int moved;

	static _Atomic uint32_t gate;

	for (int i = 0; i < 4; i++) {
		start(&w[i], &gate, false, 0, -1);
		gather(&gate, from, false, 1); /* from's queue: w0 .. w3 */
	}
	/* Onto itself: all stay, in their order. */
	ck_assert_int_eq(futex_requeue(from, from, false, 0, INT_MAX, false, 0,
				       &moved),
			 0);
	ck_assert_int_eq(moved, 4);
	ck_assert_int_eq(futex_requeue(from, near, false, 0, 1, true, 1,
				       &moved),
			 -EAGAIN);
	ck_assert_int_eq(futex_requeue(from, near, false, 1, 1, true, 0,
				       &moved),
			 1);
	ck_assert_int_eq(moved, 1);
	join(&w[0], 0);
	ck_assert_int_eq(futex_requeue(from, far, false, 0, INT_MAX, false, 0,
				       &moved),
			 0);
	ck_assert_int_eq(moved, 2);
	ck_assert_int_eq(futex_wake(from, false, INT_MAX, ~0u), 0);
	ck_assert_int_eq(futex_wake(near, false, INT_MAX, ~0u), 1);
	join(&w[1], 0);
	ck_assert_int_eq(futex_wake(far, false, 1, ~0u), 1);
	join(&w[2], 0);
	ck_assert_int_eq(futex_wake(far, false, INT_MAX, ~0u), 1);
	join(&w[3], 0);
}
END_TEST

START_TEST(timeout_after_requeue)
{
	static _Atomic uint32_t gate, park;
	struct waiter_arg w;

	start(&w, &gate, false, 0, 200000000);
	gather(&gate, &park, false, 1);
	join(&w, ETIMEDOUT);
	ck_assert_int_eq(futex_wake(&park, false, INT_MAX, ~0u), 0);
	ck_assert_int_eq(futex_wake(&gate, false, INT_MAX, ~0u), 0);
}
END_TEST

START_TEST(private_and_shared_apart)
{
	static _Atomic uint32_t gate, park;
	struct waiter_arg s, p;

	start(&s, &gate, true, 0, -1);
	gather(&gate, &park, true, 1);
	start(&p, &gate, false, 0, -1);
	gather(&gate, &park, false, 1);
	ck_assert_int_eq(futex_wake(&park, true, INT_MAX, ~0u), 1);
	join(&s, 0);
	ck_assert(!atomic_load(&p.done));
	ck_assert_int_eq(futex_wake(&park, true, INT_MAX, ~0u), 0);
	ck_assert_int_eq(futex_wake(&park, false, INT_MAX, ~0u), 1);
	join(&p, 0);
}
END_TEST

static uint32_t op_of(int op, int oparg, int cmp, int cmparg)
{
	return ((uint32_t)op << 28) | ((uint32_t)cmp << 24) |
	       (((uint32_t)oparg & 0xfff) << 12) | ((uint32_t)cmparg & 0xfff);
}

START_TEST(wake_op_arithmetic)
{
	_Atomic uint32_t w = 0;

	ck_assert_int_eq(futex_op_apply(&w, op_of(0, 5, 0, 0)), 1); /* set */
	ck_assert_uint_eq(atomic_load(&w), 5);
	ck_assert_int_eq(futex_op_apply(&w, op_of(1, -2, 4, 4)), 1); /* add */
	ck_assert_uint_eq(atomic_load(&w), 3);
	ck_assert_int_eq(futex_op_apply(&w, op_of(2, 8, 2, 3)), 0); /* or */
	ck_assert_uint_eq(atomic_load(&w), 11);
	ck_assert_int_eq(futex_op_apply(&w, op_of(3, 1, 5, 11)), 1); /* andn */
	ck_assert_uint_eq(atomic_load(&w), 10);
	ck_assert_int_eq(futex_op_apply(&w, op_of(4, 15, 1, 10)), 0); /* xor */
	ck_assert_uint_eq(atomic_load(&w), 5);
	/* The shift flag: oparg is a bit number, masked to 0..31. */
	ck_assert_int_eq(futex_op_apply(&w, op_of(8 | 2, 33, 3, 5)), 1);
	ck_assert_uint_eq(atomic_load(&w), 7);
	/* Signed comparison: old -1 < 0. */
	atomic_store(&w, UINT32_MAX);
	ck_assert_int_eq(futex_op_apply(&w, op_of(0, 0, 2, 0)), 1);
	/* An unknown comparison: done, then refused. */
	ck_assert_int_eq(futex_op_apply(&w, op_of(0, 9, 6, 0)), -ENOSYS);
	ck_assert_uint_eq(atomic_load(&w), 9);
	ck_assert(futex_op_valid(op_of(4, 0, 0, 0)));
	ck_assert(!futex_op_valid(op_of(5, 0, 0, 0)));
}
END_TEST

START_TEST(wake_op_wakes)
{
	static _Atomic uint32_t gate, a, b;
	struct waiter_arg wa, wb;
	int w1, w2;

	start(&wa, &gate, false, 0, -1);
	gather(&gate, &a, false, 1);
	start(&wb, &gate, false, 0, -1);
	gather(&gate, &b, false, 1);
	/* old b (0) == 1 fails: only a's waiter. */
	ck_assert_int_eq(futex_wake_op(&a, &b, false, 1, 1, op_of(0, 1, 0, 1),
				       &w1, &w2),
			 0);
	ck_assert_int_eq(w1, 1);
	ck_assert_int_eq(w2, 0);
	join(&wa, 0);
	ck_assert_int_eq(futex_wake_op(&a, &b, false, 1, 1, op_of(0, 2, 0, 1),
				       &w1, &w2),
			 1);
	ck_assert_int_eq(w1, 0);
	ck_assert_int_eq(w2, 1);
	ck_assert_uint_eq(atomic_load(&b), 2);
	join(&wb, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("futex");
	TCase *tc = tcase_create("table");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, value_and_deadline);
	tcase_add_test(tc, wake_counts_and_order);
	tcase_add_test(tc, bitsets);
	tcase_add_test(tc, requeue_buckets);
	tcase_add_test(tc, timeout_after_requeue);
	tcase_add_test(tc, private_and_shared_apart);
	tcase_add_test(tc, wake_op_arithmetic);
	tcase_add_test(tc, wake_op_wakes);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
