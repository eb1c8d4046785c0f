// mutex_errors: every error code of the pthread mutex API, for each kind
// (static initialisers and attributes), with glibc 2.36's exact rules:
// recursion and its overflow, errorcheck, robust mutexes whose owner dies
// (EOWNERDEAD, consistent, ENOTRECOVERABLE), priority inheritance and
// priority ceilings, timed locks, destroy. Each check prints
// "what: result" so the output compares line by line with a native run; a
// wrong result is also reported on stderr and makes the exit status 1.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <limits.h>
#include <pthread.h>
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
	case EAGAIN: return "EAGAIN";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case EINVAL: return "EINVAL";
	case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
	case ENOTSUP: return "ENOTSUP";
	case EOWNERDEAD: return "EOWNERDEAD";
	case EPERM: return "EPERM";
	case ETIMEDOUT: return "ETIMEDOUT";
	}
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

/* print "what: got"; complain unless got == want */
static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "mutex_errors: %s: got %s", what, ename(got));
		fprintf(stderr, ", want %s\n", ename(want));
		failures++;
	}
}

static void truth(const char *what, int ok)
{
	printf("%s: %s\n", what, ok ? "yes" : "no");
	if (!ok) {
		fprintf(stderr, "mutex_errors: %s: no\n", what);
		failures++;
	}
}

