/* sync_sleep [N=10000] [SLEEPS=100]: N threads (default attributes) start
 * together (a barrier) and each sleeps 1 ms SLEEPS times with nanosleep;
 * prints "sleep_wall_ms MS", the wall time from before the first
 * pthread_create to after the last pthread_join. Checks that no sleep was
 * shorter than asked (CLOCK_MONOTONIC) and that every sleep happened. The
 * peak OS thread count is sampled from outside (tests/bench/bench.sh
 * runs this under tests/tools/threadpeak). sync_sleep.go is the Go
 * counterpart; tests/progs/sleep_10k.c the smaller test. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLEEP_NS 1000000L

static pthread_barrier_t start;
static int sleeps;

static void check(int e, const char *what)
{
	if (e) {
		fprintf(stderr, "sync_sleep: %s: %s\n", what, strerror(e));
		exit(1);
	}
}

static void gate(void)
{
	int e = pthread_barrier_wait(&start);
	if (e != PTHREAD_BARRIER_SERIAL_THREAD)
		check(e, "pthread_barrier_wait");
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* returns the number of sleeps that were shorter than asked, plus one per
 * sleep done shifted left by 32 */
static void *sleeper(void *unused)
{
	(void)unused;
	gate();
	uint64_t shorts = 0, done = 0;
	for (int k = 0; k < sleeps; k++) {
		struct timespec req = { 0, SLEEP_NS };
		int64_t t0 = mono_ns();
		while (nanosleep(&req, &req) != 0)
			if (errno != EINTR)
				check(errno, "nanosleep");
		shorts += mono_ns() - t0 < SLEEP_NS;
		done++;
	}
	return (void *)(uintptr_t)(done << 32 | shorts);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	sleeps = argc > 2 ? atoi(argv[2]) : 100;
	if (n < 1 || sleeps < 0) {
		fprintf(stderr, "usage: sync_sleep [N] [SLEEPS]\n");
		return 2;
	}
	pthread_t *t = calloc(n, sizeof *t);
	if (!t)
		check(ENOMEM, "calloc");

	int64_t t0 = mono_ns();
	check(pthread_barrier_init(&start, NULL, n + 1), "pthread_barrier_init");
	for (long i = 0; i < n; i++)
		check(pthread_create(&t[i], NULL, sleeper, NULL), "pthread_create");
	gate();
	uint64_t shorts = 0, done = 0;
	for (long i = 0; i < n; i++) {
		void *r;
		check(pthread_join(t[i], &r), "pthread_join");
		done += (uintptr_t)r >> 32;
		shorts += (uintptr_t)r & 0xffffffff;
	}
	int64_t t1 = mono_ns();
	if (done != (uint64_t)n * sleeps || shorts) {
		fprintf(stderr, "sync_sleep: %llu sleeps done (want %llu), %llu too short\n",
			(unsigned long long)done, (unsigned long long)n * sleeps,
			(unsigned long long)shorts);
		return 1;
	}
	printf("sleep_wall_ms %.1f\n", (t1 - t0) / 1e6);
	free(t);
	return 0;
}
