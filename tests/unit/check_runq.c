/*
 * Unit tests for core/runq.c: the per-P run queue (256-slot ring + runnext),
 * the spill of half a full ring to the global queue, globrunqget's fair
 * share, stealing (with the thief's nap before a running P's runnext, and
 * its owner running it meanwhile), and a concurrent owner-versus-thieves run that
 * proves no G is lost or taken twice, also under GOSHIM_DEBUG=chaos's early
 * spills, random runnext and random steal sizes.
 *
 * No runtime is started: the tests make their own struct p (zeroed is an
 * empty queue) and struct g objects, and set gomaxprocs/allp themselves.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../../core/chaos.h"
#include "../../core/real.h"
#include "../../core/runtime.h"
#include "../../core/runtime2.h"

/* ---- helpers -------------------------------------------------------------- */

static void reset_sched(void)
{
	atomic_store(&sched.lock.key, 0);
	sched.runqhead = sched.runqtail = NULL;
	atomic_store(&sched.runqsize, 0);
}

static struct g *make_gs(size_t n)
{
	struct g *gs = calloc(n, sizeof *gs);

	ck_assert_ptr_nonnull(gs);
	for (size_t i = 0; i < n; i++)
		gs[i].goid = i;
	return gs;
}

static struct p *make_p(int32_t id)
{
	struct p *pp = calloc(1, sizeof *pp);

	ck_assert_ptr_nonnull(pp);
	pp->id = id;
	pp->status = P_RUNNING;
	return pp;
}

static uint32_t ring_len(struct p *pp)
{
	return atomic_load(&pp->runqtail) - atomic_load(&pp->runqhead);
}

/* Pop n Gs from pp and check that they are want[0..n) in order, none of them
 * from runnext; then check that pp is empty. */
static void expect_ring(struct p *pp, struct g *const *want, size_t n)
{
	bool inherit;

	for (size_t i = 0; i < n; i++) {
		struct g *gp = runqget(pp, &inherit);
		ck_assert_msg(gp == want[i],
			      "ring entry %zu: got goid %lld, want goid %llu",
			      i, gp ? (long long)gp->goid : -1LL,
			      (unsigned long long)want[i]->goid);
		ck_assert(!inherit);
	}
	ck_assert_ptr_null(runqget(pp, &inherit));
	ck_assert(runqempty(pp));
}

/* Check the global list holds want[0..n) in order and agrees with
 * sched.runqsize and sched.runqtail. */
static void expect_global(struct g *const *want, size_t n)
{
	struct g *gp = sched.runqhead;

	ck_assert_int_eq(atomic_load(&sched.runqsize), (int32_t)n);
	for (size_t i = 0; i < n; i++, gp = gp->schedlink) {
		ck_assert_msg(gp == want[i],
			      "global entry %zu: got goid %lld, want goid %llu",
			      i, gp ? (long long)gp->goid : -1LL,
			      (unsigned long long)want[i]->goid);
		if (i + 1 == n)
			ck_assert_ptr_eq(sched.runqtail, gp);
	}
	ck_assert_ptr_null(gp);
	if (n == 0)
		ck_assert_ptr_null(sched.runqtail);
}

/* ---- 1. single-threaded basics ------------------------------------------ */

START_TEST(fifo_order)
{
	struct g *gs = make_gs(300);
	struct p *pp = make_p(0);
	struct g *want[300];
	bool inherit = true;

	reset_sched();
	ck_assert(runqempty(pp));
	ck_assert_ptr_null(runqget(pp, &inherit));
	ck_assert(!inherit);

	/* Several passes so head and tail wrap around the ring. */
	for (int pass = 0; pass < 5; pass++) {
		size_t n = pass == 4 ? 256 : 10 + 50 * (size_t)pass;
		for (size_t i = 0; i < n; i++) {
			runqput(pp, &gs[i], false);
			want[i] = &gs[i];
			ck_assert(!runqempty(pp));
		}
		ck_assert_uint_eq(ring_len(pp), n);
		ck_assert_ptr_null(atomic_load(&pp->runnext));
		expect_ring(pp, want, n);
	}
	ck_assert_int_eq(atomic_load(&sched.runqsize), 0);

	/* Interleaved puts and gets keep FIFO order. */
	size_t next_put = 0, next_get = 0;
	for (int round = 0; round < 100; round++) {
		for (int k = 0; k < 3; k++, next_put++)
			runqput(pp, &gs[next_put % 300], false);
		for (int k = 0; k < 2; k++, next_get++) {
			ck_assert_ptr_eq(runqget(pp, &inherit),
					 &gs[next_get % 300]);
			ck_assert(!inherit);
		}
	}
	while (next_get < next_put) {
		ck_assert_ptr_eq(runqget(pp, &inherit), &gs[next_get++ % 300]);
		ck_assert(!inherit);
	}
	ck_assert(runqempty(pp));
	free(pp);
	free(gs);
}
END_TEST

