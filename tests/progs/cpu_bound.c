// cpu_bound: 1,000 threads, all alive at once (they spin on a start flag that
// main sets 20 ms after the last one is running), each doing a fixed few-ms
// integer computation; results are combined in join order and spot-checked
// against a serial recomputation.
// goshim-test: shim-max-threads=GOMAXPROCS+2
// goshim-test: native-min-threads=1001
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHR 1000
#define ITER 1000000

static atomic_int ready, start;

static uint64_t compute(uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1, acc = 0;
	for (int i = 0; i < ITER; i++) {   /* xorshift64* */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		acc += x * 0x2545F4914F6CDD1Dull;
	}
	return acc;
}

static uint64_t result[NTHR];

static void *worker(void *arg)
{
	intptr_t id = (intptr_t)arg;
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&start))
		sched_yield();
	result[id] = compute(id);
	return NULL;
}

int main(void)
{
	static pthread_t t[NTHR];
	int e;
	for (intptr_t i = 0; i < NTHR; i++)
		if ((e = pthread_create(&t[i], NULL, worker, (void *)i))) {
			fprintf(stderr, "cpu_bound: pthread_create: %s\n", strerror(e));
			return 1;
		}
	while (atomic_load(&ready) < NTHR)
		sched_yield();
	struct timespec all_alive = { 0, 20000000 };
	nanosleep(&all_alive, NULL);
	atomic_store(&start, 1);
	uint64_t sum = 0;
	for (int i = 0; i < NTHR; i++) {
		if ((e = pthread_join(t[i], NULL))) {
			fprintf(stderr, "cpu_bound: pthread_join: %s\n", strerror(e));
			return 1;
		}
		sum = sum * 31 + result[i];
	}
	for (int i = 0; i < NTHR; i += 97)
		if (result[i] != compute(i)) {
			fprintf(stderr, "cpu_bound: thread %d computed a wrong result\n", i);
			return 1;
		}
	printf("%d threads x %d iterations\n", NTHR, ITER);
	printf("checksum %016llx\n", (unsigned long long)sum);
	printf("OK\n");
	return 0;
}
