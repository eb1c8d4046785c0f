/*
 * p.c: the P's life: the idle list, acquirep/releasep, and resizing the
 * P set as GOMAXPROCS follows its inputs (Go's runtime/proc.go).
 *
 * allp never moves and a P is never freed, so readers need no lock: a P
 * past GOMAXPROCS is marked dying, and whoever holds it gives it up at its
 * next chance (p_retire, handoffp, pidleput); it stays as P_DEAD, for a
 * later growth. The idle list and a P's status changes between idle and
 * running are under sched.lock.
 */
#include <stdlib.h>
#include "gomaxprocs.h"
#include "runtime.h"
#include "runtime2.h"
#include "timer.h"
#include "trace.h"

/* ---- the idle list, and an M's P (sched.lock held) -------------------- */

static void p_bury(struct p *pp);

struct p *pidleget(void)
{
	struct p *pp = sched.pidle;
	if (pp) {
		sched.pidle = pp->link;
		atomic_fetch_sub(&sched.npidle, 1);
	}
	return pp;
}

void pidleput(struct p *pp)
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

void acquirep(struct m *mp, struct p *pp)
{
	if (mp->p || pp->m || pp->status != P_IDLE)
		runtime_throw("acquirep: invalid P state");
	mp->p = pp;
	pp->m = mp;
	pp->status = P_RUNNING;
	TRACE(trace_procstart(pp, mp));
}

struct p *releasep(struct m *mp)
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

/* pp's free Gs to the global list. */
static void gfree_flush(struct p *pp)
{
	struct g *gp;

	rlock_lock(&sched.gflock);
	while ((gp = pp->gfree) != NULL) {
		pp->gfree = gp->schedlink;
		pp->ngfree--;
		gfput_global(gp);
	}
	rlock_unlock(&sched.gflock);
}

/* pp's goroutines and free Gs to the global lists (pp held, or sched.lock
 * held and pp idle). */
void p_drain(struct p *pp)
{
	struct g *gp;
	bool inherit;

	while ((gp = runqget(pp, &inherit)) != NULL) {
		rlock_lock(&sched.lock);
		globrunqput(gp);
		rlock_unlock(&sched.lock);
	}
	gfree_flush(pp);
}

/* sched.lock held; pp released, drained. */
static void p_bury(struct p *pp)
{
	/* Its timers to P0, where Ms looking for work see them (an idle P
	 * is buried without a drain). */
	timers_drain(pp);
	/* Free Gs that came back since the drain. */
	gfree_flush(pp);
	atomic_store(&pp->status, P_DEAD);
}

/* schedule(): this M's P is dying: give it up and find another. gp (if
 * any) is the goroutine it was about to run. */
struct g *p_retire(struct m *mp, struct g *gp)
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

