/*
 * m.c: the M's life: made (allocm, newm), started (mstart), given a P
 * (startm, wakep), parked idle or wired (stopm, stoplockedm), woken
 * without a P (m_kick), and ended (m_reap, mexit). Go's runtime/proc.go.
 *
 * New Ms are made by sysmon, a real pthread in a known state (Go's
 * templateThread idea): goroutines run on TCBs glibc does not know, and
 * glibc's pthread_create reads the creator's TCB. So newm only queues the
 * M, with the P it is to hold, and wakes sysmon.
 *
 * An idle M is on sched.midle and sleeps on its note; whoever takes it
 * off the list (startm, m_kick) owns its wakeup, and nextp says whether
 * it comes with a P. Unlike Go, Ms beyond what GOMAXPROCS can use go away
 * after a while idle (m_reap); the process's main thread never does.
 */
#include <stdlib.h>
#include <string.h>
#include "asan.h"
#include "chaos.h"
#include "debug.h"
#include "netpoll.h"
#include "print.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "tls.h"
#include "wire.h"

/* ---- M lists (sched.lock held) ----------------------------------------- */

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

/* ---- creating Ms -------------------------------------------------------- */

/* Ms to start: sysmon, a real thread in a known state, creates them
 * (Go's templateThread idea): goroutines run on TCBs glibc does not know,
 * and glibc's pthread_create reads the creator's. */
static struct {
	struct rlock lock;
	struct m *pending;
} mnew;

static void *mstart(void *arg)
{
	struct m *mp = arg;
	struct g *g0 = mp->g0;

	asan_thread_clean();
	g0->tcb = arch_get_tp();
	g0->ctx.tp = g0->tcb;
	g_current = g0;
	mp->tid = tls_tid(g0->tcb);
	mp->sigmask = thread_sigmask(); /* sysmon's, until a G runs */
	atomic_store(&mp->sigmask_taken, mp->sigmask);
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
		int err = real.pthread_create(&t, &attr, mstart, mp);
		pthread_attr_destroy(&attr);
		if (err) {
			print("goshim: cannot create an OS thread: %s\n",
			      strerror(err));
			runtime_throw("newm: thread creation failed");
		}
	}
}

void newm_fork_child(void)
{
	memset(&mnew, 0, sizeof mnew);
}

struct m *allocm(void)
{
	struct m *mp = calloc(1, sizeof *mp);
	struct g *g0 = calloc(1, sizeof *g0);
	if (!mp || !g0)
		runtime_throw("allocm: out of memory");
	g0->is_g0 = true;
	g0->magic = G_MAGIC;
	g0->m = mp;
	g0->status = G_RUNNING;
	mp->g0 = g0;
	mp->fastrand = (uint32_t)nanotime() | 1;
	/* Its thread starts with sysmon's mask: everything blocked. */
	atomic_store(&mp->sigmask_taken, ~(uint64_t)0);
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
	struct m *mp = allocm();
	mp->nextp = pp;
	mp->spinning = spinning;
	rlock_lock(&mnew.lock);
	mp->schedlink = mnew.pending;
	mnew.pending = mp;
	rlock_unlock(&mnew.lock);
	sysmon_wake();
}

/* Run some M on pp (an idle P if NULL). */
void startm(struct p *pp, bool spinning)
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
void wakep(void)
{
	int32_t zero = 0;

	if (atomic_load(&sched.npidle) == 0)
		return;
	if (atomic_load(&sched.nmspinning) != 0 ||
	    !atomic_compare_exchange_strong(&sched.nmspinning, &zero, 1))
		return;
	startm(NULL, true);
}

/* ---- idle Ms ------------------------------------------------------------ */

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

/*
 * An M that sleeps with nothing to run (idle, wired and waiting, or the
 * main thread after its goroutine) blocks the idle mask: what every
 * goroutine blocks. When a goroutine comes to block more than all the
 * others did, m_kick_idle kicks each such M, which reads the mask again
 * and sleeps on where it was. (Taking the idle ones off their list
 * instead, as a wakeup does, left the list empty through a burst of mask
 * changes, and startm made a new M each time.) The flag is set before the
 * mask is read and read after it is changed (m_kick_idle): one side sees
 * the other.
 */
