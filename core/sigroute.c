/*
 * sigroute.c: the program's signal handlers, and process signals that
 * reach no goroutine.
 *
 * The kernel gives a process-directed signal to some thread that does not
 * block it. Under goshim the threads are Ms, and a goroutine that waits
 * for a signal (alarm() then a read; sem_wait until a handler posts) is
 * parked, on no thread at all. So, as Go does, the runtime stands between
 * the kernel and the program's handlers: sigaction records what the
 * program asked for and installs the program's mask and flags with
 * goshim's handler. On a goroutine that handler runs the program's at
 * once (the kernel chose this thread: the goroutine does not block the
 * signal). On a runtime context (an idle M, an M between goroutines) it
 * only notes the signal and wakes sysmon, which takes no lock a signal
 * could interrupt: sysmon gives it to a goroutine that does not block it,
 * preferring one whose wait the signal interrupts (sigthread_send), or keeps
 * it for the first goroutine that unblocks it. Its siginfo goes with it
 * (sigkeep.c).
 *
 * Idle Ms block exactly the signals every goroutine blocks (the AND of
 * their masks, kept per distinct mask), so the kernel still keeps a
 * signal pending when the whole program blocks it (sigwait threads), and
 * a default action (SIGTERM's) still ends an idle process.
 *
 * SIGURG is preempt.c's. Default and ignored dispositions go to the
 * kernel as they are.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include "chaos.h"
#include "preempt.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "sigkeep.h"
#include "sys.h"

#define NSIG_KERNEL 64


/* ---- the program's dispositions ----------------------------------------- */

/* Read by the handler: a seqlock; writers hold lock and block every
 * signal meanwhile, so a handler never waits for its own thread. */
static struct {
	struct spinlock lock;
	struct seqcount seq;
	_Atomic uint64_t known; /* entries read from the kernel or set */
	struct sigaction act[NSIG_KERNEL + 1];
} prog;

static void prog_read(int sig, struct sigaction *out)
{
	seq_read(&prog.seq, out, &prog.act[sig], sizeof *out);
}

/* Under prog.lock, signals blocked. */
static void prog_store(int sig, const struct sigaction *act)
{
	seq_write(&prog.seq, &prog.act[sig], act, sizeof *act);
	atomic_fetch_or(&prog.known, sigbit(sig));
}

static bool is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/* Signals the program has a handler for, now. */
static _Atomic uint64_t handled;

bool sigroute_handlers(void)
{
	return atomic_load(&handled) != 0;
}

static void sig_trampoline(int sig, siginfo_t *si, void *uc);

int sigroute_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old)
{
	uint64_t all = ~(uint64_t)0, saved;
	struct sigaction cur, kact;
	int err = 0;

	/* The kernel's answer, not a crash; glibc's own two are refused
	 * as glibc refuses them. */
	if (sig < 1 || sig > NSIG_KERNEL || (sigbit(sig) & SIG_GLIBC_INTERNAL))
		return EINVAL;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, 8);
	spin_lock(&prog.lock);
	if (!(atomic_load(&prog.known) & sigbit(sig))) {
		/* Set before goshim was asked (inherited, before start-up):
		 * the kernel's is the program's. */
		if (real.sigaction(sig, NULL, &cur) == 0) {
			prog_store(sig, &cur);
			if (is_handler(&cur))
				atomic_fetch_or(&handled, sigbit(sig));
		}
	}
	cur = prog.act[sig];
	if (act) {
		kact = *act;
		if (is_handler(act)) {
			kact.sa_sigaction = sig_trampoline;
			kact.sa_flags = (act->sa_flags | SA_SIGINFO) &
					~SA_RESETHAND;
			sigfillset(&kact.sa_mask); /* see sig_trampoline */
		}
		if (real.sigaction(sig, &kact, NULL) != 0) {
			err = errno;
		} else {
			/* Reported back as the kernel would: glibc's
			 * restorer. */
			real.sigaction(sig, NULL, &kact);
			struct sigaction next = *act;
#ifdef SA_RESTORER
			next.sa_flags |= SA_RESTORER;
			next.sa_restorer = kact.sa_restorer;
#endif
			prog_store(sig, &next);
			if (is_handler(act))
				atomic_fetch_or(&handled, sigbit(sig));
			else
				atomic_fetch_and(&handled, ~sigbit(sig));
		}
	}
	spin_unlock(&prog.lock);
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, 8);
	if (err == 0 && old)
		*old = cur;
	return err;
}

