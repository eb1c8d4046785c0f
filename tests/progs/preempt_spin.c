// goshim-test: env=GOMAXPROCS=1
// goshim-test: timeout=60
// goshim-test: no-chaos=a latency bar: at GOMAXPROCS=1 each chaos yield of the heartbeat waits out a 10 ms slice of the spinner
/*
 * A goroutine spinning in a loop with no calls at all must not starve
 * another that prints a heartbeat every 10 ms: at GOMAXPROCS=1 only
 * asynchronous preemption (sysmon's signal) takes the P from the spinner;
 * natively the kernel's scheduler does it.
 *
 * The heartbeat counts its beats over 1 s of wall time. The beats that
 * fit are 100, or fewer when the machine gave the process less than a
 * CPU (a loaded machine: at GOMAXPROCS=1 the spinner and the heartbeat
 * share one OS thread under goshim), so the bar is 80% of the beats that
 * fit in the CPU time the process got. Without preemption the heartbeat
 * never beats again after its first sleep.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#define PERIOD_MS 10
#define RUN_MS 1000

static atomic_int stop;
static volatile unsigned long sink;

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sink++;
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

	pthread_create(&s, NULL, spin, NULL);
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
