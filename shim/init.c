/*
 * init.c: the runtime's load step as early as the library is loaded.
 *
 * The load step decides whether goshim can run at all (core/runtime.c);
 * the scheduler itself starts only with the program's second thread.
 * Interposers also run the load step on first use (another library's
 * constructor may call one before ours runs); this constructor makes sure
 * it has run before main(), in a program that calls none earlier.
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
