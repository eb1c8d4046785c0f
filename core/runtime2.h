/*
 * runtime2.h: the runtime's own declarations, which core/ shares and
 * shim/ must not use (as Go's runtime2.go holds what only the runtime
 * sees). runtime.h is the face: what shim/ may call. The scheduler's
 * global state (sched, allp) is here; the G, M and P types stay in
 * runtime.h only because the inline fast paths shim calls read a few of
 * their fields (on_goroutine's is_g0), and shim itself touches none
 * (tests/layering/check.py). A core file includes this after runtime.h.
 */
#ifndef GOSHIM_RUNTIME2_H
#define GOSHIM_RUNTIME2_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "runtime.h"

/* Global scheduler state, guarded by sched.lock unless atomic. */
struct sched {
	struct rlock lock;
	struct g *runqhead, *runqtail;
	_Atomic int32_t runqsize;
	struct m *midle;
	int32_t nmidle;
	int32_t nmidlelocked; /* wired Ms waiting for their goroutine */
	_Atomic int32_t nmspinning;
	struct p *pidle;
	_Atomic int32_t npidle;
	int64_t mnext;	 /* next M id */
	int32_t mcount;	 /* Ms made (started or starting) */
	int32_t nruntime_threads; /* the runtime's own threads (sysmon) */

	struct rlock gflock; /* global free Gs */
	struct g *gfree;
	int32_t ngfree;

	struct rlock alllock; /* allgs and allms */
	struct g *allgs;
	struct m *allms;
	_Atomic uint64_t goidgen;

	_Atomic int32_t nlive;	 /* goroutines counted alive (live.c) */
	_Atomic bool counting;	 /* ...once the last one ends the process */
	char main_name[16];	 /* the process's comm, inherited by threads */
	_Atomic bool main_exited; /* main called pthread_exit */

};

/* ---- live.c: the last thread's exit ends the process ---- */
/* A new life of gp, and its end: exit(0) if it was the last counted. */
void live_begin(struct g *gp);
void live_end(struct g *gp);
/* Main ends (has called pthread_exit): count from now on. */
void live_main_end(struct g *maing);
/* The child of fork: gp (NULL: a thread goshim did not create) is all
 * there is. */
void live_fork_child(struct g *gp);
/* Counting, and nobody left. */
bool live_none(void);

/* ---- proc.c ---- */
/* What g0 runs for a G that switched to it (m.mcall_fn). */
typedef struct g *(*mcall_fn)(struct g *);
/* Switch to g0 and run fn(gp) there; returns when gp is resumed. */
void mcall(mcall_fn fn);
/* The same, or straight to the P's next goroutine, which runs fn(gp)
 * first: for an fn that only publishes gp (parks, queues or frees it). */
void mcall_handoff(mcall_fn fn);
/* A new goroutine's first step (a hand-off may have brought it). */
void g_started(struct g *gp);
void schedule(struct m *mp) __attribute__((noreturn));
extern struct sched sched;
extern struct p **allp;	       /* GOMAXPROCS_MAX slots */
extern _Atomic int32_t allp_len; /* Ps ever made (live, dying, dead) */
#define G_MAGIC 0x676f5368u /* "goSh" */
/* The kernel's signal mask of the calling thread. */
uint64_t thread_sigmask(void);
/* Park: unlockf(gp, lock) runs once gp is off its stack, and may end the
 * park (false). It may run after the next goroutine is picked: one that
 * queues a goroutine to run next parks with gopark_sched. */
void gopark(bool (*unlockf)(struct g *, void *), void *lock,
	    const char *reason);
void gopark_sched(bool (*unlockf)(struct g *, void *), void *lock,
		  const char *reason);
void goready(struct g *gp);
/* After a wake that readied a goroutine of a higher real-time priority
 * than the caller's: the caller yields to it, as the kernel preempts a
 * thread for a higher one it wakes on its CPU (not in a signal handler,
 * whose interrupted code may hold a runtime lock). */
void rt_yield_slow(void);
static inline void rt_yield(void)
{
	struct g *gp = g_current;
	if (__builtin_expect(gp != NULL && gp->outranked_by != NULL, 0))
		rt_yield_slow();
}
void sched_init(int32_t procs, bool adopt);
/* As the scheduler starts, once preemption is set up: the main
 * goroutine's thread lets in what the runtime must receive. */
void sched_main_mask(void);
/* Each part of the runtime starts over in the child. */
void sched_fork_child(struct g *gp);
/* goready from g0 leaves the goroutine on the global queue for the M
 * that called it: one that will not look itself gets an M for it. */