START_TEST(runnext_first)
{
	struct g *gs = make_gs(8);
	struct p *pp = make_p(0);
	bool inherit = false;

	reset_sched();
	runqput(pp, &gs[0], false);
	runqput(pp, &gs[1], false);
	runqput(pp, &gs[2], true); /* runnext: runs before the ring */
	ck_assert_ptr_eq(atomic_load(&pp->runnext), &gs[2]);
	ck_assert_uint_eq(ring_len(pp), 2);

	ck_assert_ptr_eq(runqget(pp, &inherit), &gs[2]);
	ck_assert(inherit); /* runnext inherits the time slice */
	ck_assert_ptr_null(atomic_load(&pp->runnext));
	struct g *want[] = { &gs[0], &gs[1] };
	expect_ring(pp, want, 2);

	/* A second next=true kicks the old runnext to the ring's tail. */
	runqput(pp, &gs[3], false);
	runqput(pp, &gs[4], true);
	ck_assert_uint_eq(ring_len(pp), 1);
	runqput(pp, &gs[5], true);
	ck_assert_ptr_eq(atomic_load(&pp->runnext), &gs[5]);
	ck_assert_uint_eq(ring_len(pp), 2);
	runqput(pp, &gs[6], true);
	ck_assert_ptr_eq(atomic_load(&pp->runnext), &gs[6]);
	ck_assert_uint_eq(ring_len(pp), 3);
	runqput(pp, &gs[7], false);

	ck_assert_ptr_eq(runqget(pp, &inherit), &gs[6]);
	ck_assert(inherit);
	struct g *want2[] = { &gs[3], &gs[4], &gs[5], &gs[7] };
	expect_ring(pp, want2, 4);
	ck_assert_int_eq(atomic_load(&sched.runqsize), 0);
	free(pp);
	free(gs);
}
END_TEST

START_TEST(empty_with_runnext_only)
{
	struct g *gs = make_gs(1);
	struct p *pp = make_p(0);
	bool inherit = false;

	reset_sched();
	ck_assert(runqempty(pp));
	runqput(pp, &gs[0], true);
	ck_assert_uint_eq(ring_len(pp), 0);
	ck_assert(!runqempty(pp)); /* runnext alone is work */
	ck_assert_ptr_eq(runqget(pp, &inherit), &gs[0]);
	ck_assert(inherit);
	ck_assert(runqempty(pp));
	inherit = true;
	ck_assert_ptr_null(runqget(pp, &inherit));
	ck_assert(!inherit);
	free(pp);
	free(gs);
}
END_TEST

/* ---- 2. overflow to the global queue ------------------------------------- */

START_TEST(overflow_spills_half)
{
	struct g *gs = make_gs(1000);
	struct p *pp = make_p(0);
	struct g *want[300];

	reset_sched();
	for (int i = 0; i < RUNQ_SIZE; i++)
		runqput(pp, &gs[i], false);
	ck_assert_uint_eq(ring_len(pp), RUNQ_SIZE);
	ck_assert_int_eq(atomic_load(&sched.runqsize), 0);

	/* The 257th: the oldest 128 and the new G go global, in one batch. */
	runqput(pp, &gs[256], false);
	ck_assert_uint_eq(ring_len(pp), RUNQ_SIZE / 2);
	for (int i = 0; i < RUNQ_SIZE / 2; i++)
		want[i] = &gs[i];
	want[RUNQ_SIZE / 2] = &gs[256];
	expect_global(want, RUNQ_SIZE / 2 + 1);

	for (int i = 0; i < RUNQ_SIZE / 2; i++)
		want[i] = &gs[RUNQ_SIZE / 2 + i];
	expect_ring(pp, want, RUNQ_SIZE / 2);
	free(pp);
	free(gs);
}
END_TEST

/* Many Gs, with runnext and repeated spills: every G is in exactly one
 * place, the global list in spill order. */
