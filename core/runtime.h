/*
 * runtime.h: the G, M and P of the scheduler, and the calls shim/ may make.
 * What only core shares is in runtime2.h; shim reads no field of G, M or P
 * itself (tests/layering/check.py), only through the calls here, some of
 * them inline because they sit on fast paths.
 *
 * G is a goroutine: one pthread of the program. It owns a stack and a
 * complete glibc thread identity (TLS block + TCB, see tls.c); its pthread_t
 * is that TCB, so glibc's own pthread_self() already names it.
 * M is an OS thread. It runs Gs from its g0, a context on the M's own pthread
 * stack and TCB that holds the scheduler loop (schedule() in proc.c).
 * P is a logical processor: the right to run Go code, with a local run queue.
 * There are GOMAXPROCS Ps; an M must hold one to run a G.
 *
 * The runtime keeps no per-M state in __thread variables: a goroutine moves
 * between Ms and takes its TLS with it. The only TLS slot is the current G
 * (getg), which every TLS block, g0's included, has its own copy of.
 */
#ifndef GOSHIM_RUNTIME_H
#define GOSHIM_RUNTIME_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "tls.h"
#include "../arch/arch.h"
#include "lock.h"
#include "timer.h"

#define RUNQ_SIZE 256

enum gstatus {
	G_IDLE,     /* just allocated, or in a free list */
	G_RUNNABLE, /* on a run queue */
	G_RUNNING,  /* on an M */
	G_WAITING,  /* parked: see waitreason */
	G_DEAD,     /* exited; waiting to be joined or reused */
	G_SYSCALL,  /* in a system call, on an M without a P */
};
/* Or'ed into a waiting or runnable G's status while a goroutine dump reads
 * its stack (traceback.c): goready and execute wait until it is cleared. */
#define G_SCAN 0x100u

struct m;
struct p;
struct waiter;
struct mutex_link;
struct trace_buf;

/* Per-G pthread key values, seq-tagged so that a value set under a deleted
 * key is never returned for a new key. */
#define KEY_L2 32
struct key_slot {
	uintptr_t seq;
	void *value;
};

struct g {
	struct arch_ctx ctx; /* valid while not running */
	_Atomic uint32_t status;
	/* A goready that found it awake (on its way into a park, or running
	 * a signal handler out of one): its next park returns at once. */
	_Atomic bool ready_permit;
	uint32_t magic;
	uint64_t goid;
	struct m *m;	       /* M running it, or NULL */
	struct g *schedlink;   /* run queue / free list link */
	struct g *alllink;     /* allgs list */
	const char *waitreason;
	int64_t waitsince;     /* nanotime() when it parked */
	void *tcb;	       /* thread pointer: its struct pthread */

	/* stack: usable [stack_lo, stack_hi); mapping [map, map+map_size) */
	char *stack_lo, *stack_hi;
	char *map;
	size_t map_size;
	size_t guard_size;
	bool user_stack; /* caller-supplied (pthread_attr_setstack) */
	unsigned vg_stack; /* valgrind's id for it (core/stack.c) */
	bool is_main;	 /* the process's main thread */
	/* Its thread id for its whole life (gettid): the pid for the main
	 * goroutine, else above PID_MAX_LIMIT (tls_fake_tid), never a real
	 * task's. clear_tid: what set_tid_address gave it, cleared and woken
	 * as it exits (the kernel's CLONE_CHILD_CLEARTID). */
	pid_t tid;
	_Atomic int *clear_tid;
	/* What set_robust_list gave it, the list the kernel would walk as it
	 * exits; NULL: its TCB's (glibc's), as glibc registers for every
	 * thread. */
	struct robust_list_head *robust_list;
	bool is_g0;
	bool tls_used;	 /* TLS ran user code: re-initialise before reuse */
	_Atomic uint8_t live; /* counted alive or not (live.c) */
	/* sigmask is a wait's own (sigsuspend), not counted in its class */
	_Atomic bool sigmask_temp;

	/* program-visible thread state */
	void *(*fn)(void *);
	void *arg;
	void *retval;
	struct spinlock jlock; /* guards the fields below */
	bool detached;
	bool exited;
	struct waiter *joiner; /* who waits in pthread_join for us */
	char name[16];
	/* attributes reported back by pthread_getattr_np */
	int inheritsched, scope;
	size_t req_stacksize;

