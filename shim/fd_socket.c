/*
 * fd_socket.c: sockets. recv and send and their relatives are fd_io.c
 * transfers with MSG_DONTWAIT; a call the program made with MSG_DONTWAIT
 * is its own business and goes to the C library, as do reads that never
 * wait anyway (MSG_ERRQUEUE, MSG_OOB: EAGAIN when there is nothing).
 *
 * accept and connect have no per-call non-blocking form. accept waits for
 * readiness first (a zero-timeout ppoll, then the netpoller) and accepts
 * only then; its goroutines take turns on the listening fd, so two cannot
 * both see one connection and one block in accept4 (another process
 * sharing the socket still can take it first: the call is made under
 * entersyscall, so that costs an M, not a P). connect makes a socket this
 * process created through goshim non-blocking for the one call, waits for
 * it to become writable and reads SO_ERROR, as the kernel's blocking
 * connect would report; a socket goshim did not see created, or a unix
 * socket whose listener's backlog is full (EAGAIN, nothing to wait for),
 * gets the blocking call, under entersyscall. Neither the program nor
 * its children see that flag (fd_nowait_call). A listening socket's
 * SO_RCVTIMEO bounds accept's wait (EAGAIN), SO_SNDTIMEO connect's
 * (EINPROGRESS: the handshake goes on), as in Linux.
 *
 * Sockets made here are learnt at once (socket, socketpair, accept).
 */
#include <poll.h>
#include "fd.h"

static void learn_socket(int fd, int type)
{
	if (fd >= 0 && fd_tracked())
		fd_learn(fd, FD_SOCKET, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
			 true);
}

GOSHIM_EXPORT int socket(int domain, int type, int proto)
{
	int fd = (int)FD_REAL(socket, SYS3(SYS_socket, domain, type, proto),
			      domain, type, proto);
	learn_socket(fd, type);
	return fd;
}

GOSHIM_EXPORT int socketpair(int domain, int type, int proto, int sv[2])
{
	int r = (int)FD_REAL(socketpair,
			     SYS4(SYS_socketpair, domain, type, proto, sv),
			     domain, type, proto, sv);
	if (r == 0) {
		learn_socket(sv[0], type);
		learn_socket(sv[1], type);
	}
	return r;
}

#define RECV_OWN (MSG_DONTWAIT | MSG_ERRQUEUE | MSG_OOB)

/* MSG_WAITALL: the whole buffer, on a stream socket (datagrams come
 * whole anyway; a peek that waits for all is taken once). */
static bool wait_all(int fd, int flags)
{
	return (flags & (MSG_WAITALL | MSG_PEEK)) == MSG_WAITALL &&
	       fd_socktype(fd) == SOCK_STREAM;
}

GOSHIM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
			       __SOCKADDR_ARG addr, socklen_t *addrlen)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks() || (flags & RECV_OWN))
		return FD_REAL(recvfrom,
			       SYS6(SYS_recvfrom, fd, buf, n, flags,
				    addr.__sockaddr__, addrlen),
			       fd, buf, n, flags, addr, addrlen);
	fd_op_buf(&op, FC_RECV, fd, buf, n);
	op.flags = flags;
	op.addr = addr.__sockaddr__;
	op.addrlen = addrlen;
	return fd_ret(fd_transfer(&op, wait_all(fd, flags)));
}

GOSHIM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	return recvfrom(fd, buf, n, flags, NULL, NULL);
}

GOSHIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks() || (flags & RECV_OWN) || msg == NULL)
		return FD_REAL(recvmsg, SYS3(SYS_recvmsg, fd, msg, flags), fd,
			       msg, flags);
	fd_op_msg(&op, FC_RECVMSG, fd, msg);
	op.flags = flags;
	return fd_ret(fd_transfer(&op, wait_all(fd, flags)));
}

GOSHIM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			     __CONST_SOCKADDR_ARG addr, socklen_t addrlen)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks() || (flags & MSG_DONTWAIT))
		return FD_REAL(sendto,
			       SYS6(SYS_sendto, fd, buf, n, flags,
				    addr.__sockaddr__, addrlen),
			       fd, buf, n, flags, addr, addrlen);
	fd_op_buf(&op, FC_SEND, fd, buf, n);
	op.flags = flags;
	op.addr = (void *)addr.__sockaddr__;
	op.tolen = addrlen;
	return fd_ret(fd_transfer(&op, true));
}

GOSHIM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	return sendto(fd, buf, n, flags, NULL, 0);
}

GOSHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct fd_op op;

	if (fd_hidden(fd))
		return fd_ret(-EBADF);
	if (!fd_parks() || (flags & MSG_DONTWAIT) || msg == NULL)
		return FD_REAL(sendmsg, SYS3(SYS_sendmsg, fd, msg, flags), fd,
			       msg, flags);
	fd_op_msg(&op, FC_SENDMSG, fd, msg);
	op.flags = flags;
	return fd_ret(fd_transfer(&op, true));
}

