/* mem_blocked [N=10000]: memory per blocked thread. Reads VmRSS from
 * /proc/self/status, creates N threads (default attributes) that each wait
 * on one condvar under one mutex, waits until all N are waiting (a counter),
 * reads VmRSS again, then releases and joins them. Prints
 * "rss_kib_per_blocked KIB" ((blocked - before) / N), the two readings and
 * "create_all_ms MS", the time from the first pthread_create until all N
 * wait.
 *
 * With BENCH_MEMCG=DIR (tests/bench/memcg_run.py: a memory cgroup this
 * process is alone in) it reads the cgroup's total at the same two instants
 * too, user + kernel, and the kernel's part: "total_kib_per_blocked" and
 * "kernel_kib_per_blocked". RSS misses the kernel's side of a thread (its
 * kernel stack, task structs, page tables), which is where native threads
 * and goroutines differ most.
 * mem_blocked.go is the Go counterpart (goroutines on a sync.Cond). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static long waiting, n, released;
static int go;

static void check(int e, const char *what)
{
	if (e) {
		fprintf(stderr, "mem_blocked: %s: %s\n", what, strerror(e));
		exit(1);
	}
}

static long vmrss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		check(errno, "/proc/self/status");
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The first number in DIR/NAME, or -1. */
static long long read_number(const char *dir, const char *name)
{
	char path[4096];
	long long v = -1;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The sum of memory.stat's lines named in KEYS (v2), or -1. */
static long long stat_sum(const char *dir, const char *const *keys)
{
	char path[4096], key[64];
	long long v, sum = 0;
	int found = 0;
	snprintf(path, sizeof path, "%s/memory.stat", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		for (const char *const *k = keys; *k; k++)
			if (strcmp(key, *k) == 0)
				sum += v, found++;
	fclose(f);
	return found ? sum : -1;
}

/* The cgroup's total (user + kernel) and kernel share in KiB: v2's
 * memory.current and memory.stat "kernel" (or, before Linux 5.18, its
 * parts), v1's memory.usage_in_bytes and memory.kmem.usage_in_bytes.
 * 0 without BENCH_MEMCG or when neither version's files are there. */
static int memcg_kib(long long *total, long long *kernel)
{
	static const char *const kernel_key[] = { "kernel", NULL };
	static const char *const kernel_parts[] = {
		"kernel_stack", "pagetables", "sec_pagetables", "percpu",
		"sock", "slab", "vmalloc", NULL
	};
	const char *dir = getenv("BENCH_MEMCG");
	if (!dir)
		return 0;
	if ((*total = read_number(dir, "memory.current")) >= 0) {
		*kernel = stat_sum(dir, kernel_key);
		if (*kernel < 0)
			*kernel = stat_sum(dir, kernel_parts);
	} else {
		*total = read_number(dir, "memory.usage_in_bytes");
		*kernel = read_number(dir, "memory.kmem.usage_in_bytes");
	}
	if (*total < 0 || *kernel < 0)
		return 0;
	*total >>= 10;
	*kernel >>= 10;
	return 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *waiter(void *unused)
{
	(void)unused;
	check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
	if (++waiting == n)
		check(pthread_cond_signal(&all_in), "pthread_cond_signal");
	while (!go)
		check(pthread_cond_wait(&cond, &mu), "pthread_cond_wait");
	released++;
	check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
	return NULL;
}

static void *nothing(void *unused)
{
	return unused;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 10000;
	if (n < 1) {
		fprintf(stderr, "usage: mem_blocked [N]\n");
		return 2;
	}
	pthread_t *t = calloc(n, sizeof *t);
	if (!t)
		check(ENOMEM, "calloc");
	memset(t, 0, n * sizeof *t); /* touch it before the first reading */
	pthread_t w; /* warm-up: one thread created and joined */
	check(pthread_create(&w, NULL, nothing, NULL), "pthread_create");
	check(pthread_join(w, NULL), "pthread_join");

	long long total0, kernel0, total1, kernel1;
	int memcg = memcg_kib(&total0, &kernel0);
	long before = vmrss_kib();
	double t0 = now_ms();
	for (long i = 0; i < n; i++)
		check(pthread_create(&t[i], NULL, waiter, NULL), "pthread_create");
	check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
	while (waiting < n)
		check(pthread_cond_wait(&all_in, &mu), "pthread_cond_wait");
	check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
	double create_all = now_ms() - t0;
	long blocked = vmrss_kib();
	memcg = memcg && memcg_kib(&total1, &kernel1);

	check(pthread_mutex_lock(&mu), "pthread_mutex_lock");
	go = 1;
	check(pthread_cond_broadcast(&cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&mu), "pthread_mutex_unlock");
	for (long i = 0; i < n; i++)
		check(pthread_join(t[i], NULL), "pthread_join");
	if (released != n) {
		fprintf(stderr, "mem_blocked: %ld of %ld released\n", released, n);
		return 1;
	}
	printf("rss_kib_per_blocked %.2f\n", (double)(blocked - before) / n);
	printf("rss_before_kib %ld\n", before);
	printf("rss_blocked_kib %ld\n", blocked);
	printf("create_all_ms %.1f\n", create_all);
	if (memcg) {
		printf("total_kib_per_blocked %.2f\n",
		       (double)(total1 - total0) / n);
		printf("kernel_kib_per_blocked %.2f\n",
		       (double)(kernel1 - kernel0) / n);
		printf("total_before_kib %lld\n", total0);
		printf("total_blocked_kib %lld\n", total1);
	}
	free(t);
	return 0;
}
