/*
 * sysmon.c: the system monitor, Go's sysmon: a thread of its own, outside
 * the P accounting, that watches the Ps.
 *
 * Each round it
 * - retakes a P whose M has sat in a system call past one tick (20 us
 *   when busy) while other work waits, and hands it to another M
 *   (handoffp), so a slow syscall costs an OS thread, never a P;
 * - looks at each P whose goroutine has made no progress (no schedule, no
 *   syscall) for a millisecond, then every millisecond: if the M's thread
 *   sleeps in the kernel at two looks in a row (state S or D in
 *   /proc/self/task/TID/stat: a raw syscall, a futex inside libc, a page
 *   fault; never a busy thread; D only after 10 ms), its P is handed off
 *   as for a syscall (core/README.md, invariant 7); if it runs and its
 *   goroutine has had the P for 10 ms, the goroutine is asked to yield: a
 *   flag checked where it enters the runtime, and SIGURG (preempt.c,
 *   invariant 8); if it is
 *   still there after 20 ms (it runs in libc, where the signal may not
 *   stop it), its P is taken as from a blocked M. A thread is
 *   never signalled while it sleeps in the kernel (that would turn a
 *   sleep into EINTR) or while it blocks SIGURG;
 * - signals a thread that runs user code without a P (its P was taken
 *   while it slept) so that it rejoins the scheduler;
 * - runs overdue timers and polls the network when nobody has for 10 ms;
 * - starts the new Ms the scheduler asks for (newm) and hands out the
 *   units of sem_post (sema_run_async), woken at once for either: a real
 *   thread in a known state;
 * - writes the goroutine dump SIGQUIT asks for (debug.c), or `goshim
 *   dump PID` from outside (dumpreq.c: it finds this thread by its name,
 *   goshim-sysmon).
 * It sleeps 20 us while it finds something to do, doubling up to 10 ms
 * after 50 idle rounds, as Go does, but never past the moment the next
 * goroutine's slice ends, so preemption comes close to the 10 ms.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "chaos.h"
#include "asan.h"
#include "cpuclock.h"
#include "debug.h"
#include "gomaxprocs.h"
#include "netpoll.h"
#include "preempt.h"
#include "print.h"
#include "procparse.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "timer.h"

#define SYSMON_MIN_US 20
#define SYSMON_MAX_US 10000
#define FORCE_PREEMPT_NS 10000000 /* Go's forcePreemptNS */
#define STUCK_NS 1000000	  /* no progress this long: look at /proc */
#define WAIT_SLICE_NS 2000000	  /* the slice while others wait (watch_running) */
#define RETRY_NS 200000		  /* a refused preemption: ask again */
#define LOST_STILL_LOOKS 20	  /* a lost M this still: close its files */
#define NETPOLL_NS 10000000
#define TIMER_LATE_NS 1000000	  /* an overdue timer nobody ran */

static struct note wake;

/* Go 1.25: GOMAXPROCS follows the CPU affinity and the cgroup quota,
 * read again every second, unless the environment sets it. The quota
 * files are found and opened at start-up (sched_init), before main(),
 * and kept hidden: re-reading them opens nothing, so no fd of the
 * runtime's takes a number the program's own open should have had. */
static struct cg_files procs_cg;

static const struct kept_ops quota = { fd_runtime_open_ro,
				       fd_runtime_close };

/* GOMAXPROCS at start-up. */
int sysmon_gomaxprocs(void)
{
	return gomaxprocs_compute(&procs_cg, &quota);
}

/* A child of fork closed them with the runtime's other fds (fork.c); it
 * opens its own as it makes its first goroutine, while the goroutine that
 * does is its only one (so no open of the program's runs meanwhile). */
void sysmon_quota_reopen(void)
{
	if (!procs_cg.follow)
		return;
	cg_files_open(&procs_cg, "/proc", "", &quota);
	procs_cg.follow = 1;
}

static void gomaxprocs_follow(int64_t now)
{
	static int64_t last;
	int n;

	if (last == 0)
		last = now;
	if (now - last < 1000000000)
		return;
	last = now;
	if ((n = gomaxprocs_update(&procs_cg)) > 0)
		procresize(n);
}

static _Atomic bool running;

/*
 * A child of fork runs without sysmon until it makes a goroutine (fork.c),
 * on one thread, as natively. What sysmon would do there for the lone
 * goroutine (give it the signals that reach its idle M, hand out the
 * units a handler's sem_post left) its M does as it goes to sleep in
 * stopm, and, while it sleeps there, the handler of such a signal: the M
 * holds nothing then. Nothing else needs sysmon with one goroutine (no P
 * to hand off, nobody to preempt for), and a request for a new M puts its
 * P back (newm): the M there is runs all there is.
 */
