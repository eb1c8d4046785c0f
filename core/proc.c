/*
 * proc.c: the scheduler: Ms, Ps, schedule/findrunnable, park and ready.
 *
 * The shape is Go's (runtime/proc.go). Each M runs schedule() on its g0;
 * a G gives the M back with mcall(fn), which saves the G's context and has
 * g0 run fn(gp) on the M's own stack, where it is safe to put gp on a queue:
 * nobody can resume gp before its registers are saved: park_m marks it
 * waiting only then, and goready waits for that mark, so a waker may find
 * a G while it is still on its way into gopark.
 *
 * findrunnable looks at the local queue, the global queue (every 61st tick
 * first, so it cannot starve), then steals half of a random victim's queue
 * (4 rounds; runnext only in the last). At most half the busy Ps have a
 * spinning M looking for work; the last spinning M to find work wakes
 * another (so work readied meanwhile is found) and an M that finds nothing
 * gives its P back and sleeps on its note until startm hands it one.
 *
 * New Ms are made by sysmon, a real pthread in a known state (Go's
 * templateThread idea): goroutines run on TCBs glibc does not know, and
 * glibc's pthread_create reads the creator's TCB.
 */
#include <errno.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chaos.h"
#include "asan.h"
#include "cpuclock.h"
#include "debug.h"
#include "futex.h"
#include "gomaxprocs.h"
#include "mutex.h"
#include "netpoll.h"
#include "preempt.h"
#include "real.h"
#include "runtime.h"
#include "sigkeep.h"
#include "stack.h"
#include "sys.h"
#include "timer.h"
#include "tls.h"
#include "trace.h"
#include "wire.h"

#define STEAL_TRIES 4
#define GFREE_LOCAL_MAX 64
#define GFREE_GLOBAL_KEEP_PAGES 128 /* cached Gs that keep touched pages */

struct sched sched;
struct p **allp;
_Atomic int32_t allp_len;
_Atomic int32_t gomaxprocs;
__thread struct g *g_current;

typedef struct g *(*mcall_fn)(struct g *);

/* ---- M and P lists (sched.lock held) ------------------------------------ */

static struct m *mget(void)
{
	struct m *mp = sched.midle;
	if (mp) {
		sched.midle = mp->schedlink;
		sched.nmidle--;
	}
	return mp;
}

static void mput(struct m *mp)
{
	mp->schedlink = sched.midle;
	sched.midle = mp;
	sched.nmidle++;
}

static struct p *pidleget(void)
{
	struct p *pp = sched.pidle;
	if (pp) {
		sched.pidle = pp->link;
		atomic_fetch_sub(&sched.npidle, 1);
	}
	return pp;
}

static void p_bury(struct p *pp);
static void p_drain(struct p *pp);
static struct g *p_retire(struct m *mp, struct g *gp);

static void pidleput(struct p *pp)
{
	if (!runqempty(pp))
		runtime_throw("pidleput: P has non-empty run queue");
	if (atomic_load(&pp->dying)) {
		p_bury(pp);
		return;
	}
	pp->link = sched.pidle;
	sched.pidle = pp;
	atomic_fetch_add(&sched.npidle, 1);
}

static void acquirep(struct m *mp, struct p *pp)
{
	if (mp->p || pp->m || pp->status != P_IDLE)
		runtime_throw("acquirep: invalid P state");
	mp->p = pp;
	pp->m = mp;
	pp->status = P_RUNNING;
	TRACE(trace_procstart(pp, mp));
}

static struct p *releasep(struct m *mp)
{
	struct p *pp = mp->p;
	if (pp == NULL || pp->m != mp || pp->status != P_RUNNING)
		runtime_throw("releasep: invalid P state");
	TRACE(trace_procstop(pp));
	mp->p = NULL;
	pp->m = NULL;
	pp->status = P_IDLE;
	return pp;
}

/* ---- creating Ms -------------------------------------------------------- */

/* Ms to start: sysmon, a real thread in a known state, creates them
 * (Go's templateThread idea): goroutines run on TCBs glibc does not know,
 * and glibc's pthread_create reads the creator's. */
static struct {
	struct rlock lock;
	struct m *pending;
} mnew;

static void schedule(struct m *mp) __attribute__((noreturn));
static struct g *exitsyscall0(struct g *gp);
static void handoffp(struct p *pp);

static void *m_thread_main(void *arg)
{
	struct m *mp = arg;
	struct g *g0 = mp->g0;

	asan_thread_clean();
	g0->tcb = arch_get_tp();
	g0->ctx.tp = g0->tcb;
	g_current = g0;
	mp->tid = tls_tid(g0->tcb);
	mp->sigmask = thread_sigmask(); /* sysmon's, until a G runs */
	dumpreq_thread_name();
	wire_new_m();
	mp->altstack = thread_altstack();
	acquirep(mp, mp->nextp);
	mp->nextp = NULL;
	schedule(mp);
}

void newm_start_pending(void)
{
	rlock_lock(&mnew.lock);
	struct m *list = mnew.pending;
	mnew.pending = NULL;
	rlock_unlock(&mnew.lock);
	while (list) {
		struct m *mp = list;
		pthread_t t;
		pthread_attr_t attr;
		list = mp->schedlink;
		mp->schedlink = NULL;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int err = real.pthread_create(&t, &attr, m_thread_main, mp);
		pthread_attr_destroy(&attr);
		if (err) {
			fprintf(stderr,
				"goshim: cannot create an OS thread: %s\n",
				strerror(err));
			runtime_throw("newm: thread creation failed");
		}
	}
}

static struct m *m_alloc(void)
{
	struct m *mp = calloc(1, sizeof *mp);
	struct g *g0 = calloc(1, sizeof *g0);
	if (!mp || !g0)
		runtime_throw("m_alloc: out of memory");
	g0->is_g0 = true;
	g0->magic = G_MAGIC;
	g0->m = mp;
	g0->status = G_RUNNING;
	mp->g0 = g0;
	mp->fastrand = (uint32_t)nanotime() | 1;
	rlock_lock(&sched.alllock);
	mp->id = sched.mnext++;
	sched.mcount++;
	threadlimit_check(sched.mcount + sched.nruntime_threads);
	mp->alllink = sched.allms;
	sched.allms = mp;
	g0->alllink = sched.allgs;
	sched.allgs = g0;
	rlock_unlock(&sched.alllock);
	if (chaos())
		chaos_seed_m(mp);
	return mp;
}

static void newm(struct p *pp, bool spinning)
{
	if (sysmon_absent() && runqempty(pp)) {
		/* A child of fork, before its first goroutine: its one M
		 * runs the one goroutine there is (sysmon.c). */
		rlock_lock(&sched.lock);
		pidleput(pp);
		rlock_unlock(&sched.lock);
		if (spinning)
			atomic_fetch_sub(&sched.nmspinning, 1);
		return;
	}
	if (sysmon_absent())
		fork_resume(); /* work for a second M: sysmon starts it */
	struct m *mp = m_alloc();
	mp->nextp = pp;
	mp->spinning = spinning;
	rlock_lock(&mnew.lock);
	mp->schedlink = mnew.pending;
	mnew.pending = mp;
	rlock_unlock(&mnew.lock);
	sysmon_wake();
}

/* Run some M on pp (an idle P if NULL). */
static void startm(struct p *pp, bool spinning)
{
	rlock_lock(&sched.lock);
	if (pp == NULL) {
		pp = pidleget();
		if (pp == NULL) {
			rlock_unlock(&sched.lock);
			if (spinning)
				atomic_fetch_sub(&sched.nmspinning, 1);
			return;
		}
	}
	struct m *nmp = mget();
	rlock_unlock(&sched.lock);
	if (nmp == NULL) {
		newm(pp, spinning);
		return;
	}
	nmp->spinning = spinning;
	nmp->nextp = pp;
	note_wakeup(&nmp->park);
}

/* Work was added: start a spinning M if there is an idle P and nobody is
 * looking already. */
static void wakep(void)
{
	int32_t zero = 0;

	if (atomic_load(&sched.npidle) == 0)
		return;
	if (atomic_load(&sched.nmspinning) != 0 ||
	    !atomic_compare_exchange_strong(&sched.nmspinning, &zero, 1))
		return;
	startm(NULL, true);
}

static bool midle_remove(struct m *mp)
{
	for (struct m **pp = &sched.midle; *pp; pp = &(*pp)->schedlink) {
		if (*pp == mp) {
			*pp = mp->schedlink;
			sched.nmidle--;
			return true;
		}
	}
	return false;
}

static void idle_signals_block(struct m *mp);

/*
 * Park the M until startm gives it a P (true), or until the deadline
 * (monotonic ns; -1 none) passes or m_kick wakes it without one (false).
 */