/* ---- adopting what the program set natively ---------------------------- */

static _Atomic bool adopted;

bool sigroute_adopted(void)
{
	return atomic_load_explicit(&adopted, memory_order_acquire);
}

/* glibc's own two are glibc's (SIGCANCEL: sigroute_adopt_sigcancel), and
 * SIGURG is preempt.c's once preemption is on. */
static bool adoptable(int sig)
{
	return sig >= 1 && sig <= NSIG_KERNEL && sig != SIGKILL &&
	       sig != SIGSTOP && !(sigbit(sig) & SIG_GLIBC_INTERNAL) &&
	       !(sig == SIGURG && preempt_on());
}

/* Under prog.lock, signals blocked: the kernel's disposition becomes the
 * program's record, and a handler goes behind goshim's. */
static void adopt_locked(int sig)
{
	struct sigaction cur, kact;

	if (real.sigaction(sig, NULL, &cur) != 0 ||
	    ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sig_trampoline))
		return;
	prog_store(sig, &cur);
	if (!is_handler(&cur)) {
		atomic_fetch_and(&handled, ~sigbit(sig));
		return;
	}
	kact = cur;
	kact.sa_sigaction = sig_trampoline;
	kact.sa_flags = (cur.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
	sigfillset(&kact.sa_mask); /* see sig_trampoline */
	if (real.sigaction(sig, &kact, NULL) != 0)
		runtime_throw("sigroute: cannot install goshim's handler in "
			      "front of the program's");
	atomic_fetch_or(&handled, sigbit(sig));
}

void sigroute_adopt(void)
{
	uint64_t all = ~(uint64_t)0, saved;

	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, 8);
	spin_lock(&prog.lock);
	atomic_store_explicit(&adopted, true, memory_order_release);
	for (int sig = 1; sig <= NSIG_KERNEL; sig++)
		if (adoptable(sig))
			adopt_locked(sig);
	spin_unlock(&prog.lock);
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, 8);
}

void sigroute_adopt_one(int sig)
{
	uint64_t all = ~(uint64_t)0, saved;

	if (!adoptable(sig))
		return;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, 8);
	spin_lock(&prog.lock);
	adopt_locked(sig);
	spin_unlock(&prog.lock);
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, 8);
}

/*
 * glibc installs its SIGCANCEL handler itself (not through sigaction) the
 * first time pthread_cancel runs, and aims the signal at a fake tid when
 * the target is a goroutine (gcancel sends it instead). From then on
 * goshim's handler stands in front of glibc's as it does for the
 * program's: glibc's runs only on the goroutine it is for, and only where
 * it may unwind (user code, or a system call, left first). Without
 * SA_RESTART: a raw cancellable call (SYS_CANCEL) must see EINTR.
 */
void sigroute_adopt_sigcancel(void)
{
	static _Atomic bool adopted;
	struct {
		uintptr_t handler;
		unsigned long flags;
		uintptr_t restorer;
		uint64_t mask;
	} k;
	uint64_t all = ~(uint64_t)0, saved;

	if (atomic_load_explicit(&adopted, memory_order_acquire))
		return;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, 8);
	spin_lock(&prog.lock);
	if (!atomic_load(&adopted) &&
	    SYS4(SYS_rt_sigaction, SIGCANCEL, NULL, &k, 8) == 0 &&
	    k.handler > (uintptr_t)SIG_IGN &&
	    k.handler != (uintptr_t)sig_trampoline) {
		struct sigaction glibc = { .sa_flags = (int)k.flags };
		glibc.sa_sigaction = (void (*)(int, siginfo_t *, void *))
			k.handler;
		memcpy(&glibc.sa_mask, &k.mask, sizeof k.mask);
#ifdef SA_RESTORER
		glibc.sa_restorer = (void (*)(void))k.restorer;
#endif
		prog_store(SIGCANCEL, &glibc);
		k.handler = (uintptr_t)sig_trampoline;
		k.flags = (k.flags | SA_SIGINFO) & ~(unsigned long)SA_RESTART;
		k.mask = ~(uint64_t)0; /* see sig_trampoline */
		if (SYS4(SYS_rt_sigaction, SIGCANCEL, &k, NULL, 8) != 0)
			runtime_throw("sigroute: cannot stand in front of "
				      "glibc's SIGCANCEL handler");
		atomic_store_explicit(&adopted, true, memory_order_release);
	}
	spin_unlock(&prog.lock);
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, 8);
}

