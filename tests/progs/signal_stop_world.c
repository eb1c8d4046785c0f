// Stopping the world with signals, as Boehm GC (libgc) does: a collector
// thread sends SIGUSR1 to every other thread and waits for each to
// acknowledge from its handler; each handler then sleeps in sigsuspend
// until SIGUSR2 lets it go. The threads are caught wherever they are:
// waiting on a condition variable, waiting for a mutex the collector holds,
// or running. A handler must run on a thread blocked in a wait without
// ending the wait (as the kernel runs one on a thread in futex_wait), and
// a signal sent to a running thread must reach that thread, not whatever
// else runs on its OS thread next. 300 rounds; the workers block every
// signal but the two, like libgc's marker threads.
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PER_KIND 3
#define N (3 * PER_KIND)
#define ROUNDS 300

static pthread_mutex_t cv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER; /* the collector's */
static sem_t ack;
static atomic_int stop_count, world_stopped, done;
static sigset_t suspend_mask;
static _Thread_local int my_id, my_last_stop;
static atomic_int stops_seen[N], wrong_thread, started;

static void on_suspend(int sig)
{
	int e = errno;
	int sc = atomic_load(&stop_count);
	(void)sig;
	if (my_id < 0 || my_id >= N)
		atomic_fetch_add(&wrong_thread, 1);
	if (my_last_stop != sc) { /* a resent signal is not a second stop */
		my_last_stop = sc;
		atomic_fetch_add(&stops_seen[my_id], 1);
		sem_post(&ack);
		do
			sigsuspend(&suspend_mask);
		while (atomic_load(&world_stopped) &&
		       atomic_load(&stop_count) == sc);
		sem_post(&ack);
	}
	errno = e;
}

static void on_restart(int sig)
{
	(void)sig;
}

static void *worker(void *arg)
{
	my_id = (int)(long)arg;
	atomic_fetch_add(&started, 1);
	switch (my_id % 3) {
	case 0: /* waits on a condition variable */
		pthread_mutex_lock(&cv_mu);
		while (!atomic_load(&done))
			pthread_cond_wait(&cv, &cv_mu);
		pthread_mutex_unlock(&cv_mu);
		break;
	case 1: /* waits for the mutex the collector holds until the end */
		pthread_mutex_lock(&held);
		pthread_mutex_unlock(&held);
		break;
	default: { /* runs */
		volatile unsigned long spin = 0;
		while (!atomic_load(&done))
			spin++;
		break;
	}
	}
	return NULL;
}

/* n acknowledgements, each within 10 s */
static int acks(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 10;
		while (sem_timedwait(&ack, &ts) != 0)
			if (errno != EINTR)
				return i;
	}
	return n;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t[N];
	sigset_t only_two, old;

	memset(&sa, 0, sizeof sa);
	sigfillset(&sa.sa_mask); /* SIGUSR2 too: until sigsuspend */
	sa.sa_handler = on_suspend;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_restart;
	sigaction(SIGUSR2, &sa, NULL);
	sigfillset(&suspend_mask);
	sigdelset(&suspend_mask, SIGUSR2);
	sem_init(&ack, 0, 0);

	my_id = -1;
	pthread_mutex_lock(&held);
	sigfillset(&only_two);
	sigdelset(&only_two, SIGUSR1);
	sigdelset(&only_two, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &only_two, &old);
	for (long i = 0; i < N; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Every worker knows who it is, and is (nearly) at its wait. */
	struct timespec settle = { 0, 1000000 };
	while (atomic_load(&started) < N)
		nanosleep(&settle, NULL);
	settle.tv_nsec = 20000000;
	nanosleep(&settle, NULL);

	int failed_round = -1, got = 0;
	for (int r = 0; r < ROUNDS && failed_round < 0; r++) {
		atomic_fetch_add(&stop_count, 1);
		atomic_store(&world_stopped, 1);
		for (int i = 0; i < N; i++)
			pthread_kill(t[i], SIGUSR1);
		got = acks(N);
		if (got < N) {
			failed_round = r;
			break;
		}
		atomic_store(&world_stopped, 0);
		for (int i = 0; i < N; i++)
			pthread_kill(t[i], SIGUSR2);
		got = acks(N);
		if (got < N)
			failed_round = r;
	}
	if (failed_round >= 0) {
		printf("round %d: %d of %d threads answered\n", failed_round,
		       got, N);
		return 1;
	}
	atomic_store(&done, 1);
	pthread_mutex_lock(&cv_mu);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&cv_mu);
	pthread_mutex_unlock(&held);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);

	int each = 0;
	for (int i = 0; i < N; i++)
		each += atomic_load(&stops_seen[i]) == ROUNDS;
	printf("%d rounds: %d of %d threads stopped in every round\n", ROUNDS,
	       each, N);
	printf("handlers run on a thread not sent to: %d\n",
	       atomic_load(&wrong_thread));
	return 0;
}