/* _FORTIFY_SOURCE builds call these instead. */
GOSHIM_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen,
				 int flags)
{
	if (n > buflen)
		__chk_fail();
	return recvfrom(fd, buf, n, flags, NULL, NULL);
}

GOSHIM_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n,
				     size_t buflen, int flags,
				     __SOCKADDR_ARG addr, socklen_t *addrlen)
{
	if (n > buflen)
		__chk_fail();
	return recvfrom(fd, buf, n, flags, addr, addrlen);
}

GOSHIM_EXPORT int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *len,
			  int flags)
{
	struct netpoll_req r;
	int64_t deadline;
	long n, ready;
	int e;

	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	/* The kernel refuses unknown flags before anything else: not after
	 * a wait for a connection. */
	if (!fd_parks() || fd_kind(fd) != FD_SOCKET || !fd_listening(fd) ||
	    (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)))
		return (int)FD_REAL(accept4,
				    SYS4(SYS_accept4, fd, addr.__sockaddr__,
					 len, flags),
				    fd, addr, len, flags);
	fd_cancel_point();
	/* Asked before the turn is taken: the turn is part of the wait. */
	deadline = fd_sock_deadline(fd, SO_RCVTIMEO);
	netpoll_arm(&r, fd, NP_READ);
	e = fd_serial_lock(&r, deadline);
	if (e == ETIMEDOUT)
		return (int)fd_ret(-EAGAIN);
	for (;;) {
		/* Cancelled: acted on once the turn is given up. */
		if (e != ECANCELED && fd_restart(e))
			e = 0;
		if (e) {
			n = e == ETIMEDOUT ? -EAGAIN : -e;
			break;
		}
		ready = fd_ready(fd, POLLIN, false);
		if (ready < 0) {
			n = ready;
			break;
		}
		/* Ready, the program's own O_NONBLOCK, or nothing to wait
		 * with: accept (nobody else here accepts meanwhile). */
		if (ready || fd_nonblocking(fd) ||
		    (e = netpoll_wait(&r, 1, deadline)) == EPERM) {
			struct g *gp = cancel_syscall_enter();
			n = gp && g_cancel_due(gp)
				    ? -EINTR
				    : SYS4(SYS_accept4, fd, addr.__sockaddr__,
					   len, flags);
			cancel_syscall_exit(gp);
			if (n == -EINTR && gp && g_cancel_due(gp))
				n = -ECANCELED;
			break;
		}
		netpoll_arm(&r, fd, NP_READ);
	}
	fd_serial_unlock(&r);
	if (n == -ECANCELED)
		shim_testcancel();
	if (n >= 0)
		learn_socket((int)n, fd_socktype(fd));
	return (int)fd_ret(n);
}

GOSHIM_EXPORT int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}

struct connect_args {
	int fd;
	const struct sockaddr *addr;
	socklen_t len;
};

static long connect_nowait(void *arg)
{
	struct connect_args *a = arg;
	return SYS3(SYS_connect, a->fd, a->addr, a->len);
}

GOSHIM_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct connect_args a = { fd, addr.__sockaddr__, len };
	struct netpoll_req r;
	int64_t deadline;
	long n;
	int err = 0;
	socklen_t errlen = sizeof err;

	if (fd_hidden(fd))
		return (int)fd_ret(-EBADF);
	if (!fd_parks())
		return (int)FD_REAL(connect,
				    SYS3(SYS_connect, fd, addr.__sockaddr__,
					 len),
				    fd, addr, len);
	fd_cancel_point();
	if (fd_nonblocking(fd))
		return real.connect(fd, addr, len);
	if (!fd_ours(fd))
		return IN_SYSCALL(real.connect(fd, addr, len));
	n = fd_nowait_call(fd, connect_nowait, &a);
	if (n == -EAGAIN || n == -EPERM)
		return IN_SYSCALL(real.connect(fd, addr, len));
	if (n != -EINPROGRESS)
		return (int)fd_ret(n);
	/* The blocking connect waits SO_SNDTIMEO at most, then says
	 * EINPROGRESS and leaves the handshake going. */
	deadline = fd_sock_deadline(fd, SO_SNDTIMEO);
	do {
		netpoll_arm(&r, fd, NP_WRITE);
		n = fd_ready(fd, POLLOUT, false);
		if (n == 0) {
			int e = netpoll_wait(&r, 1, deadline);
			if (e == EPERM)
				n = SYS_CANCEL(fd_ready(fd, POLLOUT, true));
			else if (e == ETIMEDOUT)
				n = -EINPROGRESS;
			else if (e && !fd_restart(e))
				n = -e;
		}
	} while (n == 0);
	if (n < 0)
		return (int)fd_ret(n);
	n = SYS6(SYS_getsockopt, fd, SOL_SOCKET, SO_ERROR, &err, &errlen, 0);
	if (n < 0)
		return (int)fd_ret(n);
	return err ? (int)fd_ret(-err) : 0;
}
