/* A library whose constructor uses threads' calls before the preloaded
 * goshim's own constructor has run (as glib's does in perf). */
#include <dlfcn.h>
#include <pthread.h>

pthread_key_t early_key;
int early_key_err = -1, early_set_err = -1, early_dlopen_ok;

__attribute__((constructor)) static void early(void)
{
	early_key_err = pthread_key_create(&early_key, NULL);
	if (early_key_err == 0)
		early_set_err = pthread_setspecific(early_key, &early_key);
	void *h = dlopen("libm.so.6", RTLD_NOW);
	early_dlopen_ok = h != NULL;
	if (h)
		dlclose(h);
}
