/*
 * fd_mmsg.c: recvmmsg and sendmmsg.
 *
 * Linux runs these as one recvmsg or sendmsg per message, each blocking
 * as the socket says, and stops at the first failure (returning the
 * messages done, if any, else the error). goshim keeps the batching: each
 * try is the kernel's own call with MSG_DONTWAIT for all that is left, so
 * every message there already comes in one system call, and only when
 * nothing came does the goroutine park, bounded by SO_RCVTIMEO or
 * SO_SNDTIMEO like the blocking recvmsg/sendmsg it stands for (EAGAIN
 * once that passes, or the count done so far).
 *
 * recvmmsg's own timeout is Linux's: checked after each message, never
 * while waiting for one (man recvmmsg, BUGS); the time left is written
 * back when messages came. MSG_WAITFORONE makes everything after the
 * first message non-blocking. On a stream socket MSG_WAITALL waits for
 * each message's whole buffer, so those go one by one through recvmsg.
 * A sendmmsg message a stream socket took only part of is finished by a
 * blocking sendmsg of the rest, as the kernel's blocking call would, and
 * the batch goes on after it.
 *
 * An error that stops a batch after some messages is not kept for the
 * next call here, as Linux keeps it in sk_err: only the kernel can set
 * that; the count is returned and the next call meets the error itself
 * if it is still there.
 */
#include <stdlib.h>
#include <time.h>
#include "fd.h"


static long recvmmsg_dontwait(int fd, struct mmsghdr *v, unsigned n, int f)
{
	return SYS6(SYS_recvmmsg, fd, v, n, f | MSG_DONTWAIT, NULL, 0);
}

/* One batch as the blocking call would get it: parks until something
 * came (count), the socket's timeout (-EAGAIN) or an error. */
static long recv_batch(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	int64_t deadline = FD_DEADLINE_UNKNOWN;

	for (;;) {
		struct netpoll_req r;
		netpoll_arm(&r, fd, NP_READ);
		long got = recvmmsg_dontwait(fd, v, n, flags);
		if (got != -EAGAIN || (flags & MSG_DONTWAIT) ||
		    fd_nonblocking(fd))
			return got;
		if (deadline == FD_DEADLINE_UNKNOWN)
			deadline = fd_sock_deadline(fd, SO_RCVTIMEO);
		int e = netpoll_wait(&r, 1, deadline);
		if (e == EPERM)
			return SYS_CANCEL(SYS6(SYS_recvmmsg, fd, v, n, flags,
					       NULL, 0));
		if (e == ETIMEDOUT)
			return -EAGAIN;
		if (e && !fd_restart(e))
			return -e;
	}
}

static bool stream_waitall(int fd, int flags)
{
	return (flags & (MSG_WAITALL | MSG_PEEK)) == MSG_WAITALL &&
	       fd_socktype(fd) == SOCK_STREAM;
}

GOSHIM_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned vlen,
			   int flags, struct timespec *timeout)
{
	bool waitforone = flags & MSG_WAITFORONE;
	int64_t deadline = -1;
	unsigned done = 0;
	long r = 0;

	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || vlen == 0 || (flags & (MSG_DONTWAIT | MSG_ERRQUEUE |
						  MSG_OOB)))
		return (int)FD_NEXT(recvmmsg,
				    SYS6(SYS_recvmmsg, fd, v, vlen, flags,
					 timeout, 0),
				    fd, v, vlen, flags, timeout);
	if (timeout) {
		/* judged by the kernel first: EFAULT, EINVAL */
		if ((r = sys_ts_check(timeout)) != 0)
			return (int)fd_ret(r);
		deadline = deadline_after(timeout);
	}
	fd_cancel_point();
	if (vlen > UIO_MAXIOV)
		vlen = UIO_MAXIOV;
	flags &= ~MSG_WAITFORONE;
	while (done < vlen) {
		if (stream_waitall(fd, flags)) {
			r = recvmsg(fd, &v[done].msg_hdr, flags);
			r = r < 0 ? -errno : r;
			if (r >= 0) {
				v[done].msg_len = (unsigned)r;
				r = 1;
			}
		} else {
			r = recv_batch(fd, v + done, vlen - done, flags);
		}
		if (r <= 0)
			break;
		done += (unsigned)r;
		if (v[done - 1].msg_hdr.msg_flags & MSG_OOB)
			break;
		if (waitforone)
			flags |= MSG_DONTWAIT;
		if (deadline >= 0 && nanotime() >= deadline)
			break;
	}
	if (done == 0)
		return (int)fd_ret(r);
	if (timeout)
		deadline_left(timeout, deadline);
	return (int)done;
}

static size_t msg_size(const struct msghdr *m)
{
	size_t t = 0;
	for (size_t i = 0; i < m->msg_iovlen; i++)
		t += m->msg_iov[i].iov_len;
	return t;
}

/* The rest of a message a stream socket took part of: len more, or
 * -errno. */
static long send_rest(int fd, struct mmsghdr *e, int flags)
{
	struct fd_op op;

	fd_op_iov(&op, FC_SENDMSG, fd, e->msg_hdr.msg_iov,
		  (int)e->msg_hdr.msg_iovlen);
	op.flags = flags;
	op.m = e->msg_hdr;
	op.msg = &op.m;
	if (!fd_op_skip(&op, e->msg_len)) {
		free(op.copy);
		return 0;
	}
	return fd_transfer(&op, true);
}

GOSHIM_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned vlen,
			   int flags)
{
	int64_t deadline = FD_DEADLINE_UNKNOWN;
	unsigned done = 0;
	long r = 0;

	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || vlen == 0 || (flags & MSG_DONTWAIT))
		return (int)FD_NEXT(sendmmsg,
				    SYS4(SYS_sendmmsg, fd, v, vlen, flags), fd,
				    v, vlen, flags);
	fd_cancel_point();
	if (vlen > UIO_MAXIOV)
		vlen = UIO_MAXIOV;
	while (done < vlen) {
		struct netpoll_req req;
		netpoll_arm(&req, fd, NP_WRITE);
		r = SYS4(SYS_sendmmsg, fd, v + done, vlen - done,
			 flags | MSG_DONTWAIT);
		if (r > 0) {
			struct mmsghdr *last = &v[done + (unsigned)r - 1];
			size_t size = msg_size(&last->msg_hdr);
			done += (unsigned)r;
			deadline = FD_DEADLINE_UNKNOWN;
			if (last->msg_len < size && !fd_nonblocking(fd)) {
				long more = send_rest(fd, last, flags);
				if (more > 0)
					last->msg_len += (unsigned)more;
				if (last->msg_len < size)
					break;
			}
			continue;
		}
		if (r != -EAGAIN || fd_nonblocking(fd))
			break;
		if (deadline == FD_DEADLINE_UNKNOWN)
			deadline = fd_sock_deadline(fd, SO_SNDTIMEO);
		int e = netpoll_wait(&req, 1, deadline);
		if (e == EPERM) {
			r = SYS_CANCEL(SYS4(SYS_sendmmsg, fd, v + done,
					    vlen - done, flags));
			if (r > 0)
				done += (unsigned)r;
			break;
		}
		if (e && !fd_restart(e)) {
			r = e == ETIMEDOUT ? -EAGAIN : -e;
			break;
		}
	}
	return done ? (int)done : (int)fd_ret(r);
}
