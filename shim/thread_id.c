/*
 * thread_id.c: a goroutine's thread id, and the calls that name a thread
 * by it.
 *
 * The kernel's tid is the M's: it is shared by every goroutine that runs
 * there and changes as a goroutine moves. So each goroutine has its own
 * (g_tid) for its whole life: the pid for the main goroutine, a number
 * above PID_MAX_LIMIT for the others, which no task of the system can
 * have; it is also the tid in its TCB, which glibc's own code uses
 * (recursive mutex owners). gettid and syscall(SYS_gettid) answer it,
 * set_tid_address answers it and clears its word as the goroutine exits,
 * and tgkill and tkill (through syscall() too) signal the goroutine it
 * names, and rt_tgsigqueueinfo reaches it with the caller's siginfo;
 * kill and sigqueue with it
 * signal the process, as Linux does for a thread's id. The scheduling calls take it
 * as well (thread_sched.c), prctl's naming calls act on the goroutine
 * (prctl.c), set_robust_list and get_robust_list keep its own list.
 * Since no task of the system has such an id, a call goshim does not see
 * that names it gets ESRCH, never another thread. A program that opens
 * /proc/self/task/TID itself finds its comm file (task_comm.c) and no
 * other entry (ENOENT), as for a thread that has exited.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../core/sys.h"
#include "../core/wire.h"
#include "shim.h"

/* The kernel's -errno convention as the C library's. */
static long tid_ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* What the kernel does for tgkill(pid, tid, sig) when tid may be a
 * goroutine's (pid < 0: tkill); true if it was one, *r the -errno
 * result. */
static bool goroutine_kill(pid_t pid, pid_t tid, int sig, long *r)
{
	struct g *gp;

	if (!shim_active() || tid <= 0 || (gp = g_from_tid(tid)) == NULL)
		return false;
	if (pid >= 0 && pid != sys_getpid())
		*r = -ESRCH;
	else if (sig < 0 || sig > 64)
		*r = -EINVAL;
	else
		*r = sig == 0 ? 0 : -(long)sigthread_send(gp, sig);
	return true;
}

/* rt_tgsigqueueinfo(pid, tid, sig, si) as the kernel does it when tid may
 * be a goroutine's: a code the kernel itself makes (or tgkill's) only to
 * oneself. */
static bool goroutine_queue(pid_t pid, pid_t tid, int sig,
			    const siginfo_t *usi, long *r)
{
	struct g *gp;
	siginfo_t si;

	if (!shim_active() || tid <= 0 || (gp = g_from_tid(tid)) == NULL)
		return false;
	if ((*r = sys_copy_in(&si, usi, sizeof si)) < 0)
		return true;
	si.si_signo = sig;
	if (pid != sys_getpid())
		*r = -ESRCH;
	else if (sig < 0 || sig > 64)
		*r = -EINVAL;
	else if ((si.si_code >= 0 || si.si_code == SI_TKILL) &&
		 gp != getg())
		*r = -EPERM;
	else
		*r = sig == 0 ? 0 : -(long)sigthread_queue(gp, &si);
	return true;
}

/* get_robust_list(pid, ...) where pid (0: the caller) is a goroutine;
 * false for the kernel to answer. */
static bool robust_get(pid_t pid, void **head_ptr, size_t *len_ptr,
		       long *r)
{
	struct g *gp;
	void *head;
	size_t len;

	if (pid == 0)
		gp = on_goroutine() ? getg() : NULL;
	else
		gp = pid > 0 && shim_active() ? g_from_tid(pid) : NULL;
	if (gp == NULL)
		return false;
	head = wire_robust_list(gp);
	len = sizeof(struct robust_list_head);
	*r = sys_copy_out(len_ptr, &len, sizeof len);
	if (*r == 0)
		*r = sys_copy_out(head_ptr, &head, sizeof head);
	return true;
}

pid_t shim_gettid(void)
{
	return on_goroutine() ? g_tid(getg()) : (pid_t)SYS0(SYS_gettid);
}

GOSHIM_EXPORT pid_t gettid(void)
{
	return shim_gettid();
}

GOSHIM_EXPORT int tgkill(pid_t pid, pid_t tid, int sig)
{
	long r;
	if (!goroutine_kill(pid, tid, sig, &r))
		r = SYS3(SYS_tgkill, pid, tid, sig);
	return (int)tid_ret(r);
}

/* kill and sigqueue take a thread's id too, and signal its process: for
 * a goroutine's, ours. */
static pid_t process_of(pid_t pid)
{
	if (pid > 0 && pid != sys_getpid() && shim_active() &&
	    g_from_tid(pid) != NULL)
		return sys_getpid();
	return pid;
}

GOSHIM_EXPORT int kill(pid_t pid, int sig)
{
	pid = process_of(pid);
	sigroute_before_send(pid, sig);
	return (int)tid_ret(SYS2(SYS_kill, pid, sig));
}

GOSHIM_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
	siginfo_t si = { .si_signo = sig, .si_code = SI_QUEUE };

	/* As glibc's: the caller's pid and uid, the value. */
	si.si_pid = sys_getpid();
	si.si_uid = (uid_t)SYS0(SYS_getuid);
	si.si_value = value;
	pid = process_of(pid);
	sigroute_before_send(pid, sig);
	return (int)tid_ret(SYS3(SYS_rt_sigqueueinfo, pid, sig, &si));
}

bool shim_tid_syscall(long nr, const long *a, long *ret)
{
	pid_t pid;
	long r;

	switch (nr) {
	case SYS_gettid:
		r = shim_gettid();
		break;
	case SYS_set_tid_address:
		if (!on_goroutine())
			return false;
		g_set_tid_address(getg(), (_Atomic int *)a[0]);
		r = g_tid(getg());
		break;
	case SYS_tgkill:
		if (!goroutine_kill((pid_t)a[0], (pid_t)a[1], (int)a[2], &r))
			return false;
		break;
	case SYS_tkill:
		if (!goroutine_kill(-1, (pid_t)a[0], (int)a[1], &r))
			return false;
		break;
	case SYS_rt_tgsigqueueinfo:
		if (!goroutine_queue((pid_t)a[0], (pid_t)a[1], (int)a[2],
				     (const siginfo_t *)a[3], &r))
			return false;
		break;
	case SYS_kill:
		pid = process_of((pid_t)a[0]);
		sigroute_before_send(pid, (int)a[1]);
		r = SYS2(SYS_kill, pid, a[1]);
		break;
	case SYS_rt_sigqueueinfo:
		pid = process_of((pid_t)a[0]);
		sigroute_before_send(pid, (int)a[1]);
		r = SYS3(SYS_rt_sigqueueinfo, pid, a[1], a[2]);
		break;
	case SYS_set_robust_list:
		if (!on_goroutine())
			return false;
		r = wire_set_robust_list(getg(),
					 (struct robust_list_head *)a[0],
					 (size_t)a[1]);
		break;
	case SYS_get_robust_list:
		if (!robust_get((pid_t)a[0], (void **)a[1], (size_t *)a[2], &r))
			return false;
		break;
	case SYS_prctl:
		if (!shim_prctl((int)a[0], (const unsigned long *)&a[1], &r))
			return false;
		break;
	default:
		return false;
	}
	*ret = tid_ret(r);
	return true;
}
