/* sys.c: small helpers over raw system calls (see sys.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "sys.h"

long sys_read_file(const char *path, char *buf, size_t cap)
{
	int fd = sys_open(path, O_RDONLY);
	size_t len = 0;

	if (fd < 0)
		return fd;
	if (cap == 0) {
		sys_close(fd);
		return -EINVAL;
	}
	while (len < cap - 1) {
		long n = sys_read(fd, buf + len, cap - 1 - len);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			sys_close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	sys_close(fd);
	return (long)len;
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