START_TEST(overflow_nothing_lost)
{
	enum { N = 1000 };
	struct g *gs = make_gs(N);
	struct p *pp = make_p(0);
	int seen[N] = { 0 };
	bool inherit;
	struct g *gp, *last_runnext = NULL;

	reset_sched();
	for (int i = 0; i < N; i++) {
		bool next = i % 7 == 3;
		int32_t before = atomic_load(&sched.runqsize);
		runqput(pp, &gs[i], next);
		int32_t after = atomic_load(&sched.runqsize);
		ck_assert(after == before || after == before + 129);
		if (next)
			last_runnext = &gs[i];
	}
	ck_assert_ptr_eq(atomic_load(&pp->runnext), last_runnext);
	int32_t global = atomic_load(&sched.runqsize);
	ck_assert_int_gt(global, 0);
	ck_assert_int_eq(global % 129, 0);
	ck_assert_uint_eq(ring_len(pp) + (uint32_t)global + 1, N);

	/* The global list: each batch is 128 from the ring + 1, oldest first,
	 * so goids rise within a batch's first 128. */
	int32_t count = 0;
	for (gp = sched.runqhead; gp; gp = gp->schedlink, count++) {
		ck_assert_int_eq(seen[gp->goid]++, 0);
		if (gp->schedlink == NULL)
			ck_assert_ptr_eq(sched.runqtail, gp);
	}
	ck_assert_int_eq(count, global);

	gp = runqget(pp, &inherit);
	ck_assert_ptr_eq(gp, last_runnext);
	ck_assert(inherit);
	ck_assert_int_eq(seen[gp->goid]++, 0);
	while ((gp = runqget(pp, &inherit))) {
		ck_assert(!inherit);
		ck_assert_int_eq(seen[gp->goid]++, 0);
	}
	for (int i = 0; i < N; i++)
		ck_assert_msg(seen[i] == 1, "goid %d seen %d times", i,
			      seen[i]);
	free(pp);
	free(gs);
}
END_TEST

/* With the ring full, a next=true put kicks the old runnext into the ring,
 * and that is what spills with the oldest half. */
START_TEST(overflow_via_runnext)
{
	struct g *gs = make_gs(300);
	struct p *pp = make_p(0);
	struct g *want[200];
	bool inherit;

	reset_sched();
	runqput(pp, &gs[0], true);
	for (int i = 1; i <= RUNQ_SIZE; i++)
		runqput(pp, &gs[i], false);
	ck_assert_uint_eq(ring_len(pp), RUNQ_SIZE);
	ck_assert_int_eq(atomic_load(&sched.runqsize), 0);

	runqput(pp, &gs[257], true);
	ck_assert_ptr_eq(atomic_load(&pp->runnext), &gs[257]);
	for (int i = 0; i < RUNQ_SIZE / 2; i++)
		want[i] = &gs[1 + i];
	want[RUNQ_SIZE / 2] = &gs[0];
	expect_global(want, RUNQ_SIZE / 2 + 1);

	ck_assert_ptr_eq(runqget(pp, &inherit), &gs[257]);
	ck_assert(inherit);
	for (int i = 0; i < RUNQ_SIZE / 2; i++)
		want[i] = &gs[1 + RUNQ_SIZE / 2 + i];
	expect_ring(pp, want, RUNQ_SIZE / 2);
	free(pp);
	free(gs);
}
END_TEST

/* A thief emptying half of a full ring makes room: no spill until the ring
 * is full again. */
START_TEST(overflow_after_steal)
{
	struct g *gs = make_gs(400);
	struct p *pp = make_p(0), *thief = make_p(1);

	reset_sched();
	for (int i = 0; i < RUNQ_SIZE; i++)
		runqput(pp, &gs[i], false);
	ck_assert_ptr_eq(runqsteal(thief, pp, false), &gs[127]);
	ck_assert_uint_eq(ring_len(pp), 128);
	ck_assert_uint_eq(ring_len(thief), 127);
	for (int i = 0; i < 128; i++)
		runqput(pp, &gs[256 + i], false);
	ck_assert_uint_eq(ring_len(pp), RUNQ_SIZE);
	ck_assert_int_eq(atomic_load(&sched.runqsize), 0);
	runqput(pp, &gs[384], false);
	ck_assert_int_eq(atomic_load(&sched.runqsize), 129);
	ck_assert_ptr_eq(sched.runqhead, &gs[128]);
	ck_assert_ptr_eq(sched.runqtail, &gs[384]);
	free(thief);
	free(pp);
	free(gs);
}
END_TEST

/* ---- 3. globrunqget's fair share ----------------------------------------- */

static const int32_t gmp_values[] = { 1, 2, 4 };

