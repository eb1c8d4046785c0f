/*
 * fd_io.c: a blocking transfer on a pipe or socket, done by a goroutine.
 *
 * Each try is the program's own call made non-blocking for that call only:
 * preadv2/pwritev2 with RWF_NOWAIT at the file position (-1) for read and
 * write, the socket calls with MSG_DONTWAIT. On EAGAIN the goroutine parks
 * until epoll reports the fd, then tries again, so the program sees what a
 * blocking call would have given it: a read returns what is there once
 * something is; a write, and MSG_WAITALL on a stream socket, go on until
 * everything is moved, as the kernel does for a blocking fd. The
 * program's array of buffers is never written: a transfer that stops
 * part-way continues from a copy.
 *
 * A socket's SO_RCVTIMEO / SO_SNDTIMEO is a deadline on the parks, for
 * the whole call: on expiry EAGAIN, or the count moved so far, as Linux
 * returns. The timeout is asked of the kernel (getsockopt) the first time
 * a call has to wait, never cached: a dup'ed or inherited socket, or one
 * set through syscall(), shares the kernel's value.
 *
 * If the program set O_NONBLOCK itself, EAGAIN (or the partial count) is
 * its answer, as without goshim; F_GETFL is asked only then, since the
 * program may change the flag at any time. An fd RWF_NOWAIT does not work
 * on (a FIFO opened by name; a pipe end once given to splice, tee or
 * vmsplice, which clear FMODE_NOWAIT on it) waits for readiness instead (a
 * zero-timeout ppoll, parks between), then gets the blocking call under
 * entersyscall: only a reader or writer racing it can make that block,
 * or a write larger than the room there is, and then it costs an M, not
 * a P.
 */
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include "fd.h"

long fd_ready(int fd, short events, bool wait)
{
	struct pollfd p = { .fd = fd, .events = events };
	struct timespec zero = { 0, 0 };
	long r = wait ? SYS6(SYS_ppoll, &p, 1, NULL, NULL, 0, 0)
		      : FD_NO_OWN_EINTR(SYS6(SYS_ppoll, &p, 1, &zero, NULL, 0,
					     0));
	return r > 0 ? p.revents : r;
}

void fd_op_buf(struct fd_op *op, enum fd_call call, int fd, const void *buf,
	       size_t len)
{
	memset(op, 0, sizeof *op);
	op->call = call;
	op->fd = fd;
	op->one.iov_base = (void *)buf;
	op->one.iov_len = len;
	op->iov = &op->one;
	op->iovcnt = 1;
	op->owned = true;
	op->io.deadline = FD_DEADLINE_UNKNOWN;
}

void fd_op_iov(struct fd_op *op, enum fd_call call, int fd,
	       const struct iovec *iov, int iovcnt)
{
	memset(op, 0, sizeof *op);
	op->call = call;
	op->fd = fd;
	op->iov = (struct iovec *)iov; /* not written while !owned */
	op->iovcnt = iovcnt;
	op->io.deadline = FD_DEADLINE_UNKNOWN;
}

void fd_op_msg(struct fd_op *op, enum fd_call call, int fd,
	       const struct msghdr *msg)
{
	fd_op_iov(op, call, fd, NULL, 0);
	op->msg = (struct msghdr *)msg; /* not written while it is theirs */
}

static long op_call(struct fd_op *op, bool nowait)
{
	int dw = nowait ? MSG_DONTWAIT : 0;
	int rwf = nowait ? RWF_NOWAIT : 0;

	if (op->msg == &op->m) {
		op->m.msg_iov = op->iov;
		op->m.msg_iovlen = (size_t)op->iovcnt;
	}
	switch (op->call) {
	case FC_READV:
		return SYS6(SYS_preadv2, op->fd, op->iov, op->iovcnt, -1, 0,
			    rwf);
	case FC_WRITEV:
		return SYS6(SYS_pwritev2, op->fd, op->iov, op->iovcnt, -1, 0,
			    rwf);
	case FC_RECV:
		return SYS6(SYS_recvfrom, op->fd, op->iov->iov_base,
			    op->iov->iov_len, op->flags | dw, op->addr,
			    op->addrlen);
	case FC_SEND:
		return SYS6(SYS_sendto, op->fd, op->iov->iov_base,
			    op->iov->iov_len, op->flags | dw, op->addr,
			    op->tolen);
	case FC_RECVMSG:
		return SYS3(SYS_recvmsg, op->fd, op->msg, op->flags | dw);
	case FC_SENDMSG:
		return SYS3(SYS_sendmsg, op->fd, op->msg, op->flags | dw);
	}
	return -EINVAL;
}

