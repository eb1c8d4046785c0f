/*
 * fd_poll.c: poll, ppoll, select, pselect, epoll_wait, epoll_pwait and
 * epoll_pwait2 with a timeout park the goroutine.
 *
 * The kernel stays the judge of readiness: each look is the call itself
 * with a zero timeout, so every POLL* bit, POLLNVAL, select's EBADF, the
 * epoll events and every argument error are exactly the kernel's. Between
 * looks the goroutine parks on the netpoller for every fd of the set (for
 * epoll, on the program's epoll fd, which is itself pollable: it is
 * readable when it has events), until one of them has an event or the
 * timeout passes, then looks again; so the last answer, a timeout's
 * included, is a look's. A zero timeout never waits and goes straight to
 * the C library. If none of the fds can be watched (epoll could not be
 * made; an epoll fd nested too deep for another level) the blocking call
 * waits out what is left, under entersyscall.
 *
 * Timeouts the kernel would refuse are refused first, as it does (EINVAL,
 * and EFAULT for epoll_pwait2's, which the C library does not copy).
 * select's sets are copied for the looks only as far as the kernel reads
 * them: nfds bits, but never beyond the fd table, and only once the kernel
 * has said it can read and write them (EFAULT).
 *
 * Signal masks (ppoll, pselect, epoll_pwait*): every look is made with the
 * call's mask, so a signal it lets through that is pending when the call
 * starts, or when it wakes, is handled and ends the call with EINTR, as
 * natively (an epoll look with a zero timeout does not look at signals: an
 * empty ppoll with the mask does, after it). A signal kept in the
 * goroutine rather than pending on a thread (core/gsignal.c) is looked
 * for after the kernel's look, and handled the same way. While parked,
 * the park is not interrupted: a signal sent to the process then goes to
 * whichever thread does not block it, one sent to the goroutine that its
 * own mask blocks is kept, and the call sees either only at its next
 * look (if a thread still has it pending, or it is kept).
 *
 * The runtime's own fds are not open as far as the program can tell: a
 * pollfd on one gets POLLNVAL, a set holding one EBADF, an epoll call on
 * one EBADF. poll fixes up an answer the kernel gave (which also says
 * the array is there to read), so it costs a compare per pollfd; a
 * thread goshim did not make waits first, and only then sees POLLNVAL.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include "fd.h"

#define FEW 8
#define SIGSET_BYTES (_NSIG / 8) /* the kernel's sigset_t */

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

static int64_t deadline_in(int64_t ns)
{
	int64_t now = nanotime();
	return ns > INT64_MAX - now ? INT64_MAX : now + ns;
}

/* Milliseconds, negative for none. */
static int64_t deadline_ms(int ms)
{
	return ms < 0 ? -1 : deadline_in(ms * 1000000LL);
}

/* sec >= 0 and 0 <= nsec < 1e9 from now; too far saturates. */
static int64_t deadline_sec(int64_t sec, int64_t nsec)
{
	return deadline_in(sec > INT64_MAX / 1000000000 - 1
				   ? INT64_MAX
				   : sec * 1000000000 + nsec);
}

/* A valid timespec, NULL for none. */
static int64_t deadline_ts(const struct timespec *ts)
{
	return ts ? deadline_sec(ts->tv_sec, ts->tv_nsec) : -1;
}

static bool ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}

static bool ts_zero(const struct timespec *ts)
{
	return ts && ts->tv_sec == 0 && ts->tv_nsec == 0;
}

/* What is left of the time for the blocking call: NULL for forever. */
static struct timespec *time_left(struct timespec *ts, int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return NULL;
	left = deadline - nanotime();
	if (left < 0)
		left = 0;
	ts->tv_sec = left / 1000000000;
	ts->tv_nsec = left % 1000000000;
	return ts;
}

/* After a look that found nothing: a signal kept in the goroutine
 * (core/gsignal.c; no thread has it pending, so the kernel's look cannot
 * see it) that mask lets through is handled now, under mask: -EINTR. */
static long kept_look(const sigset_t *mask)
{
	uint64_t tmp;

	if (mask == NULL || !g_sigkept())
		return 0;
	memcpy(&tmp, mask, sizeof tmp); /* the look has just read it */
	return gsignal_deliver_under(getg(), tmp) ? -EINTR : 0;
}

/* A pending signal that mask lets through is handled now: -EINTR. */
static long signal_look(const sigset_t *mask)
{
	struct timespec zero = { 0, 0 };
	long r = mask ? FD_NO_OWN_EINTR(SYS6(SYS_ppoll, NULL, 0, &zero, mask,
					     SIGSET_BYTES, 0))
		      : 0;
	return r == 0 ? kept_look(mask) : r;
}