/* SA_RESETHAND, which the kernel cannot do for us: the next one is the
 * default. */
static void reset_to_default(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigroute_sigaction(sig, &dfl, NULL);
}

/* The mask the kernel would give the program's handler where mask was
 * the thread's: its sa_mask added, and the signal unless SA_NODEFER. */
static uint64_t handler_mask(uint64_t mask, int sig, const struct sigaction *a)
{
	uint64_t sa;

	memcpy(&sa, &a->sa_mask, sizeof sa);
	mask = (mask | sa) & ~(SIG_GLIBC_INTERNAL | SIG_KERNEL_UNBLOCKABLE);
	if (!(a->sa_flags & SA_NODEFER))
		mask |= sigbit(sig);
	return mask;
}

/* Run the program's handler a, read for sig, here, on the goroutine (or
 * thread) the kernel chose; its mask is in place. */
static void run_program_handler(int sig, siginfo_t *si, void *uc,
				struct sigaction *a)
{
	if (!is_handler(a))
		return; /* changed meanwhile: as if delivered just after */
	if (a->sa_flags & SA_RESETHAND)
		reset_to_default(sig);
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, si, uc);
	else
		a->sa_handler(sig);
}

/* ---- routing ------------------------------------------------------------ */

static _Atomic uint64_t routed;	/* noted by a runtime context */
static _Atomic uint64_t unclaimed; /* no goroutine took it yet */

/* A fault raised by the code that runs here, not a signal to route: its
 * handler runs now, wherever that is (re-running the instruction first
 * would only fault again). */
static bool synchronous(int sig, const siginfo_t *si)
{
	return si->si_code > 0 &&
	       (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
		sig == SIGILL || sig == SIGTRAP || sig == SIGSYS);
}

void sigroute_note(int sig)
{
	atomic_fetch_or(&routed, sigbit(sig));
	sysmon_wake();
}

/*
 * The kernel enters sig_trampoline with every signal blocked (its
 * sa_mask is full), so that no second handler can run before the
 * records say what the thread's mask is; the program's handler then
 * runs under the mask the kernel would have made for it, set here.
 *
 * On a goroutine that is the goroutine's own mask, the handler's sa_mask
 * and the signal added, and the handler may park (sigsuspend, a trip):
 * the goroutine and the M that runs it keep that mask while it runs, so
 * the next goroutine on the old M gets its own back, and signals the
 * handler blocks stay kept in the G. sigreturn installs uc_sigmask on
 * whichever thread the handler ends on, and it is made the M's record as
 * the handler was entered: what the thread had then (the goroutine's
 * mask, or what sigsuspend's goroutine had before the call, as the
 * kernel gives back), not what the kernel saved: a signal that came as
 * the M switched to the goroutine found the last one's there, which the
 * goroutine would then keep, and the count of goroutines by mask (idle Ms
 * block what all of them block) would go wrong for good. Records first, then the thread, as in sigmask.c: a
 * signal the handler's mask lets through, pending, runs its own handler
 * as the mask is set, and reads them.
 */
