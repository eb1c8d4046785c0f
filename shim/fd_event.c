/*
 * fd_event.c: eventfd, timerfd, signalfd and inotify fds park the
 * goroutine that reads (or writes) them; epoll instances are learnt.
 *
 * Each of these fds is pollable, so a blocking read or write on one waits
 * on the netpoller like a pipe: the try is the call made non-blocking for
 * that call only (preadv2/pwritev2 with RWF_NOWAIT at the file position),
 * and on EAGAIN the goroutine parks until epoll reports the fd. Not every
 * one takes RWF_NOWAIT (on Linux 6.18: eventfd, timerfd and signalfd reads
 * do; an eventfd write and an inotify read say EOPNOTSUPP): then readiness
 * comes first, from a zero-timeout ppoll, and the call follows under
 * entersyscall, since another reader may win the race and the call then
 * blocks its thread as it would natively. The fd's O_NONBLOCK flag is
 * never touched (core/README.md, invariant 3); a program that set it itself gets
 * its EAGAIN from the kernel as before. The kernel makes every answer, so
 * errors (a short buffer: EINVAL) are its own.
 *
 * The fds are learnt when made here: an fd inherited or made behind
 * goshim's back is not known to be one of these, and its calls block
 * their thread under entersyscall. The calls that make them are the bare
 * system calls, as the C library's are; they never block.
 */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "fd.h"

static long rw_call(int fd, const struct iovec *iov, int iovcnt, bool write,
		    int rwf)
{
	return write ? SYS6(SYS_pwritev2, fd, iov, iovcnt, -1, 0, rwf)
		     : SYS6(SYS_preadv2, fd, iov, iovcnt, -1, 0, rwf);
}

long fd_event_rw(int fd, const struct iovec *iov, int iovcnt, bool write)
{
	fd_cancel_point();
	for (;;) {
		struct netpoll_req r;
		netpoll_arm(&r, fd, write ? NP_WRITE : NP_READ);
		long n = rw_call(fd, iov, iovcnt, write, RWF_NOWAIT);
		if (n == -EOPNOTSUPP) {
			/* No per-call try: ready (or in error) now, or a
			 * program that wants EAGAIN, gets the call. */
			n = fd_ready(fd, write ? POLLOUT : POLLIN, false);
			if (n != 0 || fd_nonblocking(fd))
				return IN_SYSCALL(
					rw_call(fd, iov, iovcnt, write, 0));
		} else if (n != -EAGAIN || fd_nonblocking(fd)) {
			return n;
		}
		int e = netpoll_wait(&r, 1, -1);
		if (e == EPERM)
			return SYS_CANCEL(rw_call(fd, iov, iovcnt, write, 0));
		if (e && !fd_restart(e))
			return -e;
	}
}

/* A new fd from the kernel: known from now on as kind. */
static int made(long fd, enum fd_kind kind)
{
	if (fd >= 0 && fd_tracked())
		fd_learn((int)fd, kind, 0, true);
	return (int)fd_ret(fd);
}

GOSHIM_EXPORT int eventfd(unsigned int count, int flags)
{
	return made(SYS2(SYS_eventfd2, count, flags), FD_EVENT);
}

/* The C library's reach its own read and write, past the interposers. */
GOSHIM_EXPORT int eventfd_read(int fd, eventfd_t *value)
{
	return read(fd, value, sizeof *value) == sizeof *value ? 0 : -1;
}

GOSHIM_EXPORT int eventfd_write(int fd, eventfd_t value)
{
	return write(fd, &value, sizeof value) == sizeof value ? 0 : -1;
}

GOSHIM_EXPORT int timerfd_create(clockid_t clock, int flags)
{
	return made(SYS2(SYS_timerfd_create, clock, flags), FD_EVENT);
}

GOSHIM_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	long r = fd_hidden(fd) ? -EBADF
			       : SYS4(SYS_signalfd4, fd, mask, _NSIG / 8,
				      flags);

	/* fd != -1 changes the mask of an existing one. */
	return fd == -1 ? made(r, FD_EVENT) : (int)fd_ret(r);
}

GOSHIM_EXPORT int inotify_init1(int flags)
{
	return made(SYS1(SYS_inotify_init1, flags), FD_EVENT);
}

GOSHIM_EXPORT int inotify_init(void)
{
	return inotify_init1(0);
}

/* An epoll instance is read by epoll_wait (fd_poll.c); read and write on
 * it fail at once. Learnt so that a wait left on an earlier fd of its
 * number ends (EBADF). */
GOSHIM_EXPORT int epoll_create1(int flags)
{
	return made(SYS1(SYS_epoll_create1, flags), FD_OTHER);
}

GOSHIM_EXPORT int epoll_create(int size)
{
	if (size <= 0)
		return (int)fd_ret(-EINVAL);
	return epoll_create1(0);
}
