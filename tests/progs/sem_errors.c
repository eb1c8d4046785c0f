// sem_errors: every error the unnamed-semaphore calls return (-1 and errno),
// one line each, for a private semaphore and for a process-shared one:
// EINVAL from sem_init above SEM_VALUE_MAX, EOVERFLOW from sem_post at
// SEM_VALUE_MAX, EAGAIN from sem_trywait, ETIMEDOUT (not before the
// deadline) from sem_timedwait and sem_clockwait, EINVAL for a bad tv_nsec
// or clock even when a unit is there, the values sem_getvalue reports, and
// 16 posts racing 5 below SEM_VALUE_MAX (exactly 5 succeed).
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures;

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EOVERFLOW: return "EOVERFLOW";
	case EAGAIN: return "EAGAIN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINTR: return "EINTR";
	}
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

/* ret is a call's return value: 0, or -1 with errno */
static void expect(const char *kind, const char *what, int ret, int want)
{
	int got = ret == 0 ? 0 : ret == -1 ? errno : -1000;
	printf("%s: %s: %s\n", kind, what, ename(got));
	if (got != want) {
		fprintf(stderr, "sem_errors: %s: %s: got %s, want %s\n", kind,
			what, ename(got), ename(want));
		failures++;
	}
}

static void value(const char *kind, sem_t *s, int want)
{
	int v = -1;
	sem_getvalue(s, &v);
	printf("%s: value: %d\n", kind, v);
	if (v != want) {
		fprintf(stderr, "sem_errors: %s: value %d, want %d\n", kind, v,
			want);
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

static int reached(clockid_t clk, struct timespec d)
{
	struct timespec now;
	clock_gettime(clk, &now);
	return now.tv_sec > d.tv_sec ||
	       (now.tv_sec == d.tv_sec && now.tv_nsec >= d.tv_nsec);
}

static void not_early(const char *kind, const char *what, clockid_t clk,
		      struct timespec d, int ret)
{
	char w[120];
	snprintf(w, sizeof w, "%s, not before the deadline", what);
	if (ret == -1 && errno == ETIMEDOUT && !reached(clk, d))
		errno = EINTR; /* shows up as a mismatch */
	expect(kind, w, ret, ETIMEDOUT);
}

static void run(const char *kind, int pshared)
{
	static const struct timespec bad_big = { 0, 1000000000 };
	static const struct timespec bad_neg = { 0, -1 };
	static const struct timespec past = { 1, 0 };
	static const struct timespec before_epoch = { -5, 0 };
	sem_t s;
	struct timespec d;

	expect(kind, "init SEM_VALUE_MAX + 1",
	       sem_init(&s, pshared, (unsigned)SEM_VALUE_MAX + 1), EINVAL);
	expect(kind, "init UINT_MAX", sem_init(&s, pshared, UINT_MAX), EINVAL);
	expect(kind, "init SEM_VALUE_MAX", sem_init(&s, pshared, SEM_VALUE_MAX),
	       0);
	value(kind, &s, SEM_VALUE_MAX);
	expect(kind, "post at SEM_VALUE_MAX", sem_post(&s), EOVERFLOW);
	value(kind, &s, SEM_VALUE_MAX);
	expect(kind, "trywait", sem_trywait(&s), 0);
	expect(kind, "post", sem_post(&s), 0);
	expect(kind, "post again", sem_post(&s), EOVERFLOW);
	expect(kind, "destroy", sem_destroy(&s), 0);

	expect(kind, "init 0", sem_init(&s, pshared, 0), 0);
	value(kind, &s, 0);
	expect(kind, "trywait at 0", sem_trywait(&s), EAGAIN);
	expect(kind, "timedwait, past deadline", sem_timedwait(&s, &past),
	       ETIMEDOUT);
	expect(kind, "timedwait, deadline before the epoch",
	       sem_timedwait(&s, &before_epoch), ETIMEDOUT);
	expect(kind, "clockwait monotonic, past deadline",
	       sem_clockwait(&s, CLOCK_MONOTONIC, &past), ETIMEDOUT);
	d = in_ms(CLOCK_REALTIME, 30);
	not_early(kind, "timedwait 30ms", CLOCK_REALTIME, d,
		  sem_timedwait(&s, &d));
	d = in_ms(CLOCK_MONOTONIC, 30);
	not_early(kind, "clockwait monotonic 30ms", CLOCK_MONOTONIC, d,
		  sem_clockwait(&s, CLOCK_MONOTONIC, &d));
	d = in_ms(CLOCK_REALTIME, 30);
	not_early(kind, "clockwait realtime 30ms", CLOCK_REALTIME, d,
		  sem_clockwait(&s, CLOCK_REALTIME, &d));
	expect(kind, "timedwait tv_nsec 1e9", sem_timedwait(&s, &bad_big),
	       EINVAL);
	expect(kind, "timedwait tv_nsec -1", sem_timedwait(&s, &bad_neg),
	       EINVAL);
	expect(kind, "clockwait CLOCK_PROCESS_CPUTIME_ID",
	       sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL);
	expect(kind, "clockwait CLOCK_BOOTTIME",
	       sem_clockwait(&s, CLOCK_BOOTTIME, &past), EINVAL);
	expect(kind, "clockwait tv_nsec -1",
	       sem_clockwait(&s, CLOCK_MONOTONIC, &bad_neg), EINVAL);

	expect(kind, "post", sem_post(&s), 0);
	expect(kind, "post", sem_post(&s), 0);
	value(kind, &s, 2);
	expect(kind, "timedwait tv_nsec 1e9 with a unit there",
	       sem_timedwait(&s, &bad_big), EINVAL);
	expect(kind, "clockwait bad clock with a unit there",
	       sem_clockwait(&s, CLOCK_THREAD_CPUTIME_ID, &past), EINVAL);
	value(kind, &s, 2);
	expect(kind, "timedwait, past deadline, a unit there",
	       sem_timedwait(&s, &past), 0);
	expect(kind, "clockwait realtime, past deadline, a unit there",
	       sem_clockwait(&s, CLOCK_REALTIME, &past), 0);
	expect(kind, "trywait at 0", sem_trywait(&s), EAGAIN);
	expect(kind, "post", sem_post(&s), 0);
	expect(kind, "wait", sem_wait(&s), 0);
	value(kind, &s, 0);
	expect(kind, "destroy", sem_destroy(&s), 0);
}

/* A waiter that a post from another thread wakes. */
static sem_t ping;

static void *poster(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
	sem_post(&ping);
	return NULL;
}

static void woken(const char *kind, int pshared)
{
	pthread_t t;
	struct timespec d = in_ms(CLOCK_MONOTONIC, 10000);

	sem_init(&ping, pshared, 0);
	pthread_create(&t, NULL, poster, NULL);
	expect(kind, "clockwait woken by a post",
	       sem_clockwait(&ping, CLOCK_MONOTONIC, &d), 0);
	pthread_join(t, NULL);
	value(kind, &ping, 0);
	sem_destroy(&ping);
}

/* 16 threads post at once, 5 below SEM_VALUE_MAX: exactly 5 get in. */
static sem_t edge;
static pthread_barrier_t go;
static atomic_int posted, overflowed;

static void *edge_poster(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	if (sem_post(&edge) == 0)
		posted++;
	else if (errno == EOVERFLOW)
		overflowed++;
	return NULL;
}

static void racing_posts(const char *kind, int pshared)
{
	pthread_t t[16];

	posted = overflowed = 0;
	sem_init(&edge, pshared, SEM_VALUE_MAX - 5);
	pthread_barrier_init(&go, NULL, 16);
	for (int i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, edge_poster, NULL);
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	printf("%s: 16 racing posts 5 below the limit: %d posted, %d "
	       "EOVERFLOW\n", kind, (int)posted, (int)overflowed);
	if (posted != 5 || overflowed != 11)
		failures++;
	value(kind, &edge, SEM_VALUE_MAX);
	sem_destroy(&edge);
}

int main(void)
{
	run("private", 0);
	woken("private", 0);
	racing_posts("private", 0);
	run("shared", 1);
	woken("shared", 1);
	racing_posts("shared", 1);
	return failures ? 1 : 0;
}
