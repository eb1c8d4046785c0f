/*
 * fd_rw.c: read, write, readv and writev park the goroutine on pipes and
 * sockets (fd_io.c) and on event fds (fd_event.c). Other fds (regular
 * files, ttys, devices) get the C library's call under entersyscall:
 * RWF_NOWAIT on a regular file may return part of what a read would, and
 * the rest have no per-call non-blocking form yet.
 *
 * read and write check the whole count against the address space (EFAULT)
 * before they cut it to MAX_RW_COUNT; the vector calls goshim tries with do
 * not (EINVAL past SSIZE_MAX, else a short transfer). So a count that
 * large, rare as it is, gets the plain call, under entersyscall.
 *
 * Every interposer that takes an fd (here and in the other fd_*.c) first
 * says EBADF for the runtime's own fds (fd_hidden): the program never
 * opened them, and must not read goshim's eventfd or write its epoll.
 */
#include <limits.h>
#include <unistd.h>
#include "fd.h"

#define MAX_RW_COUNT ((size_t)INT_MAX & ~(size_t)4095)

GOSHIM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_REAL(read, SYS3(SYS_read, fd, buf, n), fd, buf, n);
	if (n > MAX_RW_COUNT)
		return IN_SYSCALL_AGAIN(real.read(fd, buf, n));
	switch (fd_kind(fd)) {
	case FD_OTHER:
	case FD_COMM:
		return IN_SYSCALL_AGAIN(real.read(fd, buf, n));
	case FD_EVENT:
		return fd_ret(fd_event_rw(fd, &(struct iovec){ buf, n }, 1,
					  false));
	default:
		break;
	}
	fd_op_buf(&op, FC_READV, fd, buf, n);
	return fd_ret(fd_transfer(&op, false));
}

GOSHIM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_REAL(write, SYS3(SYS_write, fd, buf, n), fd, buf, n);
	if (n > MAX_RW_COUNT)
		return IN_SYSCALL_AGAIN(real.write(fd, buf, n));
	switch (fd_kind(fd)) {
	case FD_OTHER:
		return IN_SYSCALL_AGAIN(real.write(fd, buf, n));
	case FD_COMM:
		return fd_ret(shim_comm_write(
			fd, &(struct iovec){ (void *)buf, n }, 1));
	case FD_EVENT:
		return fd_ret(fd_event_rw(
			fd, &(struct iovec){ (void *)buf, n }, 1, true));
	default:
		break;
	}
	fd_op_buf(&op, FC_WRITEV, fd, buf, n);
	return fd_ret(fd_transfer(&op, true));
}

GOSHIM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_REAL(readv, SYS3(SYS_readv, fd, iov, n), fd, iov, n);
	switch (fd_kind(fd)) {
	case FD_OTHER:
	case FD_COMM:
		return IN_SYSCALL_AGAIN(real.readv(fd, iov, n));
	case FD_EVENT:
		return fd_ret(fd_event_rw(fd, iov, n, false));
	default:
		break;
	}
	fd_op_iov(&op, FC_READV, fd, iov, n);
	return fd_ret(fd_transfer(&op, false));
}

GOSHIM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_REAL(writev, SYS3(SYS_writev, fd, iov, n), fd, iov,
			       n);
	switch (fd_kind(fd)) {
	case FD_OTHER:
		return IN_SYSCALL_AGAIN(real.writev(fd, iov, n));
	case FD_COMM:
		return fd_ret(shim_comm_write(fd, iov, n));
	case FD_EVENT:
		return fd_ret(fd_event_rw(fd, iov, n, true));
	default:
		break;
	}
	fd_op_iov(&op, FC_WRITEV, fd, iov, n);
	return fd_ret(fd_transfer(&op, true));
}

/* _FORTIFY_SOURCE builds call this instead of read. */
GOSHIM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return read(fd, buf, n);
}
