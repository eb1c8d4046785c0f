/*
 * proc.c: the scheduler loop: schedule/findrunnable on each M's g0, park
 * and ready, yields, and the scheduler's start (Go's runtime/proc.go; the
 * rest of proc.go is in m.c, p.c, g.c and syscall.c).
 *
 * Each M runs schedule() on its g0; a G gives the M back with mcall(fn),
 * which saves the G's context and has g0 run fn(gp) on the M's own stack,
 * where it is safe to put gp on a queue: nobody can resume gp before its
 * registers are saved: park_m marks it waiting only then, and goready
 * waits for that mark, so a waker may find a G while it is still on its
 * way into gopark. A G whose P has local work may instead switch straight
 * to the next G, which runs fn(gp) first (mcall_handoff): the same two
 * conditions hold there.
 *
 * findrunnable looks at the local queue, the global queue (every 61st tick
 * first, so it cannot starve), then steals half of a random victim's queue
 * (4 rounds; runnext only in the last). At most half the busy Ps have a
 * spinning M looking for work; the last spinning M to find work wakes
 * another (so work readied meanwhile is found) and an M that finds nothing
 * gives its P back and sleeps on its note until startm hands it one.
 */
#include <stdlib.h>
#include <string.h>
#include "chaos.h"
#include "cpuclock.h"
#include "gomaxprocs.h"
#include "netpoll.h"
#include "runtime.h"
#include "runtime2.h"
#include "stack.h"
#include "sys.h"
#include "timer.h"
#include "tls.h"
#include "trace.h"
#include "wire.h"

#define STEAL_TRIES 4

struct sched sched;
struct p **allp;
_Atomic int32_t allp_len;
_Atomic int32_t gomaxprocs;
__thread struct g *g_current;

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
		/* Queued work with no P free is not this M's to run: the
		 * Ps' own Ms take it from the global queue (at once when one
		 * runs dry, else within 61 ticks), and this M sleeps rather
		 * than spin beside them for a P (it would take a CPU from
		 * the goroutines that hold them). */
		bool runnable = atomic_load(&sched.runqsize) > 0 &&
				atomic_load(&sched.npidle) > 0;
		bool got_p = !runnable && !netpoll_block(keeper ? next : -1) &&
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

/* gp becomes mp's goroutine (a goroutine dump may hold it still, G_SCAN,
 * for a moment), with a new time slice unless it inherits one. */
static void run_on(struct m *mp, struct g *gp, bool inherit_time)
{
	mp->curg = gp;
	gp->m = mp;
	uint32_t st = atomic_load_explicit(&gp->status, memory_order_relaxed);
	for (;;) {
		st &= ~G_SCAN;
		if (atomic_compare_exchange_weak(&gp->status, &st, G_RUNNING))
			break;
		arch_cpu_relax();
	}
	atomic_store_explicit(&gp->preempt, false, memory_order_relaxed);
	if (!inherit_time)
		mp->p->schedtick++;
}

static void execute(struct m *mp, struct g *gp, bool inherit_time)
{
	run_on(mp, gp, inherit_time);
	TRACE(trace_gostart(gp, mp->p));
	/* A goroutine that stepped aside for this one goes on next. */
	if (__builtin_expect(atomic_load(&gp->resume_on_run) != NULL, 0))
		resume_stepped_aside(gp);
	m_set_sigmask(mp, gp->sigmask);
	m_set_altstack(mp, &gp->altstack);
	if (__builtin_expect(gp->attrs != NULL, 0))
		wire_adopt(mp, gp);
	/* From here sysmon may take the P if the goroutine blocks in the
	 * kernel: the goroutine claims it before each use. */
	p_user(mp);
	cpuclock_switch_in(mp, gp);
	arch_switch(&mp->g0->ctx, &gp->ctx);
}

/* The M's scheduler loop, on g0. */
void schedule(struct m *mp)
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

/* ---- switching away from a goroutine ------------------------------------ */

/*
 * A goroutine that parks, yields or ends while its P has local work does
 * not pass through g0: it switches straight to the next goroutine, which
 * runs fn(prev) (park_m, goyield_m, goexit0) as its first step, on the
 * same M. That is what a G's switch to g0 is for: fn publishes prev
 * (marks it waiting, queues it, frees it), and nobody may resume prev
 * before its registers are saved and this M is off its stack; on the
 * next G's stack, both hold. One switch and one thread-pointer write per
 * hand-off instead of two (wrfsbase alone is ~15 ns on AMD). The M stays
 * MP_RUNTIME, and prev keeps its M, until next has run fn: sysmon and
 * signals see runtime code throughout, as for a switch through g0.
 *
 * Only the plain case: what schedule() would do differently first (a
 * wired M or goroutine, a dying P, the 61st tick's look at the global
 * queue, a goroutine that must wake another as it starts, chaos's coin)
 * goes through g0.
 */
static struct g *handoff_next(struct m *mp, struct p *pp, bool *inherit)
{
	struct g *next;

	if (pp == NULL || mp->lockedg ||
	    atomic_load_explicit(&pp->dying, memory_order_relaxed) ||
	    (chaos() && chaos_one_in(2)) ||
	    (pp->schedtick % 61 == 0 && atomic_load(&sched.runqsize) > 0))
		return NULL;
	/* The queue before the clock: with nothing queued, findrunnable
	 * reads it. The P's due timers run here, as findrunnable runs them
	 * first: their callbacks only ready goroutines (waiter_timeout),
	 * which a goroutine may do anywhere. */
	if (runq_looks_empty(pp))
		return NULL;
	int64_t now = timers_due();
	if (now >= 0)
		timers_run_p(pp, now);
	next = runqget(pp, inherit);
	if (next && (next->lockedm || next->attrs ||
		     atomic_load(&next->resume_on_run))) {
		/* First again, where schedule() takes it. */
		runqput(pp, next, true);
		return NULL;
	}
	return next;
}

