// GOSHIM_DISABLE=1: the library loads but every thread stays a real OS
// thread (the shim run must show all 51 threads alive at once).
// goshim-test: shim-env=GOSHIM_DISABLE=1
// goshim-test: shim-min-threads=51
// goshim-test: native-min-threads=51
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHR 50

static pthread_barrier_t bar;

static void *worker(void *arg)
{
	pthread_barrier_wait(&bar); /* all alive together */
	pthread_barrier_wait(&bar);
	return arg;
}

int main(void)
{
	pthread_t t[NTHR];
	long sum = 0;

	if (pthread_barrier_init(&bar, NULL, NTHR + 1))
		return 1;
	for (long i = 0; i < NTHR; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	pthread_barrier_wait(&bar);
	/* Give the sampler a few ms to see every thread. */
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pthread_barrier_wait(&bar);
	for (int i = 0; i < NTHR; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("%d threads, sum %ld\n", NTHR, sum);
	return sum == NTHR * (NTHR - 1) / 2 ? 0 : 1;
}
