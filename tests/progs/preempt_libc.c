// goshim-test: env=GOMAXPROCS=1
// goshim-test: timeout=60
/*
 * A thread that spends nearly all its time inside the C library (strlen
 * over a megabyte, in a loop) must not starve one that beats every
 * 10 ms either. goshim never stops a goroutine by signal inside libc
 * (it may hold libc's locks there), so here the spinner is hardly ever
 * at a safe point: at GOMAXPROCS=1 sysmon must take its P instead, after
 * a slice or two. Counted like preempt_spin: 80% of the beats that fit
 * in the CPU time the process got.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define PERIOD_MS 10
#define RUN_MS 1000
#define BIG (1 << 20)

static atomic_int stop;
static char *big;
static size_t (*volatile len_fn)(const char *) = strlen;
static volatile size_t sink;

static void *in_libc(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sink += len_fn(big);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

struct beat {
	int beats;
	double cpu;
};

static void *heartbeat(void *arg)
{
	struct beat *b = arg;
	struct timespec period = { 0, PERIOD_MS * 1000000L };
	double cpu0 = cpu_ms(), end = now_ms() + RUN_MS;

	while (now_ms() < end) {
		nanosleep(&period, NULL);
		b->beats++;
	}
	b->cpu = cpu_ms() - cpu0;
	return NULL;
}

int main(void)
{
	pthread_t s, h;
	struct beat b = { 0, 0 };

	big = malloc(BIG);
	if (big == NULL)
		return 1;
	memset(big, 'x', BIG - 1);
	big[BIG - 1] = '\0';
	pthread_create(&s, NULL, in_libc, NULL);
	pthread_create(&h, NULL, heartbeat, &b);
	pthread_join(h, NULL);
	atomic_store(&stop, 1);
	pthread_join(s, NULL);
	double fit = b.cpu < RUN_MS ? b.cpu / PERIOD_MS : RUN_MS / PERIOD_MS;
	if (b.beats >= 0.8 * fit)
		printf("PASS: the heartbeat kept going\n");
	else
		printf("FAIL: %d heartbeats, want >= %.0f\n", b.beats,
		       0.8 * fit);
	return 0;
}
