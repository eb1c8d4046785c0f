// Per-thread signal masks: each thread keeps its own mask across sleeps
// and yields (under goshim it may resume on another OS thread), a new
// thread starts with its creator's mask, and a process-directed signal is
// handled by the one thread that does not block it.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 16

static __thread int my_id;
static volatile sig_atomic_t handled_by;
static volatile sig_atomic_t receiver_ready;

static void on_usr1(int sig)
{
	(void)sig;
	handled_by = my_id;
}

static int mask_has(int sig)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

/* Thread i blocks SIGRTMIN+i only, then checks it keeps exactly that. */
static void *keeper(void *arg)
{
	int i = (int)(long)arg;
	sigset_t s;
	int bad = 0;

	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + i % 8);
	pthread_sigmask(SIG_SETMASK, &s, NULL);
	for (int round = 0; round < 50; round++) {
		if (round % 2)
			usleep(100);
		else
			sched_yield();
		for (int k = 0; k < 8; k++)
			if (mask_has(SIGRTMIN + k) != (k == i % 8))
				bad++;
		if (mask_has(SIGUSR1))
			bad++;
	}
	return (void *)(long)bad;
}

static void *child_of_blocker(void *arg)
{
	(void)arg;
	return (void *)(long)(mask_has(SIGUSR2) && !mask_has(SIGUSR1));
}

static void *blocker(void *arg)
{
	sigset_t s;
	pthread_t t;
	void *r;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &s, NULL);
	pthread_create(&t, NULL, child_of_blocker, NULL);
	pthread_join(t, &r);
	return r;
}

static void *receiver(void *arg)
{
	sigset_t s;

	my_id = (int)(long)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	receiver_ready = 1;
	while (!handled_by)
		; /* busy: it runs, and it alone takes SIGUSR1 */
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS], b, rcv;
	void *r;
	long bad = 0;
	sigset_t s;

	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, keeper, (void *)(long)i);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("masks kept across sleeps and yields: %s\n",
	       bad ? "NO" : "yes");

	pthread_create(&b, NULL, blocker, NULL);
	pthread_join(b, &r);
	printf("new thread inherits its creator's mask: %s\n",
	       r ? "yes" : "NO");

	signal(SIGUSR1, on_usr1);
	my_id = 1;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* inherited by the receiver */
	pthread_create(&rcv, NULL, receiver, (void *)2L);
	while (!receiver_ready)
		usleep(1000);
	kill(getpid(), SIGUSR1);
	pthread_join(rcv, NULL);
	printf("process SIGUSR1 handled by thread %d (the receiver is 2)\n",
	       (int)handled_by);

	/* sigprocmask's old set, and EINVAL for a bad how. */
	sigset_t old;
	sigprocmask(SIG_SETMASK, NULL, &old);
	printf("main still blocks SIGUSR1: %s\n",
	       sigismember(&old, SIGUSR1) ? "yes" : "no");
	printf("bad how: pthread_sigmask=%s sigprocmask=%d\n",
	       pthread_sigmask(12345, &s, NULL) == EINVAL ? "EINVAL" : "?",
	       sigprocmask(12345, &s, NULL));
	return 0;
}
