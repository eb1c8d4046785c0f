/* sys.c: small helpers over raw system calls (see sys.h). */
#include <errno.h>
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
