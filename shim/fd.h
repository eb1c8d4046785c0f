/*
 * fd.h: what the fd interposers (shim/fd_*.c) share.
 *
 * A goroutine's blocking call on a pipe or socket becomes per-call
 * non-blocking tries (RWF_NOWAIT, MSG_DONTWAIT) with parks on the
 * netpoller between them; the fd's O_NONBLOCK flag is never touched
 * (core/README.md, invariant 3), and a program that set it itself gets EAGAIN as
 * before. Everything else goes to the C library.
 */
#ifndef GOSHIM_FD_H
#define GOSHIM_FD_H

#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "../core/deadline.h"
#include "../core/netpoll.h"
#include "../core/sys.h"
#include "shim.h"

/* The runtime runs: fds are tracked. */
static inline bool fd_tracked(void)
{
	return runtime_enabled;
}

/* ...and the caller is a goroutine, so it may park. Threads goshim did not
 * create and calls before the runtime starts (or from inside its start-up)
 * get the C library's call. */
static inline bool fd_parks(void)
{
	return fd_tracked() && on_goroutine();
}

/* The kernel's -errno convention as the C library's. */
static inline long fd_ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* The C library's function, or the kernel's before core/real.c has filled
 * the table (a constructor that runs before ours, a malloc replacement
 * reading a file inside dlsym). */
#define FD_REAL(fn, raw, ...) (real.fn ? real.fn(__VA_ARGS__) : fd_ret(raw))

/* The same for calls outside that table (dup, fcntl, splice, ...): the
 * next definition of fn, found by real_init (core/real.h), so not from
 * inside dlsym. */
#define FD_NEXT(fn, raw, ...)                                                \
	({                                                                   \
		__typeof__(fn) *f_ = (__typeof__(fn) *)REAL_NEXT_PEEK(fn);   \
		f_ ? (long)f_(__VA_ARGS__) : fd_ret(raw);                    \
	})

/* A wait said e: true if the call starts over (ERESTART: netpoll.h).
 * ECANCELED acts on the cancel here: a caller that holds something lets
 * go of it first. */
static inline bool fd_restart(int e)
{
	if (e == ECANCELED)
		shim_testcancel();
	return e == ERESTART;
}

/*
 * The kernel never restarts the poll family (poll, select, the epoll
 * waits) after a handler: they fail with EINTR. sysmon's preemption
 * signal can reach a goroutine inside one, where natively nothing would
 * have interrupted it; such a call (one that does not wait: goshim's
 * looks, a zero timeout) is made again. An EINTR after a handler of the
 * program's ran on the goroutine (handlers_ran moved) is the program's,
 * as natively.
 */
/* A raw look (-errno) that does not wait, made again after an EINTR of
 * goshim's. */
#define FD_NO_OWN_EINTR(call)                                         \
	({                                                            \
		uint32_t h_ = g_handlers_ran();                       \
		long r_;                                              \
		while ((r_ = (call)) == -EINTR && own_eintr(h_))      \
			;                                             \
		r_;                                                   \
	})

/* A poll-family call that does not wait (a zero timeout), or one from a
 * thread goshim does not run: the C library's (FD_REAL), under
 * entersyscall (a runtime entry, where a goroutine sysmon asked to yield
 * does so, and where no preemption signal is sent to it), made again
 * after an EINTR of goshim's; errno is kept on a retry. */
#define FD_NOWAIT_CALL(fn, raw, ...) \
	IN_SYSCALL_AGAIN((long)FD_REAL(fn, raw, __VA_ARGS__))

/* A call that is a cancellation point starts: a request already due acts
 * now, whether or not the call will wait, as glibc's would. */
static inline void fd_cancel_point(void)
{
	if (__builtin_expect(g_cancel_requested(), 0))
		shim_testcancel();
}

/* Readiness of one fd by ppoll, now or (wait) when it comes: the revents,
 * 0, or -errno. */
long fd_ready(int fd, short events, bool wait);

