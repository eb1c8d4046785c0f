/*
 * pthread_key.c: thread-specific data. Key numbers come from glibc (so a
 * thread goshim did not create uses the same key through glibc); values of
 * goroutines live in their G (core/keys.c), destructors run at goroutine
 * exit.
 *
 * None of these starts the runtime: a key is glibc's, and a thread that is
 * no goroutine (every thread, before the runtime runs) keeps its values in
 * glibc. ASan's own start-up creates a key and sets a value; a runtime
 * started from there ran inside it, and its first atexit() hit ASan's
 * "init is running" check.
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>
#include "shim.h"

GOSHIM_EXPORT int pthread_key_create(pthread_key_t *key,
				     void (*destructor)(void *))
{
	real_init();
	int err = real.pthread_key_create(key, destructor);
	if (err == 0)
		keys_register(*key, destructor);
	return err;
}

GOSHIM_EXPORT int pthread_key_delete(pthread_key_t key)
{
	real_init();
	int err = real.pthread_key_delete(key);
	if (err == 0)
		keys_unregister(key);
	return err;
}

GOSHIM_EXPORT void *pthread_getspecific(pthread_key_t key)
{
	real_init();
	if (!on_goroutine())
		return real.pthread_getspecific(key);
	return keys_get(getg(), key);
}

GOSHIM_EXPORT int pthread_setspecific(pthread_key_t key, const void *value)
{
	real_init();
	if (!on_goroutine())
		return real.pthread_setspecific(key, value);
	return keys_set(getg(), key, value);
}

/* C11: glibc implements these with internal calls interposing cannot see. */

GOSHIM_EXPORT int tss_create(tss_t *key, tss_dtor_t destructor)
{
	return pthread_key_create(key, destructor) ? thrd_error : thrd_success;
}

GOSHIM_EXPORT void tss_delete(tss_t key)
{
	pthread_key_delete(key);
}

GOSHIM_EXPORT void *tss_get(tss_t key)
{
	return pthread_getspecific(key);
}

GOSHIM_EXPORT int tss_set(tss_t key, void *value)
{
	return pthread_setspecific(key, value) ? thrd_error : thrd_success;
}
