// goshim-test: shim-env=GOMAXPROCS=1
// goshim-test: timeout=60
/*
 * Threads that block in the kernel without any library call goshim could
 * see: a read on a pipe made with the `syscall` instruction itself, and a
 * futex wait made the same way (what Rust's std Mutex or a C++ atomic
 * wait do). At GOMAXPROCS=1 under goshim each would hold the only P and
 * stop every other thread, unless sysmon notices the thread sleeping in
 * the kernel and hands its P to another M. Other threads must run, wake
 * them, and everyone finishes. (x86_64 and aarch64 syscall instructions.)
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "raw.h"

static int pfd[2];
static atomic_uint word;
static char got;
static long futex_ret = 1;
static atomic_int worked;

static void *raw_reader(void *arg)
{
	(void)arg;
	while (raw4(SYS_read, pfd[0], (long)&got, 1, 0) != 1)
		;
	return NULL;
}

static void *raw_futex(void *arg)
{
	(void)arg;
	while (atomic_load(&word) == 0)
		futex_ret = raw4(SYS_futex, (long)&word, FUTEX_WAIT_PRIVATE,
				 0, 0);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	/* Give both a moment to block first. */
	usleep(20000);
	for (int i = 0; i < 5; i++) {
		atomic_fetch_add(&worked, 1);
		usleep(1000);
	}
	return NULL;
}

int main(void)
{
	pthread_t r, f, w;

	if (pipe(pfd))
		return 1;
	pthread_create(&r, NULL, raw_reader, NULL);
	pthread_create(&f, NULL, raw_futex, NULL);
	pthread_create(&w, NULL, worker, NULL);
	pthread_join(w, NULL);
	printf("worker ran %d times while two threads were blocked\n",
	       atomic_load(&worked));

	if (write(pfd[1], "x", 1) != 1)
		return 1;
	atomic_store(&word, 1);
	raw4(SYS_futex, (long)&word, FUTEX_WAKE_PRIVATE, 1, 0);
	pthread_join(r, NULL);
	pthread_join(f, NULL);
	printf("raw read got '%c'\n", got);
	printf("raw futex wait %s\n", futex_ret == 0 || futex_ret == -EAGAIN
					   ? "woken"
					   : "failed");
	return 0;
}