/* A blocking read (readv) or write (writev) on an FD_EVENT fd
 * (shim/fd_event.c): count or -errno. */
long fd_event_rw(int fd, const struct iovec *iov, int iovcnt, bool write);

/* ---- the poll family's looks and parks (fd_look.c) ---- */

#define FEW 8 /* requests kept on the stack */
#define SIGSET_BYTES (_NSIG / 8) /* the kernel's sigset_t */

/* Look without blocking; 0 means nothing yet. */
typedef long (*look_fn)(void *);
/* Arm reqs, look, park; until the look reports or the deadline passes:
 * what the look said, 0 at the deadline, -EINTR after a handler (the poll
 * family never restarts) or -ECANCELED (the caller frees what it holds,
 * then acts on it). *native: nothing could be watched. */
long fd_look_loop(look_fn look, void *arg, struct netpoll_req *reqs, int n,
		  int64_t deadline, bool *native);
bool ts_zero(const struct timespec *ts);
/* After a look that found nothing: a signal kept in the goroutine
 * (core/sigthread.c; no thread has it pending, so the kernel's look cannot
 * see it) that mask lets through is handled now, under mask: -EINTR. */
long kept_look(const sigset_t *mask);
/* n requests: few (FEW of them) or malloc'ed. */
struct netpoll_req *reqs_alloc(struct netpoll_req *few, size_t n);

/* task_comm.c: after an open of path (opened: its fd or -errno), one of
 * a goroutine's comm file instead: true if path is one, with the fd or
 * -errno in *ret (the caller closes opened). A write or writev on an
 * FD_COMM fd: count or -errno. */
bool shim_comm_open(const char *path, int flags, long opened, long *ret);
long shim_comm_write(int fd, const struct iovec *iov, int iovcnt);

/* glibc's _FORTIFY_SOURCE failure: "buffer overflow detected". */
void __chk_fail(void) __attribute__((noreturn));

/* One data transfer: the call, on what, and what is left of the data. */
enum fd_call {
	FC_READV,  /* read, readv: preadv2 at the file position */
	FC_WRITEV, /* write, writev: pwritev2 */
	FC_RECV,   /* recv, recvfrom */
	FC_SEND,   /* send, sendto */
	FC_RECVMSG,
	FC_SENDMSG,
};

struct fd_op {
	enum fd_call call;
	int fd;
	int flags;		 /* the socket calls' MSG_ flags */
	struct iovec *iov;	 /* what is left */
	int iovcnt;
	bool owned;		 /* iov is ours to advance, not the program's */
	struct iovec *copy;	 /* malloc'ed copy of the program's */
	struct iovec one;	 /* the buffer of single-buffer calls */
	struct msghdr *msg;	 /* FC_RECVMSG, FC_SENDMSG */
	struct msghdr m;	 /* our copy of it */
	void *addr;		 /* recvfrom's address, sendto's */
	socklen_t *addrlen;	 /* recvfrom */
	socklen_t tolen;	 /* sendto */
	struct netpoll_io io;	 /* its waits, SO_*TIMEO's deadline */
};

void fd_op_buf(struct fd_op *op, enum fd_call call, int fd, const void *buf,
	       size_t len);
void fd_op_iov(struct fd_op *op, enum fd_call call, int fd,
	       const struct iovec *iov, int iovcnt);
/* recvmsg, sendmsg: the program's msghdr, read only once the kernel has. */
void fd_op_msg(struct fd_op *op, enum fd_call call, int fd,
	       const struct msghdr *msg);
/* Skip n bytes of op already done (sendmmsg's partial message); false
 * if the copy of the program's buffers could not be made. */
bool fd_op_skip(struct fd_op *op, size_t n);
/* Do op as the blocking call would: once (a read returns what is there),
 * or until all of it is done (writes; MSG_WAITALL). Count or -errno. */
long fd_transfer(struct fd_op *op, bool all);

#endif