static struct netpoll_req *reqs_alloc(struct netpoll_req *few, size_t n)
{
	return n <= FEW ? few : malloc(n * sizeof *few);
}

/* ---- poll, ppoll -------------------------------------------------------- */

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
	r = wait_loop(poll_look, &a, reqs, (int)n, deadline, &native);
	if (reqs != few)
		free(reqs);
	if (r == -ECANCELED)
		shim_testcancel();
	if (native)
		r = SYS_CANCEL(SYS6(SYS_ppoll, fds, n, time_left(&ts, deadline),
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
	return (int)fd_ret(poll_park(fds, n, deadline_ts(ts), mask));
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

/* ---- select, pselect ---------------------------------------------------- */

/* pselect6's last argument. */
struct sigmask_arg {
	const sigset_t *mask;
	size_t bytes;
};

struct select_args {
	int nfds;
	size_t bytes;	  /* of each set in use, as the kernel reads them */
	fd_set *set[3];	  /* the program's: read, write, except */
	uint64_t *look[3]; /* what a look may overwrite */
	struct sigmask_arg *mask;
};

static long select_look(void *arg)
{
	struct select_args *a = arg;
	struct timespec zero = { 0, 0 };
	uint64_t *s[3];

	for (int i = 0; i < 3; i++) {
		s[i] = a->set[i] ? a->look[i] : NULL;
		if (s[i])
			memcpy(s[i], a->set[i], a->bytes);
	}
	long r = FD_NO_OWN_EINTR(SYS6(SYS_pselect6, a->nfds, s[0], s[1],
				      s[2], &zero, a->mask));
	for (int i = 0; i < 3 && r > 0; i++)
		if (s[i])
			memcpy(a->set[i], s[i], a->bytes);
	return r == 0 && a->mask ? kept_look(a->mask->mask) : r;
}

/* Bit fd of a set of any size, as the kernel reads it. */
static bool in_set(const fd_set *set, int fd)
{
	return set && ((const uint64_t *)set)[fd / 64] >> (fd % 64) & 1;
}

/* What fd waits for: the read and except sets (EPOLLPRI wakes readers)
 * read, the write set write. */
static unsigned select_modes(const struct select_args *a, int fd)
{
	unsigned m = 0;

	if (in_set(a->set[0], fd) || in_set(a->set[2], fd))
		m |= NP_READ;
	if (in_set(a->set[1], fd))
		m |= NP_WRITE;
	return m;
}

/* A set holds one of the runtime's fds: EBADF, as for any fd not open.
 * Only an nfds past the lowest of them looks, at the words of each set
 * that can hold them, copied a few at a time (they are few, and close
 * together); a set the kernel cannot read is left to it (EFAULT). */
static bool select_hides(int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	fd_set *set[3] = { rd, wr, ex };
	int lo = atomic_load_explicit(&fd_runtime_min, memory_order_relaxed);
	int hi = atomic_load_explicit(&fd_runtime_end, memory_order_relaxed);

	if (__builtin_expect(nfds <= lo, 1))
		return false;
	if (hi > nfds)
		hi = nfds;
	for (int s = 0; s < 3; s++)
		for (int base = lo / 64 * 64; set[s] && base < hi;
		     base += 256) {
			uint64_t w[4];
			int nw = (hi - base + 63) / 64 < 4 ? (hi - base + 63) / 64
							   : 4;
			if (sys_copy_in(w, (uint64_t *)set[s] + base / 64,
					(size_t)nw * sizeof *w) != 0)
				break;
			for (int fd = base > lo ? base : lo;
			     fd < hi && fd < base + 64 * nw; fd++)
				if ((w[(fd - base) / 64] >> (fd % 64) & 1) &&
				    fd_runtime(fd))
					return true;
		}
	return false;
}

/* select and pselect on a goroutine, nfds >= 0: the count, or -errno. */
static long select_park(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			int64_t deadline, const sigset_t *mask)
{
	struct sigmask_arg sm = { mask, SIGSET_BYTES };
	struct select_args a = { nfds, 0, { rd, wr, ex }, { NULL },
				 mask ? &sm : NULL };
	uint64_t few_sets[3][FD_SETSIZE / 64], *sets = few_sets[0];
	struct netpoll_req few[FEW], *reqs;
	struct timespec ts;
	bool native = false;
	long r;
	int n = 0;

	fd_cancel_point();
	if (nfds > FD_SETSIZE) {
		/* Linux reads a set larger than fd_set only as far as
		 * the fd table goes (FDSize), so may the looks. */
		int max = proc_status_get("FDSize:");
		if (max < 0)
			goto blocking;
		/* Bits beyond are not read: the same call, on what is. */
		if (nfds > max)
			nfds = a.nfds = max;
	}
	a.bytes = (size_t)(nfds + 63) / 64 * 8;
	if (a.bytes > sizeof few_sets[0] &&
	    (sets = malloc(3 * a.bytes)) == NULL)
		goto blocking;
	for (int i = 0; i < 3; i++)
		a.look[i] = sets + i * a.bytes / 8;
	/* The kernel reads the sets and writes them back: a set it cannot
	 * is its EFAULT (here at once), not a SIGSEGV in the looks' copies.
	 * The same bytes go back, so the check changes nothing. */
	for (int i = 0; i < 3; i++)
		if (a.set[i] &&
		    (sys_copy_in(a.look[i], a.set[i], a.bytes) != 0 ||
		     sys_copy_out(a.set[i], a.look[i], a.bytes) != 0)) {
			r = -EFAULT;
			goto out;
		}
	r = select_look(&a);
	if (r != 0)
		goto out;
	for (int fd = 0; fd < nfds; fd++)
		n += select_modes(&a, fd) != 0;
	reqs = reqs_alloc(few, (size_t)n);
	if (reqs == NULL) {
		r = -ENOMEM;
		goto out;
	}
	n = 0;
	for (int fd = 0; fd < nfds; fd++) {
		unsigned m = select_modes(&a, fd);
		/* An fd that is not open passed the look only because it
		 * lies beyond the fd table, where Linux does not read the
		 * sets: it waits for nothing (its EBADF from netpoll_wait
		 * would have the loop spin). */
		if (m && SYS2(SYS_fcntl, fd, F_GETFD) >= 0) {
			reqs[n].fd = fd;
			reqs[n++].modes = m;
		}
	}
	r = wait_loop(select_look, &a, reqs, n, deadline, &native);
	if (reqs != few)
		free(reqs);
	/* Timed out: nothing is ready, all sets come back empty. */
	for (int i = 0; i < 3 && r == 0 && !native; i++)
		if (a.set[i])
			memset(a.set[i], 0, a.bytes);
out:
	if (sets != few_sets[0])
		free(sets);
	if (r == -ECANCELED)
		shim_testcancel();
	if (!native)
		return r;
blocking:
	return SYS_CANCEL(SYS6(SYS_pselect6, nfds, rd, wr, ex,
			       time_left(&ts, deadline), a.mask));
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

GOSHIM_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			 struct timeval *tv)
{
	int64_t deadline = -1;
	struct timespec left = { 0, 0 };
	long r;

	if (select_hides(nfds, rd, wr, ex) &&
	    (!tv || (tv->tv_sec >= 0 && tv->tv_usec >= 0)))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || nfds < 0 ||
	    (tv && tv->tv_sec == 0 && tv->tv_usec == 0))
		return (int)FD_NOWAIT_CALL(select,
					   raw_select(nfds, rd, wr, ex, tv),
					   nfds, rd, wr, ex, tv);
	if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0))
		return (int)fd_ret(-EINVAL);
	/* tv_usec may hold more than a second, as for the kernel. */
	if (tv)
		deadline = deadline_sec(
			tv->tv_usec / 1000000 > INT64_MAX - tv->tv_sec
				? INT64_MAX
				: tv->tv_sec + tv->tv_usec / 1000000,
			tv->tv_usec % 1000000 * 1000);
	r = select_park(nfds, rd, wr, ex, deadline, NULL);
	/* Linux tells select's caller how much of the timeout is left. */
	if (tv) {
		time_left(&left, deadline);
		tv->tv_sec = left.tv_sec;
		tv->tv_usec = left.tv_nsec / 1000;
	}
	return (int)fd_ret(r);
}

