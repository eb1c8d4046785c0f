/* sys.c: small helpers over raw system calls (see sys.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/futex.h>
#include <time.h>
#include "runtime.h"
#include "sys.h"

void kept_open(struct kept_file *k, const char *path,
	       const struct kept_ops *ops)
{
	struct stat st;

	k->fd = ops->open(path);
	if (k->fd < 0) {
		k->fd = -1;
	} else if (SYS2(SYS_fstat, k->fd, &st) != 0) {
		kept_close(k, ops);
	} else {
		k->dev = st.st_dev;
		k->ino = st.st_ino;
	}
}

void kept_close(struct kept_file *k, const struct kept_ops *ops)
{
	if (k->fd >= 0)
		ops->close(k->fd);
	k->fd = -1;
}

long kept_read(const struct kept_file *k, char *buf, size_t cap)
{
	struct stat st;

	if (k->fd < 0 || SYS2(SYS_fstat, k->fd, &st) != 0 ||
	    st.st_dev != k->dev || st.st_ino != k->ino)
		return -1;
	return sys_pread(k->fd, buf, cap, 0);
}

long sys_epoll_wait_ts(int epfd, void *ev, int max, const struct timespec *ts,
		       const void *mask)
{
	static _Atomic bool no_pwait2; /* the kernel predates 5.11 */
	long n = -ENOSYS;

	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		n = SYS6(SYS_epoll_pwait2, epfd, ev, max, ts, mask, 8);
		if (n == -ENOSYS)
			atomic_store(&no_pwait2, true);
	}
	if (n == -ENOSYS) {
		/* Milliseconds, rounded up: never back before the time. */
		int64_t ms = ts == NULL ? -1
					: (ts->tv_sec * 1000000000 +
					   ts->tv_nsec + 999999) / 1000000;
		n = SYS6(SYS_epoll_pwait, epfd, ev, max,
			 ms > INT32_MAX ? INT32_MAX : ms, mask, 8);
	}
	return n;
}

/* [p, p+n) lies in the calling goroutine's stack above this frame, and
 * this frame is in that stack (not a signal's alternate one): memory in
 * use, so readable without asking the kernel. Most timeouts are a local
 * of the caller's. */
static bool on_own_stack(const void *p, size_t n)
{
	struct g *gp = getg();
	const char *sp = __builtin_frame_address(0);
	const char *a = p;

	if (gp == NULL || gp->is_g0 || gp->stack_hi == NULL ||
	    sp < gp->stack_lo || sp >= gp->stack_hi)
		return false;
	return a >= sp && a <= gp->stack_hi - n;
}

/* FUTEX_WAIT reads and checks its timeout the kernel's way (EFAULT, then
 * EINVAL unless valid) before it compares the word, which does not match,
 * so it returns EAGAIN at once. A NULL timeout would be no timeout
 * there: it is EFAULT here, as for the calls that need one. A timeout on
 * the caller's own stack is read here, with the kernel's rule
 * (timespec64_valid): one system call less for each timed wait. */
long sys_ts_check(const struct timespec *ts)
{
	uint32_t word = 0;

	if (ts == NULL)
		return -EFAULT;
	if (on_own_stack(ts, sizeof *ts))
		return ts->tv_sec < 0 ||
				       (unsigned long)ts->tv_nsec >= 1000000000ul
			       ? -EINVAL
			       : 0;
	long r = sys_futex(&word, FUTEX_WAIT_PRIVATE, 1, ts, NULL, 0);
	return r == -EAGAIN ? 0 : r;
}

/* FUTEX_WAIT reads the word (EFAULT if it cannot) and compares it with 1,
 * which an aligned pointer never is; were it 1, the zero timeout ends the
 * wait at once. */
bool sys_readable(const void *p)
{
	struct timespec zero = { 0, 0 };
	return sys_futex((void *)p, FUTEX_WAIT_PRIVATE, 1, &zero, NULL, 0) !=
	       -EFAULT;
}

/* process_vm_readv/writev on the process itself: the kernel copies, and
 * says EFAULT where the program's memory is not there (or not writable).
 * Where they are refused (a seccomp filter), a plain copy. */
static long copy_user(void *dst, const void *src, size_t n, bool out)
{
	static _Atomic bool refused;
	struct iovec local = { out ? (void *)src : dst, n };
	struct iovec remote = { out ? dst : (void *)src, n };
	long r;

	if (n == 0)
		return 0;
	if (!atomic_load_explicit(&refused, memory_order_relaxed)) {
		r = SYS6(out ? SYS_process_vm_writev : SYS_process_vm_readv,
			 sys_getpid(), &local, 1, &remote, 1, 0);
		if (r == (long)n)
			return 0;
		if (r >= 0 || r == -EFAULT)
			return -EFAULT;
		if (r != -ENOSYS && r != -EPERM)
			return r;
		atomic_store(&refused, true);
	}
	memcpy(dst, src, n);
	return 0;
}

long sys_copy_in(void *dst, const void *src, size_t n)
{
	return copy_user(dst, src, n, false);
}

long sys_copy_out(void *dst, const void *src, size_t n)
{
	return copy_user(dst, src, n, true);
}