	/* pthread key values: KEY_L2 + 1 blocks of KEY_L2 slots, all
	 * allocated on first use (most threads never set a key) */
	struct key_slot **keys;
	bool keys_used;

	struct mutex_link *robust; /* robust mutexes it holds (mutex.c) */

	/* Its signal mask (the kernel's 64-bit sigset): the M's thread
	 * carries it while the G runs; new goroutines inherit it. */
	uint64_t sigmask;
	/* Signals sent to it (pthread_kill) while it was not on an M. */
	_Atomic uint64_t sigpending;
	/* Of them, the process's (kill, timers, the kernel's choice): given
	 * to it, not sent to it, so they go back to the process if it ends
	 * first, as a thread's exit hands the process's pending signals to
	 * another (sigthread_exit). */
	_Atomic uint64_t sigprocess;
	/* Ending (sigthread_exit): no process signal is given to it. */
	_Atomic bool sigexiting;
	/* Their siginfo, one per instance (sigkeep.c, under its lock). */
	struct sigkept *kept;
	/* Signals it sent itself while it blocked them: pending on its M's
	 * thread, taken off it when it leaves the M (sigthread_self_drain).
	 * Its own: no other thread reads or writes it. */
	uint64_t sigself;
	/* The thread's mask while it forks (fork.c blocks every signal
	 * from its prepare hook to its parent and child hooks). */
	uint64_t fork_mask;
	_Atomic uint64_t sigwait_set; /* what it waits for in sigwait */
	stack_t altstack; /* its sigaltstack; the M's while it runs */
	/* Interruptible waits (sigthread.c): a signal with a handler ends the
	 * wait on intr_w as a timeout would, and sets intr_hit; intr_restart
	 * says whether every handler that ran asked for SA_RESTART. */
	bool intr_ok;
	bool intr_hit;
	bool intr_restart;
	struct waiter *intr_w; /* jlock-guarded */
	/* Cancellation (shim/pthread_cancel.c): a wait begun with
	 * intr_begin_cancel or cancel_begin ends when a cancel request is
	 * due (glibc's word in the TCB says so), at once if it already is;
	 * cancel_hit says it ended so. cancel_syscall: in a raw system call
	 * that is a cancellation point (SYS_CANCEL), which pthread_cancel
	 * interrupts. */
	bool cancel_ok;
	bool cancel_hit;
	_Atomic bool cancel_syscall;

	/* Wired to an M (wire.h): its own thread values, jlock-guarded, and
	 * the process-shared locks it holds (its TCB then has the M's tid;
	 * own_tid is its own meanwhile). */
	struct m *lockedm;
	struct thread_attrs *attrs;
	int32_t pshared_holds;
	pid_t own_tid;
	/* Its real-time priority: SCHED_FIFO's or SCHED_RR's, 0 under the
	 * other policies (wire.c keeps it). Wait queues wake the highest
	 * first, and a new thread above its creator runs first. */
	_Atomic int rtprio;
	/* Stepping aside for a goroutine of a higher rtprio, as the kernel
	 * preempts a thread for it: outranked_by, the one it readied (its
	 * wake then ends in rt_yield); resume_on_run, the goroutine that
	 * waits until this one runs (execute readies it); stepped_aside,
	 * set while this one waits so. */
	struct g *outranked_by;
	_Atomic(struct g *) resume_on_run;
	_Atomic bool stepped_aside;

	/* sysmon asked it to yield (ran past its slice): checked where it
	 * enters the runtime; cleared when it is scheduled */
	_Atomic bool preempt;
	/* Program signal handlers running on it (sigroute.c, preempt.c):
	 * the code they interrupted may hold a runtime lock, so a runtime
	 * entry in one is no place to yield. A handler that longjmps out
	 * leaves it counted. */
	uint32_t in_sighandler;
	/* A program handler runs on it over code that may hold a lock
	 * (goshim's, libc's): that code's stack pointer (the outermost such
	 * handler's), else 0. No preemption while it runs below it; a
	 * handler left by longjmp leaves its sp above it, seen as left. */
	uintptr_t locked_frame_sp;
	/* Program signal handlers that ran on it, ever: an EINTR with no
	 * new one was goshim's own signal (shim/fd.h, own_eintr). */
	uint32_t handlers_ran;

