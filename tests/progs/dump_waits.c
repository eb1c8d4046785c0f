/*
 * dump_waits: four threads block in four different ways (a mutex the main
 * thread holds, a condition variable, a long sleep, a read of an empty
 * pipe) and the process exits while they wait. With `quit` as argument a
 * fifth thread spins (so that one goroutine runs on another thread) and a
 * sixth sends the process SIGQUIT while the main thread sleeps, giving
 * goshim half a second for the dump (natively SIGQUIT ends the process:
 * that mode is for goshim only).
 *
 * Under goshim with GOSHIM_DEBUG=dumponexit=1 (or on the SIGQUIT) stderr
 * gets a dump naming each goroutine's wait reason and, in its backtrace,
 * the function that waited; tests/run/diag-check.py checks all of it, the
 * header here one line of it.
 */
// goshim-test: shim-env=GOSHIM_DEBUG=dumponexit=1
// goshim-test: shim-stderr=^goroutine [0-9]+ \[cond\]:$
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int fds[2];
static int cond_waiting;
static volatile int stop;

/* noinline: each must be a frame of its own in the backtraces. */
__attribute__((noinline)) static void *mutex_waiter(void *arg)
{
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

__attribute__((noinline)) static void *cond_waiter(void *arg)
{
	pthread_mutex_lock(&cmu);
	cond_waiting = 1;
	for (;;)
		pthread_cond_wait(&cv, &cmu);
	return arg;
}

__attribute__((noinline)) static void *sleep_waiter(void *arg)
{
	sleep(3600);
	return arg;
}

__attribute__((noinline)) static void *read_waiter(void *arg)
{
	char c;
	if (read(fds[0], &c, 1) < 0)
		perror("read");
	return arg;
}

__attribute__((noinline)) static void *spinner(void *arg)
{
	while (!stop)
		;
	return arg;
}

/* The main thread blocks SIGQUIT: the kernel gives it to a thread that
 * runs (the spinner's) while main sleeps. */
__attribute__((noinline)) static void *quitter(void *arg)
{
	usleep(100 * 1000);
	kill(getpid(), SIGQUIT);
	return arg;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { mutex_waiter, cond_waiter, sleep_waiter,
				   read_waiter };
	pthread_t t;

	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		if (pthread_create(&t, NULL, fns[i], NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	/* The cond waiter has let go of cmu in pthread_cond_wait once main
	 * can take it with the flag set; the others get as long again (the
	 * checker retries a dump where one had not blocked yet). */
	for (int waiting = 0; !waiting; usleep(10 * 1000)) {
		pthread_mutex_lock(&cmu);
		waiting = cond_waiting;
		pthread_mutex_unlock(&cmu);
	}
	usleep(300 * 1000);
	printf("four threads waiting\n");
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "quit") == 0) {
		if (pthread_create(&t, NULL, spinner, NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
		sigset_t quit;
		sigemptyset(&quit);
		sigaddset(&quit, SIGQUIT);
		pthread_sigmask(SIG_BLOCK, &quit, NULL);
		if (pthread_create(&t, NULL, quitter, NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
		usleep(600 * 1000);
		stop = 1;
	}
	exit(0);
}
