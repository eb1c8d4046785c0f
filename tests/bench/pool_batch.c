/* pool_batch [BLOCKS=4000] [WORKERS=8] [WORK=300000]: `make bench`'s batch
 * pool row, the shape of pbzip2 -p8: a reader thread puts BLOCKS numbered
 * blocks in a bounded queue (2 x WORKERS, mutex and two condvars), WORKERS
 * threads take them and compute WORK rounds of a hash each (a block's
 * compression, about a millisecond), and a writer thread takes the results
 * in block order (it waits on a condvar for the next one), as pbzip2 writes
 * its output. Prints "blocks_per_s N" (from the first block read to the
 * last written) and "wall_ms N", and checks the writer's checksum against
 * a serial recomputation of a sample. pool_batch.go is the Go counterpart
 * (goroutines, a buffered channel, the same in-order writer). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long blocks = 4000, workers = 8, rounds = 300000;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t result_in = PTHREAD_COND_INITIALIZER;
static long *queue, qhead, qlen, qcap;
static uint64_t *result;
static unsigned char *ready;
static int reading_done;

static uint64_t compute(long block)
{
	uint64_t x = (uint64_t)block * 0x9E3779B97F4A7C15ull | 1;
	for (long i = 0; i < rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static void check(int e, const char *what)
{
	if (e) {
		fprintf(stderr, "pool_batch: %s: %s\n", what, strerror(e));
		exit(1);
	}
}

static void *reader(void *unused)
{
	(void)unused;
	for (long b = 0; b < blocks; b++) {
		pthread_mutex_lock(&mu);
		while (qlen == qcap)
			pthread_cond_wait(&not_full, &mu);
		queue[(qhead + qlen++) % qcap] = b;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	reading_done = 1;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *worker(void *unused)
{
	(void)unused;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (qlen == 0 && !reading_done)
			pthread_cond_wait(&not_empty, &mu);
		if (qlen == 0) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		long b = queue[qhead];
		qhead = (qhead + 1) % qcap;
		qlen--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mu);
		uint64_t r = compute(b);
		pthread_mutex_lock(&mu);
		result[b] = r;
		ready[b] = 1;
		pthread_cond_broadcast(&result_in);
		pthread_mutex_unlock(&mu);
	}
}

static void *writer(void *sum)
{
	uint64_t s = 0;
	for (long b = 0; b < blocks; b++) {
		pthread_mutex_lock(&mu);
		while (!ready[b])
			pthread_cond_wait(&result_in, &mu);
		s = s * 31 + result[b];
		pthread_mutex_unlock(&mu);
	}
	*(uint64_t *)sum = s;
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		blocks = atol(argv[1]);
	if (argc > 2)
		workers = atol(argv[2]);
	if (argc > 3)
		rounds = atol(argv[3]);
	if (blocks < 1 || workers < 1 || workers > 1024 || rounds < 1) {
		fprintf(stderr, "usage: pool_batch [BLOCKS] [WORKERS] [WORK]\n");
		return 2;
	}
	qcap = 2 * workers;
	queue = calloc((size_t)qcap, sizeof *queue);
	result = calloc((size_t)blocks, sizeof *result);
	ready = calloc((size_t)blocks, 1);
	pthread_t *w = calloc((size_t)workers, sizeof *w);
	if (!queue || !result || !ready || !w)
		check(12, "calloc");
	uint64_t sum = 0;
	pthread_t rt, wt;
	double t0 = now_ms();
	check(pthread_create(&rt, NULL, reader, NULL), "pthread_create");
	check(pthread_create(&wt, NULL, writer, &sum), "pthread_create");
	for (long i = 0; i < workers; i++)
		check(pthread_create(&w[i], NULL, worker, NULL), "pthread_create");
	check(pthread_join(rt, NULL), "pthread_join");
	for (long i = 0; i < workers; i++)
		check(pthread_join(w[i], NULL), "pthread_join");
	check(pthread_join(wt, NULL), "pthread_join");
	double wall = now_ms() - t0;

	uint64_t want = 0;
	for (long b = 0; b < blocks; b++)
		want = want * 31 + (b % 97 == 0 ? compute(b) : result[b]);
	if (want != sum) {
		fprintf(stderr, "pool_batch: checksum mismatch\n");
		return 1;
	}
	printf("blocks_per_s %.0f\n", blocks / (wall / 1e3));
	printf("wall_ms %.1f\n", wall);
	return 0;
}