static void run_goroutine_handler(struct g *gp, int sig, siginfo_t *si,
				  ucontext_t *uc, bool in_syscall)
{
	struct sigaction a;
	uint64_t own = gp->sigmask, back = gp->m->sigmask, during;

	prog_read(sig, &a);
	during = handler_mask(own, sig, &a);
	memcpy(&uc->uc_sigmask, &back, sizeof back);
	gp->sigmask = during & ~SIG_GLIBC_INTERNAL;
	gp->m->sigmask = during;
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &during, NULL, 8);
	atomic_store(&gp->m->sigmask_taken, during);
	/* In a system call the runtime made: the handler may call into it
	 * (park, take a P), so it runs as if the call had returned, and the
	 * call goes back to the kernel after it. exitsyscall may already
	 * park it and resume it on another M. */
	if (in_syscall)
		exitsyscall();
	uintptr_t locked = preempt_handler_enter(gp, uc);
	sigthread_taken(gp, sig);
	gp->in_sighandler++;
	gp->handlers_ran++;
	/* glibc's handler ignores a request already marked (gcancel marks
	 * a parked goroutine's, which may have left its wait unseen): an
	 * asynchronous one acts here, as glibc's handler would have. */
	if (sig == SIGCANCEL && g_cancel_due(gp) && g_cancel_async(gp))
		real.pthread_testcancel();
	run_program_handler(sig, si, uc, &a);
	if (chaos())
		sigmask_check(gp, "a handler returns");
	gp->in_sighandler--;
	preempt_handler_done(gp, locked);
	gp->sigmask = own;
	/* Kept while the handler blocked them: raised on this thread, whose
	 * mask holds them until sigreturn, then delivered here. (A sender
	 * adds to sigpending, then reads the mask: one sees the other.) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&gp->sigpending) & ~gp->sigmask)
		sigthread_deliver(gp);
	if (in_syscall)
		entersyscall();
	gp->m->sigmask = back;
	m_taken_until_sigreturn(gp->m, back);
}

/*
 * The goroutine's M says user code or a system call, but the signal met
 * it in goshim's own code outside the kernel: a runtime entry's first
 * steps or a system call's last ones (mcall, entersyscall, exitsyscall,
 * before the M's state says so), which hold the M, or its P, in a local.
 * A handler run there may park the goroutine (exitsyscall's slow path
 * for a call, any wait for the program's handler) and end it on another
 * M; the interrupted code would then go on with the first M's state, on
 * the wrong thread (two Ms would run the goroutine's P and records). So
 * the signal is kept for the goroutine's next step out, as for runtime
 * code, and sysmon sends it again. Goshim's own system calls take it at
 * once: that is where it raises a goroutine's kept signals (tgkill,
 * sigprocmask), and what follows them reads the M afresh. A fault is the
 * instruction's own: kept, it would only fault again. So is glibc's
 * asynchronous cancel (sigthread_cancel_unsafe marks it).
 */
static bool in_runtime_step(struct g *gp, int sig, siginfo_t *si,
			    void *uc)
{
	if (synchronous(sig, si) || (sig == SIGCANCEL && g_cancel_async(gp)))
		return false;
	return goshim_text(arch_uc_pc(uc)) && !arch_uc_at_syscall(uc);
}

static void sig_trampoline(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct g *gp = getg();
	bool here;

	if (sigthread_misdirected(sig, si, &here)) {
		/* handed back to the goroutine it was sent for */
	} else if (gp && gp->is_g0 && !synchronous(sig, si)) {
		/* SIGCANCEL is for one thread, never routed to another. */
		if (sig != SIGCANCEL) {
			sigkeep_put(NULL, si);
			sigroute_note(sig);
		}
	} else if (gp && !gp->is_g0 && gp->m) {
		uint32_t ps = atomic_load(&gp->m->pstate);
		if (in_runtime_step(gp, sig, si, uc))
			ps = MP_RUNTIME;
		switch (ps) {
		case MP_USER:
		/* User code still: sysmon looks at whether the M is in a
		 * claim (retake_blocked_m), and a claim the handler makes
		 * waits for it to decide. Kept for sysmon to send again,
		 * a raise would return before its handler ran. */
		case MP_STEALING:
		case MP_LOST:
		case MP_SYSCALL:
			if (!here)
				sigthread_kept_first(gp, sig, si);
			else if (!sigthread_kept_siginfo(gp, sig, si))
				break;
			if (sig == SIGCANCEL &&
			    sigthread_cancel_unsafe(gp, arch_uc_pc(uc)))
				break;
			run_goroutine_handler(gp, sig, si, uc,
					      ps == MP_SYSCALL);
			break;
		default:
			/* In the runtime, maybe halfway through a switch
			 * (this stack may be g0's): the goroutine gets it at
			 * its next step out, with this siginfo (one goshim
			 * sent it has its own kept already). */
			if (here) {
				sigthread_keep(gp, sig);
				break;
			}
			sigkeep_put(gp, si);
			if (si->si_code == SI_TKILL)
				sigthread_keep(gp, sig); /* sent to this thread */
			else
				sigthread_keep_given(gp, sig);
			break;
		}
	} else {
		/* No goroutine: the thread's mask is the kernel's. */
		struct sigaction a;
		uint64_t was, mask;
		prog_read(sig, &a);
		memcpy(&was, &((ucontext_t *)uc)->uc_sigmask, sizeof was);
		mask = handler_mask(was, sig, &a);
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, 8);
		run_program_handler(sig, si, uc, &a);
	}
	errno = saved;
}

