// rwlock_timed: timed read and write locks that time out, and timeouts that
// must not lose anyone else's wakeup.
//  - each timed form, on each clock, against a lock held the other way,
//    returns ETIMEDOUT no earlier than its deadline;
//  - 40 timed waiters give up while a writer holds the lock; the 10 plain
//    waiters queued with them all get in once it lets go;
//  - with writers preferred, a reader queued behind a waiting writer gets
//    in beside the current reader as soon as that writer gives up;
//  - 64 threads mix short timed read and write locks; exclusion holds and a
//    plain write lock by every thread at the end finishes.
// The thread bound catches an M per waiter (there are 64); the one M
// sysmon may add for a P held in a short system call on a loaded machine
// is inside it.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static void check(const char *what, int ok)
{
	printf("%s: %s\n", what, ok ? "yes" : "no");
	if (!ok) {
		fprintf(stderr, "rwlock_timed: %s: no\n", what);
		failures++;
	}
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

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

static int reached(clockid_t clk, struct timespec d)
{
	struct timespec now;
	clock_gettime(clk, &now);
	return now.tv_sec > d.tv_sec ||
	       (now.tv_sec == d.tv_sec && now.tv_nsec >= d.tv_nsec);
}

/* ---- a thread holding the lock until released --------------------------- */
struct holder {
	pthread_t t;
	pthread_rwlock_t *l;
	int write;
	atomic_int held, release;
};

static void *hold(void *arg)
{
	struct holder *h = arg;
	if (h->write)
		pthread_rwlock_wrlock(h->l);
	else
		pthread_rwlock_rdlock(h->l);
	atomic_store(&h->held, 1);
	while (!atomic_load(&h->release))
		nap_ms(1);
	pthread_rwlock_unlock(h->l);
	return NULL;
}

static void hold_start(struct holder *h, pthread_rwlock_t *l, int write)
{
	memset(h, 0, sizeof *h);
	h->l = l;
	h->write = write;
	pthread_create(&h->t, NULL, hold, h);
	while (!atomic_load(&h->held))
		nap_ms(1);
}

static void hold_stop(struct holder *h)
{
	atomic_store(&h->release, 1);
	pthread_join(h->t, NULL);
}

/* ---- 1: not early --------------------------------------------------------- */
static int timed(pthread_rwlock_t *l, int write, int form, clockid_t clk,
		 const struct timespec *ts)
{
	if (form == 0)
		return write ? pthread_rwlock_timedwrlock(l, ts)
			     : pthread_rwlock_timedrdlock(l, ts);
	return write ? pthread_rwlock_clockwrlock(l, clk, ts)
		     : pthread_rwlock_clockrdlock(l, clk, ts);
}

static void not_early(void)
{
	static const struct { const char *name; int write, form, held_write;
			      clockid_t clk; } c[] = {
		{ "timedrdlock, writer holds", 0, 0, 1, CLOCK_REALTIME },
		{ "timedwrlock, writer holds", 1, 0, 1, CLOCK_REALTIME },
		{ "timedwrlock, reader holds", 1, 0, 0, CLOCK_REALTIME },
		{ "clockrdlock realtime, writer holds", 0, 1, 1, CLOCK_REALTIME },
		{ "clockrdlock monotonic, writer holds", 0, 1, 1, CLOCK_MONOTONIC },
		{ "clockwrlock realtime, reader holds", 1, 1, 0, CLOCK_REALTIME },
		{ "clockwrlock monotonic, writer holds", 1, 1, 1, CLOCK_MONOTONIC },
		{ "clockwrlock monotonic, reader holds", 1, 1, 0, CLOCK_MONOTONIC },
	};
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct holder h;
	char what[160];

	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		hold_start(&h, &l, c[i].held_write);
		clockid_t clk = c[i].form == 0 ? CLOCK_REALTIME : c[i].clk;
		struct timespec d = in_us(clk, 50000);
		int err = timed(&l, c[i].write, c[i].form, clk, &d);
		int late = reached(clk, d);
		snprintf(what, sizeof what, "%s: 50ms: ETIMEDOUT, not early",
			 c[i].name);
		check(what, err == ETIMEDOUT && late);
		hold_stop(&h);
	}
}

/* ---- 2: timed waiters leave, plain waiters still get in ------------------ */
static pthread_rwlock_t crowd = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int timed_out, got_in, timed_done;

static void *crowd_waiter(void *arg)
{
	long kind = (long)arg; /* 0/1 timed rd/wr, 2/3 plain rd/wr */
	int err;
	if (kind < 2) {
		struct timespec d = in_us(CLOCK_REALTIME, 30000);
		err = kind ? pthread_rwlock_timedwrlock(&crowd, &d)
			   : pthread_rwlock_timedrdlock(&crowd, &d);
		if (err == ETIMEDOUT)
			timed_out++;
		atomic_fetch_add(&timed_done, 1);
	} else {
		err = kind == 3 ? pthread_rwlock_wrlock(&crowd)
				: pthread_rwlock_rdlock(&crowd);
	}
	if (err == 0) {
		got_in++;
		pthread_rwlock_unlock(&crowd);
	}
	return NULL;
}

