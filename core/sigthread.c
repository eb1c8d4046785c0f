/*
 * sigthread.c: signals sent to one goroutine (pthread_kill).
 *
 * The kernel can direct a signal only at an OS thread, and a goroutine
 * has one only while it runs. So a signal for a goroutine that is running
 * (or in a system call) goes to its M with tgkill; for one that is parked
 * or waiting to run it is kept in the G, and raised on the goroutine's own
 * M as soon as it runs again (mcall's return, its first start) with the
 * signal unblocked in its mask (sigmask.c raises them when it unblocks).
 * A goroutine parked in a wait that a signal interrupts (a sleep, an fd
 * wait, sem_wait: see intr_begin) has the wait ended as if it had timed
 * out, and its call fails with EINTR (or starts over, for SA_RESTART)
 * once the handler has run; other waits (mutexes, condvars, joins) go
 * on after the handler, which runs at once: the goroutine is woken only
 * for it, as the kernel runs a handler on a thread blocked in a futex. A
 * signal with no handler acts on the whole process whichever thread takes
 * it: the default action happens at once (on the sender's M), an ignored
 * one is dropped, unless the target blocks it (then it waits, for
 * sigwait).
 *
 * A signal sent to a goroutine's M can meet another goroutine: the target
 * may leave the M between the sender's look and the kernel's delivery. So
 * it is sent marked: queued (rt_tgsigqueueinfo, which may not claim
 * SI_TKILL but from the main thread) with a per-process cookie as its
 * value and the target in the siginfo word after it, which the kernel
 * carries. goshim's handlers look at the mark first (sigthread_misdirected):
 * the right goroutine gets the siginfo tgkill would have made (SI_TKILL,
 * our pid and uid, nothing else), any other context hands the signal back
 * to its target through sysmon. One still pending when the M takes a mask that blocks it
 * (the next goroutine's) is taken off the thread then (m_directed_drain).
 * The siginfo of the instance itself (the sender's, a sigqueue value, a
 * timer's) is kept for the goroutine (sigkeep.c) from the moment goshim
 * takes the signal until the goroutine takes it, and given to it then.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include "chaos.h"
#include "preempt.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "sigkeep.h"
#include "sys.h"
#include "waiter.h"
#include "tls.h"


static long m_tgkill(pid_t tid, int sig)
{
	return SYS3(SYS_tgkill, sys_getpid(), tid, sig);
}

/* The mark: the cookie in si_value, the target in the word after it, and
 * in the last the target's life (its goid) with LIFE_PROCESS if the
 * signal is one the process gave it (the kernel keeps the 32 bytes of
 * siginfo's union). */
#define SI_TARGET_OFF (offsetof(siginfo_t, si_value) + sizeof(union sigval))
#define SI_LIFE_OFF (SI_TARGET_OFF + sizeof(void *))
#define LIFE_PROCESS (1ull << 63)

_Static_assert(SI_LIFE_OFF + sizeof(uint64_t) <=
		       offsetof(siginfo_t, si_value) - 8 + 32,
	       "the mark must sit in the part of siginfo the kernel keeps");

static void keep_marked(struct g *target, int sig, uint64_t life);

/* gp's life now, with LIFE_PROCESS if sig is one the process gave it. */
static uint64_t life_of(struct g *gp, int sig)
{
	uint64_t life = __atomic_load_n(&gp->goid, __ATOMIC_RELAXED);
	if (atomic_load(&gp->sigprocess) & sigbit(sig))
		life |= LIFE_PROCESS;
	return life;
}

static _Atomic uintptr_t mark_cookie;
static _Atomic bool redirected; /* some goroutine has a signal handed back */

static uintptr_t cookie(void)
{
	uintptr_t c = atomic_load_explicit(&mark_cookie, memory_order_relaxed);
	if (c == 0) {
		uintptr_t r = 0;
		if (SYS3(SYS_getrandom, &r, sizeof r, GRND_NONBLOCK) !=
		    sizeof r)
			r = (uintptr_t)nanotime() ^ (uintptr_t)&r;
		r |= 1;
		if (!atomic_compare_exchange_strong(&mark_cookie, &c, r))
			return c;
		c = r;
	}
	return c;
}