/* A goroutine for sig. The kernel gives a process-directed signal to the
 * main thread whenever that does not block it (complete_signal), and
 * programs come to rely on it (a main thread that waits in sem_wait for a
 * timer's handler, beside workers that sleep): so the main goroutine, if
 * it does not block sig. Else one that takes it at once if there is one:
 * parked in a wait the signal interrupts, else on an M (running, or in a
 * system call), else any; NULL if every one blocks it. allgs only grows
 * at its head, so it is walked without its lock. *goid: the life of the
 * G seen (a G is reused: sigthread_pass gives it only to that one). */
static struct g *route_target(int sig, uint64_t *goid)
{
	struct pick {
		struct g *gp;
		uint64_t id;
	} on_m = { 0 }, any = { 0 }, intr = { 0 }, *best;

	for (struct g *gp = __atomic_load_n(&sched.allgs, __ATOMIC_ACQUIRE);
	     gp; gp = gp->alllink) {
		struct pick seen = {
			gp, __atomic_load_n(&gp->goid, __ATOMIC_RELAXED)
		};
		uint32_t st = atomic_load(&gp->status);
		if (gp->is_g0 || st == G_IDLE || st == G_DEAD ||
		    (gp->sigmask & sigbit(sig)) ||
		    atomic_load(&gp->sigexiting))
			continue;
		if (gp->is_main && !gp->exited) {
			*goid = seen.id;
			return gp;
		}
		if (intr.gp == NULL && st == G_WAITING && gp->intr_w)
			intr = seen;
		if (on_m.gp == NULL && (st == G_RUNNING || st == G_SYSCALL))
			on_m = seen;
		if (any.gp == NULL)
			any = seen;
	}
	best = intr.gp ? &intr : on_m.gp ? &on_m : &any;
	*goid = best->id;
	return best->gp;
}

void sigroute_run(void)
{
	uint64_t sigs = atomic_exchange(&routed, 0) |
			atomic_exchange(&unclaimed, 0);

	while (sigs) {
		int sig = __builtin_ctzll(sigs) + 1;
		sigs &= sigs - 1;
		/* Taken already by a goroutine the kernel gave a later
		 * instance (sigthread_kept_first). */
		if (sigkeep_queues(sig) && !sigkeep_holds(NULL, sig) &&
		    !sigkeep_bare_ok(sig))
			continue;
		uint64_t goid;
		struct g *gp = route_target(sig, &goid);
		if (gp == NULL) {
			atomic_fetch_or(&unclaimed, sigbit(sig));
			continue;
		}
		sigkeep_give(gp, sig);
		sigthread_pass(gp, goid, sig);
	}
}

void sigroute_unblocked(struct g *gp, uint64_t mask)
{
	uint64_t mine = atomic_load(&unclaimed) & ~mask;

	while (mine) {
		int sig = __builtin_ctzll(mine) + 1;
		mine &= mine - 1;
		if (atomic_fetch_and(&unclaimed, ~sigbit(sig)) & sigbit(sig)) {
			sigkeep_give(gp, sig);
			sigthread_pass(gp, gp->goid, sig);
		}
	}
}

/* ---- what idle Ms block ------------------------------------------------- */