bool sysmon_absent(void)
{
	return !atomic_load_explicit(&running, memory_order_acquire);
}

static void stand_in_run(void)
{
	sema_run_async();
	sigroute_run();
	sigthread_recheck();
	/* What they readied is on the global queue: the M that stands in
	 * is about to sleep (it is on the idle list, so it is the one). */
	wakep_for_global();
}

void sysmon_stand_in(struct m *mp)
{
	uint64_t idle = mp->sigmask;

	/* No handler may run this beside (under) its own run here. */
	m_set_sigmask(mp, ~(uint64_t)0);
	stand_in_run();
	mp->stand_in = true;
	atomic_signal_fence(memory_order_seq_cst);
	/* What came meanwhile is delivered now, to a handler that finds the
	 * M standing in. */
	m_set_sigmask(mp, idle);
}

void sysmon_stand_in_end(struct m *mp)
{
	mp->stand_in = false;
	atomic_signal_fence(memory_order_seq_cst);
}

void sysmon_wake(void)
{
	struct g *gp;

	if (atomic_load_explicit(&running, memory_order_acquire)) {
		note_wakeup(&wake);
		return;
	}
	/* Only a handler runs on an M between sysmon_stand_in and its end,
	 * and every signal is blocked in it. */
	gp = getg();
	if (gp && gp->is_g0 && gp->m && gp->m->stand_in) {
		gp->m->stand_in = false;
		stand_in_run();
		gp->m->stand_in = true;
	}
}

/*
 * pread of /proc/self/task/TID/name for mp's thread, through *fdp (the
 * fd + 1, 0 for none), which stays open for the next look: pread costs
 * a third of an open, and an fd opened for an instant would take a
 * number the program's own open could have had. It is hidden from the
 * program (fd_runtime_open), which may still take its number (dup2 onto
 * it: fd_vacate lets it go), so it is looked up first.
 */
static long task_pread(struct m *mp, int *fdp, const char *name, char *buf,
		       size_t cap)
{
	if (*fdp && !fd_runtime(*fdp - 1))
		*fdp = 0; /* the program's now: never close it */
	if (*fdp == 0) {
		char path[64];
		snprint(path, sizeof path, "/proc/self/task/%d/%s",
			(int)mp->tid, name);
		int fd = fd_runtime_open_ro(path);
		if (fd < 0)
			return fd;
		*fdp = fd + 1;
	}
	return sys_pread(*fdp - 1, buf, cap, 0);
}

/*
 * The scheduler state of mp's thread from /proc ('R', 'S', 'D', ...; 0 if
 * unknown) and the signals it blocks (the file's 'blocked' field: the
 * first 31). The content must name the thread: the fd may have been
 * closed behind goshim's back (a raw close_range) and its number reused.
 */
static char thread_state(struct m *mp, uint64_t *blocked)
{
	char buf[640], want[24];
	int wl = snprint(want, sizeof want, "%d (", (int)mp->tid);

	for (int tries = 0; tries < 2; tries++) {
		long n = task_pread(mp, &mp->statfd, "stat", buf, sizeof buf);
		if (n < wl || memcmp(buf, want, (size_t)wl) != 0) {
			/* Not ours any more: forget it, never close it. */
			mp->statfd = 0;
			continue;
		}
		return proc_stat_state(buf, (size_t)n, blocked);
	}
	return 0;
}

/*
 * Is mp's thread inside a system call, waiting for a CPU? A SIGURG the
 * program sends itself (raise) is lost if goshim's is already pending
 * (standard signals do not queue); a thread put off the CPU inside its
 * tgkill widens that window to milliseconds. /proc/self/task/TID/syscall
 * names the call for a thread that is not on a CPU ("running" for one
 * that is, -1 outside any call).
 */
static bool in_syscall(struct m *mp)
{
	char buf[32];
	long n = task_pread(mp, &mp->sysfd, "syscall", buf, sizeof buf);
	return n > 0 && buf[0] >= '0' && buf[0] <= '9';
}

/* The CPU time mp's thread has used (its thread CPU clock, which needs
 * no file), or -1. */
