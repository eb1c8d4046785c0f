// rwlock_overflow: glibc's reader limit. tryrdlock succeeds 2^28 - 1 times
// on one lock, then says EAGAIN, as do rdlock and timedrdlock; a writer
// gets in once every reader has left.
// goshim-test: shim-max-threads=GOMAXPROCS+2
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static int failures;

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EAGAIN: return "EAGAIN";
	case EBUSY: return "EBUSY";
	}
	return "other";
}

static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "rwlock_overflow: %s: got %s, want %s\n", what,
			ename(got), ename(want));
		failures++;
	}
}

int main(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	unsigned long n = 0;
	int err;

	while ((err = pthread_rwlock_tryrdlock(&l)) == 0)
		n++;
	printf("tryrdlock succeeds %lu times, then: %s\n", n, ename(err));
	if (n != (1ul << 28) - 1 || err != EAGAIN) {
		fprintf(stderr, "rwlock_overflow: reader limit wrong\n");
		failures++;
	}
	expect("rdlock at the limit", pthread_rwlock_rdlock(&l), EAGAIN);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec++;
	expect("timedrdlock at the limit",
	       pthread_rwlock_timedrdlock(&l, &ts), EAGAIN);
	expect("trywrlock at the limit", pthread_rwlock_trywrlock(&l), EBUSY);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("rdlock one below the limit", pthread_rwlock_rdlock(&l), 0);
	for (unsigned long i = 0; i < n; i++)
		pthread_rwlock_unlock(&l);
	expect("trywrlock after all readers left",
	       pthread_rwlock_trywrlock(&l), 0);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	return failures ? 1 : 0;
}
