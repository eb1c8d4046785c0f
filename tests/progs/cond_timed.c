// cond_timed: condition variable timeouts and error codes. Timed waits
// time out no earlier than their deadline, on the clock the condattr or the
// call names, and always return with the mutex held again (a recursive
// mutex with its count intact); bad timeouts and clocks are EINVAL, a
// mutex the caller does not own is EPERM (error-checking, recursive), a
// robust mutex whose owner died comes back as EOWNERDEAD. A waiter that
// timed out must not take a later signal with it: the next waiter gets it.
// Each check prints "what: result" so the output compares line by line with
// a native run.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int failures;

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case EOWNERDEAD: return "EOWNERDEAD";
	case EPERM: return "EPERM";
	case ETIMEDOUT: return "ETIMEDOUT";
	}
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "cond_timed: %s: got %s", what, ename(got));
		fprintf(stderr, ", want %s\n", ename(want));
		failures++;
	}
}

static void truth(const char *what, int ok)
{
	printf("%s: %s\n", what, ok ? "yes" : "no");
	if (!ok) {
		fprintf(stderr, "cond_timed: %s: no\n", what);
		failures++;
	}
}

#define OK(call) do { int e_ = (call); if (e_) { \
	fprintf(stderr, "cond_timed: %s:%d: %s: %s\n", __FILE__, __LINE__, \
		#call, ename(e_)); \
	exit(1); } } while (0)

static struct timespec after_ms(clockid_t clk, long ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	} else if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += 1000000000;
	}
	return ts;
}

static int reached(clockid_t clk, struct timespec d)
{
	struct timespec now;
	clock_gettime(clk, &now);
	return now.tv_sec > d.tv_sec ||
	       (now.tv_sec == d.tv_sec && now.tv_nsec >= d.tv_nsec);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t errchk = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* ---- timeouts ------------------------------------------------------------------ */
static void timeouts(void)
{
	pthread_condattr_t ca;
	pthread_cond_t mono;
	struct timespec d, bad = { 0, 1000000000 }, neg = { -1, 0 };
	clockid_t clk;

	OK(pthread_mutex_lock(&errchk));
	d = after_ms(CLOCK_REALTIME, 30);
	expect("timedwait 30 ms", pthread_cond_timedwait(&cv, &errchk, &d),
	       ETIMEDOUT);
	truth("timedwait: realtime deadline reached",
	      reached(CLOCK_REALTIME, d));
	d = after_ms(CLOCK_MONOTONIC, 30);
	expect("clockwait monotonic 30 ms",
	       pthread_cond_clockwait(&cv, &errchk, CLOCK_MONOTONIC, &d),
	       ETIMEDOUT);
	truth("clockwait: monotonic deadline reached",
	      reached(CLOCK_MONOTONIC, d));
	d = after_ms(CLOCK_REALTIME, 20);
	expect("clockwait realtime 20 ms",
	       pthread_cond_clockwait(&cv, &errchk, CLOCK_REALTIME, &d),
	       ETIMEDOUT);
	truth("clockwait: realtime deadline reached",
	      reached(CLOCK_REALTIME, d));
	d = after_ms(CLOCK_REALTIME, -10);
	expect("timedwait in the past", pthread_cond_timedwait(&cv, &errchk, &d),
	       ETIMEDOUT);
	expect("timedwait negative seconds",
	       pthread_cond_timedwait(&cv, &errchk, &neg), ETIMEDOUT);
	expect("timedwait bad nsec", pthread_cond_timedwait(&cv, &errchk, &bad),
	       EINVAL);
	bad.tv_nsec = -1;
	expect("timedwait negative nsec",
	       pthread_cond_timedwait(&cv, &errchk, &bad), EINVAL);
	expect("clockwait bad nsec",
	       pthread_cond_clockwait(&cv, &errchk, CLOCK_MONOTONIC, &bad),
	       EINVAL);
	d = after_ms(CLOCK_REALTIME, 10);
	expect("clockwait bad clock",
	       pthread_cond_clockwait(&cv, &errchk, CLOCK_PROCESS_CPUTIME_ID,
				      &d),
	       EINVAL);
	expect("still held after the timeouts", pthread_mutex_unlock(&errchk),
	       0);

	OK(pthread_condattr_init(&ca));
	OK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC));
	OK(pthread_cond_init(&mono, &ca));
	OK(pthread_condattr_getclock(&ca, &clk));
	truth("condattr clock is monotonic", clk == CLOCK_MONOTONIC);
	OK(pthread_condattr_destroy(&ca));
	OK(pthread_mutex_lock(&plain));
	d = after_ms(CLOCK_MONOTONIC, 30);
	expect("monotonic cond: timedwait 30 ms",
	       pthread_cond_timedwait(&mono, &plain, &d), ETIMEDOUT);
	truth("monotonic cond: monotonic deadline reached",
	      reached(CLOCK_MONOTONIC, d));
	d = after_ms(CLOCK_REALTIME, 20);
	expect("monotonic cond: clockwait realtime 20 ms",
	       pthread_cond_clockwait(&mono, &plain, CLOCK_REALTIME, &d),
	       ETIMEDOUT);
	truth("monotonic cond: realtime deadline reached",
	      reached(CLOCK_REALTIME, d));
	OK(pthread_mutex_unlock(&plain));
	expect("monotonic cond: destroy", pthread_cond_destroy(&mono), 0);
}

