/*
 * sys.h: raw system calls for the runtime.
 *
 * The runtime must never reach its own interposers (an internal open() or
 * read() would bind to goshim's exported one and could park), and must work
 * before libc's wrappers are safe to call from a goroutine. Everything here
 * goes straight to the kernel and returns -errno on failure.
 */
#ifndef GOSHIM_SYS_H
#define GOSHIM_SYS_H

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>
#include "../arch/arch.h"

#define SYS0(n) arch_syscall6((n), 0, 0, 0, 0, 0, 0)
#define SYS1(n, a) arch_syscall6((n), (long)(a), 0, 0, 0, 0, 0)
#define SYS2(n, a, b) arch_syscall6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define SYS3(n, a, b, c) \
	arch_syscall6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS4(n, a, b, c, d) \
	arch_syscall6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define SYS6(n, a, b, c, d, e, f)                                        \
	arch_syscall6((n), (long)(a), (long)(b), (long)(c), (long)(d), \
		      (long)(e), (long)(f))

static inline int sys_open(const char *path, int flags)
{
	return (int)SYS4(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0);
}
static inline long sys_read(int fd, void *buf, size_t n)
{
	return SYS3(SYS_read, fd, buf, n);
}
static inline long sys_pread(int fd, void *buf, size_t n, off_t off)
{
	return SYS4(SYS_pread64, fd, buf, n, off);
}
static inline long sys_write(int fd, const void *buf, size_t n)
{
	return SYS3(SYS_write, fd, buf, n);
}
/* Zeroed memory from the kernel, NULL if it has none: where malloc may
 * not be called (its locks may be held for good in the child of a vfork
 * or _Fork). */
static inline void *sys_mmap_anon(size_t len)
{
	long a = SYS6(SYS_mmap, 0, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return a < 0 && a > -4096 ? NULL : (void *)a;
}
/* The kernel's, not goshim's interposer (shim/mmap.c). */
static inline int sys_munmap(void *addr, size_t len)
{
	return (int)SYS2(SYS_munmap, addr, len);
}

static inline int sys_close(int fd)
{
	return (int)SYS1(SYS_close, fd);
}
static inline pid_t sys_gettid(void)
{
	return (pid_t)SYS0(SYS_gettid);
}
static inline pid_t sys_getpid(void)
{
	return (pid_t)SYS0(SYS_getpid);
}
/* sched_getaffinity(0): bytes of mask written, or -errno. */
static inline long sys_sched_getaffinity(pid_t pid, size_t len, void *mask)
{
	return SYS3(SYS_sched_getaffinity, pid, len, mask);
}
static inline long sys_futex(void *uaddr, int op, uint32_t val,
			     const void *timeout, void *uaddr2, uint32_t val3)
{
	return SYS6(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}


/*
 * A file the runtime opens once and re-reads from its start (a /proc or
 * cgroup file): an fd opened for an instant takes the lowest free
 * number, which the program's own open, running meanwhile, should have
 * had. What names the file is kept too: a number closed behind the
 * runtime's back (a raw close_range) may name a file of the program's
 * later, and that one is never read.
 */
struct kept_file {
	int fd; /* -1: none */
	uint64_t dev, ino;
};
/* How such files are opened (an fd or -errno) and closed: the runtime's
 * are hidden (fd_runtime_open_ro, fd_runtime_close), a test's plain. */
struct kept_ops {
	int (*open)(const char *path);
	void (*close)(int fd);
};
/* Open path; k->fd -1 if it fails. */
void kept_open(struct kept_file *k, const char *path,
	       const struct kept_ops *ops);
void kept_close(struct kept_file *k, const struct kept_ops *ops);
/* Its content from its start (at most cap bytes): the length, or -1 if
 * it cannot be read or its number names another file now. */
long kept_read(const struct kept_file *k, char *buf, size_t cap);
/* epoll_pwait2 with a timespec (NULL: no timeout), or on a kernel before
 * 5.11 epoll_pwait in milliseconds rounded up, so never back before the
 * time; mask: a kernel sigset or NULL. Count or -errno. */
struct timespec;
/* The kernel's struct sched_attr, first version (sched_setattr). */
struct sys_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};
long sys_epoll_wait_ts(int epfd, void *ev, int max, const struct timespec *ts,
		       const void *mask);

/*
 * The program's pointers that the kernel would check: where goshim has to
 * read or write such memory itself, a bad pointer gets the kernel's EFAULT,
 * not a SIGSEGV inside goshim.
 *
 * sys_ts_check: the kernel's checks of a timespec it reads (EFAULT, then
 * EINVAL unless 0 <= tv_nsec < 1e9 and tv_sec >= 0); 0 if valid.
 * sys_copy_in/out: n bytes from/to the program's memory, 0 or -EFAULT.
 */
long sys_ts_check(const struct timespec *ts);
/* Whether the 4-byte aligned word at p can be read (the kernel reads it). */
bool sys_readable(const void *p);
long sys_copy_in(void *dst, const void *src, size_t n);
long sys_copy_out(void *dst, const void *src, size_t n);

#endif
