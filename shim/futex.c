/*
 * futex.c: syscall(SYS_futex, ...) on a private futex parks a goroutine
 * instead of holding its OS thread in the kernel (core/futex.c holds the
 * parked ones), with the kernel's results: the value compared atomically
 * with wakers, EAGAIN, ETIMEDOUT, EINTR after a handler (an untimed wait
 * starts over under SA_RESTART, as the kernel restarts it), EINVAL,
 * EFAULT, ENOSYS in the kernel's order, the counts it returns.
 *
 * Who waits where:
 *  - a goroutine's FUTEX_WAIT and FUTEX_WAIT_BITSET: in the table, private
 *    ones always, shared (non-PRIVATE) ones on a private anonymous page,
 *    which the kernel keys by this process and address as a private one
 *    (libstdc++'s std::atomic wait makes shared calls on any memory);
 *    the two never meet each other, in the kernel or here;
 *  - every other waiter stays in the kernel: threads goshim did not create,
 *    every thread before the scheduler starts, shared futexes on shared
 *    memory or a file's pages (other processes may wake them), a wait made
 *    from a signal handler that interrupted this thread inside the table;
 *  - PI futexes, FUTEX_WAIT_REQUEUE_PI, futex_waitv and anything unknown
 *    are the kernel's, under entersyscall (blocking.c).
 *
 * The wake rule: every wake, private or shared, from anyone once the
 * scheduler runs, first wakes the table's waiters on the word (oldest
 * first, up to the count), then passes what is left of the count to the kernel for its own
 * waiters, and returns the sum. A wake of 1 with both kinds waiting wakes
 * one of the table's; the kernel's waiter waits for the next wake, as it
 * would if the other had come first in the kernel's queue. A wake never
 * wakes more than its count in all and never fewer than there are waiters
 * of both kinds up to it. FUTEX_WAKE_OP does its operation once, in the
 * table's locks, then wakes each word so; FUTEX_REQUEUE and
 * FUTEX_CMP_REQUEUE wake and move the table's waiters (the value compared
 * under its locks), then the kernel's with the counts left (woken plus
 * moved, summed). If the word changes between the two compares, the
 * kernel's part fails with EAGAIN after the table's was done: the kernel's
 * waiters it would have moved are woken instead (a spurious wakeup, never
 * a lost one), and the call succeeds. A call whose table part did nothing
 * returns the kernel's result as it is, errors included.
 *
 * Not as the kernel: a FUTEX_WAKE_OP whose second word is readable but
 * not writable faults (SIGSEGV) where the kernel says EFAULT; a wait on
 * FUTEX_CLOCK_REALTIME does not follow a change of the clock during the
 * wait; a wake made with the syscall instruction itself (not through
 * syscall()) meets only the kernel's waiters.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include "../core/deadline.h"
#include "shim.h"
#include "../core/futex.h"
#include "../core/sys.h"

static long kernel(long a0, long op, long val, long a3, long a4, long a5)
{
	return SYS6(SYS_futex, a0, op, val, a3, a4, a5);
}

static int at_least_one(long val)
{
	return (int)val > 0 ? (int)val : 1;
}

/* The deadline of a wait (monotonic ns) from its timeout: relative for
 * FUTEX_WAIT, absolute on CLOCK_MONOTONIC or CLOCK_REALTIME for
 * FUTEX_WAIT_BITSET. 0 or -errno. */
static long wait_deadline(const void *uts, int cmd, bool realtime,
			  int64_t *deadline)
{
	struct timespec ts;

	*deadline = -1;
	if (uts == NULL)
		return 0;
	if (sys_copy_in(&ts, uts, sizeof ts) != 0)
		return -EFAULT;
	if (!ts_valid(&ts))
		return -EINVAL;
	*deadline = cmd == FUTEX_WAIT
			    ? deadline_after(&ts)
			    : deadline_at(realtime ? CLOCK_REALTIME
						   : CLOCK_MONOTONIC,
					  &ts);
	return 0;
}

static bool misaligned(long uaddr)
{
	return uaddr & 3;
}

/* A goroutine's wait in the table; false: the kernel's after all. */
static bool do_wait(const long *a, int cmd, long *ret)
{
	_Atomic uint32_t *uaddr = (_Atomic uint32_t *)a[0];
	uint32_t bitset = cmd == FUTEX_WAIT ? FUTEX_BITSET_MATCH_ANY
					    : (uint32_t)a[5];
	int64_t deadline;

	if ((*ret = wait_deadline((const void *)a[3], cmd,
				  a[1] & FUTEX_CLOCK_REALTIME, &deadline)))
		return true;
	if (bitset == 0 || misaligned(a[0])) {
		*ret = -EINVAL;
		return true;
	}
	bool shared = !(a[1] & FUTEX_PRIVATE_FLAG);
	for (;;) {
		if (!sys_readable(uaddr)) {
			*ret = -EFAULT;
			return true;
		}
		if (shared && !futex_private_page(uaddr))
			return false;
		intr_begin();
		int err = futex_wait(uaddr, shared, (uint32_t)a[2], bitset,
				     deadline);
		int intr = intr_end(a[3] == 0);
		if (err == FUTEX_NOT_HERE)
			return false;
		if (intr == ERESTART_CALL)
			continue;
		*ret = intr ? -EINTR : -err;
		return true;
	}
}

