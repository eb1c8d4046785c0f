/*
 * real.c: the one table of the C library's own functions (see core/real.h).
 * Filled with dlsym(RTLD_NEXT) before anything else runs; a missing entry
 * is a broken C library, so it is fatal.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "shim.h"

struct real_fns real;

static void *must(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f == NULL) {
		fprintf(stderr, "goshim: libc lacks %s\n", name);
		abort();
	}
	return f;
}

void real_init(void)
{
	if (real.pthread_create)
		return;
	real.pthread_exit = must("pthread_exit");
	real.pthread_join = must("pthread_join");
	real.pthread_tryjoin_np = must("pthread_tryjoin_np");
	real.pthread_clockjoin_np = must("pthread_clockjoin_np");
	real.pthread_detach = must("pthread_detach");
	real.pthread_getattr_np = must("pthread_getattr_np");
	real.pthread_key_create = must("pthread_key_create");
	real.pthread_key_delete = must("pthread_key_delete");
	real.pthread_getspecific = must("pthread_getspecific");
	real.pthread_setspecific = must("pthread_setspecific");
	real.pthread_setname_np = must("pthread_setname_np");
	real.pthread_getname_np = must("pthread_getname_np");
	real.sched_yield = must("sched_yield");
	real.dlopen = must("dlopen");
	real.dlmopen = must("dlmopen");
	real.pthread_once = must("pthread_once");
	real.pthread_barrier_init = must("pthread_barrier_init");
	real.pthread_barrier_wait = must("pthread_barrier_wait");
	real.pthread_barrier_destroy = must("pthread_barrier_destroy");
	real.clock_nanosleep = must("clock_nanosleep");
	real.pthread_create = must("pthread_create");
}