void wakep_for_global(void);

/* ---- m.c ---- */
struct m *allocm(void);
/* Run some M on pp (an idle P if NULL). */
void startm(struct p *pp, bool spinning);
/* Work was added: start a spinning M if a P idles and nobody looks. */
void wakep(void);
bool stopm(struct m *mp, int64_t deadline);
int64_t m_reap_deadline(struct m *mp);
void m_reap(struct m *mp);
void m_wait_for_p(struct m *mp);
void stoplockedm(struct m *mp);
void startlockedm(struct m *mp, struct g *gp);
void mexit(struct m *mp);
/* In the child of fork: no M waits to be started. */
void newm_fork_child(void);

/* p.c (sched.lock held for the idle list and acquirep/releasep) */
struct p *pidleget(void);
void pidleput(struct p *pp);
void acquirep(struct m *mp, struct p *pp);
struct p *releasep(struct m *mp);
void p_drain(struct p *pp);
struct g *p_retire(struct m *mp, struct g *gp);
/* Wake every idle M without work, to sleep again with the idle mask as it
 * is now (m.c). */
void m_kick_idle(void);
void newm_start_pending(void); /* sysmon: start the Ms newm asked for (m.c) */
/* Close sysmon's files on mp's thread (see m.c). */
void m_task_files_close(struct m *mp);
/* A goroutine is about to use its M's P: returns it (NULL if the M has
 * none) and the pstate to give back to p_unclaim. */
struct p *p_claim(struct m *mp, uint32_t *prev);
/* Before the first M starts, or in a fork's child: can a claim go
 * without a fence of its own? alone: the process has one thread, and
 * registering for membarrier is cheap. */
void p_claim_init(bool alone);
/* The M goes back to its goroutine's code with no claim open. */
void p_user(struct m *mp);

/* ---- syscall.c ---- */
struct g *exitsyscall0(struct g *gp);
void handoffp(struct p *pp);
/* sysmon: give P away if it has sat in a syscall past the tick; true if
 * it did. */
bool retake_syscall_p(struct p *pp, int64_t now);
/* sysmon: take the P of mp, which sleeps in the kernel in user code, and
 * hand it off; false if mp entered the runtime meanwhile. */
bool retake_blocked_m(struct m *mp);
void p_unclaim(struct m *mp, uint32_t prev);

/* ---- g.c ---- */
void gfput_global(struct g *gp); /* sched.gflock held */
void go_exit(void *retval) __attribute__((noreturn));
void g_free(struct g *gp); /* a dead, joined or detached G */
void main_goroutine_exit(void) __attribute__((noreturn));

/* ---- sigmask.c ---- */
void m_set_altstack(struct m *mp, const stack_t *ss);
void idle_signals_block(struct m *mp);
void m_taken_until_sigreturn(struct m *mp, uint64_t back);
/* A new goroutine's signal state: none pending, no alternate stack, and
 * the mask its creator has (a thread's, for one goroutine did not make). */
void g_signals_init(struct g *gp);
/* Set it, remembering it in mp->sigmask (no call if already so). */
void m_set_sigmask(struct m *mp, uint64_t mask);
/* Block bits more on mp's thread (the caller's), the record with it. */
void m_block_more(struct m *mp, uint64_t bits);
/* The thread's sigaltstack, read back as the kernel keeps it. */
stack_t thread_altstack(void);
#define SIGCANCEL 32 /* __SIGRTMIN */
static inline uint64_t sigbit(int sig)
{
	return (uint64_t)1 << (sig - 1);
}

/* ---- keys.c ---- */
void keys_reset(struct g *gp);

void keys_fork_child(void);
bool keys_valid(unsigned key);
/* The thread that becomes gp had values set through glibc: gp takes them. */
void keys_adopt_thread(struct g *gp);
void keys_run_destructors(struct g *gp);

/* ---- sigthread.c ---- */
/* In goshim's handler, before an asynchronous cancel's SIGCANCEL runs
 * glibc's handler on gp, interrupted at pc: true if pc is in goshim's own
 * code, where an unwind would leave a runtime lock held or a waiter
 * queued on a dead stack; the request is then marked and the signal sent
 * again where gp runs next (its next wait ends at once). */
bool sigthread_cancel_unsafe(struct g *gp, uintptr_t pc);
/* pc is in goshim's own code (libgoshim.so's executable segments). */
bool goshim_text(uintptr_t pc);
/* sysmon: sig, whose instances sigkeep_give has just given gp, for gp
 * in its life goid (back to the process if that one has ended). */