/* ---- ownership ----------------------------------------------------------------- */
static void *hold_errchk(void *arg)
{
	atomic_int *step = arg;
	pthread_mutex_lock(&errchk);
	atomic_store(step, 1);
	while (atomic_load(step) == 1)
		nap_ms(1);
	pthread_mutex_unlock(&errchk);
	return NULL;
}

static void ownership(void)
{
	struct timespec d = after_ms(CLOCK_REALTIME, 10);
	pthread_t t;
	atomic_int step = 0;

	expect("errorcheck not held: wait", pthread_cond_wait(&cv, &errchk),
	       EPERM);
	expect("errorcheck not held: timedwait",
	       pthread_cond_timedwait(&cv, &errchk, &d), EPERM);
	OK(pthread_create(&t, NULL, hold_errchk, &step));
	while (atomic_load(&step) == 0)
		nap_ms(1);
	expect("errorcheck held by another: wait",
	       pthread_cond_wait(&cv, &errchk), EPERM);
	atomic_store(&step, 2);
	OK(pthread_join(t, NULL));

	expect("recursive not held: wait", pthread_cond_wait(&cv, &rec), EPERM);
	OK(pthread_mutex_lock(&rec));
	OK(pthread_mutex_lock(&rec));
	d = after_ms(CLOCK_REALTIME, 20);
	expect("recursive held twice: timedwait",
	       pthread_cond_timedwait(&cv, &rec, &d), ETIMEDOUT);
	expect("recursive: unlock 1", pthread_mutex_unlock(&rec), 0);
	expect("recursive: unlock 2", pthread_mutex_unlock(&rec), 0);
	expect("recursive: unlock 3", pthread_mutex_unlock(&rec), EPERM);
	OK(pthread_mutex_lock(&rec));
	d = after_ms(CLOCK_REALTIME, 20);
	expect("recursive held once: timedwait",
	       pthread_cond_timedwait(&cv, &rec, &d), ETIMEDOUT);
	expect("recursive: unlock after wait", pthread_mutex_unlock(&rec), 0);
	expect("recursive: unlock again", pthread_mutex_unlock(&rec), EPERM);

	expect("signal without waiters", pthread_cond_signal(&cv), 0);
	expect("broadcast without waiters", pthread_cond_broadcast(&cv), 0);
}

/* ---- a waiter holds the mutex's user count ------------------------------------- */
static pthread_mutex_t counted = PTHREAD_MUTEX_INITIALIZER;
static int wake_up;

static void *wait_counted(void *arg)
{
	atomic_int *step = arg;
	pthread_mutex_lock(&counted);
	atomic_store(step, 1);
	while (!wake_up)
		pthread_cond_wait(&cv, &counted);
	pthread_mutex_unlock(&counted);
	return NULL;
}

