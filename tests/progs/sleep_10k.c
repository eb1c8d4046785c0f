// sleep_10k: 10,000 threads (default attributes) start together (a barrier)
// and each sleeps 1 ms SLEEPS times with nanosleep, checking with
// CLOCK_MONOTONIC that no sleep is shorter than asked; main joins them all
// and checks a checksum of per-thread results. The full-size version (100
// sleeps, timed, with Go for comparison) is tests/bench/sync_sleep.c.
// The thread bound catches an M per sleeper; it leaves room for the M
// sysmon adds when a P sits in a system call on a loaded machine.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHREADS 10000
#define SLEEPS 10
#define SLEEP_NS 1000000L

static pthread_barrier_t start;

static void die(const char *what, int err)
{
	fprintf(stderr, "sleep_10k: %s: %s\n", what, strerror(err));
	exit(1);
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct result {
	uint64_t sum;    /* derived from the index and the sleeps done */
	int shorts;      /* sleeps that returned before SLEEP_NS had passed */
};
static struct result res[NTHREADS];

static void *sleeper(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	int e = pthread_barrier_wait(&start);
	if (e && e != PTHREAD_BARRIER_SERIAL_THREAD)
		die("pthread_barrier_wait", e);
	struct result r = { 0, 0 };
	for (int k = 0; k < SLEEPS; k++) {
		struct timespec req = { 0, SLEEP_NS };
		int64_t t0 = mono_ns();
		while (nanosleep(&req, &req) != 0) {
			if (errno != EINTR)
				die("nanosleep", errno);
		}
		if (mono_ns() - t0 < SLEEP_NS)
			r.shorts++;
		r.sum += i * SLEEPS + k + 1;
	}
	res[i] = r;
	return NULL;
}

int main(void)
{
	static pthread_t t[NTHREADS];
	int e;

	if ((e = pthread_barrier_init(&start, NULL, NTHREADS + 1)))
		die("pthread_barrier_init", e);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		if ((e = pthread_create(&t[i], NULL, sleeper, (void *)i)))
			die("pthread_create", e);
	e = pthread_barrier_wait(&start);
	if (e && e != PTHREAD_BARRIER_SERIAL_THREAD)
		die("pthread_barrier_wait", e);

	uint64_t sum = 0;
	int shorts = 0;
	for (uintptr_t i = 0; i < NTHREADS; i++) {
		if ((e = pthread_join(t[i], NULL)))
			die("pthread_join", e);
		sum += res[i].sum;
		shorts += res[i].shorts;
	}
	if ((e = pthread_barrier_destroy(&start)))
		die("pthread_barrier_destroy", e);

	/* sum over i, k of i*SLEEPS + k + 1 */
	uint64_t n = NTHREADS, s = SLEEPS;
	uint64_t want = s * s * (n * (n - 1) / 2) + n * (s * (s + 1) / 2);
	printf("threads: %d, each slept %d x %ld us\n", NTHREADS, SLEEPS, SLEEP_NS / 1000);
	printf("sleeps shorter than asked: %d\n", shorts);
	printf("checksum: %llu\n", (unsigned long long)sum);
	if (shorts || sum != want) {
		fprintf(stderr, "sleep_10k: wrong result (checksum want %llu)\n",
			(unsigned long long)want);
		return 1;
	}
	printf("OK\n");
	return 0;
}