static bool stopm(struct m *mp, int64_t deadline)
{
	if (mp->p)
		runtime_throw("stopm: holding P");
	rlock_lock(&sched.lock);
	mput(mp);
	if (deadline < 0)
		checkdead();
	rlock_unlock(&sched.lock);
	/* The idle mask, read once on the idle list: a goroutine that blocks
	 * more from now on kicks this M (m_kick_idle), which reads it again.
	 * Read before, a change in between would be missed, and the M
	 * would sleep taking a signal every goroutine blocks, whose default
	 * action ends the process (a SIGUSR2 meant for sigwait). */
	idle_signals_block(mp);
	if (chaos())
		chaos_delay(); /* startm's wakeup may come first */
	bool alone = sysmon_absent();
	if (alone)
		sysmon_stand_in(mp);
	bool woke = true;
	if (deadline < 0)
		note_sleep(&mp->park);
	else
		woke = note_sleep_ns(&mp->park, deadline - nanotime());
	if (alone)
		sysmon_stand_in_end(mp);
	if (!woke) {
		rlock_lock(&sched.lock);
		bool was_idle = midle_remove(mp);
		rlock_unlock(&sched.lock);
		if (was_idle)
			return false;
		/* Taken off the idle list by startm or m_kick. */
		note_sleep(&mp->park);
	}
	note_clear(&mp->park);
	if (mp->nextp == NULL)
		return false; /* kicked */
	acquirep(mp, mp->nextp);
	mp->nextp = NULL;
	return true;
}

/*
 * Idle Ms beyond what GOMAXPROCS can use go away after a while, so that a
 * burst of blocking system calls (each holding an M) leaves no crowd of
 * sleeping threads behind. (Go keeps every M; the OS thread count here
 * falls back to about GOMAXPROCS plus the runtime's own.) The process's
 * main thread stays.
 */
#define M_REAP_NS 1000000000

static int64_t m_reap_deadline(struct m *mp)
{
	if (mp->tid == sys_getpid() ||
	    __atomic_load_n(&sched.nmidle, __ATOMIC_RELAXED) < gomaxprocs)
		return -1;
	return nanotime() + M_REAP_NS;
}

static void m_reap(struct m *mp)
{
	rlock_lock(&sched.lock);
	bool spare = sched.nmidle >= gomaxprocs;
	if (spare) {
		sched.mcount--;
		checkdead_exiting(1); /* it may have been the last one */
	}
	rlock_unlock(&sched.lock);
	if (!spare)
		return;
	m_task_files_close(mp);
	atomic_store(&mp->g0->status, G_DEAD);
	real.pthread_exit(NULL); /* g0 is the thread's own identity */
}

/* sysmon's files on mp's thread. Whoever takes a number first closes it:
 * sysmon, once it took mp's P (it looks at mp no more until mp has one
 * again, and an M blocked for good must not hold fds the program could
 * use), or mp as its thread exits. */
void m_task_files_close(struct m *mp)
{
	int fd = __atomic_exchange_n(&mp->statfd, 0, __ATOMIC_ACQ_REL);
	if (fd)
		fd_runtime_close(fd - 1);
	fd = __atomic_exchange_n(&mp->sysfd, 0, __ATOMIC_ACQ_REL);
	if (fd)
		fd_runtime_close(fd - 1);
}

/* An M with nothing to run and no P sleeps until startm gives it one;
 * a spare one goes away meanwhile (m_reap). */
static void m_wait_for_p(struct m *mp)
{
	for (;;) {
		int64_t reap = m_reap_deadline(mp);
		if (stopm(mp, reap))
			return;
		if (reap >= 0 && nanotime() >= reap)
			m_reap(mp);
	}
}

void m_kick(struct m *mp)
{
	rlock_lock(&sched.lock);
	bool was_idle = midle_remove(mp);
	rlock_unlock(&sched.lock);
	if (was_idle) {
		mp->nextp = NULL;
		note_wakeup(&mp->park);
	} else {
		/* The timer keeper may be blocked in netpoll (findrunnable). */
		netpoll_break();
	}
}

void m_kick_idle(void)
{
	rlock_lock(&sched.lock);
	struct m *list = sched.midle;
	sched.midle = NULL;
	sched.nmidle = 0;
	for (struct m *mp = list; mp; mp = mp->schedlink)
		mp->nextp = NULL;
	rlock_unlock(&sched.lock);
	while (list) {
		struct m *mp = list;
		list = mp->schedlink;
		note_wakeup(&mp->park);
	}
	netpoll_break();
}

uint64_t thread_sigmask(void)
{
	uint64_t cur = 0;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8);
	return cur;
}

void m_set_sigmask(struct m *mp, uint64_t mask)
{
	mp->sigmask_dead = false;
	/* As the kernel will have it: the record is held against the
	 * thread's (chaos). */
	mask &= ~(preempt_unblockable() | SIG_KERNEL_UNBLOCKABLE);
	if (mp->sigmask != mask) {
		/* The record first: on a goroutine (sigsuspend, handlers run
		 * under a temporary mask), a pending signal the mask lets
		 * through runs its handler as the call returns, and that
		 * handler's sigreturn puts the record on the thread. */
		mp->sigmask = mask;
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, 8);
	}
	if (atomic_load_explicit(&mp->directed, memory_order_relaxed) & mask)
		m_directed_drain(mp, mask);
	/* A record that went stale skips the call above: the thread keeps a
	 * mask nobody knows of. */
	if (chaos())
		sigmask_check_m(mp, "an M takes a mask");
}

stack_t thread_altstack(void)
{
	stack_t ss = { .ss_flags = SS_DISABLE };
	SYS2(SYS_sigaltstack, NULL, &ss);
	ss.ss_flags &= ~SS_ONSTACK;
	return ss;
}

void g_altstack_update(struct g *gp)
{
	gp->altstack = thread_altstack();
	gp->m->altstack = gp->altstack;
}

/* A goroutine brings its sigaltstack to the M that runs it (most have
 * none, like the M: no call). */
static void m_set_altstack(struct m *mp, const stack_t *ss)
{
	if (mp->altstack.ss_sp == ss->ss_sp &&
	    mp->altstack.ss_size == ss->ss_size &&
	    mp->altstack.ss_flags == ss->ss_flags)
		return;
	SYS2(SYS_sigaltstack, ss, NULL);
	mp->altstack = *ss;
}

/*
 * A process-directed signal goes to any thread that does not block it. An
 * idle M runs no goroutine, but a parked goroutine may want the signal:
 * idle Ms block what every goroutine blocks (sigroute.c), and a signal
 * one takes is handed on to a goroutine. The next goroutine the M runs
 * brings its own mask (execute).
 */
static void idle_signals_block(struct m *mp)
{
	m_set_sigmask(mp, sigroute_idle_mask());
}

/* ---- finding work ------------------------------------------------------- */

static uint32_t m_fastrand(struct m *mp)
{
	/* xorshift32 */
	uint32_t x = mp->fastrand;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	mp->fastrand = x;
	return x;
}

/* The time now if some P's timer is due, else -1 (a load, no clock read,
 * when no timer is pending). */
static int64_t timers_due(void)
{
	int64_t next = timers_next(), now;

	if (next < 0 || next > (now = nanotime()))
		return -1;
	return now;
}

static struct g *stealwork(struct m *mp)
{
	struct p *pp = mp->p;
	int32_t n = gomaxprocs;

	for (int i = 0; i < STEAL_TRIES; i++) {
		bool last = i == STEAL_TRIES - 1;
		int64_t now = last ? timers_due() : -1;
		uint32_t start = m_fastrand(mp);
		for (int32_t k = 0; k < n; k++) {
			/* Chaos: victims in a random order, repeats and
			 * misses allowed (an owner runs what is skipped). */
			uint32_t v = chaos() ? m_fastrand(mp)
					     : start + (uint32_t)k;
			struct p *victim = allp[v % n];
			if (victim == pp)
				continue;
			/* Its due timers, as Go's stealWork: its M may be
			 * busy in a goroutine or a system call, or it has
			 * none. What they ready comes to our queue. */
			if (now >= 0 && timers_run_p(victim, now)) {
				bool inherit;
				struct g *gp = runqget(pp, &inherit);
				if (gp)
					return gp;
			}
			if (victim->status == P_IDLE)
				continue;
			bool runnext = last || (chaos() && chaos_one_in(4));
			struct g *gp = runqsteal(pp, victim, runnext);
			if (gp) {
				TRACE(trace_steal(pp, victim));
				return gp;
			}
		}
	}
	return NULL;
}

static struct g *findrunnable(struct m *mp, bool *inherit_time)
{
	struct g *gp;
top:
	*inherit_time = false;
	int64_t now = timers_due();
	if (now >= 0)
		timers_run_p(mp->p, now);
	gp = runqget(mp->p, inherit_time);
	if (gp)
		return gp;
	if (atomic_load(&sched.runqsize) > 0) {
		rlock_lock(&sched.lock);
		gp = globrunqget(mp->p, 0);
		rlock_unlock(&sched.lock);
		if (gp)
			return gp;
	}
	/* The next goroutine's CPU clock does not count the search from
	 * here (polling, stealing, spinning): it reads its own start. */
	mp->cpu_last_seq = 0;
	/* A goroutine that ended left its mask on the thread: no process
	 * signal may land on it while this M searches (a short search
	 * straight into the next goroutine costs no system call). */
	if (mp->sigmask_dead)
		idle_signals_block(mp);
	/* Goroutines whose fds are ready, onto this P's queue (Go polls here
	 * without blocking unless an M is blocked in netpoll). */
	if (netpoll_check() > 0) {
		gp = runqget(mp->p, inherit_time);
		if (gp)
			return gp;
	}
	if (mp->spinning || 2 * atomic_load(&sched.nmspinning) <
				    gomaxprocs - atomic_load(&sched.npidle)) {
		if (!mp->spinning) {
			mp->spinning = true;
			atomic_fetch_add(&sched.nmspinning, 1);
		}
		gp = stealwork(mp);
		if (gp)
			return gp;
	}

