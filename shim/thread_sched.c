/*
 * thread_sched.c: CPU affinity, scheduling policy and priority, and nice
 * value of a thread, when the thread is a goroutine.
 *
 * glibc would send these to the kernel by the TCB's tid, which for a
 * goroutine names no thread, and the kernel calls with a tid would hit
 * whichever goroutine shares the M. core/wire.c keeps them per goroutine
 * and wires a goroutine that has its own to an M (Go's LockOSThread).
 * A pid argument means, as in Linux: 0 the caller, the process id the
 * main thread, a tid the thread it names (for goroutines: the tid gettid()
 * gave it, thread_id.c; an M's tid, read from /proc, names what runs
 * there); anything else is the kernel's to answer.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "../core/sys.h"
#include "../core/wire.h"
#include "shim.h"

/* The goroutine pid names, or NULL: not one of ours (*other: ESRCH). */
static struct g *g_of_pid(pid_t pid, bool *gone)
{
	struct g *me = getg();
	struct g *found;

	*gone = false;
	if (!shim_active())
		return NULL;
	if (pid == 0)
		return on_goroutine() ? me : NULL;
	if (on_goroutine() && pid == g_tid(me))
		return me;
	if (pid != sys_getpid() && (found = g_from_tid(pid)) != NULL)
		return found;
	return g_from_task(pid, gone);
}

/* The kernel's -errno convention as the C library's. */
static int sys_ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

static int neg_errno(int err)
{
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* A sched_param read the kernel's way: 0, or EFAULT for a bad pointer. */
static int read_prio(const struct sched_param *param, int *prio)
{
	struct sched_param sp;

	if (sys_copy_in(&sp, param, sizeof sp) != 0)
		return EFAULT;
	*prio = sp.sched_priority;
	return 0;
}

/* ---- affinity ---- */

GOSHIM_EXPORT int pthread_setaffinity_np(pthread_t t, size_t size,
					  const cpu_set_t *set)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_setaffinity_np(t, size, set);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	return wire_set_affinity(gp, size, set);
}

GOSHIM_EXPORT int pthread_getaffinity_np(pthread_t t, size_t size,
					  cpu_set_t *set)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_getaffinity_np(t, size, set);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	return wire_get_affinity(gp, size, set);
}

GOSHIM_EXPORT int sched_setaffinity(pid_t pid, size_t size,
				     const cpu_set_t *set)
{
	bool gone;
	struct g *gp = g_of_pid(pid, &gone);
	if (gp)
		return neg_errno(wire_set_affinity(gp, size, set));
	if (gone)
		return neg_errno(ESRCH);
	return sys_ret(SYS3(SYS_sched_setaffinity, pid, size, set));
}

GOSHIM_EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	bool gone;
	struct g *gp = g_of_pid(pid, &gone);
	if (gp)
		return neg_errno(wire_get_affinity(gp, size, set));
	if (gone)
		return neg_errno(ESRCH);
	long r = SYS3(SYS_sched_getaffinity, pid, size, set);
	if (r < 0)
		return neg_errno((int)-r);
	/* As glibc: the kernel wrote r bytes; the rest is cleared. */
	memset((char *)set + r, 0, size - (size_t)r);
	return 0;
}

/* ---- policy and priority ---- */

GOSHIM_EXPORT int pthread_setschedparam(pthread_t t, int policy,
					 const struct sched_param *param)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_setschedparam(t, policy, param);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	if (policy < 0)
		return EINVAL;
	return wire_set_sched(gp, policy, param->sched_priority);
}

GOSHIM_EXPORT int pthread_getschedparam(pthread_t t, int *policy,
					 struct sched_param *param)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_getschedparam(t, policy, param);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	memset(param, 0, sizeof *param);
	wire_get_sched(gp, policy, &param->sched_priority);
	*policy &= ~SCHED_RESET_ON_FORK;
	return 0;
}

GOSHIM_EXPORT int pthread_setschedprio(pthread_t t, int prio)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_setschedprio(t, prio);
	if (g_gone(gp))
		return ESRCH; /* joined or reaped */
	return wire_set_sched(gp, -1, prio);
}

GOSHIM_EXPORT int sched_setscheduler(pid_t pid, int policy,
				      const struct sched_param *param)
{
	bool gone;
	struct g *gp = g_of_pid(pid, &gone);
	if (gp) {
		int prio, err;
		if (param == NULL || policy < 0)
			return neg_errno(EINVAL);
		if ((err = read_prio(param, &prio)) != 0)
			return neg_errno(err);
		return neg_errno(wire_set_sched(gp, policy, prio));
	}
	if (gone)
		return neg_errno(ESRCH);
	return sys_ret(SYS3(SYS_sched_setscheduler, pid, policy, param));
}

GOSHIM_EXPORT int sched_getscheduler(pid_t pid)
{
	bool gone;
	struct g *gp = g_of_pid(pid, &gone);
	int policy, prio;
	if (gp) {
		wire_get_sched(gp, &policy, &prio);
		return policy;
	}
	if (gone)
		return neg_errno(ESRCH);
	return sys_ret(SYS1(SYS_sched_getscheduler, pid));
}

GOSHIM_EXPORT int sched_setparam(pid_t pid, const struct sched_param *param)
{
	bool gone;
	struct g *gp = g_of_pid(pid, &gone);
	if (gp) {
		int prio, err;
		if (param == NULL)
			return neg_errno(EINVAL);
		if ((err = read_prio(param, &prio)) != 0)
			return neg_errno(err);
		return neg_errno(wire_set_sched(gp, -1, prio));
	}
	if (gone)
		return neg_errno(ESRCH);
	return sys_ret(SYS2(SYS_sched_setparam, pid, param));
}