static void keep_for(struct g *target, int sig);

/* A marked signal not seen taken after this long was taken where goshim
 * does not look (a signalfd read): the next one is sent regardless. */
#define DIRECTED_STALE_NS 10000000

void sigthread_siginfo(siginfo_t *si, int sig, int code)
{
	memset(si, 0, sizeof *si);
	si->si_signo = sig;
	si->si_code = code;
	si->si_pid = sys_getpid();
	si->si_uid = (uid_t)SYS0(SYS_getuid);
}

/* sig for gp, which runs on (or sits in a system call on) mp. A standard
 * signal does not queue: one still pending on the thread (sent for
 * another goroutine before) would swallow this one, so it stays kept in
 * gp until that one is taken, and sysmon tries again. */
static void m_tgkill_for(struct m *mp, struct g *gp, int sig, uint64_t life)
{
	siginfo_t si;
	int64_t now = nanotime();

	/* SIGCANCEL queues (a real-time signal) and nobody but goshim's
	 * handler takes it: never a second one on the thread. */
	if ((atomic_fetch_or(&mp->directed, sigbit(sig)) & sigbit(sig)) &&
	    (sig == SIGCANCEL ||
	     now - atomic_load(&mp->directed_ns) < DIRECTED_STALE_NS)) {
		keep_marked(gp, sig, life);
		return;
	}
	atomic_store(&mp->directed_ns, now);
	sigthread_siginfo(&si, sig, SI_QUEUE);
	si.si_value.sival_ptr = (void *)cookie();
	memcpy((char *)&si + SI_TARGET_OFF, &gp, sizeof gp);
	memcpy((char *)&si + SI_LIFE_OFF, &life, sizeof life);
	SYS4(SYS_rt_tgsigqueueinfo, si.si_pid, mp->tid, sig, &si);
}

static void given(struct g *gp);

/* The target of a marked signal and its life (and the mark removed),
 * else NULL. */
static struct g *unmark(siginfo_t *si, uint64_t *life)
{
	struct g *target;
	uintptr_t c = atomic_load_explicit(&mark_cookie, memory_order_relaxed);

	if (c == 0 || si->si_code != SI_QUEUE ||
	    (uintptr_t)si->si_value.sival_ptr != c ||
	    si->si_pid != sys_getpid())
		return NULL;
	memcpy(&target, (char *)si + SI_TARGET_OFF, sizeof target);
	memcpy(life, (char *)si + SI_LIFE_OFF, sizeof *life);
	si->si_code = SI_TKILL;
	si->si_value.sival_ptr = NULL;
	memset((char *)si + SI_TARGET_OFF, 0, sizeof target + sizeof *life);
	return target;
}

/* A marked signal that met another goroutine, or was taken off a thread,
 * for target: kept for it if the life it was sent to goes on; if that
 * one has ended, the process's signal goes back to the process and the
 * thread's own dies with it. */
static void keep_marked(struct g *target, int sig, uint64_t life)
{
	bool process = life & LIFE_PROCESS;

	if (__atomic_load_n(&target->goid, __ATOMIC_RELAXED) !=
	    (life & ~LIFE_PROCESS)) {
		if (process)
			sigroute_note(sig);
		return;
	}
	if (process)
		atomic_fetch_or(&target->sigprocess, sigbit(sig));
	sigthread_keep(target, sig);
	given(target);
}

static void keep_for(struct g *target, int sig)
{
	atomic_fetch_or(&target->sigpending, sigbit(sig));
	atomic_store(&redirected, true);
}

/* Kept for gp, which sysmon looks at now (from a signal handler too). */
void sigthread_keep(struct g *gp, int sig)
{
	keep_for(gp, sig);
	sysmon_wake();
}

bool sigthread_misdirected(int sig, siginfo_t *si, bool *here)
{
	uint64_t life = 0;
	struct g *target = unmark(si, &life);
	struct g *gp = getg();

	/* Its target in the life it was sent to (a G is reused). */
	*here = target != NULL && target == gp &&
		gp->goid == (life & ~LIFE_PROCESS);
	if (target == NULL)
		return false;
	/* Off the thread: the next one for this M may be sent. */
	if (gp && gp->m)
		atomic_fetch_and(&gp->m->directed, ~sigbit(sig));
	if (*here)
		return false;
	keep_marked(target, sig, life);
	return true;
}

