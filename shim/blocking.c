/*
 * blocking.c: calls that really block in the kernel run under
 * entersyscall/exitsyscall: the goroutine keeps its OS thread for the call
 * and its P is left for sysmon to hand to another M if the call takes
 * longer than a tick, so other goroutines keep running.
 *
 * Each wrapper is IN_SYSCALL_AGAIN (shim.h) around the C library's
 * function: an EINTR no handler of the program's caused makes the call
 * again, as natively nothing would have ended it. The list below is the
 * whole of it. Those on an fd (BLOCKING_FD) say EBADF
 * for the runtime's own, which the program never opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fd.h"
#include "../core/sys.h"

#define BLOCKING_IF(hidden, ret, name, params, args)                 \
	GOSHIM_EXPORT ret name params                                \
	{                                                            \
		ret(*fn) params;                                     \
		if (hidden) {                                        \
			errno = EBADF;                               \
			return -1;                                   \
		}                                                    \
		fn = (ret(*) params)REAL_NEXT_GET(name);             \
		if (!shim_active())                                  \
			return fn args;                              \
		return IN_SYSCALL_AGAIN(fn args);                    \
	}
#define BLOCKING(ret, name, params, args) \
	BLOCKING_IF(false, ret, name, params, args)
#define BLOCKING_FD(ret, name, params, args) \
	BLOCKING_IF(fd_hidden(fd), ret, name, params, args)

BLOCKING(pid_t, waitpid, (pid_t pid, int *st, int opt), (pid, st, opt))
BLOCKING(pid_t, wait, (int *st), (st))
BLOCKING(pid_t, wait3, (int *st, int opt, struct rusage *ru), (st, opt, ru))
BLOCKING(pid_t, wait4, (pid_t pid, int *st, int opt, struct rusage *ru),
	 (pid, st, opt, ru))
BLOCKING(int, waitid, (idtype_t t, id_t id, siginfo_t *si, int opt),
	 (t, id, si, opt))
BLOCKING_FD(int, fsync, (int fd), (fd))
BLOCKING_FD(int, fdatasync, (int fd), (fd))
BLOCKING_FD(int, sync_file_range,
	    (int fd, off_t off, off_t n, unsigned int flags),
	    (fd, off, n, flags))
BLOCKING_FD(int, flock, (int fd, int op), (fd, op))
BLOCKING_FD(int, lockf, (int fd, int cmd, off_t len), (fd, cmd, len))
BLOCKING(ssize_t, msgrcv,
	 (int id, void *msg, size_t sz, long type, int flg),
	 (id, msg, sz, type, flg))
BLOCKING(int, msgsnd, (int id, const void *msg, size_t sz, int flg),
	 (id, msg, sz, flg))
BLOCKING(int, semop, (int id, struct sembuf *ops, size_t n), (id, ops, n))
BLOCKING(int, semtimedop,
	 (int id, struct sembuf *ops, size_t n, const struct timespec *t),
	 (id, ops, n, t))
BLOCKING(int, pause, (void), ())
BLOCKING(int, creat, (const char *path, mode_t mode), (path, mode))
/* Positioned I/O is for files and devices (pipes and sockets say ESPIPE):
 * the disk may take its time. */
BLOCKING_FD(ssize_t, pread, (int fd, void *b, size_t n, off_t o),
	    (fd, b, n, o))
BLOCKING_FD(ssize_t, pread64, (int fd, void *b, size_t n, off64_t o),
	    (fd, b, n, o))
BLOCKING_FD(ssize_t, pwrite, (int fd, const void *b, size_t n, off_t o),
	    (fd, b, n, o))
BLOCKING_FD(ssize_t, pwrite64, (int fd, const void *b, size_t n, off64_t o),
	    (fd, b, n, o))
BLOCKING_FD(ssize_t, preadv,
	    (int fd, const struct iovec *v, int n, off_t o), (fd, v, n, o))
BLOCKING_FD(ssize_t, preadv64,
	    (int fd, const struct iovec *v, int n, off64_t o), (fd, v, n, o))
BLOCKING_FD(ssize_t, pwritev,
	    (int fd, const struct iovec *v, int n, off_t o), (fd, v, n, o))
