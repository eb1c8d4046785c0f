// sem_signal: sem_post is async-signal-safe. An interval timer (50 us)
// raises SIGALRM, whose handler posts a semaphore, 2,000 times; one thread
// waits for each post. Meanwhile two threads play ping-pong through 256
// pairs of semaphores in turn, so the signal often lands while a thread is
// inside sem_wait or sem_post itself. Every post arrives exactly once and
// the value is 0 at the end.
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define POSTS 2000
#define PAIRS 256

static sem_t sem;
static atomic_int posted;
static struct {
	sem_t ping, pong;
} pairs[PAIRS];
static atomic_bool done;
static bool last_round; /* ping's decision, passed to pong with the post */

static void die(const char *what)
{
	fprintf(stderr, "sem_signal: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Handlers may run in two threads at once (the signal is blocked only in
 * the one handling it): the count is claimed before the post. */
static void on_alarm(int sig)
{
	int saved = errno, n = atomic_load(&posted);
	(void)sig;
	while (n < POSTS && !atomic_compare_exchange_weak(&posted, &n, n + 1))
		;
	if (n < POSTS && sem_post(&sem))
		_exit(3);
	errno = saved;
}

/* sem_wait, again after a signal interrupted it (EINTR). */
static void down(sem_t *s)
{
	while (sem_wait(s))
		if (errno != EINTR)
			die("sem_wait");
}

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < POSTS; i++)
		down(&sem);
	return NULL;
}

/* The two sides stop together: ping looks at done, pong follows it. */
static void *ping(void *arg)
{
	(void)arg;
	for (int i = 0;; i = (i + 1) % PAIRS) {
		last_round = atomic_load(&done);
		if (sem_post(&pairs[i].ping))
			die("sem_post");
		down(&pairs[i].pong);
		if (last_round)
			return NULL;
	}
}

static void *pong(void *arg)
{
	(void)arg;
	for (int i = 0;; i = (i + 1) % PAIRS) {
		down(&pairs[i].ping);
		bool last = last_round;
		if (sem_post(&pairs[i].pong))
			die("sem_post");
		if (last)
			return NULL;
	}
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { 0 };
	pthread_t w, p1, p2;
	int value;

	if (sem_init(&sem, 0, 0))
		die("sem_init");
	for (int i = 0; i < PAIRS; i++)
		if (sem_init(&pairs[i].ping, 0, 0) ||
		    sem_init(&pairs[i].pong, 0, 0))
			die("sem_init");
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		die("sigaction");
	if (pthread_create(&w, NULL, waiter, NULL) ||
	    pthread_create(&p1, NULL, ping, NULL) ||
	    pthread_create(&p2, NULL, pong, NULL))
		die("pthread_create");
	if (setitimer(ITIMER_REAL, &it, NULL))
		die("setitimer");
	pthread_join(w, NULL);
	if (setitimer(ITIMER_REAL, &off, NULL))
		die("setitimer");
	atomic_store(&done, true);
	pthread_join(p1, NULL);
	pthread_join(p2, NULL);
	if (sem_getvalue(&sem, &value))
		die("sem_getvalue");
	printf("posts %d, waits %d, value %d\n", atomic_load(&posted), POSTS,
	       value);
	return atomic_load(&posted) == POSTS && value == 0 ? 0 : 1;
}
