/*
 * fd_fcntl.c: fcntl and ioctl, for the few commands goshim must see.
 *
 * - F_DUPFD, F_DUPFD_CLOEXEC: the new fd is known as the old (fd_dup.c).
 * - F_GETFL, F_SETFL and ioctl FIONBIO: the program's view of O_NONBLOCK.
 *   goshim waits without ever setting the flag (fd_io.c), so the kernel's
 *   answer is the program's own, except in the one instant a connect
 *   holds it set (fd_socket.c): these wait until it is back
 *   (fd_flags_call).
 * - F_SETLKW, F_OFD_SETLKW: wait for a record lock another process may
 *   hold for as long as it likes; under entersyscall, so the goroutine's P
 *   goes on running the others. (F_SETLKW64 is F_SETLKW on 64-bit.)
 *
 * fcntl's third argument is an int or a pointer, by command; like the C
 * library's own fcntl, it is taken as a pointer-sized word and handed on
 * as it came, which is right for both. Every other command goes to the C
 * library untouched. The runtime's own fds are not open as far as the
 * program can tell: EBADF for every command.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include "fd.h"

struct fcntl_args {
	int fd, cmd;
	void *arg;
};

static long do_fcntl(void *p)
{
	struct fcntl_args *a = p;
	return FD_NEXT(fcntl, SYS3(SYS_fcntl, a->fd, a->cmd, a->arg), a->fd,
		       a->cmd, a->arg);
}

GOSHIM_EXPORT int fcntl(int fd, int cmd, ...)
{
	struct fcntl_args a = { fd, cmd, NULL };
	va_list ap;
	long r;

	va_start(ap, cmd);
	a.arg = va_arg(ap, void *);
	va_end(ap);
	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	if (!fd_tracked())
		return (int)do_fcntl(&a);
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		r = do_fcntl(&a);
		if (r >= 0)
			fd_copy(fd, (int)r);
		return (int)r;
	case F_GETFL:
	case F_SETFL:
		return (int)fd_flags_call(fd, do_fcntl, &a);
	case F_SETLKW:
	case F_OFD_SETLKW:
		return (int)IN_SYSCALL_AGAIN(do_fcntl(&a));
	default:
		return (int)do_fcntl(&a);
	}
}

GOSHIM_EXPORT int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));
GOSHIM_EXPORT int __fcntl(int fd, int cmd, ...) __attribute__((alias("fcntl")));

struct ioctl_args {
	int fd;
	unsigned long req;
	void *arg;
};

static long do_ioctl(void *p)
{
	struct ioctl_args *a = p;
	return FD_NEXT(ioctl, SYS3(SYS_ioctl, a->fd, a->req, a->arg), a->fd,
		       a->req, a->arg);
}

GOSHIM_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct ioctl_args a = { fd, req, NULL };
	va_list ap;

	va_start(ap, req);
	a.arg = va_arg(ap, void *);
	va_end(ap);
	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	if (req == FIONBIO && fd_tracked())
		return (int)fd_flags_call(fd, do_ioctl, &a);
	return (int)do_ioctl(&a);
}