	/* Nothing: give the P back. */
	rlock_lock(&sched.lock);
	if (atomic_load(&sched.runqsize) > 0) {
		gp = globrunqget(mp->p, 0);
		rlock_unlock(&sched.lock);
		return gp;
	}
	struct p *pp = releasep(mp);
	pidleput(pp);
	rlock_unlock(&sched.lock);
	/* Chaos: work readied now must still be found (below, or by the
	 * readier's wakep). */
	if (chaos())
		chaos_delay();

	if (mp->spinning) {
		mp->spinning = false;
		if (atomic_fetch_sub(&sched.nmspinning, 1) <= 0)
			runtime_throw("findrunnable: negative nmspinning");
		/* Work may have been readied between our last look and the
		 * decrement, by someone who saw us spinning and so did not
		 * wake anyone: look once more, at the global queue too (a
		 * thread without a P, sysmon or a foreign one, readies
		 * there). */
		bool work = atomic_load(&sched.runqsize) > 0;
		for (int32_t i = 0; !work && i < gomaxprocs; i++)
			work = !runqempty(allp[i]);
		if (work) {
			rlock_lock(&sched.lock);
			pp = pidleget();
			rlock_unlock(&sched.lock);
			if (pp) {
				acquirep(mp, pp);
				mp->spinning = true;
				atomic_fetch_add(&sched.nmspinning, 1);
				goto top;
			}
		}
	}
	/* Sleep until work comes, or the next timer is due: one idle M at a
	 * time keeps the timers. While goroutines wait on fds, one idle M
	 * blocks in netpoll instead of on its note, as in Go: off the idle
	 * list (startm wakes another M for new work); m_kick breaks it for
	 * an earlier timer. The goroutines it readies go to the global
	 * queue, as those timers ready. */
	for (;;) {
		int64_t next = timers_next();
		bool keeper = next >= 0 && timers_claim_sleeper(mp, next);
		int64_t reap = keeper ? -1 : m_reap_deadline(mp);
		idle_signals_block(mp);
		/* A child of fork without sysmon: what a signal that ended
		 * a netpoll wait left for it (stopm does the same). */
		if (sysmon_absent()) {
			sysmon_stand_in(mp);
			sysmon_stand_in_end(mp);
		}
		bool got_p = atomic_load(&sched.runqsize) == 0 &&
			     !netpoll_block(keeper ? next : -1) &&
			     stopm(mp, keeper ? next : reap);
		if (keeper)
			timers_release_sleeper();
		if (got_p)
			goto top;
		timers_run(nanotime());
		/* A spare M goes away only with nothing readied: what
		 * netpoll and the timers readied from here went to the
		 * global queue with no wakep (goready on g0), and is this
		 * M's to run. */
		if (atomic_load(&sched.runqsize) == 0) {
			if (reap >= 0 && nanotime() >= reap)
				m_reap(mp);
			continue;
		}
		/* Timers readied goroutines into the global queue: run them
		 * ourselves if a P is free. */
		rlock_lock(&sched.lock);
		pp = pidleget();
		rlock_unlock(&sched.lock);
		if (pp) {
			acquirep(mp, pp);
			if (atomic_load(&sched.runqsize) > 1)
				wakep();
			goto top;
		}
	}
}

static void resetspinning(struct m *mp)
{
	mp->spinning = false;
	if (atomic_fetch_sub(&sched.nmspinning, 1) <= 0)
		runtime_throw("resetspinning: negative nmspinning");
	/* We were the spinning M and found work: there may be more. */
	wakep();
}

static void resume_stepped_aside(struct g *gp)
{
	struct g *w = atomic_exchange(&gp->resume_on_run, NULL);

	if (w) {
		atomic_store(&w->stepped_aside, false);
		goready(w);
	}
}

static void execute(struct m *mp, struct g *gp, bool inherit_time)
{
	mp->curg = gp;
	gp->m = mp;
	/* A goroutine dump may hold it still (G_SCAN) for a moment. */
	uint32_t st = atomic_load_explicit(&gp->status, memory_order_relaxed);
	for (;;) {
		st &= ~G_SCAN;
		if (atomic_compare_exchange_weak(&gp->status, &st, G_RUNNING))
			break;
		arch_cpu_relax();
	}
	TRACE(trace_gostart(gp, mp->p));
	/* A goroutine that stepped aside for this one goes on next. */
	if (__builtin_expect(atomic_load(&gp->resume_on_run) != NULL, 0))
		resume_stepped_aside(gp);
	m_set_sigmask(mp, gp->sigmask);
	m_set_altstack(mp, &gp->altstack);
	if (__builtin_expect(gp->attrs != NULL, 0))
		wire_adopt(mp, gp);
	atomic_store_explicit(&gp->preempt, false, memory_order_relaxed);
	if (!inherit_time)
		mp->p->schedtick++;
	/* From here sysmon may take the P if the goroutine blocks in the
	 * kernel: the goroutine claims it before each use. */
	atomic_store_explicit(&mp->pstate, MP_USER, memory_order_release);
	cpuclock_switch_in(mp, gp);
	arch_switch(&mp->g0->ctx, &gp->ctx);
}

/*
 * A wired M whose goroutine cannot run: give the P away and sleep until
 * startlockedm hands over a P along with the goroutine, now runnable.
 */
static void stoplockedm(struct m *mp)
{
	if (mp->p)
		handoffp(releasep(mp));
	rlock_lock(&sched.lock);
	sched.nmidlelocked++;
	checkdead();
	rlock_unlock(&sched.lock);
	idle_signals_block(mp);
	note_sleep(&mp->park);
	note_clear(&mp->park);
	acquirep(mp, mp->nextp);
	mp->nextp = NULL;
}

/* gp, found runnable, is wired to another M: give it our P, and wait. */
static void startlockedm(struct m *mp, struct g *gp)
{
	struct m *lm = gp->lockedm;

	/* Counted as running again before it wakes, so that checkdead
	 * never sees every M idle meanwhile. */
	rlock_lock(&sched.lock);
	sched.nmidlelocked--;
	rlock_unlock(&sched.lock);
	lm->nextp = releasep(mp);
	note_wakeup(&lm->park);
	m_wait_for_p(mp);
}

/* The M's scheduler loop, on g0. */
static void schedule(struct m *mp)
{
	struct g *gp;
	bool inherit;

	for (;;) {
		gp = NULL;
		inherit = true;
		/* A G switched to us through mcall (M0's g0 may see the first
		 * one on its very first run). */
		if (mp->mcall_fn) {
			mcall_fn fn = mp->mcall_fn;
			struct g *cur = mp->curg;
			mp->mcall_fn = NULL;
			mp->curg = NULL;
			gp = fn(cur);
			/* sysmon took the P while the goroutine slept in the
			 * kernel out of the runtime's sight: get one back. */
			if (mp->p == NULL)
				gp = exitsyscall0(gp);
		}
		if (__builtin_expect(atomic_load_explicit(&mp->p->dying,
							  memory_order_relaxed),
				     0) &&
		    !mp->lockedg)
			gp = p_retire(mp, gp);
		if (gp == NULL && mp->lockedg) {
			/* A wired M runs its goroutine only. */
			stoplockedm(mp);
			gp = mp->lockedg;
			inherit = false;
		} else if (gp == NULL) {
			struct p *pp = mp->p;
			inherit = false;
			/* Every 61st tick the global queue goes first. */
			if ((pp->schedtick % 61 == 0 ||
			     (chaos() && chaos_one_in(8))) &&
			    atomic_load(&sched.runqsize) > 0) {
				rlock_lock(&sched.lock);
				gp = globrunqget(pp, 1);
				rlock_unlock(&sched.lock);
			}
			if (gp == NULL)
				gp = findrunnable(mp, &inherit);
			if (mp->spinning)
				resetspinning(mp);
		}
		if (gp->lockedm && gp->lockedm != mp) {
			startlockedm(mp, gp);
			continue;
		}
		execute(mp, gp, inherit);
	}
}

/* Switch to g0 and run fn(gp) there; returns when gp is resumed. g0 owns
 * the P (or, if sysmon took it, finds it gone and gets another). */
static void mcall(mcall_fn fn)
{
	struct g *gp = getg();
	struct m *mp = gp->m;
	uint32_t prev;

	if (__builtin_expect(gp->sigself != 0, 0))
		gsignal_self_drain(gp);
	p_claim(mp, &prev);
	atomic_store_explicit(&mp->pstate, MP_RUNTIME, memory_order_relaxed);
	mp->mcall_fn = fn;
	cpuclock_switch_out(mp, gp);
	arch_switch(&gp->ctx, &mp->g0->ctx);
	if (__builtin_expect(atomic_load_explicit(&gp->sigpending,
						  memory_order_relaxed) != 0,
			     0))
		gsignal_deliver(gp);
}

