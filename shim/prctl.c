/*
 * prctl.c: the prctl options that act on the calling thread's identity,
 * for a goroutine: PR_SET_NAME and PR_GET_NAME name it (pthread_name.c),
 * PR_GET_TID_ADDRESS says where its set_tid_address word is (thread_id.c).
 * The kernel would answer for the M, whose name and word every goroutine
 * on it shares. Every other option is the kernel's, as glibc's prctl is a
 * bare system call.
 */
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "../core/sys.h"
#include "shim.h"

#define TASK_COMM_LEN 16

static long name_prctl(struct g *gp, int option, unsigned long arg)
{
	char name[TASK_COMM_LEN] = { 0 };
	int err;

	if (option == PR_GET_NAME) {
		if ((err = shim_name_get(gp, name)) != 0)
			return -err;
		return sys_copy_out((void *)arg, name, sizeof name);
	}
	/* As the kernel's strncpy_from_user: up to the NUL or 15 bytes,
	 * each byte readable. */
	for (int i = 0; i < TASK_COMM_LEN - 1; i++) {
		if (sys_copy_in(&name[i], (const char *)arg + i, 1) != 0)
			return -EFAULT;
		if (name[i] == '\0')
			break;
	}
	return -shim_name_set(gp, name);
}

bool shim_prctl(int option, const unsigned long *a, long *ret)
{
	struct g *gp;

	if (!shim_active() || !on_goroutine())
		return false;
	gp = getg();
	switch (option) {
	case PR_SET_NAME:
	case PR_GET_NAME:
		*ret = name_prctl(gp, option, a[0]);
		return true;
	case PR_GET_TID_ADDRESS:
	{
		_Atomic int *addr = g_tid_address(gp);
		*ret = sys_copy_out((void *)a[0], &addr, sizeof addr);
		return true;
	}
	default:
		return false;
	}
}

GOSHIM_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	long r;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!shim_prctl(option, a, &r))
		r = SYS6(SYS_prctl, option, a[0], a[1], a[2], a[3], 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}