#define OK(call) do { int e_ = (call); if (e_) { \
	fprintf(stderr, "mutex_errors: %s:%d: %s: %s\n", __FILE__, __LINE__, \
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

/* ---- run one call on another thread ---------------------------------------- */
enum op { LOCK, TRYLOCK, UNLOCK, LOCK_AND_EXIT, TIMEDLOCK_20MS };

struct call {
	pthread_mutex_t *m;
	enum op op;
	int times;
};

static void *do_call(void *arg)
{
	struct call *c = arg;
	int ret = 0;
	for (int i = 0; i < (c->times ? c->times : 1); i++) {
		switch (c->op) {
		case LOCK:
		case LOCK_AND_EXIT:
			ret = pthread_mutex_lock(c->m);
			break;
		case TRYLOCK:
			ret = pthread_mutex_trylock(c->m);
			break;
		case UNLOCK:
			ret = pthread_mutex_unlock(c->m);
			break;
		case TIMEDLOCK_20MS: {
			struct timespec d = after_ms(CLOCK_REALTIME, 20);
			ret = pthread_mutex_timedlock(c->m, &d);
			break;
		}
		}
	}
	return (void *)(long)ret;
}

/* The result of op on m, from a thread that exits right after it (holding
 * what it locked). */
static int elsewhere(pthread_mutex_t *m, enum op op, int times)
{
	struct call c = { m, op, times };
	pthread_t t;
	void *ret;
	OK(pthread_create(&t, NULL, do_call, &c));
	OK(pthread_join(t, &ret));
	return (int)(long)ret;
}

static void init_kind(pthread_mutex_t *m, int type, int robust, int protocol)
{
	pthread_mutexattr_t a;
	OK(pthread_mutexattr_init(&a));
	OK(pthread_mutexattr_settype(&a, type));
	OK(pthread_mutexattr_setrobust(&a, robust));
	OK(pthread_mutexattr_setprotocol(&a, protocol));
	OK(pthread_mutex_init(m, &a));
	OK(pthread_mutexattr_destroy(&a));
}

/* ---- static initialisers and plain kinds ----------------------------------- */
static void plain_kinds(void)
{
	pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	pthread_mutex_t err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	pthread_mutex_t adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

	expect("normal: lock", pthread_mutex_lock(&normal), 0);
	expect("normal: trylock held", pthread_mutex_trylock(&normal), EBUSY);
	expect("normal: other trylock", elsewhere(&normal, TRYLOCK, 0), EBUSY);
	expect("normal: other unlock", elsewhere(&normal, UNLOCK, 0), 0);
	expect("normal: trylock after other unlock",
	       pthread_mutex_trylock(&normal), 0);
	expect("normal: unlock", pthread_mutex_unlock(&normal), 0);
	expect("normal: lock again", pthread_mutex_lock(&normal), 0);
	expect("normal: destroy locked", pthread_mutex_destroy(&normal), EBUSY);
	expect("normal: unlock again", pthread_mutex_unlock(&normal), 0);
	/* glibc counts users without checks: an extra unlock leaves the
	 * count at -1, so destroy sees a user, until a lock brings it back
	 * to 0 and destroy then works on a locked mutex. */
	expect("normal: unlock unlocked", pthread_mutex_unlock(&normal), 0);
	expect("normal: destroy after extra unlock",
	       pthread_mutex_destroy(&normal), EBUSY);
	expect("normal: lock after extra unlock", pthread_mutex_lock(&normal),
	       0);
	expect("normal: destroy locked after extra unlock",
	       pthread_mutex_destroy(&normal), 0);
	OK(pthread_mutex_init(&normal, NULL));
	expect("normal: destroy", pthread_mutex_destroy(&normal), 0);
	expect("destroyed: lock", pthread_mutex_lock(&normal), EINVAL);
	expect("destroyed: trylock", pthread_mutex_trylock(&normal), EINVAL);
	struct timespec d = after_ms(CLOCK_REALTIME, 10);
	expect("destroyed: timedlock", pthread_mutex_timedlock(&normal, &d),
	       EINVAL);
	expect("destroyed: unlock", pthread_mutex_unlock(&normal), EINVAL);
	expect("destroyed: consistent", pthread_mutex_consistent(&normal),
	       EINVAL);
	expect("destroyed: destroy", pthread_mutex_destroy(&normal), 0);
	expect("destroyed: init", pthread_mutex_init(&normal, NULL), 0);
	expect("reinit: lock", pthread_mutex_lock(&normal), 0);
	expect("reinit: unlock", pthread_mutex_unlock(&normal), 0);
	expect("normal: consistent", pthread_mutex_consistent(&normal), EINVAL);
	int c;
	expect("normal: getprioceiling",
	       pthread_mutex_getprioceiling(&normal, &c), EINVAL);
	expect("normal: setprioceiling",
	       pthread_mutex_setprioceiling(&normal, 10, &c), EINVAL);
	expect("normal: destroy unlocked", pthread_mutex_destroy(&normal), 0);

	expect("recursive: lock", pthread_mutex_lock(&rec), 0);
	expect("recursive: lock 2", pthread_mutex_lock(&rec), 0);
	expect("recursive: trylock 3", pthread_mutex_trylock(&rec), 0);
	d = after_ms(CLOCK_REALTIME, 10);
	expect("recursive: timedlock 4", pthread_mutex_timedlock(&rec, &d), 0);
	d.tv_nsec = -1;
	expect("recursive: timedlock 5, bad timeout",
	       pthread_mutex_timedlock(&rec, &d), 0);
	expect("recursive: other trylock", elsewhere(&rec, TRYLOCK, 0), EBUSY);
	expect("recursive: other unlock", elsewhere(&rec, UNLOCK, 0), EPERM);
	expect("recursive: other timedlock",
	       elsewhere(&rec, TIMEDLOCK_20MS, 0), ETIMEDOUT);
	expect("recursive: destroy held", pthread_mutex_destroy(&rec), EBUSY);
	for (int i = 5; i > 0; i--)
		expect("recursive: unlock", pthread_mutex_unlock(&rec), 0);
	expect("recursive: unlock unlocked", pthread_mutex_unlock(&rec), EPERM);
	/* Overflow: glibc refuses the 2^32nd lock. */
	expect("recursive: lock for overflow", pthread_mutex_lock(&rec), 0);
	rec.__data.__count = UINT_MAX;
	expect("recursive: lock overflow", pthread_mutex_lock(&rec), EAGAIN);
	expect("recursive: trylock overflow", pthread_mutex_trylock(&rec),
	       EAGAIN);
	d = after_ms(CLOCK_REALTIME, 10);
	expect("recursive: timedlock overflow",
	       pthread_mutex_timedlock(&rec, &d), EAGAIN);
	rec.__data.__count = 1;
	expect("recursive: unlock after overflow", pthread_mutex_unlock(&rec),
	       0);
	expect("recursive: other lock", elsewhere(&rec, LOCK, 0), 0);
	expect("recursive: other exited holding: trylock",
	       pthread_mutex_trylock(&rec), EBUSY);

	expect("errorcheck: lock", pthread_mutex_lock(&err), 0);
	expect("errorcheck: relock", pthread_mutex_lock(&err), EDEADLK);
	expect("errorcheck: trylock held", pthread_mutex_trylock(&err), EBUSY);
	d = after_ms(CLOCK_REALTIME, 10);
	expect("errorcheck: timedlock held",
	       pthread_mutex_timedlock(&err, &d), EDEADLK);
	expect("errorcheck: other unlock", elsewhere(&err, UNLOCK, 0), EPERM);
	expect("errorcheck: other trylock", elsewhere(&err, TRYLOCK, 0), EBUSY);
	expect("errorcheck: unlock", pthread_mutex_unlock(&err), 0);
	expect("errorcheck: unlock unlocked", pthread_mutex_unlock(&err),
	       EPERM);
	expect("errorcheck: destroy", pthread_mutex_destroy(&err), 0);

	expect("adaptive: lock", pthread_mutex_lock(&adaptive), 0);
	expect("adaptive: trylock held", pthread_mutex_trylock(&adaptive),
	       EBUSY);
	expect("adaptive: other unlock", elsewhere(&adaptive, UNLOCK, 0), 0);
	expect("adaptive: lock after other unlock",
	       pthread_mutex_lock(&adaptive), 0);
	expect("adaptive: unlock", pthread_mutex_unlock(&adaptive), 0);
	expect("adaptive: destroy", pthread_mutex_destroy(&adaptive), 0);
}

/* ---- timed locks ------------------------------------------------------------ */
static void timed(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec bad = { 0, 1000000000 }, neg = { -1, 0 };
	struct timespec d;

	/* A free mutex is taken without looking at the timeout. */
	expect("timedlock free, bad nsec", pthread_mutex_timedlock(&m, &bad),
	       0);
	expect("timedlock held, bad nsec", pthread_mutex_timedlock(&m, &bad),
	       EINVAL);
	bad.tv_nsec = -1;
	expect("timedlock held, negative nsec",
	       pthread_mutex_timedlock(&m, &bad), EINVAL);
	expect("timedlock held, negative sec",
	       pthread_mutex_timedlock(&m, &neg), ETIMEDOUT);
	d = after_ms(CLOCK_REALTIME, -5);
	expect("timedlock held, past", pthread_mutex_timedlock(&m, &d),
	       ETIMEDOUT);
	d = after_ms(CLOCK_REALTIME, 30);
	expect("timedlock held, 30 ms", pthread_mutex_timedlock(&m, &d),
	       ETIMEDOUT);
	truth("timedlock: deadline reached", reached(CLOCK_REALTIME, d));
	d = after_ms(CLOCK_MONOTONIC, 30);
	expect("clocklock monotonic held, 30 ms",
	       pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &d), ETIMEDOUT);
	truth("clocklock: deadline reached", reached(CLOCK_MONOTONIC, d));
	d = after_ms(CLOCK_REALTIME, 10);
	expect("clocklock bad clock",
	       pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &d),
	       EINVAL);
	expect("clocklock bad clock, bad nsec",
	       pthread_mutex_clocklock(&m, CLOCK_THREAD_CPUTIME_ID, &bad),
	       EINVAL);
	expect("timedlock other, held", elsewhere(&m, TIMEDLOCK_20MS, 0),
	       ETIMEDOUT);
	OK(pthread_mutex_unlock(&m));
	expect("timedlock other, free", elsewhere(&m, TIMEDLOCK_20MS, 0), 0);
	expect("timedlock after other exited holding",
	       pthread_mutex_trylock(&m), EBUSY);
	OK(pthread_mutex_init(&m, NULL));
	d = after_ms(CLOCK_MONOTONIC, 10);
	expect("clocklock monotonic free",
	       pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &d), 0);
	OK(pthread_mutex_unlock(&m));
}

