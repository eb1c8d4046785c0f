/*
 * runq.c: per-P run queues and the global run queue.
 *
 * The local queue is Go's: a 256-slot ring that only its owner P appends to
 * (tail), while the owner and thieves take from the head with a CAS. runnext
 * holds the G made ready most recently by this P: it runs next, inheriting
 * the time slice, which keeps a producer/consumer pair on one P. When the
 * ring is full, half of it moves to the global queue in one batch so the
 * cost is amortised. The global queue is a list under sched.lock; schedule()
 * looks at it every 61st tick so nothing there starves.
 *
 * Under GOSHIM_DEBUG=chaos=1 (chaos.h) runqput spills before the ring is
 * full and picks runnext or the tail at random, and thieves take a random
 * share: all moves the scheduler may make anyway.
 */
#include <stdint.h>
#include <time.h>
#include "chaos.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"

#define LOAD_ACQ(x) atomic_load_explicit(&(x), memory_order_acquire)
#define LOAD_RLX(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE_REL(x, v) atomic_store_explicit(&(x), (v), memory_order_release)
#define STORE_RLX(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

bool runqempty(struct p *pp)
{
	/* Re-read until head, tail and runnext are seen together: a G moving
	 * from runnext into the ring must not make the queue look empty. */
	for (;;) {
		uint32_t head = LOAD_ACQ(pp->runqhead);
		uint32_t tail = LOAD_ACQ(pp->runqtail);
		struct g *next = LOAD_ACQ(pp->runnext);
		if (tail == LOAD_ACQ(pp->runqtail))
			return head == tail && next == NULL;
	}
}

/* Move half of the local ring (full, or any under chaos) plus gp to the
 * global queue. Fails if a thief took entries meanwhile (the caller then
 * retries the fast path). */
static bool runqputslow(struct p *pp, struct g *gp, uint32_t head,
			uint32_t tail)
{
	struct g *batch[RUNQ_SIZE / 2 + 1];
	uint32_t n = (tail - head) / 2;

	if (n > RUNQ_SIZE / 2 || (n != RUNQ_SIZE / 2 && !chaos()))
		runtime_throw("runqputslow: queue is not full");
	for (uint32_t i = 0; i < n; i++)
		batch[i] = LOAD_RLX(pp->runq[(head + i) % RUNQ_SIZE]);
	if (!atomic_compare_exchange_strong_explicit(
		    &pp->runqhead, &head, head + n, memory_order_release,
		    memory_order_relaxed))
		return false;
	batch[n] = gp;
	for (uint32_t i = 0; i < n; i++)
		batch[i]->schedlink = batch[i + 1];
	globrunqputbatch(batch[0], batch[n], (int32_t)n + 1);
	return true;
}

/* Append gp to pp's ring if there is room. */
static bool runq_append(struct p *pp, struct g *gp, uint32_t head,
			uint32_t tail)
{
	if (tail - head >= RUNQ_SIZE)
		return false;
	STORE_RLX(pp->runq[tail % RUNQ_SIZE], gp);
	STORE_REL(pp->runqtail, tail + 1);
	return true;
}

static void runq_put(struct p *pp, struct g *gp, bool next)
{
	if (next) {
		struct g *old = LOAD_RLX(pp->runnext);
		while (!atomic_compare_exchange_weak_explicit(
			&pp->runnext, &old, gp, memory_order_release,
			memory_order_relaxed))
			;
		if (old == NULL)
			return;
		gp = old; /* the old runnext goes to the ring */
	}
	for (;;) {
		uint32_t head = LOAD_ACQ(pp->runqhead);
		uint32_t tail = LOAD_RLX(pp->runqtail);
		if (!(chaos() && chaos_one_in(16)) &&
		    runq_append(pp, gp, head, tail))
			return;
		if (runqputslow(pp, gp, head, tail))
			return;
	}
}

void runqput(struct p *pp, struct g *gp, bool next)
{
	if (chaos() && chaos_one_in(4))
		next = !next;
	runq_put(pp, gp, next);
}

void runqput_first(struct p *pp, struct g *gp)
{
	runq_put(pp, gp, true);
}

struct g *runqget(struct p *pp, bool *inherit_time)
{
	struct g *next = LOAD_RLX(pp->runnext);

	/* Only the owner clears runnext to NULL... but thieves may take it
	 * too, hence the CAS. */
	if (next && atomic_compare_exchange_strong_explicit(
			    &pp->runnext, &next, NULL, memory_order_acquire,
			    memory_order_relaxed)) {
		STORE_RLX(pp->runnext_runs, LOAD_RLX(pp->runnext_runs) + 1);
		*inherit_time = true;
		return next;
	}
	*inherit_time = false;
	for (;;) {
		uint32_t head = LOAD_ACQ(pp->runqhead);
		uint32_t tail = LOAD_RLX(pp->runqtail);
		if (tail == head)
			return NULL;
		struct g *gp = LOAD_RLX(pp->runq[head % RUNQ_SIZE]);
		if (atomic_compare_exchange_weak_explicit(
			    &pp->runqhead, &head, head + 1,
			    memory_order_release, memory_order_relaxed))
			return gp;
	}
}

