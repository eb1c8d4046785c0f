// main_exit: main calls pthread_exit while other threads still run. They wait
// for a flag main sets just before, then print in a join chain (thread i
// joins thread i-1 first; thread 0 joins main itself and gets its
// pthread_exit value). The process must then exit with status 0 after the
// last thread ends, running the atexit handler and flushing stdio.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHR 16

static pthread_t main_thread, t[NTHR];
static atomic_int main_gone, printed;

static void fail(const char *what, int err)
{
	fprintf(stderr, "main_exit: %s: %s\n", what, strerror(err));
	exit(1);
}

static void *worker(void *arg)
{
	intptr_t i = (intptr_t)arg;
	void *r;
	int e;
	while (!atomic_load(&main_gone))
		sched_yield();
	if (i == 0) {
		if ((e = pthread_join(main_thread, &r)))
			fail("join main", e);
		printf("thread 0: main exited with %ld\n", (long)(intptr_t)r);
	} else {
		if ((e = pthread_join(t[i - 1], &r)))
			fail("join previous", e);
		printf("thread %ld: thread %ld returned %ld\n", (long)i, (long)i - 1,
		       (long)(intptr_t)r);
	}
	atomic_fetch_add(&printed, 1);
	return (void *)(i * 10);
}

static void at_exit(void)
{
	int n = atomic_load(&printed);
	printf("atexit: %d threads printed\n", n);
	if (n != NTHR) {
		fprintf(stderr, "main_exit: process exited before all threads finished\n");
		_exit(1);
	}
	printf("OK\n");
}

int main(void)
{
	int e;
	main_thread = pthread_self();
	atexit(at_exit);
	for (intptr_t i = 0; i < NTHR; i++)
		if ((e = pthread_create(&t[i], NULL, worker, (void *)i)))
			fail("pthread_create", e);
	printf("main: %d threads started, calling pthread_exit\n", NTHR);
	atomic_store(&main_gone, 1);
	pthread_exit((void *)42);
}
