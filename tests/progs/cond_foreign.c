// cond_foreign: threads the program did not create itself share mutexes and
// condition variables with its own. A SIGEV_THREAD timer's callback runs on
// a thread glibc starts on its own (goshim does not see it created): it
// blocks on a mutex a program thread holds, signals a condition variable a
// program thread waits on, and waits on one a program thread signals. Then
// a periodic timer's callbacks and program threads increment one counter
// under one mutex; the total is exact.
// goshim-test: shim-max-threads=GOMAXPROCS+8
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t to_main = PTHREAD_COND_INITIALIZER;
static pthread_cond_t to_callback = PTHREAD_COND_INITIALIZER;
static int stage; /* guarded by mu */
static atomic_int entered;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "cond_foreign: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* One exchange: blocks on mu (held by main), reports stage 1, waits for
 * stage 2, reports stage 3. */
static void exchange(union sigval sv)
{
	(void)sv;
	atomic_store(&entered, 1);
	check(pthread_mutex_lock(&mu), "callback lock");
	stage = 1;
	check(pthread_cond_signal(&to_main), "callback signal");
	while (stage != 2)
		check(pthread_cond_wait(&to_callback, &mu), "callback wait");
	stage = 3;
	check(pthread_cond_signal(&to_main), "callback signal");
	check(pthread_mutex_unlock(&mu), "callback unlock");
}

static void arm(timer_t t, long first_ms, long every_ms)
{
	struct itimerspec its = {
		.it_value = { first_ms / 1000, (first_ms % 1000) * 1000000 },
		.it_interval = { every_ms / 1000, (every_ms % 1000) * 1000000 },
	};
	if (timer_settime(t, 0, &its, NULL)) {
		perror("timer_settime");
		exit(1);
	}
}

static timer_t make_timer(void (*fn)(union sigval))
{
	struct sigevent sev;
	timer_t t;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = fn;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		perror("timer_create");
		exit(1);
	}
	return t;
}

#define EXCHANGES 20

static void exchanges(void)
{
	timer_t t = make_timer(exchange);
	int blocked = 0;

	for (int i = 0; i < EXCHANGES; i++) {
		check(pthread_mutex_lock(&mu), "lock");
		stage = 0;
		atomic_store(&entered, 0);
		arm(t, 1, 0);
		/* Hold the mutex while the callback runs into it. */
		while (!atomic_load(&entered))
			nap_ms(1);
		nap_ms(5);
		blocked += stage == 0;
		while (stage != 1)
			check(pthread_cond_wait(&to_main, &mu), "wait 1");
		stage = 2;
		check(pthread_cond_signal(&to_callback), "signal");
		while (stage != 3)
			check(pthread_cond_wait(&to_main, &mu), "wait 3");
		check(pthread_mutex_unlock(&mu), "unlock");
	}
	timer_delete(t);
	printf("exchanges with a timer thread: %d, blocked on the held mutex: "
	       "%d\n", EXCHANGES, blocked);
	if (blocked != EXCHANGES)
		exit(1);
}

/* ---- a periodic timer and program threads on one counter ------------------- */
#define WORKERS 4
#define WORKER_ITERS 20000

static long counter;       /* guarded by mu */
static atomic_long ticks;   /* callback runs, each adds 100 */
static atomic_int stop;

static void tick(union sigval sv)
{
	(void)sv;
	if (atomic_load(&stop))
		return;
	check(pthread_mutex_lock(&mu), "tick lock");
	for (int i = 0; i < 100; i++)
		counter++;
	atomic_fetch_add(&ticks, 1);
	check(pthread_mutex_unlock(&mu), "tick unlock");
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < WORKER_ITERS; i++) {
		check(pthread_mutex_lock(&mu), "worker lock");
		counter++;
		check(pthread_mutex_unlock(&mu), "worker unlock");
		if (i % 1000 == 0)
			nap_ms(1);
	}
	return NULL;
}

static void shared_counter(void)
{
	timer_t t = make_timer(tick);
	pthread_t w[WORKERS];

	arm(t, 1, 1);
	for (int i = 0; i < WORKERS; i++)
		check(pthread_create(&w[i], NULL, worker, NULL), "create");
	for (int i = 0; i < WORKERS; i++)
		check(pthread_join(w[i], NULL), "join");
	while (atomic_load(&ticks) < 5)
		nap_ms(1);
	check(pthread_mutex_lock(&mu), "lock");
	atomic_store(&stop, 1);
	timer_delete(t);
	long want = (long)WORKERS * WORKER_ITERS + 100 * atomic_load(&ticks);
	int exact = counter == want;
	check(pthread_mutex_unlock(&mu), "unlock");
	printf("counter shared with timer callbacks: %s\n",
	       exact ? "exact" : "WRONG");
	if (!exact)
		exit(1);
}

int main(void)
{
	exchanges();
	shared_counter();
	return 0;
}
