/*
 * fork.c: the child of fork() keeps the calling goroutine, on a runtime of
 * its own.
 *
 * In the child only the calling OS thread exists. What the other Ms were
 * doing at that instant is frozen in the copy: goroutines half-way through
 * a queue operation, runtime locks held by threads that are gone. So the
 * child keeps nothing of the scheduler but the calling goroutine and the
 * M it ran on: the other goroutines vanish as the other threads of a
 * native fork do (their stacks are left as they are, never run again),
 * every runtime lock starts unlocked, the run queues, timers, wait queues
 * and the netpoller's fd table start empty, the netpoller makes a new
 * epoll instance on its first wait (the old one is shared with the
 * parent). The calling M becomes the child's only M, running on its own
 * g0 stack and TCB, which nobody used at the fork.
 *
 * Until it makes a thread the child is native again, as a process that
 * never made one: one OS thread (no sysmon: its M stands in for it, see
 * sysmon.c), no fd of goshim's (the netpoller's epoll comes back only for
 * a wait on an fd), SIGURG and SIGQUIT as the program left them. Its
 * first goroutine (fork_resume) brings the rest back, while the caller is
 * still its only goroutine.
 *
 * The hooks are glibc's pthread_atfork handlers (shim/fork.c registers
 * them before anyone else's), so they run inside glibc's fork on the
 * calling goroutine, with the program's own handlers around them:
 * fork_prepare runs last before the fork, fork_child and fork_parent
 * first after it. Between them glibc only takes and releases its own
 * locks, so the goroutine is in a system call for that time (its P can be
 * handed on while a large address space is copied), and the child's
 * runtime is whole before any handler of the program runs in it. Nothing
 * here allocates: _Fork and vfork, which glibc runs without its malloc
 * locks, use the same hooks.
 *
 * A thread goshim did not create may fork too: the child's thread stays
 * such a thread, with no M and every P idle, and its first goroutine
 * starts an M as usual.
 */
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include "debug.h"
#include "cpuclock.h"
#include "futex.h"
#include "netpoll.h"
#include "preempt.h"
#include "runtime.h"
#include "runtime2.h"
#include "stack.h"
#include "sys.h"
#include "timer.h"
#include "tls.h"
#include "trace.h"

_Atomic uint32_t fork_generation;
static _Atomic bool dormant; /* a child of fork, native again */

static void fork_child_runtime(struct g *gp);

void fork_prepare(void)
{
	struct g *gp = getg();

	if (!runtime_enabled || gp == NULL || gp->is_g0)
		return;
	/* glibc's child code relinks the caller's TCB into its thread list
	 * (reclaim_stacks): a goroutine's must be a list of its own. */
	if (!gp->is_main)
		tls_fork_prepare(gp->tcb);
	/* No handler runs from here until the runtime on each side is whole
	 * again: in the child, between the fork and fork_child, one would
	 * find the parent's scheduler state and glibc's locks as the fork
	 * left them (it ran exitsyscall on them, and a yield there blocked
	 * the child on malloc's list lock). Signals wait pending meanwhile,
	 * as if they had come just after the fork. */
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &(uint64_t){ ~(uint64_t)0 },
	     &gp->fork_mask, 8);
	entersyscall();
}

void fork_parent(void)
{
	struct g *gp = getg();

	if (!runtime_enabled || gp == NULL || gp->is_g0)
		return;
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &gp->fork_mask, NULL, 8);
	exitsyscall();
}

void fork_child(void)
{
	struct g *gp = getg();

	atomic_fetch_add(&fork_generation, 1);
	if (!atomic_load(&runtime_running))
		return; /* native until its second thread, as the parent was */
	fork_child_runtime(gp);
	if (gp && !gp->is_g0) {
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &gp->fork_mask, NULL, 8);
		/* The parent's thread let SIGURG through for preemption; a
		 * child whose SIGURG went back to the kernel (preempt.c)
		 * blocks it if the goroutine does, as a native child (and
		 * what it execs) inherits. */
		m_block_more(gp->m, gp->sigmask & sigbit(SIGURG) &
					    ~preempt_unblockable());
	}
}

static void fork_child_runtime(struct g *gp)
{
	if (gp && gp->is_g0)
		runtime_throw("fork_child: fork from the scheduler");
	/* The Ms that held any of these are gone. */
	trace_fork_child();
	sema_fork_child();
	stack_fork_child();
	futex_fork_child();
	timers_fork_child();
	keys_fork_child();
	tls_fork_child(gp ? gp->m->g0->tcb : NULL,
		       gp && !gp->is_main ? gp->tcb : NULL);
	netpoll_fork_child();
	sysmon_fork_child();
	preempt_fork_child();
	debug_fork_child();
	atomic_store(&dormant, true);
	/* The child's one thread is its main thread: its id is the pid,
	 * and (as glibc's fork asks the kernel: CLONE_CHILD_CLEARTID) its
	 * word to clear at exit is its TCB's tid, where the kernel wrote
	 * that id. */
	if (gp) {
		gp->tid = sys_gettid();
		gp->clear_tid = tls_tid_word(gp->tcb);
		gp->robust_list = NULL; /* glibc's child registers its TCB's */
		/* ...and the process's name is the goroutine's, as a forking
		 * thread's comm is its child's (the M had its own). */
		if (!gp->is_main)
			SYS2(SYS_prctl, PR_SET_NAME, gp->name);
	}
	sched_fork_child(gp);
	cpuclock_fork_child(gp);
	cputimers_fork_child();
	sigroute_fork_child(gp);
	/* glibc's child may count itself single-threaded; goroutines still
	 * interleave on its one thread. */
	__libc_single_threaded = 0;
}

void fork_resume(void)
{
	if (atomic_exchange(&dormant, false)) {
		/* /proc/self was the parent's when the fork copied these. */
		proc_status_open();
		futex_pagemap_open();
		sysmon_quota_reopen();
		debug_fork_resume();
	}
	sysmon_start(); /* and SIGURG's handler (preempt_init) */
}