/* ---- who owns the P: the M, or sysmon (see MP_* in runtime.h) ----------- */

struct p *p_claim(struct m *mp, uint32_t *prev)
{
	uint32_t st = MP_USER;

	if (atomic_compare_exchange_strong(&mp->pstate, &st, MP_RUNTIME)) {
		*prev = MP_USER;
		return mp->p;
	}
	/* sysmon is taking it: wait the few stores until it is gone. */
	while (st == MP_STEALING) {
		arch_cpu_relax();
		st = atomic_load(&mp->pstate);
	}
	*prev = st;
	return st == MP_LOST ? NULL : mp->p;
}

void p_unclaim(struct m *mp, uint32_t prev)
{
	if (prev == MP_USER)
		atomic_store_explicit(&mp->pstate, MP_USER,
				      memory_order_release);
}

bool p_runq_empty_self(void)
{
	struct m *mp = getg()->m;
	uint32_t prev;
	struct p *pp = p_claim(mp, &prev);
	bool empty = pp == NULL || runqempty(pp);
	p_unclaim(mp, prev);
	return empty;
}

/*
 * sysmon: mp's thread sleeps in the kernel (its /proc state said so) and
 * its goroutine made no progress. If the M is still in user code, the
 * CAS from MP_USER makes sysmon the P's owner: the M cannot touch it any
 * more, and when it next enters the runtime it finds MP_LOST.
 */
bool retake_blocked_m(struct m *mp)
{
	uint32_t st = MP_USER;

	if (!atomic_compare_exchange_strong(&mp->pstate, &st, MP_STEALING))
		return false;
	struct p *pp = mp->p;
	mp->p = NULL;
	pp->m = NULL;
	atomic_fetch_add(&pp->syscalltick, 1);
	atomic_store(&pp->status, P_IDLE);
	atomic_store_explicit(&mp->pstate, MP_LOST, memory_order_release);
	handoffp(pp);
	return true;
}

/* ---- park and ready ----------------------------------------------------- */

static struct g *park_m(struct g *gp)
{
	struct m *mp = gp->m;
	bool (*unlockf)(struct g *, void *) = mp->park_unlockf;
	void *lock = mp->park_lock;

	mp->park_unlockf = NULL;
	mp->park_lock = NULL;
	gp->nvcsw++;
	/* Traced before unlockf: from there a waker may run it elsewhere. */
	TRACE(trace_gostop(gp, gp->waitreason, false));
	gp->m = NULL;
	if (unlockf && !unlockf(gp, lock))
		return gp; /* the wait is already over: run it again at once */
	/* From here a waker may run it. A goready that came while it was
	 * still running left a permit: it runs again at once, unless that
	 * waker saw this store and readied it itself (see goready). */
	atomic_store(&gp->status, G_WAITING);
	if (atomic_load(&gp->ready_permit) &&
	    atomic_exchange(&gp->ready_permit, false)) {
		uint32_t st = G_WAITING;
		if (atomic_compare_exchange_strong(&gp->status, &st,
						   G_RUNNING))
			return gp;
	}
	return NULL;
}

void gopark(bool (*unlockf)(struct g *, void *), void *lock,
	    const char *reason)
{
	struct g *gp = getg();
	struct m *mp = gp->m;

	gp->waitreason = reason;
	gp->waitsince = nanotime_coarse();
	mp->park_unlockf = unlockf;
	mp->park_lock = lock;
	mcall(park_m);
	gp->waitreason = NULL;
}

/*
 * Make a parked G runnable. A waker may find the G still awake: on its way
 * into gopark (it left its wait queue's lock before parking, so the lock
 * is never held across a context switch), or woken for a while to run a
 * signal handler in the middle of its wait (gsignal_send). Then it leaves
 * a permit that the G's next park consumes. Every park is a loop on its
 * waiter's state (waiter_block), so a permit that finds nothing to end is
 * only a spurious wakeup.
 */
void goready(struct g *gp)
{
	struct g *me = getg();
	uint32_t st;

	for (;;) {
		st = G_WAITING;
		if (atomic_compare_exchange_weak_explicit(
			    &gp->status, &st, G_RUNNABLE, memory_order_acquire,
			    memory_order_relaxed))
			break;
		if (st == G_WAITING)
			continue;
		if (st & G_SCAN) { /* a goroutine dump holds it: wait */
			arch_cpu_relax();
			continue;
		}
		/* Gone already: it saw its wait end while awake for a
		 * handler, and returned before this wakeup came. */
		if (st == G_DEAD || st == G_IDLE)
			return;
		/* Awake: leave the permit, then look again (park_m stores
		 * the status, then looks for the permit: one of the two sees
		 * the other). Parked meanwhile: take the permit back, if
		 * park_m did not, and ready it here. */
		atomic_store(&gp->ready_permit, true);
		if (atomic_load(&gp->status) != G_WAITING ||
		    !atomic_exchange(&gp->ready_permit, false))
			return;
	}
	if (me && !me->is_g0 &&
	    atomic_load_explicit(&gp->rtprio, memory_order_relaxed) >
		    atomic_load_explicit(&me->rtprio, memory_order_relaxed))
		me->outranked_by = gp;
	/* Chaos: runnable, on no queue yet, for longer. */
	if (chaos())
		chaos_delay();
	TRACE(trace_gounblock(gp, me));
	struct m *mp = me ? me->m : NULL;
	uint32_t prev = MP_RUNTIME;
	struct p *pp = mp ? p_claim(mp, &prev) : NULL;
	if (pp) {
		runqput(pp, gp, true);
		p_unclaim(mp, prev);
	} else {
		if (mp)
			p_unclaim(mp, prev);
		rlock_lock(&sched.lock);
		globrunqput(gp);
		rlock_unlock(&sched.lock);
		/* An M without a P (running timers in findrunnable) takes
		 * a P for this work itself. */
		if (me && me->is_g0)
			return;
	}
	wakep();
}

void wakep_for_global(void)
{
	if (atomic_load(&sched.runqsize) > 0)
		wakep();
}

/* Yields count as the kernel counts a sched_yield or a preemption: an
 * involuntary switch; parks (park_m) are the voluntary ones. */
static struct g *gosched_m(struct g *gp)
{
	gp->nivcsw++;
	TRACE(trace_gostop(gp, "yield", false));
	atomic_store(&gp->status, G_RUNNABLE);
	gp->m = NULL;
	rlock_lock(&sched.lock);
	globrunqput(gp);
	rlock_unlock(&sched.lock);
	return NULL;
}

void gosched(void)
{
	mcall(gosched_m);
}

/* Go's gopreempt_m: as gosched, and the M may be signalled again now that
 * the goroutine it was signalled for has left it. */
static struct g *gopreempt_m(struct g *gp)
{
	atomic_store(&gp->m->preempt_sent, 0);
	return gosched_m(gp);
}

void gopreempt(void)
{
	mcall(gopreempt_m);
}

static struct g *goyield_m(struct g *gp)
{
	struct p *pp = gp->m->p;
	TRACE(trace_gostop(gp, "yield", false));
	if (pp == NULL) /* taken by sysmon: schedule() finds another */
		return gosched_m(gp);
	gp->nivcsw++;
	atomic_store(&gp->status, G_RUNNABLE);
	gp->m = NULL;
	runqput(pp, gp, false);
	return NULL;
}

void goyield(void)
{
	mcall(goyield_m);
}

/*
 * The caller waits until h, which it readied, has run: h's execute
 * readies it. A CAS on h's slot, then a look at h's status, against
 * execute's status store, then a look at the slot: either the caller
 * sees h running (and takes its slot back, or execute got there first
 * and readies it), or execute sees the caller.
 */
void rt_yield_slow(void)
{
	struct g *gp = getg();
	struct g *h = gp->outranked_by, *none = NULL, *self = gp;

	gp->outranked_by = NULL;
	if (gp->is_g0 || gp->in_sighandler)
		return;
	/* Not from inside the runtime or a system call (a libc function
	 * calling an interposer). */
	uint32_t st = atomic_load_explicit(&gp->m->pstate,
					   memory_order_relaxed);
	if (st != MP_USER && st != MP_LOST)
		return;
	atomic_store(&gp->stepped_aside, true);
	if (!atomic_compare_exchange_strong(&h->resume_on_run, &none, gp)) {
		/* Another waits for h already: queue behind it. */
		atomic_store(&gp->stepped_aside, false);
		goyield();
		return;
	}
	if ((atomic_load(&h->status) & ~G_SCAN) != G_RUNNABLE &&
	    atomic_compare_exchange_strong(&h->resume_on_run, &self, NULL)) {
		atomic_store(&gp->stepped_aside, false);
		return; /* it runs already */
	}
	while (atomic_load(&gp->stepped_aside))
		gopark(NULL, NULL, "preempted");
}

/* ---- goroutine life ----------------------------------------------------- */

static struct g *gfget(struct p *pp)
{
	struct g *gp;

