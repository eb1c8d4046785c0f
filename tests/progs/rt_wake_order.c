// rt_wake_order: SCHED_FIFO threads blocked on a mutex, a condition
// variable, a semaphore and a rwlock (for writing) are released highest
// priority first, and in the order they blocked among equal priorities, as
// POSIX asks when the Thread Execution Scheduling option is supported. The
// process is pinned to one CPU and main runs above every waiter, so each
// release is seen in turn: main lets one waiter go, sleeps, and the
// waiter records itself. Each waiter is created and blocked before the
// next one exists, so the blocking order is the creation order. Then a
// waker below the thread it wakes (a mutex unlock, a cond signal) is
// preempted at once: the woken thread runs before the waker's next step.
// GOMAXPROCS=1, as the pinning gives it: more Ps than CPUs would let
// base-policy Ms that look for work compete with the waiters' Ms.
//
// Where the system does not let the process use SCHED_FIFO (no
// CAP_SYS_NICE, RLIMIT_RTPRIO 0), it says so and tests nothing, the same
// way natively and under goshim. Waiters only block and record: nothing
// spins at a real-time priority.
// goshim-test: shim-max-threads=GOMAXPROCS+10
// goshim-test: timeout=60
// goshim-test: env=GOMAXPROCS=1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAIN_PRIO 30
#define NWAITERS 6

/* Blocking order: creation order. Two pairs of equal priorities. */
static const int prios[NWAITERS] = { 5, 20, 10, 20, 15, 10 };
static const char *const names[NWAITERS] = { "a", "b", "c", "d", "e", "f" };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;

static atomic_int arrived, released;
static int order[NWAITERS];
static int failures;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "%s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Bounded: a waiter that never gets there fails the test, not the box. */
static void wait_count(atomic_int *n, int want, const char *what)
{
	for (int i = 0; atomic_load(n) < want; i++) {
		if (i == 5000) {
			fprintf(stderr, "%s: stuck at %d of %d\n", what,
				atomic_load(n), want);
			exit(1);
		}
		sleep_ms(1);
	}
}

static void record(int id)
{
	order[atomic_fetch_add(&released, 1)] = id;
}

enum kind { K_MUTEX, K_COND, K_SEM, K_RWLOCK };

static enum kind kind;

static void *waiter(void *arg)
{
	int id = (int)(long)arg;

	switch (kind) {
	case K_MUTEX:
		atomic_fetch_add(&arrived, 1);
		check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
		record(id);
		check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
		break;
	case K_COND:
		check(pthread_mutex_lock(&cmu), "pthread_mutex_lock");
		atomic_fetch_add(&arrived, 1);
		check(pthread_cond_wait(&cv, &cmu), "pthread_cond_wait");
		record(id);
		check(pthread_mutex_unlock(&cmu), "pthread_mutex_unlock");
		break;
	case K_SEM:
		atomic_fetch_add(&arrived, 1);
		while (sem_wait(&sem) != 0)
			check(errno == EINTR ? 0 : errno, "sem_wait");
		record(id);
		break;
	case K_RWLOCK:
		atomic_fetch_add(&arrived, 1);
		check(pthread_rwlock_wrlock(&rw), "pthread_rwlock_wrlock");
		record(id);
		check(pthread_rwlock_unlock(&rw), "pthread_rwlock_unlock");
		break;
	}
	return NULL;
}

/* Create the waiters one by one, each blocked before the next. */
static void start_waiters(pthread_t *t)
{
	atomic_store(&arrived, 0);
	atomic_store(&released, 0);
	for (int i = 0; i < NWAITERS; i++) {
		pthread_attr_t a;
		struct sched_param sp = { .sched_priority = prios[i] };
		check(pthread_attr_init(&a), "pthread_attr_init");
		check(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED),
		      "pthread_attr_setinheritsched");
		check(pthread_attr_setschedpolicy(&a, SCHED_FIFO),
		      "pthread_attr_setschedpolicy");
		check(pthread_attr_setschedparam(&a, &sp),
		      "pthread_attr_setschedparam");
		check(pthread_create(&t[i], &a, waiter, (void *)(long)i),
		      "pthread_create");
		pthread_attr_destroy(&a);
		wait_count(&arrived, i + 1, "arrive");
		/* From arrived to blocked is a few instructions; main, above
		 * it, must leave it the CPU to get there. */
		sleep_ms(20);
	}
}

static void finish(const char *what, pthread_t *t)
{
	/* Everything highest first, FIFO among equals. */
	static const int want[NWAITERS] = { 1, 3, 4, 2, 5, 0 };
	int bad = 0;

	for (int i = 0; i < NWAITERS; i++)
		check(pthread_join(t[i], NULL), "pthread_join");
	printf("%s:", what);
	for (int i = 0; i < NWAITERS; i++) {
		printf(" %s%d", names[order[i]], prios[order[i]]);
		bad |= order[i] != want[i];
	}
	printf("\n");
	if (bad) {
		fprintf(stderr, "%s: not in priority order\n", what);
		failures++;
	}
}

static void run_mutex(void)
{
	pthread_t t[NWAITERS];

	kind = K_MUTEX;
	check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
	start_waiters(t);
	/* One unlock: each waiter passes the mutex on as it leaves. */
	check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
	finish("mutex", t);
}