static uint32_t m_idle_begin(struct m *mp)
{
	atomic_store(&mp->idle_masked, true);
	atomic_thread_fence(memory_order_seq_cst);
	uint32_t seen = note_kicks(&mp->park);
	idle_signals_block(mp);
	return seen;
}

/* Sleep until woken (true) or the deadline (-1 none) passes (false). */
static bool m_idle_sleep(struct m *mp, int64_t deadline, uint32_t seen)
{
	bool woke;

	while ((woke = note_sleep_until_kick(&mp->park, deadline, seen)) &&
	       !note_woken(&mp->park)) {
		seen = note_kicks(&mp->park);
		idle_signals_block(mp);
	}
	atomic_store(&mp->idle_masked, false);
	return woke;
}

void m_kick_idle(void)
{
	atomic_thread_fence(memory_order_seq_cst); /* the new mask first */
	for (struct m *mp = __atomic_load_n(&sched.allms, __ATOMIC_ACQUIRE);
	     mp; mp = mp->alllink)
		if (atomic_load(&mp->idle_masked))
			note_kick(&mp->park);
	/* The timer keeper may be blocked in netpoll (findrunnable). */
	netpoll_break();
}

/*
 * Park the M until startm gives it a P (true), or until the deadline
 * (monotonic ns; -1 none) passes or m_kick wakes it without one (false).
 */
bool stopm(struct m *mp, int64_t deadline)
{
	if (mp->p)
		runtime_throw("stopm: holding P");
	rlock_lock(&sched.lock);
	mput(mp);
	if (deadline < 0)
		checkdead();
	rlock_unlock(&sched.lock);
	/* The idle mask, read on the idle list: read before, a change in
	 * between would be missed, and the M would sleep taking a signal
	 * every goroutine blocks, whose default action ends the process (a
	 * SIGUSR2 meant for sigwait). */
	uint32_t seen = m_idle_begin(mp);
	if (chaos())
		chaos_delay(); /* startm's wakeup may come first */
	bool alone = sysmon_absent();
	if (alone)
		sysmon_stand_in(mp);
	bool woke = m_idle_sleep(mp, deadline, seen);
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

int64_t m_reap_deadline(struct m *mp)
{
	/* The count first: it spares the common idling M a getpid. */
	if (__atomic_load_n(&sched.nmidle, __ATOMIC_RELAXED) < gomaxprocs ||
	    mp->tid == sys_getpid())
		return -1;
	return nanotime() + M_REAP_NS;
}

void m_reap(struct m *mp)
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
void m_wait_for_p(struct m *mp)
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

/* ---- wired Ms ----------------------------------------------------------- */

/*
 * A wired M whose goroutine cannot run: give the P away and sleep until
 * startlockedm hands over a P along with the goroutine, now runnable.
 */
void stoplockedm(struct m *mp)
{
	if (mp->p)
		handoffp(releasep(mp));
	rlock_lock(&sched.lock);
	sched.nmidlelocked++;
	checkdead();
	rlock_unlock(&sched.lock);
	m_idle_sleep(mp, -1, m_idle_begin(mp));
	note_clear(&mp->park);
	acquirep(mp, mp->nextp);
	mp->nextp = NULL;
}

/* gp, found runnable, is wired to another M: give it our P, and wait. */
void startlockedm(struct m *mp, struct g *gp)
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

/* ---- an M's end --------------------------------------------------------- */

/*
 * The M's thread keeps values a wired goroutine gave it and cannot be
 * given back (a raised nice value): the M ends, as Go ends the thread of
 * a goroutine that exits locked. The process's main thread (M0, or the
 * forking M in a child), whose exit glibc would take for the process's,
 * sleeps for good instead, with every signal blocked.
 */
void mexit(struct m *mp)
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
	for (;;)
		m_idle_sleep(mp, -1, m_idle_begin(mp)); /* nobody wakes it */
}
