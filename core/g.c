/*
 * g.c: the goroutine's life: newproc (pthread_create), its entry and
 * exit (goexit0), the free lists of dead Gs, and finding a G by thread id
 * or pthread_t (Go's runtime/proc.go).
 *
 * A dead G whose stack has the default size keeps its stack and TCB for
 * reuse: a per-P list of up to 64, spilling half to a global one, whose
 * entries beyond 128 give their touched pages back. A G is never freed:
 * it stays on allgs, which readers walk without a lock, and a stale
 * pthread_t finds either its TCB gone or a G that no longer answers for it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "asan.h"
#include "chaos.h"
#include "cpuclock.h"
#include "futex.h"
#include "mutex.h"
#include "runtime.h"
#include "runtime2.h"
#include "sigkeep.h"
#include "stack.h"
#include "sys.h"
#include "tls.h"
#include "trace.h"
#include "wire.h"

#define GFREE_LOCAL_MAX 64
#define ID_BATCH 16 /* ids a P takes at a time (Go's _GoidCacheBatch) */
#define GFREE_GLOBAL_KEEP_PAGES 128 /* cached Gs that keep touched pages */

/* ---- free Gs ------------------------------------------------------------ */

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

void gfput_global(struct g *gp)
{
	if (sched.ngfree >= GFREE_GLOBAL_KEEP_PAGES)
		stack_release_pages(gp);
	gp->schedlink = sched.gfree;
	sched.gfree = gp;
	sched.ngfree++;
}

/* A G whose stack is the default size goes to a free list with its stack
 * and TCB; others give their stack back. */
static void gfput(struct p *pp, struct g *gp)
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

	gfput(mp ? p_claim(mp, &prev) : NULL, gp);
	if (mp)
		p_unclaim(mp, prev);
}

/* ---- making a goroutine ------------------------------------------------- */

static void g_entry(void *arg) __attribute__((noreturn));

static void g_entry(void *arg)
{
	struct g *gp = arg;
	__pthread_unwind_buf_t ub;

	g_started(gp);
	tls_enter(gp);
	if (atomic_load(&gp->sigpending))
		sigthread_deliver(gp);
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
	/* Under ASan: the frames unwound past left their redzones poisoned,
	 * and ASan's own exit path (its no-return hook) puts locals there.
	 * The nearest 256 KiB, not the whole stack (1 MiB of shadow each). */
	char *frame = __builtin_frame_address(0);
	size_t below = (size_t)(frame - (char *)gp->stack_lo);
	if (below > (256u << 10))
		below = 256u << 10;
	asan_stack_clean(frame - below, below);
	gp->locked_frame_sp = 0;
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

/* The next of a P's ids, taken from a global counter ID_BATCH at a time
 * (reserve(n) returns the first of n it set aside). */
static uint64_t id_next(uint64_t *next, uint64_t *end,
			uint64_t (*reserve)(uint32_t))
{
	if (*next == *end) {
		*next = reserve(ID_BATCH);
		*end = *next + ID_BATCH;
	}
	return (*next)++;
}

/* A thread id for a new goroutine: no live thread's. Once the fake ids
 * have come round (2^29 - 2^22 threads made), a long-lived goroutine may
 * still hold the next one; it is passed over, as the kernel passes over
 * pids in use. */
static pid_t fresh_tid(struct p *pp)
{
	bool again;
	pid_t tid;

	do {
		uint64_t k = pp ? id_next(&pp->tidcache, &pp->tidcacheend,
					  tls_fake_tids)
				: tls_fake_tids(1);
		tid = tls_fake_tid(k, &again);
	} while (again && g_from_tid(tid) != NULL);
	return tid;
}

static uint64_t goids_reserve(uint32_t n)
{
	return atomic_fetch_add(&sched.goidgen, n) + 1;
}

/* A goroutine id, from the P's batch when there is a P (Go's goidcache). */
static uint64_t fresh_goid(struct p *pp)
{
	return pp ? id_next(&pp->goidcache, &pp->goidcacheend, goids_reserve)
		  : goids_reserve(1);
}

/* A new G, runnable, on no queue yet: newproc queues it (pp: the
 * creator's P, whose free list it may come from, or NULL). */
static struct g *newproc1(struct p *pp, void *(*fn)(void *), void *arg,
			  const struct spawn_attr *attr, void **handle,
			  int *err)
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
		tls_reset(gp->tcb);
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
	gp->goid = fresh_goid(pp);
	gp->fn = fn;
	gp->arg = arg;
	gp->retval = NULL;
	gp->detached = attr->detached;
	gp->exited = false;
	gp->joiner = NULL;
	atomic_store_explicit(&gp->cancel_syscall, false,
			      memory_order_relaxed);
	/* The G is nobody else's until it is queued (a release): plain
	 * stores here, never a barrier per field. */
	gp->waitreason = NULL;
	gp->inheritsched = attr->inheritsched;
	gp->scope = attr->scope;
	gp->req_stacksize = stacksize;
	gp->attrs = attr->attrs;
	atomic_store_explicit(&gp->rtprio, wire_rtprio(attr->attrs),
			      memory_order_relaxed);
	gp->outranked_by = NULL;
	atomic_store_explicit(&gp->resume_on_run, NULL, memory_order_relaxed);
	atomic_store_explicit(&gp->stepped_aside, false,
			      memory_order_relaxed);
	g_signals_init(gp);
	/* Linux threads inherit the creator's name. */
	if (on_goroutine())
		memcpy(gp->name, me->name, sizeof gp->name);
	else
		memcpy(gp->name, sched.main_name, sizeof gp->name);
	keys_reset(gp);
	if (!gp->user_stack)
		asan_stack_clean(gp->stack_hi,
				 (size_t)(gp->map + gp->map_size - gp->stack_hi));
	gp->tid = fresh_tid(pp);
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
	live_begin(gp);
	/* Programs read the new pthread_t from the new thread. */
	*handle = gp->tcb;
	TRACE(trace_gocreate(gp, me));
	atomic_store_explicit(&gp->status, G_RUNNABLE, memory_order_release);
	*err = 0;
	return gp;
}

