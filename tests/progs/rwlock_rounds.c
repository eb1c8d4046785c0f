// rwlock_rounds: 1,000 threads, one writer to three readers, take one rwlock
// 100 times each, in three rounds: the default kind (PTHREAD_RWLOCK_INITIALIZER),
// writer-preferring by static initializer, and PREFER_WRITER_NP set by
// pthread_rwlockattr_setkind_np. Writers move two words together, readers
// check them, and counts of the threads inside check the exclusion; an
// eighth of the acquisitions use the try forms, an eighth the timed ones.
// Some holders yield inside, so that waiters pile up. Totals are exact.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHREADS 1000
#define OPS 100

static pthread_rwlock_t lock_default = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t lock_writer =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t lock_attr;

static pthread_rwlock_t *lk;
static pthread_barrier_t start;
static long a, b; /* b == 2 * a whenever the lock is free */
static atomic_int readers_in, writers_in;
static atomic_long reads, writes, violations;

static void die(const char *what, int err)
{
	fprintf(stderr, "rwlock_rounds: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct timespec later(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	return ts;
}

static void take(int writer, int mode)
{
	int err;

	if (mode == 0) {
		while ((err = writer ? pthread_rwlock_trywrlock(lk)
				     : pthread_rwlock_tryrdlock(lk)) == EBUSY)
			sched_yield();
	} else if (mode == 1) {
		struct timespec ts = later();
		err = writer ? pthread_rwlock_timedwrlock(lk, &ts)
			     : pthread_rwlock_timedrdlock(lk, &ts);
	} else {
		err = writer ? pthread_rwlock_wrlock(lk)
			     : pthread_rwlock_rdlock(lk);
	}
	if (err)
		die(writer ? "write lock" : "read lock", err);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	int writer = i % 4 == 0;

	pthread_barrier_wait(&start);
	for (int k = 0; k < OPS; k++) {
		take(writer, (int)((i + k) % 8));
		if (writer) {
			if (atomic_fetch_add(&writers_in, 1) != 0 ||
			    atomic_load(&readers_in) != 0)
				violations++;
			a++;
			if (k % 10 == 0)
				sched_yield(); /* let others pile up */
			b += 2;
			writes++;
			atomic_fetch_sub(&writers_in, 1);
		} else {
			atomic_fetch_add(&readers_in, 1);
			if (atomic_load(&writers_in) != 0 || b != 2 * a)
				violations++;
			if (k % 10 == 0)
				sched_yield();
			if (b != 2 * a)
				violations++;
			reads++;
			atomic_fetch_sub(&readers_in, 1);
		}
		int err = pthread_rwlock_unlock(lk);
		if (err)
			die("unlock", err);
	}
	return NULL;
}

static void round_on(const char *name, pthread_rwlock_t *l)
{
	static pthread_t t[NTHREADS];
	int err;

	lk = l;
	a = b = 0;
	reads = writes = violations = 0;
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		if ((err = pthread_create(&t[i], NULL, worker, (void *)i)))
			die("pthread_create", err);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	printf("%s: writes %ld reads %ld a %ld b %ld violations %ld\n", name,
	       (long)writes, (long)reads, a, b, (long)violations);
	if (violations || writes != NTHREADS / 4 * OPS ||
	    reads != NTHREADS / 4 * 3 * OPS || a != writes || b != 2 * a) {
		fprintf(stderr, "rwlock_rounds: %s: wrong totals\n", name);
		exit(1);
	}
	if ((err = pthread_rwlock_destroy(l)))
		die("destroy", err);
}

int main(void)
{
	pthread_rwlockattr_t attr;

	round_on("default", &lock_default);
	round_on("writer-nonrecursive initializer", &lock_writer);
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NP);
	pthread_rwlock_init(&lock_attr, &attr);
	pthread_rwlockattr_destroy(&attr);
	round_on("prefer-writer attribute", &lock_attr);
	return 0;
}
