// rwlock_errors: every error a pthread_rwlock_* call can return, one line
// each: EDEADLK for the writer asking again (the try forms say EBUSY),
// EBUSY, ETIMEDOUT, EINVAL for a bad tv_nsec or clock (checked even when the
// lock is free or already held), and the 0 that unlock and destroy return
// whatever the state (EAGAIN: rwlock_overflow). A wrong result is also
// reported on stderr and makes the exit status 1.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case 0: return "0";
	case EDEADLK: return "EDEADLK";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EAGAIN: return "EAGAIN";
	case EPERM: return "EPERM";
	}
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "rwlock_errors: %s: got %s, want %s\n", what,
			ename(got), ename(want));
		failures++;
	}
}

static struct timespec in_ms(clockid_t clk, long ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static const struct timespec bad_big = { 0, 1000000000 };
static const struct timespec bad_neg = { 0, -1 };
static const struct timespec past = { 1, 0 };
static const struct timespec before_epoch = { -1, 0 };

/* A thread that takes the lock (for writing or reading), then holds it
 * until told to let go. */
struct holder {
	pthread_t t;
	pthread_rwlock_t *l;
	int write;
	atomic_int held, release;
};

static void *hold(void *arg)
{
	struct holder *h = arg;
	int err = h->write ? pthread_rwlock_wrlock(h->l)
			   : pthread_rwlock_rdlock(h->l);
	if (err) {
		fprintf(stderr, "rwlock_errors: holder: %s\n", ename(err));
		exit(1);
	}
	atomic_store(&h->held, 1);
	while (!atomic_load(&h->release)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	pthread_rwlock_unlock(h->l);
	return NULL;
}

static void hold_start(struct holder *h, pthread_rwlock_t *l, int write)
{
	memset(h, 0, sizeof *h);
	h->l = l;
	h->write = write;
	pthread_create(&h->t, NULL, hold, h);
	while (!atomic_load(&h->held)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

static void hold_stop(struct holder *h)
{
	atomic_store(&h->release, 1);
	pthread_join(h->t, NULL);
}

static void own_write_lock(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec ts = in_ms(CLOCK_REALTIME, 1000);
	struct timespec mono = in_ms(CLOCK_MONOTONIC, 1000);

	expect("wrlock", pthread_rwlock_wrlock(&l), 0);
	expect("wrlock again", pthread_rwlock_wrlock(&l), EDEADLK);
	expect("rdlock while writing", pthread_rwlock_rdlock(&l), EDEADLK);
	expect("trywrlock while writing", pthread_rwlock_trywrlock(&l), EBUSY);
	expect("tryrdlock while writing", pthread_rwlock_tryrdlock(&l), EBUSY);
	expect("timedwrlock while writing",
	       pthread_rwlock_timedwrlock(&l, &ts), EDEADLK);
	expect("timedrdlock while writing",
	       pthread_rwlock_timedrdlock(&l, &ts), EDEADLK);
	expect("clockwrlock monotonic while writing",
	       pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &mono), EDEADLK);
	expect("clockrdlock monotonic while writing",
	       pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &mono), EDEADLK);
	expect("timedrdlock bad tv_nsec while writing",
	       pthread_rwlock_timedrdlock(&l, &bad_big), EINVAL);
	expect("clockwrlock bad clock while writing",
	       pthread_rwlock_clockwrlock(&l, CLOCK_PROCESS_CPUTIME_ID, &mono),
	       EINVAL);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("trywrlock", pthread_rwlock_trywrlock(&l), 0);
	expect("trywrlock again", pthread_rwlock_trywrlock(&l), EBUSY);
	expect("rdlock after trywrlock", pthread_rwlock_rdlock(&l), EDEADLK);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("destroy", pthread_rwlock_destroy(&l), 0);
}

static void bad_times(void)
{
	pthread_rwlock_t l;

	expect("init", pthread_rwlock_init(&l, NULL), 0);
	expect("timedrdlock tv_nsec 1e9 on a free lock",
	       pthread_rwlock_timedrdlock(&l, &bad_big), EINVAL);
	expect("timedrdlock tv_nsec -1 on a free lock",
	       pthread_rwlock_timedrdlock(&l, &bad_neg), EINVAL);
	expect("timedwrlock tv_nsec 1e9 on a free lock",
	       pthread_rwlock_timedwrlock(&l, &bad_big), EINVAL);
	expect("clockrdlock tv_nsec -1",
	       pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &bad_neg), EINVAL);
	expect("clockwrlock tv_nsec 1e9",
	       pthread_rwlock_clockwrlock(&l, CLOCK_REALTIME, &bad_big), EINVAL);
	expect("clockrdlock CLOCK_PROCESS_CPUTIME_ID",
	       pthread_rwlock_clockrdlock(&l, CLOCK_PROCESS_CPUTIME_ID, &past),
	       EINVAL);
	expect("clockwrlock CLOCK_THREAD_CPUTIME_ID",
	       pthread_rwlock_clockwrlock(&l, CLOCK_THREAD_CPUTIME_ID, &past),
	       EINVAL);
	expect("clockrdlock CLOCK_BOOTTIME",
	       pthread_rwlock_clockrdlock(&l, CLOCK_BOOTTIME, &past), EINVAL);
	expect("timedrdlock past deadline, free lock",
	       pthread_rwlock_timedrdlock(&l, &past), 0);
	expect("clockrdlock past deadline, read-held",
	       pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &past), 0);
	expect("timedwrlock past deadline, read-held by us",
	       pthread_rwlock_timedwrlock(&l, &past), ETIMEDOUT);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("timedwrlock past deadline, free lock",
	       pthread_rwlock_timedwrlock(&l, &past), 0);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("destroy", pthread_rwlock_destroy(&l), 0);
}

