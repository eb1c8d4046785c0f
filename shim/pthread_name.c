/*
 * pthread_name.c: thread names. glibc writes /proc/self/task/TID/comm, and
 * a goroutine has no task of its own: its name is kept in the G (15 bytes,
 * inherited from the creator like a Linux thread's comm). The main thread
 * is a real task; glibc names it. A thread joined or reaped has no task
 * left to name: ENOENT, as glibc's open of its comm file says.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "../core/sys.h"
#include "shim.h"

#define TASK_COMM_LEN 16

GOSHIM_EXPORT int pthread_setname_np(pthread_t t, const char *name)
{
	struct g *gp = shim_thread(t);
	size_t len;

	if (gp == NULL || gp->is_main)
		return real.pthread_setname_np(t, name);
	len = strlen(name);
	if (len >= TASK_COMM_LEN)
		return ERANGE;
	if (g_gone(gp))
		return ENOENT;
	memcpy(gp->name, name, len + 1);
	return 0;
}

GOSHIM_EXPORT int pthread_getname_np(pthread_t t, char *buf, size_t len)
{
	struct g *gp = shim_thread(t);

	if (gp == NULL || gp->is_main)
		return real.pthread_getname_np(t, buf, len);
	if (len < TASK_COMM_LEN)
		return ERANGE;
	if (g_gone(gp))
		return ENOENT;
	char name[TASK_COMM_LEN];
	memcpy(name, gp->name, TASK_COMM_LEN);
	name[TASK_COMM_LEN - 1] = '\0';
	/* glibc has the kernel write it (prctl, read): EFAULT for bad buf */
	if (sys_copy_out(buf, name, TASK_COMM_LEN) != 0)
		return EFAULT;
	return 0;
}