START_TEST(globrunqget_share)
{
	static const int32_t sizes[] = { 1,   2,   3,   4,   5,   7,   8,
					 9,   100, 255, 256, 257, 258, 300,
					 513, 514, 1000 };
	static const int32_t maxes[] = { 0, 1, 2, 5, 64, 200 };
	int32_t gmp = gmp_values[_i];
	struct g *gs = make_gs(1000);
	struct g *want[1000];
	bool inherit;

	gomaxprocs = gmp;
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
		for (size_t mi = 0; mi < sizeof maxes / sizeof maxes[0];
		     mi++) {
			int32_t size = sizes[si], max = maxes[mi];
			struct p *pp = make_p(0);

			reset_sched();
			rlock_lock(&sched.lock);
			for (int32_t i = 0; i < size; i++)
				globrunqput(&gs[i]);
			rlock_unlock(&sched.lock);

			int32_t want_n = size / gmp + 1;
			if (want_n > size)
				want_n = size;
			if (max > 0 && want_n > max)
				want_n = max;
			if (want_n > RUNQ_SIZE / 2)
				want_n = RUNQ_SIZE / 2;

			rlock_lock(&sched.lock);
			struct g *gp = globrunqget(pp, max);
			rlock_unlock(&sched.lock);

			ck_assert_msg(gp == &gs[0],
				      "gomaxprocs %d size %d max %d: "
				      "got goid %lld, want 0",
				      gmp, size, max,
				      gp ? (long long)gp->goid : -1LL);
			ck_assert_msg(ring_len(pp) == (uint32_t)want_n - 1,
				      "gomaxprocs %d size %d max %d: moved %u "
				      "to the ring, want %d",
				      gmp, size, max, ring_len(pp),
				      want_n - 1);
			ck_assert_ptr_null(atomic_load(&pp->runnext));

			for (int32_t i = want_n; i < size; i++)
				want[i - want_n] = &gs[i];
			expect_global(want, (size_t)(size - want_n));
			for (int32_t i = 1; i < want_n; i++)
				want[i - 1] = &gs[i];
			expect_ring(pp, want, (size_t)want_n - 1);
			free(pp);
		}
	}

	/* Empty global queue: nothing, and the P is untouched. */
	struct p *pp = make_p(0);
	reset_sched();
	rlock_lock(&sched.lock);
	ck_assert_ptr_null(globrunqget(pp, 0));
	ck_assert_ptr_null(globrunqget(pp, 1));
	rlock_unlock(&sched.lock);
	ck_assert(runqempty(pp));

	/* max=1 takes exactly one however long the queue. */
	rlock_lock(&sched.lock);
	for (int32_t i = 0; i < 1000; i++)
		globrunqput(&gs[i]);
	for (int32_t i = 0; i < 1000; i++) {
		ck_assert_ptr_eq(globrunqget(pp, 1), &gs[i]);
		ck_assert_int_eq(atomic_load(&sched.runqsize), 999 - i);
		ck_assert_uint_eq(ring_len(pp), 0);
	}
	ck_assert_ptr_null(globrunqget(pp, 1));
	ck_assert_ptr_null(sched.runqhead);
	ck_assert_ptr_null(sched.runqtail);
	rlock_unlock(&sched.lock);

	/* Draining with max=0 takes everything in fair shares, in order. */
	rlock_lock(&sched.lock);
	for (int32_t i = 0; i < 1000; i++)
		globrunqput(&gs[i]);
	rlock_unlock(&sched.lock);
	int32_t next = 0;
	for (;;) {
		rlock_lock(&sched.lock);
		struct g *gp = globrunqget(pp, 0);
		rlock_unlock(&sched.lock);
		if (!gp)
			break;
		ck_assert_ptr_eq(gp, &gs[next++]);
		while ((gp = runqget(pp, &inherit)))
			ck_assert_ptr_eq(gp, &gs[next++]);
	}
	ck_assert_int_eq(next, 1000);
	expect_global(want, 0);
	free(pp);
	free(gs);
}
END_TEST

/* globrunqputbatch appends a linked batch and keeps head/tail/size right. */
START_TEST(globrunqputbatch_appends)
{
	struct g *gs = make_gs(10);
	struct g *want[10];

	reset_sched();
	for (int i = 0; i < 3; i++)
		gs[i].schedlink = &gs[i + 1];
	globrunqputbatch(&gs[0], &gs[3], 4);
	for (int i = 0; i < 4; i++)
		want[i] = &gs[i];
	expect_global(want, 4);

	rlock_lock(&sched.lock);
	globrunqput(&gs[4]);
	rlock_unlock(&sched.lock);
	gs[5].schedlink = &gs[6];
	gs[6].schedlink = &gs[9]; /* stale link: the tail's must be cut */
	globrunqputbatch(&gs[5], &gs[6], 2);
	for (int i = 4; i < 7; i++)
		want[i] = &gs[i];
	expect_global(want, 7);
	ck_assert_ptr_null(gs[6].schedlink);
	free(gs);
}
END_TEST

/* ---- 4. stealing --------------------------------------------------------- */