	/* Its CPU clock (cpuclock.c): the runs that ended, and the run in
	 * progress that counts (its M, that M's runseq, the M's thread CPU
	 * time when it began). cpu_seq is odd while one writer changes
	 * them. */
	_Atomic uint32_t cpu_seq;
	int64_t cpu_ns;
	struct m *cpu_m;
	uint64_t cpu_run;
	int64_t cpu_since;
	int64_t cpu_utime, cpu_stime; /* the split last reported */
	/* Times it parked or yielded, and was preempted (getrusage's
	 * context switches). */
	uint32_t nvcsw, nivcsw;
};


struct m {
	int64_t id;
	struct g *g0;
	struct g *curg;
	/* Bumped as a goroutine starts and ends each run here: odd while
	 * curg runs (cpuclock.h). */
	_Atomic uint64_t runseq;
	struct p *p;
	struct p *nextp;	/* P handed over by startm */
	struct p *oldp;		/* P left behind by entersyscall */
	bool spinning;
	pid_t tid;
	struct note park;	/* idle M sleeps here */
	_Atomic bool idle_masked; /* asleep with the idle mask (m.c) */
	struct m *schedlink;	/* idle list */
	struct m *alllink;
	/* what g0 does for curg after it switched back; returns a G to run
	 * next, or NULL */
	struct g *(*mcall_fn)(struct g *);
	bool (*park_unlockf)(struct g *, void *); /* for park_m */
	void *park_lock;
	/* A hand-off in flight (proc.c): the G this M switched away from,
	 * and what the G it switched to runs for it first. */
	struct g *handoff_prev;
	struct g *(*handoff_fn)(struct g *);
	uint32_t fastrand;
	uint64_t chaosrand; /* GOSHIM_DEBUG=chaos's stream (chaos.c) */
	uint64_t sigmask; /* what the thread's signal mask is now */
	/* ...what the thread is known to block: while it changes, what the
	 * old and new masks both block (sigmask.c's thread_take), read by
	 * sigroute_before_send */
	_Atomic uint64_t sigmask_taken;
	/* signals sent marked for a goroutine on this M and not seen taken
	 * yet, and when the last was sent (sigthread.c) */
	_Atomic uint64_t directed;
	_Atomic int64_t directed_ns;
	bool sigmask_dead; /* ...and it is that of a goroutine now gone */
	stack_t altstack;  /* the thread's sigaltstack now */
	struct g *lockedg; /* the goroutine wired to it, if any */
	void *robust_prev; /* its robust list, while lockedg's is the kernel's */
	/* Asleep in stopm, standing in for an absent sysmon (sysmon.c): a
	 * handler may do sysmon's part itself. */
	volatile bool stand_in;

	/* Who may touch p (see MP_* below): sysmon takes the P of an M
	 * blocked in the kernel in user code only by moving this from
	 * MP_USER, which the M leaves only inside a claim (p_claim). */
	_Atomic uint32_t pstate;
	/* claims open on the P (syscall.c), written by the M's thread only;
	 * syscall_claim: entersyscall opened one that exitsyscall closes */
	_Atomic int32_t claims;
	bool syscall_claim;
	_Atomic int64_t preempt_sent; /* when sysmon signalled it; 0 none */
	_Atomic bool preempt_refused; /* the handler found no safe point */
	int statfd;		   /* sysmon's /proc/self/task/TID/stat, +1 */
	int sysfd;		   /* and .../syscall, +1 (m_task_files_close) */
	int64_t sysmon_lookwhen;   /* sysmon last read that file */
	int64_t sysmon_lostcpu;	   /* its CPU time then, while MP_LOST */
	uint32_t sysmon_stillness; /* looks since, while MP_LOST */

	struct trace_buf *trace; /* its GOSHIM_TRACE events (trace.c) */
	/* Its thread's CPU clock as its last counted run ended, and runseq
	 * then (cpuclock.c). */
	int64_t cpu_last;
	uint64_t cpu_last_seq;
};

/*
 * m.pstate. MP_USER: the M runs its goroutine's code and holds its P, but
 * will not touch it without p_claim. MP_RUNTIME: runtime code (g0, or a
 * goroutine that claimed): the P is the M's alone. MP_SYSCALL: its P is
 * left in P_SYSCALL (entersyscall). MP_STEALING -> MP_LOST: sysmon took
 * the P while the thread slept in the kernel without telling the runtime;
 * the goroutine runs on without a P until it next enters the runtime,
 * which then finds one as exitsyscall's slow path does.
 */
