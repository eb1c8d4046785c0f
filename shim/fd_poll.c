/*
 * fd_poll.c: poll and select with a timeout park the goroutine.
 *
 * The kernel stays the judge of readiness: each look is the call itself
 * with a zero timeout, so every POLL* bit, POLLNVAL and select's EBADF are
 * exactly the kernel's. Between looks the goroutine parks on the
 * netpoller for every fd of the set, until one of them has an event or
 * the timeout passes, then looks again. A zero timeout never waits and
 * goes straight to the C library. If none of the fds can be watched (say
 * epoll could not be made) the C library's call waits out what is left,
 * under entersyscall.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include "fd.h"

#define FEW 8

/* Look without blocking; 0 means nothing yet. */
typedef long (*look_fn)(void *);

/* Arm reqs, look, park; until the look reports or the deadline passes.
 * *native: nothing could be watched. */
static long wait_loop(look_fn look, void *arg, struct netpoll_req *reqs,
		      int n, int64_t deadline, bool *native)
{
	*native = false;
	for (;;) {
		for (int i = 0; i < n; i++)
			netpoll_arm(&reqs[i], reqs[i].fd, reqs[i].modes);
		long r = look(arg);
		if (r != 0 || (deadline >= 0 && nanotime() >= deadline))
			return r;
		if (netpoll_wait(reqs, n, deadline) == EPERM) {
			*native = true;
			return 0;
		}
	}
}

static int64_t deadline_in(int64_t ns)
{
	int64_t now = nanotime();
	return ns > INT64_MAX - now ? INT64_MAX : now + ns;
}

static struct netpoll_req *reqs_alloc(struct netpoll_req *few, size_t n)
{
	return n <= FEW ? few : malloc(n * sizeof *few);
}

/* ---- poll --------------------------------------------------------------- */

struct poll_args {
	struct pollfd *fds;
	nfds_t n;
};

static long poll_look(void *arg)
{
	struct poll_args *a = arg;
	struct timespec zero = { 0, 0 };
	return SYS6(SYS_ppoll, a->fds, a->n, &zero, NULL, 0, 0);
}

static long raw_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000L };
	return SYS6(SYS_ppoll, fds, n, timeout < 0 ? NULL : &ts, NULL, 0, 0);
}

GOSHIM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct poll_args a = { fds, n };
	struct netpoll_req few[FEW], *reqs;
	int64_t deadline;
	bool native;
	long r;

	if (!fd_parks() || timeout == 0)
		return (int)FD_REAL(poll, raw_poll(fds, n, timeout), fds, n,
				    timeout);
	deadline = timeout < 0 ? -1 : deadline_in(timeout * 1000000LL);
	/* The first look also checks the arguments. */
	r = poll_look(&a);
	if (r != 0)
		return (int)fd_ret(r);
	reqs = reqs_alloc(few, n);
	if (reqs == NULL)
		return (int)fd_ret(-ENOMEM);
	for (nfds_t i = 0; i < n; i++) {
		short ev = fds[i].events;
		reqs[i].fd = fds[i].fd;
		reqs[i].modes =
			(ev & (POLLOUT | POLLWRNORM | POLLWRBAND) ? NP_WRITE
								   : 0) |
			(ev & (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND |
			       POLLRDHUP)
				 ? NP_READ
				 : 0);
		/* Errors and hang-ups wake either mode. */
		if (reqs[i].modes == 0)
			reqs[i].modes = NP_READ;
	}
	r = wait_loop(poll_look, &a, reqs, (int)n, deadline, &native);
	if (reqs != few)
		free(reqs);
	if (native) {
		int64_t left = deadline < 0 ? 0 : deadline - nanotime();
		return IN_SYSCALL(real.poll(
			fds, n,
			deadline < 0 ? -1
			: left <= 0  ? 0
				     : (int)((left + 999999) / 1000000)));
	}
	return (int)fd_ret(r);
}

GOSHIM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			     size_t fdslen)
{
	if (fdslen / sizeof *fds < n)
		__chk_fail();
	return poll(fds, n, timeout);
}

/* ---- select ------------------------------------------------------------- */

