/*
 * Unit tests for core/handle.c: the table of the TCBs goshim built, TCB to
 * G, that lets g_from_handle skip its probe of the kernel.
 *
 * Alone, the table is exact: random adds and deletes against a reference
 * (with TCBs a stack apart, and scattered ones that share home slots)
 * find every kept TCB and none deleted, across growth. Beside
 * a writer, a reader may miss (the caller then asks the kernel) but never
 * gets a G that is not one of the table's.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "../../core/real.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"

#define KEYS 6000

static struct g gs[KEYS];
static uintptr_t keys[KEYS];
static bool kept[KEYS];

static void make_keys(uintptr_t base, uintptr_t step)
{
	for (size_t i = 0; i < KEYS; i++) {
		keys[i] = base + i * step;
		gs[i].tcb = (void *)keys[i];
		kept[i] = false;
	}
}

static void check_all(void)
{
	for (size_t i = 0; i < KEYS; i++) {
		struct g *gp = handle_find(keys[i]);
		if (kept[i])
			ck_assert_ptr_eq(gp, &gs[i]);
		else
			ck_assert_ptr_null(gp);
	}
}

static void del(size_t i)
{
	rlock_lock(&sched.alllock);
	handle_del_locked((void *)keys[i]);
	rlock_unlock(&sched.alllock);
	kept[i] = false;
}

static void random_ops(unsigned seed)
{
	srandom(seed);
	for (int round = 0; round < 40000; round++) {
		size_t i = (size_t)random() % KEYS;
		if (kept[i]) {
			del(i);
		} else {
			handle_add((void *)keys[i], &gs[i]);
			kept[i] = true;
		}
		if (round % 5000 == 0)
			check_all();
	}
	check_all();
	for (size_t i = 0; i < KEYS; i++)
		if (kept[i])
			del(i);
	check_all();
}

START_TEST(stack_spaced)
{
	/* glibc-like TCBs: 8 MiB stacks, the TCB near each top */
	make_keys(0x7f0000000000ull + 0x7ff700, 8ull << 20);
	random_ops(1);
}
END_TEST

START_TEST(scattered)
{
	/* mmap's addresses are not a progression (the hash spreads those
	 * evenly): random ones collide and build runs that deletes shift */
	srandom(2);
	for (size_t i = 0; i < KEYS; i++) {
		uintptr_t k;
		do
			k = ((uintptr_t)random() << 16 ^ (uintptr_t)random())
			    << 6 & 0x7fffffffffc0ull;
		while (k == 0 || handle_find(k));
		keys[i] = k;
		for (size_t j = 0; j < i; j++)
			if (keys[j] == k)
				keys[i] = 0;
		if (keys[i] == 0) {
			i--;
			continue;
		}
		gs[i].tcb = (void *)k;
		kept[i] = false;
	}
	random_ops(3);
}
END_TEST

START_TEST(unknown_handles)
{
	make_keys(0x30000000, 4096);
	ck_assert_ptr_null(handle_find(0));
	handle_add((void *)keys[0], &gs[0]);
	ck_assert_ptr_null(handle_find(keys[0] + 8));
	ck_assert_ptr_null(handle_find(keys[1]));
	/* deleting what was never added changes nothing */
	rlock_lock(&sched.alllock);
	handle_del_locked((void *)keys[2]);
	rlock_unlock(&sched.alllock);
	ck_assert_ptr_eq(handle_find(keys[0]), &gs[0]);
	del(0);
	ck_assert_ptr_null(handle_find(keys[0]));
}
END_TEST

static atomic_bool stop;
static atomic_long hits, misses;

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		for (size_t i = 0; i < KEYS; i += 7) {
			struct g *gp = handle_find(keys[i]);
			/* a G of the table's, or a miss */
			if (gp != NULL && (gp < gs || gp >= gs + KEYS))
				ck_abort_msg("handle_find gave a stranger");
			if (gp == &gs[i])
				atomic_fetch_add(&hits, 1);
			else
				atomic_fetch_add(&misses, 1);
		}
	}
	return NULL;
}

START_TEST(reader_beside_writer)
{
	pthread_t r[2];

	make_keys(0x40000000, 4096);
	/* every 7th key stays; the others come and go */
	for (size_t i = 0; i < KEYS; i += 7) {
		handle_add((void *)keys[i], &gs[i]);
		kept[i] = true;
	}
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&r[i], NULL, reader, NULL), 0);
	srandom(4);
	for (int round = 0; round < 200000; round++) {
		size_t i = (size_t)random() % KEYS;
		if (i % 7 == 0)
			continue;
		if (kept[i]) {
			del(i);
		} else {
			handle_add((void *)keys[i], &gs[i]);
			kept[i] = true;
		}
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	check_all();
	ck_assert_int_gt(atomic_load(&hits), 0);
}
END_TEST

static Suite *handle_suite(void)
{
	Suite *s = suite_create("handle");
	TCase *tc = tcase_create("alone");

	tcase_add_test(tc, stack_spaced);
	tcase_add_test(tc, scattered);
	tcase_add_test(tc, unknown_handles);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrent");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reader_beside_writer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(handle_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