static void held_by_other(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct holder h;
	struct timespec ts;

	hold_start(&h, &l, 1);
	expect("tryrdlock, other writes", pthread_rwlock_tryrdlock(&l), EBUSY);
	expect("trywrlock, other writes", pthread_rwlock_trywrlock(&l), EBUSY);
	expect("timedrdlock past, other writes",
	       pthread_rwlock_timedrdlock(&l, &past), ETIMEDOUT);
	expect("timedwrlock past, other writes",
	       pthread_rwlock_timedwrlock(&l, &past), ETIMEDOUT);
	expect("timedrdlock before the epoch, other writes",
	       pthread_rwlock_timedrdlock(&l, &before_epoch), ETIMEDOUT);
	expect("clockwrlock monotonic past, other writes",
	       pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &past),
	       ETIMEDOUT);
	ts = in_ms(CLOCK_MONOTONIC, 20);
	expect("clockrdlock monotonic 20ms, other writes",
	       pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
	ts = in_ms(CLOCK_REALTIME, 20);
	expect("timedwrlock 20ms, other writes",
	       pthread_rwlock_timedwrlock(&l, &ts), ETIMEDOUT);
	expect("clockrdlock bad clock, other writes",
	       pthread_rwlock_clockrdlock(&l, -1, &past), EINVAL);
	hold_stop(&h);

	hold_start(&h, &l, 0);
	expect("tryrdlock, other reads", pthread_rwlock_tryrdlock(&l), 0);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	expect("trywrlock, other reads", pthread_rwlock_trywrlock(&l), EBUSY);
	ts = in_ms(CLOCK_REALTIME, 20);
	expect("timedwrlock 20ms, other reads",
	       pthread_rwlock_timedwrlock(&l, &ts), ETIMEDOUT);
	expect("timedrdlock past, other reads",
	       pthread_rwlock_timedrdlock(&l, &past), 0);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
	hold_stop(&h);
	expect("trywrlock after both", pthread_rwlock_trywrlock(&l), 0);
	expect("unlock", pthread_rwlock_unlock(&l), 0);
}

static void odd_ones(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_t w = PTHREAD_RWLOCK_INITIALIZER;

	/* Undefined by POSIX; glibc returns 0 and so must we. */
	expect("unlock of an unlocked lock", pthread_rwlock_unlock(&l), 0);
	expect("wrlock", pthread_rwlock_wrlock(&w), 0);
	expect("destroy of a locked lock", pthread_rwlock_destroy(&w), 0);
}

int main(void)
{
	own_write_lock();
	bad_times();
	held_by_other();
	odd_ones();
	return failures ? 1 : 0;
}
