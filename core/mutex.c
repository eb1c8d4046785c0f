/*
 * mutex.c: pthread mutexes on Go's sync.Mutex.
 *
 * glibc's mutex sleeps on a futex, which blocks the M and every goroutine
 * queued behind it. Here a waiter parks (sema_acquire); only a thread the
 * runtime did not create blocks, on its own futex word (sema.c).
 *
 * The program's pthread_mutex_t (glibc layout) holds everything:
 *
 *   __lock    Go's sync.Mutex state: locked 1, woken 2, starving 4,
 *             waiters << 3
 *   __count   recursion depth
 *   __owner   the holder's tid: its TCB's tid, unique per goroutine (fake
 *             tids >= 2^22) and real for other threads, so debuggers read
 *             it as glibc's
 *   __nusers  glibc's: holders plus condvar waiters; destroy says EBUSY
 *             while it is not 0 (robust mutexes excepted), as glibc does
 *   __kind    type 0-3, robust 16, prio-inherit 32, prio-protect 64,
 *             a robust mutex's state in bits 12-13, the priority ceiling
 *             from bit 19. Bit 128 (process-shared) means glibc's object.
 *   __spins   (with __elision) Go's semaphore: the wait queue's count
 *   __list    a robust mutex's link in its owner goroutine's list
 *
 * so zero is an unlocked mutex without waiters and the static initialisers
 * (kind only) need no init call.
 *
 * Normal and adaptive mutexes (no rules for the holder) take the fast path
 * glibc takes, inline in the interposer (mutex.h): lock is one CAS 0 ->
 * locked plus the owner and user count; unlock clears those and drops
 * locked with one CAS, going to the slow path only when waiters are
 * counted. A lock that finds the mutex taken goes straight to lock_slow:
 * every extra atomic on a contended line costs a cache-line transfer
 * between the Ms.
 *
 * The algorithm is Go's (sync/mutex.go): a locker spins a little when
 * another P runs the holder, then queues. Normal mode lets a newcomer
 * barge in ahead of a woken waiter; a waiter that waited over 1 ms switches
 * the mutex to starvation mode, where unlock hands it straight to the
 * first waiter (sema_release with handoff) and newcomers queue.
 *
 * Timed waits are goshim's addition and must not lose a wakeup. A waiter
 * is counted in the state's waiter field until an unlock turns that count
 * into a semaphore unit (normal mode: waiters - 1, woken set, then a
 * release) or hands the mutex over (starvation: a release with handoff, the
 * receiver takes itself off the count). Units are anonymous, so for every
 * counted waiter that has not taken one, waiters + units stays equal to
 * their number, units perhaps still in flight between an unlock's two
 * steps. A waiter whose deadline passes must leave exactly one of the two:
 *
 *  - if a unit is there, it takes it: it is then the woken waiter (normal
 *    mode: it clears woken, and takes the mutex if it is free) or the new
 *    owner (starvation: it takes the mutex as the receiver would; returning
 *    success after the deadline is allowed, losing the handoff is not);
 *  - else it takes itself off the waiter count. Two cases must wait for a
 *    unit instead (yielding: it is a few instructions of an unlocker away):
 *    a count of 0 (an unlock turned ours into a unit), and a starving,
 *    unlocked mutex (a handoff in progress) of which it is the last
 *    waiter: with others counted, one of them takes the handoff. The last
 *    waiter going off the count also ends starvation mode: an unlock that
 *    hands over to nobody would leave the mutex looking locked to trylock.
 *
 * A unit left in the semaphore because its waiter had timed out is taken by
 * the next locker that queues (it finds it at once) or by a waiter whose
 * deadline passes: nothing is lost.
 *
 * Kinds follow glibc 2.36 to the error code. A robust mutex sits on its
 * owner goroutine's list while held; a goroutine that exits holding it
 * marks it owner-dead and unlocks it (mutex_goexit), so the next locker
 * gets EOWNERDEAD (threads the runtime did not create are not followed to
 * their exit). Priority inheritance and protection mean nothing between
 * goroutines: such mutexes lock as their base type, with glibc's extra
 * ownership checks, and keep their ceiling for get/setprioceiling.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include "mutex.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "tls.h"

#define M_LOCKED MUTEX_LOCKED
#define M_WOKEN 2u
#define M_STARVING 4u
#define M_WAITER_SHIFT 3
#define M_WAITER (1u << M_WAITER_SHIFT)
#define STARVATION_NS 1000000 /* Go's starvationThresholdNs */
#define ACTIVE_SPIN 4	      /* Go's active_spin */
#define ACTIVE_SPIN_CNT 30    /* Go's active_spin_cnt */

