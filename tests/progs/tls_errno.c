// tls_errno: __thread variables (zero-initialised, non-zero initialiser, an
// initialised array) and errno stay per-thread while 1,000 live threads
// sched_yield() between writing and reading them; a second wave of 1,000
// threads (which may reuse the first wave's TLS) must see fresh initial values.
// (Bound: GOMAXPROCS Ms, sysmon, and the transient M startm may make while
// another M is between giving up its P and parking, as in Go.)
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHR 1000
#define WAVES 2
#define ROUNDS 20
#define ARR 16

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "tls_errno: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)
#define OK(call) do { int e_ = (call); if (e_) { \
	fprintf(stderr, "tls_errno: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, strerror(e_)); \
	exit(1); } } while (0)

static __thread long t_val;
static __thread int t_init = 42;
static __thread int t_arr[ARR] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static pthread_barrier_t bar;
static uintptr_t addr_val[NTHR], addr_errno[NTHR];
static long results[NTHR];

static void *worker(void *arg)
{
	long id = (long)(intptr_t)arg;

	/* fresh thread: initial images, whatever ran before on this TLS */
	CHECK(t_val == 0);
	CHECK(t_init == 42);
	for (int j = 0; j < ARR; j++)
		CHECK(t_arr[j] == j + 1);
	addr_val[id] = (uintptr_t)&t_val;
	addr_errno[id] = (uintptr_t)&errno;
	pthread_barrier_wait(&bar);   /* all NTHR alive from here on */

	long acc = 0;
	for (int r = 0; r < ROUNDS; r++) {
		int want_errno;
		t_val = id * ROUNDS + r;
		t_init = (int)id + r;
		for (int j = 0; j < ARR; j++)
			t_arr[j] = (int)(id ^ (r * j));
		if (r % 2) {
			CHECK(close(-1) == -1);   /* errno from a failing call */
			want_errno = EBADF;
		} else {
			errno = want_errno = (int)((id + r) % 100) + 1;
		}
		sched_yield();
		CHECK(errno == want_errno);
		CHECK(t_val == id * ROUNDS + r);
		CHECK(t_init == (int)id + r);
		for (int j = 0; j < ARR; j++)
			CHECK(t_arr[j] == (int)(id ^ (r * j)));
		acc += t_val + t_init + t_arr[ARR - 1];
	}
	results[id] = acc;
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

static void all_distinct(uintptr_t *a, const char *what)
{
	qsort(a, NTHR, sizeof *a, cmp);
	for (int i = 1; i < NTHR; i++)
		if (a[i] == a[i - 1]) {
			fprintf(stderr, "tls_errno: two live threads share one %s\n", what);
			exit(1);
		}
}

int main(void)
{
	static pthread_t t[NTHR];
	long checksum = 0;

	t_val = -1;
	t_init = -2;
	OK(pthread_barrier_init(&bar, NULL, NTHR));
	for (int w = 0; w < WAVES; w++) {
		errno = 0;
		for (intptr_t i = 0; i < NTHR; i++)
			OK(pthread_create(&t[i], NULL, worker, (void *)i));
		for (int i = 0; i < NTHR; i++)
			OK(pthread_join(t[i], NULL));
		/* before any stdio call, which may set errno */
		CHECK(t_val == -1 && t_init == -2 && errno == 0);
		all_distinct(addr_val, "__thread variable");
		all_distinct(addr_errno, "errno");
		for (int i = 0; i < NTHR; i++)
			checksum += results[i];
		printf("wave %d: %d threads x %d rounds: TLS and errno kept apart\n",
		       w + 1, NTHR, ROUNDS);
	}
	CHECK(t_val == -1 && t_init == -2);
	CHECK(t_arr[0] == 1 && t_arr[ARR - 1] == ARR);
	printf("main thread's TLS untouched\n");
	printf("checksum %ld\n", checksum);
	printf("OK\n");
	return 0;
}