bool sigthread_kept_siginfo(struct g *gp, int sig, siginfo_t *si)
{
	bool more;

	if (!sigkeep_take(gp, sig, si, &more))
		return sigkeep_bare_ok(sig);
	if (more)
		keep_for(gp, sig);
	return true;
}

void sigthread_kept_first(struct g *gp, int sig, siginfo_t *si)
{
	bool more;

	if (sigkeep_queues(sig) && sigkeep_behind(gp, si, &more) && more)
		keep_for(gp, sig);
}

/* Back to the process, pending for any thread, with its siginfo where
 * the kernel lets it be given again (a code it could not have made for
 * a kill, or the main thread asking), else as a kill. */
static void process_requeue(const siginfo_t *si, pid_t pid)
{
	if ((si->si_code < 0 && si->si_code != SI_TKILL) ||
	    sys_gettid() == pid) {
		siginfo_t again = *si;
		if (SYS3(SYS_rt_sigqueueinfo, pid, si->si_signo, &again) == 0)
			return;
	}
	SYS2(SYS_kill, pid, si->si_signo);
}

/* Take set's signals off this thread: a marked one goes to its target;
 * with own (a goroutine taking back what it sent itself), one the process
 * sent (SI_TKILL, SI_QUEUE) is kept in own, siginfo and all; any other is
 * the process's, pending for any thread: back where it was, and no
 * further. */
static void thread_pending_take(uint64_t set, struct g *own)
{
	struct timespec zero = { 0, 0 };
	pid_t pid = sys_getpid();
	siginfo_t si;

	while (SYS4(SYS_rt_sigtimedwait, &set, &si, &zero, 8) > 0) {
		uint64_t life = 0;
		struct g *target = unmark(&si, &life);
		if (target) {
			keep_marked(target, si.si_signo, life);
		} else if (own && si.si_pid == pid &&
			   (si.si_code == SI_TKILL || si.si_code == SI_QUEUE)) {
			sigkeep_put(own, &si);
			atomic_fetch_or(&own->sigpending, sigbit(si.si_signo));
		} else {
			process_requeue(&si, pid);
			break;
		}
	}
}

void m_directed_drain(struct m *mp, uint64_t mask)
{
	uint64_t set = atomic_load_explicit(&mp->directed,
					    memory_order_relaxed) &
		       mask;

	if (set == 0)
		return;
	atomic_fetch_and(&mp->directed, ~set);
	thread_pending_take(set, NULL);
}

/* The kernel's disposition of sig: SIG_DFL, SIG_IGN or a handler (and
 * its flags). */
static uintptr_t disposition_flags(int sig, unsigned long *flags)
{
	struct {
		uintptr_t handler;
		unsigned long flags;
		uintptr_t restorer;
		uint64_t mask;
	} sa;
	if (SYS4(SYS_rt_sigaction, sig, NULL, &sa, 8) < 0)
		return (uintptr_t)SIG_DFL;
	*flags = sa.flags;
	return sa.handler;
}

static uintptr_t disposition(int sig)
{
	unsigned long flags;
	return disposition_flags(sig, &flags);
}

/* End gp's interruptible wait, if it is in one. */
static bool sigthread_interrupt(struct g *gp)
{
	spin_lock(&gp->jlock);
	struct waiter *w = gp->intr_w;
	bool hit = w && waiter_claim(w);
	if (hit)
		gp->intr_hit = true;
	spin_unlock(&gp->jlock);
	/* w stays valid: its owner cannot return before this wakes it. */
	if (hit)
		waiter_finish(w, W_TIMEDOUT);
	return hit;
}

/* libgoshim.so's own ELF header (the linker's, hidden). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

/* Read from libgoshim.so's program headers in memory (no loader call:
 * async-signal-safe). */
bool goshim_text(uintptr_t pc)
{
	const ElfW(Ehdr) *eh = &__ehdr_start;
	uintptr_t base = (uintptr_t)eh;
	/* Past the object the declaration names (UBSan's object-size check
	 * would stop there): from its address. */
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		/* The first PT_LOAD maps the header at vaddr 0. */
		uintptr_t lo = base + ph[i].p_vaddr;
		if (pc >= lo && pc < lo + ph[i].p_memsz)
			return true;
	}
	return false;
}

