// mutex_foreign: threads the program did not create contend for a mutex
// with the program's own. A periodic SIGEV_THREAD timer's callbacks run on
// threads glibc starts itself (goshim does not see them created); each
// takes the mutex ROUNDS times while program threads take it in a loop.
// Unlocks wake goroutines and foreign threads alike, and the waker must
// not touch a waiter once it can run (the waiter lives on its stack).
// Every increment must be counted.
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 200
#define CALLBACKS 300

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static atomic_long expected;
static atomic_int callbacks, running, stop;

static void critical(void)
{
	pthread_mutex_lock(&mu);
	counter++;
	pthread_mutex_unlock(&mu);
}

static void tick(union sigval v)
{
	(void)v;
	/* Counted before it looks at stop: main, which sets stop first,
	 * sees every callback that did not see it. */
	atomic_fetch_add(&running, 1);
	if (!atomic_load(&stop)) {
		for (int i = 0; i < ROUNDS; i++)
			critical();
		atomic_fetch_add(&expected, ROUNDS);
		atomic_fetch_add(&callbacks, 1);
	}
	atomic_fetch_sub(&running, 1);
}

static void *worker(void *arg)
{
	long n = 0;
	(void)arg;
	while (!atomic_load(&stop)) {
		critical();
		n++;
	}
	atomic_fetch_add(&expected, n);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}

	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = tick;
	timer_t tm;
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm)) {
		perror("timer_create");
		return 1;
	}
	struct itimerspec its = { { 0, 200000 }, { 0, 200000 } };
	timer_settime(tm, 0, &its, NULL);
	while (atomic_load(&callbacks) < CALLBACKS)
		usleep(1000);
	timer_delete(tm);
	atomic_store(&stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	while (atomic_load(&running) > 0)
		usleep(1000);

	pthread_mutex_lock(&mu);
	int ok = counter == atomic_load(&expected);
	pthread_mutex_unlock(&mu);
	printf("%d+ callbacks, every increment counted: %s\n", CALLBACKS,
	       ok ? "yes" : "no");
	return !ok;
}
