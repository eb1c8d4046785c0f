/*
 * netpoll.h: goroutines waiting for fds (the fds themselves: fdtab.h).
 *
 * A wait is two steps around the caller's own non-blocking try, so that an
 * event between the try and the park is never lost:
 *
 *	struct netpoll_req r;
 *	netpoll_arm(&r, fd, NP_READ);
 *	n = <the call, per-call non-blocking>;
 *	if (n == -EAGAIN)
 *		err = netpoll_wait(&r, 1, deadline);
 *
 * netpoll_wait parks only if no event for that fd and mode came since
 * netpoll_arm, and returns 0 (try again), ETIMEDOUT, EBADF (the fd was
 * closed meanwhile), EINTR (a signal's handler ended the wait: the call
 * fails with EINTR), ERESTART (the same, but every handler that ran had
 * SA_RESTART and no deadline bounds the wait: the call starts over, as
 * signal(7) says, unless it is of the poll family, which never restarts),
 * ECANCELED (a cancel request is due: the call is a cancellation point;
 * it undoes what it holds and acts on it) or EPERM (epoll cannot watch
 * it: make the blocking call).
 *
 * A blocking transfer on one fd (read, write, recv, send and their vector
 * forms: shim/fd_io.c) asks once per try instead, as Go's FD.Read waits on
 * its pollDesc (netpoll_io below).
 */
#ifndef GOSHIM_NETPOLL_H
#define GOSHIM_NETPOLL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "fdtab.h"

enum { NP_READ = 1, NP_WRITE = 2 };

struct pd;
struct waiter;

/* One (fd, modes) a goroutine waits for; private fields set by arm. */
struct netpoll_link {
	struct netpoll_link *next;
	struct waiter *w;
	bool queued;
	bool trusted; /* the wait did not add the fd again (netpoll.c) */
};

struct netpoll_req {
	int fd;
	unsigned modes;
	struct pd *pd;
	uint32_t seq;
	uint32_t count[2];
	struct netpoll_link link[2];
};

void netpoll_arm(struct netpoll_req *r, int fd, unsigned modes);
/* Wait until one of the n armed fds had an event, or the deadline
 * (monotonic ns, -1 none). Requests epoll cannot watch are skipped; EPERM
 * when none can be watched. */
int netpoll_wait(struct netpoll_req *r, int n, int64_t deadline);
/* The same for a call that is not a cancellation point (sendfile). */
int netpoll_wait_nocancel(struct netpoll_req *r, int n, int64_t deadline);

/*
 * One blocking transfer on fd, in mode: netpoll_io_arm before its first
 * try, and after each try that would block (-EAGAIN, or -EOPNOTSUPP: the
 * per-call non-blocking form was refused) netpoll_io_wait(io, that
 * result), which decides in one call what the transfer does next:
 *   0		try again (armed again already): per-call non-blocking if
 *		io->nowait, else look at readiness first, then the call;
 *   EAGAIN	fail with EAGAIN: the program made fd non-blocking itself,
 *		or the socket's SO_RCVTIMEO or SO_SNDTIMEO passed;
 *   EPERM	make the blocking call: epoll cannot watch fd;
 *   other	fail with it (EBADF, EINTR, ECANCELED as for netpoll_wait;
 *		EOPNOTSUPP of a socket call).
 * rw: preadv2/pwritev2 (RWF_NOWAIT may be refused on the fd for good;
 * SO_*TIMEO only if it is a socket) rather than a socket call. deadline
 * is FD_DEADLINE_UNKNOWN before the first arm of the whole call: the
 * socket's timeout is asked when it first has to wait (the kernel's runs
 * from its first wait too) and bounds the call, not each wait.
 */
struct netpoll_io {
	struct netpoll_req r;
	int64_t deadline;
	bool rw;
	bool nowait;
};
void netpoll_io_arm(struct netpoll_io *io, int fd, unsigned mode, bool rw);
int netpoll_io_wait(struct netpoll_io *io, long n);

/* findrunnable (proc.c). Ready the goroutines whose fds had events:
 * without blocking, if any goroutine waits and no M blocks in netpoll
 * (returns how many); or block until an event, the deadline (monotonic
 * ns, -1 none) or netpoll_break (false: nobody waits on an fd, sleep on
 * the note instead). */
int netpoll_check(void);
/* sysmon: wake the waits whose trust in their fd's epoll registration
 * has run out (netpoll.c), at most every 100 ms. */
void netpoll_recheck(int64_t now);
bool netpoll_block(int64_t deadline);
/* Goroutines wait on fds and no M is blocked in netpoll for them. */
bool netpoll_unwatched(void);
/* Make the M blocked in netpoll return (Go's netpollBreak). */
void netpoll_break(void);
/* When an M last polled (nanotime): sysmon polls when nobody has for
 * 10 ms. */
extern _Atomic int64_t netpoll_lastpoll;

/* Start-up, on the one thread there is: epoll and its eventfd made now,
 * not on the first wait (see netpoll.c). */
void netpoll_init(void);

/* In the child of fork: a new epoll instance on the next wait, every fd
 * forgotten (core/fork.c). */
void netpoll_fork_child(void);

#endif