/* Distinct goroutine masks and how many live goroutines have each. Almost
 * every program has one or two. Past the table, idle Ms block everything
 * (as before goshim knew better).
 *
 * A thread is made, and ends, with a mask whose class it is counted in
 * (its creator's, its own): the class exists and cannot be freed meanwhile,
 * so the count moves by a compare-and-swap with no lock, and no cache line
 * of the table is written but the class's count. The lock is for what
 * changes the idle mask: making a class, and a class's last member
 * leaving. A count word holds the number of members in its low 32 bits and
 * above them the slot's generation, bumped when the slot is given to
 * another mask, so a swap that read the slot before then fails. A slot
 * with no member is never counted up again without a new generation:
 * only the lock's holder gives it out. */
#define MASK_CLASSES 16
#define CLASS_N(c) ((uint32_t)(c))
#define CLASS_GEN1 ((uint64_t)1 << 32)
static struct {
	struct spinlock lock;
	bool overflow;
	_Atomic uint64_t mask[MASK_CLASSES];
	_Atomic uint64_t count[MASK_CLASSES];
} classes;
static _Atomic uint64_t idle_mask =
	~(SIG_GLIBC_INTERNAL | SIG_KERNEL_UNBLOCKABLE);

/* Under the lock. True if idle Ms must block more than they do. */
static bool idle_mask_update(void)
{
	uint64_t and = ~(uint64_t)0;

	for (int i = 0; i < MASK_CLASSES; i++)
		if (CLASS_N(atomic_load_explicit(&classes.count[i],
						 memory_order_acquire)) > 0)
			and &= atomic_load_explicit(&classes.mask[i],
						    memory_order_relaxed);
	if (classes.overflow)
		and = ~(uint64_t)0;
	and &= ~(SIG_GLIBC_INTERNAL | SIG_KERNEL_UNBLOCKABLE);
	uint64_t old = atomic_exchange(&idle_mask, and);
	return (and & ~old) != 0;
}

/* Move mask's class by d (+1, -1) if it has members: false if it has
 * none (not in the table). *left: the members after. The count is read
 * before the mask: a slot given to another mask since has a new
 * generation, and the swap fails. */
static bool class_move(uint64_t mask, int d, uint32_t *left)
{
	for (int i = 0; i < MASK_CLASSES; i++) {
		uint64_t c = atomic_load_explicit(&classes.count[i],
						  memory_order_acquire);
		while (CLASS_N(c) > 0 &&
		       atomic_load_explicit(&classes.mask[i],
					    memory_order_relaxed) == mask) {
			if (atomic_compare_exchange_weak_explicit(
				    &classes.count[i], &c, c + (uint64_t)d,
				    memory_order_acq_rel,
				    memory_order_acquire)) {
				*left = CLASS_N(c) + (uint32_t)d;
				return true;
			}
		}
	}
	return false;
}

/* Under the lock: one more goroutine with mask, in a class made for it if
 * none has it. True if idle Ms must block more. */
static bool class_join_locked(uint64_t mask)
{
	uint32_t left;

	if (class_move(mask, 1, &left))
		return false;
	for (int i = 0; i < MASK_CLASSES; i++) {
		uint64_t c = atomic_load_explicit(&classes.count[i],
						  memory_order_relaxed);
		if (CLASS_N(c) == 0) {
			atomic_store_explicit(&classes.mask[i], mask,
					      memory_order_relaxed);
			atomic_store_explicit(
				&classes.count[i],
				(c & ~(CLASS_GEN1 - 1)) + CLASS_GEN1 + 1,
				memory_order_release);
			return idle_mask_update();
		}
	}
	classes.overflow = true;
	return idle_mask_update();
}

void sigroute_mask_change(uint64_t from, uint64_t to, bool was, bool is)
{
	bool more = false;
	uint32_t left;

	if (was && is && from == to)
		return;
	/* Joined first: meanwhile idle Ms block what both classes block,
	 * never less than either. */
	if (is && !class_move(to, 1, &left)) {
		spin_lock(&classes.lock);
		more = class_join_locked(to);
		spin_unlock(&classes.lock);
	}
	/* Not in the table: counted when it had overflowed. */
	if (was && class_move(from, -1, &left) && left == 0) {
		spin_lock(&classes.lock);
		more |= idle_mask_update();
		spin_unlock(&classes.lock);
	}
	/* Idle Ms sleep with the old mask: a signal every goroutine now
	 * blocks must not reach them (its default action would end the
	 * process). sigroute_before_send waits for them. */
	if (more && runtime_running)
		m_kick_idle();
}