/* ---- robust ----------------------------------------------------------------- */
struct blocked {
	pthread_mutex_t *m;
	int ret;
};

static void *lock_blocked(void *arg)
{
	struct blocked *b = arg;
	b->ret = pthread_mutex_lock(b->m);
	if (b->ret == EOWNERDEAD) {
		pthread_mutex_consistent(b->m);
		pthread_mutex_unlock(b->m);
	}
	return NULL;
}

static void *lock_sleep_exit(void *arg)
{
	pthread_mutex_t *m = arg;
	struct timespec ts = { 0, 50000000 };
	pthread_mutex_lock(m);
	nanosleep(&ts, NULL);
	return NULL;
}

static void robust(void)
{
	pthread_mutex_t m, m2;
	struct timespec d;

	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	expect("robust: other locks and exits", elsewhere(&m, LOCK_AND_EXIT, 0),
	       0);
	expect("robust: lock after owner died", pthread_mutex_lock(&m),
	       EOWNERDEAD);
	expect("robust: unlock inconsistent", pthread_mutex_unlock(&m), 0);
	expect("robust: lock unrecoverable", pthread_mutex_lock(&m),
	       ENOTRECOVERABLE);
	d = after_ms(CLOCK_REALTIME, 10);
	expect("robust: timedlock unrecoverable",
	       pthread_mutex_timedlock(&m, &d), ENOTRECOVERABLE);
	expect("robust: other lock unrecoverable", elsewhere(&m, LOCK, 0),
	       ENOTRECOVERABLE);
	expect("robust: consistent unrecoverable",
	       pthread_mutex_consistent(&m), EINVAL);
	/* Last: glibc's trylock leaves a not recoverable mutex locked. */
	expect("robust: trylock unrecoverable", pthread_mutex_trylock(&m),
	       ENOTRECOVERABLE);
	expect("robust: destroy unrecoverable", pthread_mutex_destroy(&m), 0);

	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	expect("robust: consistent while consistent",
	       pthread_mutex_consistent(&m), EINVAL);
	expect("robust: other locks and exits", elsewhere(&m, LOCK_AND_EXIT, 0),
	       0);
	expect("robust: trylock after owner died", pthread_mutex_trylock(&m),
	       EOWNERDEAD);
	expect("robust: other unlock inconsistent", elsewhere(&m, UNLOCK, 0),
	       EPERM);
	expect("robust: consistent", pthread_mutex_consistent(&m), 0);
	expect("robust: consistent again", pthread_mutex_consistent(&m),
	       EINVAL);
	expect("robust: unlock", pthread_mutex_unlock(&m), 0);
	expect("robust: unlock unlocked", pthread_mutex_unlock(&m), EPERM);
	expect("robust: lock", pthread_mutex_lock(&m), 0);
	expect("robust: trylock held", pthread_mutex_trylock(&m), EBUSY);
	d = after_ms(CLOCK_REALTIME, 20);
	expect("robust: timedlock held", pthread_mutex_timedlock(&m, &d),
	       ETIMEDOUT);
	expect("robust: other unlock", elsewhere(&m, UNLOCK, 0), EPERM);
	expect("robust: destroy held", pthread_mutex_destroy(&m), 0);

	/* A waiter blocked when the owner dies inherits it. */
	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	pthread_t owner, waiter;
	struct blocked b = { &m, -1 };
	OK(pthread_create(&owner, NULL, lock_sleep_exit, &m));
	struct timespec ts = { 0, 10000000 };
	nanosleep(&ts, NULL);
	OK(pthread_create(&waiter, NULL, lock_blocked, &b));
	OK(pthread_join(owner, NULL));
	OK(pthread_join(waiter, NULL));
	expect("robust: blocked waiter when owner died", b.ret, EOWNERDEAD);
	expect("robust: lock after waiter made it consistent",
	       pthread_mutex_lock(&m), 0);
	expect("robust: unlock", pthread_mutex_unlock(&m), 0);
	expect("robust: destroy", pthread_mutex_destroy(&m), 0);

	init_kind(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	expect("robust errorcheck: lock", pthread_mutex_lock(&m), 0);
	expect("robust errorcheck: relock", pthread_mutex_lock(&m), EDEADLK);
	expect("robust errorcheck: trylock held", pthread_mutex_trylock(&m),
	       EDEADLK);
	expect("robust errorcheck: other trylock", elsewhere(&m, TRYLOCK, 0),
	       EBUSY);
	expect("robust errorcheck: unlock", pthread_mutex_unlock(&m), 0);
	expect("robust errorcheck: unlock unlocked", pthread_mutex_unlock(&m),
	       EPERM);
	expect("robust errorcheck: destroy", pthread_mutex_destroy(&m), 0);

	init_kind(&m, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	expect("robust recursive: other locks 3 times and exits",
	       elsewhere(&m, LOCK_AND_EXIT, 3), 0);
	expect("robust recursive: lock after owner died",
	       pthread_mutex_lock(&m), EOWNERDEAD);
	expect("robust recursive: relock inconsistent",
	       pthread_mutex_lock(&m), 0);
	expect("robust recursive: unlock inconsistent, still held",
	       pthread_mutex_unlock(&m), ENOTRECOVERABLE);
	expect("robust recursive: other trylock", elsewhere(&m, TRYLOCK, 0),
	       EBUSY);
	expect("robust recursive: unlock inconsistent",
	       pthread_mutex_unlock(&m), 0);
	expect("robust recursive: lock unrecoverable", pthread_mutex_lock(&m),
	       ENOTRECOVERABLE);
	expect("robust recursive: destroy", pthread_mutex_destroy(&m), 0);

	/* Several robust mutexes held at exit, released in any order. */
	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	init_kind(&m2, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PRIO_NONE);
	expect("robust pair: lock first", pthread_mutex_lock(&m), 0);
	expect("robust pair: lock second", pthread_mutex_lock(&m2), 0);
	expect("robust pair: unlock first", pthread_mutex_unlock(&m), 0);
	expect("robust pair: unlock second", pthread_mutex_unlock(&m2), 0);
	expect("robust pair: other locks first and exits",
	       elsewhere(&m, LOCK_AND_EXIT, 0), 0);
	expect("robust pair: other locks second and exits",
	       elsewhere(&m2, LOCK_AND_EXIT, 0), 0);
	expect("robust pair: second", pthread_mutex_trylock(&m2), EOWNERDEAD);
	expect("robust pair: first", pthread_mutex_trylock(&m), EOWNERDEAD);
	expect("robust pair: consistent first", pthread_mutex_consistent(&m),
	       0);
	expect("robust pair: consistent second", pthread_mutex_consistent(&m2),
	       0);
	expect("robust pair: unlock first", pthread_mutex_unlock(&m), 0);
	expect("robust pair: unlock second", pthread_mutex_unlock(&m2), 0);
	expect("robust pair: destroy first", pthread_mutex_destroy(&m), 0);
	expect("robust pair: destroy second", pthread_mutex_destroy(&m2), 0);
}

/* ---- priority inheritance and protection ------------------------------------ */
static void priorities(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	struct timespec d;
	int c = -1;

	init_kind(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_INHERIT);
	/* glibc 2.36 on Linux 5.14+ (FUTEX_LOCK_PI2) takes either clock. */
	d = after_ms(CLOCK_MONOTONIC, 10);
	expect("inherit: clocklock monotonic",
	       pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &d), 0);
	d = after_ms(CLOCK_REALTIME, 10);
	expect("inherit errorcheck: clocklock held",
	       pthread_mutex_clocklock(&m, CLOCK_REALTIME, &d), EDEADLK);
	expect("inherit errorcheck: trylock held", pthread_mutex_trylock(&m),
	       EDEADLK);
	expect("inherit errorcheck: other unlock", elsewhere(&m, UNLOCK, 0),
	       EPERM);
	expect("inherit: getprioceiling", pthread_mutex_getprioceiling(&m, &c),
	       EINVAL);
	expect("inherit: unlock", pthread_mutex_unlock(&m), 0);
	expect("inherit: destroy", pthread_mutex_destroy(&m), 0);

	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PRIO_INHERIT);
	expect("inherit normal: lock", pthread_mutex_lock(&m), 0);
	expect("inherit normal: trylock held", pthread_mutex_trylock(&m),
	       EBUSY);
	expect("inherit normal: other unlock", elsewhere(&m, UNLOCK, 0), EPERM);
	expect("inherit normal: unlock", pthread_mutex_unlock(&m), 0);
	expect("inherit normal: unlock unlocked", pthread_mutex_unlock(&m),
	       EPERM);
	expect("inherit normal: destroy", pthread_mutex_destroy(&m), 0);

	OK(pthread_mutexattr_init(&a));
	OK(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT));
	OK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
	expect("protect: robust init", pthread_mutex_init(&m, &a), ENOTSUP);
	OK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_STALLED));
	expect("protect: init", pthread_mutex_init(&m, &a), 0);
	expect("protect: getprioceiling", pthread_mutex_getprioceiling(&m, &c),
	       0);
	truth("protect: default ceiling is the lowest FIFO priority",
	      c == sched_get_priority_min(SCHED_FIFO));
	expect("protect: setprioceiling 50",
	       pthread_mutex_setprioceiling(&m, 50, &c), 0);
	truth("protect: old ceiling", c == sched_get_priority_min(SCHED_FIFO));
	expect("protect: setprioceiling too high",
	       pthread_mutex_setprioceiling(&m,
					    sched_get_priority_max(SCHED_FIFO) +
						    1,
					    &c),
	       EINVAL);
	expect("protect: setprioceiling 0",
	       pthread_mutex_setprioceiling(&m, 0, &c), EINVAL);
	expect("protect: setprioceiling 60",
	       pthread_mutex_setprioceiling(&m, 60, &c), 0);
	expect("protect: getprioceiling", pthread_mutex_getprioceiling(&m, &c),
	       0);
	printf("protect: ceiling %d\n", c);
	expect("protect: destroy", pthread_mutex_destroy(&m), 0);
	OK(pthread_mutexattr_setprioceiling(&a, 10));
	OK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	expect("protect errorcheck: init", pthread_mutex_init(&m, &a), 0);
	expect("protect errorcheck: getprioceiling",
	       pthread_mutex_getprioceiling(&m, &c), 0);
	printf("protect errorcheck: ceiling %d\n", c);
	expect("protect errorcheck: destroy", pthread_mutex_destroy(&m), 0);
	OK(pthread_mutexattr_destroy(&a));
}

int main(void)
{
	plain_kinds();
	timed();
	robust();
	priorities();
	if (failures) {
		fprintf(stderr, "mutex_errors: %d failures\n", failures);
		return 1;
	}
	return 0;
}
