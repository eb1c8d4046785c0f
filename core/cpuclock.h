/*
 * cpuclock.h: each goroutine's CPU clock: the CPU time of its Ms while
 * they ran it, kernel time in the system calls it made included.
 *
 * The kernel keeps a CPU clock per OS thread, and an M runs many
 * goroutines, so a goroutine's clock is the sum, over its runs, of how
 * far its M's clock advanced meanwhile. Reading the M's clock is a system
 * call (CLOCK_THREAD_CPUTIME_ID is not in the vDSO), several times the
 * cost of a user-level switch, so runs are measured only from the
 * program's first question about a thread CPU clock (cpuclock_enable).
 * Until then a switch only bumps the M's runseq, a store to a line it
 * writes anyway; that is enough for cpuclock_enable to start counting a
 * run already in progress, so every goroutine's clock counts from the
 * first question on (with, in each run, the few instructions of g0 that
 * switched to it: cpuclock.c). What a goroutine ran before is not counted,
 * except for a goroutine that has had its M to itself since the M's
 * thread began (the main thread, until its first switch), whose whole
 * time is its M's.
 */
#ifndef GOSHIM_CPUCLOCK_H
#define GOSHIM_CPUCLOCK_H

#include <sys/resource.h>
#include <time.h>
#include "runtime.h"

extern _Atomic bool cpuclock_on;

void cpuclock_begin(struct m *mp, struct g *gp);
void cpuclock_end(struct m *mp, struct g *gp);

/* Both switches: the M's run count moves, and then whether the clocks
 * count is read. The store comes before the load of cpuclock_on in
 * program order; cpuclock_enable's process-wide barrier makes that enough
 * (see cpuclock.c). */
static inline bool cpuclock_runseq_bump(struct m *mp)
{
	uint64_t seq = atomic_load_explicit(&mp->runseq, memory_order_relaxed);
	atomic_store_explicit(&mp->runseq, seq + 1, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	return __builtin_expect(atomic_load_explicit(&cpuclock_on,
						     memory_order_relaxed),
				0);
}

/* execute, just before the switch to gp. */
static inline void cpuclock_switch_in(struct m *mp, struct g *gp)
{
	if (cpuclock_runseq_bump(mp))
		cpuclock_begin(mp, gp);
}

/* mcall, just before gp switches to g0. */
static inline void cpuclock_switch_out(struct m *mp, struct g *gp)
{
	if (cpuclock_runseq_bump(mp))
		cpuclock_end(mp, gp);
}

/* Count every goroutine's CPU time from now on (idempotent). */
void cpuclock_enable(void);
/* gp's CPU time, ns (gp may run meanwhile, on another M); -1 if its
 * M's clock could not be read. */
int64_t cpuclock_read(struct g *gp);
/* The same, the kernel writing into *ts on the way (its clock, or the
 * caller's): -EFAULT where it cannot, as for the program's own call. */
int64_t cpuclock_read_to(struct g *gp, struct timespec *ts);
/* What a CPU clock counts (the low bits of its clockid). */
enum { CPU_PROF, CPU_VIRT, CPU_SCHED, CPU_MAX };
/* The value of the goroutine's clock that counts which (user time for
 * CPU_VIRT, all of it else), also put in *ts if not NULL; -EINVAL if the
 * goroutine, known by its tid, has ended; -EFAULT if ts is bad. */
int64_t cpuclock_value(struct g *gp, pid_t tid, int which,
		       struct timespec *ts);
/* gp's ns split into user and system time in the proportion of the
 * process's (puser, psys), neither part less than gp was told before. */
void cpuclock_split(struct g *gp, int64_t ns, int64_t puser, int64_t psys,
		    int64_t *user, int64_t *sys);
/* The same, with the process's parts as getrusage(RUSAGE_SELF) gave them. */
void cpuclock_split_rusage(struct g *gp, int64_t ns, const struct rusage *proc,
			   int64_t *user, int64_t *sys);
/* getrusage(RUSAGE_THREAD) on gp, in *r: its CPU time split as above;
 * its parks (voluntary) and yields and preemptions (involuntary) as its
 * context switches; the process's peak RSS (from proc, RUSAGE_SELF's), as
 * the kernel reports for a thread. Page faults and block I/O are counted
 * by the kernel per M, for whatever goroutines ran there: they read 0.
 * 0, or EINVAL if its M's clock could not be read. */
int cpuclock_rusage(struct g *gp, const struct rusage *proc, struct rusage *r);
/* mp starts with gp running on it without a switch (the main goroutine
 * adopted at start-up): its first run, since the thread began. */
void cpuclock_adopt(struct m *mp, struct g *gp);
/* gp starts over as a new thread: no CPU time yet. */
void cpuclock_reset(struct g *gp);
/* The child of fork: gp's thread is new, and its clock starts at 0. */
void cpuclock_fork_child(struct g *gp);

/* ---- cputimer.c: timer_create on those clocks ----
 * Each returns 0 or an errno; ids are cputimer_id's. */
bool cputimer_id(uintptr_t id);
int cputimer_create(struct g *gp, int which, const struct sigevent *sev,
		    uintptr_t *id);
int cputimer_settime(uintptr_t id, int flags, const struct itimerspec *nv,
		     struct itimerspec *old);
int cputimer_gettime(uintptr_t id, struct itimerspec *cur);
int cputimer_getoverrun(uintptr_t id); /* the count, or -errno */
int cputimer_delete(uintptr_t id);
/* sysmon, each round: fire what is due; *next: when to look again. */
void cputimers_run(int64_t now, int64_t *next);
void cputimers_fork_child(void);

#endif
