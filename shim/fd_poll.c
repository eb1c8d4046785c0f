/*
 * fd_poll.c: poll and ppoll with a timeout park the goroutine, looking
 * with the call itself and a zero timeout between parks (fd_look.c).
 *
 * The runtime's own fds are not open as far as the program can tell: a
 * pollfd on one gets POLLNVAL. poll fixes up an answer the kernel gave
 * (which also says the array is there to read), so it costs a compare per
 * pollfd; a thread goshim did not make waits first, and only then sees
 * POLLNVAL.
 */
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include "fd.h"

struct poll_args {
	struct pollfd *fds;
	nfds_t n;
	const sigset_t *mask;
};

static long poll_look(void *arg)
{
	struct poll_args *a = arg;
	struct timespec zero = { 0, 0 };
	long r = FD_NO_OWN_EINTR(SYS6(SYS_ppoll, a->fds, a->n, &zero, a->mask,
				      SIGSET_BYTES, 0));
	return r == 0 ? kept_look(a->mask) : r;
}

/* What a pollfd waits for; errors and hang-ups wake either mode. */
static unsigned poll_modes(short ev)
{
	unsigned m = 0;

	if (ev & (POLLOUT | POLLWRNORM | POLLWRBAND))
		m |= NP_WRITE;
	if (ev & (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND | POLLRDHUP))
		m |= NP_READ;
	return m ? m : NP_READ;
}

/* r, a look's count (or -errno), with every pollfd on one of the
 * runtime's fds counted as POLLNVAL. */
static long poll_hide(struct pollfd *fds, nfds_t n, long r)
{
	if (r < 0 || atomic_load_explicit(&fd_runtime_min,
					  memory_order_relaxed) == INT_MAX)
		return r;
	for (nfds_t i = 0; i < n; i++)
		if (fd_hidden(fds[i].fd)) {
			r += fds[i].revents == 0;
			fds[i].revents = POLLNVAL;
		}
	return r;
}

/* poll and ppoll on a goroutine: the count, or -errno. */
static long poll_park(struct pollfd *fds, nfds_t n, int64_t deadline,
		      const sigset_t *mask)
{
	struct poll_args a = { fds, n, mask };
	struct netpoll_req few[FEW], *reqs;
	struct timespec ts;
	bool native;
	long r;

	fd_cancel_point();
	/* The first look also checks the arguments. */
	r = poll_hide(fds, n, poll_look(&a));
	if (r != 0)
		return r;
	reqs = reqs_alloc(few, n);
	if (reqs == NULL)
		return -ENOMEM;
	for (nfds_t i = 0; i < n; i++) {
		reqs[i].fd = fds[i].fd;
		reqs[i].modes = poll_modes(fds[i].events);
	}
	r = fd_look_loop(poll_look, &a, reqs, (int)n, deadline, &native);
	if (reqs != few)
		free(reqs);
	if (r == -ECANCELED)
		shim_testcancel();
	if (native)
		r = SYS_CANCEL(SYS6(SYS_ppoll, fds, n, deadline_left(&ts, deadline),
				    mask, SIGSET_BYTES, 0));
	return r;
}

static long raw_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000L };
	return SYS6(SYS_ppoll, fds, n, timeout < 0 ? NULL : &ts, NULL, 0, 0);
}

GOSHIM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (!fd_parks() || timeout == 0)
		return (int)poll_hide(
			fds, n,
			FD_NOWAIT_CALL(poll, raw_poll(fds, n, timeout), fds, n,
				       timeout));
	return (int)fd_ret(poll_park(fds, n, deadline_ms(timeout), NULL));
}

/* The C library's ppoll leaves the program's timeout as it was (the
 * kernel writes what is left into it). */
static long raw_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		      const sigset_t *mask)
{
	struct timespec t;
	if (ts) {
		t = *ts;
		ts = &t;
	}
	return SYS6(SYS_ppoll, fds, n, ts, mask, SIGSET_BYTES, 0);
}

GOSHIM_EXPORT int ppoll(struct pollfd *fds, nfds_t n,
			const struct timespec *ts, const sigset_t *mask)
{
	if (!fd_parks() || ts_zero(ts)) {
		long r = poll_hide(fds, n,
				   FD_NOWAIT_CALL(ppoll,
						  raw_ppoll(fds, n, ts, mask),
						  fds, n, ts, mask));
		return r == 0 ? (int)fd_ret(kept_look(mask)) : (int)r;
	}
	if (ts && !ts_valid(ts))
		return (int)fd_ret(-EINVAL);
	return (int)fd_ret(poll_park(fds, n, deadline_after(ts), mask));
}

GOSHIM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			     size_t fdslen)
{
	if (fdslen / sizeof *fds < n)
		__chk_fail();
	return poll(fds, n, timeout);
}

GOSHIM_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
			      const struct timespec *ts, const sigset_t *mask,
			      size_t fdslen)
{
	if (fdslen / sizeof *fds < n)
		__chk_fail();
	return ppoll(fds, n, ts, mask);
}
