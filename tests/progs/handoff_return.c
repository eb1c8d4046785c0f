// Threads come back after a burst of blocking system calls: 16 threads
// each block in a raw read (syscall(SYS_read)) on their own pipe at once
// (under goshim each holds an OS thread, and sysmon hands the Ps on),
// then all are released and exit. A while later the process has about as
// many OS threads as it needs: at most 6 (natively 1; under goshim
// GOMAXPROCS Ms, sysmon and a spare or two).
// goshim-test: env=GOMAXPROCS=2
// goshim-test: shim-max-threads=GOMAXPROCS+20
// goshim-test: native-min-threads=17
// goshim-test: timeout=60
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NTHREADS 16

static int pipes[NTHREADS][2];
static volatile int blocked;

static void *reader(void *arg)
{
	int i = (int)(long)arg;
	char c;
	__atomic_add_fetch(&blocked, 1, __ATOMIC_SEQ_CST);
	return (void *)syscall(SYS_read, pipes[i][0], &c, 1);
}

static int os_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(void)
{
	pthread_t t[NTHREADS];
	long got = 0;
	void *r;

	for (int i = 0; i < NTHREADS; i++) {
		if (pipe(pipes[i]) != 0)
			return 1;
		pthread_create(&t[i], NULL, reader, (void *)(long)i);
	}
	while (__atomic_load_n(&blocked, __ATOMIC_SEQ_CST) < NTHREADS)
		usleep(1000);
	usleep(200000); /* all in the kernel */
	for (int i = 0; i < NTHREADS; i++)
		if (write(pipes[i][1], "x", 1) != 1)
			return 1;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &r);
		got += (long)r;
	}
	printf("%d raw reads returned %ld bytes\n", NTHREADS, got);
	int n = 0;
	for (int i = 0; i < 40; i++) { /* up to 4 s */
		usleep(100000);
		n = os_threads();
		if (n <= 6)
			break;
	}
	printf("OS threads after the burst: %s\n",
	       n <= 6 ? "at most 6" : "more than 6");
	return 0;
}
