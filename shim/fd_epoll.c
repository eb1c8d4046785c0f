/*
 * fd_epoll.c: epoll_wait, epoll_pwait and epoll_pwait2 with a timeout park
 * the goroutine on the program's epoll fd, which is itself pollable (it is
 * readable when it has events), looking with the call itself and a zero
 * timeout between parks (fd_look.c). An epoll look with a zero timeout
 * does not look at signals: an empty ppoll with the call's mask does,
 * after it (signal_look).
 *
 * Timeouts the kernel would refuse are refused first, as it does (EINVAL,
 * and EFAULT for epoll_pwait2's, which the C library does not copy). The
 * runtime's own epoll fd is not open as far as the program can tell: an
 * epoll call on it says EBADF, and epoll_ctl never changes it.
 */
#include <limits.h>
#include <sys/epoll.h>
#include "fd.h"

/* A pending signal that mask lets through is handled now: -EINTR. */
static long signal_look(const sigset_t *mask)
{
	struct timespec zero = { 0, 0 };
	long r = mask ? FD_NO_OWN_EINTR(SYS6(SYS_ppoll, NULL, 0, &zero, mask,
					     SIGSET_BYTES, 0))
		      : 0;
	return r == 0 ? kept_look(mask) : r;
}

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
				 deadline_left(&ts, deadline), a->mask);
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
	r = fd_look_loop(epoll_look, &a, &req, 1, deadline, &native);
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
	return (int)fd_ret(epoll_park(epfd, ev, max, deadline_after(ts), mask));
}
