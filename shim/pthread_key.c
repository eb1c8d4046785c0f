/*
 * pthread_key.c: thread-specific data. Key numbers come from glibc (so a
 * thread goshim did not create uses the same key through glibc); values of
 * goroutines live in their G (core/keys.c), destructors run at goroutine
 * exit.
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>
#include "shim.h"

GOSHIM_EXPORT int pthread_key_create(pthread_key_t *key,
				     void (*destructor)(void *))
{
	bool on = shim_active(); /* fills `real`, even when staying native */
	int err = real.pthread_key_create(key, destructor);
	if (err == 0 && on)
		keys_register(*key, destructor);
	return err;
}

GOSHIM_EXPORT int pthread_key_delete(pthread_key_t key)
{
	bool on = shim_active();
	int err = real.pthread_key_delete(key);
	if (err == 0 && on)
		keys_unregister(key);
	return err;
}

GOSHIM_EXPORT void *pthread_getspecific(pthread_key_t key)
{
	if (!shim_active() || !on_goroutine())
		return real.pthread_getspecific(key);
	return keys_get(getg(), key);
}

GOSHIM_EXPORT int pthread_setspecific(pthread_key_t key, const void *value)
{
	if (!shim_active() || !on_goroutine())
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
