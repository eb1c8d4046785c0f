/*
 * mmap.c: munmap and mremap (also through syscall()). Preemption may stop
 * a goroutine in anonymous executable memory, JIT code (core/preempt.c);
 * a range the program unmaps or moves is no longer known to be code, so
 * it is told, before the kernel's call and after. The calls themselves
 * are the kernel's, as glibc makes them.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "../core/preempt.h"
#include "../core/sys.h"
#include "shim.h"

/* The ranges an mremap(old, old_len, new_len, flags, new_addr) may take
 * from the code it held: the old one, and with MREMAP_FIXED the one it
 * replaces. */
static void remap_note(const long *a, bool done)
{
	preempt_text_unmap((uintptr_t)a[0], (size_t)a[1], done);
	if (a[3] & MREMAP_FIXED)
		preempt_text_unmap((uintptr_t)a[4], (size_t)a[2], done);
}

/* syscall(SYS_munmap or SYS_mremap, a...): the raw result. */
static long unmap_call(long nr, const long *a)
{
	long r;

	if (nr == SYS_munmap) {
		preempt_text_unmap((uintptr_t)a[0], (size_t)a[1], false);
		r = SYS2(SYS_munmap, a[0], a[1]);
		preempt_text_unmap((uintptr_t)a[0], (size_t)a[1], true);
	} else {
		remap_note(a, false);
		r = SYS6(SYS_mremap, a[0], a[1], a[2], a[3], a[4], 0);
		remap_note(a, true);
	}
	return r;
}

bool shim_unmap_syscall(long nr, const long *a, long *ret)
{
	if (nr != SYS_munmap && nr != SYS_mremap)
		return false;
	long r = unmap_call(nr, a);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		r = -1;
	}
	*ret = r;
	return true;
}

GOSHIM_EXPORT int munmap(void *addr, size_t len)
{
	long a[6] = { (long)addr, (long)len };
	long r = unmap_call(SYS_munmap, a);

	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

/* new_address is read only with MREMAP_FIXED, as glibc does. */
GOSHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len,
			   int flags, ...)
{
	long a[6] = { (long)old, (long)old_len, (long)new_len, flags, 0 };

	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		a[4] = (long)va_arg(ap, void *);
		va_end(ap);
	}
	long r = unmap_call(SYS_mremap, a);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return MAP_FAILED;
	}
	return (void *)r;
}