void sigthread_pass(struct g *gp, uint64_t goid, int sig);
/* In the handler: a signal the kernel gave this thread (the process's)
 * met gp in the runtime; kept for it as sigthread_keep does, and given
 * back to the process if gp ends first. */
void sigthread_keep_given(struct g *gp, int sig);
/* gp's handler or sigwait took sig. */
void sigthread_taken(struct g *gp, int sig);
/* gp ends: the process's signals it was given go back to the process,
 * the rest die with it; from here it is given none. */
void sigthread_exit(struct g *gp);
/* A G made anew (newproc): nothing pending, what the process gave it
 * while it lay free back to the process. */
void sigthread_reset(struct g *gp);
/* On gp: raise what was kept for it and its mask lets through. */
void sigthread_deliver(struct g *gp);
/* chaos: mp's thread (the caller's) has the mask mp's record says. */
void sigmask_check_m(struct m *mp, const char *where);
/* gp, on its M, is about to leave it: what it sent itself while blocking
 * it (sigself) is taken off the M's thread and kept in gp. */
void sigthread_self_drain(struct g *gp);
/* The kernel gave gp's handler a real-time sig directly, si: where older
 * instances are kept (for the process, for gp), it takes the oldest
 * instead, in order, and si is kept behind them. */
void sigthread_kept_first(struct g *gp, int sig, siginfo_t *si);
/* In a signal handler that cannot run the program's now: sig is kept for
 * gp and sent again through sysmon. */
void sigthread_keep(struct g *gp, int sig);
/* sysmon: get signals handed back delivered. */
void sigthread_recheck(void);
/* The M's thread now blocks mask: take off it the signals sent for a
 * goroutine that has left. */
void m_directed_drain(struct m *mp, uint64_t mask);

/* ---- sigroute.c ---- */
/* A runtime context (g0) took sig: sysmon hands it on. Signal-safe. */
void sigroute_note(int sig);
/* sysmon: hand the signals a runtime context took to goroutines. */
void sigroute_run(void);
/* gp now has mask: it takes kept signals it no longer blocks. */
void sigroute_unblocked(struct g *gp, uint64_t mask);
/* A live goroutine's mask changed (was/is: it counted before/after). */
void sigroute_mask_change(uint64_t from, uint64_t to, bool was, bool is);
/* sig's default action leaves the process be: ignore, or continue. */
bool sig_ignored_by_default(int sig);
/* The program has a signal handler installed (checkdead: a signal may
 * still wake a goroutine). */
bool sigroute_handlers(void);
/* What an idle M blocks: what every goroutine blocks. */
uint64_t sigroute_idle_mask(void);
void sigroute_fork_child(struct g *gp);
/* As the scheduler starts: the handlers the program installed natively go
 * behind goshim's, and sigaction is goshim's from now on. */
void sigroute_adopt(void);

/* ---- runtime.c ---- */
/* atexit(fn) through libc's own __cxa_atexit (see real.h). */
void runtime_atexit(void (*fn)(void));
int64_t nanotime_coarse(void);
uint32_t fastrand(void);
void runtime_throw(const char *msg) __attribute__((noreturn));

/* ---- join.c ---- */
void go_exited(struct g *gp); /* on g0, when gp is dead */

/* ---- sema.c ---- */
/* futex-like: sleep if *addr == val (else EAGAIN); 0 or ETIMEDOUT */
int sema_wait(const _Atomic uint32_t *addr, uint32_t val, int64_t deadline,
	      const char *reason);
/* wake up to n waiters of sema_wait; returns how many */
int sema_wake(const _Atomic uint32_t *addr, int n);
/* Go's semacquire: wait for *addr > 0, decrement; 0 or ETIMEDOUT */
int sema_acquire(_Atomic uint32_t *addr, bool lifo, int64_t deadline,
		 const char *reason);
/* Go's semrelease: increment, wake one; handoff gives it the count */
void sema_release(_Atomic uint32_t *addr, bool handoff);
/* sema_release for signal handlers (async-signal-safe): the caller has
 * added its unit; a waiter, if any, gets it from sema_run_async, which
 * sysmon runs (woken for it) and anyone outside the runtime may run. */
void sema_release_async(_Atomic uint32_t *addr);
/* The same from code no signal handler runs: the caller hands its unit
 * to the oldest waiter itself (a waiter counts itself before it looks at
 * the value, the caller adds before it looks at the count). */
void sema_release_added(_Atomic uint32_t *addr);
void sema_run_async(void);
/* No handoff pending or on its way (checkdead: sysmon may be readying a
 * goroutine). */