	if (pp && pp->gfree == NULL && sched.gfree) {
		/* Refill the local list from the global one. */
		rlock_lock(&sched.gflock);
		while (pp->ngfree < GFREE_LOCAL_MAX / 2 && sched.gfree) {
			gp = sched.gfree;
			sched.gfree = gp->schedlink;
			sched.ngfree--;
			gp->schedlink = pp->gfree;
			pp->gfree = gp;
			pp->ngfree++;
		}
		rlock_unlock(&sched.gflock);
	}
	if (pp && pp->gfree) {
		gp = pp->gfree;
		pp->gfree = gp->schedlink;
		pp->ngfree--;
		return gp;
	}
	if (pp == NULL && sched.gfree) {
		rlock_lock(&sched.gflock);
		gp = sched.gfree;
		if (gp) {
			sched.gfree = gp->schedlink;
			sched.ngfree--;
		}
		rlock_unlock(&sched.gflock);
		return gp;
	}
	return NULL;
}

static void gfput_global(struct g *gp)
{
	if (sched.ngfree >= GFREE_GLOBAL_KEEP_PAGES)
		stack_release_pages(gp);
	gp->schedlink = sched.gfree;
	sched.gfree = gp;
	sched.ngfree++;
}

/* A G whose stack is the default size goes to a free list with its stack
 * and TCB; others give their stack back. */
static void g_free_to(struct p *pp, struct g *gp)
{
	if (gp->is_main)
		return; /* its stack and TCB are glibc's */
	atomic_store(&gp->status, G_IDLE);
	if (gp->user_stack || gp->map_size != stack_default_size() +
						      stack_page_size()) {
		stack_free(gp);
	}
	if (pp) {
		gp->schedlink = pp->gfree;
		pp->gfree = gp;
		if (++pp->ngfree < GFREE_LOCAL_MAX)
			return;
		/* Move half to the global list. */
		rlock_lock(&sched.gflock);
		while (pp->ngfree > GFREE_LOCAL_MAX / 2) {
			struct g *g1 = pp->gfree;
			pp->gfree = g1->schedlink;
			pp->ngfree--;
			gfput_global(g1);
		}
		rlock_unlock(&sched.gflock);
		return;
	}
	rlock_lock(&sched.gflock);
	gfput_global(gp);
	rlock_unlock(&sched.gflock);
}

void g_free(struct g *gp)
{
	struct g *me = getg();
	struct m *mp = me ? me->m : NULL;
	uint32_t prev = MP_RUNTIME;

	g_free_to(mp ? p_claim(mp, &prev) : NULL, gp);
	if (mp)
		p_unclaim(mp, prev);
}

static void g_entry(void *arg) __attribute__((noreturn));

static void g_entry(void *arg)
{
	struct g *gp = arg;
	__pthread_unwind_buf_t ub;

	tls_enter(gp);
	if (atomic_load(&gp->sigpending))
		gsignal_deliver(gp);
	/* As glibc's start_thread: pthread_exit unwinds the stack (running
	 * cleanup handlers and C++ destructors) and longjmps here. */
#pragma GCC diagnostic push
	/* With savemask 0 only the jmp_buf proper is written, which is all
	 * this buffer holds (glibc's start_thread does the same). */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
	if (__sigsetjmp((struct __jmp_buf_tag *)(void *)ub.__cancel_jmp_buf,
			0) == 0) {
#pragma GCC diagnostic pop
		memset(ub.__pad, 0, sizeof ub.__pad);
		tls_set_unwind_buf(gp->tcb, &ub);
		/* An unwind to here that is not pthread_exit's (which sets
		 * retval) is a cancellation: glibc's own, or shim's. */
		gp->retval = PTHREAD_CANCELED;
		gp->retval = gp->fn(gp->arg);
	}
	/* A cancel unwinds out of glibc's SIGCANCEL handler. */
	gp->in_sighandler = 0;
	go_exit(getg()->retval);
}

/* A cached G that could not be given a stack goes back, stackless: it
 * stays on allgs, so it is never freed. */
static void g_putback(struct g *gp)
{
	gp->tls_used = false;
	rlock_lock(&sched.gflock);
	gp->schedlink = sched.gfree;
	sched.gfree = gp;
	sched.ngfree++;
	rlock_unlock(&sched.gflock);
}

/* A thread id for a new goroutine: no live thread's. Once the fake ids
 * have come round (2^29 - 2^22 threads made), a long-lived goroutine may
 * still hold the next one; it is passed over, as the kernel passes over
 * pids in use. */
static pid_t fresh_tid(void)
{
	bool again;
	pid_t tid;

	do
		tid = tls_fake_tid(&again);
	while (again && g_from_tid(tid) != NULL);
	return tid;
}

/* first: go_spawn queues gp itself, as its caller steps aside (runfirst). */
static struct g *go_spawn_on(struct p *pp, void *(*fn)(void *), void *arg,
			      const struct spawn_attr *attr, bool first,
			      void **handle, int *err)
{
	struct g *me = getg();
	size_t stacksize = attr->stacksize ? attr->stacksize
					   : stack_default_size();
	size_t guard = attr->stackaddr ? 0 : attr->guardsize;
	struct g *gp = NULL;
	bool fresh = false;

	sysmon_ensure(); /* a child of fork starts it here (fork.c) */
	if (!attr->stackaddr && stacksize == stack_default_size() &&
	    guard == stack_page_size())
		gp = gfget(pp);
	if (gp && gp->map == NULL) {
		/* A cached G without a stack: give it one. */
		*err = stack_alloc(gp, stacksize, guard);
		if (*err) {
			g_putback(gp);
			return NULL;
		}
	} else if (gp && gp->tls_used) {
		if (!tls_reset(gp->tcb)) {
			*err = EAGAIN;
			stack_free(gp);
			g_putback(gp);
			return NULL;
		}
	}
	if (gp == NULL) {
		gp = calloc(1, sizeof *gp);
		if (gp == NULL) {
			*err = EAGAIN;
			return NULL;
		}
		fresh = true;
		*err = attr->stackaddr
			       ? stack_use_user(gp, attr->stackaddr,
						attr->stacksize)
			       : stack_alloc(gp, stacksize, guard);
		if (*err) {
			free(gp);
			return NULL;
		}
		gp->magic = G_MAGIC;
	}
	bool reused = gp->tls_used;
	gp->goid = atomic_fetch_add(&sched.goidgen, 1) + 1;
	gp->fn = fn;
	gp->arg = arg;
	gp->retval = NULL;
	gp->detached = attr->detached;
	gp->exited = false;
	gp->joiner = NULL;
	atomic_store(&gp->cancel_syscall, false);
	gp->waitreason = NULL;
	gp->inheritsched = attr->inheritsched;
	gp->scope = attr->scope;
	gp->req_stacksize = stacksize;
	gp->attrs = attr->attrs;
	atomic_store_explicit(&gp->rtprio, wire_rtprio(attr->attrs),
			      memory_order_relaxed);
	gp->outranked_by = NULL;
	atomic_store(&gp->resume_on_run, NULL);
	atomic_store(&gp->stepped_aside, false);
	atomic_store(&gp->sigpending, 0);
	sigkeep_drop(gp, 0);
	gp->sigself = 0;
	atomic_store(&gp->sigwait_set, 0);
	gp->in_sighandler = 0;
	/* A new thread has no alternate signal stack. */
	gp->altstack = (stack_t){ .ss_flags = SS_DISABLE };
	/* ...and its signal mask, as pthread_create gives it. */
	gp->sigmask = on_goroutine() ? me->sigmask : thread_sigmask();
	sigroute_mask_change(0, gp->sigmask, false, true);
	/* Linux threads inherit the creator's name. */
	if (on_goroutine())
		memcpy(gp->name, me->name, sizeof gp->name);
	else
		memcpy(gp->name, sched.main_name, sizeof gp->name);
	if (gp->keys_used) {
		for (int i = 0; i <= KEY_L2; i++)
			if (gp->keys[i])
				memset(gp->keys[i], 0,
				       KEY_L2 * sizeof(struct key_slot));
		gp->keys_used = false;
	}
	if (!gp->user_stack)
		asan_stack_clean(gp->stack_hi,
				 (size_t)(gp->map + gp->map_size - gp->stack_hi));
	gp->tid = fresh_tid();
	cpuclock_reset(gp);
	tls_prepare(gp, gp->tid);
	gp->clear_tid = tls_tid_word(gp->tcb);
	gp->robust_list = NULL;
	gp->tls_used = reused;
	arch_ctx_init(&gp->ctx, gp->stack_hi, gp->tcb, g_entry, gp);
	if (fresh) {
		rlock_lock(&sched.alllock);
		gp->alllink = sched.allgs;
		sched.allgs = gp;
		rlock_unlock(&sched.alllock);
	}
	atomic_fetch_add(&sched.nlive, 1);
	/* Programs read the new pthread_t from the new thread. */
	*handle = gp->tcb;
	TRACE(trace_gocreate(gp, me));
	atomic_store(&gp->status, G_RUNNABLE);
	*err = 0;
	if (first)
		return gp;
	if (pp) {
		runqput(pp, gp, true);
	} else {
		rlock_lock(&sched.lock);
		globrunqput(gp);
		rlock_unlock(&sched.lock);
	}
	wakep();
	return gp;
}