static long do_wake(const long *a, uint32_t bitset)
{
	if (bitset == 0 || misaligned(a[0]))
		return -EINVAL;
	int n = at_least_one(a[2]);
	int woken = futex_wake((const void *)a[0], !(a[1] & FUTEX_PRIVATE_FLAG),
			       n, bitset);
	if (woken == n)
		return woken;
	long k = kernel(a[0], a[1], n - woken, 0, 0, (long)bitset);
	return woken == 0 ? k : k < 0 ? woken : woken + k;
}

static long do_requeue(const long *a, bool cmp)
{
	int nwake = (int)a[2], nreq = (int)a[3], moved;
	long priv = a[1] & FUTEX_PRIVATE_FLAG;

	if (nwake < 0 || nreq < 0 || misaligned(a[0]) || misaligned(a[4]))
		return -EINVAL;
	if (cmp && !sys_readable((const void *)a[0]))
		return -EFAULT;
	/* A word the kernel would refuse (past the lowest user address
	 * space's end; for a shared futex, not mapped) must not get the
	 * table's waiters: its own answer to a requeue of nobody says. */
	if (!priv || (unsigned long)a[4] + 4 > (1ul << 47)) {
		long probe = kernel(a[4], FUTEX_REQUEUE | priv, 0, 0, a[4], 0);
		if (probe < 0)
			return probe;
	}
	int woken = futex_requeue((const _Atomic uint32_t *)a[0],
				  (const void *)a[4], !priv, nwake, nreq, cmp,
				  (uint32_t)a[5], &moved);
	if (woken < 0)
		return woken;
	int lwake = nwake - woken, lreq = nreq - moved;
	if (lwake == 0 && lreq == 0)
		return woken + moved;
	long k = kernel(a[0], a[1], lwake, lreq, a[4], a[5]);
	if (woken + moved == 0)
		return k;
	if (k == -EAGAIN) {
		long n = (long)lwake + lreq;
		k = kernel(a[0], FUTEX_WAKE | priv, n > INT_MAX ? INT_MAX : n,
			   0, 0, 0);
	}
	return woken + moved + (k < 0 ? 0 : k);
}

static long do_wake_op(const long *a)
{
	uint32_t op = (uint32_t)a[5];
	long priv = a[1] & FUTEX_PRIVATE_FLAG;
	int n1 = at_least_one(a[2]), n2 = at_least_one(a[3]), w1, w2;

	if (misaligned(a[0]) || misaligned(a[4]))
		return -EINVAL;
	if (!futex_op_valid(op))
		return -ENOSYS;
	if (!sys_readable((const void *)a[4]))
		return -EFAULT;
	int held = futex_wake_op((const void *)a[0], (_Atomic uint32_t *)a[4],
				 !priv, n1, n2, op, &w1, &w2);
	if (held < 0)
		return held;
	long total = w1 + w2, k;
	if (w1 < n1 &&
	    (k = kernel(a[0], FUTEX_WAKE | priv, n1 - w1, 0, 0, 0)) > 0)
		total += k;
	if (held && w2 < n2 &&
	    (k = kernel(a[4], FUTEX_WAKE | priv, n2 - w2, 0, 0, 0)) > 0)
		total += k;
	return total;
}

static bool futex_call(const long *a, long *ret)
{
	int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;

	if (!atomic_load_explicit(&runtime_running, memory_order_acquire))
		return false;
	/* The kernel refuses it with ENOSYS. */
	if ((op & FUTEX_CLOCK_REALTIME) && cmd != FUTEX_WAIT_BITSET)
		return false;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		return on_goroutine() && do_wait(a, cmd, ret);
	case FUTEX_WAKE:
		*ret = do_wake(a, FUTEX_BITSET_MATCH_ANY);
		return true;
	case FUTEX_WAKE_BITSET:
		*ret = do_wake(a, (uint32_t)a[5]);
		return true;
	case FUTEX_REQUEUE:
		*ret = do_requeue(a, false);
		return true;
	case FUTEX_CMP_REQUEUE:
		*ret = do_requeue(a, true);
		return true;
	case FUTEX_WAKE_OP:
		*ret = do_wake_op(a);
		return true;
	default:
		return false;
	}
}

bool shim_futex_syscall(const long *a, long *ret)
{
	long r;

	if (!futex_call(a, &r))
		return false;
	if (r < 0) {
		errno = (int)-r;
		r = -1;
	}
	*ret = r;
	return true;
}
