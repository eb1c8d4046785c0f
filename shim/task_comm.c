/*
 * task_comm.c: a goroutine's comm file, opened by the program itself:
 * /proc/self/task/TID/comm, /proc/PID/task/TID/comm and /proc/TID/comm
 * with TID a goroutine's thread id, and /proc/thread-self/comm from a
 * goroutine.
 *
 * No task of the kernel's has a goroutine's id (thread_id.c), so the
 * kernel has no such file; /proc/thread-self is the M's, whose name every
 * goroutine on it would share. The open gives a memory file (memfd) that
 * reads as the kernel's would at that moment: the goroutine's name and a
 * newline. Opened for writing, it is an FD_COMM fd: write and writev from
 * a goroutine name the goroutine as the kernel's comm_write does (the
 * first 15 bytes of each write, the count returned; ESRCH once the
 * goroutine has exited), and the file then reads as the new name. Every
 * other entry of a goroutine's task directory is missing (ENOENT, as for
 * a thread that has exited); /proc/thread-self's other entries are the
 * M's, the kernel's view of the OS thread the goroutine runs on. The main
 * goroutine's id is the main thread's: its files are the kernel's.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../core/number.h"
#include "../core/print.h"
#include "fd.h"

#define TASK_COMM_LEN 16
#define COMM_FDS 256

/* Which goroutine each FD_COMM fd names (id: its thread id); an entry
 * whose fd is no longer FD_COMM (closed, reused) is free. */
static struct spinlock comm_lock;
static struct {
	int fd;
	pid_t id;
} comm_fds[COMM_FDS];

/* The thread id at p, and the rest of the path, or NULL. */
static const char *digits(const char *p, long *v)
{
	uint64_t u;

	if (!parse_uint(&p, p + strlen(p), 10, INT_MAX, &u))
		return NULL;
	*v = (long)u;
	return p;
}

/* The goroutine's tid that path names the comm file of, or 0. The
 * kernel has read path (up to its NUL) for the open already. */
static pid_t comm_path_tid(const char *p)
{
	long v;

	if (strcmp(p, "/proc/thread-self/comm") == 0)
		return g_tid(getg());
	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	p += 6;
	if (strncmp(p, "self/", 5) == 0) {
		p += 5;
	} else {
		if ((p = digits(p, &v)) == NULL)
			return 0;
		/* /proc/TID/comm: a thread's id names it there too */
		if (v != sys_getpid())
			return strcmp(p, "/comm") == 0 ? (pid_t)v : 0;
		if (*p++ != '/')
			return 0;
	}
	if (strncmp(p, "task/", 5) != 0 || (p = digits(p + 5, &v)) == NULL ||
	    strcmp(p, "/comm") != 0)
		return 0;
	return (pid_t)v;
}

/* The file's content: the name and a newline, from offset 0. */
static long comm_fill(int fd, struct g *gp)
{
	char name[TASK_COMM_LEN + 1];
	long r;
	size_t n;

	if ((r = shim_name_get(gp, name)) != 0)
		return -r;
	n = strlen(name);
	name[n++] = '\n';
	if ((r = SYS2(SYS_ftruncate, fd, 0)) < 0 ||
	    (r = SYS4(SYS_pwrite64, fd, name, n, 0)) < 0)
		return r;
	return 0;
}

static void comm_remember(int fd, pid_t tid)
{
	spin_lock(&comm_lock);
	for (int i = 0; i < COMM_FDS; i++) {
		if (comm_fds[i].fd == fd || comm_fds[i].id == 0 ||
		    fd_kind(comm_fds[i].fd) != FD_COMM) {
			comm_fds[i].fd = fd;
			comm_fds[i].id = tid;
			break;
		}
	}
	spin_unlock(&comm_lock);
}

