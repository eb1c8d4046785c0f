// cond_timeout_race: a signal is never spent on a waiter that has given
// up. Timed waiters whose deadlines (0-100 us) keep expiring share one
// condition variable with consumers that wait without a deadline; the main
// thread posts a token and signals, 3,000 times, one token at a time, 0-50
// us apart, and
// waits up to 10 s for a consumer to take it. A timed waiter that was
// woken (returned 0) while a token waits passes the signal on, so every
// token must be taken: a signal that woke nobody blocked at the time
// leaves it behind and is counted as lost.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 3000
#define CONSUMERS 4
#define TIMED 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t taken_cv = PTHREAD_COND_INITIALIZER;
static int tokens, consumed;
static bool done;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "cond_timeout_race: %s: %s\n", what,
			strerror(err));
		exit(1);
	}
}

static void deadline_in(struct timespec *ts, long ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ns;
	ts->tv_sec += ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

static void *consumer(void *arg)
{
	(void)arg;
	check(pthread_mutex_lock(&mu), "lock");
	for (;;) {
		while (tokens == 0 && !done)
			check(pthread_cond_wait(&cv, &mu), "wait");
		if (tokens == 0)
			break;
		tokens--;
		consumed++;
		check(pthread_cond_signal(&taken_cv), "signal taken");
	}
	check(pthread_mutex_unlock(&mu), "unlock");
	return NULL;
}

static void *timed_waiter(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct timespec ts;

	check(pthread_mutex_lock(&mu), "lock");
	while (!done) {
		deadline_in(&ts, rand_r(&seed) % 100000);
		int err = pthread_cond_timedwait(&cv, &mu, &ts);
		if (err && err != ETIMEDOUT)
			check(err, "timedwait");
		/* Woken, maybe by a signal meant for a consumer: pass it on
		 * (an extra signal after a spurious wakeup costs nothing). */
		if (err == 0 && tokens > 0)
			check(pthread_cond_signal(&cv), "pass on");
	}
	check(pthread_mutex_unlock(&mu), "unlock");
	return NULL;
}

int main(void)
{
	pthread_t c[CONSUMERS], t[TIMED];
	unsigned seed = 0;
	int lost = 0;

	for (int i = 0; i < CONSUMERS; i++)
		check(pthread_create(&c[i], NULL, consumer, NULL), "create");
	for (int i = 0; i < TIMED; i++)
		check(pthread_create(&t[i], NULL, timed_waiter,
				     (void *)(uintptr_t)(i + 1)),
		      "create");
	for (int r = 0; r < ROUNDS; r++) {
		struct timespec ts = { 0, rand_r(&seed) % 50000 };
		/* Let timed waiters come and go before the signal. */
		nanosleep(&ts, NULL);
		check(pthread_mutex_lock(&mu), "lock");
		tokens++;
		check(pthread_cond_signal(&cv), "signal");
		deadline_in(&ts, 10L * 1000000000);
		while (tokens > 0) {
			int err = pthread_cond_timedwait(&taken_cv, &mu, &ts);
			if (err == ETIMEDOUT) {
				lost++;
				break;
			}
			check(err, "timedwait taken");
		}
		check(pthread_mutex_unlock(&mu), "unlock");
	}
	check(pthread_mutex_lock(&mu), "lock");
	done = true;
	check(pthread_cond_broadcast(&cv), "broadcast");
	check(pthread_mutex_unlock(&mu), "unlock");
	for (int i = 0; i < CONSUMERS; i++)
		check(pthread_join(c[i], NULL), "join");
	for (int i = 0; i < TIMED; i++)
		check(pthread_join(t[i], NULL), "join");
	printf("rounds %d, tokens taken %d, lost signals %d\n", ROUNDS,
	       consumed, lost);
	return lost == 0 && consumed == ROUNDS ? 0 : 1;
}
