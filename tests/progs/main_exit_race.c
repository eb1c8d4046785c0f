// main_exit_race: main calls pthread_exit while threads are being made and
// are ending all the time; the process must end exactly when the last one
// does (glibc's start_thread calls exit(0) in the last thread), never
// before and never not at all. Four chains run in each process: a thread
// of a chain makes the next one (detached) and ends, 1,500 times over.
// main ends after a pseudo-random pause, so the moment falls anywhere in
// the chains. Counting starts at that moment under goshim (core/live.c):
// a thread missed would end the process early (fewer threads counted by
// the atexit handler), one counted twice would keep it alive for good
// (the timeout). The test runs itself 20 times, each in a fresh process.
// goshim-test: timeout=120
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHAINS 4
#define LINKS 1500
#define RUNS 20

static atomic_int made, chains_done;

static void at_end(void)
{
	printf("%d chains, %d threads\n", atomic_load(&chains_done),
	       atomic_load(&made));
}

static void *link_run(void *arg)
{
	long left = (long)arg;
	pthread_attr_t a;
	pthread_t t;

	atomic_fetch_add(&made, 1);
	if (left == 0) {
		atomic_fetch_add(&chains_done, 1);
		return NULL;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, link_run, (void *)(left - 1)) != 0) {
		printf("pthread_create failed\n");
		exit(1);
	}
	pthread_attr_destroy(&a);
	return NULL;
}

static int one_run(unsigned seed)
{
	pthread_attr_t a;
	pthread_t t;

	atexit(at_end);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (int c = 0; c < CHAINS; c++)
		if (pthread_create(&t, &a, link_run, (void *)(long)(LINKS - 1)))
			return 1;
	struct timespec ts = { 0, (long)(seed % 4000) * 1000 };
	nanosleep(&ts, NULL);
	pthread_exit(NULL);
}

int main(int argc, char **argv)
{
	char want[64], got[64];
	int bad = 0;

	if (argc == 3 && strcmp(argv[1], "run") == 0)
		return one_run((unsigned)atoi(argv[2]));
	snprintf(want, sizeof want, "%d chains, %d threads\n", CHAINS,
		 CHAINS * LINKS);
	for (int r = 0; r < RUNS; r++) {
		int fds[2], st;
		char seed[16];
		if (pipe(fds) != 0)
			return 1;
		snprintf(seed, sizeof seed, "%u", (unsigned)r * 2654435761u);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(fds[1], 1);
			close(fds[0]);
			close(fds[1]);
			execl("/proc/self/exe", argv[0], "run", seed, (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		ssize_t n = 0, k;
		while (n < (ssize_t)sizeof got - 1 &&
		       (k = read(fds[0], got + n, sizeof got - 1 - (size_t)n)) > 0)
			n += k;
		got[n] = '\0';
		close(fds[0]);
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
		    strcmp(got, want) != 0) {
			printf("run %d: status %#x, said: %s", r, st, got);
			bad++;
		}
	}
	printf("%d runs, %d wrong\n", RUNS, bad);
	return bad != 0;
}