/*
 * A thief's nap before it takes a running P's runnext: a sleep, not a
 * spin, so that it does not pull at the lines of the queue it watches,
 * and ~50us long (3us asked, the kernel's timer slack), as Go's
 * usleep(3) is. Meanwhile this M counts as spinning: wakep finds a
 * spinner and wakes no other M, so a P that readies goroutines in quick
 * succession and runs each itself (create+join, a ping-pong) pays no
 * futex wake for each. Nothing ends the nap early, as in Go: work queued
 * meanwhile in the victim's ring is stolen by half when it ends. (Ending
 * it for such work, which goshim did, turned a P that creates goroutines
 * in a loop into one futex wake per goroutine, each stolen alone: 10x the
 * futex calls and 25% slower to create 100k blocked threads.)
 */
static void nap(void)
{
	struct timespec ts = { 0, 3000 };

	SYS2(SYS_nanosleep, &ts, NULL);
}

/* Copy half of victim's ring into batch[batchhead...]; returns the count. */
static uint32_t runqgrab(struct p *victim, _Atomic(struct g *) *batch,
			 uint32_t batchhead, bool steal_runnext)
{
	bool napped = false;
	uint32_t runs = 0;

	for (;;) {
		uint32_t head = LOAD_ACQ(victim->runqhead);
		uint32_t tail = LOAD_ACQ(victim->runqtail);
		uint32_t n = tail - head;
		n = n - n / 2;
		if (n == 0) {
			if (!steal_runnext)
				return 0;
			struct g *next = LOAD_ACQ(victim->runnext);
			if (next == NULL)
				return 0;
			/* A running P is likely about to run its runnext (a G
			 * it just readied, then blocks): give it time first,
			 * as Go does (usleep(3)), instead of moving the pair
			 * apart. */
			if (!napped && victim->status == P_RUNNING &&
			    !(chaos() && chaos_one_in(2))) {
				runs = LOAD_ACQ(victim->runnext_runs);
				nap();
				napped = true;
				continue;
			}
			/* The P ran its runnext itself meanwhile, and has
			 * readied another: a pair handing off on one P (a
			 * ping-pong), which taking its next half would only
			 * split across CPUs. */
			if (napped && LOAD_ACQ(victim->runnext_runs) != runs)
				return 0;
			if (!atomic_compare_exchange_strong_explicit(
				    &victim->runnext, &next, NULL,
				    memory_order_acq_rel,
				    memory_order_relaxed))
				continue;
			STORE_RLX(batch[batchhead % RUNQ_SIZE], next);
			return 1;
		}
		if (n > RUNQ_SIZE / 2)
			continue; /* head and tail read inconsistently */
		if (chaos())
			n = 1 + (uint32_t)(chaos_rand() % n);
		for (uint32_t i = 0; i < n; i++) {
			struct g *gp =
				LOAD_RLX(victim->runq[(head + i) % RUNQ_SIZE]);
			STORE_RLX(batch[(batchhead + i) % RUNQ_SIZE], gp);
		}
		if (atomic_compare_exchange_strong_explicit(
			    &victim->runqhead, &head, head + n,
			    memory_order_acq_rel, memory_order_relaxed))
			return n;
	}
}

struct g *runqsteal(struct p *pp, struct p *victim, bool steal_runnext)
{
	uint32_t tail = LOAD_RLX(pp->runqtail);
	uint32_t n = runqgrab(victim, pp->runq, tail, steal_runnext);

	if (n == 0)
		return NULL;
	n--;
	struct g *gp = LOAD_RLX(pp->runq[(tail + n) % RUNQ_SIZE]);
	if (n == 0)
		return gp;
	uint32_t head = LOAD_ACQ(pp->runqhead);
	if (tail - head + n >= RUNQ_SIZE)
		runtime_throw("runqsteal: runq overflow");
	STORE_REL(pp->runqtail, tail + n);
	return gp;
}

void globrunqput(struct g *gp)
{
	gp->schedlink = NULL;
	if (sched.runqtail)
		sched.runqtail->schedlink = gp;
	else
		sched.runqhead = gp;
	sched.runqtail = gp;
	atomic_fetch_add(&sched.runqsize, 1);
}

void globrunqputbatch(struct g *head, struct g *tail, int32_t n)
{
	rlock_lock(&sched.lock);
	tail->schedlink = NULL;
	if (sched.runqtail)
		sched.runqtail->schedlink = head;
	else
		sched.runqhead = head;
	sched.runqtail = tail;
	atomic_fetch_add(&sched.runqsize, n);
	rlock_unlock(&sched.lock);
}

/* Take a fair share of the global queue: one G to run, the rest into pp's
 * ring. Go's rule: size/GOMAXPROCS + 1, at most max (if > 0), at most half
 * a local ring. Call with pp's ring empty or max == 1: the runqput below
 * must never spill (that would take sched.lock again). */
struct g *globrunqget(struct p *pp, int32_t max)
{
	int32_t size = atomic_load(&sched.runqsize);
	if (size == 0)
		return NULL;
	int32_t n = size / gomaxprocs + 1;
	if (n > size)
		n = size;
	if (max > 0 && n > max)
		n = max;
	if (n > RUNQ_SIZE / 2)
		n = RUNQ_SIZE / 2;
	atomic_fetch_sub(&sched.runqsize, n);

	struct g *gp = sched.runqhead;
	sched.runqhead = gp->schedlink;
	for (int32_t i = 1; i < n; i++) {
		struct g *g1 = sched.runqhead;
		sched.runqhead = g1->schedlink;
		/* Never a spill: that takes sched.lock (chaos's too). */
		if (!runq_append(pp, g1, LOAD_ACQ(pp->runqhead),
				 LOAD_RLX(pp->runqtail)))
			runtime_throw("globrunqget: local queue full");
	}
	if (sched.runqhead == NULL)
		sched.runqtail = NULL;
	return gp;
}
