// A slow file fsync loop does not stall a latency-sensitive thread: at
// GOMAXPROCS=1 two threads write and fsync a file on disk for a while, a
// third sleeps 1 ms at a time and measures the longest gap between its
// wake-ups (reported on stderr; the check allows 200 ms on a loaded
// machine). Under goshim fsync runs under entersyscall and sysmon hands
// the only P to another M while it waits for the disk. Threads: the two
// in fsync, the one with the P, sysmon, the main thread's (idle) and one
// more while a handed-off P comes back, on a loaded machine; an M for
// every fsync would be hundreds.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+6
// goshim-test: timeout=60
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static int64_t worst_gap;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *syncer(void *arg)
{
	char path[] = "./fsync_stall.XXXXXX", buf[4096];
	int fd = mkstemp(path);
	long n = 0;

	(void)arg;
	if (fd < 0)
		return (void *)-1L;
	unlink(path);
	memset(buf, 'x', sizeof buf);
	while (!stop) {
		if (write(fd, buf, sizeof buf) != sizeof buf || fsync(fd) != 0)
			return (void *)-1L;
		n++;
	}
	close(fd);
	return (void *)n;
}

static void *ticker(void *arg)
{
	int64_t last = now_ns();
	(void)arg;
	while (!stop) {
		usleep(1000);
		int64_t t = now_ns();
		if (t - last > worst_gap)
			worst_gap = t - last;
		last = t;
	}
	return NULL;
}

int main(void)
{
	pthread_t s[2], t;
	void *r;
	long syncs = 0, bad = 0;

	pthread_create(&t, NULL, ticker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&s[i], NULL, syncer, NULL);
	usleep(1000000);
	stop = 1;
	for (int i = 0; i < 2; i++) {
		pthread_join(s[i], &r);
		if ((long)r < 0)
			bad++;
		else
			syncs += (long)r;
	}
	pthread_join(t, NULL);
	fprintf(stderr, "fsync_stall: %ld fsyncs, worst ticker gap %.2f ms\n",
		syncs, worst_gap / 1e6);
	printf("fsync loops ran: %s\n", bad == 0 && syncs > 0 ? "yes" : "no");
	printf("ticker gap under 200 ms: %s\n",
	       worst_gap < 200000000 ? "yes" : "no");
	return 0;
}
