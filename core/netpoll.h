/*
 * netpoll.h: goroutines waiting for fds, and what goshim knows of each fd.
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
 * fails with EINTR, or starts over if fd_restart says so), ECANCELED (a
 * cancel request is due: the call is a cancellation point; it undoes
 * what it holds and acts on it) or EPERM (epoll cannot watch it: make the
 * blocking call).
 */
#ifndef GOSHIM_NETPOLL_H
#define GOSHIM_NETPOLL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { NP_READ = 1, NP_WRITE = 2 };

/* What an fd is, learnt once (fstat) and forgotten on close. */
enum fd_kind {
	FD_UNKNOWN,
	FD_OTHER,  /* anything goshim leaves to the C library (files, ttys) */
	FD_PIPE,   /* pipe: per-call RWF_NOWAIT, readiness from epoll */
	FD_SOCKET, /* socket: MSG_DONTWAIT or RWF_NOWAIT */
	FD_EVENT,  /* eventfd, timerfd, signalfd, inotify: shim/fd_event.c */
	FD_COMM,   /* a goroutine's comm file opened for writing: task_comm.c */
};

struct pd;
struct waiter;

/* One (fd, modes) a goroutine waits for; private fields set by arm. */
struct netpoll_link {
	struct netpoll_link *next;
	struct waiter *w;
	bool queued;
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

/* The fd table. */
enum fd_kind fd_kind(int fd);
/* The socket's type (SOCK_STREAM, ...), learnt on first use; 0 if not a
 * socket. */
int fd_socktype(int fd);
/* A listening socket (SO_ACCEPTCONN), learnt on first use. */
bool fd_listening(int fd);
/* The process made it through goshim (socket, socketpair, accept): it may
 * be made non-blocking for an instant (connect). */
bool fd_ours(int fd);
/* An fd the program just made (socket, pipe, accept): whoever still
 * waited on an fd of that number wakes with EBADF. */
void fd_learn(int fd, enum fd_kind kind, int socktype, bool ours);
/* RWF_NOWAIT said EOPNOTSUPP on fd: a FIFO opened by name, or a pipe
 * end once given to splice, tee or vmsplice (Linux then clears
 * FMODE_NOWAIT on that end for good; the other end and sockets keep
 * it). fd_nowait: not known to be so. */
void fd_lost_nowait(int fd);
bool fd_nowait(int fd);
/* One of the runtime's own fds (epoll, its eventfd, the trace file, the
 * Ms' files sysmon reads): the program cannot see, close or change it. */
bool fd_runtime(int fd);
/* No runtime fd is below fd_runtime_min (INT_MAX while there is none),
 * nor at or above fd_runtime_end. */
extern _Atomic int fd_runtime_min, fd_runtime_end;
/* fd is the runtime's, so not open as far as the program can tell: every
 * interposer that takes an fd asks first and says EBADF. The runtime's
 * fds sit above the program's first 48, so for those this is one compare
 * (and for the others a look at their pd). */
static inline bool fd_hidden(int fd)
{
	return __builtin_expect(fd >= atomic_load_explicit(
					       &fd_runtime_min,
					       memory_order_relaxed),
				0) &&
	       fd_runtime(fd);
}
/* openat(AT_FDCWD, ...) of a file of the runtime's own: the fd (or
 * -errno) is close-on-exec, high in the table, out of the program's way,
 * and hidden. fd_runtime_close closes it, unless the program took the
 * number meanwhile (fd_vacate: a file the runtime only reads is let
 * go). */
int fd_runtime_open(const char *path, int flags, int mode);
int fd_runtime_open_ro(const char *path); /* O_RDONLY */
void fd_runtime_close(int fd);
/* The program takes the number fd (dup2 onto it): if the runtime uses
 * it, move that elsewhere first. 0 or errno (EMFILE). */
int fd_vacate(int fd);
/* dup and friends: to is now the file from is (whoever waited on the
 * file to had wakes with EBADF, as after close). */
void fd_copy(int from, int to);
/* call(arg) with O_NONBLOCK set on fd for its duration only (connect on
 * a socket of fd_ours): returns what it returns, or -errno of F_GETFL,
 * or -EPERM if fd has no pd. The program never sees the flag: its own
 * F_GETFL, F_SETFL and FIONBIO go through fd_flags_call, which waits
 * until the flag is back. */
long fd_nowait_call(int fd, long (*call)(void *), void *arg);
long fd_flags_call(int fd, long (*call)(void *), void *arg);
/* The program closes fd: goroutines waiting on it wake and get EBADF;
 * false for the runtime's own fds, which the program cannot close. */
bool fd_close(int fd);
/* close_range(first, last, 0), around the runtime's own fds: 0 or -errno
 * (EINVAL for first > last); every fd it closes is forgotten as by
 * fd_close. */
long fd_close_range(unsigned first, unsigned last);

/* One goroutine at a time per fd gets in (accept), on the pd. Returns
 * EBADF if the fd was closed while it waited, ETIMEDOUT (not taken) at
 * the deadline (monotonic ns, -1 none). */
int fd_serial_lock(struct netpoll_req *r, int64_t deadline);
void fd_serial_unlock(struct netpoll_req *r);

/* findrunnable (proc.c). Ready the goroutines whose fds had events:
 * without blocking, if any goroutine waits and no M blocks in netpoll
 * (returns how many); or block until an event, the deadline (monotonic
 * ns, -1 none) or netpoll_break (false: nobody waits on an fd, sleep on
 * the note instead). */
int netpoll_check(void);
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