/*
 * The M's thread keeps values a wired goroutine gave it and cannot be
 * given back (a raised nice value): the M ends, as Go ends the thread of
 * a goroutine that exits locked. The process's main thread (M0, or the
 * forking M in a child), whose exit glibc would take for the process's,
 * sleeps for good instead, with every signal blocked.
 */
static void mexit(struct m *mp)
{
	handoffp(releasep(mp));
	rlock_lock(&sched.lock);
	sched.mcount--;
	bool main_thread = mp->tid == sys_getpid();
	if (main_thread)
		sched.nruntime_threads++; /* still a thread (checkdead) */
	rlock_unlock(&sched.lock);
	atomic_store(&mp->g0->status, G_DEAD);
	if (!main_thread)
		real.pthread_exit(NULL); /* g0 is the thread's own identity */
	idle_signals_block(mp);
	for (;;)
		note_sleep(&mp->park); /* nobody wakes it */
}

/* park_m's unlockf for a creator that waits for its new goroutine (go_spawn):
 * the new one is queued only now, so that it cannot run and ready its
 * creator before the creator has left its M. */
static bool runfirst_queue(struct g *creator, void *arg)
{
	struct m *mp = getg()->m;
	struct g *gp = arg;

	(void)creator;
	if (mp->p) {
		runqput_first(mp->p, gp);
	} else { /* taken by sysmon: schedule() finds another */
		rlock_lock(&sched.lock);
		globrunqput(gp);
		rlock_unlock(&sched.lock);
	}
	return true;
}

/*
 * The creator waits until gp has begun to run, as the kernel preempts it
 * for a thread of a higher real-time priority: gp goes in runnext, and
 * as it starts the creator is readied (execute), to run next on that P.
 * An unwired creator's M runs gp itself (and is wired to it if gp's
 * values say so); a wired one hands its P on.
 */
static void runfirst(struct g *me, struct g *gp)
{
	atomic_store(&me->stepped_aside, true);
	atomic_store(&gp->resume_on_run, me);
	gopark(runfirst_queue, gp, "thread create");
	while (atomic_load(&me->stepped_aside))
		gopark(NULL, NULL, "thread create"); /* a spurious wakeup */
}

struct g *go_spawn(void *(*fn)(void *), void *arg,
		   const struct spawn_attr *attr, void **handle, int *err)
{
	struct g *me = getg();
	struct m *mp = me ? me->m : NULL;
	uint32_t prev = MP_RUNTIME;
	/* A real-time priority above the creator's: natively the kernel
	 * runs the new thread before pthread_create returns (on the
	 * creator's CPU). */
	bool first = on_goroutine() && me->in_sighandler == 0 &&
		     wire_rtprio(attr->attrs) >
			     atomic_load_explicit(&me->rtprio,
						  memory_order_relaxed);
	struct g *gp = go_spawn_on(mp ? p_claim(mp, &prev) : NULL, fn, arg,
				   attr, first, handle, err);
	if (mp)
		p_unclaim(mp, prev);
	if (gp && first) {
		runfirst(me, gp);
	} else if (prev == MP_USER &&
		   atomic_load_explicit(&me->preempt, memory_order_relaxed)) {
		/* A runtime entry: sysmon asked this goroutine to yield (a
		 * loop that creates threads lives in goshim, where no signal
		 * stops it). */
		gopreempt();
	} else if (chaos()) {
		chaos_yield(); /* the new goroutine may run first */
	}
	return gp;
}

void g_attr(struct g *gp, struct spawn_attr *a)
{
	spin_lock(&gp->jlock);
	a->detached = gp->detached;
	spin_unlock(&gp->jlock);
	wire_get_sched(gp, &a->sched_policy, &a->sched_priority);
	/* As glibc reports it: the whole block above the guard, TLS
	 * included. */
	a->stackaddr = gp->map + gp->guard_size;
	a->stacksize = gp->map_size - gp->guard_size;
	a->guardsize = gp->guard_size;
	a->inheritsched = gp->inheritsched;
	a->scope = gp->scope;
	a->attrs = NULL;
}

/* On g0, after the dead G switched away for the last time. */
static struct g *goexit0(struct g *gp)
{
	struct m *mp = getg()->m;
	bool keep_m = true;

	TRACE(trace_gostop(gp, NULL, true));
	if (gp->lockedm || gp->attrs)
		keep_m = wire_release(mp, gp);
	gp->m = NULL;
	gp->tls_used = true;
	mp->sigmask_dead = true;
	go_exited(gp);
	if (!keep_m)
		mexit(mp);
	return NULL;
}

static void g_clear_tid(struct g *gp);

void go_exit(void *retval)
{
	struct g *gp = getg();

	gp->retval = retval;
	tls_exit();
	keys_run_destructors(gp);
	mutex_goexit(gp);
	g_clear_tid(gp);
	sigroute_mask_change(gp->sigmask, 0, true, false);
	sigkeep_drop(gp, 0); /* a thread's pending signals die with it */
	/* The last thread of a process whose main called pthread_exit
	 * ends the process, as glibc's start_thread does. */
	if (atomic_fetch_sub(&sched.nlive, 1) == 1)
		exit(0);
	mcall(goexit0);
	runtime_throw("go_exit: dead goroutine resumed");
}

/* The main thread called pthread_exit and its stack is unwound: the main
 * goroutine ends here, on what is left of glibc's start frame. */
void main_goroutine_exit(void)
{
	struct g *gp = getg();

	keys_run_destructors(gp);
	mutex_goexit(gp);
	g_clear_tid(gp);
	sigroute_mask_change(gp->sigmask, 0, true, false);
	atomic_store(&sched.main_exited, true);
	if (atomic_fetch_sub(&sched.nlive, 1) == 1)
		exit(0);
	mcall(goexit0); /* joinable, as glibc's main thread is */
	runtime_throw("main goroutine resumed after exit");
}

/*
 * The main goroutine's unwind buffer is glibc's, in __libc_start_call_main,
 * which would end the OS thread under whatever M runs main at that moment:
 * its resume address is pointed here instead, keeping the same stack
 * pointer, so the unwinding stops at the same frame and the main goroutine
 * ends as a goroutine. Every other goroutine's is g_entry's.
 */
static void main_landing(void)
{
	main_goroutine_exit();
}

void go_unwind_prepare(void *retval)
{
	struct g *gp = getg();

	gp->retval = retval;
	if (gp->is_main) {
		__pthread_unwind_buf_t *b = tls_bottom_unwind_buf(gp->tcb);
		if (b == NULL)
			main_goroutine_exit(); /* nothing to unwind to */
		arch_jmpbuf_set_pc(b->__cancel_jmp_buf[0].__cancel_jmp_buf,
				   main_landing, tls_pointer_guard(gp->tcb));
	}
}

/* As the kernel does for CLONE_CHILD_CLEARTID (and set_tid_address) when
 * a thread exits: 0 at the address, one waiter woken with a shared wake:
 * a goroutine parked in futex.c's table, else one in the kernel. */
static void g_clear_tid(struct g *gp)
{
	_Atomic int *addr = gp->clear_tid;

	gp->clear_tid = NULL;
	/* glibc's own word, the TCB's tid, is goshim's memory, and only
	 * glibc's pthread_join waits on it in the kernel, which goshim's
	 * replaces for every caller: a waiter can only be a goroutine, in
	 * the table. That keeps two system calls off every thread's exit. */
	if (addr == tls_tid_word(gp->tcb)) {
		atomic_store(addr, 0);
		futex_wake(addr, true, 1, FUTEX_BITSET_MATCH_ANY);
		return;
	}
	if (addr && sys_copy_out(addr, &(int){ 0 }, sizeof(int)) == 0 &&
	    futex_wake(addr, true, 1, FUTEX_BITSET_MATCH_ANY) == 0)
		sys_futex(addr, FUTEX_WAKE, 1, NULL, NULL, 0);
}

_Atomic int *g_tid_address(struct g *gp)
{
	return gp->clear_tid;
}

void g_set_tid_address(struct g *gp, _Atomic int *addr)
{
	gp->clear_tid = addr;
}

struct g *g_from_tid(pid_t tid)
{
	for (struct g *gp = __atomic_load_n(&sched.allgs, __ATOMIC_ACQUIRE);
	     gp; gp = gp->alllink) {
		uint32_t st = atomic_load(&gp->status) & ~G_SCAN;
		if (gp->tid == tid && !gp->is_g0 && st != G_IDLE &&
		    st != G_DEAD && !gp->exited)
			return gp;
	}
	return NULL;
}

struct g *g_main(void)
{
	for (struct g *gp = __atomic_load_n(&sched.allgs, __ATOMIC_ACQUIRE);
	     gp; gp = gp->alllink)
		if (gp->is_main)
			return gp;
	return NULL;
}

struct g *g_from_task(pid_t pid, bool *gone)
{
	struct g *found = NULL;

