/*
 * init.c: start the runtime as early as the library is loaded.
 *
 * Interposers also start it on first use (another library's constructor may
 * call pthread_create before ours runs); this constructor only makes sure a
 * program that never calls one still gets its main thread set up before
 * main() runs.
 */
#include "../core/chaos.h"
#include "shim.h"

bool shim_start(void)
{
	real_init();
	runtime_ensure_init();
	if (chaos() && atomic_load(&runtime_running))
		chaos_yield();
	return runtime_enabled;
}

__attribute__((constructor)) static void goshim_ctor(void)
{
	real_init();
	runtime_ensure_init();
}
