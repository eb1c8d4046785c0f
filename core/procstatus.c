/*
 * procstatus.c: the process's /proc/self/status, kept open.
 *
 * checkdead counts the process's threads there and select learns the
 * size of the fd table (FDSize), both while the program runs. A file
 * opened for each look would take, for an instant, the lowest free fd,
 * which an open of the program's running meanwhile should have had; so
 * it is opened once, at start-up before main(), hidden high in the table,
 * and read again from its start (kept_read). A child of fork opens its
 * own while the forking thread is still its only one: the parent's named
 * the parent.
 */
#include <errno.h>
#include "netpoll.h"
#include "procparse.h"
#include "sys.h"

static struct kept_file status = { .fd = -1 };

void proc_status_open(void)
{
	static const struct kept_ops hidden = { fd_runtime_open_ro,
						fd_runtime_close };
	kept_open(&status, "/proc/self/status", &hidden);
}

int proc_status_get(const char *name)
{
	char buf[4096];
	long n = kept_read(&status, buf, sizeof buf);
	int v;

	if (n < 0)
		return -EBADF;
	v = proc_status_field(buf, (size_t)n, name);
	return v >= 0 ? v : -ENOENT;
}