/* __kind */
#define K_TYPE 3
#define K_ROBUST 16
#define K_PI 32
#define K_PP 64
#define K_PSHARED 128
#define K_RSTATE (3 << 12)
#define K_OWNERDEAD (1 << 12)	   /* released by a dead owner */
#define K_INCONSISTENT (2 << 12)   /* held after EOWNERDEAD */
#define K_NOTRECOVERABLE (3 << 12) /* unlocked while inconsistent */
#define K_CEIL_SHIFT 19
#define K_CEIL (0xfff << K_CEIL_SHIFT)
#define K_VALID (K_TYPE | K_ROBUST | K_PI | K_PP | K_RSTATE | K_CEIL)

struct pmutex {
	_Atomic uint32_t state;
	uint32_t count;
	_Atomic int32_t owner;
	uint32_t nusers;
	_Atomic int32_t kind;
	_Atomic uint32_t sema;
	struct mutex_link link;
};

#define SAME_PLACE(glibc, ours)                                           \
	_Static_assert(offsetof(pthread_mutex_t, __data.glibc) ==        \
			       offsetof(struct pmutex, ours),              \
		       "pthread_mutex_t." #glibc " is not where goshim keeps " \
		       #ours)
SAME_PLACE(__lock, state);
SAME_PLACE(__count, count);
SAME_PLACE(__owner, owner);
SAME_PLACE(__nusers, nusers);
SAME_PLACE(__kind, kind);
SAME_PLACE(__spins, sema);
SAME_PLACE(__list, link);
_Static_assert(sizeof(struct pmutex) <= sizeof(pthread_mutex_t),
	       "mutex state must fit in pthread_mutex_t");

static struct pmutex *pm_of(const pthread_mutex_t *m)
{
	return (struct pmutex *)(uintptr_t)m;
}

static int32_t kind_of(struct pmutex *pm)
{
	return atomic_load_explicit(&pm->kind, memory_order_relaxed);
}

static pid_t self_tid(void)
{
	return tls_tid(__builtin_thread_pointer());
}

/* ---- Go's sync.Mutex ---------------------------------------------------- */

/*
 * Go's runtime_canSpin, less one condition: a few rounds, only while
 * another P is busy (maybe running the holder). Go also refuses while
 * goroutines wait in the spinner's own run queue, so that the P runs them
 * instead. Here that costs more than it saves: a park and the wake that
 * ends it take microseconds of both Ps' time (bucket lock, two switches,
 * the mutex's line moving between them), against at most ACTIVE_SPIN x
 * ACTIVE_SPIN_CNT pauses (2.5 us on a 2-CPU Xeon); and the goroutines
 * queued behind a contender are, as often as not, contenders for the same
 * mutex, each of which would park in turn. 64 threads on one mutex: 3.4M
 * lock+unlock/s with the condition, 8-9.5M without it.
 */
static bool can_spin(int iter)
{
	if (iter >= ACTIVE_SPIN || !on_goroutine())
		return false;
	return gomaxprocs > atomic_load(&sched.npidle) +
				    atomic_load(&sched.nmspinning) + 1;
}

static void do_spin(void)
{
	for (int i = 0; i < ACTIVE_SPIN_CNT; i++)
		arch_cpu_relax();
}

/* sema.c's cansemacquire: take a unit without queueing. */
static bool sema_try(_Atomic uint32_t *sema)
{
	uint32_t v = atomic_load(sema);
	while (v > 0)
		if (atomic_compare_exchange_weak(sema, &v, v - 1))
			return true;
	return false;
}

static bool go_trylock(_Atomic uint32_t *state)
{
	uint32_t old = atomic_load(state);
	while (!(old & (M_LOCKED | M_STARVING)))
		if (atomic_compare_exchange_weak(state, &old, old | M_LOCKED))
			return true;
	return false;
}

/* The mutex was handed over to this waiter, which is still counted as one
 * (Go's lockSlow, after semacquire in starvation mode). */
static void take_handoff(_Atomic uint32_t *state, bool starving)
{
	uint32_t old = atomic_load(state);
	if ((old & (M_LOCKED | M_WOKEN)) || !(old >> M_WAITER_SHIFT))
		runtime_throw("mutex: inconsistent state after handoff");
	uint32_t delta = M_LOCKED - M_WAITER;
	/* Leave starvation mode when it is no longer needed: two goroutines
	 * could go lock-step in it forever. */
	if (!starving || old >> M_WAITER_SHIFT == 1)
		delta -= M_STARVING;
	atomic_fetch_add(state, delta);
}

/* Let a unit that is on its way land (see the top of the file). */
static void let_unit_land(void)
{
	if (on_goroutine())
		goyield();
	else
		arch_cpu_relax();
}

/* A waiter's deadline passed; it is counted as a waiter and holds no
 * unit. Returns 0 if it ends up owning the mutex after all. */
static int lock_timed_out(_Atomic uint32_t *state, _Atomic uint32_t *sema,
			  bool starving)
{
	for (;;) {
		uint32_t old = atomic_load(state);
		if (sema_try(sema)) {
			old = atomic_load(state);
			if (old & M_STARVING) {
				take_handoff(state, starving);
				return 0;
			}
			/* The woken waiter's unit: woken is ours to clear. */
			for (;;) {
				uint32_t new = old & ~M_WOKEN;
				if (!(old & M_LOCKED))
					new |= M_LOCKED;
				if (atomic_compare_exchange_weak(state, &old,
								 new))
					return old & M_LOCKED ? ETIMEDOUT : 0;
			}
		}
		uint32_t waiters = old >> M_WAITER_SHIFT;
		bool handing_over =
			(old & (M_STARVING | M_LOCKED)) == M_STARVING;
		if (waiters == 0 || (handing_over && waiters == 1)) {
			let_unit_land();
			continue;
		}
		uint32_t new = old - M_WAITER;
		if (waiters == 1)
			new &= ~M_STARVING;
		if (atomic_compare_exchange_weak(state, &old, new))
			return ETIMEDOUT;
	}
}

/* Go's lockSlow, with a deadline (monotonic ns, or -1). */
static int lock_slow(_Atomic uint32_t *state, _Atomic uint32_t *sema,
		     int64_t deadline)
{
	int64_t wait_start = 0;
	bool starving = false, awoke = false;
	int iter = 0;
	uint32_t old = atomic_load(state);

	for (;;) {
		/* Spin while the holder may be about to unlock; not in
		 * starvation mode, where the mutex goes to a waiter. */
		if ((old & (M_LOCKED | M_STARVING)) == M_LOCKED &&
		    can_spin(iter)) {
			/* Set woken so unlock does not wake another. */
			if (!awoke && !(old & M_WOKEN) &&
			    old >> M_WAITER_SHIFT &&
			    atomic_compare_exchange_strong(state, &old,
							   old | M_WOKEN))
				awoke = true;
			do_spin();
			iter++;
			old = atomic_load(state);
			continue;
		}
		uint32_t new = old;
		if (!(old & M_STARVING))
			new |= M_LOCKED; /* a starving mutex is not ours */
		if (old & (M_LOCKED | M_STARVING))
			new += M_WAITER;
		/* Unlock expects a starving mutex to have waiters: switch only
		 * while it is locked. */
		if (starving && (old & M_LOCKED))
			new |= M_STARVING;
		if (awoke) {
			if (!(new & M_WOKEN))
				runtime_throw("mutex: inconsistent state");
			new &= ~M_WOKEN;
		}
		if (!atomic_compare_exchange_weak(state, &old, new))
			continue;
		if (!(old & (M_LOCKED | M_STARVING)))
			return 0;
		/* Waited before: back to the head of the queue. */
		bool lifo = wait_start != 0;
		if (!wait_start)
			wait_start = nanotime();
		if (sema_acquire(sema, lifo, deadline, "mutex") == ETIMEDOUT)
			return lock_timed_out(state, sema, starving);
		starving = starving || nanotime() - wait_start > STARVATION_NS;
		old = atomic_load(state);
		if (old & M_STARVING) {
			take_handoff(state, starving);
			return 0;
		}
		awoke = true;
		iter = 0;
	}
}

/* Go's unlockSlow. */
static void unlock_slow(_Atomic uint32_t *state, _Atomic uint32_t *sema,
			uint32_t new)
{
	if (new & M_STARVING) {
		/* Hand the mutex to the first waiter, which sets locked;
		 * meanwhile starving keeps newcomers out. */
		sema_release(sema, true);
		return;
	}
	uint32_t old = new;
	for (;;) {
		/* No waiters, or one is awake already, or someone has it. */
		if (!(old >> M_WAITER_SHIFT) ||
		    (old & (M_LOCKED | M_WOKEN | M_STARVING)))
			return;
		new = (old - M_WAITER) | M_WOKEN;
		if (atomic_compare_exchange_weak(state, &old, new)) {
			sema_release(sema, false);
			rt_yield();
			return;
		}
	}
}

static void go_unlock(struct pmutex *pm)
{
	uint32_t new = atomic_fetch_sub(&pm->state, M_LOCKED) - M_LOCKED;
	if (new)
		unlock_slow(&pm->state, &pm->sema, new);
}

/* Unlock if locked (an unlocked normal mutex stays as it is, as in
 * glibc), with one atomic operation unless the state changes under it. */
static void unlock_if_locked(struct pmutex *pm)
{
	uint32_t old = atomic_load_explicit(&pm->state, memory_order_relaxed);
	do {
		if (!(old & M_LOCKED))
			return;
	} while (!atomic_compare_exchange_weak_explicit(
		&pm->state, &old, old - M_LOCKED, memory_order_release,
		memory_order_relaxed));
	if (old != M_LOCKED)
		unlock_slow(&pm->state, &pm->sema, old - M_LOCKED);
}

/* ---- robust mutexes: a list per goroutine ------------------------------ */

/* Threads the runtime did not create are not followed to their exit. */
static void robust_add(struct pmutex *pm)
{
	struct g *gp = getg();
	if (!on_goroutine())
		return;
	pm->link.prev = NULL;
	pm->link.next = gp->robust;
	if (gp->robust)
		gp->robust->prev = &pm->link;
	gp->robust = &pm->link;
}

static void robust_del(struct pmutex *pm)
{
	struct g *gp = getg();
	if (!on_goroutine())
		return;
	if (pm->link.prev)
		pm->link.prev->next = pm->link.next;
	else
		gp->robust = pm->link.next;
	if (pm->link.next)
		pm->link.next->prev = pm->link.prev;
	pm->link.prev = pm->link.next = NULL;
}

/* Changed only by the holder (or a dying one), read by the next holder. */
static void set_rstate(struct pmutex *pm, int32_t rs)
{
	int32_t k = kind_of(pm);
	atomic_store_explicit(&pm->kind, (k & ~K_RSTATE) | rs,
			      memory_order_relaxed);
}

void mutex_goexit(struct g *gp)
{
	while (gp->robust) {
		struct pmutex *pm = (struct pmutex *)((char *)gp->robust -
						      offsetof(struct pmutex,
							       link));
		gp->robust = pm->link.next;
		pm->link.prev = pm->link.next = NULL;
		set_rstate(pm, K_OWNERDEAD);
		pm->count = 0;
		atomic_store_explicit(&pm->owner, 0, memory_order_relaxed);
		go_unlock(pm);
	}
}

/* ---- pthread semantics ------------------------------------------------- */

int mutex_init(pthread_mutex_t *m, int type, bool robust, int protocol,
	       int ceiling)
{
	struct pmutex *pm = pm_of(m);
	int32_t kind = type;

	if (protocol == PTHREAD_PRIO_PROTECT && robust)
		return ENOTSUP;
	if (robust)
		kind |= K_ROBUST;
	if (protocol == PTHREAD_PRIO_INHERIT)
		kind |= K_PI;
	if (protocol == PTHREAD_PRIO_PROTECT) {
		int min = sched_get_priority_min(SCHED_FIFO);
		kind |= K_PP | (ceiling < min ? min : ceiling) << K_CEIL_SHIFT;
	}
	*pm = (struct pmutex){ .kind = kind };
	return 0;
}

static bool kind_valid(int32_t kind)
{
	return !(kind & ~K_VALID);
}

/* The mutex is this thread's now: the bookkeeping, and a robust mutex's
 * verdict. count_user: not for a condvar's re-lock (glibc's cond_lock). */
static int acquired(struct pmutex *pm, pid_t tid, bool count_user)
{
	int32_t kind = kind_of(pm);

	if (kind & K_ROBUST) {
		int32_t rs = kind & K_RSTATE;
		if (rs == K_NOTRECOVERABLE) {
			pm->count = 0;
			go_unlock(pm);
			return ENOTRECOVERABLE;
		}
		robust_add(pm);
		if (rs == K_OWNERDEAD) {
			/* The dead owner's user count passes to us. */
			set_rstate(pm, K_INCONSISTENT);
			atomic_store_explicit(&pm->owner, tid,
					      memory_order_relaxed);
			pm->count = 1;
			return EOWNERDEAD;
		}
	}
	atomic_store_explicit(&pm->owner, tid, memory_order_relaxed);
	pm->count = 1;
	if (count_user)
		pm->nusers++;
	return 0;
}

/* The kinds without rules for the holder (normal, adaptive): a free mutex is
 * the whole story, so the uncontended lock is one CAS and a few stores, as
 * in glibc. */
static bool plain(int32_t kind)
{
	return kind == PTHREAD_MUTEX_NORMAL ||
	       kind == PTHREAD_MUTEX_ADAPTIVE_NP;
}

static bool take_free(struct pmutex *pm, bool try)
{
	return try ? go_trylock(&pm->state)
		   : atomic_compare_exchange_strong_explicit(
			     &pm->state, &(uint32_t){ 0 }, M_LOCKED,
			     memory_order_acquire, memory_order_relaxed);
}

/* A plain mutex is taken: glibc's bookkeeping. */
static void plain_acquired(struct pmutex *pm, bool count_user)
{
	atomic_store_explicit(&pm->owner, self_tid(), memory_order_relaxed);
	pm->count = 1;
	if (count_user)
		pm->nusers++;
}

static int lock_enter(struct pmutex *pm, bool try, bool count_user)
{
	int32_t kind = kind_of(pm);

	if (plain(kind)) {
		if (!take_free(pm, try))
			return EBUSY;
		plain_acquired(pm, count_user);
		return 0;
	}
	pid_t tid = self_tid();
	if (!kind_valid(kind))
		return EINVAL;
	if (atomic_load_explicit(&pm->owner, memory_order_relaxed) == tid) {
		switch (kind & K_TYPE) {
		case PTHREAD_MUTEX_RECURSIVE:
			if (pm->count + 1 == 0)
				return EAGAIN;
			pm->count++;
			return 0;
		case PTHREAD_MUTEX_ERRORCHECK:
			/* glibc's plain trylock does not check: EBUSY. */
			if (!try || (kind & (K_ROBUST | K_PI | K_PP)))
				return EDEADLK;
			break;
		}
		/* Normal: relocking deadlocks, as in glibc. */
	}
	if (!take_free(pm, try))
		return EBUSY;
	return acquired(pm, tid, count_user);
}

int mutex_lock_kind(pthread_mutex_t *m, bool try)
{
	return lock_enter(pm_of(m), try, true);
}

int mutex_lock_wait(pthread_mutex_t *m, int64_t deadline)
{
	struct pmutex *pm = pm_of(m);
	int err = lock_slow(&pm->state, &pm->sema, deadline);
	return err ? err : acquired(pm, self_tid(), true);
}

static int unlock(struct pmutex *pm, bool count_user)
{
	int32_t kind = kind_of(pm);
	int32_t type = kind & K_TYPE;
	/* glibc lets anyone unlock a plain normal or adaptive mutex. */
	bool checked = type == PTHREAD_MUTEX_RECURSIVE ||
		       type == PTHREAD_MUTEX_ERRORCHECK ||
		       (kind & (K_ROBUST | K_PI));

	if (!kind_valid(kind))
		return EINVAL;
	if (checked &&
	    atomic_load_explicit(&pm->owner, memory_order_relaxed) !=
		    self_tid())
		return EPERM;
	if ((kind & K_RSTATE) == K_INCONSISTENT) {
		/* Unlocked without pthread_mutex_consistent: nobody can use
		 * it again. */
		if (type == PTHREAD_MUTEX_RECURSIVE && --pm->count != 0)
			return ENOTRECOVERABLE;
		set_rstate(pm, K_NOTRECOVERABLE);
	} else if (type == PTHREAD_MUTEX_RECURSIVE && --pm->count != 0) {
		return 0;
	}
	if (kind & K_ROBUST)
		robust_del(pm);
	atomic_store_explicit(&pm->owner, 0, memory_order_relaxed);
	if (count_user)
		pm->nusers--;
	/* Unlocking an unlocked normal mutex changes nothing but the user
	 * count, as in glibc. */
	unlock_if_locked(pm);
	return 0;
}

int mutex_unlock_kind(pthread_mutex_t *m)
{
	return unlock(pm_of(m), true);
}

int mutex_unlock_contended(pthread_mutex_t *m)
{
	unlock_if_locked(pm_of(m));
	return 0;
}

int mutex_destroy(pthread_mutex_t *m)
{
	struct pmutex *pm = pm_of(m);
	int32_t kind = kind_of(pm);

	if (!(kind & K_ROBUST) && pm->nusers != 0)
		return EBUSY;
	/* glibc destroys a held robust mutex; ours must leave our list. */
	if ((kind & K_ROBUST) &&
	    atomic_load_explicit(&pm->owner, memory_order_relaxed) ==
		    self_tid())
		robust_del(pm);
	/* Every later call but init says EINVAL (glibc 2.36): -1 has the
	 * process-shared bit, so glibc's functions give that answer. */
	atomic_store_explicit(&pm->kind, -1, memory_order_relaxed);
	return 0;
}

int mutex_consistent(pthread_mutex_t *m)
{
	struct pmutex *pm = pm_of(m);
	int32_t kind = kind_of(pm);

	if (!(kind & K_ROBUST) || (kind & K_RSTATE) != K_INCONSISTENT)
		return EINVAL;
	set_rstate(pm, 0);
	return 0;
}

int mutex_getprioceiling(const pthread_mutex_t *m, int *ceiling)
{
	int32_t kind = kind_of(pm_of(m));

	if (!(kind & K_PP))
		return EINVAL;
	*ceiling = (kind & K_CEIL) >> K_CEIL_SHIFT;
	return 0;
}

/* As glibc: the caller holds the mutex, or it is taken (without owning
 * it) for the change. */
int mutex_setprioceiling(pthread_mutex_t *m, int ceiling, int *old)
{
	struct pmutex *pm = pm_of(m);
	int32_t kind = kind_of(pm);
	bool held = false;

	if (!(kind & K_PP))
		return EINVAL;
	if (ceiling < sched_get_priority_min(SCHED_FIFO) ||
	    ceiling > sched_get_priority_max(SCHED_FIFO) ||
	    (ceiling & (K_CEIL >> K_CEIL_SHIFT)) != ceiling)
		return EINVAL;
	if (atomic_load_explicit(&pm->owner, memory_order_relaxed) ==
	    self_tid()) {
		if ((kind & K_TYPE) == PTHREAD_MUTEX_ERRORCHECK)
			return EDEADLK;
		held = (kind & K_TYPE) == PTHREAD_MUTEX_RECURSIVE;
	}
	if (!held && !atomic_compare_exchange_strong(&pm->state,
						     &(uint32_t){ 0 },
						     M_LOCKED))
		lock_slow(&pm->state, &pm->sema, -1);
	kind = kind_of(pm);
	if (old)
		*old = (kind & K_CEIL) >> K_CEIL_SHIFT;
	atomic_store_explicit(&pm->kind,
			      (kind & ~K_CEIL) | ceiling << K_CEIL_SHIFT,
			      memory_order_relaxed);
	if (!held)
		go_unlock(pm);
	return 0;
}

int mutex_real_lock(pthread_mutex_t *m, bool clocked, clockid_t clk,
		    const struct timespec *abstime)
{
	int err = real.pthread_mutex_trylock(m);
	bool in_syscall = on_goroutine();

	if (err != EBUSY)
		return err;
	if (in_syscall)
		entersyscall();
	if (abstime == NULL)
		err = real.pthread_mutex_lock(m);
	else if (clocked)
		err = real.pthread_mutex_clocklock(m, clk, abstime);
	else
		err = real.pthread_mutex_timedlock(m, abstime);
	if (in_syscall)
		exitsyscall();
	return err;
}

int mutex_cond_unlock(pthread_mutex_t *m)
{
	if (!mutex_is_ours(m))
		return real.pthread_mutex_unlock(m);
	return unlock(pm_of(m), false);
}

int mutex_cond_lock(pthread_mutex_t *m)
{
	struct pmutex *pm = pm_of(m);
	int err;

	if (!mutex_is_ours(m))
		return mutex_real_lock(m, false, 0, NULL);
	err = lock_enter(pm, false, false);
	if (err != EBUSY)
		return err;
	lock_slow(&pm->state, &pm->sema, -1);
	return acquired(pm, self_tid(), false);
}
