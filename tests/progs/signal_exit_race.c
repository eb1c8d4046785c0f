// signal_exit_race: a process signal is never lost to a thread that
// ends. Short-lived threads unblock SIGUSR1 and exit at once, over and
// over, while a sender kills the process with SIGUSR1 and waits for the
// handler each time; every other thread blocks it. The kernel hands a
// signal that its chosen thread did not take, as that thread exits, to
// another (or keeps it pending for the next that unblocks it): none is
// lost, and every kill runs the handler once.
// goshim-test: timeout=120
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIGNALS 3000

static sem_t got;
static atomic_int done;
static atomic_long handled;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
	sem_post(&got);
}

static void *brief(void *arg)
{
	sigset_t s;
	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	if ((long)arg % 4 == 0)
		sched_yield();
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	for (long i = 0; !atomic_load(&done); i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, brief, (void *)i);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			exit(1);
		}
		pthread_join(t, NULL);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	sigset_t s;
	pthread_t sp[2];

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* only the brief ones take it */
	sem_init(&got, 0, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&sp[i], NULL, spawner, NULL);
	for (int i = 0; i < SIGNALS; i++) {
		kill(getpid(), SIGUSR1);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 20;
		while (sem_timedwait(&got, &ts) != 0) {
			if (errno == EINTR)
				continue;
			printf("signal %d of %d lost (%ld handler runs): %s\n",
			       i + 1, SIGNALS, atomic_load(&handled),
			       strerror(errno));
			exit(1);
		}
	}
	atomic_store(&done, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(sp[i], NULL);
	printf("%d kills, %ld handler runs\n", SIGNALS, atomic_load(&handled));
	return 0;
}