static void crowd_round(const char *name)
{
	pthread_t t[50];
	struct holder h;
	char what[160];

	timed_out = got_in = timed_done = 0;
	hold_start(&h, &crowd, 1);
	for (long i = 0; i < 50; i++)
		pthread_create(&t[i], NULL, crowd_waiter,
			       (void *)(i < 40 ? i % 2 : 2 + i % 2));
	while (atomic_load(&timed_done) < 40)
		nap_ms(1);
	hold_stop(&h);
	for (int i = 0; i < 50; i++)
		pthread_join(t[i], NULL);
	snprintf(what, sizeof what,
		 "%s: 40 timed waiters timed out, 10 plain ones got in", name);
	check(what, timed_out == 40 && got_in == 10);
}

static void crowds(void)
{
	pthread_rwlockattr_t attr;

	crowd_round("prefer readers");
	pthread_rwlock_destroy(&crowd);
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&crowd, &attr);
	pthread_rwlockattr_destroy(&attr);
	crowd_round("prefer writers");
	pthread_rwlock_destroy(&crowd);
}

/* ---- 3: a writer that gives up lets the readers behind it in ------------- */
static pthread_rwlock_t pref;
static atomic_int writer_err = -1, reader_in;

static void *timed_writer(void *arg)
{
	(void)arg;
	struct timespec d = in_us(CLOCK_MONOTONIC, 200000);
	atomic_store(&writer_err,
		     pthread_rwlock_clockwrlock(&pref, CLOCK_MONOTONIC, &d));
	return NULL;
}

static void *late_reader(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(&pref);
	atomic_store(&reader_in, 1);
	pthread_rwlock_unlock(&pref);
	return NULL;
}

static void writer_gives_up(void)
{
	pthread_rwlockattr_t attr;
	pthread_t w, r;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pref, &attr);
	pthread_rwlockattr_destroy(&attr);

	pthread_rwlock_rdlock(&pref);
	pthread_create(&w, NULL, timed_writer, NULL);
	/* The waiting writer shows as EBUSY to tryrdlock. */
	for (int i = 0; i < 150; i++) {
		if (pthread_rwlock_tryrdlock(&pref) == EBUSY)
			break;
		pthread_rwlock_unlock(&pref);
		nap_ms(1);
	}
	pthread_create(&r, NULL, late_reader, NULL);
	pthread_join(w, NULL); /* times out: we still read */
	pthread_join(r, NULL); /* and the reader behind it gets in */
	check("writer behind a reader times out",
	      atomic_load(&writer_err) == ETIMEDOUT);
	check("reader behind that writer got in beside us",
	      atomic_load(&reader_in) == 1);
	pthread_rwlock_unlock(&pref);
	pthread_rwlock_destroy(&pref);
}

/* ---- 4: many short timeouts ---------------------------------------------- */
#define NSTORM 64
#define STORM_OPS 300
static pthread_rwlock_t storm;
static atomic_int in_r, in_w;
static atomic_long violations, successes, timeouts;
static pthread_barrier_t storm_start;

static void *stormer(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 2654435761u;
	pthread_barrier_wait(&storm_start);
	for (int k = 0; k < STORM_OPS; k++) {
		seed = seed * 1103515245 + 12345;
		int write = (seed >> 16) % 4 == 0;
		long us = (seed >> 8) % 500;
		struct timespec d = in_us(CLOCK_MONOTONIC, us);
		int err = write ? pthread_rwlock_clockwrlock(&storm, CLOCK_MONOTONIC, &d)
				: pthread_rwlock_clockrdlock(&storm, CLOCK_MONOTONIC, &d);
		if (err == ETIMEDOUT) {
			timeouts++;
			continue;
		}
		if (err) {
			fprintf(stderr, "rwlock_timed: storm: %d\n", err);
			exit(1);
		}
		successes++;
		if (write) {
			if (atomic_fetch_add(&in_w, 1) || atomic_load(&in_r))
				violations++;
			if (k % 8 == 0)
				sched_yield();
			atomic_fetch_sub(&in_w, 1);
		} else {
			atomic_fetch_add(&in_r, 1);
			if (atomic_load(&in_w))
				violations++;
			if (k % 8 == 0)
				sched_yield();
			atomic_fetch_sub(&in_r, 1);
		}
		pthread_rwlock_unlock(&storm);
	}
	/* Whatever the timeouts did, everyone still gets in. */
	pthread_rwlock_wrlock(&storm);
	pthread_rwlock_unlock(&storm);
	return NULL;
}

static void storm_round(const char *name, int kind)
{
	pthread_rwlockattr_t attr;
	pthread_t t[NSTORM];
	char what[160];

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, kind);
	pthread_rwlock_init(&storm, &attr);
	pthread_rwlockattr_destroy(&attr);
	violations = successes = timeouts = 0;
	pthread_barrier_init(&storm_start, NULL, NSTORM);
	for (long i = 0; i < NSTORM; i++)
		pthread_create(&t[i], NULL, stormer, (void *)i);
	for (int i = 0; i < NSTORM; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&storm_start);
	snprintf(what, sizeof what,
		 "%s: %d short timed locks, each one taken or timed out, "
		 "exclusion held, all finished", name, NSTORM * STORM_OPS);
	check(what, violations == 0 &&
			    successes + timeouts == NSTORM * STORM_OPS);
	pthread_rwlock_destroy(&storm);
}

int main(void)
{
	not_early();
	crowds();
	writer_gives_up();
	storm_round("storm, prefer readers", PTHREAD_RWLOCK_PREFER_READER_NP);
	storm_round("storm, prefer writer (not nonrecursive)",
		    PTHREAD_RWLOCK_PREFER_WRITER_NP);
	storm_round("storm, prefer writers",
		    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	return failures ? 1 : 0;
}
