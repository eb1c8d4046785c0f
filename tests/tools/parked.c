/*
 * parked MODE READY GO: threads parked in four kinds of waits (a mutex
 * main holds, a condition variable, sleeps, a read of an empty pipe) while
 * main sleeps until the file GO exists; READY is made once they all wait.
 * Then main lets each go, joins them and says what it saw. For
 * tests/run/tools-check.sh's `goshim dump`, which must get the goroutines out
 * of it whatever it does with signals:
 *   blockall  every signal is blocked, in every thread, from the start
 *   ignquit   SIGQUIT is ignored (SIG_IGN)
 * Every thread checks at the end that its mask is what it was, and main
 * that SIGQUIT is still ignored: the dump must leave no mark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int fds[2];
static int cond_waiting, cond_go;
static volatile int stop;
static sigset_t want_mask;
static int bad_masks, eintrs;

static void mask_check(void)
{
	sigset_t now;

	pthread_sigmask(SIG_BLOCK, NULL, &now);
	for (int s = 1; s < NSIG; s++)
		/* glibc's own two, and the two the kernel never blocks */
		if (s != 32 && s != 33 && s != SIGKILL && s != SIGSTOP &&
		    sigismember(&now, s) != sigismember(&want_mask, s)) {
			__atomic_add_fetch(&bad_masks, 1, __ATOMIC_RELAXED);
			return;
		}
}

/* noinline: each must be a frame of its own in the backtraces. */
__attribute__((noinline)) static void *mutex_waiter(void *arg)
{
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	mask_check();
	return arg;
}

__attribute__((noinline)) static void *cond_waiter(void *arg)
{
	pthread_mutex_lock(&cmu);
	cond_waiting = 1;
	while (!cond_go)
		pthread_cond_wait(&cv, &cmu);
	pthread_mutex_unlock(&cmu);
	mask_check();
	return arg;
}

__attribute__((noinline)) static void *sleep_waiter(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	while (!stop)
		if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
			__atomic_add_fetch(&eintrs, 1, __ATOMIC_RELAXED);
	mask_check();
	return arg;
}

__attribute__((noinline)) static void *read_waiter(void *arg)
{
	char c;
	(void)arg;
	ssize_t n;

	while ((n = read(fds[0], &c, 1)) < 0 && errno == EINTR)
		__atomic_add_fetch(&eintrs, 1, __ATOMIC_RELAXED);
	mask_check();
	return (void *)(intptr_t)n;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { mutex_waiter, cond_waiter, sleep_waiter,
				   read_waiter };
	pthread_t t[4];
	void *rv;
	int read_n = 0;

	if (argc != 4 || (strcmp(argv[1], "blockall") != 0 &&
			  strcmp(argv[1], "ignquit") != 0)) {
		fprintf(stderr, "usage: parked blockall|ignquit READY GO\n");
		return 2;
	}
	sigemptyset(&want_mask);
	if (strcmp(argv[1], "blockall") == 0) {
		sigfillset(&want_mask);
		pthread_sigmask(SIG_SETMASK, &want_mask, NULL);
	} else {
		signal(SIGQUIT, SIG_IGN);
	}
	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (int waiting = 0; !waiting; usleep(10 * 1000)) {
		pthread_mutex_lock(&cmu);
		waiting = cond_waiting;
		pthread_mutex_unlock(&cmu);
	}
	usleep(200 * 1000); /* the others block meanwhile */
	FILE *f = fopen(argv[2], "w");
	if (f == NULL) {
		perror(argv[2]);
		return 1;
	}
	fclose(f);
	while (access(argv[3], F_OK) != 0)
		usleep(20 * 1000);

	pthread_mutex_unlock(&mu);
	pthread_mutex_lock(&cmu);
	cond_go = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cmu);
	stop = 1;
	if (write(fds[1], "x", 1) != 1)
		perror("write");
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &rv);
		if (i == 3)
			read_n = (int)(intptr_t)rv;
	}
	mask_check();
	struct sigaction quit;
	sigaction(SIGQUIT, NULL, &quit);
	/* (blockall leaves SIGQUIT at its default, where goshim puts its
	 * own dump handler, which the program is shown) */
	int quit_ok = strcmp(argv[1], "ignquit") != 0 ||
		      quit.sa_handler == SIG_IGN;
	printf("parked %s: 4 threads joined, read %d byte, %d EINTR, "
	       "%d masks changed, SIGQUIT disposition %s\n",
	       argv[1], read_n, eintrs, bad_masks,
	       quit_ok ? "kept" : "CHANGED");
	return 0;
}
