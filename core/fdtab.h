/*
 * fdtab.h: what goshim knows of each fd (Go's internal/poll.FD): what it
 * is, the program's view of its flags, the runtime's own fds hidden among
 * the program's, and what close and dup do to all of that.
 *
 * Knowledge is learnt lazily (fstat, getsockopt) and forgotten when the
 * program closes the fd or makes another file at its number; a forgotten
 * fd's waiters wake with EBADF (netpoll.h). The program's O_NONBLOCK is its
 * own: goshim sets it only for an instant (fd_nowait_call), and every look
 * at the flags by the program or by goshim waits that instant out.
 */
#ifndef GOSHIM_FDTAB_H
#define GOSHIM_FDTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct netpoll_req;

/* What an fd is, learnt once (fstat) and forgotten on close. */
enum fd_kind {
	FD_UNKNOWN,
	FD_OTHER,  /* anything goshim leaves to the C library (files, ttys) */
	FD_PIPE,   /* pipe: per-call RWF_NOWAIT, readiness from epoll */
	FD_SOCKET, /* socket: MSG_DONTWAIT or RWF_NOWAIT */
	FD_EVENT,  /* eventfd, timerfd, signalfd, inotify: shim/fd_event.c */
	FD_COMM,   /* a goroutine's comm file opened for writing: task_comm.c */
};

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

/* The program made fd non-blocking itself (O_NONBLOCK, SOCK_NONBLOCK):
 * asked of the kernel each time, since it may change the flag at any
 * time. */
bool fd_nonblocking(int fd);
/* A deadline (monotonic ns) now + the socket's SO_RCVTIMEO or SO_SNDTIMEO
 * (opt), or -1: none set, or not a socket. Asked of the kernel, never
 * cached: a dup'ed or inherited socket, or one set through syscall(),
 * shares the kernel's value. */
int64_t fd_sock_deadline(int fd, int opt);
#define FD_DEADLINE_UNKNOWN (-2)

/* One goroutine at a time per fd gets in (accept), on the pd. Returns
 * EBADF if the fd was closed while it waited, ETIMEDOUT (not taken) at
 * the deadline (monotonic ns, -1 none). */
int fd_serial_lock(struct netpoll_req *r, int64_t deadline);
void fd_serial_unlock(struct netpoll_req *r);

#endif
