/*
 * cpuclock.c: goroutine CPU clocks (see cpuclock.h).
 *
 * A goroutine's record (g.cpu_*) has two writers, its M (a run begins or
 * ends) and cpuclock_enable (a run already in progress), which take it
 * by making cpu_seq odd; readers on any thread retry while it is odd or
 * changed under them. A run in progress counts as the M's clock now less
 * cpu_since, valid while the M's runseq is still the run's: the M bumps
 * runseq before it reads its clock to end the run, so a reader that saw
 * the old runseq after its own clock read read no later than the end.
 *
 * cpuclock_enable finds the runs in progress without any help from the
 * switch path: it sets cpuclock_on, then makes every thread of the
 * process pass a memory barrier (membarrier). An M that loaded
 * cpuclock_on before its barrier still saw false, and its runseq bump,
 * before the load in program order, is visible after the barrier: the
 * snapshot below sees that run as over and leaves it be. An M that loads
 * it after its barrier sees true and does its own begin and end.
 */
#include <linux/membarrier.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include "cpuclock.h"
#include "runtime2.h"
#include "sys.h"

_Atomic bool cpuclock_on;
static struct rlock enable_lock;

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* The calling thread's CPU clock. */
static int64_t self_cputime(void)
{
	struct timespec ts;

	if (SYS2(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return ts_ns(&ts);
}

/* mp's thread's CPU clock, from any thread of the process, written by
 * the kernel to *ts: ns, or -errno (EFAULT: ts is not the program's to
 * write; EINVAL: the thread has gone). */
static int64_t m_cputime_to(struct m *mp, struct timespec *ts)
{
	struct g *me = getg();
	clockid_t clk = me && me->m == mp
				? CLOCK_THREAD_CPUTIME_ID
				: (clockid_t)((~(unsigned)mp->tid << 3) | 6);
	long r = SYS2(SYS_clock_gettime, clk, ts);

	return r ? r : ts_ns(ts);
}

static uint32_t rec_lock(struct g *gp)
{
	for (;;) {
		uint32_t s = atomic_load_explicit(&gp->cpu_seq,
						  memory_order_relaxed);
		if (!(s & 1) &&
		    atomic_compare_exchange_weak_explicit(
			    &gp->cpu_seq, &s, s + 1, memory_order_acquire,
			    memory_order_relaxed))
			return s;
		arch_cpu_relax();
	}
}

static void rec_unlock(struct g *gp, uint32_t s)
{
	atomic_store_explicit(&gp->cpu_seq, s + 2, memory_order_release);
}

/* The record's fields, read by others while a writer may change them. */
#define REC_STORE(f, v) __atomic_store_n(&(f), (v), __ATOMIC_RELAXED)
#define REC_LOAD(f) __atomic_load_n(&(f), __ATOMIC_RELAXED)

/*
 * A run begins where the M's last counted run ended, unless the M went
 * looking for work in between (findrunnable clears cpu_last_seq): what
 * it did then, on g0, was taking this goroutine from its run queue, and
 * one clock read per switch is half the cost of two.
 */
void cpuclock_begin(struct m *mp, struct g *gp)
{
	uint64_t run = atomic_load_explicit(&mp->runseq, memory_order_relaxed);
	int64_t now = mp->cpu_last_seq == run - 1 ? mp->cpu_last
						  : self_cputime();
	uint32_t s = rec_lock(gp);

	/* cpuclock_enable may have found this run first: its start stays,
	 * or a reader meanwhile would see the clock go back. */
	if (now >= 0 && !(gp->cpu_m == mp && gp->cpu_run == run)) {
		REC_STORE(gp->cpu_run, run);
		REC_STORE(gp->cpu_since, now);
		REC_STORE(gp->cpu_m, mp);
	}
	rec_unlock(gp, s);
}

void cpuclock_end(struct m *mp, struct g *gp)
{
	uint64_t seq = atomic_load_explicit(&mp->runseq, memory_order_relaxed);
	uint64_t run = seq - 1;
	int64_t now = self_cputime();
	uint32_t s = rec_lock(gp);

	mp->cpu_last = now;
	mp->cpu_last_seq = now >= 0 ? seq : 0;

	if (gp->cpu_m == mp && gp->cpu_run == run) {
		if (now > gp->cpu_since)
			REC_STORE(gp->cpu_ns, gp->cpu_ns + now - gp->cpu_since);
		REC_STORE(gp->cpu_m, NULL);
	}
	rec_unlock(gp, s);
}

int64_t cpuclock_read_to(struct g *gp, struct timespec *ts)
{
	for (;;) {
		uint32_t s = atomic_load_explicit(&gp->cpu_seq,
						  memory_order_acquire);
		if (s & 1) {
			arch_cpu_relax();
			continue;
		}
		int64_t ns = REC_LOAD(gp->cpu_ns);
		struct m *mp = REC_LOAD(gp->cpu_m);
		uint64_t run = REC_LOAD(gp->cpu_run);
		int64_t since = REC_LOAD(gp->cpu_since);
		int64_t now = 0;
		if (mp) {
			now = m_cputime_to(mp, ts);
			if (now == -EFAULT)
				return now;
			/* The run ended meanwhile, or its M is gone. */
			if (atomic_load_explicit(&mp->runseq,
						 memory_order_acquire) != run) {
				arch_cpu_relax();
				continue;
			}
			if (now < 0)
				return -EINVAL;
		} else if (SYS2(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID,
				ts) != 0) {
			return -EFAULT; /* only to learn that ts is writable */
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&gp->cpu_seq, memory_order_relaxed) !=
		    s)
			continue;
		return ns + (mp && now > since ? now - since : 0);
	}
}

int64_t cpuclock_read(struct g *gp)
{
	struct timespec ts;
	int64_t ns = cpuclock_read_to(gp, &ts);
	return ns < 0 ? -1 : ns;
}

/* 1: registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED; -1: refused. */
static _Atomic int barrier_state;

/* Registering waits for an RCU grace period (9-33 ms measured on a
 * loaded 2-CPU machine): the first question waits for it once. Done
 * ahead (by sysmon) it would cost every program that never asks that
 * long a stall of sysmon's duties. */
static void barrier_register(void)
{
	if (atomic_load(&barrier_state) == 0)
		atomic_store(&barrier_state,
			     SYS3(SYS_membarrier,
				  MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
				  0) == 0
				     ? 1
				     : -1);
}

/* Every thread of the process passes a full memory barrier: IPIs to
 * the CPUs that run one, or a grace period. */
static bool process_barrier(void)
{
	barrier_register();
	if (atomic_load(&barrier_state) == 1 &&
	    SYS3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return true;
	return SYS3(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

/* The run in progress on mp, if any, counts from now (from the thread's
 * start if it is the M's first). */
static void snapshot(struct m *mp)
{
	uint64_t run = atomic_load_explicit(&mp->runseq, memory_order_acquire);
	if (!(run & 1))
		return;
	struct g *gp = __atomic_load_n(&mp->curg, __ATOMIC_ACQUIRE);
	struct timespec ts;
	int64_t now = m_cputime_to(mp, &ts);
	if (gp == NULL || now < 0)
		return;
	uint32_t s = rec_lock(gp);
	if (gp->cpu_m == NULL &&
	    atomic_load_explicit(&mp->runseq, memory_order_acquire) == run) {
		REC_STORE(gp->cpu_run, run);
		REC_STORE(gp->cpu_since, run == 1 ? 0 : now);
		REC_STORE(gp->cpu_m, mp);
	}
	rec_unlock(gp, s);
}

void cpuclock_enable(void)
{
	if (atomic_load_explicit(&cpuclock_on, memory_order_acquire))
		return;
	rlock_lock(&enable_lock);
	if (!atomic_load(&cpuclock_on)) {
		atomic_store(&cpuclock_on, true);
		/* Without a barrier the runs in progress count from their
		 * goroutines' next switch. */
		if (process_barrier()) {
			rlock_lock(&sched.alllock);
			for (struct m *mp = sched.allms; mp; mp = mp->alllink)
				snapshot(mp);
			rlock_unlock(&sched.alllock);
		}
	}
	rlock_unlock(&enable_lock);
}

void cpuclock_adopt(struct m *mp, struct g *gp)
{
	atomic_store(&mp->runseq, 1);
	if (atomic_load(&cpuclock_on)) {
		gp->cpu_run = 1;
		gp->cpu_since = 0;
		gp->cpu_m = mp;
	}
}

void cpuclock_reset(struct g *gp)
{
	gp->cpu_ns = 0;
	gp->cpu_m = NULL;
	gp->cpu_utime = 0;
	gp->cpu_stime = 0;
	gp->nvcsw = 0;
	gp->nivcsw = 0;
}

void cpuclock_fork_child(struct g *gp)
{
	atomic_store(&enable_lock.key, 0);
	atomic_store(&barrier_state, 0); /* a registration is per mm */
	if (gp == NULL)
		return;
	gp->m->cpu_last_seq = 0; /* a new thread: its clock starts over */
	atomic_store(&gp->cpu_seq, atomic_load(&gp->cpu_seq) & ~1u);
	gp->cpu_ns = 0;
	gp->cpu_since = 0;
	gp->cpu_utime = 0;
	gp->cpu_stime = 0;
}

void cpuclock_split(struct g *gp, int64_t ns, int64_t puser, int64_t psys,
		    int64_t *user, int64_t *sys)
{
	int64_t total = puser + psys;
	int64_t st = total > 0 ? (int64_t)((__int128)ns * psys / total) : 0;
	uint32_t s = rec_lock(gp);

	/* As the kernel's cputime_adjust: neither part ever goes back. */
	if (ns < gp->cpu_utime + gp->cpu_stime) {
		st = gp->cpu_stime;
		ns = gp->cpu_utime + gp->cpu_stime;
	}
	if (st < gp->cpu_stime)
		st = gp->cpu_stime;
	int64_t ut = ns - st;
	if (ut < gp->cpu_utime) {
		ut = gp->cpu_utime;
		st = ns - ut;
	}
	gp->cpu_utime = ut;
	gp->cpu_stime = st;
	rec_unlock(gp, s);
	*user = ut;
	*sys = st;
}

static int64_t tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000;
}

void cpuclock_split_rusage(struct g *gp, int64_t ns, const struct rusage *proc,
			   int64_t *user, int64_t *sys)
{
	cpuclock_split(gp, ns, tv_ns(proc->ru_utime), tv_ns(proc->ru_stime),
		       user, sys);
}

static struct timeval ns_tv(int64_t ns)
{
	return (struct timeval){ ns / 1000000000, ns % 1000000000 / 1000 };
}

int cpuclock_rusage(struct g *gp, const struct rusage *proc, struct rusage *r)
{
	int64_t ns = cpuclock_read(gp), user, sys;

	if (ns < 0)
		return EINVAL;
	cpuclock_split_rusage(gp, ns, proc, &user, &sys);
	*r = (struct rusage){ 0 };
	r->ru_utime = ns_tv(user);
	r->ru_stime = ns_tv(sys);
	r->ru_maxrss = proc->ru_maxrss;
	r->ru_nvcsw = gp->nvcsw;
	r->ru_nivcsw = gp->nivcsw;
	return 0;
}

int64_t cpuclock_value(struct g *gp, pid_t tid, int which,
		       struct timespec *ts)
{
	struct timespec local;
	int64_t ns = cpuclock_read_to(gp, ts ? ts : &local);

	if (ns == -EFAULT)
		return ns;
	/* It ended (the main thread's clock outlives it, as the kernel
	 * keeps a thread group's leader), or its G began another thread,
	 * while we read. */
	if (ns < 0 || __atomic_load_n(&gp->tid, __ATOMIC_RELAXED) != tid ||
	    g_gone(gp) ||
	    (__atomic_load_n(&gp->exited, __ATOMIC_ACQUIRE) && !gp->is_main))
		return -EINVAL;
	if (which == CPU_VIRT) {
		struct rusage ru;
		int64_t sys;
		if (SYS2(SYS_getrusage, RUSAGE_SELF, &ru) != 0)
			return -EINVAL;
		cpuclock_split_rusage(gp, ns, &ru, &ns, &sys);
	}
	if (ts)
		*ts = (struct timespec){ ns / 1000000000, ns % 1000000000 };
	return ns;
}