/* The first step of gp, which an M switched to: the fn that the one it
 * switched from left (handoff_next), then execute's last steps. */
static void handoff_done(struct g *gp)
{
	struct m *mp = gp->m;
	struct g *prev = mp->handoff_prev;

	if (__builtin_expect(prev == NULL, 1))
		return;
	mp->handoff_prev = NULL;
	prev = mp->handoff_fn(prev);
	if (prev) {
		/* Its wait was over before it parked: it runs after this
		 * one, as soon as this one leaves the P, or elsewhere. */
		uint32_t st = atomic_load(&prev->status) & ~G_SCAN;
		while (!atomic_compare_exchange_weak(&prev->status, &st,
						     G_RUNNABLE)) {
			st &= ~G_SCAN;
			arch_cpu_relax();
		}
		runqput(mp->p, prev, true);
		wakep();
	}
	TRACE(trace_gostart(gp, mp->p));
	m_set_sigmask(mp, gp->sigmask);
	m_set_altstack(mp, &gp->altstack);
	p_user(mp);
}

void g_started(struct g *gp)
{
	handoff_done(gp);
}

/* Switch away from the running G and run fn(gp) on g0, or, if handoff,
 * on the next G (see above); returns when gp is resumed. g0 owns the P
 * (or, if sysmon took it, finds it gone and gets another). */
static void switch_away(mcall_fn fn, bool handoff)
{
	struct g *gp = getg();
	struct m *mp = gp->m;
	struct g *next = NULL;
	uint32_t prev;
	bool inherit;

	if (__builtin_expect(gp->sigself != 0, 0))
		sigthread_self_drain(gp);
	struct p *pp = p_claim(mp, &prev);
	atomic_store_explicit(&mp->pstate, MP_RUNTIME, memory_order_relaxed);
	if (handoff)
		next = handoff_next(mp, pp, &inherit);
	cpuclock_switch_out(mp, gp);
	if (next) {
		mp->handoff_prev = gp;
		mp->handoff_fn = fn;
		run_on(mp, next, inherit);
		cpuclock_switch_in(mp, next);
		arch_switch(&gp->ctx, &next->ctx);
	} else {
		mp->mcall_fn = fn;
		arch_switch(&gp->ctx, &mp->g0->ctx);
	}
	/* Resumed, maybe on another M, maybe by a goroutine's hand-off (gp,
	 * not getg(): its TLS block may be cold, and nothing else may read
	 * it). */
	handoff_done(gp);
	if (__builtin_expect(atomic_load_explicit(&gp->sigpending,
						  memory_order_relaxed) != 0,
			     0))
		sigthread_deliver(gp);
}

void mcall(mcall_fn fn)
{
	switch_away(fn, false);
}

void mcall_handoff(mcall_fn fn)
{
	switch_away(fn, true);
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
	 * waker saw this store and readied it itself (see goready). The
	 * permit is taken only once the status CAS has made the goroutine
	 * this M's again: from the store on, this M may lose its CPU while
	 * another M runs the goroutine on into a later park, and a permit
	 * left for that park is not this one's to take. */
	atomic_store(&gp->status, G_WAITING);
	if (chaos())
		chaos_stall();
	if (!atomic_load(&gp->ready_permit))
		return NULL;
	for (;;) {
		uint32_t st = G_WAITING;
		if (atomic_compare_exchange_weak(&gp->status, &st,
						 G_RUNNING)) {
			/* Running again is the wakeup of any permit there
			 * now: each was left before the goroutine resumes. */
			atomic_exchange(&gp->ready_permit, false);
			return gp;
		}
		if (st == (G_WAITING | G_SCAN)) /* a dump holds it: wait */
			arch_cpu_relax();
		else if (st != G_WAITING)
			return NULL; /* readied: the permit's waker or another */
	}
}

static void park(bool (*unlockf)(struct g *, void *), void *lock,
		 const char *reason, bool handoff)
{
	struct g *gp = getg();
	struct m *mp = gp->m;

	gp->waitreason = reason;
	gp->waitsince = nanotime_coarse();
	mp->park_unlockf = unlockf;
	mp->park_lock = lock;
	switch_away(park_m, handoff);
	gp->waitreason = NULL;
}

void gopark(bool (*unlockf)(struct g *, void *), void *lock,
	    const char *reason)
{
	park(unlockf, lock, reason, true);
}

void gopark_sched(bool (*unlockf)(struct g *, void *), void *lock,
		  const char *reason)
{
	park(unlockf, lock, reason, false);
}

/*
 * Make a parked G runnable. A waker may find the G still awake: on its way
 * into gopark (it left its wait queue's lock before parking, so the lock
 * is never held across a context switch), or woken for a while to run a
 * signal handler in the middle of its wait (sigthread_send). Then it leaves
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
	mcall_handoff(goyield_m);
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
	newm_fork_child();
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
	live_fork_child(gp);
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
	p_claim_init(true); /* fork copied one thread */
	p_user(mp);
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
	if (!adopt)
		return; /* the calling thread never ends the process here */

	m0 = allocm();
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
	handle_add(maing->tcb, maing);
	maing->ctx.tp = maing->tcb;
	maing->goid = atomic_fetch_add(&sched.goidgen, 1) + 1;
	maing->tid = m0->tid;
	maing->clear_tid = tls_tid_word(maing->tcb);
	maing->m = m0;
	maing->status = G_RUNNING;
	maing->sigmask = thread_sigmask();
	m0->sigmask = maing->sigmask;
	atomic_store(&m0->sigmask_taken, m0->sigmask);
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
	live_begin(maing);
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
