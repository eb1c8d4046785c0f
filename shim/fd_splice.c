/*
 * fd_splice.c: splice, tee, vmsplice, sendfile and copy_file_range.
 *
 * These move data between two fds inside the kernel, and each side may be
 * what blocks: a pipe empty or full, a socket with nothing to read or no
 * room, a regular file on a slow disk. Linux gives only the pipe side a
 * per-call non-blocking form, SPLICE_F_NONBLOCK (a TCP socket's splice
 * ignores it: tcp_splice_read and splice_to_socket look only at the
 * socket's own O_NONBLOCK; sendfile has no flags at all). So a goroutine
 * first waits, parked on the netpoller, until every socket side (and,
 * for sendfile, every pipe side) is ready, then makes the call with
 * SPLICE_F_NONBLOCK added, under entersyscall: a regular-file side may
 * block on the disk, and a transfer larger than the room a ready socket
 * has blocks until it drains (natively it would too); that costs an M,
 * never a P. EAGAIN from a pipe side parks the goroutine on both fds and
 * the call is made again. Nothing is retried after part of the data
 * moved: the blocking call returns that count too.
 *
 * The program's own non-blocking wishes stand: SPLICE_F_NONBLOCK in its
 * flags, or O_NONBLOCK on either fd (which Linux turns into
 * SPLICE_F_NONBLOCK for the pipe side too) makes EAGAIN its answer. A
 * socket side's SO_RCVTIMEO / SO_SNDTIMEO bounds the parks (EAGAIN).
 *
 * copy_file_range works on regular files only: entersyscall, no parks.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/sendfile.h>
#include "fd.h"

struct side {
	int fd;
	short events;	/* POLLIN: data comes from it; POLLOUT: goes to it */
	bool sock;
	bool flag;	/* SPLICE_F_NONBLOCK keeps this side from blocking */
};

/* The call, with SPLICE_F_NONBLOCK or 0 added to the program's flags. */
typedef long (*move_fn)(void *args, unsigned nonblock);

static bool ready(const struct side *s)
{
	return fd_ready(s->fd, s->events, false) != 0;
}

static bool program_nonblocking(const struct side *s, int n)
{
	for (int i = 0; i < n; i++)
		if (fd_nonblocking(s[i].fd))
			return true;
	return false;
}

static int64_t sides_deadline(const struct side *s, int n)
{
	int64_t d = -1;

	for (int i = 0; i < n; i++) {
		if (!s[i].sock)
			continue;
		int64_t t = fd_sock_deadline(s[i].fd, s[i].events == POLLIN
							     ? SO_RCVTIMEO
							     : SO_SNDTIMEO);
		if (t >= 0 && (d < 0 || t < d))
			d = t;
	}
	return d;
}

/* The call made blocking, under entersyscall; in glibc every one of
 * these but sendfile is a cancellation point. */
static long move_blocking(move_fn call, void *args, bool cancel)
{
	return cancel ? SYS_CANCEL(call(args, 0)) : IN_SYSCALL(call(args, 0));
}

/* Do the call as the blocking one would, for a goroutine; own: the
 * program passed SPLICE_F_NONBLOCK. */
static long move(struct side *all, int nall, move_fn call, void *args,
		 bool own, bool cancel)
{
	struct side s[2];
	struct netpoll_req reqs[2];
	int64_t deadline = FD_DEADLINE_UNKNOWN;
	int n = 0;

	if (cancel)
		fd_cancel_point();
	for (int i = 0; i < nall; i++) {
		enum fd_kind k = fd_kind(all[i].fd);
		if (k == FD_PIPE || k == FD_SOCKET) {
			s[n] = all[i];
			s[n].sock = k == FD_SOCKET;
			s[n].flag = s[n].flag && !s[n].sock;
			n++;
		}
	}
	if (n == 0)
		return move_blocking(call, args, cancel);
	for (;;) {
		bool wait = false;
		long r;
		int e;

		for (int i = 0; i < n; i++)
			netpoll_arm(&reqs[i], s[i].fd,
				    s[i].events == POLLIN ? NP_READ : NP_WRITE);
		for (int i = 0; i < n && !wait; i++)
			wait = !s[i].flag && !ready(&s[i]) &&
			       !fd_nonblocking(s[i].fd);
		if (!wait) {
			r = IN_SYSCALL(call(args, SPLICE_F_NONBLOCK));
			if (r != -EAGAIN || own || program_nonblocking(s, n))
				return r;
		}
		if (deadline == FD_DEADLINE_UNKNOWN)
			deadline = sides_deadline(s, n);
		e = cancel ? netpoll_wait(reqs, n, deadline)
			   : netpoll_wait_nocancel(reqs, n, deadline);
		if (e == EPERM)
			return move_blocking(call, args, cancel);
		if (e == ETIMEDOUT)
			return -EAGAIN;
		if (e && !fd_restart(e))
			return -e;
	}
}

