// The cap on OS threads (Go's SetMaxThreads), set to 20: 40 threads block
// in real system calls that goshim cannot park (syscall(SYS_read) on
// pipes nobody writes), so each keeps its OS thread while its P is handed
// to a new one. Past 20 threads the process ends as a Go program does:
// "runtime: program exceeds 20-thread limit", what the goroutines were
// doing (counted by state), abort. Natively nothing stops it (and the
// readers block forever), so it runs under goshim only.
// goshim-test: shim-only=1
// goshim-test: shim-env=GOSHIM_MAX_THREADS=20
// goshim-test: exit=134
// goshim-test: timeout=30
// goshim-test: shim-stderr=^runtime: program exceeds 20-thread limit
// goshim-test: shim-max-threads=21
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 40

static int pfd[2];

static void *reader(void *arg)
{
	char c;
	(void)arg;
	syscall(SYS_read, pfd[0], &c, 1);
	return NULL;
}

int main(void)
{
	pthread_t t[N];

	if (pipe(pfd))
		return 1;
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	printf("not reached: every reader returned\n");
	return 0;
}
