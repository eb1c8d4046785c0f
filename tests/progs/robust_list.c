// robust_list: each thread has its own robust list registration, as the
// kernel keeps one per thread: get_robust_list(0) answers the caller's
// (glibc's, distinct per thread, stable across yields and sleeps),
// set_robust_list changes the caller's alone, get_robust_list(tid) reads
// another thread's, a bad length is EINVAL. Threads that register a list
// in their own stack and exit leave the others' lists alone (under goshim
// they share OS threads, whose one registration the kernel would keep:
// stress-ng's pthread stressor copied a dead thread's stack from it).
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 32
#define ROUNDS 20
#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "robust_list: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

static struct robust_list_head *heads[N];
static pid_t tids[N];
static atomic_int ready, release, stable = 1, own_set = 1;

static struct robust_list_head *get_own(void)
{
	struct robust_list_head *h = NULL;
	size_t len = 0;
	CHECK(syscall(SYS_get_robust_list, 0, &h, &len) == 0);
	CHECK(len == sizeof *h);
	return h;
}

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	struct robust_list_head mine;

	heads[i] = get_own();
	tids[i] = gettid();
	atomic_fetch_add(&ready, 1);
	for (int k = 0; k < 10; k++) {
		if (k % 2)
			sched_yield();
		else
			usleep(200);
		if (get_own() != heads[i])
			stable = 0;
	}
	while (!atomic_load(&release))
		usleep(500);
	/* What stress-ng does: a copy of its list, registered, then read
	 * back through the registration. */
	memcpy(&mine, get_own(), sizeof mine);
	CHECK(syscall(SYS_set_robust_list, &mine, sizeof mine) == 0);
	for (int k = 0; k < 10; k++) {
		sched_yield();
		if (get_own() != &mine)
			own_set = 0;
	}
	CHECK(syscall(SYS_set_robust_list, heads[i], sizeof mine) == 0);
	return NULL;
}

static void *copier(void *arg)
{
	struct robust_list_head copy, *h = get_own();
	(void)arg;
	memcpy(&copy, h, sizeof copy); /* faults if h is a dead stack */
	CHECK(syscall(SYS_set_robust_list, &copy, sizeof copy) == 0);
	sched_yield();
	return NULL;
}

int main(void)
{
	pthread_t th[N];

	for (long i = 0; i < N; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	while (atomic_load(&ready) < N)
		usleep(1000);
	int dup = 0, by_tid = 1;
	for (int i = 0; i < N; i++) {
		struct robust_list_head *h = NULL;
		size_t len = 0;
		for (int j = i + 1; j < N; j++)
			dup += heads[i] == heads[j];
		CHECK(syscall(SYS_get_robust_list, tids[i], &h, &len) == 0);
		by_tid &= h == heads[i] && len == sizeof *h;
	}
	printf("%d threads: lists distinct %d, stable %d, read by tid %d\n",
	       N, dup == 0, (int)stable, by_tid);
	atomic_store(&release, 1);
	for (int i = 0; i < N; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	printf("set_robust_list names the caller's alone: %d\n",
	       (int)own_set);

	for (int r = 0; r < ROUNDS; r++) {
		pthread_t c[8];
		for (int i = 0; i < 8; i++)
			CHECK(pthread_create(&c[i], NULL, copier, NULL) == 0);
		for (int i = 0; i < 8; i++)
			CHECK(pthread_join(c[i], NULL) == 0);
	}
	printf("%d threads registered a list in their stack and exited\n",
	       ROUNDS * 8);

	struct robust_list_head *h = get_own();
	errno = 0;
	long rc = syscall(SYS_set_robust_list, h, sizeof *h + 1);
	printf("bad length: %ld %s\n", rc, strerror(errno));
	errno = 0;
	rc = syscall(SYS_get_robust_list, 0, (void *)8, &(size_t){ 0 });
	printf("bad head pointer: %ld %s\n", rc, strerror(errno));
	return 0;
}
