// With one P, goroutines blocked in the kernel without passing a parking
// interposer — syscall(SYS_read) on an empty pipe, a raw futex wait
// through syscall(SYS_futex) — must not stop a goroutine that ticks every
// 2 ms: their Ms keep the call, sysmon hands the P to another M.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: timeout=30
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pfd[2];
static _Atomic int futex_word;
static _Atomic int ticks;

static void *pipe_reader(void *arg)
{
	char c = 0;
	(void)arg;
	long n = syscall(SYS_read, pfd[0], &c, 1);
	printf("raw read returned %ld '%c'\n", n, c);
	return NULL;
}

static void *futex_waiter(void *arg)
{
	(void)arg;
	while (atomic_load(&futex_word) == 0)
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL,
			NULL, 0);
	printf("raw futex wait returned, word %d\n", atomic_load(&futex_word));
	return NULL;
}

static void *ticker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		atomic_fetch_add(&ticks, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t r, f, t;

	if (pipe(pfd))
		return 1;
	pthread_create(&r, NULL, pipe_reader, NULL);
	pthread_create(&f, NULL, futex_waiter, NULL);
	pthread_create(&t, NULL, ticker, NULL);
	pthread_join(t, NULL);
	printf("ticker finished %d ticks while both were blocked\n",
	       atomic_load(&ticks));
	atomic_store(&futex_word, 1);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(f, NULL);
	if (write(pfd[1], "x", 1) != 1)
		return 1;
	pthread_join(r, NULL);
	return 0;
}