enum { MP_RUNTIME, MP_USER, MP_SYSCALL, MP_STEALING, MP_LOST };

struct p {
	int32_t id;
	_Atomic uint32_t status; /* P_IDLE / P_RUNNING / P_SYSCALL */
	struct m *m;
	struct p *link;	 /* idle list */
	uint32_t schedtick;
	_Atomic uint32_t syscalltick; /* bumped by every syscall exit */
	/* what sysmon saw last time, to tell a long syscall from many */
	uint32_t sysmon_syscalltick;
	int64_t sysmon_syscallwhen;
	bool sysmon_queued; /* in a syscall with work queued, at the last look */
	/* and to tell a goroutine that runs (or sleeps) long from many */
	uint32_t sysmon_schedtick;
	uint32_t sysmon_runtick; /* syscalltick when schedtick was seen */
	struct g *sysmon_g;	 /* the goroutine it was running */
	int64_t sysmon_schedwhen;
	bool sysmon_asleep;	 /* its thread slept at sysmon's last look */
	/* the slice of a goroutine that goes in and out of system calls:
	 * schedtick alone, as Go measures it */
	uint32_t slice_tick;
	int64_t slice_when;
	_Atomic(struct g *) syscall_g; /* who entered the syscall it is in */

	_Atomic uint32_t runqhead;
	_Atomic uint32_t runqtail;
	_Atomic(struct g *) runq[RUNQ_SIZE];
	_Atomic(struct g *) runnext;
	/* Bumped by the owner each time it runs its runnext: a thief that
	 * napped before taking runnext sees whether the P ran it itself. */
	_Atomic uint32_t runnext_runs;

	struct g *gfree; /* dead Gs with their stacks, for reuse */
	int32_t ngfree;

	/* Goroutine ids and fake tids for the goroutines made here, taken
	 * from the global counters ID_BATCH at a time: creators on two Ps
	 * do not write one cache line for each. */
	uint64_t goidcache, goidcacheend;
	uint64_t tidcache, tidcacheend;

	struct timers timers; /* timers added while this P ran (timer.c) */

	/* Past GOMAXPROCS after a resize: whoever holds it gives it up at
	 * the next chance (procresize). */
	_Atomic bool dying;
};

/* P_DEAD: past GOMAXPROCS, given up; procresize may bring it back. */
enum { P_IDLE, P_RUNNING, P_SYSCALL, P_DEAD };


extern _Atomic int32_t gomaxprocs;

/* The current G; NULL on threads the runtime did not create. */
extern __thread struct g *g_current;
static inline struct g *getg(void) { return g_current; }

/* True once the runtime runs and this thread is one of its goroutines. */
static inline bool on_goroutine(void)
{
	struct g *gp = getg();
	return gp && !gp->is_g0;
}

/* Its thread id for its whole life (gettid, g.tid). */
static inline pid_t g_tid(const struct g *gp)
{
	return gp->tid;
}
/* It is the process's main thread (whose TCB and comm are glibc's and the
 * kernel's). */
static inline bool g_is_main(const struct g *gp)
{
	return gp->is_main;
}

/* ---- sigmask.c: an M's thread's signal mask and altstack ---- */
/* The calling goroutine gp changed its thread's sigaltstack: the G
 * records it, and its M, which has it now. */
void g_altstack_update(struct g *gp);
/* For a call, made in entersyscall, whose child starts from the calling
 * thread's mask (posix_spawn, system, popen): the thread blocks all the
 * goroutine blocks, SIGURG included, until spawn_mask_end(returned). */
uint64_t spawn_mask_begin(void);
void spawn_mask_end(uint64_t extra);

/* Signals as bits of the kernel's 64-bit sigset; SIGCANCEL and SIGSETXID
 * are glibc's own, which every thread must take and nobody may block. */
#define SIG_GLIBC_INTERNAL ((uint64_t)3 << 31)
/* SIGKILL and SIGSTOP: the kernel drops them from every mask it is given,
 * and so no mask reports them. */
#define SIG_KERNEL_UNBLOCKABLE (((uint64_t)1 << 8) | ((uint64_t)1 << 18))

/* ---- sigthread.c: pthread_kill to a goroutine ---- */
int sigthread_send(struct g *gp, int sig); /* 0 or errno */
/* The same with the sender's siginfo (si->si_signo the signal), which
 * gp's handler or sigwaitinfo will see: pthread_sigqueue, a timer. */
