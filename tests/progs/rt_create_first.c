// rt_create_first: a thread created with a real-time priority above its
// creator's runs before pthread_create returns, as the kernel preempts the
// creator for it on its CPU; one of equal or lower priority does not. The
// process is pinned to one CPU so the order is the scheduler's alone. Each
// case prints the events in the order they happened ("child" is the new
// thread's first step, "back" pthread_create's return in the creator).
// GOMAXPROCS=1, as the pinning gives it: more Ps than CPUs would let
// base-policy Ms that look for work compete with the waiters' Ms.
//
// Where the system does not let the process use SCHED_FIFO (no
// CAP_SYS_NICE, RLIMIT_RTPRIO 0), it says so and tests nothing, the same
// way natively and under goshim. No thread spins at a real-time priority.
// goshim-test: shim-max-threads=GOMAXPROCS+8
// goshim-test: timeout=60
// goshim-test: env=GOMAXPROCS=1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAIN_PRIO 10

static const char *events[16];
static atomic_int nevents;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "%s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void event(const char *what)
{
	int i = atomic_fetch_add(&nevents, 1);
	if (i < 16)
		events[i] = what;
}

static void show(const char *what)
{
	int n = atomic_exchange(&nevents, 0);
	printf("%s:", what);
	for (int i = 0; i < n && i < 16; i++)
		printf(" %s", events[i]);
	printf("\n");
}

/* policy -1: inherit the creator's scheduling. */
static pthread_t create(int policy, int prio, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_t t;

	check(pthread_attr_init(&a), "pthread_attr_init");
	if (policy >= 0) {
		struct sched_param sp = { .sched_priority = prio };
		check(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED),
		      "pthread_attr_setinheritsched");
		check(pthread_attr_setschedpolicy(&a, policy),
		      "pthread_attr_setschedpolicy");
		check(pthread_attr_setschedparam(&a, &sp),
		      "pthread_attr_setschedparam");
	}
	check(pthread_create(&t, &a, fn, arg), "pthread_create");
	pthread_attr_destroy(&a);
	return t;
}

static void *child(void *arg)
{
	event(arg ? arg : "child");
	return NULL;
}

static void one(const char *what, int policy, int prio)
{
	pthread_t t = create(policy, prio, child, NULL);
	event("back");
	check(pthread_join(t, NULL), "pthread_join");
	show(what);
}

/* A child above its creator that makes one above itself. */
static void *middle(void *arg)
{
	(void)arg;
	event("middle");
	pthread_t t = create(SCHED_FIFO, MAIN_PRIO + 20, child, "inner");
	event("middle-back");
	check(pthread_join(t, NULL), "pthread_join");
	return NULL;
}

/* A child above its creator that makes one with its own scheduling. */
static void *inheriting(void *arg)
{
	(void)arg;
	event("parent");
	pthread_t t = create(-1, 0, child, NULL);
	event("parent-back");
	check(pthread_join(t, NULL), "pthread_join");
	return NULL;
}

static void set_self(int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	check(pthread_setschedparam(pthread_self(), policy, &sp),
	      "pthread_setschedparam");
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

	one("FIFO 10 creates FIFO 20", SCHED_FIFO, MAIN_PRIO + 10);
	one("FIFO 10 creates RR 11", SCHED_RR, MAIN_PRIO + 1);
	one("FIFO 10 creates FIFO 10", SCHED_FIFO, MAIN_PRIO);
	one("FIFO 10 creates FIFO 5", SCHED_FIFO, MAIN_PRIO - 5);
	one("FIFO 10 creates OTHER", SCHED_OTHER, 0);
	one("FIFO 10 creates inheriting", -1, 0);

	/* main's own return is left out here: once its child, above it,
	 * blocks, which of the two runnable threads below that child runs
	 * first is the kernel's run queue order, not a creation rule. */
	pthread_t t = create(SCHED_FIFO, MAIN_PRIO + 10, middle, NULL);
	check(pthread_join(t, NULL), "pthread_join");
	show("FIFO 20 creates FIFO 30");

	t = create(SCHED_FIFO, MAIN_PRIO + 10, inheriting, NULL);
	check(pthread_join(t, NULL), "pthread_join");
	show("FIFO 20 creates inheriting");

	/* A creator under SCHED_OTHER is below every real-time thread. */
	set_self(SCHED_OTHER, 0);
	one("OTHER creates FIFO 1", SCHED_FIFO, 1);
	set_self(SCHED_FIFO, MAIN_PRIO);
	one("FIFO 10 again creates FIFO 20", SCHED_FIFO, MAIN_PRIO + 10);
	return 0;
}