GOSHIM_EXPORT int sched_getparam(pid_t pid, struct sched_param *param)
{
	bool gone;
	struct g *gp = g_of_pid(pid, &gone);
	int policy;
	if (gp) {
		struct sched_param sp = { 0 };
		if (param == NULL)
			return neg_errno(EINVAL);
		wire_get_sched(gp, &policy, &sp.sched_priority);
		if (sys_copy_out(param, &sp, sizeof sp) != 0)
			return neg_errno(EFAULT);
		return 0;
	}
	if (gone)
		return neg_errno(ESRCH);
	return sys_ret(SYS2(SYS_sched_getparam, pid, param));
}

/* ---- nice (per thread on Linux) ---- */

GOSHIM_EXPORT int setpriority(__priority_which_t which, id_t who, int prio)
{
	bool gone = false;
	struct g *gp = which == PRIO_PROCESS ? g_of_pid((pid_t)who, &gone)
					     : NULL;
	if (gp)
		return neg_errno(wire_set_nice(gp, prio));
	if (gone)
		return neg_errno(ESRCH);
	return sys_ret(SYS3(SYS_setpriority, which, who, prio));
}

GOSHIM_EXPORT int getpriority(__priority_which_t which, id_t who)
{
	bool gone = false;
	struct g *gp = which == PRIO_PROCESS ? g_of_pid((pid_t)who, &gone)
					     : NULL;
	if (gp)
		return wire_get_nice(gp);
	if (gone)
		return neg_errno(ESRCH);
	/* The kernel answers 20 - nice, so that it is never negative. */
	long r = SYS2(SYS_getpriority, which, who);
	if (r < 0)
		return neg_errno((int)-r);
	return 20 - (int)r;
}

GOSHIM_EXPORT int nice(int inc)
{
	int cur = getpriority(PRIO_PROCESS, 0);
	int want = cur + inc;

	if (setpriority(PRIO_PROCESS, 0, want) != 0) {
		if (errno == EACCES)
			errno = EPERM; /* as glibc's nice */
		return -1;
	}
	return getpriority(PRIO_PROCESS, 0);
}

/*
 * The same calls made through syscall(): 0 names the calling goroutine and
 * a goroutine's tid that goroutine, as for the C library's functions. The
 * pid and the Ms' tids, the tasks /proc/self/task lists, stay the
 * kernel's: a walk over them (taskset -a) moves the OS threads, and
 * sysmon follows the affinity it leaves (GOMAXPROCS). The raw calls answer
 * as the kernel does where glibc's differ: sched_getaffinity the bytes it
 * wrote, getpriority 20 - nice.
 */
static struct g *g_of_raw_pid(pid_t pid)
{
	if (!shim_active())
		return NULL;
	if (pid == 0)
		return on_goroutine() ? getg() : NULL;
	return pid != sys_getpid() ? g_from_tid(pid) : NULL;
}

#define NR_CPUS_MAX 8192 /* the kernel's largest CONFIG_NR_CPUS */

bool shim_sched_syscall(long nr, const long *a, long *ret)
{
	struct g *gp;
	long r;

	switch (nr) {
	case SYS_sched_setaffinity:
	case SYS_sched_getaffinity:
	case SYS_sched_setscheduler:
	case SYS_sched_getscheduler:
	case SYS_sched_setparam:
	case SYS_sched_getparam:
		gp = g_of_raw_pid((pid_t)a[0]);
		break;
	case SYS_setpriority:
	case SYS_getpriority:
		gp = a[0] == PRIO_PROCESS ? g_of_raw_pid((pid_t)a[1]) : NULL;
		break;
	default:
		return false;
	}
	if (gp == NULL)
		return false; /* an exited goroutine's too: the kernel's ESRCH */
	switch (nr) {
	case SYS_sched_setaffinity:
		*ret = sched_setaffinity((pid_t)a[0], (size_t)a[1],
					 (const cpu_set_t *)a[2]);
		return true;
	case SYS_sched_getaffinity:
		/* The kernel judges the size and the buffer, and says how
		 * much of it a mask takes; the mask is the goroutine's. */
		r = SYS3(SYS_sched_getaffinity, 0, a[1], a[2]);
		if (r >= 0) {
			unsigned long mask[NR_CPUS_MAX / (8 * sizeof(long))];
			int err = wire_get_affinity(gp, sizeof mask, mask);
			if (err == 0)
				err = -(int)sys_copy_out((void *)a[2], mask,
							 (size_t)r);
			if (err)
				r = -err;
		}
		*ret = sys_ret(r);
		return true;
	case SYS_sched_setscheduler:
		*ret = sched_setscheduler((pid_t)a[0], (int)a[1],
					  (const struct sched_param *)a[2]);
		return true;
	case SYS_sched_getscheduler:
		*ret = sched_getscheduler((pid_t)a[0]);
		return true;
	case SYS_sched_setparam:
		*ret = sched_setparam((pid_t)a[0],
				      (const struct sched_param *)a[1]);
		return true;
	case SYS_sched_getparam:
		*ret = sched_getparam((pid_t)a[0], (struct sched_param *)a[1]);
		return true;
	case SYS_setpriority:
		*ret = setpriority(PRIO_PROCESS, (id_t)a[1], (int)a[2]);
		return true;
	default: /* SYS_getpriority */
		*ret = 20 - wire_get_nice(gp);
		return true;
	}
}
