/*
 * syscall.c: who owns a P while its goroutine is out of the runtime's
 * sight: entersyscall/exitsyscall, sysmon's retake of a P left in a
 * system call or held by an M blocked in the kernel, and handoffp, which
 * gives such a P to another M.
 *
 * Go keeps these in proc.go; here they are one protocol, apart from the
 * scheduler loop: a P left in P_SYSCALL belongs to whoever changes that
 * state first (exitsyscall's CAS back to P_RUNNING, or sysmon's to
 * P_IDLE), and a P held by an M in user code (m.pstate MP_USER) is
 * touched only inside a claim (p_claim), which sysmon's retake_blocked_m
 * never overlaps (invariant 7). The loser never touches the P again:
 * exitsyscall without its P finds another, or queues its goroutine.
 */
#include <linux/membarrier.h>
#include "chaos.h"
#include "netpoll.h"
#include "sys.h"
#include "runtime.h"
#include "runtime2.h"
#include "timer.h"
#include "trace.h"

/* ---- who owns the P: the M, or sysmon (see MP_* in runtime.h) ----------- */

/*
 * A claim is on every way into the runtime (park, ready, create, system
 * call), a retake is rare: so the claim is a store and a load, and the
 * retake pays for the order between them. The M counts itself in
 * (m.claims), then looks at pstate; sysmon moves pstate from MP_USER to
 * MP_STEALING, makes every thread of the process pass a full barrier
 * (membarrier), then looks at the count, and backs off if the M is in.
 * An M whose count was stored before its barrier is seen; one that
 * stores it after looks after the barrier too, and sees MP_STEALING. So
 * either sysmon backs off or the M waits for it, never both go on.
 * Without membarrier's private expedited command (a kernel before 4.14,
 * seccomp, or a process that had threads before the runtime started,
 * where registering waits for an RCU grace period), each claim fences.
 * The count nests: a signal's handler may claim in the middle of a claim,
 * and undoes its own before it returns.
 */
static _Atomic bool claim_fenced = true;

void p_claim_init(bool alone)
{
	atomic_store(&claim_fenced,
		     !alone || SYS3(SYS_membarrier,
				    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
				    0, 0) != 0);
}

static void claims_add(struct m *mp, int32_t d)
{
	atomic_store_explicit(
		&mp->claims,
		atomic_load_explicit(&mp->claims, memory_order_relaxed) + d,
		memory_order_relaxed);
}

struct p *p_claim(struct m *mp, uint32_t *prev)
{
	uint32_t st = atomic_load_explicit(&mp->pstate, memory_order_relaxed);

	for (;;) {
		if (st == MP_USER) {
			claims_add(mp, 1);
			if (atomic_load_explicit(&claim_fenced,
						 memory_order_relaxed))
				atomic_thread_fence(memory_order_seq_cst);
			else
				atomic_signal_fence(memory_order_seq_cst);
			st = atomic_load_explicit(&mp->pstate,
						  memory_order_relaxed);
			if (st == MP_USER) {
				/* For this thread's handlers: runtime code. */
				atomic_store_explicit(&mp->pstate, MP_RUNTIME,
						      memory_order_relaxed);
				*prev = MP_USER;
				return mp->p;
			}
			claims_add(mp, -1);
		}
		/* sysmon is taking it, or backing off: wait the few
		 * stores. */
		while (st == MP_STEALING) {
			arch_cpu_relax();
			st = atomic_load(&mp->pstate);
		}
		if (st != MP_USER)
			break;
	}
	*prev = st;
	return st == MP_LOST ? NULL : mp->p;
}

void p_unclaim(struct m *mp, uint32_t prev)
{
	if (prev == MP_USER) {
		atomic_store_explicit(&mp->pstate, MP_USER,
				      memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
		claims_add(mp, -1);
	}
}

/* The M runs its goroutine's code again (execute): no claim is open. */
void p_user(struct m *mp)
{
	atomic_store_explicit(&mp->pstate, MP_USER, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&mp->claims, 0, memory_order_release);
	mp->syscall_claim = false;
}

/* exitsyscall's way back to the goroutine's code: the claim entersyscall
 * opened, if it did, ends. */
static void syscall_claim_end(struct m *mp)
{
	atomic_store_explicit(&mp->pstate, MP_USER, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	if (mp->syscall_claim) {
		mp->syscall_claim = false;
		claims_add(mp, -1);
	}
}

/* sysmon, after its move to MP_STEALING: is the M in a claim? A barrier
 * the kernel refuses now (it never has once registered) counts as a
 * claim seen, and claims fence from then on. */
static bool claimed(struct m *mp)
{
	if (atomic_load(&claim_fenced))
		atomic_thread_fence(memory_order_seq_cst);
	else if (SYS3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0,
		      0) != 0) {
		atomic_store(&claim_fenced, true);
		return true;
	}
	return atomic_load(&mp->claims) != 0;
}

/*
 * sysmon: mp's thread sleeps in the kernel (its /proc state said so) and
 * its goroutine made no progress. If the M is still in user code and not
 * in a claim, sysmon becomes the P's owner: the M cannot touch it any
 * more, and when it next enters the runtime it finds MP_LOST.
 */
bool retake_blocked_m(struct m *mp)
{
	uint32_t st = MP_USER;

	if (!atomic_compare_exchange_strong(&mp->pstate, &st, MP_STEALING))
		return false;
	/* Chaos: a sysmon that loses its CPU here (a loaded machine). */
	if (chaos())
		chaos_delay();
	if (claimed(mp)) {
		/* The M overwrote MP_STEALING already, or finds MP_USER. */
		st = MP_STEALING;
		atomic_compare_exchange_strong(&mp->pstate, &st, MP_USER);
		return false;
	}
	struct p *pp = mp->p;
	mp->p = NULL;
	pp->m = NULL;
	atomic_fetch_add(&pp->syscalltick, 1);
	atomic_store(&pp->status, P_IDLE);
	atomic_store_explicit(&mp->pstate, MP_LOST, memory_order_release);
	handoffp(pp);
	return true;
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

	mp->syscall_claim = prev == MP_USER;
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
struct g *exitsyscall0(struct g *gp)
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
		syscall_claim_end(mp);
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
			syscall_claim_end(mp);
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
void handoffp(struct p *pp)
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

	if (atomic_load(&pp->status) != P_SYSCALL) {
		pp->sysmon_queued = false;
		return false;
	}
	/* A new syscall since the last look: give it a full tick (a P past
	 * GOMAXPROCS goes at once). Unlike Go, not when work waited on the
	 * P, or in the global queue, at this look and the last: a goroutine
	 * that makes one short syscall after another (fsync in a loop) would
	 * keep the P from what it readied (a ticker) for its whole 10 ms
	 * slice, every look finding a new syscall. */
	bool queued = !runqempty(pp) || atomic_load(&sched.runqsize) > 0;
	bool waited = queued && pp->sysmon_queued;
	pp->sysmon_queued = queued;
	if (pp->sysmon_syscalltick != tick && !atomic_load(&pp->dying) &&
	    !waited) {
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

