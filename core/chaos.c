/*
 * chaos.c: the random choices of GOSHIM_DEBUG=chaos=1 (see chaos.h).
 *
 * Each M draws from its own wyrand stream, seeded from the run's seed and
 * its id, so the draws need no atomics and a seed replays the same
 * sequence of choices per M. It does not replay the run: which M makes
 * which choice, and when, still depends on the OS's timing.
 */
#include <time.h>
#include <unistd.h>
#include "chaos.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"

bool chaos_on;
static uint64_t chaos_seed;
/* For callers without an M (foreign threads, sysmon, unit tests). */
static _Atomic uint64_t shared_state;

#define WY0 0xa0761d6478bd642full
#define WY1 0xe7037ed1a0b428dbull

static uint64_t wymix(uint64_t a, uint64_t b)
{
	__uint128_t t = (__uint128_t)a * b;
	return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

void chaos_seed_m(struct m *mp)
{
	mp->chaosrand = wymix(chaos_seed ^ WY0, (uint64_t)mp->id + WY1);
	/* The steal order (proc.c) replays too. */
	mp->fastrand = (uint32_t)wymix(mp->chaosrand, WY1) | 1;
}

void chaos_start(int64_t seed)
{
	if (seed < 0) /* 12 digits at most: what GOSHIM_DEBUG takes back */
		seed = (int64_t)(wymix((uint64_t)nanotime() ^ WY1,
				       (uint64_t)getpid() + WY0) %
				 1000000000000ull);
	chaos_seed = (uint64_t)seed;
	atomic_store(&shared_state, chaos_seed);
	/* Only M0 exists yet: the rest are seeded as they are made. */
	for (struct m *mp = sched.allms; mp; mp = mp->alllink)
		chaos_seed_m(mp);
	chaos_on = true;
	print("goshim: chaos: seed %lld (GOSHIM_DEBUG=chaos=1,"
	      "chaosseed=%lld draws the same choices; the "
	      "interleaving still varies)\n",
	      (long long)seed, (long long)seed);
}

uint64_t chaos_rand(void)
{
	struct g *gp = getg();

	if (gp && gp->m) {
		uint64_t s = gp->m->chaosrand += WY0;
		return wymix(s, s ^ WY1);
	}
	uint64_t s = atomic_fetch_add_explicit(&shared_state, WY0,
					       memory_order_relaxed) + WY0;
	return wymix(s, s ^ WY1);
}

void chaos_yield(void)
{
	struct g *gp = getg();

	/* Not on g0 or a foreign thread; not inside a signal handler, whose
	 * interrupted code may hold a runtime lock; not from inside the
	 * runtime or a system call (a libc function calling an interposer);
	 * not a real-time goroutine, whose CPU the kernel takes only for a
	 * higher one (a yield would let lower ones in). */
	if (gp == NULL || gp->is_g0 || gp->in_sighandler ||
	    atomic_load_explicit(&gp->rtprio, memory_order_relaxed))
		return;
	uint32_t st = atomic_load_explicit(&gp->m->pstate,
					   memory_order_relaxed);
	if (st != MP_USER && st != MP_LOST)
		return;
	uint64_t r = chaos_rand();
	if (r % 8 != 0)
		return;
	if (r & 8)
		gosched();
	else
		goyield();
}

/* 1 time in 4, up to 255 pauses: ~15 us where a pause takes ~60 ns (AMD
 * EPYC), far wider than the windows it is for, and cheap enough that a
 * handoff through a condition variable costs ~10 us, not ~60 as with 2047. */
void chaos_delay(void)
{
	uint64_t r = chaos_rand();

	if (r % 4 != 0)
		return;
	for (uint64_t n = (r >> 8) % 256; n > 0; n--)
		arch_cpu_relax();
}

/* 1 time in 64, a sleep of up to ~250 us: the kernel may take an M's CPU
 * at any instruction, for longer than any busy wait here lasts, and other
 * Ms then run on: the goroutine the M just let go of may run through a
 * whole wait and into the next meanwhile. */
void chaos_stall(void)
{
	uint64_t r = chaos_rand();

	if (r % 64 != 0)
		return;
	struct timespec ts = { 0, (long)((r >> 8) % 250000) };
	SYS2(SYS_nanosleep, &ts, NULL);
}
