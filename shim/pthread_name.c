/*
 * pthread_name.c: thread names. A goroutine has no task of its own whose
 * comm the kernel could keep: its name is kept in the G (15 bytes,
 * inherited from the creator like a Linux thread's comm). The main
 * goroutine's is the main thread's comm, which ps and /proc/PID/comm show
 * as the process's name: it is read and written through that thread's
 * comm file, since the main goroutine may run on any M. A thread joined
 * or reaped has no task left to name: ENOENT, as glibc's open of its comm
 * file says. prctl(PR_SET_NAME, PR_GET_NAME) name the caller the same way
 * (prctl.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include "../core/print.h"
#include "../core/sys.h"
#include "shim.h"

#define TASK_COMM_LEN 16

/* Read (set false) or write the main thread's comm; 0 or an errno. */
static int main_comm(char name[TASK_COMM_LEN], bool set)
{
	char path[48];
	long fd, n;

	snprint(path, sizeof path, "/proc/self/task/%d/comm",
		(int)sys_getpid());
	fd = SYS4(SYS_openat, AT_FDCWD, path,
		  (set ? O_WRONLY : O_RDONLY) | O_CLOEXEC, 0);
	if (fd < 0)
		return (int)-fd;
	if (set)
		n = SYS3(SYS_write, fd, name, strnlen(name, TASK_COMM_LEN - 1));
	else
		n = SYS3(SYS_read, fd, name, TASK_COMM_LEN);
	sys_close((int)fd);
	if (n < 0)
		return (int)-n;
	if (!set) /* the file's content ends in a newline */
		name[n > 0 && name[n - 1] == '\n' ? n - 1 : n] = '\0';
	return 0;
}

int shim_name_set(struct g *gp, const char *name)
{
	char buf[TASK_COMM_LEN] = { 0 };

	memcpy(buf, name, strnlen(name, TASK_COMM_LEN - 1));
	if (g_is_main(gp))
		return main_comm(buf, true);
	memcpy(gp->name, buf, TASK_COMM_LEN);
	return 0;
}

int shim_name_get(struct g *gp, char name[TASK_COMM_LEN])
{
	if (g_is_main(gp))
		return main_comm(name, false);
	memcpy(name, gp->name, TASK_COMM_LEN);
	name[TASK_COMM_LEN - 1] = '\0';
	return 0;
}

GOSHIM_EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL)
		return real.pthread_setname_np(t, name);
	if (strlen(name) >= TASK_COMM_LEN)
		return ERANGE;
	if (g_gone(gp))
		return ENOENT;
	return shim_name_set(gp, name);
}

GOSHIM_EXPORT int pthread_getname_np(pthread_t t, char *buf, size_t len)
{
	struct g *gp = shim_thread(t);
	char name[TASK_COMM_LEN];
	int err;

	if (gp == NULL)
		return real.pthread_getname_np(t, buf, len);
	if (len < TASK_COMM_LEN)
		return ERANGE;
	if (g_gone(gp))
		return ENOENT;
	if ((err = shim_name_get(gp, name)) != 0)
		return err;
	/* glibc has the kernel write it (prctl, read): EFAULT for bad buf */
	if (sys_copy_out(buf, name, strlen(name) + 1) != 0)
		return EFAULT;
	return 0;
}
