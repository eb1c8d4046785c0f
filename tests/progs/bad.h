/*
 * bad.h: what the bad_*.c programs share. Each tries interposed calls with
 * input that glibc and the kernel answer with an error (or a documented
 * result), prints "what: result" so the native and goshim runs compare
 * line by line, complains on stderr when a result is not the one native
 * glibc gives on Linux, and then shows that the runtime still works: the
 * bad calls must not have corrupted it.
 */
#ifndef BAD_H
#define BAD_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* NULL where a header says nonnull, and counts larger than the buffer,
 * are among the bad inputs. */
#pragma GCC diagnostic ignored "-Wnonnull"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static int failures;

static const char *bad_ename(int e)
{
	static char buf[32];
	const char *n = e ? strerrorname_np(e) : "0";
	if (n)
		return n;
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

/* A call that returns an error number. */
__attribute__((unused)) static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, bad_ename(got));
	if (got != want) {
		fprintf(stderr, "%s: got %s", what, bad_ename(got));
		fprintf(stderr, ", want %s\n", bad_ename(want));
		failures++;
	}
}

/* A call that returns -1 and sets errno, or a count; ret is saved before
 * errno is read. */
#define EXPECT_RET(what, call, want_ret, want_errno)                         \
	do {                                                                 \
		errno = 0;                                                   \
		long r_ = (long)(call);                                      \
		int e_ = r_ == -1 ? errno : 0;                               \
		printf("%s: %ld %s\n", what, r_, bad_ename(e_));            \
		if (r_ != (long)(want_ret) || e_ != (want_errno)) {          \
			fprintf(stderr, "%s: got %ld %s", what, r_,          \
				bad_ename(e_));                              \
			fprintf(stderr, ", want %ld %s\n", (long)(want_ret), \
				bad_ename(want_errno));                      \
			failures++;                                          \
		}                                                            \
	} while (0)

/* -1 and errno want. */
#define EXPECT_ERRNO(what, call, want) EXPECT_RET(what, call, -1, want)

static void truth(const char *what, int ok)
{
	printf("%s: %s\n", what, ok ? "yes" : "no");
	if (!ok) {
		fprintf(stderr, "%s: no\n", what);
		failures++;
	}
}

#define OK(call)                                                           \
	do {                                                               \
		int e_ = (call);                                           \
		if (e_) {                                                  \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__,       \
				__LINE__, #call, bad_ename(e_));           \
			exit(1);                                           \
		}                                                          \
	} while (0)

/* Line-buffered output, so a crash shows after which check; and a page
 * the program may not touch: the kernel answers EFAULT for it. */
static void *bad_start(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* An address no user mapping can have (the kernel's half). */
#define KERNEL_ADDR ((void *)0xffff800000001000ul)

/* ---- after the bad calls: real work with threads ------------------------ */

#define WORKERS 100
#define ROUNDS 1000

static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;
static uint64_t work_sum;
static int work_started;

static void *worker(void *arg)
{
	uint64_t id = (uintptr_t)arg;

	pthread_mutex_lock(&work_lock);
	work_started++;
	pthread_cond_broadcast(&work_cond);
	while (work_started < WORKERS)
		pthread_cond_wait(&work_cond, &work_lock);
	pthread_mutex_unlock(&work_lock);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&work_lock);
		work_sum += id * ROUNDS + (uint64_t)i;
		pthread_mutex_unlock(&work_lock);
		if (i % 100 == 0)
			sched_yield();
	}
	return (void *)(arg);
}

/* WORKERS threads add to one sum under a mutex, after all of them have met
 * on a cond; each returns its argument through join. */
static void bad_work(void)
{
	pthread_t t[WORKERS];
	uint64_t want = 0;
	int joined = 0;

	for (uintptr_t i = 0; i < WORKERS; i++) {
		OK(pthread_create(&t[i], NULL, worker, (void *)i));
		for (int k = 0; k < ROUNDS; k++)
			want += i * ROUNDS + (uint64_t)k;
	}
	for (uintptr_t i = 0; i < WORKERS; i++) {
		void *r;
		OK(pthread_join(t[i], &r));
		joined += r == (void *)i;
	}
	printf("work: %d threads, sum %llu\n", joined,
	       (unsigned long long)work_sum);
	truth("work: every thread joined with its value", joined == WORKERS);
	truth("work: the sum is right", work_sum == want);
}

static int bad_finish(const char *name)
{
	bad_work();
	if (failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, failures);
		return 1;
	}
	printf("OK\n");
	return 0;
}

#endif
