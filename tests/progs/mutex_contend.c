// mutex_contend: mutual exclusion under contention, for every kind of
// mutex: threads increment a counter under the lock and check that nobody
// else is inside; totals must be exact. Then timed locks with short
// deadlines against holders that keep the lock long enough for waiters to
// starve (over 1 ms, which switches goshim's mutex to handoff mode), mixed
// with plain lockers and trylock: every attempt either gets the mutex
// alone or times out, and at the end the mutex is free.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 8
#define ITERS 10000

static pthread_mutex_t mu;
static atomic_int inside;
static long counter;
static atomic_int failures;

static void fail(const char *what)
{
	fprintf(stderr, "mutex_contend: %s\n", what);
	atomic_fetch_add(&failures, 1);
}

static void enter(void)
{
	if (atomic_fetch_add(&inside, 1) != 0)
		fail("two threads inside the mutex");
	counter++;
}

static void leave(void)
{
	atomic_fetch_sub(&inside, 1);
}

static int recursive_kind;

static void *hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		if (pthread_mutex_lock(&mu))
			fail("lock");
		if (recursive_kind && pthread_mutex_lock(&mu))
			fail("relock");
		enter();
		leave();
		if (recursive_kind && pthread_mutex_unlock(&mu))
			fail("inner unlock");
		if (pthread_mutex_unlock(&mu))
			fail("unlock");
	}
	return NULL;
}

static void run(const char *name, void *(*fn)(void *))
{
	pthread_t t[THREADS];
	counter = 0;
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(long)i))
			fail("pthread_create");
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%s: counter %ld of %d\n", name, counter, THREADS * ITERS);
	if (counter != THREADS * ITERS)
		fail("lost increments");
}

static void with_attr(const char *name, int type, int robust, int protocol)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutexattr_setrobust(&a, robust);
	pthread_mutexattr_setprotocol(&a, protocol);
	if (pthread_mutex_init(&mu, &a))
		fail("pthread_mutex_init");
	pthread_mutexattr_destroy(&a);
	recursive_kind = type == PTHREAD_MUTEX_RECURSIVE;
	run(name, hammer);
	if (pthread_mutex_destroy(&mu))
		fail("destroy");
}

/* ---- timed locks against long holders --------------------------------------- */
#define TIMED_THREADS 6
#define TIMED_TRIES 150
#define LOCKERS 2
#define LOCKER_TRIES 150

static atomic_long attempts, successes, timeouts;

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

static void hold(unsigned *seed)
{
	enter();
	nap_us(100 + rand_r(seed) % 1400);
	leave();
}

static void *timed_locker(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 7919u + 1;
	for (int i = 0; i < TIMED_TRIES; i++) {
		struct timespec d;
		long us = 50 + rand_r(&seed) % 2000;
		clock_gettime(CLOCK_MONOTONIC, &d);
		d.tv_nsec += us * 1000;
		if (d.tv_nsec >= 1000000000) {
			d.tv_sec++;
			d.tv_nsec -= 1000000000;
		}
		atomic_fetch_add(&attempts, 1);
		int err = pthread_mutex_clocklock(&mu, CLOCK_MONOTONIC, &d);
		if (err == ETIMEDOUT) {
			atomic_fetch_add(&timeouts, 1);
			continue;
		}
		if (err) {
			fail("clocklock");
			continue;
		}
		atomic_fetch_add(&successes, 1);
		hold(&seed);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *plain_locker(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 104729u + 3;
	for (int i = 0; i < LOCKER_TRIES; i++) {
		atomic_fetch_add(&attempts, 1);
		if (i % 3 == 0) {
			int err = pthread_mutex_trylock(&mu);
			if (err == EBUSY) {
				atomic_fetch_add(&timeouts, 1);
				continue;
			}
			if (err)
				fail("trylock");
		} else if (pthread_mutex_lock(&mu)) {
			fail("lock");
		}
		atomic_fetch_add(&successes, 1);
		hold(&seed);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void timed(const char *name, int type)
{
	pthread_t t[TIMED_THREADS + LOCKERS];
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutex_init(&mu, &a);
	pthread_mutexattr_destroy(&a);
	counter = 0;
	atomic_store(&attempts, 0);
	atomic_store(&successes, 0);
	atomic_store(&timeouts, 0);
	for (long i = 0; i < TIMED_THREADS; i++)
		pthread_create(&t[i], NULL, timed_locker, (void *)i);
	for (long i = 0; i < LOCKERS; i++)
		pthread_create(&t[TIMED_THREADS + i], NULL, plain_locker,
			       (void *)i);
	for (int i = 0; i < TIMED_THREADS + LOCKERS; i++)
		pthread_join(t[i], NULL);
	long want = TIMED_THREADS * TIMED_TRIES + LOCKERS * LOCKER_TRIES;
	int free_at_end = pthread_mutex_trylock(&mu) == 0;
	printf("%s: %ld attempts, each locked or timed out: %s, counted "
	       "exactly: %s, free at the end: %s\n",
	       name, atomic_load(&attempts),
	       atomic_load(&successes) + atomic_load(&timeouts) == want
		       ? "yes"
		       : "no",
	       counter == atomic_load(&successes) ? "yes" : "no",
	       free_at_end ? "yes" : "no");
	if (atomic_load(&attempts) != want ||
	    atomic_load(&successes) + atomic_load(&timeouts) != want ||
	    counter != atomic_load(&successes) || !free_at_end)
		fail("timed locks");
	pthread_mutex_unlock(&mu);
	pthread_mutex_destroy(&mu);
}

int main(void)
{
	static pthread_mutex_t s_normal = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t s_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t s_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t s_adapt = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

	mu = s_normal;
	run("static normal", hammer);
	mu = s_rec;
	recursive_kind = 1;
	run("static recursive", hammer);
	recursive_kind = 0;
	mu = s_err;
	run("static errorcheck", hammer);
	mu = s_adapt;
	run("static adaptive", hammer);
	with_attr("errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_NONE);
	with_attr("robust", PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	with_attr("robust recursive", PTHREAD_MUTEX_RECURSIVE,
		  PTHREAD_MUTEX_ROBUST, PTHREAD_PRIO_NONE);
	with_attr("inherit", PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_INHERIT);
	timed("timed normal", PTHREAD_MUTEX_NORMAL);
	timed("timed errorcheck", PTHREAD_MUTEX_ERRORCHECK);
	if (atomic_load(&failures)) {
		fprintf(stderr, "mutex_contend: %d failures\n",
			atomic_load(&failures));
		return 1;
	}
	return 0;
}
