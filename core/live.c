/*
 * live.c: the process ends with its last thread once main has called
 * pthread_exit (as glibc's start_thread calls exit(0) in the last one).
 *
 * Until then main is alive and nothing needs counting, so nothing is: a
 * count of live goroutines kept by every create and exit would be a cache
 * line written by every P, twice per thread. Counting starts when main
 * ends (or in a child of fork, whose one goroutine may end first): every
 * goroutine alive then is counted by walking allgs, every one made after
 * counts itself, and one counted takes itself off as it ends.
 *
 * Each life's word (g.live) says whether it has been counted, and a
 * compare-and-swap on it settles the races: a goroutine made as the walk
 * begins stores LIVE before it looks at sched.counting, and the walk sets
 * counting before it looks at the goroutines (both sequentially
 * consistent), so one of the two sees the other, and the swap from LIVE
 * to COUNTED is made once. One that ends swaps LIVE to GONE; if it finds
 * COUNTED instead, it was counted and takes itself off. The walk holds a
 * count of its own meanwhile, so the count cannot reach zero half-way.
 */
#include <stdlib.h>
#include "runtime.h"
#include "runtime2.h"

enum { LIVE_NOT, LIVE, LIVE_COUNTED, LIVE_GONE };

static void count(struct g *gp)
{
	uint8_t v = LIVE;

	if (atomic_compare_exchange_strong(&gp->live, &v, LIVE_COUNTED))
		atomic_fetch_add(&sched.nlive, 1);
}

static void drop(void)
{
	if (atomic_fetch_sub(&sched.nlive, 1) == 1)
		exit(0);
}

void live_begin(struct g *gp)
{
	atomic_store(&gp->live, LIVE);
	if (atomic_load(&sched.counting))
		count(gp);
}

void live_end(struct g *gp)
{
	uint8_t v = LIVE;

	/* Found COUNTED: left so, which no walk counts again. */
	if (!atomic_compare_exchange_strong(&gp->live, &v, LIVE_GONE))
		drop();
}

void live_main_end(struct g *maing)
{
	atomic_fetch_add(&sched.nlive, 1); /* the walk's own */
	atomic_store(&sched.counting, true);
	rlock_lock(&sched.alllock);
	for (struct g *gp = sched.allgs; gp; gp = gp->alllink)
		count(gp);
	rlock_unlock(&sched.alllock);
	live_end(maing);
	drop();
}

void live_fork_child(struct g *gp)
{
	if (gp == NULL)
		return; /* a thread goshim did not create: it never ends here */
	atomic_store(&gp->live, LIVE_COUNTED);
	atomic_store(&sched.nlive, 1);
	atomic_store(&sched.counting, true);
}

bool live_none(void)
{
	return atomic_load(&sched.counting) && atomic_load(&sched.nlive) <= 0;
}
