/*
 * cpuclock.c: the thread CPU clocks of goroutines: CLOCK_THREAD_CPUTIME_ID,
 * the clock pthread_getcpuclockid names, getrusage(RUSAGE_THREAD).
 *
 * Linux encodes a CPU clock in a negative clockid: ~pid << 3, bit 2 for a
 * thread's clock (else a process's), and in the low two bits what it
 * counts: user and system time (PROF), user time (VIRT), or all of it to
 * the nanosecond (SCHED, the one glibc hands out); pid 0 is the caller.
 * A goroutine's clockid holds its thread id (g_tid: the pid for the main
 * goroutine). Other goroutines' ids are above PID_MAX_LIMIT, which no task
 * has: given one straight, the kernel answers EINVAL, and so does goshim
 * once the goroutine has ended, as the kernel does for a thread that has
 * exited. Ids are not reused until 2^29 - 2^22 threads later.
 *
 * The time is core/cpuclock.c's, which starts counting at the first of
 * these calls. The kernel samples at each tick whether a thread runs in
 * user or kernel mode; a goroutine's time is split in the proportion of
 * the process's, and neither part goes back (as the kernel's cputime_adjust
 * keeps them).
 */
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include "../core/cpuclock.h"
#include "../core/sys.h"
#include "shim.h"

#define CPU_PERTHREAD 4

static clockid_t cpu_clockid(pid_t pid, int which, bool thread)
{
	return (clockid_t)((~(unsigned)pid << 3) | (thread ? CPU_PERTHREAD : 0) |
			   (unsigned)which);
}

static pid_t cpu_pid(clockid_t clk)
{
	return (pid_t)~(clk >> 3);
}

int shim_cpuclock_target(clockid_t clk, struct g **gpp, int *which)
{
	if (clk == CLOCK_THREAD_CPUTIME_ID)
		clk = cpu_clockid(0, CPU_SCHED, true);
	if (clk >= 0 || !(clk & CPU_PERTHREAD))
		return CPU_KERNEL;
	/* Asked before the second thread, it is still the kernel's clock,
	 * and goroutines' clocks count from their start. */
	cpuclock_enable();
	if (!atomic_load(&runtime_running))
		return CPU_KERNEL;
	*which = clk & 3;
	if (*which == CPU_MAX)
		return CPU_INVALID;
	pid_t pid = cpu_pid(clk);
	struct g *me = on_goroutine() ? getg() : NULL;
	if (pid == 0 || (me && pid == g_tid(me))) {
		*gpp = me;
		return me ? CPU_GOROUTINE : CPU_KERNEL;
	}
	if ((*gpp = g_from_tid(pid)) != NULL)
		return CPU_GOROUTINE;
	/* The main goroutine, ended or not: the kernel keeps a thread
	 * group's leader, and its clock, while other threads live. */
	if (pid == sys_getpid() && (*gpp = g_main()) != NULL)
		return CPU_GOROUTINE;
	/* A goroutine's id, ended; else a task the kernel knows of (an M,
	 * a thread goshim did not make) or not. */
	return pid >= 1 << 22 ? CPU_INVALID : CPU_KERNEL;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static int cpu_gettime(clockid_t clk, struct timespec *ts)
{
	struct g *gp;
	int which;

	switch (shim_cpuclock_target(clk, &gp, &which)) {
	case CPU_INVALID:
		return fail(EINVAL);
	case CPU_GOROUTINE: {
		int64_t ns = cpuclock_value(gp, g_tid(gp), which, ts);
		return ns < 0 ? fail((int)-ns) : 0;
	}
	}
	/* The process clock named by the caller's own thread id: the
	 * kernel's gettime allows that for a thread it knows. */
	if (clk < 0 && !(clk & CPU_PERTHREAD) && on_goroutine() &&
	    cpu_pid(clk) == g_tid(getg()))
		clk = cpu_clockid(0, clk & 3, false);
	if (real.clock_gettime == NULL) /* before real_init */
		return SYS2(SYS_clock_gettime, clk, ts) ? fail(EINVAL) : 0;
	return real.clock_gettime(clk, ts);
}

GOSHIM_EXPORT int clock_gettime(clockid_t clk, struct timespec *ts)
{
	/* Every clock but the CPU clocks goes straight on (the vDSO). */
	if (__builtin_expect(clk >= 0 && clk != CLOCK_THREAD_CPUTIME_ID &&
				     real.clock_gettime != NULL,
			     1))
		return real.clock_gettime(clk, ts);
	return cpu_gettime(clk, ts);
}

GOSHIM_EXPORT int clock_getres(clockid_t clk, struct timespec *res)
{
	struct g *gp;
	int which;

	real_init();
	switch (shim_cpuclock_target(clk, &gp, &which)) {
	case CPU_INVALID:
		return fail(EINVAL);
	case CPU_GOROUTINE:
		/* The kernel's resolution for a thread clock of this kind. */
		return real.clock_getres(cpu_clockid(0, which, true), res);
	}
	return real.clock_getres(clk, res);
}

GOSHIM_EXPORT int pthread_getcpuclockid(pthread_t t, clockid_t *clk)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL)
		return real.pthread_getcpuclockid(t, clk);
	/* Joined, or exited: glibc finds its tid cleared. */
	if (g_gone(gp) || g_exited(gp))
		return ESRCH;
	cpuclock_enable();
	*clk = cpu_clockid(g_tid(gp), CPU_SCHED, true);
	return 0;
}

/* RUSAGE_THREAD on a goroutine: core/cpuclock.h's cpuclock_rusage. */
GOSHIM_EXPORT int getrusage(int who, struct rusage *ru)
{
	real_init();
	if (who == RUSAGE_THREAD)
		cpuclock_enable();
	if (who != RUSAGE_THREAD || !atomic_load(&runtime_running) ||
	    !on_goroutine())
		return real.getrusage(who, ru);
	struct rusage proc, r;
	if (real.getrusage(RUSAGE_SELF, &proc) != 0)
		return -1;
	int err = cpuclock_rusage(getg(), &proc, &r);
	if (err)
		return fail(err);
	return sys_copy_out(ru, &r, sizeof r) != 0 ? fail(EFAULT) : 0;
}

bool shim_cpuclock_syscall(long nr, const long *a, long *ret)
{
	struct g *gp;
	int which;

	switch (nr) {
	case SYS_clock_gettime:
		*ret = clock_gettime((clockid_t)a[0], (struct timespec *)a[1]);
		return true;
	case SYS_clock_getres:
		*ret = clock_getres((clockid_t)a[0], (struct timespec *)a[1]);
		return true;
	case SYS_getrusage:
		*ret = getrusage((int)a[0], (struct rusage *)a[1]);
		return true;
	case SYS_clock_nanosleep:
		if (shim_cpuclock_target((clockid_t)a[0], &gp, &which) ==
		    CPU_KERNEL)
			return false;
		int err = clock_nanosleep((clockid_t)a[0], (int)a[1],
					  (const struct timespec *)a[2],
					  (struct timespec *)a[3]);
		*ret = err ? fail(err) : 0;
		return true;
	}
	return false;
}
