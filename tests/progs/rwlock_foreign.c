// rwlock_foreign: a thread the program did not create shares rwlocks with
// the program's own. A SIGEV_THREAD timer's callback runs on a thread glibc
// starts itself (goshim does not see it created): it waits for a read lock
// a program thread holds for writing, and it holds a write lock that a
// program thread waits for, both ways round 10 times, then times out on a
// held lock. Then a periodic timer's callbacks and program threads add to
// one counter under the write lock while others read it; the total is exact.
// goshim-test: shim-max-threads=GOMAXPROCS+8
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_rwlock_t lk = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int stage, result;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "rwlock_foreign: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void arm(timer_t t, long first_ms, long every_ms)
{
	struct itimerspec its = {
		.it_value = { first_ms / 1000, (first_ms % 1000) * 1000000 },
		.it_interval = { every_ms / 1000, (every_ms % 1000) * 1000000 },
	};
	if (timer_settime(t, 0, &its, NULL)) {
		perror("timer_settime");
		exit(1);
	}
}

static timer_t make_timer(void (*fn)(union sigval))
{
	struct sigevent sev;
	timer_t t;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = fn;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		perror("timer_create");
		exit(1);
	}
	return t;
}

/* stage 1: waiting for a read lock (main writes); 2: got it; 3: holds the
 * write lock, until main says 4; 5: about to unlock. */
static void exchange(union sigval sv)
{
	(void)sv;
	atomic_store(&stage, 1);
	check(pthread_rwlock_rdlock(&lk), "callback rdlock");
	atomic_store(&stage, 2);
	check(pthread_rwlock_unlock(&lk), "callback unlock");
	check(pthread_rwlock_wrlock(&lk), "callback wrlock");
	atomic_store(&stage, 3);
	while (atomic_load(&stage) != 4)
		nap_ms(1);
	atomic_store(&stage, 5);
	check(pthread_rwlock_unlock(&lk), "callback unlock");
}

static void timeout_cb(union sigval sv)
{
	(void)sv;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	atomic_store(&result, pthread_rwlock_timedwrlock(&lk, &ts));
	atomic_store(&stage, 6);
}

#define EXCHANGES 10

static void exchanges(void)
{
	timer_t t = make_timer(exchange);
	int held_back = 0, waited = 0;

	for (int i = 0; i < EXCHANGES; i++) {
		atomic_store(&stage, 0);
		check(pthread_rwlock_wrlock(&lk), "wrlock");
		arm(t, 1, 0);
		while (atomic_load(&stage) == 0)
			nap_ms(1);
		nap_ms(5);
		held_back += atomic_load(&stage) == 1;
		check(pthread_rwlock_unlock(&lk), "unlock");
		while (atomic_load(&stage) != 3)
			nap_ms(1);
		/* The callback writes: we wait for it, parked. */
		check(pthread_rwlock_tryrdlock(&lk) == EBUSY ? 0 : EINVAL,
		      "tryrdlock while the callback writes");
		atomic_store(&stage, 4);
		check(pthread_rwlock_rdlock(&lk), "rdlock");
		waited += atomic_load(&stage) == 5;
		check(pthread_rwlock_unlock(&lk), "unlock");
	}
	printf("exchanges with a timer thread: %d, held back by our write "
	       "lock: %d, we waited for its write lock: %d\n",
	       EXCHANGES, held_back, waited);
	if (held_back != EXCHANGES || waited != EXCHANGES)
		exit(1);
	timer_delete(t);

	t = make_timer(timeout_cb);
	check(pthread_rwlock_rdlock(&lk), "rdlock");
	atomic_store(&stage, 0);
	arm(t, 1, 0);
	while (atomic_load(&stage) != 6)
		nap_ms(1);
	check(pthread_rwlock_unlock(&lk), "unlock");
	timer_delete(t);
	printf("timed write lock on the timer thread: %s\n",
	       atomic_load(&result) == ETIMEDOUT ? "ETIMEDOUT" : "other");
	if (atomic_load(&result) != ETIMEDOUT)
		exit(1);
}

/* ---- a periodic timer and program threads on one counter ------------------ */
#define WORKERS 4
#define WORKER_ITERS 20000

static long counter, mirror; /* written together under the write lock */
static atomic_long ticks, torn;
static atomic_int stop;

static void tick(union sigval sv)
{
	(void)sv;
	if (atomic_load(&stop))
		return;
	check(pthread_rwlock_wrlock(&lk), "tick wrlock");
	for (int i = 0; i < 100; i++)
		counter++;
	mirror = counter;
	atomic_fetch_add(&ticks, 1);
	check(pthread_rwlock_unlock(&lk), "tick unlock");
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < WORKER_ITERS; i++) {
		if (id % 2) {
			check(pthread_rwlock_rdlock(&lk), "worker rdlock");
			if (mirror != counter)
				torn++;
		} else {
			check(pthread_rwlock_wrlock(&lk), "worker wrlock");
			counter++;
			mirror = counter;
		}
		check(pthread_rwlock_unlock(&lk), "worker unlock");
		if (i % 1000 == 0)
			nap_ms(1);
	}
	return NULL;
}

static void shared_counter(void)
{
	timer_t t = make_timer(tick);
	pthread_t w[WORKERS];

	arm(t, 1, 1);
	for (long i = 0; i < WORKERS; i++)
		check(pthread_create(&w[i], NULL, worker, (void *)i), "create");
	for (int i = 0; i < WORKERS; i++)
		check(pthread_join(w[i], NULL), "join");
	while (atomic_load(&ticks) < 5)
		nap_ms(1);
	check(pthread_rwlock_wrlock(&lk), "wrlock");
	atomic_store(&stop, 1);
	timer_delete(t);
	long want = (long)WORKERS / 2 * WORKER_ITERS + 100 * atomic_load(&ticks);
	int exact = counter == want && torn == 0;
	check(pthread_rwlock_unlock(&lk), "unlock");
	printf("counter shared with timer callbacks: %s\n",
	       exact ? "exact" : "WRONG");
	if (!exact)
		exit(1);
}

int main(void)
{
	exchanges();
	shared_counter();
	return 0;
}
