// signal_class_churn: a signal no thread leaves open goes to the thread
// that waits for it, never to a thread that blocked it once and has gone
// away. SIGUSR1's default action ends the process. In each of 400
// rounds main makes one thread that leaves SIGUSR1 open, joins it, and
// only then sends SIGUSR1 to the process: every thread alive now blocks
// it, and the one in sigwait must take it. Four churn threads meanwhile
// make short threads, each with one of five masks (all blocking SIGUSR1,
// differing in SIGUSR2, SIGWINCH and SIGPWR), so the kinds of mask alive
// appear and vanish all the time. Under goshim idle OS threads block what
// every goroutine blocks, counted per distinct mask without a lock at
// create and exit (core/sigroute.c): a count the open thread's exit left
// behind would leave idle threads open to SIGUSR1, and the kernel would
// end the process.
// goshim-test: timeout=120
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROUNDS 400
#define CHURNERS 4

static atomic_int stop, got;

static void *short_life(void *arg)
{
	(void)arg;
	return NULL;
}

static void *churn(void *arg)
{
	/* Beside SIGUSR1, blocked by all five. */
	static const int extra[5][2] = { { 0, 0 },
					 { SIGUSR2, 0 },
					 { SIGWINCH, 0 },
					 { SIGPWR, 0 },
					 { SIGUSR2, SIGWINCH } };
	unsigned k = (unsigned)(long)arg;

	while (!atomic_load(&stop)) {
		sigset_t s, old;
		pthread_t t;
		const int *e = extra[k++ % 5];
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		for (int i = 0; i < 2; i++)
			if (e[i])
				sigaddset(&s, e[i]);
		/* The new thread gets this mask; this one keeps SIGUSR1. */
		pthread_sigmask(SIG_SETMASK, &s, &old);
		if (pthread_create(&t, NULL, short_life, NULL) != 0) {
			printf("pthread_create failed\n");
			exit(1);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_join(t, NULL);
	}
	return NULL;
}

static void *open_life(void *arg)
{
	volatile unsigned x = 0;

	(void)arg;
	for (int i = 0; i < 2000; i++)
		x += (unsigned)i;
	return NULL;
}

static void *waiter(void *arg)
{
	sigset_t s;
	int sig;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	while (sigwait(&s, &sig) == 0 && sig == SIGUSR1)
		atomic_fetch_add(&got, 1);
	return NULL;
}

int main(void)
{
	pthread_t c[CHURNERS], w, t;
	sigset_t s, old;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, &old); /* inherited by every thread */
	pthread_create(&w, NULL, waiter, NULL);
	for (long i = 0; i < CHURNERS; i++)
		pthread_create(&c[i], NULL, churn, (void *)i);
	for (int r = 0; r < ROUNDS; r++) {
		/* The one thread that leaves SIGUSR1 open, alive a moment. */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_create(&t, NULL, open_life, NULL);
		pthread_sigmask(SIG_BLOCK, &s, NULL);
		pthread_join(t, NULL);
		kill(getpid(), SIGUSR1);
		while (atomic_load(&got) <= r)
			usleep(100);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(c[i], NULL);
	printf("%d rounds, SIGUSR1 taken by sigwait %d times\n", ROUNDS,
	       atomic_load(&got));
	return 0;
}
