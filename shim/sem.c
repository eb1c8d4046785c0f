/*
 * sem.c: unnamed POSIX semaphores on core/semaphore.c.
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
 * Errors as glibc 2.36, -1 with errno: sem_init EINVAL above SEM_VALUE_MAX;
 * sem_post EOVERFLOW; sem_trywait EAGAIN; sem_timedwait EINVAL for a bad
 * tv_nsec, sem_clockwait also for a clock other than CLOCK_REALTIME and
 * CLOCK_MONOTONIC, both checked before trying; ETIMEDOUT only once the
 * deadline has passed; EINTR after a handler, as down_slow says. sem_wait
 * and the timed forms are cancellation points even when they need not
 * wait, as glibc's.
 */
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <time.h>
#include "../core/deadline.h"
#include "../core/semaphore.h"
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

/* After a failed trydown: 0, or -1 with errno ETIMEDOUT, or EINTR when
 * a signal's handler ended the wait. Restarted under SA_RESTART only
 * without a deadline: the kernel restarts glibc's untimed futex wait
 * (-ERESTARTSYS) but ends a timed one with EINTR whatever the flags say
 * (-ERESTART_RESTARTBLOCK), so sem_timedwait and sem_clockwait fail. */
static int down_slow(struct gsem *s, clockid_t clk,
		     const struct timespec *abstime)
{
	int64_t deadline = deadline_at(clk, abstime);
	int err;

	do {
		/* A cancellation point: a cancel request ends the wait too. */
		shim_testcancel();
		err = semaphore_down(&s->value, deadline, abstime == NULL);
	} while (err == ERESTART_CALL || err == ECANCEL_CALL);
	if (err) {
		errno = err;
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
		return IN_SYSCALL_AGAIN(real.sem_wait(sem));
	if (clocked)
		return IN_SYSCALL_AGAIN(real.sem_clockwait(sem, clk, abstime));
	return IN_SYSCALL_AGAIN(real.sem_timedwait(sem, abstime));
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

	int err = semaphore_up(&s->value);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

GOSHIM_EXPORT int sem_trywait(sem_t *sem)
{
	struct gsem *s = ours(sem);
	if (s == NULL)
		return real.sem_trywait(sem);
	if (semaphore_trydown(&s->value))
		return 0;
	errno = EAGAIN;
	return -1;
}

/* Every waiting form: abstime NULL waits for good; clocked: sem_clockwait
 * on clk, else sem_timedwait on CLOCK_REALTIME. */
static int down(sem_t *sem, bool clocked, clockid_t clk,
		const struct timespec *abstime)
{
	struct gsem *s = ours(sem);
	/* glibc looks at the clock and the timeout before the value. */
	if (abstime_check(clk, abstime)) {
		errno = EINVAL;
		return -1;
	}
	if (s == NULL)
		return real_down(sem, clocked, clk, abstime);
	/* As glibc: a cancellation point even when it need not wait. */
	shim_testcancel();
	return semaphore_trydown(&s->value) ? 0 : down_slow(s, clk, abstime);
}

GOSHIM_EXPORT int sem_wait(sem_t *sem)
{
	return down(sem, false, CLOCK_REALTIME, NULL);
}

GOSHIM_EXPORT int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
	return down(sem, false, CLOCK_REALTIME, abstime);
}

GOSHIM_EXPORT int sem_clockwait(sem_t *sem, clockid_t clk,
				const struct timespec *abstime)
{
	return down(sem, true, clk, abstime);
}

GOSHIM_EXPORT int sem_getvalue(sem_t *sem, int *sval)
{
	struct gsem *s = ours(sem);
	if (s == NULL)
		return real.sem_getvalue(sem, sval);
	*sval = (int)atomic_load_explicit(&s->value, memory_order_relaxed);
	return 0;
}
