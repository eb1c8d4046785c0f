/*
 * chaos.h: GOSHIM_DEBUG=chaos=1, a scheduler stress mode. Bugs of a
 * scheduler hide in interleavings that the usual timing almost never
 * gives; chaos makes them common: goroutines yield at random where they
 * enter the runtime; random short delays widen the race windows (a waker
 * against a goroutine on its way into its park, an M that lost its CPU
 * just after letting a goroutine go, an M giving up its P
 * against new work, a system call against sysmon's retake, a readied
 * goroutine on no queue yet); thieves steal from random victims in random
 * amounts; run queues spill to the global queue before they are full and
 * runnext is used at random; sysmon preempts after 1 to 10 ms, not 10.
 * Every choice is one the scheduler may make anyway, so a program's
 * results must not change.
 *
 * Off (the default), each hook costs one load of a flag that is never
 * written after start-up and one branch predicted not taken; interposer
 * entries cost nothing (shim_active's one load is of shim_fast, false
 * under chaos, which sends every call through shim_start).
 */
#ifndef GOSHIM_CHAOS_H
#define GOSHIM_CHAOS_H

#include <stdbool.h>
#include <stdint.h>

struct m;

extern bool chaos_on;

static inline bool chaos(void)
{
	return __builtin_expect(chaos_on, 0);
}

/* debug.c, at start-up: turn chaos on with seed (-1: one from the clock)
 * and say the seed on stderr. */
void chaos_start(int64_t seed);
/* A new M's random state, from the seed and its id (allocm). */
void chaos_seed_m(struct m *mp);
/* 64 random bits: the calling M's stream (or a shared one off an M). */
uint64_t chaos_rand(void);
/* True once in n calls, at random (chaos on only). */
static inline bool chaos_one_in(uint32_t n)
{
	return chaos_rand() % n == 0;
}
/* At a runtime boundary on a goroutine that holds nothing of the
 * runtime's: yield, 1 time in 8 (to the global queue or the local one). */
void chaos_yield(void);
/* A short random busy wait, to widen a race window. */
void chaos_delay(void);
/* Now and then a sleep: the M's thread loses its CPU for a while. */
void chaos_stall(void);

#endif
