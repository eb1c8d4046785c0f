/*
 * sem.c: unnamed POSIX semaphores whose waiters park.
 *
 * sem_t (32 bytes) keeps glibc's layout where it matters: glibc's 64-bit
 * word holds the value in its low half (here the same 32 bits, so the
 * value sits where glibc's sem_getvalue would read it) and its waiter
 * count in the high half (zero here), then an int that says private or
 * shared. The semaphores goshim's sem_init made private carry a magic word
 * at offset 16, which glibc's sem_init leaves alone and sem_open writes as
 * zero. Every other semaphore is glibc's: process-shared ones from sem_init
 * and all named ones from sem_open, since they live in shared mappings and
 * must work with other processes; their waits block the OS thread, with
 * the P left for other goroutines meanwhile (a try, then the wait under
 * entersyscall).
 *
 * The value is Go's runtime semaphore (sema_acquire): a waiter takes a
 * unit or sleeps on the value's address. sem_post must be
 * async-signal-safe (POSIX): a signal handler may post while the code it
 * interrupted, on this very thread, holds the runtime's locks or is
 * half-way through a run queue. So sem_post only adds its unit, with a
 * compare-and-swap that also refuses to pass SEM_VALUE_MAX (EOVERFLOW),
 * and, if anyone sleeps there, marks the wait queue for sysmon
 * (sema_release_async), which it wakes with a futex call. The unit then
 * goes straight to the longest sleeper (a handoff), run by sysmon or by
 * the next sem_wait or sem_trywait, which do that first: a poster that
 * loops back to wait would otherwise take its own unit again before the
 * sleeper runs (it runs only when a P is free), and the sleeper could
 * starve, under GOMAXPROCS=1 for good. A sleeper whose deadline fires
 * takes nothing; its unit goes to the next one, or stays in the value.

 * Errors as glibc 2.36, -1 with errno: sem_init EINVAL above SEM_VALUE_MAX;
 * sem_post EOVERFLOW; sem_trywait EAGAIN; sem_timedwait EINVAL for a bad
 * tv_nsec, sem_clockwait also for a clock other than CLOCK_REALTIME and
 * CLOCK_MONOTONIC, both checked before trying; ETIMEDOUT only once the
 * deadline has passed; EINTR after a handler, as down_slow says.
 */
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <time.h>
#include "../core/deadline.h"
#include "shim.h"

#define SEM_MAGIC 0x67736d31u /* "gsm1" */

struct gsem {
	_Atomic uint32_t value; /* glibc: low half of its 64-bit word */
	uint32_t nwaiters;	/* glibc: the high half */
	int private_;		/* glibc: FUTEX_PRIVATE (0) or shared */
	int pad;		/* glibc: unset */
	uint32_t magic;		/* goshim: zero in glibc's */
};

_Static_assert(sizeof(struct gsem) <= sizeof(sem_t),
	       "semaphore state must fit in sem_t");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "value is the low half of glibc's 64-bit word");

/* A semaphore goshim made, or NULL when glibc owns it. */
static struct gsem *ours(sem_t *sem)
{
	struct gsem *s = (struct gsem *)sem;

	if (s->magic == SEM_MAGIC)
		return s;
	real_init(); /* sem_open is glibc's: nothing of ours may have run */
	return NULL;
}

static bool trydown(struct gsem *s)
{
	sema_run_async(); /* handoffs first (see the top of the file) */
	uint32_t v = atomic_load_explicit(&s->value, memory_order_relaxed);

	while (v > 0)
		if (atomic_compare_exchange_weak_explicit(
			    &s->value, &v, v - 1, memory_order_acquire,
			    memory_order_relaxed))
			return true;
	return false;
}

/* After a failed trydown: 0, or -1 with errno ETIMEDOUT, or EINTR when
 * a signal's handler ended the wait. Restarted under SA_RESTART only
 * without a deadline: the kernel restarts glibc's untimed futex wait
 * (-ERESTARTSYS) but ends a timed one with EINTR whatever the flags say
 * (-ERESTART_RESTARTBLOCK), so sem_timedwait and sem_clockwait fail. */
