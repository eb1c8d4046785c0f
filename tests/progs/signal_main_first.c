// signal_main_first: a process-directed signal goes to the main thread when
// it does not block it, as Linux gives it (complete_signal prefers the
// thread group leader): main waits in sem_wait for a timer's handler to
// post, while four workers sleep in nanosleep with the signal unblocked.
// The handler runs on main, main's sem_wait returns at the post, and no
// worker's sleep is interrupted. Ten rounds.
// goshim-test: shim-max-threads=GOMAXPROCS+6
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static sem_t posted;
static atomic_int on_main, elsewhere, worker_eintr, stop;
static pid_t main_tid;

static void on_alrm(int sig)
{
	(void)sig;
	if (gettid() == main_tid)
		on_main++;
	else
		elsewhere++;
	sem_post(&posted);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
			worker_eintr++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	struct sigaction sa;

	main_tid = gettid();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sem_init(&posted, 0, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	usleep(20000);
	for (int round = 0; round < 10; round++) {
		struct itimerval it = { .it_value = { 0, 20000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		while (sem_wait(&posted) != 0 && errno == EINTR)
			;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("10 alarms: handler on main %d, on another thread %d; worker "
	       "sleeps interrupted %d\n", (int)on_main, (int)elsewhere,
	       (int)worker_eintr);
	return 0;
}