static int64_t thread_cputime(struct m *mp)
{
	struct timespec ts;
	clockid_t clk = (clockid_t)((~(unsigned)mp->tid << 3) | 6);

	if (SYS2(SYS_clock_gettime, clk, &ts) != 0)
		return -1;
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* sysmon took mp's P: from now on watch_lost looks at it. An M asleep
 * in the kernel may stay there for good: it holds no fd of the
 * program's table meanwhile. One that runs on keeps its files for the
 * next looks (each open takes, for an instant, the lowest free fd). */
static void m_lost(struct m *mp, bool asleep)
{
	if (asleep)
		m_task_files_close(mp);
	mp->sysmon_lostcpu = thread_cputime(mp);
	mp->sysmon_stillness = 0;
}

static bool sigurg_blocked(uint64_t blocked)
{
	return blocked & ((uint64_t)1 << (SIGURG - 1));
}

/* Other goroutines wait, or no M is left to look for them: Go's reason
 * to take a P away. */
static bool p_wanted(struct p *pp)
{
	return !runqempty(pp) || atomic_load(&sched.runqsize) > 0 ||
	       atomic_load(&sched.nmspinning) + atomic_load(&sched.npidle) ==
		       0;
}

/*
 * A P whose goroutine runs. True if its P was taken. *next: when this P
 * wants the next look.
 */
/*
 * A goroutine that makes one short system call after another keeps its P:
 * each call exits before sysmon's tick, and each new call restarts the
 * running slice above. As Go does, measure its slice by schedtick alone
 * and, once it has had the P for a whole slice while others wait, ask it
 * to yield when its call returns (exitsyscall checks the flag).
 */
static void watch_syscalls(struct p *pp, int64_t now)
{
	uint32_t tick = __atomic_load_n(&pp->schedtick, __ATOMIC_RELAXED);

	if (tick != pp->slice_tick) {
		pp->slice_tick = tick;
		pp->slice_when = now;
		return;
	}
	if (now - pp->slice_when < FORCE_PREEMPT_NS || !p_wanted(pp))
		return;
	struct g *gp = atomic_load_explicit(&pp->syscall_g,
					    memory_order_relaxed);
	if (gp && atomic_load(&pp->status) == P_SYSCALL)
		atomic_store(&gp->preempt, true);
}

static bool watch_running(struct p *pp, int64_t now, int64_t *next)
{
	uint32_t tick = __atomic_load_n(&pp->schedtick, __ATOMIC_RELAXED);
	uint32_t stick = atomic_load(&pp->syscalltick);
	struct m *mp = __atomic_load_n(&pp->m, __ATOMIC_ACQUIRE);
	struct g *gp = mp ? __atomic_load_n(&mp->curg, __ATOMIC_ACQUIRE) : NULL;
	int64_t at;

	/* A goroutine from runnext keeps the schedtick (it inherits the
	 * slice, as in Go); it is still a new goroutine to signal. A
	 * thread-directed SIGURG of the program's sent while goshim's is
	 * pending is lost (standard signals do not queue): signalling only
	 * goroutines that really ran a whole slice keeps that window to
	 * code that spins 10 ms and raises SIGURG itself. */
	if (tick != pp->sysmon_schedtick || stick != pp->sysmon_runtick ||
	    gp != pp->sysmon_g) {
		pp->sysmon_schedtick = tick;
		pp->sysmon_runtick = stick;
		pp->sysmon_g = gp;
		pp->sysmon_schedwhen = now;
		pp->sysmon_asleep = false;
		if (mp)
			atomic_store(&mp->preempt_refused, false);
		at = now + STUCK_NS;
		goto later;
	}
	int64_t ran = now - pp->sysmon_schedwhen;
	/* In the runtime (g0 looking for work, or a claim): its own. */
	if (mp == NULL || atomic_load(&mp->pstate) != MP_USER) {
		at = now + STUCK_NS;
		goto later;
	}
	if (ran < STUCK_NS) {
		at = pp->sysmon_schedwhen + STUCK_NS;
		goto later;
	}
	if (ran < FORCE_PREEMPT_NS && now - mp->sysmon_lookwhen < STUCK_NS) {
		at = mp->sysmon_lookwhen + STUCK_NS;
		goto later;
	}
	uint64_t blocked = 0;
	char st = thread_state(mp, &blocked);
	mp->sysmon_lookwhen = now;
	/* Asleep (S) at two looks a millisecond apart: a wait on a kernel
	 * lock (a socket's) is over by then and costs no M. Uninterruptible
	 * (D) waits are disk I/O and memory reclaim, mostly short: they get a
	 * whole slice. */
	if (st == 'S' || st == 'D') {
		bool again = pp->sysmon_asleep;
		pp->sysmon_asleep = true;
		if (again && (st == 'S' || ran >= FORCE_PREEMPT_NS) &&
		    (p_wanted(pp) || ran >= FORCE_PREEMPT_NS) &&
		    retake_blocked_m(mp)) {
			m_lost(mp, true);
			return true;
		}
		at = now + STUCK_NS;
		goto later;
	}
	pp->sysmon_asleep = false;
	/* Chaos: a slice of 1 to 10 ms, drawn at each look. Go's slice is
	 * 10 ms whatever waits; goshim's is WAIT_SLICE_NS when a goroutine
	 * waits for this P or, with none idle, for any P: as the kernel
	 * preempts a long-running thread for one it wakes, a ticker beside
	 * CPU-bound threads is late by milliseconds, not tens of them. */
	int64_t slice = FORCE_PREEMPT_NS;
	if (!runqempty(pp) || (atomic_load(&sched.runqsize) > 0 &&
			       atomic_load(&sched.npidle) == 0))
		slice = WAIT_SLICE_NS;
	if (chaos())
		slice = STUCK_NS + (int64_t)(chaos_rand() %
					     (FORCE_PREEMPT_NS - STUCK_NS));
	if (ran < slice) {
		at = pp->sysmon_schedwhen + slice;
		if (at > now + STUCK_NS)
			at = now + STUCK_NS;
		goto later;
	}
	if (gp)
		atomic_store(&gp->preempt, true);
	/* Still there a slice after the first signal, and the last one was
	 * refused (not merely unsent or in flight: a thread waiting for a CPU
	 * has not seen it yet), or cannot be sent: the goroutine lives where
	 * the handler may not stop it (libc, a blocked SIGURG). Take its P as for a long cgo call in
	 * Go; it runs on without one until it enters the runtime or a
	 * signal finds it in its own code. */
	bool unstoppable = atomic_load(&mp->preempt_refused) ||
			   sigurg_blocked(blocked) || !preempt_on();
	if (ran >= 2 * FORCE_PREEMPT_NS && p_wanted(pp) && unstoppable &&
	    atomic_load(&mp->preempt_sent) == 0 && retake_blocked_m(mp)) {
		m_lost(mp, false);
		return true;
	}
	if (st == 'R' && !sigurg_blocked(blocked) && preempt_on() &&
	    !in_syscall(mp))
		preempt_m(mp, gp, now);
	at = now + RETRY_NS;
later:
	if (at < *next)
		*next = at;
	return false;
}

/* Ms whose P sysmon took run user code without one: once such a thread
 * runs (it woke from the kernel), signal it so it rejoins. A thread that
 * used no CPU since the last look is asleep, or waits for a CPU: its
 * /proc files are read only when it ran, and closed once it has not for
 * LOST_STILL_LOOKS looks, so Ms blocked for good hold no fds of the
 * program's, and one that runs (on a busy machine, now and then) opens
 * none. */
static void watch_lost(int64_t now, int64_t *next)
{
	rlock_lock(&sched.alllock);
	for (struct m *mp = sched.allms; mp; mp = mp->alllink) {
		if (atomic_load(&mp->pstate) != MP_LOST)
			continue;
		int64_t at = mp->sysmon_lookwhen + STUCK_NS;
		if (now >= at) {
			int64_t cpu = thread_cputime(mp);
			mp->sysmon_lookwhen = now;
			if (cpu < 0 || cpu != mp->sysmon_lostcpu) {
				uint64_t blocked = 0;
				char st = thread_state(mp, &blocked);
				mp->sysmon_lostcpu = cpu;
				if (st == 'R' && !sigurg_blocked(blocked) &&
				    preempt_on() && !in_syscall(mp))
					preempt_m(mp,
						  __atomic_load_n(
							  &mp->curg,
							  __ATOMIC_ACQUIRE),
						  now);
				mp->sysmon_stillness = 0;
			} else if (++mp->sysmon_stillness ==
				   LOST_STILL_LOOKS) {
				m_task_files_close(mp);
			}
			at = now + STUCK_NS;
		}
		if (at < *next)
			*next = at;
	}
	rlock_unlock(&sched.alllock);
}

/*
 * When every CPU is busy (the goroutines spin), a woken sysmon waited
 * milliseconds for one. A 100 us slice (EEVDF's custom slice, Linux 6.12;
 * no privilege needed, an older kernel refuses and nothing changes) puts
 * its short runs first.
 */
static void sysmon_short_slice(void)
{
	struct sys_sched_attr a = {
		.size = sizeof a,
		.policy = SCHED_OTHER,
		/* the process's nice (a `nice make` stays niced) */
		.nice = 20 - (int32_t)SYS2(SYS_getpriority, PRIO_PROCESS, 0),
		.runtime = 100000,
	};
	SYS3(SYS_sched_setattr, 0, &a, 0);
}

static void *sysmon_main(void *arg)
{
	uint32_t idle = 0;
	int64_t delay_us = SYSMON_MIN_US;
	int64_t next = INT64_MAX;

	(void)arg;
	asan_thread_clean();
	/* Signals are the program's: never deliver one here (but glibc's
	 * own, SIGCANCEL and SIGSETXID, which every thread must take). The
	 * Ms sysmon creates start with this mask until they run a G. */
	uint64_t all = ~SIG_GLIBC_INTERNAL;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
	sysmon_short_slice();
	dumpreq_sysmon_start();
	for (;;) {
		if (idle == 0)
			delay_us = SYSMON_MIN_US;
		else if (idle > 50)
			delay_us *= 2;
		if (delay_us > SYSMON_MAX_US)
			delay_us = SYSMON_MAX_US;
		int64_t sleep_ns = delay_us * 1000;
		/* With no idle M keeping the timers, an overdue one is ours
		 * to run (below): wake for it. */
		int64_t due = timers_next();
		if (due >= 0 && !timers_have_sleeper() &&
		    due + TIMER_LATE_NS < next)
			next = due + TIMER_LATE_NS;
		int64_t until = next - nanotime();
		if (until < sleep_ns)
			sleep_ns = until < SYSMON_MIN_US * 1000
					   ? SYSMON_MIN_US * 1000
					   : until;
		/* Cleared before looking: a newm after this wakes the next
		 * sleep at once. */
		if (note_sleep_ns(&wake, sleep_ns))
			note_clear(&wake);
		debug_sysmon();
		newm_start_pending();
		sema_run_async(); /* units sem_post left for sleepers */
		sigroute_run();	  /* signals an idle M took */
		sigthread_recheck(); /* and ones that met another goroutine */

		int64_t now = nanotime();
		int retaken = 0;
		next = INT64_MAX;
		/* Past GOMAXPROCS too: a dying P in a syscall is taken at
		 * once (procresize). */
		for (int32_t i = 0; i < allp_len; i++) {
			struct p *pp = allp[i];
			watch_syscalls(pp, now);
			if (retake_syscall_p(pp, now))
				retaken++;
			else if (atomic_load(&pp->status) == P_RUNNING)
				retaken += watch_running(pp, now, &next);
		}
		watch_lost(now, &next);
		cputimers_run(now, &next);
		/* Timers are run by Ms looking for work; when every M is in
		 * a system call or runs a goroutine, none looks (Go's sysmon
		 * starts an M for an overdue timer). A millisecond late: the
		 * Ms had their chance (sysmon running every timer first made
		 * Ms for what they would have run). The goroutines go to the
		 * global queue; wakep finds them a P. */
		int64_t when = timers_next();
		if (when >= 0 && when + TIMER_LATE_NS <= now)
			timers_run(now);
		if (now - atomic_load_explicit(&netpoll_lastpoll,
					       memory_order_relaxed) >=
		    NETPOLL_NS) {
			/* Goroutines whose fds are ready go to the global
			 * queue; wakep finds them a P. */
			netpoll_check();
		}
		netpoll_recheck(now);
		preempt_refresh_text(now);
		gomaxprocs_follow(now);
		idle = retaken ? 0 : idle + 1;
	}
	return NULL;
}

void sysmon_start(void)
{
	pthread_t t;
	pthread_attr_t attr;
	bool no = false;

	if (!atomic_compare_exchange_strong(&running, &no, true))
		return;
	preempt_init();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (real.pthread_create(&t, &attr, sysmon_main, NULL))
		runtime_throw("cannot start sysmon");
	pthread_attr_destroy(&attr);
	sched.nruntime_threads++;
}

void sysmon_ensure(void)
{
	if (!atomic_load_explicit(&running, memory_order_relaxed))
		fork_resume();
}

/* In the child of fork the thread is gone: the first goroutine the child
 * makes, or the first M that goes idle, starts another (from the thread
 * that forked, which is a real glibc thread there). */
void sysmon_fork_child(void)
{
	note_clear(&wake);
	atomic_store(&running, false);
}