	*gone = false;
	rlock_lock(&sched.alllock);
	if (pid == sys_getpid()) {
		found = g_main();
		*gone = found == NULL || found->exited ||
			atomic_load(&sched.main_exited);
	} else {
		for (struct m *mp = sched.allms; mp; mp = mp->alllink) {
			if (mp->tid != pid)
				continue;
			found = mp->lockedg ? mp->lockedg : mp->curg;
			*gone = found == NULL;
		}
	}
	rlock_unlock(&sched.alllock);
	return *gone ? NULL : found;
}

/* What a stale handle finds once its G's stack is gone: no thread. */
static struct g gone_g = { .status = G_IDLE, .exited = true };

/* A handle outlives its thread: glibc keeps a joined thread's descriptor
 * in its stack cache, goshim unmaps a stack of another size than the
 * default (and a stack the program gave back is the program's). So the
 * handle is read only where the kernel says it can be, and a G that has
 * moved on to another TCB, or none, no longer answers for it. An M's g0
 * is no program thread: its handle, seen only by code that runs on g0 (a
 * sanitizer runtime asking pthread_getattr_np(pthread_self())), is the
 * M's own glibc identity, which glibc answers for. */
struct g *g_from_handle(uintptr_t handle)
{
	struct g **slot, *gp;

	if (handle == 0)
		return NULL;
	slot = (struct g **)(handle + (uintptr_t)tls_g_offset());
	if (!sys_readable(slot))
		return &gone_g;
	gp = *slot;
	if (gp == NULL || gp->magic != G_MAGIC || gp->is_g0)
		return NULL;
	return (uintptr_t)gp->tcb == handle ? gp : &gone_g;
}

/* ---- system calls ------------------------------------------------------- */

/*
 * The goroutine stays on its M through the call; its P is left in
 * P_SYSCALL. Whoever changes that state first owns the P: exitsyscall
 * (back to running, the fast path) or sysmon (to idle, then handoffp).
 */
void entersyscall(void)
{
	struct g *gp = getg();
	struct m *mp = gp->m;
	uint32_t prev;
	struct p *pp = p_claim(mp, &prev);

	TRACE(trace_syscall_enter(gp));
	atomic_store(&gp->status, G_SYSCALL);
	mp->oldp = pp;
	if (pp) {
		atomic_store_explicit(&pp->syscall_g, gp, memory_order_relaxed);
		mp->p = NULL;
		pp->m = NULL;
		atomic_store_explicit(&pp->status, P_SYSCALL,
				      memory_order_release);
	}
	/* Without a P (sysmon took it) exitsyscall finds one. */
	atomic_store_explicit(&mp->pstate, MP_SYSCALL, memory_order_relaxed);
	/* Chaos: sysmon retakes the P more often. */
	if (chaos())
		chaos_delay();
}

/* On g0: no P came back; queue the goroutine (if any), run it if a P is
 * idle. */
static struct g *exitsyscall0(struct g *gp)
{
	struct m *mp = getg()->m;

	if (gp) {
		TRACE(trace_gostop(gp, "no P after syscall", false));
		atomic_store(&gp->status, G_RUNNABLE);
		gp->m = NULL;
	}
	rlock_lock(&sched.lock);
	struct p *pp = pidleget();
	if (pp == NULL && gp)
		globrunqput(gp);
	rlock_unlock(&sched.lock);
	if (pp) {
		acquirep(mp, pp);
		return gp;
	}
	if (mp->lockedg) {
		/* Its goroutine, queued here or parked by fn, comes back
		 * with a P. */
		stoplockedm(mp);
		return mp->lockedg;
	}
	/* schedule() needs a P: wait for one like any idle M. */
	m_wait_for_p(mp);
	return NULL;
}

void exitsyscall(void)
{
	struct g *gp = getg();
	struct m *mp = gp->m;
	struct p *pp = mp->oldp;
	uint32_t st = P_SYSCALL;

	/* Runtime code from here: a signal's handler waits (sigroute.c). */
	atomic_store_explicit(&mp->pstate, MP_RUNTIME, memory_order_relaxed);
	TRACE(trace_syscall_exit(gp));
	mp->oldp = NULL;
	if (pp && atomic_compare_exchange_strong(&pp->status, &st,
						 P_RUNNING)) {
		/* Fast path: nobody took the P. */
		mp->p = pp;
		pp->m = mp;
		atomic_fetch_add_explicit(&pp->syscalltick, 1,
					  memory_order_relaxed);
		atomic_store(&gp->status, G_RUNNING);
		atomic_store_explicit(&mp->pstate, MP_USER,
				      memory_order_release);
		/* sysmon asked it to yield: this is a runtime entry, unless
		 * a signal handler made the call (the code it interrupted may
		 * hold a runtime lock; the next entry yields). */
		if (atomic_load_explicit(&gp->preempt, memory_order_relaxed) &&
		    !gp->in_sighandler)
			gosched();
		else if (chaos())
			chaos_yield();
		return;
	}
	if (atomic_load(&sched.npidle) > 0) {
		rlock_lock(&sched.lock);
		struct p *idle = pidleget();
		rlock_unlock(&sched.lock);
		if (idle) {
			acquirep(mp, idle);
			atomic_store(&gp->status, G_RUNNING);
			atomic_store_explicit(&mp->pstate, MP_USER,
					      memory_order_release);
			return;
		}
	}
	/* Slow path, as Go: park the G in the global queue and let this M
	 * find work (or sleep) like any other. */
	mp->curg = gp;
	mcall(exitsyscall0);
	atomic_store(&gp->status, G_RUNNING);
}

/* A P taken from a syscall: run it if there is work, else idle it. */
static void handoffp(struct p *pp)
{
	int32_t zero = 0;

	if (atomic_load(&pp->dying)) {
		p_drain(pp);
		rlock_lock(&sched.lock);
		pidleput(pp); /* buries it, unless procresize revived it */
		rlock_unlock(&sched.lock);
		if (atomic_load(&sched.runqsize) > 0)
			wakep();
		return;
	}

	if (!runqempty(pp) || atomic_load(&sched.runqsize) > 0) {
		startm(pp, false);
		return;
	}
	/* No spinning or idle M at all: this one looks for work. */
	if (atomic_load(&sched.nmspinning) + atomic_load(&sched.npidle) == 0 &&
	    atomic_compare_exchange_strong(&sched.nmspinning, &zero, 1)) {
		startm(pp, true);
		return;
	}
	/* Timers, and fds goroutines wait on, are watched by an M that found
	 * nothing to run (findrunnable); with none such, the P goes to an M
	 * that looks for work and becomes their watcher if it finds none. */
	if ((timers_next() >= 0 && !timers_have_sleeper()) ||
	    netpoll_unwatched()) {
		startm(pp, false);
		return;
	}
	rlock_lock(&sched.lock);
	if (atomic_load(&sched.runqsize) > 0) {
		rlock_unlock(&sched.lock);
		startm(pp, false);
		return;
	}
	pidleput(pp);
	rlock_unlock(&sched.lock);
}

bool retake_syscall_p(struct p *pp, int64_t now)
{
	uint32_t tick = atomic_load(&pp->syscalltick);
	uint32_t st = P_SYSCALL;

	if (atomic_load(&pp->status) != P_SYSCALL)
		return false;
	/* A new syscall since the last look: give it a full tick (a P past
	 * GOMAXPROCS goes at once). */
	if (pp->sysmon_syscalltick != tick && !atomic_load(&pp->dying)) {
		pp->sysmon_syscalltick = tick;
		pp->sysmon_syscallwhen = now;
		return false;
	}
	/* Nothing else to run and Ms to spare: leave it (Go's rule), but
	 * not for more than 10 ms. */
	if (runqempty(pp) && atomic_load(&sched.runqsize) == 0 &&
	    atomic_load(&sched.nmspinning) + atomic_load(&sched.npidle) > 0 &&
	    pp->sysmon_syscallwhen + 10000000 > now &&
	    !atomic_load(&pp->dying))
		return false;
	if (!atomic_compare_exchange_strong(&pp->status, &st, P_IDLE))
		return false;
	TRACE(trace_procstop(pp));
	atomic_fetch_add(&pp->syscalltick, 1);
	handoffp(pp);
	return true;
}

/* ---- resizing the P set ------------------------------------------------- */

/*
 * GOMAXPROCS follows its inputs (affinity, CPU quota) while the program
 * runs, as in Go 1.25; there is no stop-the-world here, so a P past the
 * new count is marked dying and given up by whoever holds it at its next
 * chance: an idle one at once, a running one when its M next schedules
 * (its goroutine is asked to yield), one in a system call when sysmon
 * retakes it. Its goroutines go to the global queue; the P struct stays
 * (P_DEAD) for a later growth, and allp never moves, so readers need no
 * lock.
 */

/* pp's goroutines and free Gs to the global lists (pp held, or sched.lock
 * held and pp idle). */
static void p_drain(struct p *pp)
{
	struct g *gp;
	bool inherit;

	while ((gp = runqget(pp, &inherit)) != NULL) {
		rlock_lock(&sched.lock);
		globrunqput(gp);
		rlock_unlock(&sched.lock);
	}
	rlock_lock(&sched.gflock);
	while ((gp = pp->gfree) != NULL) {
		pp->gfree = gp->schedlink;
		pp->ngfree--;
		gfput_global(gp);
	}
	rlock_unlock(&sched.gflock);
}