BLOCKING_FD(ssize_t, pwritev64,
	    (int fd, const struct iovec *v, int n, off64_t o), (fd, v, n, o))
BLOCKING_FD(ssize_t, preadv2,
	    (int fd, const struct iovec *v, int n, off_t o, int fl),
	    (fd, v, n, o, fl))
BLOCKING_FD(ssize_t, preadv64v2,
	    (int fd, const struct iovec *v, int n, off64_t o, int fl),
	    (fd, v, n, o, fl))
BLOCKING_FD(ssize_t, pwritev2,
	    (int fd, const struct iovec *v, int n, off_t o, int fl),
	    (fd, v, n, o, fl))
BLOCKING_FD(ssize_t, pwritev64v2,
	    (int fd, const struct iovec *v, int n, off64_t o, int fl),
	    (fd, v, n, o, fl))

/* _FORTIFY_SOURCE's forms: glibc's would call its own pread directly. */
void __chk_fail(void) __attribute__((noreturn));

GOSHIM_EXPORT ssize_t __pread_chk(int fd, void *b, size_t n, off_t o,
				  size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread(fd, b, n, o);
}

GOSHIM_EXPORT ssize_t __pread64_chk(int fd, void *b, size_t n, off64_t o,
				    size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return pread64(fd, b, n, o);
}

/* open may block (a FIFO waits for its other end, NFS, FUSE). glibc's
 * open is openat(AT_FDCWD, ...), so both take the same path here. A
 * relative path from one of the runtime's fds is from an fd not open. */
static int open_at(int dirfd, const char *path, int flags, mode_t mode)
{
	int (*fn)(int, const char *, int, ...);
	char c;

	if (fd_hidden(dirfd) && sys_copy_in(&c, path, 1) == 0 && c != '/') {
		errno = EBADF;
		return -1;
	}

	fn = (int (*)(int, const char *, int, ...))REAL_NEXT_GET(openat);
	if (!shim_active())
		return fn(dirfd, path, flags, mode);
	int fd = IN_SYSCALL_AGAIN(fn(dirfd, path, flags, mode));
	long opened = fd < 0 ? -errno : fd, r;
	/* The kernel has read path if it opened it or found nothing. */
	if ((opened >= 0 || opened == -ENOENT) &&
	    shim_comm_open(path, flags, opened, &r)) {
		if (opened >= 0)
			sys_close(fd);
		return (int)fd_ret(r);
	}
	return fd;
}

/* The mode argument exists only when the flags ask to create a file. */
#define OPEN_MODE(flags, last)                             \
	({                                                 \
		mode_t m_ = 0;                             \
		if ((flags) & (O_CREAT | O_TMPFILE)) {     \
			va_list ap_;                       \
			va_start(ap_, last);               \
			m_ = va_arg(ap_, mode_t);          \
			va_end(ap_);                       \
		}                                          \
		m_;                                        \
	})

GOSHIM_EXPORT int open(const char *path, int flags, ...)
{
	return open_at(AT_FDCWD, path, flags, OPEN_MODE(flags, flags));
}

GOSHIM_EXPORT int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));

GOSHIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	return open_at(dirfd, path, flags, OPEN_MODE(flags, flags));
}

/* syscall() itself: a raw futex wait, a raw read, anything. */
GOSHIM_EXPORT long syscall(long nr, ...)
{
	long (*fn)(long, ...) = (long (*)(long, ...))REAL_NEXT_GET(syscall);
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	long r;
	if (shim_unmap_syscall(nr, a, &r))
		return r;
	if (!shim_active())
		return fn(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (shim_tid_syscall(nr, a, &r) || shim_sched_syscall(nr, a, &r))
		return r;
	if (nr == SYS_futex && shim_futex_syscall(a, &r))
		return r;
	if (shim_cpuclock_syscall(nr, a, &r))
		return r;
	/* Made again after goshim's own EINTR, as every call here is
	 * (shim.h), but close: its EINTR may come after the fd is gone. */
	if (nr == SYS_close)
		return IN_SYSCALL(fn(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
	return IN_SYSCALL_AGAIN(fn(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}
