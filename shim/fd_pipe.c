/*
 * fd_pipe.c: pipes are learnt when made, and every fd is forgotten when
 * closed. close wakes the goroutines waiting on the fd, whose calls then
 * fail with EBADF as the next call on it would (DESIGN invariant 6); a
 * close from any thread does, so that a goroutine is not left waiting on
 * an fd that no longer exists. The runtime's own fds (epoll, its eventfd)
 * are not the program's to close: EBADF, as if they were not open.
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