/* glibc's asynchronous request (CANCELING), marked CANCELED as its
 * SIGCANCEL handler would mark it, and glibc's own wait for that signal
 * (after a cancellable call) woken. */
static void cancel_mark(_Atomic int *ch)
{
	if ((atomic_load(ch) & (TLS_CANCELING | TLS_CANCELED)) !=
	    TLS_CANCELING)
		return;
	atomic_fetch_or(ch, TLS_CANCELED);
	SYS3(SYS_futex, ch, FUTEX_WAKE_PRIVATE, INT_MAX);
}

bool sigthread_cancel_unsafe(struct g *gp, uintptr_t pc)
{
	if (!g_cancel_async(gp) || !goshim_text(pc))
		return false;
	/* Marked, so that the wait the goroutine is on its way to ends at
	 * once (a cancellable one sees the request); the signal goes again,
	 * through sysmon, to wherever the goroutine runs next. */
	cancel_mark(tls_cancelhandling(gp->tcb));
	sigthread_keep(gp, SIGCANCEL);
	return true;
}

void gcancel(struct g *gp)
{
	_Atomic int *ch = tls_cancelhandling(gp->tcb);
	int v = atomic_load(ch);

	if (gp->is_main)
		return;
	if ((v & (TLS_CANCELING | TLS_CANCELED)) == TLS_CANCELING) {
		/* glibc's asynchronous cancel, whose signal went nowhere.
		 * A parked goroutine is not in one of glibc's cancellable
		 * calls (those run under entersyscall): it is made a
		 * deferred request, which its next cancellation point
		 * takes; glibc's own wait for the signal (after a call) is
		 * woken. */
		if (atomic_load(&gp->status) == G_WAITING)
			cancel_mark(ch);
		/* ...and the signal goes to it all the same: it may have
		 * left the wait just now, and be bound for no cancellation
		 * point (run_goroutine_handler acts on the marked request). */
		sigthread_send(gp, SIGCANCEL);
	} else if (tls_cancel_due(gp->tcb)) {
		if (atomic_load(&gp->cancel_syscall))
			sigthread_send(gp, SIGCANCEL);
		/* sysmon looks again: gp may be on its way into a raw
		 * cancellable call (see sigthread_recheck). */
		atomic_store(&redirected, true);
		sysmon_wake();
	}
	/* A trip (see kick): a cancellable wait sees the request and ends
	 * (waiter_block); one about to park finds the permit. glibc marked
	 * the request before, so a wait that begins later sees it too. */
	if (g_cancel_due(gp))
		goready(gp);
}

bool sig_ignored_by_default(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
	       sig == SIGCONT;
}

/* sig is kept in gp: get it delivered as soon as gp can take it. */
static void kick(struct g *gp, int sig)
{
	uint32_t st = atomic_load(&gp->status);
	bool blocked = gp->sigmask & sigbit(sig);

	/* SIGCANCEL may unwind the goroutine: it goes only to an M that
	 * runs it (user code or a system call), never to a wait; until
	 * then sysmon keeps trying. */
	if (sig == SIGCANCEL && st != G_RUNNING && st != G_SYSCALL) {
		if (st == G_DEAD || st == G_IDLE) {
			atomic_fetch_and(&gp->sigpending, ~sigbit(sig));
			return;
		}
		atomic_store(&redirected, true);
		/* An asynchronous request that met the goroutine in goshim's
		 * code (sigthread_cancel_unsafe) and found it parked since:
		 * a trip, for its cancellable wait to see the request. */
		if (st == G_WAITING && g_cancel_async(gp) && g_cancel_due(gp))
			goready(gp);
		return;
	}
	/* Parked: a wait the signal interrupts ends; any other goes on
	 * after the handler, which runs now, as the kernel runs it on a
	 * thread blocked in a futex: the goroutine is woken only for it
	 * (its wait loops on its state; see waiter_block and goready). */
	if (st == G_WAITING && !blocked && !sigthread_interrupt(gp))
		goready(gp);
	/* On an M now: it takes it there, if its mask lets it (a blocked
	 * one stays kept in the G: made pending on the M's thread it would
	 * go to the M's next goroutine), or if it waits for exactly that in
	 * sigwait. */
	if (!(st == G_RUNNING && !blocked) &&
	    !(st == G_SYSCALL &&
	      (!blocked || (atomic_load(&gp->sigwait_set) & sigbit(sig)))))
		return;
	struct m *mp = gp->m;
	/* Still G_RUNNING but off its M: on its way into a park (park_m
	 * clears gp->m before it stores G_WAITING) or out of its life.
	 * sysmon looks again, when its state says where it is. */
	if (mp == NULL) {
		sigthread_keep(gp, sig);
		return;
	}
	/* The life it is for is read before the signal is taken from it: a
	 * G that ends and is made anew meanwhile is another thread. */
	uint64_t life = life_of(gp, sig);
	if (atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) & sigbit(sig))
		m_tgkill_for(mp, gp, sig, life);
}

