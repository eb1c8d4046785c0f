/*
 * dlopen.c: a module that ld.so places in static TLS is initialised only in
 * the threads ld.so knows; goroutines are not among them, so goshim copies
 * the module's TLS image into every goroutine's TCB (core/tls.c). dlclose
 * is watched so that a module loaded again is initialised again.
 */
#include <dlfcn.h>
#include "../core/tls.h"
#include "shim.h"

GOSHIM_EXPORT void *dlopen(const char *file, int mode)
{
	real_init(); /* a constructor may dlopen before ours runs */
	void *h = real.dlopen(file, mode);
	if (h && shim_active())
		tls_after_dlopen();
	return h;
}

GOSHIM_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	real_init();
	void *h = real.dlmopen(lmid, file, mode);
	if (h && shim_active())
		tls_after_dlopen();
	return h;
}

GOSHIM_EXPORT int dlclose(void *handle)
{
	real_init();
	int r = real.dlclose(handle);
	if (r == 0 && shim_active())
		tls_after_dlclose();
	return r;
}