/* The C library's pselect leaves the program's timeout as it was. */
static long raw_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			const struct timespec *ts, const sigset_t *mask)
{
	struct sigmask_arg sm = { mask, SIGSET_BYTES };
	struct timespec t;
	if (ts) {
		t = *ts;
		ts = &t;
	}
	return SYS6(SYS_pselect6, nfds, rd, wr, ex, ts, &sm);
}

GOSHIM_EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			  const struct timespec *ts, const sigset_t *mask)
{
	if (select_hides(nfds, rd, wr, ex) && (!ts || ts_valid(ts)))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || nfds < 0 || ts_zero(ts)) {
		long r = FD_NOWAIT_CALL(pselect,
					raw_pselect(nfds, rd, wr, ex, ts, mask),
					nfds, rd, wr, ex, ts, mask);
		return r == 0 ? (int)fd_ret(kept_look(mask)) : (int)r;
	}
	if (ts && !ts_valid(ts))
		return (int)fd_ret(-EINVAL);
	return (int)fd_ret(
		select_park(nfds, rd, wr, ex, deadline_ts(ts), mask));
}

/* ---- epoll_wait, epoll_pwait, epoll_pwait2 ------------------------------ */

struct epoll_args {
	int epfd;
	struct epoll_event *ev;
	int max;
	const sigset_t *mask;
};

