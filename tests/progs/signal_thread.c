// Signals to specific threads: pthread_kill to a running thread, to one
// blocked on a condition variable, to one that blocks the signal (it stays
// pending, sigpending shows it, unblocking delivers it), to 50 sleeping
// threads; the sigwait signal-thread pattern (pthread_kill and a process
// signal, acknowledged one by one); pthread_kill's answers for signal 0,
// an exited thread and a bad signal. Each handler notes the thread it
// ran on.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NSLEEPERS 50

static __thread int my_id;
static __thread volatile sig_atomic_t got_here;
static volatile sig_atomic_t handled_by;

static void on_usr1(int sig)
{
	(void)sig;
	handled_by = my_id;
	got_here++;
}

static volatile int spin_stop;
static void *spinner(void *arg)
{
	my_id = (int)(long)arg;
	while (!spin_stop)
		;
	return (void *)(long)got_here;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_go, cv_ready;
static void *cond_waiter(void *arg)
{
	my_id = (int)(long)arg;
	pthread_mutex_lock(&mu);
	cv_ready = 1;
	while (!cv_go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return (void *)(long)got_here;
}

static sem_t blocked_ready, blocked_go;
static void *blocker(void *arg)
{
	sigset_t s, p;
	my_id = (int)(long)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	sem_post(&blocked_ready);
	sem_wait(&blocked_go);
	int before = got_here;
	sigpending(&p);
	int pend = sigismember(&p, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	return (void *)(long)(before * 100 + pend * 10 + got_here);
}

static volatile int sleepers_stop;
static void *sleeper(void *arg)
{
	my_id = (int)(long)arg;
	while (!sleepers_stop)
		usleep(500);
	return (void *)(long)got_here;
}

static sem_t ack;
static void *signal_thread(void *arg)
{
	sigset_t s;
	int sig, usr2 = 0;
	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigaddset(&s, SIGTERM);
	for (;;) {
		if (sigwait(&s, &sig) != 0)
			return (void *)-1L;
		if (sig == SIGTERM)
			return (void *)(long)usr2;
		usr2++;
		sem_post(&ack);
	}
}

static void *quick(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t, ts[NSLEEPERS];
	void *r;
	sigset_t s;

	signal(SIGUSR1, on_usr1);
	my_id = 1;

	pthread_create(&t, NULL, spinner, (void *)2L);
	usleep(20000);
	pthread_kill(t, SIGUSR1);
	while (!handled_by)
		usleep(1000);
	spin_stop = 1;
	pthread_join(t, &r);
	printf("running thread: handled by %d, its count %ld\n",
	       (int)handled_by, (long)r);

	handled_by = 0;
	pthread_create(&t, NULL, cond_waiter, (void *)3L);
	for (;;) {
		pthread_mutex_lock(&mu);
		int ready = cv_ready;
		pthread_mutex_unlock(&mu);
		if (ready)
			break;
		usleep(1000);
	}
	pthread_kill(t, SIGUSR1);
	usleep(10000);
	pthread_mutex_lock(&mu);
	cv_go = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(t, &r);
	printf("thread in pthread_cond_wait: handled by %d, its count %ld\n",
	       (int)handled_by, (long)r);

	handled_by = 0;
	sem_init(&blocked_ready, 0, 0);
	sem_init(&blocked_go, 0, 0);
	pthread_create(&t, NULL, blocker, (void *)4L);
	sem_wait(&blocked_ready);
	pthread_kill(t, SIGUSR1);
	sem_post(&blocked_go);
	pthread_join(t, &r);
	printf("blocking thread: count before unblock %ld, pending %ld, "
	       "after %ld, handled by %d\n",
	       (long)r / 100, (long)r / 10 % 10, (long)r % 10,
	       (int)handled_by);

	for (int i = 0; i < NSLEEPERS; i++)
		pthread_create(&ts[i], NULL, sleeper, (void *)(long)(10 + i));
	usleep(10000);
	for (int i = 0; i < NSLEEPERS; i++)
		pthread_kill(ts[i], SIGUSR1);
	usleep(20000);
	sleepers_stop = 1;
	long each = 0;
	for (int i = 0; i < NSLEEPERS; i++) {
		pthread_join(ts[i], &r);
		each += (long)r == 1;
	}
	printf("%d sleeping threads, each handled its own: %ld\n", NSLEEPERS,
	       each);

	/* The signal thread pattern: everyone blocks, one thread waits. */
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigaddset(&s, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	sem_init(&ack, 0, 0);
	pthread_create(&t, NULL, signal_thread, NULL);
	for (int i = 0; i < 20; i++) {
		pthread_kill(t, SIGUSR2);
		sem_wait(&ack);
	}
	kill(getpid(), SIGUSR2);
	sem_wait(&ack);
	pthread_kill(t, SIGTERM);
	pthread_join(t, &r);
	printf("sigwait thread took %ld SIGUSR2\n", (long)r);

	pthread_create(&t, NULL, quick, NULL);
	usleep(10000);
	printf("pthread_kill: exited thread %d, sig 0 on self %d, bad sig "
	       "%s\n",
	       pthread_kill(t, 0), pthread_kill(pthread_self(), 0),
	       strerror(pthread_kill(pthread_self(), 99)));
	pthread_join(t, NULL);
	return 0;
}
