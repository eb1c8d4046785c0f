// mutex_single: mutexes taken while the process has one thread (glibc and
// goshim then lock a free private mutex with plain stores) stay right
// across the second thread's start: a mutex main holds from before it
// made any thread blocks a new thread until main unlocks it, unlocking
// then wakes that waiter, and counters under mutexes locked in both
// periods come out exact. Also: trylock on a mutex held since then says
// EBUSY; an error-checking mutex keeps its rules in both periods.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 4
#define ITERS 20000

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t counter_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t check_mu;
static long counter;
static atomic_int waiter_in, waiter_got;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "mutex_single: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void *waiter(void *arg)
{
	(void)arg;
	atomic_store(&waiter_in, 1);
	check(pthread_mutex_lock(&held), "lock held (waiter)");
	atomic_store(&waiter_got, 1);
	check(pthread_mutex_unlock(&held), "unlock held (waiter)");
	return NULL;
}

static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		check(pthread_mutex_lock(&counter_mu), "lock counter");
		counter++;
		check(pthread_mutex_unlock(&counter_mu), "unlock counter");
	}
	return NULL;
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t w, t[THREADS];

	/* One thread: lock and unlock, then keep one held. */
	for (int i = 0; i < ITERS; i++) {
		check(pthread_mutex_lock(&counter_mu), "lock counter (alone)");
		counter++;
		check(pthread_mutex_unlock(&counter_mu),
		      "unlock counter (alone)");
	}
	check(pthread_mutexattr_init(&a), "attr init");
	check(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK),
	      "settype");
	check(pthread_mutex_init(&check_mu, &a), "init errorcheck");
	check(pthread_mutex_lock(&check_mu), "lock errorcheck (alone)");
	printf("alone: relock errorcheck: %s\n",
	       strerror(pthread_mutex_lock(&check_mu)));
	check(pthread_mutex_unlock(&check_mu), "unlock errorcheck (alone)");
	printf("alone: unlock unlocked errorcheck: %s\n",
	       strerror(pthread_mutex_unlock(&check_mu)));
	check(pthread_mutex_lock(&held), "lock held (alone)");
	printf("alone: trylock held: %s\n",
	       strerror(pthread_mutex_trylock(&held)));

	/* A second thread waits for the mutex taken while alone. */
	check(pthread_create(&w, NULL, waiter, NULL), "create waiter");
	while (!atomic_load(&waiter_in))
		sched_yield();
	struct timespec d = {0, 50 * 1000 * 1000};
	nanosleep(&d, NULL);
	printf("waiter got the held mutex before unlock: %s\n",
	       atomic_load(&waiter_got) ? "yes" : "no");
	check(pthread_mutex_unlock(&held), "unlock held");
	check(pthread_join(w, NULL), "join waiter");
	printf("waiter got it after unlock: %s\n",
	       atomic_load(&waiter_got) ? "yes" : "no");

	/* Threads now: the counter under contention. */
	for (int i = 0; i < THREADS; i++)
		check(pthread_create(&t[i], NULL, adder, NULL), "create adder");
	for (int i = 0; i < THREADS; i++)
		check(pthread_join(t[i], NULL), "join adder");
	printf("counter %ld (want %ld)\n", counter, (long)ITERS * (THREADS + 1));
	printf("threads: trylock free: %s\n",
	       strerror(pthread_mutex_trylock(&held)));
	printf("threads: trylock held: %s\n",
	       strerror(pthread_mutex_trylock(&held)));
	check(pthread_mutex_unlock(&held), "unlock held (threads)");
	printf("threads: unlock unlocked errorcheck: %s\n",
	       strerror(pthread_mutex_unlock(&check_mu)));
	check(pthread_mutex_destroy(&held), "destroy held");
	check(pthread_mutex_destroy(&counter_mu), "destroy counter");
	check(pthread_mutex_destroy(&check_mu), "destroy errorcheck");
	return 0;
}
