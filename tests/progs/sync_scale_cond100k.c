// sync_scale_cond100k [N]: N threads (default 100,000; default attributes)
// all blocked on condition variables at once, the same way as
// sync_scale_cond10k: one mutex, 4 groups on 4 condvars, released by
// broadcast (groups 0, 2) or by one signal per thread (1, 3), groups 2 and 3
// in pthread_cond_timedwait (CLOCK_REALTIME / CLOCK_MONOTONIC, an hour away).
// main waits until all N are waiting, holds them ~100 ms, releases them,
// joins them and checks the sum of their return values. RSS per blocked
// thread (from /proc/self/statm) goes to stderr. stdout does not depend on N.
// Natively this stops near 32k threads on default sysctls (pid_max 32768,
// one guard-page VMA per thread against max_map_count 65530), so it runs
// under goshim only.
// goshim-test: shim-only=1
// goshim-test: args=100000
// goshim-test: timeout=120
// Threads under goshim: main, sysmon, one M per P, and up to two more
// started when sysmon finds an M asleep in the kernel at two looks a
// millisecond apart and hands its P on (not caught in the act; likely the
// mmap lock, between stack mmaps and the page faults of the other P's new
// goroutines, 870 MB in all). Typically 4-5 threads, rarely 6.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GROUPS 4
#define HOLD_MS 100