/* One call as the blocking one would return: try, and when it would
 * block, ask netpoll_io_wait what next (park until the fd has an event and
 * try again, EAGAIN, the blocking call, an error). */
static long transfer_once(struct fd_op *op)
{
	bool rw = op->call == FC_READV || op->call == FC_WRITEV;
	unsigned mode = op->call == FC_READV || op->call == FC_RECV ||
				op->call == FC_RECVMSG
			? NP_READ
			: NP_WRITE;

	netpoll_io_arm(&op->io, op->fd, mode, rw);
	for (;;) {
		long n;
		int e;
		if (op->io.nowait)
			n = op_call(op, true);
		else
			n = fd_ready(op->fd, mode == NP_READ ? POLLIN : POLLOUT,
				     false)
				    ? IN_SYSCALL(op_call(op, false))
				    : -EAGAIN;
		if (n != -EAGAIN && n != -EOPNOTSUPP)
			return n;
		e = netpoll_io_wait(&op->io, n);
		if (e == 0)
			continue;
		if (e == EPERM)
			return SYS_CANCEL(op_call(op, false));
		if (e == ECANCELED) {
			free(op->copy); /* fd_transfer's: it unwinds */
			op->copy = NULL;
			shim_testcancel();
		}
		return -e;
	}
}

bool fd_op_skip(struct fd_op *op, size_t n)
{
	if (!op->owned) {
		op->copy = malloc((size_t)op->iovcnt * sizeof *op->copy);
		if (op->copy == NULL)
			return false;
		memcpy(op->copy, op->iov, (size_t)op->iovcnt * sizeof *op->copy);
		op->iov = op->copy;
		op->owned = true;
	}
	if (op->msg && op->msg != &op->m) {
		/* recvmsg: the program's msghdr has what the first call
		 * says (address, ancillary data, flags); the rest is data. */
		op->m = *op->msg;
		if (op->call == FC_RECVMSG) {
			op->m.msg_name = NULL;
			op->m.msg_namelen = 0;
		}
		op->msg = &op->m;
	}
	/* Ancillary data goes with the first part only. */
	op->m.msg_control = NULL;
	op->m.msg_controllen = 0;
	while (n >= op->iov->iov_len) {
		n -= op->iov->iov_len;
		op->iov++;
		op->iovcnt--;
	}
	op->iov->iov_base = (char *)op->iov->iov_base + n;
	op->iov->iov_len -= n;
	return true;
}

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;
	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

long fd_transfer(struct fd_op *op, bool all)
{
	size_t total = 0, done = 0;
	long n;

	fd_cancel_point();
	/* A count the kernel refuses: let it say so, once. */
	if (op->iovcnt < 0 || op->iovcnt > IOV_MAX)
		all = false;
	for (;;) {
		n = transfer_once(op);
		if (!all || n <= 0)
			break;
		/* The kernel has read the program's msghdr and array of
		 * buffers: now they may be read here (before, a bad pointer
		 * would be a SIGSEGV in goshim instead of its EFAULT). */
		if (done == 0) {
			if (op->msg && op->iov == NULL) {
				op->iov = op->msg->msg_iov;
				op->iovcnt = (int)op->msg->msg_iovlen;
			}
			total = iov_total(op->iov, op->iovcnt);
		}
		done += (size_t)n;
		if (done >= total || fd_nonblocking(op->fd) ||
		    !fd_op_skip(op, (size_t)n))
			break;
	}
	free(op->copy);
	return done ? (long)done : n;
}
