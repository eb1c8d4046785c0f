// sync_scale_cond10k: 10,000 threads (default attributes) all blocked on
// condition variables at once. They share one mutex and wait in 4 groups of
// 2,500, each group on its own condvar, each released its own way:
//   group 0: pthread_cond_wait, released by one broadcast (generation change)
//   group 1: pthread_cond_wait, released by one pthread_cond_signal per
//            thread (tickets), signalled with the mutex held
//   group 2: pthread_cond_timedwait (CLOCK_REALTIME, an hour away),
//            released by one broadcast
//   group 3: pthread_cond_timedwait (condattr CLOCK_MONOTONIC, an hour away),
//            released by one signal per thread, signalled without the mutex
// main waits (on a condvar of its own) until the counter of waiting threads
// reaches 10,000, holds everyone blocked for ~100 ms so the thread sampler
// sees them, checks that nobody got out early, releases the groups, joins
// every thread and checks the sum of their return values.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: native-min-threads=10001
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHREADS 10000
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
static int waiting;               /* threads that reached their wait */
static unsigned gen;              /* bumped once to release broadcast groups */
static int tickets[GROUPS];       /* handed out to release signal groups */
static int released[GROUPS];      /* threads that got out, per group */
static int timeouts;              /* timed waits that expired: must stay 0 */

static void die(const char *what, int err)
{
	fprintf(stderr, "sync_scale_cond10k: %s: %s\n", what, strerror(err));
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
	if (++waiting == NTHREADS) {
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

int main(void)
{
	static pthread_t t[NTHREADS];
	int e;

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

	for (uintptr_t i = 0; i < NTHREADS; i++)
		if ((e = pthread_create(&t[i], NULL, waiter, (void *)i)))
			die("pthread_create", e);

	lock();
	while (waiting < NTHREADS)
		if ((e = pthread_cond_wait(&all_in, &mu)))
			die("pthread_cond_wait", e);
	unlock();
	printf("threads: %d in %d groups, one mutex\n", NTHREADS, GROUPS);
	printf("blocked on condition variables at once: %d\n", waiting);

	/* everyone stays blocked while main sleeps */
	struct timespec hold = { 0, HOLD_MS * 1000000L };
	while (nanosleep(&hold, &hold) != 0 && errno == EINTR)
		;

	lock();
	int early = 0;
	for (int g = 0; g < GROUPS; g++)
		early += released[g];
	if (early || waiting != NTHREADS) {
		fprintf(stderr, "sync_scale_cond10k: %d threads got out before the release "
			"(waiting %d)\n", early, waiting);
		return 1;
	}
	int per_group = NTHREADS / GROUPS;
	gen++;
	if ((e = pthread_cond_broadcast(&cond[0])) || (e = pthread_cond_broadcast(&cond[2])))
		die("pthread_cond_broadcast", e);
	tickets[1] = per_group;
	tickets[3] = per_group;
	signal_n(1, per_group); /* with the mutex held */
	unlock();
	signal_n(3, per_group); /* without it */

	uint64_t sum = 0, want = 0;
	for (uintptr_t i = 0; i < NTHREADS; i++) {
		void *r;
		if ((e = pthread_join(t[i], &r)))
			die("pthread_join", e);
		sum += (uintptr_t)r;
		want += value_of(i);
	}

	int bad = 0;
	for (int g = 0; g < GROUPS; g++) {
		printf("group %d (%s): %d released\n", g, group_desc[g], released[g]);
		bad |= released[g] != per_group;
	}
	printf("timed waits that timed out: %d\n", timeouts);
	printf("leftover tickets: %d\n", tickets[1] + tickets[3]);
	printf("checksum: %llu\n", (unsigned long long)sum);
	if (bad || timeouts || tickets[1] || tickets[3] || sum != want) {
		fprintf(stderr, "sync_scale_cond10k: wrong result (checksum want %llu)\n",
			(unsigned long long)want);
		return 1;
	}
	for (int g = 0; g < GROUPS; g++)
		if ((e = pthread_cond_destroy(&cond[g])))
			die("pthread_cond_destroy", e);
	printf("OK\n");
	return 0;
}
