/*
 * Unit tests for sigkeep.c, the siginfo of signals the runtime holds:
 * instances in order per holder, a standard signal held once, real-time
 * ones queued, the process's given to a goroutine in order, drops, and a
 * flood past one chunk of records.
 */
#include <check.h>
#include <string.h>
#include "../../core/runtime.h"
#include "../../core/runtime2.h"
#include "../../core/sigkeep.h"

static siginfo_t info(int sig, int value)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = value;
	return si;
}

static int take(struct g *gp, int sig, bool *more)
{
	siginfo_t si;
	if (!sigkeep_take(gp, sig, &si, more))
		return -1;
	ck_assert_int_eq(si.si_signo, sig);
	return si.si_value.sival_int;
}

START_TEST(realtime_queue_in_order)
{
	struct g g = { 0 };
	bool more;
	int rt = SIGRTMIN + 2;

	for (int i = 0; i < 5; i++) {
		siginfo_t si = info(rt, 100 + i);
		sigkeep_put(&g, &si);
	}
	siginfo_t other = info(SIGUSR1, 7);
	sigkeep_put(&g, &other);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(take(&g, rt, &more), 100 + i);
		ck_assert(more == (i < 4));
	}
	ck_assert_int_eq(take(&g, rt, &more), -1);
	ck_assert_int_eq(take(&g, SIGUSR1, &more), 7);
	ck_assert(!more);
	ck_assert_ptr_null(g.kept);
}
END_TEST

START_TEST(standard_held_once)
{
	struct g g = { 0 };
	bool more;

	for (int i = 0; i < 3; i++) {
		siginfo_t si = info(SIGUSR2, i);
		sigkeep_put(&g, &si);
	}
	ck_assert_int_eq(take(&g, SIGUSR2, &more), 0); /* the first one */
	ck_assert(!more);
	ck_assert_int_eq(take(&g, SIGUSR2, &more), -1);
}
END_TEST

START_TEST(process_given_in_order)
{
	struct g g = { 0 };
	bool more;
	int rt = SIGRTMIN;

	siginfo_t mine = info(rt, 1);
	sigkeep_put(&g, &mine);
	for (int i = 2; i <= 4; i++) {
		siginfo_t si = info(rt, i);
		sigkeep_put(NULL, &si);
	}
	siginfo_t usr1 = info(SIGUSR1, 9);
	sigkeep_put(NULL, &usr1);
	sigkeep_give(&g, rt);
	for (int i = 1; i <= 4; i++)
		ck_assert_int_eq(take(&g, rt, &more), i);
	/* SIGUSR1 stays the process's until given. */
	ck_assert_int_eq(take(&g, SIGUSR1, &more), -1);
	ck_assert_int_eq(take(NULL, SIGUSR1, &more), 9);
}
END_TEST

START_TEST(internal_signals_not_kept)
{
	struct g g = { 0 };
	siginfo_t si = info(SIGCANCEL, 1);

	sigkeep_put(&g, &si);
	ck_assert_ptr_null(g.kept);
}
END_TEST

START_TEST(drop_one_or_all)
{
	struct g g = { 0 };
	bool more;

	for (int i = 0; i < 3; i++) {
		siginfo_t a = info(SIGRTMIN + 1, i), b = info(SIGRTMIN + 3, i);
		sigkeep_put(&g, &a);
		sigkeep_put(&g, &b);
	}
	sigkeep_drop(&g, SIGRTMIN + 1);
	ck_assert_int_eq(take(&g, SIGRTMIN + 1, &more), -1);
	ck_assert_int_eq(take(&g, SIGRTMIN + 3, &more), 0);
	sigkeep_drop(&g, 0);
	ck_assert_ptr_null(g.kept);
}
END_TEST

/* More instances than one chunk of records holds, all back in order;
 * the records are reused after. */
START_TEST(flood_past_a_chunk)
{
	struct g g = { 0 };
	bool more;
	int rt = SIGRTMIN + 4, n = 2000;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < n; i++) {
			siginfo_t si = info(rt, i);
			sigkeep_put(&g, &si);
		}
		for (int i = 0; i < n; i++)
			ck_assert_int_eq(take(&g, rt, &more), i);
		ck_assert(!more);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sigkeep");
	TCase *tc = tcase_create("sigkeep");

	tcase_add_test(tc, realtime_queue_in_order);
	tcase_add_test(tc, standard_held_once);
	tcase_add_test(tc, process_given_in_order);
	tcase_add_test(tc, internal_signals_not_kept);
	tcase_add_test(tc, drop_one_or_all);
	tcase_add_test(tc, flood_past_a_chunk);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
