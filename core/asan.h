/*
 * asan.h: the shadow memory ASan cannot clean for itself (make asan).
 *
 * ASan clears the shadow of a thread's stack when its pthread_create
 * interceptor starts the thread, and its instrumented frames set only
 * their redzones' shadow, trusting the rest below sp to be clean.
 * goshim's own threads (Ms, sysmon) are made with glibc's pthread_create,
 * past the interceptor, on stacks glibc reuses: from an M that ended
 * inside frames that never returned (pthread_exit), or, in the child of a
 * fork, from every thread that did not come along, whose frames were live.
 * Their redzones are still poisoned, and the new thread's first locals
 * read as overflows. Such a thread cleans its whole stack first.
 */
#ifndef GOSHIM_ASAN_H
#define GOSHIM_ASAN_H

#ifdef __SANITIZE_ADDRESS__
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include "real.h"

static inline void asan_thread_clean(void)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	if (real.pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &lo, &size) == 0)
		ASAN_UNPOISON_MEMORY_REGION(lo, size);
	pthread_attr_destroy(&a);
}

/* The TLS area at the top of a goroutine stack goshim made, before
 * tls_prepare writes it for a new goroutine: the last one's frames below
 * never returned (it ended by a switch), and their redzones read as
 * overflows there. The stack itself ASan's thread start cleans, as for
 * any thread; cleaning it here too, guard and all, cost a 64 GiB guard
 * 16 MiB of page tables (bad_threads) and every start a second pass over
 * the shadow of its stack (pipe_poll's 200 pollers outlived its timeout). */
static inline void asan_stack_clean(void *lo, size_t size)
{
	ASAN_UNPOISON_MEMORY_REGION(lo, size);
}
#else
static inline void asan_thread_clean(void)
{
}

static inline void asan_stack_clean(void *lo, size_t size)
{
	(void)lo;
	(void)size;
}
#endif

#endif