/* ---- splice ------------------------------------------------------------- */

struct splice_args {
	int in;
	loff_t *off_in;
	int out;
	loff_t *off_out;
	size_t len;
	unsigned flags;
};

static long do_splice(void *p, unsigned nonblock)
{
	struct splice_args *a = p;
	return SYS6(SYS_splice, a->in, a->off_in, a->out, a->off_out, a->len,
		    a->flags | nonblock);
}

GOSHIM_EXPORT ssize_t splice(int in, loff_t *off_in, int out,
			     loff_t *off_out, size_t len, unsigned flags)
{
	struct splice_args a = { in, off_in, out, off_out, len, flags };
	struct side s[2] = { { .fd = in, .events = POLLIN, .flag = true },
			     { .fd = out, .events = POLLOUT, .flag = true } };

	if (fd_hidden(in) || fd_hidden(out))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_NEXT(splice, do_splice(&a, 0), in, off_in, out,
			       off_out, len, flags);
	return fd_ret(move(s, 2, do_splice, &a, flags & SPLICE_F_NONBLOCK,
			   true));
}

/* ---- tee ---------------------------------------------------------------- */

struct tee_args {
	int in, out;
	size_t len;
	unsigned flags;
};

static long do_tee(void *p, unsigned nonblock)
{
	struct tee_args *a = p;
	return SYS4(SYS_tee, a->in, a->out, a->len, a->flags | nonblock);
}

GOSHIM_EXPORT ssize_t tee(int in, int out, size_t len, unsigned flags)
{
	struct tee_args a = { in, out, len, flags };
	struct side s[2] = { { .fd = in, .events = POLLIN, .flag = true },
			     { .fd = out, .events = POLLOUT, .flag = true } };

	if (fd_hidden(in) || fd_hidden(out))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_NEXT(tee, do_tee(&a, 0), in, out, len, flags);
	return fd_ret(move(s, 2, do_tee, &a, flags & SPLICE_F_NONBLOCK, true));
}

/* ---- vmsplice ----------------------------------------------------------- */

struct vmsplice_args {
	int fd;
	const struct iovec *iov;
	size_t n;
	unsigned flags;
};

static long do_vmsplice(void *p, unsigned nonblock)
{
	struct vmsplice_args *a = p;
	return SYS4(SYS_vmsplice, a->fd, a->iov, a->n, a->flags | nonblock);
}

GOSHIM_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t n,
			       unsigned flags)
{
	struct vmsplice_args a = { fd, iov, n, flags };
	long acc;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_NEXT(vmsplice, do_vmsplice(&a, 0), fd, iov, n, flags);
	/* The pipe's write end takes the memory in, its read end gives
	 * pages out. */
	acc = SYS3(SYS_fcntl, fd, F_GETFL, 0);
	if (acc < 0)
		return fd_ret(acc);
	struct side s = { .fd = fd,
			  .events = (acc & O_ACCMODE) == O_RDONLY ? POLLIN
								  : POLLOUT,
			  .flag = true };
	return fd_ret(move(&s, 1, do_vmsplice, &a, flags & SPLICE_F_NONBLOCK,
			   true));
}

/* ---- sendfile ----------------------------------------------------------- */

struct sendfile_args {
	int out, in;
	off_t *off;
	size_t count;
};

static long do_sendfile(void *p, unsigned nonblock)
{
	struct sendfile_args *a = p;
	(void)nonblock; /* no flags: every side waits for readiness first */
	return SYS4(SYS_sendfile, a->out, a->in, a->off, a->count);
}

GOSHIM_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	struct sendfile_args a = { out, in, off, count };
	struct side s[2] = { { .fd = out, .events = POLLOUT },
			     { .fd = in, .events = POLLIN } };

	if (fd_hidden(in) || fd_hidden(out))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_NEXT(sendfile, do_sendfile(&a, 0), out, in, off,
			       count);
	return fd_ret(move(s, 2, do_sendfile, &a, false, false));
}

GOSHIM_EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t count)
	__attribute__((alias("sendfile")));

/* ---- copy_file_range ---------------------------------------------------- */

GOSHIM_EXPORT ssize_t copy_file_range(int in, loff_t *off_in, int out,
				      loff_t *off_out, size_t len,
				      unsigned flags)
{
	if (fd_hidden(in) || fd_hidden(out))
		return fd_ret(-EBADF);
	if (!fd_parks())
		return FD_NEXT(copy_file_range,
			       SYS6(SYS_copy_file_range, in, off_in, out,
				    off_out, len, flags),
			       in, off_in, out, off_out, len, flags);
	return IN_SYSCALL(FD_NEXT(copy_file_range,
				  SYS6(SYS_copy_file_range, in, off_in, out,
				       off_out, len, flags),
				  in, off_in, out, off_out, len, flags));
}
