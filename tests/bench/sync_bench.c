/* sync_bench MODE [N]: mutex and condvar costs, one "NAME VALUE" line each;
 * every figure is the best of 3 timed runs after a warm-up. Built and run by
 * tests/bench/bench.sh; sync_bench.go is the Go counterpart.
 *   pingpong [N=100000]  two threads hand a turn flag back and forth under one
 *                        mutex with two condvars: "cond_pingpong NS" per
 *                        round trip (two handoffs)
 *   lock [N=20000000]    pthread_mutex_lock+unlock of a free mutex in a loop:
 *                        "lock_uncontended NS" per pair while the process has
 *                        one thread (glibc then skips the atomic), and
 *                        "lock_uncontended_mt NS" while a second thread exists
 *                        (blocked in pthread_cond_wait)
 *   contend [N=32000000] 64 threads add 1 to one counter under one mutex, N
 *                        increments in all, started together by a barrier:
 *                        "mutex_contended64 OPS" per second, over the span
 *                        from the first thread's start to the last one's end
 *                        (each thread reads the clock itself: who runs first
 *                        after the barrier is the scheduler's choice) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 3
#define CONTENDERS 64

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void check(int e, const char *what)
{
	if (e) {
		fprintf(stderr, "sync_bench: %s: %s\n", what, strerror(e));
		exit(1);
	}
}

/* ---- pingpong ------------------------------------------------------------ */
static pthread_mutex_t pp_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
static int pp_turn;       /* 0: main's, 1: the peer's */
static int pp_stop;
static long pp_rounds;    /* counted by the peer */

static void *pp_peer(void *unused)
{
	(void)unused;
	check(pthread_mutex_lock(&pp_mu), "pthread_mutex_lock");
	for (;;) {
		while (pp_turn != 1 && !pp_stop)
			check(pthread_cond_wait(&pp_cond[1], &pp_mu), "pthread_cond_wait");
		if (pp_stop)
			break;
		pp_rounds++;
		pp_turn = 0;
		check(pthread_cond_signal(&pp_cond[0]), "pthread_cond_signal");
	}
	check(pthread_mutex_unlock(&pp_mu), "pthread_mutex_unlock");
	return NULL;
}

/* n round trips: main gives the turn to the peer and waits for it back */
static void pp_rounds_run(long n)
{
	check(pthread_mutex_lock(&pp_mu), "pthread_mutex_lock");
	for (long i = 0; i < n; i++) {
		pp_turn = 1;
		check(pthread_cond_signal(&pp_cond[1]), "pthread_cond_signal");
		while (pp_turn != 0)
			check(pthread_cond_wait(&pp_cond[0], &pp_mu), "pthread_cond_wait");
	}
	check(pthread_mutex_unlock(&pp_mu), "pthread_mutex_unlock");
}

static void pingpong(long n)
{
	pthread_t t;
	check(pthread_create(&t, NULL, pp_peer, NULL), "pthread_create");
	pp_rounds_run(n / 10 + 1); /* warm-up */
	double best = 1e300;
	for (int r = 0; r < REPS; r++) {
		double t0 = now_ns();
		pp_rounds_run(n);
		double ns = (now_ns() - t0) / n;
		if (ns < best)
			best = ns;
	}
	check(pthread_mutex_lock(&pp_mu), "pthread_mutex_lock");
	pp_stop = 1;
	check(pthread_cond_signal(&pp_cond[1]), "pthread_cond_signal");
	check(pthread_mutex_unlock(&pp_mu), "pthread_mutex_unlock");
	check(pthread_join(t, NULL), "pthread_join");
	if (pp_rounds != (n / 10 + 1) + REPS * n) {
		fprintf(stderr, "sync_bench: pingpong: %ld rounds seen by the peer\n", pp_rounds);
		exit(1);
	}
	printf("cond_pingpong %.1f\n", best);
}

/* ---- lock ---------------------------------------------------------------- */
static pthread_mutex_t lk_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile long lk_count;

static double lock_loop(long n)
{
	double best = 1e300;
	for (int r = 0; r < REPS; r++) {
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&lk_mu);
			lk_count++;
			pthread_mutex_unlock(&lk_mu);
		}
		double ns = (now_ns() - t0) / n;
		if (ns < best)
			best = ns;
	}
	return best;
}