START_TEST(steal_half)
{
	static const uint32_t counts[] = { 1, 2, 3, 4, 5, 17, 127, 128,
					   129, 255, 256 };
	struct g *gs = make_gs(RUNQ_SIZE);
	struct g *want[RUNQ_SIZE];

	reset_sched();
	for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
		for (int steal_next = 0; steal_next < 2; steal_next++) {
			uint32_t k = counts[c], n = k - k / 2;
			struct p *victim = make_p(0), *thief = make_p(1);

			/* Move the victim's head off zero so indices wrap. */
			for (uint32_t i = 0; i < 200; i++)
				runqput(victim, &gs[0], false);
			bool inh;
			for (uint32_t i = 0; i < 200; i++)
				runqget(victim, &inh);
			for (uint32_t i = 0; i < k; i++)
				runqput(victim, &gs[i], false);

			struct g *gp = runqsteal(thief, victim, steal_next);
			ck_assert_msg(gp == &gs[n - 1],
				      "k=%u: got goid %lld, want %u", k,
				      gp ? (long long)gp->goid : -1LL, n - 1);
			ck_assert_uint_eq(ring_len(victim), k - n);
			ck_assert_uint_eq(ring_len(thief), n - 1);

			for (uint32_t i = 0; i + 1 < n; i++)
				want[i] = &gs[i];
			expect_ring(thief, want, n - 1);
			for (uint32_t i = n; i < k; i++)
				want[i - n] = &gs[i];
			expect_ring(victim, want, k - n);
			ck_assert_int_eq(atomic_load(&sched.runqsize), 0);
			free(thief);
			free(victim);
		}
	}
	free(gs);
}
END_TEST

START_TEST(steal_runnext)
{
	struct g *gs = make_gs(4);
	struct p *victim = make_p(0), *thief = make_p(1);
	bool inherit;

	reset_sched();
	/* Nothing at all: nothing either way. */
	ck_assert_ptr_null(runqsteal(thief, victim, false));
	ck_assert_ptr_null(runqsteal(thief, victim, true));

	/* Only runnext: taken only when asked for. */
	runqput(victim, &gs[0], true);
	ck_assert_ptr_null(runqsteal(thief, victim, false));
	ck_assert_ptr_eq(atomic_load(&victim->runnext), &gs[0]);
	ck_assert(!runqempty(victim));
	ck_assert_ptr_eq(runqsteal(thief, victim, true), &gs[0]);
	ck_assert_ptr_null(atomic_load(&victim->runnext));
	ck_assert(runqempty(victim));
	ck_assert(runqempty(thief)); /* returned, not queued */
	ck_assert_ptr_null(runqsteal(thief, victim, true));

	/* Ring not empty: the ring is stolen, runnext stays. */
	runqput(victim, &gs[1], true);
	runqput(victim, &gs[2], false);
	ck_assert_ptr_eq(runqsteal(thief, victim, true), &gs[2]);
	ck_assert_ptr_eq(atomic_load(&victim->runnext), &gs[1]);
	ck_assert_ptr_eq(runqget(victim, &inherit), &gs[1]);
	ck_assert(inherit);
	ck_assert(runqempty(victim));
	ck_assert(runqempty(thief));
	free(thief);
	free(victim);
	free(gs);
}
END_TEST

struct nap_thief {
	struct p *thief, *victim;
	struct g *got;
};

