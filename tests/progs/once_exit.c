// once_exit: in a C program (libgcc_s not linked: glibc loads the unwinder
// itself for pthread_exit), a pthread_once initialiser that calls
// pthread_exit leaves the once to be run again by the next thread.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int calls;

static void init(void)
{
	if (calls++ == 0)
		pthread_exit(NULL);
}

static void *thread(void *arg)
{
	(void)arg;
	pthread_once(&once, init);
	return (void *)1;
}

int main(void)
{
	pthread_t t;
	void *first, *second;

	pthread_create(&t, NULL, thread, NULL);
	pthread_join(t, &first);
	pthread_create(&t, NULL, thread, NULL);
	pthread_join(t, &second);
	printf("first thread returned %p, second %p, init called %d times\n",
	       first, second, calls);
	return !(first == NULL && second == (void *)1 && calls == 2);
}