static long epoll_look(void *arg)
{
	struct epoll_args *a = arg;
	long r = FD_NO_OWN_EINTR(SYS6(SYS_epoll_pwait, a->epfd, a->ev,
				      a->max, 0, a->mask, SIGSET_BYTES));
	return r == 0 ? signal_look(a->mask) : r;
}

/* The blocking call, until deadline: epoll_pwait2 (Linux 5.11), else
 * epoll_pwait in milliseconds rounded up. */
static long epoll_block(struct epoll_args *a, int64_t deadline)
{
	struct timespec ts;
	return sys_epoll_wait_ts(a->epfd, a->ev, a->max,
				 time_left(&ts, deadline), a->mask);
}

/* The kernel checks maxevents before it looks at the epoll fd. */
static bool epoll_hides(int epfd, int max)
{
	return fd_hidden(epfd) && max > 0 &&
	       (size_t)max <= INT_MAX / sizeof(struct epoll_event);
}

/* Never the program's to change: a DEL on the runtime's epoll fd would
 * cut goshim's own registrations. */
GOSHIM_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (fd_hidden(epfd) || fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	return (int)FD_NEXT(epoll_ctl, SYS4(SYS_epoll_ctl, epfd, op, fd, ev),
			    epfd, op, fd, ev);
}

/* The epoll waits on a goroutine: the count, or -errno. */
static long epoll_park(int epfd, struct epoll_event *ev, int max,
		       int64_t deadline, const sigset_t *mask)
{
	struct epoll_args a = { epfd, ev, max, mask };
	struct netpoll_req req = { .fd = epfd, .modes = NP_READ };
	bool native;
	long r;

	fd_cancel_point();
	r = epoll_look(&a);
	if (r != 0)
		return r;
	r = wait_loop(epoll_look, &a, &req, 1, deadline, &native);
	if (r == -ECANCELED)
		shim_testcancel();
	if (native)
		r = SYS_CANCEL(epoll_block(&a, deadline));
	return r;
}

GOSHIM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max,
			     int timeout)
{
	if (epoll_hides(epfd, max))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || timeout == 0)
		return (int)FD_NOWAIT_CALL(epoll_wait,
					   SYS6(SYS_epoll_pwait, epfd, ev, max,
						timeout, NULL, 0),
					   epfd, ev, max, timeout);
	return (int)fd_ret(epoll_park(epfd, ev, max, deadline_ms(timeout),
				      NULL));
}

GOSHIM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max,
			      int timeout, const sigset_t *mask)
{
	if (epoll_hides(epfd, max))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || timeout == 0)
		return (int)FD_NOWAIT_CALL(epoll_pwait,
					   SYS6(SYS_epoll_pwait, epfd, ev, max,
						timeout, mask, SIGSET_BYTES),
					   epfd, ev, max, timeout, mask);
	return (int)fd_ret(epoll_park(epfd, ev, max, deadline_ms(timeout),
				      mask));
}

GOSHIM_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			       const struct timespec *ts, const sigset_t *mask)
{
	long r;

	if (epoll_hides(epfd, max))
		return (int)fd_ret(-EBADF);
	if (!fd_parks())
		return (int)FD_REAL(epoll_pwait2,
				    SYS6(SYS_epoll_pwait2, epfd, ev, max, ts,
					 mask, SIGSET_BYTES),
				    epfd, ev, max, ts, mask);
	if (ts && (r = sys_ts_check(ts)) != 0)
		return (int)fd_ret(r);
	if (ts_zero(ts))
		return (int)FD_NOWAIT_CALL(epoll_pwait2,
					   SYS6(SYS_epoll_pwait2, epfd, ev, max,
						ts, mask, SIGSET_BYTES),
					   epfd, ev, max, ts, mask);
	return (int)fd_ret(epoll_park(epfd, ev, max, deadline_ts(ts), mask));
}