static void run_cond(void)
{
	pthread_t t[NWAITERS];

	kind = K_COND;
	start_waiters(t);
	for (int i = 0; i < NWAITERS; i++) {
		check(pthread_mutex_lock(&cmu), "pthread_mutex_lock");
		check(pthread_cond_signal(&cv), "pthread_cond_signal");
		check(pthread_mutex_unlock(&cmu), "pthread_mutex_unlock");
		wait_count(&released, i + 1, "cond release");
	}
	finish("cond", t);
}

static void run_sem(void)
{
	pthread_t t[NWAITERS];

	kind = K_SEM;
	if (sem_init(&sem, 0, 0) != 0) {
		perror("sem_init");
		exit(1);
	}
	start_waiters(t);
	for (int i = 0; i < NWAITERS; i++) {
		if (sem_post(&sem) != 0) {
			perror("sem_post");
			exit(1);
		}
		wait_count(&released, i + 1, "sem release");
	}
	finish("sem", t);
	sem_destroy(&sem);
}

static void run_rwlock(void)
{
	pthread_t t[NWAITERS];

	kind = K_RWLOCK;
	check(pthread_rwlock_wrlock(&rw), "pthread_rwlock_wrlock");
	start_waiters(t);
	check(pthread_rwlock_unlock(&rw), "pthread_rwlock_unlock");
	finish("rwlock writers", t);
}

/* A low thread (10) wakes a high one (20): "high" comes before "low". */
static sem_t go;
static const char *steps[2];
static atomic_int nsteps;

static void step(const char *what)
{
	steps[atomic_fetch_add(&nsteps, 1)] = what;
}

static void *low_waker(void *arg)
{
	(void)arg;
	if (kind == K_MUTEX)
		check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
	atomic_fetch_add(&arrived, 1);
	while (sem_wait(&go) != 0)
		check(errno == EINTR ? 0 : errno, "sem_wait");
	if (kind == K_MUTEX) {
		check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
	} else {
		check(pthread_mutex_lock(&cmu), "pthread_mutex_lock");
		check(pthread_cond_signal(&cv), "pthread_cond_signal");
		check(pthread_mutex_unlock(&cmu), "pthread_mutex_unlock");
	}
	step("low");
	return NULL;
}

static void *high_woken(void *arg)
{
	(void)arg;
	if (kind == K_MUTEX) {
		atomic_fetch_add(&arrived, 1);
		check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
		check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
	} else {
		check(pthread_mutex_lock(&cmu), "pthread_mutex_lock");
		atomic_fetch_add(&arrived, 1);
		check(pthread_cond_wait(&cv, &cmu), "pthread_cond_wait");
		check(pthread_mutex_unlock(&cmu), "pthread_mutex_unlock");
	}
	step("high");
	return NULL;
}

static pthread_t create_fifo(int prio, void *(*fn)(void *))
{
	pthread_attr_t a;
	pthread_t t;
	struct sched_param sp = { .sched_priority = prio };

	check(pthread_attr_init(&a), "pthread_attr_init");
	check(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED),
	      "pthread_attr_setinheritsched");
	check(pthread_attr_setschedpolicy(&a, SCHED_FIFO),
	      "pthread_attr_setschedpolicy");
	check(pthread_attr_setschedparam(&a, &sp),
	      "pthread_attr_setschedparam");
	check(pthread_create(&t, &a, fn, NULL), "pthread_create");
	pthread_attr_destroy(&a);
	return t;
}

static void run_preempt(enum kind k, const char *what)
{
	pthread_t lo, hi;

	kind = k;
	atomic_store(&arrived, 0);
	atomic_store(&nsteps, 0);
	if (sem_init(&go, 0, 0) != 0) {
		perror("sem_init");
		exit(1);
	}
	lo = create_fifo(10, low_waker);
	wait_count(&arrived, 1, "low arrive");
	hi = create_fifo(20, high_woken);
	wait_count(&arrived, 2, "high arrive");
	sleep_ms(20);
	if (sem_post(&go) != 0) {
		perror("sem_post");
		exit(1);
	}
	check(pthread_join(lo, NULL), "pthread_join");
	check(pthread_join(hi, NULL), "pthread_join");
	printf("%s: %s %s\n", what, steps[0], steps[1]);
	if (strcmp(steps[0], "high") != 0) {
		fprintf(stderr, "%s: the waker was not preempted\n", what);
		failures++;
	}
	sem_destroy(&go);
}

/* The whole process on the first CPU it may use. */
static void pin(void)
{
	cpu_set_t m;
	int cpu = 0;

	if (sched_getaffinity(0, sizeof m, &m) != 0) {
		perror("sched_getaffinity");
		exit(1);
	}
	while (!CPU_ISSET(cpu, &m))
		cpu++;
	CPU_ZERO(&m);
	CPU_SET(cpu, &m);
	if (sched_setaffinity(0, sizeof m, &m) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

int main(void)
{
	struct sched_param sp = { .sched_priority = MAIN_PRIO };

	pin();
	int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err == EPERM) {
		printf("SCHED_FIFO not permitted here (EPERM): nothing "
		       "tested\n");
		return 0;
	}
	check(err, "pthread_setschedparam");
	run_mutex();
	run_cond();
	run_sem();
	run_rwlock();
	run_preempt(K_MUTEX, "mutex unlock by a lower thread");
	run_preempt(K_COND, "cond signal by a lower thread");
	return failures != 0;
}