struct select_args {
	int nfds;
	size_t bytes;	 /* of each set in use, as the kernel reads them */
	fd_set *set[3];	 /* the program's: read, write, except */
	fd_set look[3];	 /* what a look may overwrite */
};

static long select_look(void *arg)
{
	struct select_args *a = arg;
	struct timespec zero = { 0, 0 };
	fd_set *s[3];

	for (int i = 0; i < 3; i++) {
		s[i] = a->set[i] ? &a->look[i] : NULL;
		if (s[i])
			memcpy(s[i], a->set[i], a->bytes);
	}
	long r = SYS6(SYS_pselect6, a->nfds, s[0], s[1], s[2], &zero, NULL);
	for (int i = 0; i < 3 && r > 0; i++)
		if (s[i])
			memcpy(a->set[i], s[i], a->bytes);
	return r;
}

/* What fd waits for: the read and except sets (EPOLLPRI wakes readers)
 * read, the write set write. */
static unsigned select_modes(const struct select_args *a, int fd)
{
	unsigned m = 0;

	if ((a->set[0] && FD_ISSET(fd, a->set[0])) ||
	    (a->set[2] && FD_ISSET(fd, a->set[2])))
		m |= NP_READ;
	if (a->set[1] && FD_ISSET(fd, a->set[1]))
		m |= NP_WRITE;
	return m;
}

static long raw_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		       struct timeval *tv)
{
	struct timespec ts;
	if (tv) {
		ts.tv_sec = tv->tv_sec + tv->tv_usec / 1000000;
		ts.tv_nsec = tv->tv_usec % 1000000 * 1000L;
	}
	return SYS6(SYS_pselect6, nfds, rd, wr, ex, tv ? &ts : NULL, NULL);
}

/* Linux tells select's caller how much of the timeout is left. */
static void time_left(struct timeval *tv, int64_t deadline)
{
	int64_t left = deadline - nanotime();
	if (left < 0)
		left = 0;
	tv->tv_sec = left / 1000000000;
	tv->tv_usec = left % 1000000000 / 1000;
}

GOSHIM_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			 struct timeval *tv)
{
	struct select_args a = { nfds, 0, { rd, wr, ex }, { { { 0 } } } };
	struct netpoll_req few[FEW], *reqs;
	int64_t deadline = -1;
	bool native = false;
	long r;
	int n = 0;

	/* Larger sets than fd_set (nfds > FD_SETSIZE) are the C
	 * library's too. */
	if (!fd_parks() || nfds < 0 || nfds > FD_SETSIZE ||
	    (tv && tv->tv_sec == 0 && tv->tv_usec == 0))
		return (int)FD_REAL(select, raw_select(nfds, rd, wr, ex, tv),
				    nfds, rd, wr, ex, tv);
	if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0))
		return (int)fd_ret(-EINVAL);
	if (tv)
		deadline = deadline_in(
			tv->tv_sec > INT64_MAX / 1000000000 - 1
				? INT64_MAX
				: tv->tv_sec * 1000000000 + tv->tv_usec * 1000);
	a.bytes = (size_t)(nfds + 63) / 64 * 8;
	r = select_look(&a);
	if (r == 0) {
		for (int fd = 0; fd < nfds; fd++)
			n += select_modes(&a, fd) != 0;
		reqs = reqs_alloc(few, (size_t)n);
		if (reqs == NULL)
			return (int)fd_ret(-ENOMEM);
		n = 0;
		for (int fd = 0; fd < nfds; fd++) {
			unsigned m = select_modes(&a, fd);
			if (m) {
				reqs[n].fd = fd;
				reqs[n++].modes = m;
			}
		}
		r = wait_loop(select_look, &a, reqs, n, deadline, &native);
		if (reqs != few)
			free(reqs);
		if (native) {
			if (tv)
				time_left(tv, deadline);
			return IN_SYSCALL(real.select(nfds, rd, wr, ex, tv));
		}
		/* Timed out: nothing is ready, all sets come back empty. */
		for (int i = 0; i < 3 && r == 0; i++)
			if (a.set[i])
				memset(a.set[i], 0, a.bytes);
	}
	if (tv)
		time_left(tv, deadline);
	return (int)fd_ret(r);
}