int sigthread_queue(struct g *gp, const siginfo_t *si);
/* After glibc's pthread_cancel marked gp: get it to act. A goroutine in a
 * cancellable wait, or in a raw cancellable system call, is woken; one
 * that glibc meant to cancel asynchronously (inside one of glibc's
 * cancellable calls, or of type PTHREAD_CANCEL_ASYNCHRONOUS) gets the
 * SIGCANCEL glibc sent to its fake tid. */
void gcancel(struct g *gp);
/* A cancel request for gp is due now (never for the main goroutine:
 * its unwind buffer is glibc's own, and unwinding there ends the M). */
static inline bool g_cancel_due(struct g *gp)
{
	return !gp->is_main && tls_cancel_due(gp->tcb);
}
/* gp is of type PTHREAD_CANCEL_ASYNCHRONOUS (glibc's state in its TCB). */
static inline bool g_cancel_async(struct g *gp)
{
	return atomic_load_explicit(tls_cancelhandling(gp->tcb),
				    memory_order_relaxed) &
	       TLS_CANCELTYPE_ASYNC;
}
/* The caller is a goroutine and a cancel request for it is due
 * (glibc's state in its TCB). */
static inline bool g_cancel_requested(void)
{
	struct g *gp = g_current;
	return gp && !gp->is_g0 && tls_cancel_due(gp->tcb);
}
/* The caller is a goroutine, with signals kept for it (sigthread.c). */
static inline bool g_sigkept(void)
{
	struct g *gp = g_current;
	return gp && !gp->is_g0 &&
	       atomic_load_explicit(&gp->sigpending, memory_order_relaxed);
}
/* How many of the program's handlers ran on the caller (0 off a
 * goroutine): an EINTR that did not move it was goshim's own. */
static inline uint32_t g_handlers_ran(void)
{
	struct g *gp = g_current;
	return gp && !gp->is_g0 ? gp->handlers_ran : 0;
}
/* The signals kept for gp (sent while it could not take them). */
uint64_t sigthread_kept(struct g *gp);
/* Its signal mask, as the program sees it. */
uint64_t g_sigmask(struct g *gp);
/* pthread_sigmask on gp, running on its M: its mask goes from prev (as
 * read) to now (without what nobody may block), recorded in the G and the
 * M before it is on the thread; what it no longer blocks is delivered. */
void sigthread_setmask(struct g *gp, uint64_t prev, uint64_t now);
/* A call that runs with a temporary mask tmp (sigsuspend): gp takes it as
 * its own and gets back the mask to restore, which sigthread_mask_restore
 * puts back on gp, its M and the thread once the call is over, raising
 * what was kept for it meanwhile and keep lets through. */
uint64_t sigthread_mask_temporary(struct g *gp, uint64_t tmp);
void sigthread_mask_restore(struct g *gp, uint64_t keep);
/* sigwait on gp, pinned to its M in the system call: set is published for
 * sigthread_send, which then sends what it holds to the M; at the end, what
 * was sent as the wait ended is taken off the thread (m_directed_drain)
 * and kept for the next wait. */
void sigthread_sigwait_begin(struct g *gp, uint64_t set);
void sigthread_sigwait_end(struct g *gp, uint64_t set);
/* On gp, in a call that runs with a temporary mask (sigsuspend, ppoll,
 * pselect, epoll_pwait), already made gp->sigmask: what was kept for it
 * and that mask lets through is delivered now, under it, as the kernel
 * delivers a pending signal when such a call starts; true if any was (the
 * call fails with EINTR). */
bool sigthread_deliver_temporary(struct g *gp);
/* The same for a call that only looks (a zero timeout): gp->sigmask is
 * tmp only meanwhile; what tmp blocked and its own mask does not is
 * delivered after. */
bool sigthread_deliver_under(struct g *gp, uint64_t tmp);
/* chaos: on gp, running on its M, where no change is under way: the
 * thread's mask is the M's record, and (outside a handler) the
 * goroutine's without what goshim keeps unblocked; else it throws,
 * naming where. */
void sigmask_check(struct g *gp, const char *where);
/* The siginfo the kernel makes for a signal the process sends itself:
 * sig, code (SI_TKILL, SI_QUEUE), our pid and uid, nothing else. */
