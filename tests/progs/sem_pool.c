// sem_pool: a semaphore-bounded worker pool. 1,000 threads enter a section
// guarded by a semaphore of 4, 50 times each, through sem_wait, sem_trywait
// (then sem_wait when it says EAGAIN), sem_timedwait with a distant
// deadline, and sem_clockwait with a short one (0-300 us, which often times
// out) and then a distant one. At most 4 are ever inside, every
// entry is counted, and the value is 4 again at the end: no post is lost to
// a waiter that timed out.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHREADS 1000
#define ENTRIES 50
#define K 4

static sem_t pool;
static atomic_int inside, max_inside;
static atomic_long entries, timeouts;
static pthread_barrier_t start;

static struct timespec in_us(clockid_t clk, long us)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += us / 1000000;
	ts.tv_nsec += (us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void enter(int how, unsigned *seed)
{
	struct timespec ts;
	clockid_t clk;

	switch (how) {
	case 0:
		if (sem_trywait(&pool) == 0)
			return;
		if (errno != EAGAIN)
			break;
		if (sem_wait(&pool) == 0)
			return;
		break;
	case 1:
		ts = in_us(CLOCK_REALTIME, 60000000);
		if (sem_timedwait(&pool, &ts) == 0)
			return;
		break;
	case 2:
	case 3:
		/* 0 to 300 us first, which often times out, then long */
		clk = how == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		ts = in_us(clk, rand_r(seed) % 300);
		if (sem_clockwait(&pool, clk, &ts) == 0)
			return;
		if (errno != ETIMEDOUT)
			break;
		timeouts++;
		ts = in_us(clk, 60000000);
		if (sem_clockwait(&pool, clk, &ts) == 0)
			return;
		break;
	default:
		if (sem_wait(&pool) == 0)
			return;
		break;
	}
	perror("sem wait");
	exit(1);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	unsigned seed = (unsigned)i;

	pthread_barrier_wait(&start);
	for (int k = 0; k < ENTRIES; k++) {
		enter((int)((i + k) % 6), &seed);
		int n = atomic_fetch_add(&inside, 1) + 1;
		int m = atomic_load(&max_inside);
		while (n > m && !atomic_compare_exchange_weak(&max_inside, &m, n))
			;
		if (k % 5 == 0)
			sched_yield();
		entries++;
		atomic_fetch_sub(&inside, 1);
		if (sem_post(&pool) != 0) {
			perror("sem_post");
			exit(1);
		}
	}
	return NULL;
}

int main(void)
{
	static pthread_t t[NTHREADS];
	int v = -1;

	if (sem_init(&pool, 0, K) != 0) {
		perror("sem_init");
		return 1;
	}
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++) {
		int err = pthread_create(&t[i], NULL, worker, (void *)i);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	sem_getvalue(&pool, &v);
	printf("entries: %ld\n", (long)entries);
	printf("at most %d inside: %s\n", K, max_inside <= K ? "yes" : "no");
	printf("value at the end: %d\n", v);
	printf("destroy: %d\n", sem_destroy(&pool));
	return entries == (long)NTHREADS * ENTRIES && max_inside <= K &&
			       v == K
		       ? 0
		       : 1;
}
