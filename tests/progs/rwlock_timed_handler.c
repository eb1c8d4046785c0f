// rwlock_timed_handler: a timed rwlock wait whose deadline passes while a
// signal handler runs, and the lock comes free meanwhile: the lock is
// taken, not ETIMEDOUT (POSIX: never a timeout while the lock can be
// taken). Read and write waits, with realtime and monotonic clocks.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <semaphore.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_t waiter_thread;
static volatile int handled;
static sem_t held;

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Outlasts the waiter's deadline by far; the holder lets go meanwhile.
 * The signal comes 250 ms before the deadline: a loaded machine may
 * delay it a while, and a deadline that passes before the handler runs,
 * with the lock still held, is a timeout natively too. */
static void on_usr1(int sig)
{
	(void)sig;
	nap_ms(600);
	handled++;
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_rwlock_wrlock(&rw);
	sem_post(&held);
	nap_ms(50);
	pthread_kill(waiter_thread, SIGUSR1);
	nap_ms(100);
	pthread_rwlock_unlock(&rw);
	return NULL;
}

static struct timespec in_300ms(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_nsec += 300000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void round_(const char *what, int write, clockid_t clk)
{
	pthread_t h;
	pthread_create(&h, NULL, holder, NULL);
	while (sem_wait(&held) != 0)
		;
	struct timespec dl = in_300ms(clk);
	int r;
	if (clk == CLOCK_REALTIME)
		r = write ? pthread_rwlock_timedwrlock(&rw, &dl)
			  : pthread_rwlock_timedrdlock(&rw, &dl);
	else
		r = write ? pthread_rwlock_clockwrlock(&rw, clk, &dl)
			  : pthread_rwlock_clockrdlock(&rw, clk, &dl);
	pthread_join(h, NULL);
	printf("%s: %s, handler ran %d\n", what, r ? strerror(r) : "taken",
	       handled);
	if (r == 0)
		pthread_rwlock_unlock(&rw);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	waiter_thread = pthread_self();
	sem_init(&held, 0, 0);
	round_("timedrdlock", 0, CLOCK_REALTIME);
	round_("timedwrlock", 1, CLOCK_REALTIME);
	round_("clockrdlock monotonic", 0, CLOCK_MONOTONIC);
	round_("clockwrlock monotonic", 1, CLOCK_MONOTONIC);
	return 0;
}