void sigthread_siginfo(siginfo_t *si, int sig, int code);
/* Take one kept signal that is in set (sigwait), its siginfo into *si;
 * 0 if none. */
int sigthread_take(struct g *gp, uint64_t set, siginfo_t *si);
/* In goshim's handlers, first, and after a wait in the kernel
 * (sigtimedwait) took si: true if sig was sent for another goroutine than
 * the one here (it goes back to it); else the siginfo is left as the
 * kernel's tgkill would have made it, and *here says whether goshim sent
 * it for the goroutine here (whose kept siginfo is then
 * sigthread_kept_siginfo's to give, as it takes the signal). */
bool sigthread_misdirected(int sig, siginfo_t *si, bool *here);
/* gp takes sig, marked for it, now (its handler runs, or its sigwait
 * returns it): *si becomes the siginfo of the oldest instance kept for gp,
 * where one is, and a further instance is sent after it. False if the
 * delivery is spurious (a real-time signal whose instance an earlier
 * delivery took): the handler does not run. */
bool sigthread_kept_siginfo(struct g *gp, int sig, siginfo_t *si);
/*
 * Make the caller's next waits interruptible, as the blocking calls that
 * fail with EINTR are (sleeps, fd waits, sem_wait), and end that: 0 if no
 * signal ended a wait, else EINTR (or, with restart_ok and every handler
 * that ran having SA_RESTART, ERESTART: the call starts over).
 */
#define ERESTART_CALL (-1)
static inline void intr_begin(void)
{
	struct g *gp = g_current;
	if (gp && !gp->is_g0) {
		gp->intr_ok = true;
		gp->intr_hit = false;
		gp->intr_restart = true;
	}
}
/* The same for a wait that is a cancellation point and acts on a request
 * (intr_end then says ECANCEL_CALL: the request is due; act on it);
 * cancel_begin for one that signals do not end (condvars, joins). */
#define ECANCEL_CALL (-2)
static inline void cancel_begin(void)
{
	struct g *gp = g_current;
	if (gp && !gp->is_g0) {
		gp->cancel_ok = true;
		gp->cancel_hit = false;
	}
}
static inline void intr_begin_cancel(void)
{
	intr_begin();
	cancel_begin();
}
static inline int intr_end(bool restart_ok)
{
	struct g *gp = g_current;
	if (!gp || gp->is_g0)
		return 0;
	gp->intr_ok = false;
	gp->cancel_ok = false;
	if (!gp->intr_hit) {
		if (!gp->cancel_hit)
			return 0;
		gp->cancel_hit = false;
		return ECANCEL_CALL;
	}
	gp->intr_hit = false;
	return restart_ok && gp->intr_restart ? ERESTART_CALL : EINTR;
}

/* ---- sigroute.c: the program's handlers; process signals ---- */
int sigroute_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old); /* 0 or errno */
/* After glibc's pthread_cancel: put goshim's handler in front of the
 * SIGCANCEL handler glibc installed (once). */
void sigroute_adopt_sigcancel(void);
bool sigroute_adopted(void);
/* The program (natively, before the start) may have installed a handler
 * for sig since sigroute_adopt looked: put it behind goshim's too. */
void sigroute_adopt_one(int sig);
/* Before the program sends sig to pid (kill, sigqueue): a signal every
 * goroutine blocks must find every M's thread blocking it too. */
void sigroute_before_send(pid_t pid, int sig);

/* ---- runtime.c ---- */
extern bool runtime_enabled; /* false: stay native (GOSHIM_DISABLE, refusal) */
/* Set once the scheduler has started (runtime_start). */
extern _Atomic bool runtime_running;
/* ...and no interposer needs to do more than know it (chaos is off):
 * shim_active's fast path. */
extern _Atomic bool shim_fast;
void runtime_ensure_init(void);
/* Start the scheduler if it is not yet running (the program makes its
 * second thread); false if it stays off (refused, or called from inside
 * its own start). */
bool runtime_start(void);
int64_t nanotime(void);

/* ---- g.c: goroutines made and ended ---- */
struct spawn_attr {
	size_t stacksize;   /* 0: default */
	void *stackaddr;    /* caller stack (lowest address), or NULL */
	size_t guardsize;
	bool detached;
	int sched_policy, sched_priority, inheritsched, scope;
	struct thread_attrs *attrs; /* its thread values (wire.h), or NULL */
};
/* Create a goroutine running fn(arg); returns it or NULL with errno-style
 * code in *err (EAGAIN, EINVAL). */
