// goshim-test: env=GOMAXPROCS=1
// goshim-test: timeout=60
/*
 * Threads blocked for good in the kernel, out of goshim's sight (a futex
 * wait made with the syscall instruction), cost the program no file
 * descriptors. sysmon reads each blocked thread's /proc files to see it
 * sleeping and hands its P on; those files must go with the P, or 100
 * such threads would hold 200 fds. Under a soft limit of 128 the program
 * then still opens its 100 files, and the threads are all woken and
 * joined.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "raw.h"

#define THREADS 100
#define FILES 100

static atomic_uint word;
static atomic_int started;

static void *blocker(void *arg)
{
	(void)arg;
	atomic_fetch_add(&started, 1);
	while (atomic_load(&word) == 0)
		raw4(SYS_futex, (long)&word, FUTEX_WAIT_PRIVATE, 0, 0);
	return NULL;
}

int main(void)
{
	struct rlimit rl = { 128, 128 };
	pthread_t t[THREADS];
	int fds[FILES], opened = 0;

	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 128;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, blocker, NULL);
	while (atomic_load(&started) < THREADS)
		usleep(1000);
	/* Long enough for every thread to be in its wait, and seen there. */
	usleep(300000);
	for (int i = 0; i < FILES; i++) {
		fds[i] = open("/dev/null", O_RDONLY);
		if (fds[i] < 0)
			break;
		opened++;
	}
	printf("opened %d of %d files with %d threads blocked\n", opened,
	       FILES, THREADS);
	for (int i = 0; i < opened; i++)
		close(fds[i]);
	atomic_store(&word, 1);
	raw4(SYS_futex, (long)&word, FUTEX_WAKE_PRIVATE, THREADS, 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("all %d joined\n", THREADS);
	return 0;
}