static bool to_self(struct g *gp)
{
	struct g *me = getg();
	return gp == me && me && !me->is_g0;
}

/* To itself: on its own M's thread, where the kernel delivers it at once
 * or, blocked, keeps it pending with the exact siginfo for sigpending,
 * sigwait and a signalfd read. Blocked, it is noted: the goroutine may
 * leave the M before it unblocks it. */
static int send_self(struct g *me, const siginfo_t *si)
{
	int sig = si->si_signo;
	long r;

	if (si->si_code == SI_TKILL) {
		r = m_tgkill(me->m->tid, sig);
	} else {
		siginfo_t copy = *si;
		r = SYS4(SYS_rt_tgsigqueueinfo, sys_getpid(), me->m->tid, sig,
			 &copy);
	}
	if (r == 0 && (me->sigmask & sigbit(sig)))
		me->sigself |= sigbit(sig);
	return (int)-r;
}

/* A signal gp does not block whose disposition leaves no handler to
 * run: ignored (dropped, 0), or a default action, taken here (the
 * process ends or stops as if the kernel had given it any thread). -1:
 * gp is to take it. */
static int disposition_acts(struct g *gp, int sig)
{
	if (gp->sigmask & sigbit(sig))
		return -1;
	uintptr_t h = disposition(sig);
	if (h == (uintptr_t)SIG_IGN ||
	    (h == (uintptr_t)SIG_DFL && sig_ignored_by_default(sig))) {
		sigkeep_drop(gp, sig);
		return 0;
	}
	if (h == (uintptr_t)SIG_DFL)
		return (int)-m_tgkill((pid_t)SYS0(SYS_gettid), sig);
	return -1;
}

/* sig for gp, another goroutine (or gp itself, taking what sysmon gives
 * it), with si kept for it first: NULL where the instances it takes are
 * kept for it already. */
static int send_other(struct g *gp, int sig, const siginfo_t *si)
{
	int done = disposition_acts(gp, sig);
	if (done >= 0)
		return done;
	if (si)
		sigkeep_put(gp, si);
	atomic_fetch_or(&gp->sigpending, sigbit(sig));
	kick(gp, sig);
	return 0;
}

int sigthread_send(struct g *gp, int sig)
{
	siginfo_t si;

	sigthread_siginfo(&si, sig, SI_TKILL);
	return to_self(gp) ? send_self(gp, &si) : send_other(gp, sig, &si);
}

int sigthread_queue(struct g *gp, const siginfo_t *si)
{
	return to_self(gp) ? send_self(gp, si)
			   : send_other(gp, si->si_signo, si);
}

/* sig, the process's, which gp no longer holds: its instances and its
 * bit back to the process, for sysmon to give to another goroutine. */
static void to_process(struct g *gp, int sig)
{
	sigkeep_return(gp, sig);
	sigroute_note(sig);
}

/* The process's signals gp was given and has not taken go back. */
static void give_back(struct g *gp)
{
	uint64_t back = atomic_load(&gp->sigprocess) &
			atomic_load(&gp->sigpending);

	for (; back; back &= back - 1) {
		int sig = __builtin_ctzll(back) + 1;
		if (!(atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		      sigbit(sig)))
			continue;
		atomic_fetch_and(&gp->sigprocess, ~sigbit(sig));
		to_process(gp, sig);
	}
}

