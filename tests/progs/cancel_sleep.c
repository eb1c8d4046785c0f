// cancel_sleep: deferred cancellation of threads that wait in a sleep or
// in sem_wait, as sysbench ends its reporting thread. A thread asleep is
// cancelled: its cleanup handler runs and the joiner gets
// PTHREAD_CANCELED. A thread cancelled before it sleeps is cancelled at
// the sleep. A thread with cancellation disabled sleeps its full time and
// is cancelled when it enables it and tests. A thread in sem_wait is
// cancelled too.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static atomic_int cleanups, started;
static sem_t never;

static void cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	atomic_fetch_add(&started, 1);
	for (;;)
		usleep(100000);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *late_sleeper(void *arg)
{
	sem_t *go = arg;
	pthread_cleanup_push(cleanup, NULL);
	sem_wait(go); /* the cancel arrives before this is posted */
	for (;;)
		nanosleep(&(struct timespec){ 1, 0 }, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *stubborn(void *arg)
{
	int old;
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	atomic_fetch_add(&started, 1);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	usleep(300000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	printf("stubborn: slept its full time: %s\n", ms >= 300 ? "yes" : "no");
	fflush(stdout);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	pthread_testcancel();
	return (void *)1;
}

static void *sem_waiter(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	atomic_fetch_add(&started, 1);
	sem_wait(&never);
	pthread_cleanup_pop(0);
	return NULL;
}

static void cancel_and_join(const char *name, pthread_t t)
{
	void *ret;
	int c = pthread_cancel(t);
	int j = pthread_join(t, &ret);
	printf("%s: cancel %d, join %d, %s\n", name, c, j,
	       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled");
}

static void wait_started(int n)
{
	while (atomic_load(&started) < n)
		usleep(1000);
	usleep(20000); /* and asleep by now, most likely */
}

int main(void)
{
	pthread_t t;
	sem_t go;

	sem_init(&never, 0, 0);
	sem_init(&go, 0, 0);

	pthread_create(&t, NULL, sleeper, NULL);
	wait_started(1);
	cancel_and_join("sleeper", t);

	pthread_create(&t, NULL, late_sleeper, &go);
	pthread_cancel(t);
	sem_post(&go);
	void *ret;
	pthread_join(t, &ret);
	printf("late sleeper: %s\n",
	       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled");

	pthread_create(&t, NULL, stubborn, NULL);
	wait_started(2);
	cancel_and_join("stubborn", t);

	pthread_create(&t, NULL, sem_waiter, NULL);
	wait_started(3);
	cancel_and_join("sem_waiter", t);

	printf("cleanup handlers run: %d\n", atomic_load(&cleanups));
	return 0;
}