bool sema_async_idle(void);
/* Go's notifyList over two counters in the program's object (sema.c):
 * notify_enqueue queues w with the next ticket (before releasing the lock
 * that protects the condition); notify_wait sleeps until a notify claims
 * it (0) or the deadline (ETIMEDOUT); notify_cancel takes it off without
 * waiting (true: a notify had claimed it, and that wakeup is the caller's
 * to pass on). notify_one wakes the oldest waiter still waiting (true if
 * it woke one); notify_all grants every ticket and wakes nobody;
 * notify_wake_granted wakes up to n waiters whose tickets are below notify
 * (to chain a broadcast; wait is only a key there). */
void notify_enqueue(struct waiter *w, _Atomic uint32_t *wait);
int notify_wait(struct waiter *w, int64_t deadline, const char *reason);
bool notify_cancel(struct waiter *w);
bool notify_one(_Atomic uint32_t *wait, _Atomic uint32_t *notify);
void notify_all(_Atomic uint32_t *wait, _Atomic uint32_t *notify);
int notify_wake_granted(const void *wait, uint32_t notify, int n);
void sema_fork_child(void);

/* ---- p.c ---- */
/* sysmon: GOMAXPROCS becomes n (its inputs changed; p.c). */
void procresize(int32_t n);

/* ---- fork.c ---- */
/* Bumped in each child of fork: state a thread that did not come along
 * left half-done (a pthread_once in progress) is told by it. */
extern _Atomic uint32_t fork_generation;
/* The child's first goroutine: goshim's fds, handlers and sysmon again. */
void fork_resume(void);

/* ---- sysmon.c ---- */
void sysmon_fork_child(void);
void sysmon_quota_reopen(void);
void sysmon_start(void);
int sysmon_gomaxprocs(void); /* at start-up; keeps the quota files */
void sysmon_ensure(void); /* start it if it is not running */
/* No sysmon (a child of fork before its first goroutine, fork.c). */
bool sysmon_absent(void);
/* An M about to sleep in stopm does what sysmon would for the signals and
 * sem_post units of a lone goroutine, then lets its handlers do it while
 * it sleeps, until sysmon_stand_in_end. */
void sysmon_stand_in(struct m *mp);
void sysmon_stand_in_end(struct m *mp);
void sysmon_wake(void);

/* ---- threadlimit.c ---- */
void threadlimit_init(void);
/* GOSHIM_MAX_THREADS's value: a count >= 1 in decimal digits, or -1. */
int32_t threadlimit_parse(const char *s);
/* nthreads: the runtime's threads with the one being made; sched.alllock
 * held. Past the cap the process ends, saying why. */
void threadlimit_check(int32_t nthreads);

/* ---- procstatus.c ---- */
/* /proc/self/status, kept open (procstatus.c): opened at start-up and in
 * a child of fork; a field's value ("Threads:"), or -errno. */
void proc_status_open(void);

/* ---- checkdead.c ---- */
void checkdead(void); /* sched.lock held */
void checkdead_exiting(int exiting); /* ...by Ms about to exit */

/* ---- tls.c ---- */
ptrdiff_t tls_g_offset(void);

/* ---- runq.c ---- */
void runqput(struct p *pp, struct g *gp, bool next);
/* gp into runnext whatever chaos says: it must run next on pp. */
void runqput_first(struct p *pp, struct g *gp);
struct g *runqget(struct p *pp, bool *inherit_time);
bool runqempty(struct p *pp);
/* The owner's quick look: may be wrong while a thief or a readier is at
 * it, for a caller that looks again on its slower path. */
static inline bool runq_looks_empty(struct p *pp)
{
	return atomic_load_explicit(&pp->runnext, memory_order_relaxed) ==
		       NULL &&
	       atomic_load_explicit(&pp->runqhead, memory_order_relaxed) ==
		       atomic_load_explicit(&pp->runqtail,
					    memory_order_relaxed);
}
struct g *runqsteal(struct p *pp, struct p *victim, bool steal_runnext);
void globrunqput(struct g *gp);		  /* sched.lock held */
void globrunqputbatch(struct g *head, struct g *tail, int32_t n);
struct g *globrunqget(struct p *pp, int32_t max); /* sched.lock held */

/* handle.c: the TCBs goshim built, TCB to G (a cache: NULL or a G
 * whose own tcb the caller checks). handle_del_locked under alllock. */
void handle_add(void *tcb, struct g *gp);
void handle_del_locked(void *tcb);
struct g *handle_find(uintptr_t tcb);

#endif
