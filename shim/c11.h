/*
 * c11.h: glibc's mapping of pthread results to C11 ones (its
 * thrd_err_map), for c11_mtx.c and thrd.c.
 */
#ifndef GOSHIM_C11_H
#define GOSHIM_C11_H

#include <errno.h>
#include <threads.h>

static inline int thrd_result(int err)
{
	switch (err) {
	case 0:
		return thrd_success;
	case ENOMEM:
		return thrd_nomem;
	case ETIMEDOUT:
		return thrd_timedout;
	case EBUSY:
		return thrd_busy;
	default:
		return thrd_error;
	}
}

#endif
