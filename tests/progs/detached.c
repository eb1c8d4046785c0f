// detached: detached threads that outlive the thread that created them (some
// create detached threads of their own); pthread_detach on a running and on
// an already-exited joinable thread; pthread_attr_setdetachstate; joining or
// detaching a detached thread gives EINVAL. main waits with atomics + nanosleep.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NDET 200
#define NGRAND 50
#define NEXITED 100

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "detached: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)
#define OK(call) do { int e_ = (call); if (e_) { \
	fprintf(stderr, "detached: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, strerror(e_)); \
	exit(1); } } while (0)

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case ESRCH: return "ESRCH";
	case EDEADLK: return "EDEADLK";
	default: return strerror(e);
	}
}

static atomic_int go, done, started;
static atomic_long sum;
static pthread_attr_t det_attr;

static void nap(long ns)
{
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

/* wait until *v reaches want, up to 60 s */
static void await(atomic_int *v, int want, const char *what)
{
	for (int i = 0; atomic_load(v) < want; i++) {
		if (i == 60000) {
			fprintf(stderr, "detached: %s: %d of %d after 60 s\n", what,
				atomic_load(v), want);
			exit(1);
		}
		nap(1000000);
	}
}

static void *grandchild(void *arg)
{
	atomic_fetch_add(&sum, (long)(intptr_t)arg);
	atomic_fetch_add(&done, 1);
	return NULL;
}

static void *detached_worker(void *arg)
{
	intptr_t i = (intptr_t)arg;
	atomic_fetch_add(&started, 1);
	while (!atomic_load(&go))
		sched_yield();
	if (i < NGRAND) {
		pthread_t t;
		OK(pthread_create(&t, NULL, grandchild, (void *)(1000 + i)));
		OK(pthread_detach(t));   /* probably still running */
	}
	atomic_fetch_add(&sum, i);
	atomic_fetch_add(&done, 1);
	if (i % 2)
		pthread_exit(NULL);
	return NULL;
}

static void *creator(void *arg)
{
	(void)arg;
	for (intptr_t i = 0; i < NDET; i++) {
		pthread_t t;
		OK(pthread_create(&t, &det_attr, detached_worker, (void *)i));
	}
	return NULL;   /* exits while its children wait for `go` */
}

static atomic_int release;

static void *waiter(void *arg)
{
	while (!atomic_load(&release))
		sched_yield();
	atomic_fetch_add(&done, 1);
	return arg;
}

static atomic_int exited;

static void *quick(void *arg)
{
	atomic_fetch_add(&exited, 1);
	return arg;
}

int main(void)
{
	int st;

	/* attributes */
	OK(pthread_attr_init(&det_attr));
	OK(pthread_attr_getdetachstate(&det_attr, &st));
	printf("default detach state: %s\n", st == PTHREAD_CREATE_JOINABLE ? "joinable" : "detached");
	OK(pthread_attr_setdetachstate(&det_attr, PTHREAD_CREATE_DETACHED));
	OK(pthread_attr_getdetachstate(&det_attr, &st));
	printf("after setdetachstate: %s\n", st == PTHREAD_CREATE_DETACHED ? "detached" : "joinable");
	printf("setdetachstate(42): %s\n", ename(pthread_attr_setdetachstate(&det_attr, 42)));

	/* detached threads outliving their creator */
	pthread_t c;
	OK(pthread_create(&c, NULL, creator, NULL));
	OK(pthread_join(c, NULL));
	await(&started, NDET, "detached threads started");
	atomic_store(&go, 1);
	await(&done, NDET + NGRAND, "detached threads finished");
	long want = (long)NDET * (NDET - 1) / 2 + 1000L * NGRAND + (long)NGRAND * (NGRAND - 1) / 2;
	printf("creator exited; %d detached threads and %d grandchildren finished, sum %ld\n",
	       NDET, NGRAND, atomic_load(&sum));
	CHECK(atomic_load(&sum) == want);

	/* detach a running thread; it is then neither joinable nor detachable */
	pthread_t t;
	atomic_store(&done, 0);
	OK(pthread_create(&t, NULL, waiter, NULL));
	printf("detach running thread: %s\n", ename(pthread_detach(t)));
	printf("join detached running thread: %s\n", ename(pthread_join(t, NULL)));
	printf("detach it again: %s\n", ename(pthread_detach(t)));
	/* created detached */
	OK(pthread_create(&t, &det_attr, waiter, NULL));
	printf("join thread created detached: %s\n", ename(pthread_join(t, NULL)));
	atomic_store(&release, 1);
	await(&done, 2, "released detached threads");

	/* detach joinable threads that have already returned */
	int fails = 0;
	for (int i = 0; i < NEXITED; i++) {
		OK(pthread_create(&t, NULL, quick, NULL));
		await(&exited, i + 1, "quick thread");
		nap(200000);   /* let it finish exiting */
		fails += pthread_detach(t) != 0;
	}
	printf("detach %d already-exited threads: %d failures\n", NEXITED, fails);
	CHECK(fails == 0);
	OK(pthread_attr_destroy(&det_attr));
	printf("OK\n");
	return 0;
}