static void *nap_thief_run(void *arg)
{
	struct nap_thief *t = arg;
	t->got = runqsteal(t->thief, t->victim, true);
	return NULL;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A thief naps (at least the 3 us asked) before it takes a running P's
 * runnext, and then takes it. */
START_TEST(nap_then_steal)
{
	struct g *gs = make_gs(1);
	struct p *thief = make_p(1), *victim = make_p(0);

	reset_sched();
	runqput(victim, &gs[0], true);
	int64_t t0 = mono_ns();
	ck_assert_ptr_eq(runqsteal(thief, victim, true), &gs[0]);
	ck_assert_int_ge(mono_ns() - t0, 3000);
	ck_assert_ptr_null(atomic_load(&victim->runnext));
	ck_assert(runqempty(victim));
	free(thief);
	free(victim);
	free(gs);
}
END_TEST

/* The owner runs its runnext while a thief naps: one of the two has it,
 * never both, never neither. */
START_TEST(nap_owner_first)
{
	for (int round = 0; round < 200; round++) {
		struct g *gs = make_gs(1);
		struct nap_thief t = { .thief = make_p(1), .victim = make_p(0) };
		pthread_t th;
		bool inherit;

		reset_sched();
		runqput(t.victim, &gs[0], true);
		ck_assert_int_eq(pthread_create(&th, NULL, nap_thief_run, &t),
				 0);
		struct g *mine = runqget(t.victim, &inherit);
		ck_assert_int_eq(pthread_join(th, NULL), 0);
		ck_assert((mine == &gs[0]) != (t.got == &gs[0]));
		ck_assert(mine == NULL || mine == &gs[0]);
		ck_assert(t.got == NULL || t.got == &gs[0]);
		ck_assert(runqempty(t.victim));
		free(t.thief);
		free(t.victim);
		free(gs);
	}
}
END_TEST

/* A thief that already holds some Gs appends the stolen ones after them. */
START_TEST(steal_appends)
{
	struct g *gs = make_gs(30);
	struct p *victim = make_p(0), *thief = make_p(1);
	struct g *want[30];

	reset_sched();
	for (int i = 0; i < 10; i++)
		runqput(thief, &gs[i], false);
	for (int i = 10; i < 30; i++)
		runqput(victim, &gs[i], false);
	ck_assert_ptr_eq(runqsteal(thief, victim, false), &gs[19]);
	for (int i = 0; i < 19; i++)
		want[i] = &gs[i];
	expect_ring(thief, want, 19);
	for (int i = 0; i < 10; i++)
		want[i] = &gs[20 + i];
	expect_ring(victim, want, 10);
	free(thief);
	free(victim);
	free(gs);
}
END_TEST

/* ---- 5. concurrency: owner versus thieves -------------------------------- */

/*
 * P0's owner puts Gs (some as runnext) in bursts and takes some back, and
 * takes from the global queue when its ring is empty; thieves, each owning
 * a P, steal from P0 (and from each other), take from the global queue, and
 * drain their own P. Every take bumps the G's counter. In the runnext-race
 * variant every put is next=true and the owner takes about as many as it
 * puts, so P0's ring stays nearly empty and the thieves (always asking for
 * runnext) fight the owner for runnext itself.
 *
 * A struct g is about 1 KiB, so the run goes in rounds over a pool of Gs:
 * each round puts every pooled G exactly once, waits until all are taken,
 * and checks every counter is exactly 1 and every queue is empty before
 * the pool is reused. TOTAL Gs go through the queues in all.
 */
#define POOL 32768
#define TOTAL 2000000
#define ROUNDS ((TOTAL + POOL - 1) / POOL)

struct conc {
	int nthreads;
	bool runnext_race; /* owner: every put is next=true, tiny bursts */
	struct p **ps;
	struct g *gs;
	_Atomic uint32_t *count;
	_Atomic uint32_t taken;	  /* this round */
	_Atomic bool stop;
	/* statistics, all rounds */
	_Atomic uint64_t stolen;      /* Gs thieves got by stealing */
	_Atomic uint64_t steals;      /* successful runqsteal calls */
	_Atomic uint64_t spills;      /* runqputslow batches (lower bound) */
	_Atomic uint64_t early_spills; /* ...from a ring that was not full */
	_Atomic uint64_t global_gets; /* thieves' successful globrunqget */
	_Atomic uint64_t thief_takes; /* Gs thieves took in all */
	_Atomic int ready;	      /* thieves started */
	_Atomic bool go;	      /* thieves steal: after the first burst */
	char failure[256];
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint32_t xorshift(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static _Thread_local uint64_t my_takes;

static void take(struct conc *c, struct g *gp)
{
	my_takes++;
	atomic_fetch_add_explicit(&c->count[gp->goid], 1,
				  memory_order_relaxed);
	atomic_fetch_add(&c->taken, 1);
}

static struct g *global_get(struct p *pp, int32_t max)
{
	struct g *gp = NULL;

	if (atomic_load(&sched.runqsize) > 0) {
		rlock_lock(&sched.lock);
		gp = globrunqget(pp, max);
		rlock_unlock(&sched.lock);
	}
	return gp;
}

struct thief_arg {
	struct conc *c;
	int id;
};

static void *thief_main(void *arg)
{
	struct conc *c = ((struct thief_arg *)arg)->c;
	int id = ((struct thief_arg *)arg)->id;
	struct p *own = c->ps[id];
	uint32_t rnd = 0x9e3779b9u * (uint32_t)id;
	uint64_t stolen = 0, gets = 0;
	bool inherit;

	atomic_fetch_add(&c->ready, 1);
	while (!atomic_load(&c->go))
		sched_yield();
	while (!atomic_load(&c->stop)) {
		struct g *gp = runqget(own, &inherit);
		if (gp) {
			take(c, gp);
			continue;
		}
		/* Own ring empty: the only state it may steal into. */
		uint32_t r = xorshift(&rnd);
		if (r % 8 == 0 && (gp = global_get(own, 0))) {
			gets++;
			take(c, gp);
			continue;
		}
		int v = 0;
		if (c->nthreads > 2 && r % 4 == 1)
			v = 1 + (int)((r >> 8) % (uint32_t)(c->nthreads - 1));
		if (v == id)
			v = 0;
		gp = runqsteal(own, c->ps[v],
			       c->runnext_race || ((r >> 4) & 1));
		if (gp) {
			stolen += 1 + ring_len(own);
			atomic_fetch_add(&c->steals, 1);
			take(c, gp);
		} else if (r % 16 == 0) {
			sched_yield();
		}
	}
	atomic_fetch_add(&c->stolen, stolen);
	atomic_fetch_add(&c->thief_takes, my_takes);
	atomic_fetch_add(&c->global_gets, gets);
	return NULL;
}

static bool check_round(struct conc *c, uint32_t n, int round)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = atomic_load(&c->count[i]);
		if (k != 1) {
			snprintf(c->failure, sizeof c->failure,
				 "round %d: G %u taken %u times", round, i, k);
			return false;
		}
	}
	for (int i = 0; i < c->nthreads; i++) {
		if (!runqempty(c->ps[i])) {
			snprintf(c->failure, sizeof c->failure,
				 "round %d: P%d not empty", round, i);
			return false;
		}
	}
	if (atomic_load(&sched.runqsize) != 0 || sched.runqhead ||
	    sched.runqtail) {
		snprintf(c->failure, sizeof c->failure,
			 "round %d: global queue not empty (%d)", round,
			 atomic_load(&sched.runqsize));
		return false;
	}
	return true;
}

static void owner_run(struct conc *c)
{
	struct p *p0 = c->ps[0];
	uint32_t rnd = 0x12345678u;
	uint64_t spills = 0, early = 0;
	bool inherit;

	while (atomic_load(&c->ready) < c->nthreads - 1)
		sched_yield();
	for (int round = 0; round < ROUNDS; round++) {
		uint32_t n = round == ROUNDS - 1 ? TOTAL - POOL * (ROUNDS - 1)
						 : POOL;
		for (uint32_t i = 0; i < n; i++)
			atomic_store_explicit(&c->count[i], 0,
					      memory_order_relaxed);
		atomic_store(&c->taken, 0);

		uint32_t put = 0;
		uint64_t steals0 = atomic_load(&c->steals);
		bool waited = false;
		while (put < n) {
			uint32_t r = xorshift(&rnd);
			/* Mostly small bursts; now and then one big enough
			 * to fill the ring and spill. */
			uint32_t burst = r % 256 == 0 ? 300 + (r >> 8) % 100
						     : 1 + (r >> 8) % 32;
			uint32_t gets = (r >> 16) % 32;
			if (c->runnext_race) {
				/* Keep the ring nearly empty so thieves go
				 * for runnext while the owner replaces and
				 * takes it. */
				burst = 1 + (r >> 8) % 2;
				gets = burst + (r >> 16) % 2;
			}
			/* The first burst, before the thieves start, fills
			 * runnext and the ring and spills for sure: the big
			 * bursts above may all be stolen from as they go
			 * when the machine starves the owner. RUNQ_SIZE + 2:
			 * one put of the burst may go to runnext. */
			bool first = !atomic_load(&c->go);
			if (first)
				burst = RUNQ_SIZE + 2;
			for (uint32_t k = 0; k < burst && put < n; k++, put++) {
				int32_t before = atomic_load(&sched.runqsize);
				/* Thieves only shorten the ring meanwhile. */
				bool full = ring_len(p0) == RUNQ_SIZE;
				runqput(p0, &c->gs[put],
					c->runnext_race ||
						(r >> (k % 24)) % 5 == 0);
				if (atomic_load(&sched.runqsize) > before) {
					spills++;
					early += !full;
				}
			}
			if (first)
				atomic_store(&c->go, true);
			/* Halfway through, right after a burst (P0 holds
			 * something even in the runnext race, where the owner
			 * takes back all it puts), make sure a thief got to
			 * steal this round: a busy machine, or valgrind's one
			 * thread at a time, may starve them. Every round then
			 * has the owner and thieves at P0 together. Until the
			 * first steal of the run the wait is long, so the
			 * run always steals. */
			if (!waited && put >= n / 2) {
				int64_t until = now_ns() +
						(atomic_load(&c->steals) ? 1 : 30) *
							1000000000LL;
				while (atomic_load(&c->steals) == steals0 &&
				       !runqempty(p0) && now_ns() < until)
					sched_yield();
				waited = true;
			}
			for (uint32_t k = 0; k < gets; k++) {
				struct g *gp = runqget(p0, &inherit);
				if (!gp)
					gp = global_get(p0, (r >> 28) & 1);
				if (!gp)
					break;
				take(c, gp);
			}
		}
		/* Drain P0 and the global queue; the thieves drain theirs. */
		for (;;) {
			struct g *gp = runqget(p0, &inherit);
			if (!gp)
				gp = global_get(p0, 0);
			if (!gp)
				break;
			take(c, gp);
		}
		int64_t deadline = now_ns() + 10LL * 1000000000;
		while (atomic_load(&c->taken) < n) {
			if (now_ns() > deadline) {
				snprintf(c->failure, sizeof c->failure,
					 "round %d: only %u of %u Gs taken "
					 "after 10s",
					 round, atomic_load(&c->taken), n);
				goto out;
			}
			sched_yield();
		}
		if (atomic_load(&c->taken) != n) {
			snprintf(c->failure, sizeof c->failure,
				 "round %d: %u takes of %u Gs", round,
				 atomic_load(&c->taken), n);
			goto out;
		}
		if (!check_round(c, n, round))
			goto out;
	}
out:
	atomic_store(&c->spills, spills);
	atomic_store(&c->early_spills, early);
	atomic_store(&c->stop, true);
}

START_TEST(concurrent_no_loss)
{
	struct conc c;
	pthread_t th[4];
	struct thief_arg ta[4];
	int nthreads = 2 + _i % 2;

	memset(&c, 0, sizeof c);
	c.nthreads = nthreads;
	c.runnext_race = _i % 10 >= 6;
	chaos_on = _i >= 10; /* this test's own process (check forks) */
	c.ps = calloc((size_t)nthreads, sizeof *c.ps);
	ck_assert_ptr_nonnull(c.ps);
	for (int i = 0; i < nthreads; i++)
		c.ps[i] = make_p(i);
	c.gs = make_gs(POOL);
	c.count = calloc(POOL, sizeof *c.count);
	ck_assert_ptr_nonnull(c.count);
	reset_sched();
	gomaxprocs = nthreads;
	allp = c.ps;

	for (int i = 1; i < nthreads; i++) {
		ta[i].c = &c;
		ta[i].id = i;
		ck_assert_int_eq(
			pthread_create(&th[i], NULL, thief_main, &ta[i]), 0);
	}
	int64_t t0 = now_ns();
	owner_run(&c);
	for (int i = 1; i < nthreads; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	int64_t t1 = now_ns();

	ck_assert_msg(c.failure[0] == '\0', "%d threads: %s", nthreads,
		      c.failure);
	/* The run must have exercised what it is about. */
	ck_assert_uint_gt(atomic_load(&c.stolen), 0);
	ck_assert_uint_gt(atomic_load(&c.spills), 0);
	/* A ring spills before it is full under chaos, and only then. */
	if (chaos_on)
		ck_assert_uint_gt(atomic_load(&c.early_spills), 0);
	else
		ck_assert_uint_eq(atomic_load(&c.early_spills), 0);
	if (getenv("CHECK_RUNQ_VERBOSE"))
		fprintf(stderr,
			"%d threads%s%s: %d Gs in %.3fs; thieves took %llu, "
			"%llu spills (%llu early), %llu steals, %llu thief "
			"global gets, thieves took %llu in all\n",
			nthreads, c.runnext_race ? " (runnext race)" : "",
			chaos_on ? " (chaos)" : "", TOTAL,
			(double)(t1 - t0) / 1e9,
			(unsigned long long)atomic_load(&c.stolen),
			(unsigned long long)atomic_load(&c.spills),
			(unsigned long long)atomic_load(&c.early_spills),
			(unsigned long long)atomic_load(&c.steals),
			(unsigned long long)atomic_load(&c.global_gets),
			(unsigned long long)atomic_load(&c.thief_takes));
	for (int i = 0; i < nthreads; i++)
		free(c.ps[i]);
	free(c.ps);
	free(c.gs);
	free(c.count);
	allp = NULL;
}
END_TEST

static Suite *runq_suite(void)
{
	Suite *s = suite_create("runq");
	TCase *tc = tcase_create("basics");

	tcase_add_test(tc, fifo_order);
	tcase_add_test(tc, runnext_first);
	tcase_add_test(tc, empty_with_runnext_only);
	suite_add_tcase(s, tc);

	tc = tcase_create("overflow");
	tcase_add_test(tc, overflow_spills_half);
	tcase_add_test(tc, overflow_nothing_lost);
	tcase_add_test(tc, overflow_via_runnext);
	tcase_add_test(tc, overflow_after_steal);
	suite_add_tcase(s, tc);

	tc = tcase_create("global");
	tcase_add_loop_test(tc, globrunqget_share, 0,
			    (int)(sizeof gmp_values / sizeof gmp_values[0]));
	tcase_add_test(tc, globrunqputbatch_appends);
	suite_add_tcase(s, tc);

	tc = tcase_create("steal");
	tcase_add_test(tc, steal_half);
	tcase_add_test(tc, steal_runnext);
	tcase_add_test(tc, steal_appends);
	tcase_add_test(tc, nap_then_steal);
	tcase_add_test(tc, nap_owner_first);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrent");
	tcase_set_timeout(tc, 60);
	/* Even iterations: owner + 1 thief; odd: owner + 2 thieves.
	 * 0-5: mixed puts with spills; 6-9: a fight over runnext. */
	tcase_add_loop_test(tc, concurrent_no_loss, 0, 10);
	suite_add_tcase(s, tc);

	/* The same with chaos on (10-19). */
	tc = tcase_create("chaos");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, concurrent_no_loss, 10, 20);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(runq_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