struct g *newproc(void *(*fn)(void *), void *arg,
		  const struct spawn_attr *attr, void **handle, int *err);
/* The live goroutine whose thread id is tid (g.tid), or NULL. */
struct g *g_from_tid(pid_t tid);
/* The G behind a pthread_t: NULL for a thread goshim did not make; a G
 * that g_gone() calls gone for a handle whose thread was joined or reaped
 * (glibc answers ESRCH for those while its descriptor is cached). */
struct g *g_from_handle(uintptr_t handle);
/* gp has exited (under its jlock): glibc would find its tid cleared. */
bool g_exited(struct g *gp);
static inline bool g_gone(struct g *gp)
{
	return atomic_load(&gp->status) == G_IDLE;
}

void gosched(void);  /* yield: to the global queue (sched_yield) */
void goyield(void);  /* yield: to the tail of the local queue */
void gopreempt(void); /* preempted by sysmon's signal: as gosched */
/* pthread_exit on a goroutine, before glibc's own unwinds its stack and
 * longjmps to the buffer the thread started with: retval is kept for its
 * joiner, and the main goroutine's buffer (glibc's) is aimed at
 * main_goroutine_exit (it ends there at once if it has none). */
void go_unwind_prepare(void *retval);
/* The main goroutine, ended or not; NULL before the scheduler made it. */
struct g *g_main(void);
/* The goroutine a kernel task id names: the process id the main
 * goroutine's, an M's thread id the goroutine wired to it, else the one
 * running there. NULL with *gone: a task of ours where no goroutine lives
 * (ESRCH); NULL without: none of ours. Under sched.alllock. */
struct g *g_from_task(pid_t pid, bool *gone);
/* What pthread_getattr_np reports of gp, in the terms it was made with:
 * its stack (the whole block above the guard, TLS included), guard,
 * detach state now, policy and priority now, inherit and scope as made
 * (attrs: NULL; the affinity is wire_get_affinity's). */
void g_attr(struct g *gp, struct spawn_attr *a);
/* set_tid_address's word, cleared and woken as gp exits (what
 * PR_GET_TID_ADDRESS reads back). */
_Atomic int *g_tid_address(struct g *gp);
void g_set_tid_address(struct g *gp, _Atomic int *addr);

/* ---- join.c ---- */
/* pthread_join and friends: deadline is monotonic ns or -1; try: EBUSY
 * instead of waiting. */
int go_join(struct g *gp, void **ret, bool try, int64_t deadline);
int go_detach(struct g *gp);

/* ---- fork.c: the child of fork keeps the calling goroutine (see fork.c)
 * pthread_atfork hooks: last before the fork, first after it. */
void fork_prepare(void);
void fork_parent(void);
void fork_child(void);


/* ---- system calls (syscall.c) and sysmon (sysmon.c) ----
 * Around a call that may block in the kernel: entersyscall leaves the P
 * behind for sysmon to hand to another M if the call takes long;
 * exitsyscall takes it back, or another idle P, or queues the goroutine. */
void entersyscall(void);
void exitsyscall(void);
/* Around a raw system call that is a cancellation point (shim/shim.h,
 * SYS_CANCEL): the calling goroutine, if it is one, is marked in it for
 * gcancel to interrupt, and the call runs under entersyscall. */
static inline struct g *cancel_syscall_enter(void)
{
	struct g *gp = on_goroutine() ? getg() : NULL;

	if (gp) {
		atomic_store(&gp->cancel_syscall, true);
		entersyscall();
	}
	return gp;
}
static inline void cancel_syscall_exit(struct g *gp)
{
	if (gp) {
		exitsyscall();
		atomic_store(&gp->cancel_syscall, false);
	}
}
/* A field of /proc/self/status ("Threads:"), from the copy kept open
 * (procstatus.c), or -errno. */
int proc_status_get(const char *name);

/* ---- keys.c: pthread keys, per goroutine ---- */
/* The index comes from glibc's own key table, so threads goshim did not
 * create can use the same key through glibc. */
void keys_register(unsigned key, void (*destructor)(void *));
void keys_unregister(unsigned key);
void *keys_get(struct g *gp, unsigned key);
int keys_set(struct g *gp, unsigned key, const void *value);

#endif