static const char *const group_desc[GROUPS] = {
	"pthread_cond_wait, one broadcast",
	"pthread_cond_wait, one signal per thread",
	"pthread_cond_timedwait CLOCK_REALTIME, one broadcast",
	"pthread_cond_timedwait CLOCK_MONOTONIC, one signal per thread",
};
static const int by_broadcast[GROUPS] = { 1, 0, 1, 0 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER; /* main waits here */
static pthread_cond_t cond[GROUPS] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
static int nthreads;              /* N */
static int waiting;               /* threads that reached their wait */
static unsigned gen;              /* bumped once to release broadcast groups */
static int tickets[GROUPS];       /* handed out to release signal groups */
static int released[GROUPS];      /* threads that got out, per group */
static int timeouts;              /* timed waits that expired: must stay 0 */

static void die(const char *what, int err)
{
	fprintf(stderr, "sync_scale_cond100k: %s: %s\n", what, strerror(err));
	exit(1);
}

static void lock(void)
{
	int e = pthread_mutex_lock(&mu);
	if (e)
		die("pthread_mutex_lock", e);
}

static void unlock(void)
{
	int e = pthread_mutex_unlock(&mu);
	if (e)
		die("pthread_mutex_unlock", e);
}

/* resident set size in KiB, from /proc/self/statm */
static long rss_kib(void)
{
	long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	int n = fscanf(f, "%ld %ld", &size, &resident);
	fclose(f);
	return n == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

static uint64_t value_of(uint64_t i)
{
	return (i * 2654435761u) % 1000003 + i + 1;
}

/* One wait on cond[g]; timed groups wait with an absolute deadline an hour
 * away on their condvar's clock. */
static void wait_once(int g, const struct timespec *deadline)
{
	int e;
	if (g < 2) {
		if ((e = pthread_cond_wait(&cond[g], &mu)))
			die("pthread_cond_wait", e);
		return;
	}
	e = pthread_cond_timedwait(&cond[g], &mu, deadline);
	if (e == ETIMEDOUT)
		timeouts++;
	else if (e)
		die("pthread_cond_timedwait", e);
}

static void *waiter(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	int g = (int)(i % GROUPS);
	struct timespec deadline = { 0, 0 };
	if (g >= 2) {
		clock_gettime(g == 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += 3600;
	}

	lock();
	unsigned my_gen = gen;
	if (++waiting == nthreads) {
		int e = pthread_cond_signal(&all_in);
		if (e)
			die("pthread_cond_signal", e);
	}
	if (by_broadcast[g]) {
		while (gen == my_gen)
			wait_once(g, &deadline);
	} else {
		while (tickets[g] == 0)
			wait_once(g, &deadline);
		tickets[g]--;
	}
	released[g]++;
	unlock();
	return (void *)(uintptr_t)value_of(i);
}

static void signal_n(int g, int n)
{
	for (int k = 0; k < n; k++) {
		int e = pthread_cond_signal(&cond[g]);
		if (e)
			die("pthread_cond_signal", e);
	}
}

int main(int argc, char **argv)
{
	int e;
	nthreads = argc > 1 ? atoi(argv[1]) : 100000;
	if (nthreads < GROUPS) {
		fprintf(stderr, "usage: sync_scale_cond100k [N >= %d]\n", GROUPS);
		return 2;
	}
	pthread_t *t = calloc(nthreads, sizeof *t);
	if (!t)
		die("calloc", ENOMEM);

	/* groups 0, 1: static initialiser; group 2: default attributes;
	 * group 3: CLOCK_MONOTONIC */
	if ((e = pthread_cond_init(&cond[2], NULL)))
		die("pthread_cond_init", e);
	pthread_condattr_t ca;
	if ((e = pthread_condattr_init(&ca)) ||
	    (e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)) ||
	    (e = pthread_cond_init(&cond[3], &ca)) ||
	    (e = pthread_condattr_destroy(&ca)))
		die("condattr CLOCK_MONOTONIC", e);

	long rss0 = rss_kib();
	for (uintptr_t i = 0; i < (uintptr_t)nthreads; i++)
		if ((e = pthread_create(&t[i], NULL, waiter, (void *)i))) {
			fprintf(stderr, "sync_scale_cond100k: pthread_create of thread %lu of %d: %s\n",
				(unsigned long)i + 1, nthreads, strerror(e));
			exit(1);
		}

	lock();
	while (waiting < nthreads)
		if ((e = pthread_cond_wait(&all_in, &mu)))
			die("pthread_cond_wait", e);
	unlock();
	long rss1 = rss_kib();
	fprintf(stderr, "sync_scale_cond100k: %d threads blocked; RSS %ld KiB before, %ld KiB "
		"blocked: %.2f KiB per blocked thread\n", nthreads, rss0, rss1,
		(double)(rss1 - rss0) / nthreads);
	printf("threads in %d groups, one mutex\n", GROUPS);
	printf("all blocked on condition variables at once: %s\n",
	       waiting == nthreads ? "yes" : "no");

	/* everyone stays blocked while main sleeps */
	struct timespec hold = { 0, HOLD_MS * 1000000L };
	while (nanosleep(&hold, &hold) != 0 && errno == EINTR)
		;

	lock();
	int early = 0;
	for (int g = 0; g < GROUPS; g++)
		early += released[g];
	if (early || waiting != nthreads) {
		fprintf(stderr, "sync_scale_cond100k: %d threads got out before the release "
			"(waiting %d)\n", early, waiting);
		return 1;
	}
	int size[GROUPS];
	for (int g = 0; g < GROUPS; g++)
		size[g] = nthreads / GROUPS + (g < nthreads % GROUPS);
	gen++;
	if ((e = pthread_cond_broadcast(&cond[0])) || (e = pthread_cond_broadcast(&cond[2])))
		die("pthread_cond_broadcast", e);
	tickets[1] = size[1];
	tickets[3] = size[3];
	signal_n(1, size[1]); /* with the mutex held */
	unlock();
	signal_n(3, size[3]); /* without it */

	uint64_t sum = 0, want = 0;
	for (uintptr_t i = 0; i < (uintptr_t)nthreads; i++) {
		void *r;
		if ((e = pthread_join(t[i], &r)))
			die("pthread_join", e);
		sum += (uintptr_t)r;
		want += value_of(i);
	}

	int bad = 0;
	for (int g = 0; g < GROUPS; g++) {
		printf("group %d (%s): %s released\n", g, group_desc[g],
		       released[g] == size[g] ? "all" : "NOT all");
		bad |= released[g] != size[g];
	}
	printf("timed waits that timed out: %d\n", timeouts);
	printf("leftover tickets: %d\n", tickets[1] + tickets[3]);
	printf("checksum of return values: %s\n", sum == want ? "right" : "WRONG");
	if (bad || timeouts || tickets[1] || tickets[3] || sum != want) {
		fprintf(stderr, "sync_scale_cond100k: wrong result (checksum want %llu)\n",
			(unsigned long long)want);
		return 1;
	}
	for (int g = 0; g < GROUPS; g++)
		if ((e = pthread_cond_destroy(&cond[g])))
			die("pthread_cond_destroy", e);
	free(t);
	printf("OK\n");
	return 0;
}
