// cond_prodcons: 10,000 threads, one mutex and one condition variable.
// Producers append numbered items to a shared queue; consumers sleep on the
// condition variable until an item is there. Every item must be consumed
// exactly once: the count and the checksum of what was consumed are exact.
// Under goshim the 10,000 threads are goroutines on a few OS threads, so
// every wait must park the goroutine, not block its thread.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PRODUCERS 5000
#define CONSUMERS 5000
#define PER_THREAD 8 /* items each producer makes and each consumer takes */
#define ITEMS (PRODUCERS * PER_THREAD)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static uint32_t queue[ITEMS];
static unsigned head, tail; /* guarded by lock */
static uint64_t taken_sum;  /* guarded by lock */
static unsigned taken;

static void die(const char *what, int err)
{
	fprintf(stderr, "cond_prodcons: %s: error %d\n", what, err);
	exit(1);
}

static void *producer(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	for (uint32_t i = 0; i < PER_THREAD; i++) {
		int err = pthread_mutex_lock(&lock);
		if (err)
			die("lock", err);
		queue[tail++] = id * PER_THREAD + i + 1;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	uint64_t sum = 0;
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		int err = pthread_mutex_lock(&lock);
		if (err)
			die("lock", err);
		while (head == tail) {
			err = pthread_cond_wait(&nonempty, &lock);
			if (err)
				die("cond_wait", err);
		}
		sum += queue[head++];
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	taken_sum += sum;
	taken += PER_THREAD;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	static pthread_t t[PRODUCERS + CONSUMERS];
	int n = 0, err;

	/* Consumers first, so most of them are asleep when items come. */
	for (int i = 0; i < CONSUMERS; i++, n++)
		if ((err = pthread_create(&t[n], NULL, consumer, NULL)))
			die("pthread_create", err);
	for (int i = 0; i < PRODUCERS; i++, n++)
		if ((err = pthread_create(&t[n], NULL, producer,
					  (void *)(uintptr_t)i)))
			die("pthread_create", err);
	for (int i = 0; i < n; i++)
		if ((err = pthread_join(t[i], NULL)))
			die("pthread_join", err);

	uint64_t want = (uint64_t)ITEMS * (ITEMS + 1) / 2;
	printf("threads %d, items %u of %d, checksum %s\n", n, taken, ITEMS,
	       taken_sum == want ? "exact" : "WRONG");
	if (taken != ITEMS || taken_sum != want || head != ITEMS) {
		fprintf(stderr, "cond_prodcons: sum %llu, want %llu\n",
			(unsigned long long)taken_sum,
			(unsigned long long)want);
		return 1;
	}
	return 0;
}
