/*
 * real.h: the C library's own functions behind goshim's interposers.
 *
 * Filled once by shim/real.c (dlsym RTLD_NEXT / dlvsym) before the runtime
 * starts; core reaches libc's pthread functions only through this table, so
 * it never calls an interposer by accident.
 */
#ifndef GOSHIM_REAL_H
#define GOSHIM_REAL_H

#include <pthread.h>

struct real_fns {
	int (*pthread_create)(pthread_t *, const pthread_attr_t *,
			      void *(*)(void *), void *);
	void (*pthread_exit)(void *) __attribute__((noreturn));
	int (*pthread_join)(pthread_t, void **);
	int (*pthread_tryjoin_np)(pthread_t, void **);
	int (*pthread_clockjoin_np)(pthread_t, void **, clockid_t,
				    const struct timespec *);
	int (*pthread_detach)(pthread_t);
	int (*pthread_getattr_np)(pthread_t, pthread_attr_t *);
	int (*pthread_key_create)(pthread_key_t *, void (*)(void *));
	int (*pthread_key_delete)(pthread_key_t);
	void *(*pthread_getspecific)(pthread_key_t);
	int (*pthread_setspecific)(pthread_key_t, const void *);
	int (*pthread_setname_np)(pthread_t, const char *);
	int (*pthread_getname_np)(pthread_t, char *, size_t);
	int (*sched_yield)(void);
	void *(*dlopen)(const char *, int);
	void *(*dlmopen)(long, const char *, int);
	int (*pthread_once)(pthread_once_t *, void (*)(void));
	int (*pthread_barrier_init)(pthread_barrier_t *,
				    const pthread_barrierattr_t *, unsigned);
	int (*pthread_barrier_wait)(pthread_barrier_t *);
	int (*pthread_barrier_destroy)(pthread_barrier_t *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *,
			       struct timespec *);
};

extern struct real_fns real;

#endif
