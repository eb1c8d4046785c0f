/*
 * fd_look.c: what poll, select and the epoll waits share when they park
 * the goroutine (fd_poll.c, fd_select.c, fd_epoll.c).
 *
 * The kernel stays the judge of readiness: each look is the call itself
 * with a zero timeout, so every POLL* bit, POLLNVAL, select's EBADF, the
 * epoll events and every argument error are exactly the kernel's. Between
 * looks the goroutine parks on the netpoller for every fd of the set,
 * until one of them has an event or the timeout passes, then looks again;
 * so the last answer, a timeout's included, is a look's. A zero timeout
 * never waits and goes straight to the C library. If none of the fds can
 * be watched (epoll could not be made; an epoll fd nested too deep for
 * another level) the blocking call waits out what is left, under
 * entersyscall.
 *
 * Signal masks (ppoll, pselect, epoll_pwait*): every look is made with the
 * call's mask, so a signal it lets through that is pending when the call
 * starts, or when it wakes, is handled and ends the call with EINTR, as
 * natively. A signal kept in the goroutine rather than pending on a thread
 * (core/sigthread.c) is looked for after the kernel's look (kept_look), and
 * handled the same way. While parked, the park is not interrupted: a
 * signal sent to the process then goes to whichever thread does not block
 * it, one sent to the goroutine that its own mask blocks is kept, and the
 * call sees either only at its next look (if a thread still has it
 * pending, or it is kept).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "fd.h"

long fd_look_loop(look_fn look, void *arg, struct netpoll_req *reqs, int n,
		   int64_t deadline, bool *native)
{
	*native = false;
	for (;;) {
		for (int i = 0; i < n; i++)
			netpoll_arm(&reqs[i], reqs[i].fd, reqs[i].modes);
		long r = look(arg);
		if (r != 0 || (deadline >= 0 && nanotime() >= deadline))
			return r;
		int e = netpoll_wait(reqs, n, deadline);
		if (e == EPERM) {
			*native = true;
			return 0;
		}
		/* The caller frees what it holds, then acts (cancelled). */
		if (e == ECANCELED)
			return -ECANCELED;
		/* A handler ran: what is ready wins, else EINTR (the poll
		 * family never restarts). */
		if (e == EINTR || e == ERESTART) {
			r = look(arg);
			return r != 0 ? r : -EINTR;
		}
	}
}

bool ts_zero(const struct timespec *ts)
{
	return ts && ts->tv_sec == 0 && ts->tv_nsec == 0;
}

long kept_look(const sigset_t *mask)
{
	uint64_t tmp;

	if (mask == NULL || !g_sigkept())
		return 0;
	memcpy(&tmp, mask, sizeof tmp); /* the look has just read it */
	return sigthread_deliver_under(getg(), tmp) ? -EINTR : 0;
}

struct netpoll_req *reqs_alloc(struct netpoll_req *few, size_t n)
{
	return n <= FEW ? few : malloc(n * sizeof *few);
}
