// thread_cpuclock_late: the program's first question about a thread CPU
// clock comes while another thread is busy on the CPU and has never
// asked. Its clock, read through pthread_getcpuclockid, then advances as
// it runs (goshim counts goroutine CPU time only from the first question,
// and must start counting runs already in progress), and by what the
// process used meanwhile, not more.
// goshim-test: env=GOMAXPROCS=2
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=120
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MS 1000000LL

static atomic_int stop;
static _Atomic long spins; /* its progress, which no clock measures */

static void *spinner(void *unused)
{
	(void)unused;
	for (long i = 1; !atomic_load_explicit(&stop, memory_order_relaxed);
	     i++)
		atomic_store_explicit(&spins, i, memory_order_relaxed);
	return NULL;
}

static long long clock_ns(clockid_t clk)
{
	struct timespec ts;
	if (clock_gettime(clk, &ts) != 0) {
		perror("clock_gettime");
		exit(1);
	}
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	pthread_t t;
	clockid_t clk;

	pthread_create(&t, NULL, spinner, NULL);
	/* The process clock asks nothing about threads. */
	long long p = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	while (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p < 50 * MS) {
		struct timespec nap = { 0, MS };
		nanosleep(&nap, NULL);
	}
	/* Its clock moves from the first question on: it does not wait for
	 * the thread to stop (a preemption after 10 ms of CPU time). Two
	 * million turns of its loop take a few ms. */
	if (pthread_getcpuclockid(t, &clk) != 0) {
		perror("pthread_getcpuclockid");
		return 1;
	}
	long long first = clock_ns(clk);
	long k0 = atomic_load(&spins);
	for (int i = 0; i < 100000 && atomic_load(&spins) - k0 < 2000000;
	     i++) {
		struct timespec nap = { 0, 100000 };
		nanosleep(&nap, NULL);
	}
	printf("the busy thread's clock moved while it ran 2,000,000 turns: "
	       "%s\n",
	       clock_ns(clk) != first ? "yes" : "no");

	long long p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	long long c0 = clock_ns(clk), c1 = c0;
	int backwards = 0;
	for (int i = 0; i < 1000 && c1 - c0 < 50 * MS; i++) {
		struct timespec nap = { 0, 10 * MS };
		nanosleep(&nap, NULL);
		long long c = clock_ns(clk);
		backwards += c < c1;
		c1 = c;
	}
	long long p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("the busy thread's clock advanced 50 ms as it ran: %s\n",
	       c1 - c0 >= 50 * MS ? "yes" : "no");
	printf("never backwards: %s\n", backwards == 0 ? "yes" : "no");
	printf("by no more than the process's CPU time: %s\n",
	       c1 - c0 <= p1 - p0 + MS ? "yes" : "no");
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	return 0;
}