/*
 * The program sends its own process a signal that every goroutine blocks,
 * with no handler, and a default action that ends or stops the process.
 * Natively the kernel holds it pending until a thread unblocks it or
 * takes it in sigwait. Under goshim the idle Ms block it too, but an M
 * may not have taken that mask yet: an idle M takes it when the kick of
 * sigroute_mask_change wakes it, and an M that is looking for work, or
 * that still holds the mask of a goroutine that has just ended, takes it
 * when it sleeps or runs its next goroutine. A sender may know that the
 * last goroutine to let the signal through is gone (it joined it), and
 * send at once; the kernel could then give the signal to such an M, and
 * end the process. So the sender waits here until no other M's thread lets
 * the signal through. The caller's own goroutine blocks it, and a
 * goroutine in a wait with a mask of its own (sigsuspend) lets it through
 * as that thread would natively. Each look reads the idle mask anew: once
 * some goroutine lets the signal through, the kernel may give it to any
 * thread that does, as natively. The wait is at the send, not at the mask
 * change: programs flip masks far more often than they signal
 * themselves, and a wait there cost signal_mask_race twice its run time.
 * A sender in another process is ordered with the change by nothing the
 * runtime sees, and has the kicks alone. The wait has a bound, so that a
 * record gone wrong cannot hang the sender: past it, the signal is sent as
 * before.
 */
#define SEND_SETTLE_NS (50 * 1000 * 1000)

static bool sends_to_self(pid_t pid)
{
	if (pid == 0 || pid == -1)
		return true;
	if (pid > 0)
		return pid == sys_getpid();
	return -pid == (pid_t)SYS1(SYS_getpgid, 0);
}

static bool m_lets_through(struct m *mp, uint64_t bit)
{
	struct g *cur;

	if (atomic_load(&mp->g0->status) == G_DEAD ||
	    (atomic_load(&mp->sigmask_taken) & bit)) /* seq_cst: thread_take */
		return false;
	cur = __atomic_load_n(&mp->curg, __ATOMIC_ACQUIRE);
	return !(cur && atomic_load(&cur->sigmask_temp));
}

void sigroute_before_send(pid_t pid, int sig)
{
	struct g *me = getg();
	struct sigaction a;
	uint64_t bit;

	if (!atomic_load(&runtime_running) || me == NULL || sig < 1 ||
	    sig > NSIG_KERNEL || sig_ignored_by_default(sig))
		return;
	bit = sigbit(sig);
	if ((bit & (SIG_KERNEL_UNBLOCKABLE | SIG_GLIBC_INTERNAL)) ||
	    !(atomic_load(&idle_mask) & bit) || !sends_to_self(pid))
		return;
	if (atomic_load(&prog.known) & bit)
		prog_read(sig, &a);
	else if (real.sigaction(sig, NULL, &a) != 0)
		return;
	if (a.sa_handler != SIG_DFL)
		return;
	int64_t give_up = nanotime() + SEND_SETTLE_NS;
	for (struct m *mp = __atomic_load_n(&sched.allms, __ATOMIC_ACQUIRE);
	     mp; mp = mp->alllink) {
		if (mp == me->m)
			continue;
		for (int spin = 0; (atomic_load(&idle_mask) & bit) &&
				   m_lets_through(mp, bit);
		     spin++) {
			if (nanotime() > give_up)
				return;
			if (spin < 64)
				cpu_relax();
			else
				SYS0(SYS_sched_yield);
		}
	}
}

uint64_t sigroute_idle_mask(void)
{
	return atomic_load(&idle_mask); /* seq_cst: thread_take */
}

void sigroute_fork_child(struct g *gp)
{
	memset(&classes, 0, sizeof classes);
	atomic_store(&prog.lock.v, 0);
	atomic_store(&routed, 0);
	atomic_store(&unclaimed, 0);
	sigkeep_fork_child();
	if (gp)
		class_join_locked(gp->sigmask);
	else
		idle_mask_update();
}
