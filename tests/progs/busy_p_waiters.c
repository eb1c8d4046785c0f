// busy_p_waiters: while one thread computes for 600 ms, two others wake
// every 500 us, from a sleep and from a pipe another fills: with
// GOMAXPROCS=1 the one P is busy, so each wakeup is a goroutine readied
// (by a timer, by netpoll) into the global queue with no P free for it.
// The process must then use about one CPU, as natively, not two: an idle M
// that spun waiting for a P took the second CPU (and from a
// thread-per-request server with a pool, a quarter of its throughput).
// Prints the process's CPU time over the computing thread's own, in broad
// classes (a ratio of CPU times, not of wall time: the machine's load
// does not move it), and whether each waiter woke.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUN_NS 600000000LL

static atomic_int done;
static int pfd[2];
static int64_t compute_cpu;

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void check(int e, const char *what)
{
	if (e) {
		fprintf(stderr, "busy_p_waiters: %s: %s\n", what, strerror(e));
		exit(1);
	}
}

static void *compute(void *arg)
{
	uint64_t x = 88172645463325252ull, acc = 0;
	int64_t end = now_ns(CLOCK_MONOTONIC) + RUN_NS;
	int64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	(void)arg;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		for (int i = 0; i < 10000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			acc += x;
		}
	}
	atomic_store(&done, 1);
	compute_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	return (void *)(uintptr_t)(acc | 1);
}

static void *sleeper(void *arg)
{
	long n = 0;
	(void)arg;
	while (!atomic_load(&done)) {
		usleep(500);
		n++;
	}
	return (void *)n;
}

static void *writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		usleep(500);
		if (write(pfd[1], "x", 1) != 1) {
			perror("busy_p_waiters: write");
			exit(1);
		}
	}
	close(pfd[1]);
	return NULL;
}

static void *reader(void *arg)
{
	long n = 0;
	char c;
	(void)arg;
	while (read(pfd[0], &c, 1) == 1)
		n++;
	return (void *)n;
}

int main(void)
{
	pthread_t t[4];
	void *(*fn[4])(void *) = { compute, sleeper, writer, reader };
	void *ret[4];

	if (pipe(pfd) != 0) {
		perror("busy_p_waiters: pipe");
		return 1;
	}
	int64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < 4; i++)
		check(pthread_create(&t[i], NULL, fn[i], NULL), "pthread_create");
	for (int i = 0; i < 4; i++)
		check(pthread_join(t[i], &ret[i]), "pthread_join");
	double cpu = (double)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0);

	double r = cpu / (double)compute_cpu;
	printf("process CPU / computing thread's: %s\n",
	       r < 1.4 ? "about one (< 1.4)" : "two or more");
	if (r >= 1.4)
		fprintf(stderr, "busy_p_waiters: process %.0f ms, computing "
			"thread %.0f ms of CPU\n", cpu / 1e6,
			(double)compute_cpu / 1e6);
	printf("sleeper woke: %s\n", (long)ret[1] > 0 ? "yes" : "no");
	printf("reader read: %s\n", (long)ret[3] > 0 ? "yes" : "no");
	return 0;
}
