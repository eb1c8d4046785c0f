/*
 * sigmask.c: the signal mask and alternate signal stack of an M's thread,
 * and a new goroutine's signal state.
 *
 * The kernel keeps one mask and one sigaltstack per OS thread; goshim
 * keeps one per goroutine. So the M's thread takes each from the goroutine
 * it runs (execute), and the M keeps a record of what its thread has, so
 * that a switch between goroutines with the same values makes no system
 * call. An idle M blocks what every goroutine blocks, so that a process
 * signal it takes is one some goroutine wants (sigroute.c hands it on).
 */
#include "chaos.h"
#include "preempt.h"
#include "runtime.h"
#include "runtime2.h"
#include "sigkeep.h"
#include "sys.h"

uint64_t thread_sigmask(void)
{
	uint64_t cur = 0;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8);
	return cur;
}

/*
 * The thread takes mask. While it changes, the thread is known to block
 * only what the old and the new masks both block, and that is what
 * sigmask_taken says from before the system call (sigroute_before_send
 * reads it). An idle M's mask is the idle mask read a moment ago, which
 * may have grown since (a goroutine that let a signal through has ended,
 * and its joiner is about to send that signal): after saying what it
 * will take, and before it takes it, the M reads the idle mask again. A
 * sender that changed the idle mask before that look either is seen by
 * it, or sees this M's word letting the signal through and waits for it.
 */
/* mask as the kernel will have it on the thread: the record is held
 * against the thread's (chaos). */
static uint64_t kernel_mask(uint64_t mask)
{
	return mask & ~(preempt_unblockable() | SIG_KERNEL_UNBLOCKABLE);
}

static void thread_take(struct m *mp, uint64_t mask, bool idle)
{
	mp->sigmask_dead = false;
	for (;;) {
		uint64_t want = kernel_mask(mask);
		uint64_t taken = atomic_load_explicit(&mp->sigmask_taken,
						      memory_order_relaxed);
		/* The record may say so already while what the thread was
		 * seen to take says less (a handler ended on this M:
		 * sigroute.c). */
		if (mp->sigmask == want && taken == want)
			break;
		atomic_store(&mp->sigmask_taken, taken & want);
		if (idle && sigroute_idle_mask() != mask) {
			mask = sigroute_idle_mask();
			continue;
		}
		/* The record first: on a goroutine (sigsuspend, handlers run
		 * under a temporary mask), a pending signal the mask lets
		 * through runs its handler as the call returns, and that
		 * handler's sigreturn puts the record on the thread. */
		mp->sigmask = want;
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &want, NULL, 8);
		atomic_store_explicit(&mp->sigmask_taken, want,
				      memory_order_release);
		break;
	}
	if (atomic_load_explicit(&mp->directed, memory_order_relaxed) &
	    mp->sigmask)
		m_directed_drain(mp, mp->sigmask);
	/* A record that went stale skips the call above: the thread keeps a
	 * mask nobody knows of. */
	if (chaos())
		sigmask_check_m(mp, "an M takes a mask");
}

static __attribute__((noinline)) void thread_take_out_of_line(struct m *mp,
								  uint64_t mask)
{
	thread_take(mp, mask, false);
}

/* Each switch to a goroutine: the thread nearly always has its mask
 * already, and that test is leaf code (the rest saves registers). */
void m_set_sigmask(struct m *mp, uint64_t mask)
{
	uint64_t want = kernel_mask(mask);

	if (__builtin_expect(
		    mp->sigmask == want &&
			    atomic_load_explicit(&mp->sigmask_taken,
						 memory_order_relaxed) == want &&
			    !(atomic_load_explicit(&mp->directed,
						   memory_order_relaxed) &
			      want) &&
			    !chaos(),
		    1)) {
		mp->sigmask_dead = false;
		return;
	}
	thread_take_out_of_line(mp, mask);
}

/*
 * A handler that ends on mp's thread puts back (at sigreturn) a mask the
 * thread may not have had: the handler may have parked and come back on
 * this M. Until it has, the thread is known to block only what both
 * block; m_set_sigmask makes the record whole again.
 */
void m_taken_until_sigreturn(struct m *mp, uint64_t back)
{
	atomic_fetch_and(&mp->sigmask_taken, back);
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
void m_set_altstack(struct m *mp, const stack_t *ss)
{
	/* Two disabled stacks are the same whatever they say beside
	 * (valgrind reports one with an address and size). */
	if ((mp->altstack.ss_flags & ss->ss_flags & SS_DISABLE) ||
	    (mp->altstack.ss_sp == ss->ss_sp &&
	     mp->altstack.ss_size == ss->ss_size &&
	     mp->altstack.ss_flags == ss->ss_flags))
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
void idle_signals_block(struct m *mp)
{
	thread_take(mp, sigroute_idle_mask(), true);
}

void g_signals_init(struct g *gp)
{
	struct g *me = getg();

	sigthread_reset(gp);
	gp->sigself = 0;
	/* Relaxed: the G is nobody else's until newproc queues it. */
	atomic_store_explicit(&gp->sigwait_set, 0, memory_order_relaxed);
	gp->in_sighandler = 0;
	gp->locked_frame_sp = 0;
	/* A new thread has no alternate signal stack. */
	gp->altstack = (stack_t){ .ss_flags = SS_DISABLE };
	/* ...and its signal mask, as pthread_create gives it. */
	gp->sigmask = on_goroutine() ? me->sigmask : thread_sigmask();
	sigroute_mask_change(0, gp->sigmask, false, true);
}

/* Bits more or fewer on mp's thread, with the record and what the thread
 * is known to block (thread_take's order: taken is what both masks block
 * while the call is made). */
void m_block_more(struct m *mp, uint64_t bits)
{
	if (bits == 0)
		return;
	mp->sigmask |= bits;
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &bits, NULL, 8);
	atomic_store(&mp->sigmask_taken, mp->sigmask);
}

static void m_unblock(struct m *mp, uint64_t bits)
{
	if (bits == 0)
		return;
	mp->sigmask &= ~bits;
	atomic_store(&mp->sigmask_taken, mp->sigmask);
	SYS4(SYS_rt_sigprocmask, SIG_UNBLOCK, &bits, NULL, 8);
}

/* The thread lets SIGURG through for preemption, and a goroutine in a
 * system call is not preempted: for the call the thread may block it, so
 * that a child starting from the thread's mask has the goroutine's, as a
 * native child of that thread has. The M stays this goroutine's until
 * exitsyscall. */
uint64_t spawn_mask_begin(void)
{
	struct g *gp = getg();
	uint64_t extra = gp->sigmask & preempt_unblockable();

	m_block_more(gp->m, extra);
	return extra;
}

void spawn_mask_end(uint64_t extra)
{
	m_unblock(getg()->m, extra);
}
