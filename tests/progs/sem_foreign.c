// sem_foreign: a thread the program did not create shares semaphores with
// the program's own. A SIGEV_THREAD timer's callback runs on a thread glibc
// starts itself (goshim does not see it created): it posts a semaphore a
// program thread is parked on, waits on one until a program thread posts
// it, and times out on an empty one, 10 times; then a periodic timer's
// callbacks and program threads pass units of one semaphore back and forth
// and the count at the end is exact.
// goshim-test: shim-max-threads=GOMAXPROCS+8
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static sem_t to_main, to_callback, empty;
static atomic_int stage, timed_out;

static void die(const char *what)
{
	fprintf(stderr, "sem_foreign: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void arm(timer_t t, long first_ms, long every_ms)
{
	struct itimerspec its = {
		.it_value = { first_ms / 1000, (first_ms % 1000) * 1000000 },
		.it_interval = { every_ms / 1000, (every_ms % 1000) * 1000000 },
	};
	if (timer_settime(t, 0, &its, NULL))
		die("timer_settime");
}

static timer_t make_timer(void (*fn)(union sigval))
{
	struct sigevent sev;
	timer_t t;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = fn;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t))
		die("timer_create");
	return t;
}

/* Post to main (parked), wait for main's post, time out on an empty one. */
static void exchange(union sigval sv)
{
	(void)sv;
	struct timespec ts;

	nap_ms(5); /* let main park first */
	atomic_store(&stage, 1);
	if (sem_post(&to_main))
		die("callback sem_post");
	if (sem_wait(&to_callback))
		die("callback sem_wait");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 5000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (sem_clockwait(&empty, CLOCK_MONOTONIC, &ts) == -1 &&
	    errno == ETIMEDOUT)
		timed_out++;
	atomic_store(&stage, 2);
}

#define EXCHANGES 10

static void exchanges(void)
{
	timer_t t = make_timer(exchange);
	int woken_by_callback = 0;

	for (int i = 0; i < EXCHANGES; i++) {
		atomic_store(&stage, 0);
		arm(t, 1, 0);
		if (sem_wait(&to_main))
			die("sem_wait");
		woken_by_callback += atomic_load(&stage) == 1;
		nap_ms(2); /* the callback parks in sem_wait meanwhile */
		if (sem_post(&to_callback))
			die("sem_post");
		while (atomic_load(&stage) != 2)
			nap_ms(1);
	}
	timer_delete(t);
	printf("exchanges with a timer thread: %d, woken by it: %d, its "
	       "timeouts: %d\n", EXCHANGES, woken_by_callback,
	       (int)timed_out);
	if (woken_by_callback != EXCHANGES || timed_out != EXCHANGES)
		exit(1);
}

/* ---- units passed between timer callbacks and program threads ------------ */
#define WORKERS 4
#define WORKER_ITERS 5000

static sem_t units;
static atomic_long ticks;
static atomic_int stop, inside;

static void tick(union sigval sv)
{
	(void)sv;
	atomic_fetch_add(&inside, 1);
	if (atomic_load(&stop)) {
		atomic_fetch_sub(&inside, 1);
		return;
	}
	/* Take two units when there are, give them back. Callbacks may run
	 * at once (one thread per expiry), so the second wait is bounded:
	 * three of them each holding one unit and waiting for another would
	 * hold every unit for good. */
	if (sem_trywait(&units) == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (sem_timedwait(&units, &ts) == 0)
			sem_post(&units);
		else if (errno != ETIMEDOUT)
			die("tick sem_timedwait");
		sem_post(&units);
	}
	atomic_fetch_add(&ticks, 1);
	atomic_fetch_sub(&inside, 1);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < WORKER_ITERS; i++) {
		if (sem_wait(&units))
			die("worker sem_wait");
		if (i % 500 == 0)
			nap_ms(1);
		if (sem_post(&units))
			die("worker sem_post");
	}
	return NULL;
}

static void shared_units(void)
{
	timer_t t = make_timer(tick);
	pthread_t w[WORKERS];
	int v = -1;

	sem_init(&units, 0, 3);
	arm(t, 1, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	while (atomic_load(&ticks) < 5)
		nap_ms(1);
	atomic_store(&stop, 1);
	timer_delete(t);
	while (atomic_load(&inside)) /* one already running finishes */
		nap_ms(1);
	sem_getvalue(&units, &v);
	printf("units shared with timer callbacks, at the end: %d\n", v);
	if (v != 3)
		exit(1);
}

int main(void)
{
	sem_init(&to_main, 0, 0);
	sem_init(&to_callback, 0, 0);
	sem_init(&empty, 0, 0);
	exchanges();
	shared_units();
	return 0;
}