/* park_m's unlockf for a creator that waits for its new goroutine (newproc):
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
	gopark_sched(runfirst_queue, gp, "thread create");
	while (atomic_load(&me->stepped_aside))
		gopark(NULL, NULL, "thread create"); /* a spurious wakeup */
}

struct g *newproc(void *(*fn)(void *), void *arg,
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
	struct p *pp = mp ? p_claim(mp, &prev) : NULL;
	struct g *gp = newproc1(pp, fn, arg, attr, handle, err);
	/* first: queued as the creator steps aside (runfirst). */
	if (gp && !first) {
		if (pp) {
			runqput(pp, gp, true);
		} else {
			rlock_lock(&sched.lock);
			globrunqput(gp);
			rlock_unlock(&sched.lock);
		}
		wakep();
	}
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

/* ---- its end ------------------------------------------------------------ */

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

static void g_clear_tid(struct g *gp);

void go_exit(void *retval)
{
	struct g *gp = getg();

	gp->retval = retval;
	tls_exit();
	keys_run_destructors(gp);
	mutex_goexit(gp);
	/* Out of its mask's class before a tid waiter can go on: the
	 * kernel clears the tid once the thread is gone. */
	sigroute_mask_change(gp->sigmask, 0, true, false);
	g_clear_tid(gp);
	sigthread_exit(gp);
	live_end(gp);
	/* A wired goroutine's M may end with it (goexit0). */
	if (gp->lockedm || gp->attrs)
		mcall(goexit0);
	else
		mcall_handoff(goexit0);
	runtime_throw("go_exit: dead goroutine resumed");
}

/* The main thread called pthread_exit and its stack is unwound: the main
 * goroutine ends here, on what is left of glibc's start frame. */
void main_goroutine_exit(void)
{
	struct g *gp = getg();

	keys_run_destructors(gp);
	mutex_goexit(gp);
	/* Out of its mask's class before a tid waiter can go on: the
	 * kernel clears the tid once the thread is gone. */
	sigroute_mask_change(gp->sigmask, 0, true, false);
	g_clear_tid(gp);
	sigthread_exit(gp);
	atomic_store(&sched.main_exited, true);
	live_main_end(gp);
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

/* ---- finding a G -------------------------------------------------------- */

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
 * default (and a stack the program gave back is the program's). So a
 * handle that is not in the table of goshim's TCBs (handle.c) is read
 * only where the kernel says it can be, and a G that has moved on to
 * another TCB, or none, no longer answers for it. An M's g0
 * is no program thread: its handle, seen only by code that runs on g0 (a
 * sanitizer runtime asking pthread_getattr_np(pthread_self())), is the
 * M's own glibc identity, which glibc answers for. */
struct g *g_from_handle(uintptr_t handle)
{
	struct g **slot, *gp;

	if (handle == 0)
		return NULL;
	gp = handle_find(handle);
	if (gp && gp->magic == G_MAGIC &&
	    (uintptr_t)__atomic_load_n(&gp->tcb, __ATOMIC_RELAXED) == handle)
		return gp->is_g0 ? NULL : gp;
	slot = (struct g **)(handle + (uintptr_t)tls_g_offset());
	if (!sys_readable(slot))
		return &gone_g;
	gp = *slot;
	if (gp == NULL || gp->magic != G_MAGIC || gp->is_g0)
		return NULL;
	return (uintptr_t)gp->tcb == handle ? gp : &gone_g;
}

