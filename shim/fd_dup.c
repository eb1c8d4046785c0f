/*
 * fd_dup.c: dup, dup2, dup3 (fcntl's F_DUPFD is in fd_fcntl.c).
 *
 * The new fd is the same open file as the old one, so it is known at once
 * as what the old one is (fd_copy): a pipe or socket, made here or not.
 * dup2 and dup3 onto an fd number close that number first, and do here
 * what close does (fd_pipe.c): goroutines waiting on the file that number
 * had wake with EBADF. That happens before the call, so no such goroutine
 * can retry on the new file meanwhile; the arguments are checked first,
 * so that a call that will fail with EBADF or EINVAL disturbs nobody.
 *
 * The runtime's own fds are not open as far as the program can tell
 * (close says EBADF), so the program may well dup2 onto one of their
 * numbers (a shell's "exec 3>file"): the runtime's fd moves to another
 * number first (fd_vacate) and the program gets the one it asked for.
 */
#include <fcntl.h>
#include <unistd.h>
#include "fd.h"

GOSHIM_EXPORT int dup(int fd)
{
	int r;

	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	r = (int)FD_NEXT(dup, SYS1(SYS_dup, fd), fd);
	if (r >= 0 && fd_tracked())
		fd_copy(fd, r);
	return r;
}

/* Before dup2/dup3 replaces newfd: 0, or the error to return. */
static int replace(int oldfd, int newfd)
{
	if (fd_hidden(oldfd))
		return EBADF;
	if (!fd_tracked())
		return 0;
	if (SYS3(SYS_fcntl, oldfd, F_GETFD, 0) < 0)
		return EBADF;
	if (newfd == oldfd)
		return 0;
	if (fd_hidden(newfd)) {
		int e = fd_vacate(newfd);
		if (e)
			return e;
	}
	fd_copy(oldfd, newfd);
	return 0;
}

/* The kernel's dup2 (aarch64 has only dup3, which refuses oldfd ==
 * newfd). */
static long sys_dup2(int oldfd, int newfd)
{
	if (oldfd != newfd)
		return SYS3(SYS_dup3, oldfd, newfd, 0);
	long r = SYS3(SYS_fcntl, oldfd, F_GETFD, 0);
	return r < 0 ? r : oldfd;
}

GOSHIM_EXPORT int dup2(int oldfd, int newfd)
{
	int e = replace(oldfd, newfd);

	if (e)
		return (int)fd_ret(-e);
	return (int)FD_NEXT(dup2, sys_dup2(oldfd, newfd), oldfd, newfd);
}


GOSHIM_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int e;

	if (oldfd == newfd || (flags & ~O_CLOEXEC))
		return (int)fd_ret(-EINVAL);
	if ((e = replace(oldfd, newfd)))
		return (int)fd_ret(-e);
	return (int)FD_NEXT(dup3, SYS3(SYS_dup3, oldfd, newfd, flags), oldfd,
			    newfd, flags);
}