/* gp was given a process signal: if it has begun to end meanwhile (or
 * has ended: a G on the free list), the signal goes back. sigthread_exit
 * and sigthread_reset store first, then look; the giver sets the bits,
 * then looks: one of the two sees the other. */
static void given(struct g *gp)
{
	atomic_thread_fence(memory_order_seq_cst);
	uint32_t st = atomic_load(&gp->status) & ~G_SCAN;
	if (atomic_load(&gp->sigexiting) || st == G_IDLE || st == G_DEAD)
		give_back(gp);
}

/*
 * A process signal given to a goroutine is the goroutine's under its
 * jlock, as its end (sigthread_exit) and its next life (sigthread_reset)
 * are: it is given only to the life that was chosen, before that one
 * ends, and whatever that life holds at its end goes back.
 */
void sigthread_pass(struct g *gp, uint64_t goid, int sig)
{
	if (disposition_acts(gp, sig) >= 0)
		return;
	/* To itself (it unblocked the signal), maybe from a handler over
	 * code that holds its jlock: it is alive, and its end cannot come
	 * between. */
	bool self = gp == getg();
	if (!self)
		spin_lock(&gp->jlock);
	uint32_t st = atomic_load(&gp->status) & ~G_SCAN;
	bool alive = self || (gp->goid == goid &&
			      !atomic_load(&gp->sigexiting) &&
			      st != G_IDLE && st != G_DEAD);
	if (alive) {
		atomic_fetch_or(&gp->sigprocess, sigbit(sig));
		atomic_fetch_or(&gp->sigpending, sigbit(sig));
	}
	if (!self)
		spin_unlock(&gp->jlock);
	if (alive)
		kick(gp, sig);
	else
		to_process(gp, sig);
}

void sigthread_keep_given(struct g *gp, int sig)
{
	keep_marked(gp, sig,
		    __atomic_load_n(&gp->goid, __ATOMIC_RELAXED) | LIFE_PROCESS);
}

void sigthread_taken(struct g *gp, int sig)
{
	if (atomic_load_explicit(&gp->sigprocess, memory_order_relaxed) &
	    sigbit(sig))
		atomic_fetch_and(&gp->sigprocess, ~sigbit(sig));
}

void sigthread_reset(struct g *gp)
{
	/* Nothing left from the last life (the common case): no lock. A
	 * giver reads the status first and gives nothing to a G still idle;
	 * once newproc has stored it runnable (a release, after this store
	 * and the new goid), the giver's goid no longer matches. */
	if (atomic_load_explicit(&gp->sigpending, memory_order_relaxed) == 0 &&
	    atomic_load_explicit(&gp->sigprocess, memory_order_relaxed) == 0 &&
	    __atomic_load_n(&gp->kept, __ATOMIC_RELAXED) == NULL) {
		atomic_store_explicit(&gp->sigexiting, false,
				      memory_order_release);
		return;
	}
	/* What the process gave its last life and nobody took back goes
	 * back now. sigthread_pass, under the same lock, gives nothing to
	 * it until newproc has made it runnable. */
	spin_lock(&gp->jlock);
	uint64_t had = atomic_exchange(&gp->sigpending, 0);
	uint64_t back = had & atomic_exchange(&gp->sigprocess, 0);
	atomic_store(&gp->sigexiting, false);
	spin_unlock(&gp->jlock);
	for (; back; back &= back - 1)
		to_process(gp, __builtin_ctzll(back) + 1);
	sigkeep_drop(gp, 0);
}

void sigthread_exit(struct g *gp)
{
	spin_lock(&gp->jlock);
	atomic_store(&gp->sigexiting, true);
	spin_unlock(&gp->jlock);
	give_back(gp);
	sigkeep_drop(gp, 0); /* what was sent to it dies with it */
}

