// A program linked against a library whose constructor creates a pthread
// key, sets it and dlopens a library before any constructor of a
// preloaded library has run; main then uses the key and threads.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <stdio.h>

extern pthread_key_t early_key;
extern int early_key_err, early_set_err, early_dlopen_ok;

static void *worker(void *arg)
{
	(void)arg;
	pthread_setspecific(early_key, &early_key_err);
	return pthread_getspecific(early_key);
}

int main(void)
{
	pthread_t t;
	void *r;

	printf("constructor: key_create %d, setspecific %d, dlopen %s\n",
	       early_key_err, early_set_err, early_dlopen_ok ? "ok" : "failed");
	printf("main sees the constructor's value: %s\n",
	       pthread_getspecific(early_key) == &early_key ? "yes" : "no");
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, &r);
	printf("a thread has its own: %s\n",
	       r == &early_key_err ? "yes" : "no");
	return 0;
}