static pthread_mutex_t idle_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int idle_go;

static void *idle_thread(void *unused)
{
	(void)unused;
	check(pthread_mutex_lock(&idle_mu), "pthread_mutex_lock");
	while (!idle_go)
		check(pthread_cond_wait(&idle_cond, &idle_mu), "pthread_cond_wait");
	check(pthread_mutex_unlock(&idle_mu), "pthread_mutex_unlock");
	return NULL;
}

static void lock_bench(long n)
{
	lock_loop(n / 10 + 1); /* warm-up */
	double st = lock_loop(n);
	pthread_t t;
	check(pthread_create(&t, NULL, idle_thread, NULL), "pthread_create");
	double mt = lock_loop(n);
	check(pthread_mutex_lock(&idle_mu), "pthread_mutex_lock");
	idle_go = 1;
	check(pthread_cond_signal(&idle_cond), "pthread_cond_signal");
	check(pthread_mutex_unlock(&idle_mu), "pthread_mutex_unlock");
	check(pthread_join(t, NULL), "pthread_join");
	if (lk_count != (n / 10 + 1) * REPS + 2 * REPS * n) {
		fprintf(stderr, "sync_bench: lock: count %ld\n", lk_count);
		exit(1);
	}
	printf("lock_uncontended %.2f\n", st);
	printf("lock_uncontended_mt %.2f\n", mt);
}

/* ---- contend ------------------------------------------------------------- */
static pthread_mutex_t ct_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ct_start;
static long ct_counter;
static long ct_per;
static double ct_begin[CONTENDERS], ct_end[CONTENDERS];

static void *contender(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	int e = pthread_barrier_wait(&ct_start);
	if (e != PTHREAD_BARRIER_SERIAL_THREAD)
		check(e, "pthread_barrier_wait");
	ct_begin[k] = now_ns();
	for (long i = 0; i < ct_per; i++) {
		pthread_mutex_lock(&ct_mu);
		ct_counter++;
		pthread_mutex_unlock(&ct_mu);
	}
	ct_end[k] = now_ns();
	return NULL;
}

/* one run: seconds from the first contender's start to the last one's end */
static double contend_once(void)
{
	pthread_t t[CONTENDERS];
	ct_counter = 0;
	check(pthread_barrier_init(&ct_start, NULL, CONTENDERS + 1), "pthread_barrier_init");
	for (uintptr_t i = 0; i < CONTENDERS; i++)
		check(pthread_create(&t[i], NULL, contender, (void *)i), "pthread_create");
	int e = pthread_barrier_wait(&ct_start);
	if (e != PTHREAD_BARRIER_SERIAL_THREAD)
		check(e, "pthread_barrier_wait");
	double first = 1e300, last = 0;
	for (int i = 0; i < CONTENDERS; i++) {
		check(pthread_join(t[i], NULL), "pthread_join");
		if (ct_begin[i] < first)
			first = ct_begin[i];
		if (ct_end[i] > last)
			last = ct_end[i];
	}
	double secs = (last - first) / 1e9;
	check(pthread_barrier_destroy(&ct_start), "pthread_barrier_destroy");
	if (ct_counter != ct_per * CONTENDERS) {
		fprintf(stderr, "sync_bench: contend: counter %ld, want %ld\n",
			ct_counter, ct_per * CONTENDERS);
		exit(1);
	}
	return secs;
}

static void contend(long n)
{
	ct_per = n / CONTENDERS / 10 + 1;
	contend_once(); /* warm-up */
	ct_per = n / CONTENDERS;
	double best = 1e300;
	for (int r = 0; r < REPS; r++) {
		double s = contend_once();
		if (s < best)
			best = s;
	}
	printf("mutex_contended64 %.0f\n", ct_per * CONTENDERS / best);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;
	if (!strcmp(mode, "pingpong"))
		pingpong(n > 0 ? n : 100000);
	else if (!strcmp(mode, "lock"))
		lock_bench(n > 0 ? n : 20000000);
	else if (!strcmp(mode, "contend"))
		contend(n >= CONTENDERS ? n : 32000000);
	else {
		fprintf(stderr, "usage: sync_bench pingpong|lock|contend [N]\n");
		return 2;
	}
	return 0;
}