void sigthread_recheck(void)
{
	if (!atomic_exchange(&redirected, false))
		return;
	for (struct g *gp = __atomic_load_n(&sched.allgs, __ATOMIC_ACQUIRE);
	     gp; gp = gp->alllink) {
		if (gp->is_g0)
			continue;
		given(gp); /* kept for one that has ended since */
		uint64_t ready = atomic_load(&gp->sigpending) & ~gp->sigmask;
		for (; ready; ready &= ready - 1)
			kick(gp, __builtin_ctzll(ready) + 1);
		/* A raw cancellable call the signal missed (it came just
		 * before the call went into the kernel): again, until the
		 * call ends. */
		if (atomic_load(&gp->cancel_syscall) && g_cancel_due(gp)) {
			if (atomic_load(&gp->status) == G_SYSCALL) {
				atomic_fetch_or(&gp->sigpending,
						sigbit(SIGCANCEL));
				kick(gp, SIGCANCEL);
			}
			atomic_store(&redirected, true);
		}
	}
}

void sigthread_deliver(struct g *gp)
{
	/* Not SIGCANCEL: this is runtime code (see kick). */
	uint64_t ready = atomic_load(&gp->sigpending) & ~gp->sigmask &
			 ~sigbit(SIGCANCEL);
	bool restart = true;

	while (ready) {
		int sig = __builtin_ctzll(ready) + 1;
		unsigned long flags = 0;
		ready &= ready - 1;
		if (!(atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		      sigbit(sig)))
			continue;
		if (disposition_flags(sig, &flags) > (uintptr_t)SIG_IGN &&
		    !(flags & SA_RESTART))
			restart = false;
		m_tgkill_for(gp->m, gp, sig, life_of(gp, sig));
	}
	if (!restart)
		gp->intr_restart = false;
}

uint64_t sigthread_kept(struct g *gp)
{
	return atomic_load(&gp->sigpending);
}

uint64_t g_sigmask(struct g *gp)
{
	return gp->sigmask;
}

void sigthread_setmask(struct g *gp, uint64_t prev, uint64_t now)
{
	uint64_t thread = now & ~preempt_unblockable();

	/* The records first: a signal the new mask lets through, if pending,
	 * runs its handler as the system call returns, and the handler's
	 * sigreturn puts the M's record on the thread (sigroute.c).
	 * Recorded after, the old mask came back on the thread behind a
	 * record that said the new one. */
	sigroute_mask_change(prev, now, true, true);
	gp->sigmask = now;
	gp->m->sigmask = thread;
	if (chaos())
		chaos_delay();
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &thread, NULL, sizeof thread);
	atomic_store_explicit(&gp->m->sigmask_taken, thread,
			      memory_order_release);
	sigroute_unblocked(gp, now);
	atomic_thread_fence(memory_order_seq_cst); /* as sigsuspend */
	if (atomic_load(&gp->sigpending) & ~now)
		sigthread_deliver(gp);
	if (chaos())
		sigmask_check(gp, "sigprocmask, after");
}

uint64_t sigthread_mask_temporary(struct g *gp, uint64_t tmp)
{
	uint64_t keep = gp->sigmask;

	gp->sigmask = tmp & ~(SIG_GLIBC_INTERNAL | SIG_KERNEL_UNBLOCKABLE);
	atomic_store(&gp->sigmask_temp, true);
	return keep;
}

void sigthread_mask_restore(struct g *gp, uint64_t keep)
{
	gp->sigmask = keep;
	atomic_store(&gp->sigmask_temp, false);
	/* On the thread and in the M's record: the goroutine may have come
	 * to this M in the call (entersyscall can yield), and the M then
	 * took the temporary one. */
	m_set_sigmask(gp->m, keep);
	/* Kept while the temporary mask blocked them: raised now, for the
	 * kernel to deliver once the thread's own mask lets it (as it
	 * would have held them pending). */
	if (atomic_load(&gp->sigpending) & ~keep)
		sigthread_deliver(gp);
}

void sigthread_sigwait_begin(struct g *gp, uint64_t set)
{
	atomic_store(&gp->sigwait_set, set);
}

void sigthread_sigwait_end(struct g *gp, uint64_t set)
{
	atomic_store(&gp->sigwait_set, 0);
	if (atomic_load(&gp->m->directed) & set)
		m_directed_drain(gp->m, set);
}