static int down_slow(struct gsem *s, clockid_t clk,
		     const struct timespec *abstime)
{
	int64_t deadline = deadline_at(clk, abstime);
	int err, intr;

	do {
		/* A cancellation point: a cancel request ends the wait too. */
		shim_testcancel();
		if (deadline >= 0 && nanotime() >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		intr_begin_cancel();
		err = sema_acquire(&s->value, false, deadline, "semaphore");
		intr = intr_end(abstime == NULL);
	} while (intr == ERESTART_CALL || intr == ECANCEL_CALL);
	if (intr) {
		errno = EINTR;
		return -1;
	}
	if (err) {
		errno = ETIMEDOUT;
		return -1;
	}
	return 0;
}

/* glibc's semaphore (process-shared or named): a try first, then the wait,
 * which may sleep in the kernel, under entersyscall. abstime NULL: no
 * deadline; clocked: sem_clockwait on clk, else sem_timedwait. */
static int real_down(sem_t *sem, bool clocked, clockid_t clk,
		     const struct timespec *abstime)
{
	int saved = errno;

	if (real.sem_trywait(sem) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;
	errno = saved;
	if (abstime == NULL)
		return IN_SYSCALL(real.sem_wait(sem));
	if (clocked)
		return IN_SYSCALL(real.sem_clockwait(sem, clk, abstime));
	return IN_SYSCALL(real.sem_timedwait(sem, abstime));
}

GOSHIM_EXPORT int sem_init(sem_t *sem, int pshared, unsigned value)
{
	struct gsem *s = (struct gsem *)sem;

	if (!shim_active() || pshared) {
		int ret = real.sem_init(sem, pshared, value);
		if (ret == 0)
			s->magic = 0;
		return ret;
	}
	if (value > SEM_VALUE_MAX) {
		errno = EINVAL;
		return -1;
	}
	*s = (struct gsem){ .value = value, .magic = SEM_MAGIC };
	return 0;
}

GOSHIM_EXPORT int sem_destroy(sem_t *sem)
{
	return ours(sem) ? 0 : real.sem_destroy(sem);
}

GOSHIM_EXPORT int sem_post(sem_t *sem)
{
	struct gsem *s = ours(sem);
	if (s == NULL)
		return real.sem_post(sem);

	uint32_t v = atomic_load_explicit(&s->value, memory_order_relaxed);
	do {
		if (v == SEM_VALUE_MAX) {
			errno = EOVERFLOW;
			return -1;
		}
	} while (!atomic_compare_exchange_weak(&s->value, &v, v + 1));
	sema_release_async(&s->value);
	return 0;
}

GOSHIM_EXPORT int sem_wait(sem_t *sem)
{
	struct gsem *s = ours(sem);
	if (s == NULL)
		return real_down(sem, false, 0, NULL);
	/* As glibc: a cancellation point even when it need not wait. */
	shim_testcancel();
	return trydown(s) ? 0 : down_slow(s, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int sem_trywait(sem_t *sem)
{
	struct gsem *s = ours(sem);
	if (s == NULL)
		return real.sem_trywait(sem);
	if (trydown(s))
		return 0;
	errno = EAGAIN;
	return -1;
}

GOSHIM_EXPORT int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
	struct gsem *s = ours(sem);
	/* glibc looks at the timeout before the value. */
	if (abstime_check(CLOCK_REALTIME, abstime)) {
		errno = EINVAL;
		return -1;
	}
	if (s == NULL)
		return real_down(sem, false, 0, abstime);
	/* As glibc: a cancellation point even when it need not wait. */
	shim_testcancel();
	return trydown(s) ? 0 : down_slow(s, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int sem_clockwait(sem_t *sem, clockid_t clk,
				const struct timespec *abstime)
{
	struct gsem *s = ours(sem);
	/* glibc looks at the clock and the timeout before the value. */
	if (abstime_check(clk, abstime)) {
		errno = EINVAL;
		return -1;
	}
	if (s == NULL)
		return real_down(sem, true, clk, abstime);
	/* As glibc: a cancellation point even when it need not wait. */
	shim_testcancel();
	return trydown(s) ? 0 : down_slow(s, clk, abstime);
}

GOSHIM_EXPORT int sem_getvalue(sem_t *sem, int *sval)
{
	struct gsem *s = ours(sem);
	if (s == NULL)
		return real.sem_getvalue(sem, sval);
	*sval = (int)atomic_load_explicit(&s->value, memory_order_relaxed);
	return 0;
}
