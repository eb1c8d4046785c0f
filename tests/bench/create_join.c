/* create_join [N]: time N pthread_create + pthread_join pairs in two shapes
 * and print nanoseconds per pair, one "SHAPE NS" line each:
 *   serial    create one thread, join it, repeat
 *   batch100  create 100 threads, join them in order, repeat
 * Each thread stores a value derived from its argument (like create_join.go),
 * returned through pthread_join. Built and run by tests/bench/bench.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 100

static void *work(void *arg)
{
	return (void *)((uintptr_t)arg * 3 + 1);
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void check(int e, const char *what)
{
	if (e) {
		fprintf(stderr, "create_join: %s: %s\n", what, strerror(e));
		exit(1);
	}
}

static uint64_t serial(long n)
{
	uint64_t sum = 0;
	for (long i = 0; i < n; i++) {
		pthread_t t;
		void *r;
		check(pthread_create(&t, NULL, work, (void *)i), "pthread_create");
		check(pthread_join(t, &r), "pthread_join");
		sum += (uintptr_t)r;
	}
	return sum;
}

static uint64_t batch(long n)
{
	uint64_t sum = 0;
	pthread_t t[BATCH];
	for (long base = 0; base < n; base += BATCH) {
		for (long j = 0; j < BATCH; j++)
			check(pthread_create(&t[j], NULL, work, (void *)(base + j)), "pthread_create");
		for (long j = 0; j < BATCH; j++) {
			void *r;
			check(pthread_join(t[j], &r), "pthread_join");
			sum += (uintptr_t)r;
		}
	}
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	n = (n + BATCH - 1) / BATCH * BATCH;
	uint64_t want = 3 * (uint64_t)n * (n - 1) / 2 + n;

	serial(1000);   /* warm up: stack cache, lazy binding */
	batch(1000);

	double t0 = now_ns();
	uint64_t s = serial(n);
	double t1 = now_ns();
	uint64_t b = batch(n);
	double t2 = now_ns();
	if (s != want || b != want) {
		fprintf(stderr, "create_join: wrong sums\n");
		return 1;
	}
	printf("serial %.1f\n", (t1 - t0) / n);
	printf("batch100 %.1f\n", (t2 - t1) / n);
	return 0;
}