bool sigthread_deliver_temporary(struct g *gp)
{
	/* A sender adds to sigpending, then reads the mask: one of the two
	 * sees the other. */
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t tmp = gp->sigmask;
	if (!(atomic_load(&gp->sigpending) & ~tmp & ~sigbit(SIGCANCEL)))
		return false;
	/* The handlers run on this thread, under tmp (with what goshim
	 * needs unblocked), and their sigreturn gives tmp back; the M's
	 * record follows the thread both ways, or the next goroutine with
	 * tmp for its mask would find the call skipped and this one's mask
	 * on the thread. A handler that parked has gp on another M now. */
	uint64_t back = gp->m->sigmask;
	m_set_sigmask(gp->m, tmp);
	sigthread_deliver(gp);
	m_set_sigmask(gp->m, back);
	return true;
}

bool sigthread_deliver_under(struct g *gp, uint64_t tmp)
{
	uint64_t keep = sigthread_mask_temporary(gp, tmp);
	bool hit = sigthread_deliver_temporary(gp);
	gp->sigmask = keep;
	atomic_store(&gp->sigmask_temp, false);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&gp->sigpending) & ~keep)
		sigthread_deliver(gp);
	return hit;
}

void sigmask_check_m(struct m *mp, const char *where)
{
	uint64_t thread = thread_sigmask();
	char buf[224];

	if (thread == mp->sigmask)
		return;
	snprint(buf, sizeof buf,
		"sigmask check, %s: the thread's mask is not the M's record "
		"(thread %#llx, M%lld %#llx)",
		where, (unsigned long long)thread, (long long)mp->id,
		(unsigned long long)mp->sigmask);
	runtime_throw(buf);
}

void sigmask_check(struct g *gp, const char *where)
{
	struct m *mp = gp->m;
	uint64_t thread = thread_sigmask();
	const char *what = NULL;
	char buf[224];

	if (gp->sigmask & SIG_KERNEL_UNBLOCKABLE)
		what = "the goroutine's mask has SIGKILL or SIGSTOP";
	else if (thread != mp->sigmask)
		what = "the thread's mask is not the M's record";
	/* A handler runs under the kernel's mask for it, SIGURG included
	 * where its sa_mask has it. */
	else if (!gp->in_sighandler &&
		 thread != (gp->sigmask & ~preempt_unblockable()))
		what = "the thread's mask is not the goroutine's";
	if (what == NULL)
		return;
	snprint(buf, sizeof buf,
		"sigmask check, %s: %s (thread %#llx, M%lld %#llx, "
		"goroutine %lld %#llx)",
		where, what, (unsigned long long)thread, (long long)mp->id,
		(unsigned long long)mp->sigmask, (long long)gp->goid,
		(unsigned long long)gp->sigmask);
	runtime_throw(buf);
}

/*
 * The kernel ties a pending signal to the thread it was sent to, and a
 * goroutine that comes back on another M would no longer see one it sent
 * itself while it blocked it: sigpending would not show it, the unblock
 * would not deliver it, and it would go to the old M's next goroutine
 * that lets it through. So it is taken off the thread as the goroutine
 * leaves the M, and kept in the G like one another thread sent, with its
 * siginfo. Only a signal the process sent (SI_TKILL, SI_QUEUE) is: another
 * is put back, pending for the process, where it came from.
 */
void sigthread_self_drain(struct g *gp)
{
	uint64_t set = gp->sigself & gp->sigmask;

	gp->sigself = 0;
	if (set == 0)
		return;
	atomic_fetch_and(&gp->m->directed, ~set);
	thread_pending_take(set, gp);
}

int sigthread_take(struct g *gp, uint64_t set, siginfo_t *si)
{
	uint64_t have = atomic_load(&gp->sigpending) & set;

	while (have) {
		int sig = __builtin_ctzll(have) + 1;
		have &= have - 1;
		if (!(atomic_fetch_and(&gp->sigpending, ~sigbit(sig)) &
		      sigbit(sig)))
			continue;
		sigthread_siginfo(si, sig, SI_TKILL);
		if (sigthread_kept_siginfo(gp, sig, si)) {
			sigthread_taken(gp, sig);
			return sig;
		}
	}
	return 0;
}
