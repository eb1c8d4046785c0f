/* sysmon_stall MODE: the stall of a latency-sensitive thread while others
 * keep their CPUs or the kernel busy, and the cost of a blocking call's
 * wrapper. MODE:
 *   fsync   4 threads write 4 KiB and fsync it, in a loop, to files in
 *           $TMPDIR (default /tmp)
 *   spin    4 threads spin in loops that call nothing
 *   raw     2 threads block in a read made with the syscall instruction
 *           itself (no library call anyone could interpose), released at
 *           the end
 *   none    nothing else runs
 * A ticker thread sleeps to each 1 ms boundary (clock_nanosleep,
 * TIMER_ABSTIME) for 1 s and prints "stall_max_us US" and "stall_p99_us
 * US": how late it woke (a late tick restarts the count from when it
 * woke, so a stall is counted once). MODE "pair" prints "syscall_ns NS", the cost of
 * syscall(SYS_getppid) (under goshim: entersyscall + the call +
 * exitsyscall). sysmon_stall.go is the Go counterpart. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TICKS 1000
#define TICK_NS 1000000L

static atomic_int stop;
static volatile unsigned long sink;
static int pfd[2];

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *fsyncer(void *arg)
{
	char path[256], buf[4096];
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(path, sizeof path, "%s/sysmon_stall.%d.%ld", dir, getpid(),
		 (long)(intptr_t)arg);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	unlink(path);
	memset(buf, 'x', sizeof buf);
	while (!atomic_load(&stop)) {
		if (pwrite(fd, buf, sizeof buf, 0) != sizeof buf || fsync(fd)) {
			perror("fsync");
			exit(1);
		}
	}
	close(fd);
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sink++;
	return NULL;
}

static void *raw_reader(void *arg)
{
	char c;
	long ret;
	(void)arg;
#if defined(__x86_64__)
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"((long)SYS_read), "D"((long)pfd[0]), "S"(&c),
			       "d"(1L)
			     : "rcx", "r11", "memory");
#else
	ret = read(pfd[0], &c, 1);
#endif
	return (void *)ret;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void *ticker(void *arg)
{
	static int64_t late[TICKS];
	struct timespec ts;
	int64_t start = mono_ns(), next = start;
	int n = 0;
	(void)arg;
	while (n < TICKS && next - start < 1000000000) {
		next += TICK_NS;
		ts.tv_sec = next / 1000000000;
		ts.tv_nsec = next % 1000000000;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		late[n] = mono_ns() - next;
		if (late[n] > TICK_NS)
			next = mono_ns();
		n++;
	}
	qsort(late, (size_t)n, sizeof late[0], cmp64);
	printf("stall_max_us %.0f\n", late[n - 1] / 1e3);
	printf("stall_p99_us %.0f\n", late[n * 99 / 100] / 1e3);
	return NULL;
}

static void pair(void)
{
	int n = 200000;
	int64_t t0 = mono_ns();
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("syscall_ns %.0f\n", (double)(mono_ns() - t0) / n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	pthread_t t[4], tick;
	int n = 0;
	void *(*fn)(void *) = NULL;

	if (strcmp(mode, "pair") == 0) {
		pair();
		return 0;
	}
	if (strcmp(mode, "fsync") == 0)
		fn = fsyncer, n = 4;
	else if (strcmp(mode, "spin") == 0)
		fn = spinner, n = 4;
	else if (strcmp(mode, "raw") == 0)
		fn = raw_reader, n = 2;
	else if (strcmp(mode, "none") != 0) {
		fprintf(stderr, "usage: sysmon_stall fsync|spin|raw|none|pair\n");
		return 2;
	}
	if (pipe(pfd))
		return 1;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i);
	pthread_create(&tick, NULL, ticker, NULL);
	pthread_join(tick, NULL);
	atomic_store(&stop, 1);
	if (write(pfd[1], "xx", 2) != 2)
		return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