/* sched.lock held; pp released, drained. */
static void p_bury(struct p *pp)
{
	struct g *gp;

	/* Its timers to P0, where Ms looking for work see them (an idle P
	 * is buried without a drain). */
	timers_drain(pp);
	/* Free Gs that came back since the drain. */
	rlock_lock(&sched.gflock);
	while ((gp = pp->gfree) != NULL) {
		pp->gfree = gp->schedlink;
		pp->ngfree--;
		gfput_global(gp);
	}
	rlock_unlock(&sched.gflock);
	atomic_store(&pp->status, P_DEAD);
}

/* schedule(): this M's P is dying: give it up and find another. gp (if
 * any) is the goroutine it was about to run. */
static struct g *p_retire(struct m *mp, struct g *gp)
{
	struct p *pp = mp->p;

	if (gp) {
		atomic_store(&gp->status, G_RUNNABLE);
		rlock_lock(&sched.lock);
		globrunqput(gp);
		rlock_unlock(&sched.lock);
	}
	p_drain(pp);
	rlock_lock(&sched.lock);
	releasep(mp);
	pidleput(pp); /* buries it, unless procresize revived it */
	struct p *np = pidleget();
	rlock_unlock(&sched.lock);
	if (np) {
		acquirep(mp, np);
		return NULL;
	}
	m_wait_for_p(mp);
	return NULL;
}

void procresize(int32_t n)
{
	int32_t cur = atomic_load(&gomaxprocs);

	if (n < 1 || n > GOMAXPROCS_MAX || n == cur)
		return;
	if (n > cur) {
		for (int32_t i = cur; i < n; i++) {
			struct p *pp = allp[i];
			if (pp == NULL) {
				pp = calloc(1, sizeof *pp);
				if (pp == NULL)
					return; /* stay as we are */
				pp->id = i;
				pp->status = P_DEAD;
				__atomic_store_n(&allp[i], pp,
						 __ATOMIC_RELEASE);
				atomic_store(&allp_len, i + 1);
			}
			rlock_lock(&sched.lock);
			atomic_store(&pp->dying, false);
			if (atomic_load(&pp->status) == P_DEAD) {
				pp->status = P_IDLE;
				pidleput(pp);
			}
			rlock_unlock(&sched.lock);
			atomic_store(&gomaxprocs, i + 1);
		}
		wakep();
		return;
	}
	atomic_store(&gomaxprocs, n);
	rlock_lock(&sched.lock);
	for (int32_t i = n; i < cur; i++) {
		struct p *pp = allp[i];
		struct p **link = &sched.pidle;
		atomic_store(&pp->dying, true);
		while (*link && *link != pp)
			link = &(*link)->link;
		if (*link) {
			/* Idle: gone now. */
			*link = pp->link;
			atomic_fetch_sub(&sched.npidle, 1);
			p_bury(pp);
		} else if (pp->m && pp->m->curg) {
			/* Its goroutine yields soon (preemption). */
			atomic_store(&pp->m->curg->preempt, true);
		}
	}
	rlock_unlock(&sched.lock);
}

/* ---- start-up ----------------------------------------------------------- */

static void m0_g0_main(void *arg) __attribute__((noreturn));
static void m0_g0_main(void *arg)
{
	schedule(arg);
}

/*
 * In the child of fork (core/fork.c): gp (NULL for a thread goshim did not
 * create) is the only goroutine, its M the only M, every P idle but the
 * one it takes. The other Gs and Ms are dropped as they are: their lists
 * may be half-updated by threads that are gone. The M's g0 starts over
 * on its own stack, below where it left off to run gp.
 */
void sched_fork_child(struct g *gp)
{
	struct m *mp = gp ? gp->m : NULL;
	uint64_t goidgen = atomic_load(&sched.goidgen);
	int64_t mnext = sched.mnext;
	char name[sizeof sched.main_name];

	memcpy(name, sched.main_name, sizeof name);
	memset(&sched, 0, sizeof sched);
	memset(&mnew, 0, sizeof mnew);
	atomic_store(&sched.goidgen, goidgen);
	sched.mnext = mnext;
	memcpy(sched.main_name, name, sizeof name);
	for (int32_t i = 0; i < allp_len; i++) {
		struct p *pp = allp[i];
		memset(pp, 0, sizeof *pp);
		pp->id = i;
		pp->status = i < gomaxprocs ? P_IDLE : P_DEAD;
	}
	for (int32_t i = gomaxprocs - 1; i > (mp ? 0 : -1); i--)
		pidleput(allp[i]);
	/* The thread itself still counts, as a live thread the program
	 * sees: the process must not end when its last goroutine does. */
	atomic_store(&sched.nlive, 1);
	if (mp == NULL)
		return;

	struct g *g0 = mp->g0;
	mp->p = mp->nextp = mp->oldp = NULL;
	mp->spinning = false;
	mp->tid = sys_gettid();
	note_clear(&mp->park);
	mp->schedlink = mp->alllink = NULL;
	mp->mcall_fn = NULL;
	mp->park_unlockf = NULL;
	mp->park_lock = NULL;
	arch_ctx_init(&g0->ctx, (char *)g0->ctx.sp - 256, g0->tcb, m0_g0_main,
		      mp);
	sched.allms = mp;
	sched.mcount = 1;
	g0->alllink = NULL;
	gp->alllink = g0;
	sched.allgs = gp;
	/* Whoever was joining or detaching it is gone. */
	atomic_store(&gp->jlock.v, 0);
	gp->joiner = NULL;
	gp->waitreason = NULL;
	/* ...and any it woke: it steps aside for nobody. */
	gp->outranked_by = NULL;
	mp->curg = gp;
	acquirep(mp, allp[0]);
	atomic_store(&gp->status, G_RUNNING);
	/* fork_prepare's entersyscall is never left in the child: the M
	 * runs the goroutine's code again as fork returns. A handler there
	 * took it for a system call and claimed a P next to its own
	 * ("acquirep: invalid P state", a child flooded with signals). */
	atomic_store_explicit(&mp->pstate, MP_USER, memory_order_release);
}

/* Make the running main thread the main goroutine on M0, with P0 (adopt),
 * or leave every P idle for the first goroutine's M (a thread goshim did
 * not create starts the runtime). M0's scheduler context (g0) gets a
 * fresh stack and TCB of its own. */
void sched_init(int32_t procs, bool adopt)
{
	struct m *m0;
	struct g *maing;
	int err;

	gomaxprocs = procs;
	allp_len = procs;
	allp = calloc(GOMAXPROCS_MAX, sizeof *allp);
	if (!allp)
		runtime_throw("sched_init: out of memory");
	for (int32_t i = 0; i < procs; i++) {
		allp[i] = calloc(1, sizeof *allp[i]);
		if (!allp[i])
			runtime_throw("sched_init: out of memory");
		allp[i]->id = i;
		allp[i]->status = P_IDLE;
	}
	for (int32_t i = procs - 1; i > (adopt ? 0 : -1); i--)
		pidleput(allp[i]);
	if (!adopt) {
		/* The calling thread still counts, as a live thread the
		 * program sees (as in a child of fork). */
		atomic_store(&sched.nlive, 1);
		return;
	}

	m0 = m_alloc();
	m0->tid = sys_gettid();
	err = stack_alloc(m0->g0, 256 * 1024, stack_page_size());
	if (err)
		runtime_throw("sched_init: no stack for g0");
	tls_prepare(m0->g0, m0->tid);
	arch_ctx_init(&m0->g0->ctx, m0->g0->stack_hi, m0->g0->tcb,
		      m0_g0_main, m0);
	acquirep(m0, allp[0]);

	maing = calloc(1, sizeof *maing);
	if (!maing)
		runtime_throw("sched_init: out of memory");
	maing->magic = G_MAGIC;
	maing->is_main = true;
	maing->tcb = arch_get_tp();
	maing->ctx.tp = maing->tcb;
	maing->goid = atomic_fetch_add(&sched.goidgen, 1) + 1;
	maing->tid = m0->tid;
	maing->clear_tid = tls_tid_word(maing->tcb);
	maing->m = m0;
	maing->status = G_RUNNING;
	maing->sigmask = thread_sigmask();
	m0->sigmask = maing->sigmask;
	sigroute_mask_change(0, maing->sigmask, false, true);
	maing->altstack = thread_altstack();
	m0->altstack = maing->altstack;
	memcpy(maing->name, sched.main_name, sizeof maing->name);
	rlock_lock(&sched.alllock);
	maing->alllink = sched.allgs;
	sched.allgs = maing;
	rlock_unlock(&sched.alllock);
	m0->curg = maing;
	cpuclock_adopt(m0, maing);
	m0->pstate = MP_USER;
	atomic_store(&sched.nlive, 1);
	g_current = maing;
	keys_adopt_thread(maing);
}

/* Once preemption is set up: the main goroutine's thread takes what the
 * runtime must receive, whatever the program blocked before the start. */
void sched_main_mask(void)
{
	struct g *gp = getg();

	if (gp && !gp->is_g0)
		m_set_sigmask(gp->m, gp->sigmask);
}
