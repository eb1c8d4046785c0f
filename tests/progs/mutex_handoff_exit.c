// mutex_handoff_exit: sysbench's `threads` test in small. Threads with
// 64 KiB stacks share a few mutexes and yield while holding them, so waits
// pass 1 ms and unlocks hand the mutex straight to the oldest waiter; then
// they exit. A stack of a size other than the default is unmapped when its
// thread exits, so an unlocker that still looks at the woken waiter's
// state (it lives on the waiter's stack) after waking it reads unmapped
// memory. More Ps than CPUs make the unlocker lose its CPU in that window
// more often. Totals must be exact.
// goshim-test: env=GOMAXPROCS=4
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define ROUNDS 8
#define THREADS 64
#define LOCKS 8
#define ITERS 1000
#define STACK_SIZE (64 * 1024)

static pthread_mutex_t mu[LOCKS] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};
static long counter[LOCKS];

static void *worker(void *arg)
{
	int k = (int)((long)arg % LOCKS);
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&mu[k]);
		sched_yield();
		counter[k]++;
		pthread_mutex_unlock(&mu[k]);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, STACK_SIZE)) {
		fprintf(stderr, "pthread_attr_setstacksize failed\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		for (long i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], &attr, worker, (void *)i)) {
				perror("pthread_create");
				return 1;
			}
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	}
	long total = 0;
	for (int k = 0; k < LOCKS; k++)
		total += counter[k];
	printf("total %ld (want %d)\n", total, ROUNDS * THREADS * ITERS);
	return total != (long)ROUNDS * THREADS * ITERS;
}
