/*
 * fd_pipe.c: pipes are learnt when made, and every fd is forgotten when
 * closed. close wakes the goroutines waiting on the fd, whose calls then
 * fail with EBADF as the next call on it would (core/README.md, invariant 6); a
 * close from any thread does, so that a goroutine is not left waiting on
 * an fd that no longer exists. The runtime's own fds (epoll, its eventfd)
 * are not the program's to close: EBADF, as if they were not open; and
 * close_range and closefrom (a daemon's "close every fd above 2") close
 * around them. CLOSE_RANGE_CLOEXEC only marks fds (the runtime's are
 * close-on-exec already) and goes to the C library as it is, and so does
 * CLOSE_RANGE_UNSHARE, which gives the calling OS thread a table of its
 * own: a goroutine has no thread of its own to give it to.
 */
#include <unistd.h>
#include "fd.h"

static void learn_pipe(int r, const int fds[2])
{
	if (r == 0 && fd_tracked()) {
		fd_learn(fds[0], FD_PIPE, 0, true);
		fd_learn(fds[1], FD_PIPE, 0, true);
	}
}

GOSHIM_EXPORT int pipe2(int fds[2], int flags)
{
	int r = (int)FD_REAL(pipe2, SYS2(SYS_pipe2, fds, flags), fds, flags);
	learn_pipe(r, fds);
	return r;
}

GOSHIM_EXPORT int pipe(int fds[2])
{
	int r = (int)FD_REAL(pipe, SYS2(SYS_pipe2, fds, 0), fds);
	learn_pipe(r, fds);
	return r;
}

GOSHIM_EXPORT int close(int fd)
{
	if (fd_tracked() && !fd_close(fd))
		return (int)fd_ret(-EBADF);
	return (int)FD_REAL(close, SYS1(SYS_close, fd), fd);
}

GOSHIM_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!fd_tracked() || flags != 0)
		return (int)FD_NEXT(close_range,
				    SYS3(SYS_close_range, first, last, flags),
				    first, last, flags);
	return (int)fd_ret(fd_close_range(first, last));
}

/* glibc's closefrom falls back to closing one by one where close_range
 * is missing (Linux before 5.9): so does this, through close. */
GOSHIM_EXPORT void closefrom(int low)
{
	unsigned first = low < 0 ? 0 : (unsigned)low;
	long r = fd_tracked() ? fd_close_range(first, ~0u)
			      : SYS3(SYS_close_range, first, ~0u, 0);

	if (r != -ENOSYS)
		return;
	for (long fd = first, max = sysconf(_SC_OPEN_MAX); fd < max; fd++)
		close((int)fd);
}