static void destroy_busy(void)
{
	pthread_t t;
	atomic_int step = 0;

	OK(pthread_create(&t, NULL, wait_counted, &step));
	while (atomic_load(&step) == 0)
		nap_ms(1);
	OK(pthread_mutex_lock(&counted));
	OK(pthread_mutex_unlock(&counted));
	expect("mutex destroy while a thread waits with it",
	       pthread_mutex_destroy(&counted), EBUSY);
	OK(pthread_mutex_lock(&counted));
	wake_up = 1;
	OK(pthread_cond_signal(&cv));
	OK(pthread_mutex_unlock(&counted));
	OK(pthread_join(t, NULL));
	expect("mutex destroy after the wait", pthread_mutex_destroy(&counted),
	       0);
}

/* ---- robust: the owner dies while a waiter is asleep ---------------------------- */
static pthread_mutex_t robust;
static int robust_ready;

static void *wait_robust(void *arg)
{
	int *ret = arg;
	pthread_mutex_lock(&robust);
	robust_ready = 1;
	*ret = pthread_cond_wait(&cv, &robust);
	if (*ret == EOWNERDEAD)
		pthread_mutex_consistent(&robust);
	pthread_mutex_unlock(&robust);
	return NULL;
}

static void *signal_and_die(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust);
	pthread_cond_signal(&cv);
	return NULL; /* exits holding it */
}

static void robust_wait(void)
{
	pthread_mutexattr_t a;
	pthread_t w, k;
	int ret = -1;

	OK(pthread_mutexattr_init(&a));
	OK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
	OK(pthread_mutex_init(&robust, &a));
	OK(pthread_mutexattr_destroy(&a));
	OK(pthread_create(&w, NULL, wait_robust, &ret));
	for (;;) {
		OK(pthread_mutex_lock(&robust));
		int ready = robust_ready;
		OK(pthread_mutex_unlock(&robust));
		if (ready)
			break;
		nap_ms(1);
	}
	OK(pthread_create(&k, NULL, signal_and_die, NULL));
	OK(pthread_join(k, NULL));
	OK(pthread_join(w, NULL));
	expect("robust: wait when the signaller died holding the mutex", ret,
	       EOWNERDEAD);
	OK(pthread_mutex_destroy(&robust));
}

/* ---- a timed-out waiter leaves no claim on later signals ------------------------ */
#define ROUNDS 100

static pthread_mutex_t lm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lcv = PTHREAD_COND_INITIALIZER;
static int waiting, signalled;

static void *short_waiter(void *arg)
{
	struct timespec d = after_ms(CLOCK_REALTIME, 5);
	(void)arg;
	pthread_mutex_lock(&lm);
	waiting++;
	while (pthread_cond_timedwait(&lcv, &lm, &d) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&lm);
	return NULL;
}

static void *long_waiter(void *arg)
{
	struct timespec d = after_ms(CLOCK_REALTIME, 5000);
	int *ret = arg;
	pthread_mutex_lock(&lm);
	waiting++;
	*ret = 0;
	while (!signalled && *ret == 0)
		*ret = pthread_cond_timedwait(&lcv, &lm, &d);
	pthread_mutex_unlock(&lm);
	return NULL;
}

static void wait_for_waiters(int n)
{
	for (;;) {
		pthread_mutex_lock(&lm);
		int w = waiting;
		pthread_mutex_unlock(&lm);
		if (w >= n)
			return;
		nap_ms(1);
	}
}

static void no_lost_signal(void)
{
	int lost = 0;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t s, l;
		int ret = -1;
		waiting = signalled = 0;
		OK(pthread_create(&s, NULL, short_waiter, NULL));
		wait_for_waiters(1);
		OK(pthread_create(&l, NULL, long_waiter, &ret));
		wait_for_waiters(2);
		OK(pthread_join(s, NULL)); /* its deadline has passed */
		pthread_mutex_lock(&lm);
		signalled = 1;
		pthread_cond_signal(&lcv);
		pthread_mutex_unlock(&lm);
		OK(pthread_join(l, NULL));
		lost += ret != 0;
	}
	printf("signals after a timeout: %d rounds, %d lost\n", ROUNDS, lost);
	if (lost)
		failures++;
}

int main(void)
{
	timeouts();
	ownership();
	destroy_busy();
	robust_wait();
	no_lost_signal();
	expect("destroy", pthread_cond_destroy(&cv), 0);
	if (failures) {
		fprintf(stderr, "cond_timed: %d failures\n", failures);
		return 1;
	}
	return 0;
}
