// create_join: 200,000 pthread_create + pthread_join, 100 threads at a time,
// joined in creation order; each thread returns a value derived from its
// index (half by return, half by pthread_exit) and the sum is checked.
// The goshim bound allows one M beyond GOMAXPROCS + sysmon: a wakeup that
// finds an idle P while the only other M is between giving up its P and
// parking starts a new M (Go does the same); it is then reused.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOTAL 200000
#define BATCH 100

static void die(const char *what, int err)
{
	fprintf(stderr, "create_join: %s: %s\n", what, strerror(err));
	exit(1);
}

static void *work(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	if (i & 1)
		pthread_exit((void *)(i * 3 + 1));
	return (void *)(i * 3 + 1);
}

int main(void)
{
	pthread_t t[BATCH];
	uint64_t sum = 0;
	int e;

	for (uintptr_t base = 0; base < TOTAL; base += BATCH) {
		for (uintptr_t j = 0; j < BATCH; j++)
			if ((e = pthread_create(&t[j], NULL, work, (void *)(base + j))))
				die("pthread_create", e);
		for (uintptr_t j = 0; j < BATCH; j++) {
			void *r;
			if ((e = pthread_join(t[j], &r)))
				die("pthread_join", e);
			if ((uintptr_t)r != (base + j) * 3 + 1) {
				fprintf(stderr, "create_join: thread %lu returned %lu\n",
					(unsigned long)(base + j), (unsigned long)(uintptr_t)r);
				return 1;
			}
			sum += (uintptr_t)r;
		}
	}
	uint64_t want = 3 * ((uint64_t)TOTAL * (TOTAL - 1) / 2) + TOTAL;
	printf("threads created and joined: %d (batches of %d)\n", TOTAL, BATCH);
	printf("sum of return values: %llu\n", (unsigned long long)sum);
	if (sum != want) {
		fprintf(stderr, "create_join: sum %llu, want %llu\n",
			(unsigned long long)sum, (unsigned long long)want);
		return 1;
	}
	printf("OK\n");
	return 0;
}