bool shim_comm_open(const char *path, int flags, long opened, long *ret)
{
	struct g *gp;
	pid_t tid;
	long fd, r;
	char self[32];

	/* Only an open the kernel could not make (a goroutine's task is
	 * not the kernel's), or the M's comm for /proc/thread-self: every
	 * other open is left as it was, at the cost of a look at a path
	 * that starts with /proc/. */
	if (!fd_parks() || strncmp(path, "/proc/", 6) != 0 ||
	    (opened < 0 && opened != -ENOENT) ||
	    (tid = comm_path_tid(path)) == 0 ||
	    (opened >= 0 && strcmp(path, "/proc/thread-self/comm") != 0) ||
	    (gp = g_from_tid(tid)) == NULL || g_is_main(gp))
		return false;
	if (flags & O_DIRECTORY) {
		*ret = -ENOTDIR;
		return true;
	}
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		*ret = -EEXIST;
		return true;
	}
	fd = SYS2(SYS_memfd_create, "comm", MFD_CLOEXEC);
	if (fd < 0 || (r = comm_fill((int)fd, gp)) < 0) {
		if (fd >= 0)
			sys_close((int)fd);
		*ret = fd < 0 ? fd : r;
		return true;
	}
	/* The file open the program asked for on it: its access mode (a
	 * read-only one refuses writes, EBADF) and its O_CLOEXEC. */
	snprint(self, sizeof self, "/proc/self/fd/%d", (int)fd);
	r = SYS4(SYS_openat, AT_FDCWD, self,
		 flags & (O_ACCMODE | O_CLOEXEC | O_APPEND | O_NONBLOCK), 0);
	sys_close((int)fd);
	if (r >= 0 && (flags & O_ACCMODE) != O_RDONLY) {
		fd_learn((int)r, FD_COMM, 0, false);
		comm_remember((int)r, tid);
	}
	*ret = r;
	return true;
}

long shim_comm_write(int fd, const struct iovec *iov, int iovcnt)
{
	char name[TASK_COMM_LEN] = { 0 };
	size_t total = 0, got = 0;
	pid_t tid = 0;
	struct g *gp;

	if (iovcnt < 0 || iovcnt > IOV_MAX)
		return -EINVAL;
	spin_lock(&comm_lock);
	for (int i = 0; i < COMM_FDS && tid == 0; i++)
		if (comm_fds[i].fd == fd)
			tid = comm_fds[i].id;
	spin_unlock(&comm_lock);
	if (tid == 0)
		return IN_SYSCALL(SYS3(SYS_writev, fd, iov, iovcnt));
	/* As comm_write: up to 15 bytes of what is written, then the name
	 * is what comes before a NUL. */
	for (int i = 0; i < iovcnt; i++) {
		struct iovec v;
		if (sys_copy_in(&v, &iov[i], sizeof v) != 0)
			return -EFAULT;
		size_t take = v.iov_len < TASK_COMM_LEN - 1 - got
				      ? v.iov_len
				      : TASK_COMM_LEN - 1 - got;
		if (take && sys_copy_in(name + got, v.iov_base, take) != 0)
			return -EFAULT;
		got += take;
		total += v.iov_len;
	}
	if ((gp = g_from_tid(tid)) == NULL)
		return -ESRCH;
	shim_name_set(gp, name);
	comm_fill(fd, gp);
	return (long)total;
}

/* fopen's open flags for mode, as glibc reads it. */
static int mode_flags(const char *mode)
{
	int f = 0;

	switch (*mode) {
	case 'r':
		f = O_RDONLY;
		break;
	case 'w':
		f = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		f = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	for (const char *m = mode + 1; *m && *m != ','; m++) {
		if (*m == '+')
			f = (f & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'e')
			f |= O_CLOEXEC;
		else if (*m == 'x')
			f |= O_EXCL;
	}
	return f;
}

/* glibc's fopen opens with its own internal open, which no interposer
 * sees: a goroutine's comm file gets the same look here. */
static FILE *comm_fopen(FILE *(*next)(const char *, const char *),
			const char *path, const char *mode)
{
	FILE *f = next(path, mode);
	int e = errno, flags;
	long r;

	if (!fd_parks() || (f == NULL && e != ENOENT) ||
	    (flags = mode_flags(mode)) < 0 ||
	    !shim_comm_open(path, flags, f ? fileno(f) : -ENOENT, &r)) {
		errno = e;
		return f;
	}
	if (f)
		fclose(f);
	if (r < 0) {
		errno = (int)-r;
		return NULL;
	}
	if ((f = fdopen((int)r, mode)) == NULL) {
		e = errno;
		sys_close((int)r);
		errno = e;
	}
	return f;
}

GOSHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return comm_fopen((FILE * (*)(const char *, const char *))
				  REAL_NEXT_GET(fopen),
			  path, mode);
}

GOSHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return comm_fopen((FILE * (*)(const char *, const char *))
				  REAL_NEXT_GET(fopen64),
			  path, mode);
}
