// Process signals when every thread is blocked somewhere (under goshim:
// every goroutine parked, every OS thread idle): a SIGALRM handler cuts a
// read short (EINTR) and posts a semaphore another thread waits on; a
// SIGUSR1 from another process interrupts the one thread that does not
// block it, in its sleep; a SIGTERM with no handler ends an idle child;
// a SIGTERM every thread blocks waits for the sigwait thread instead of
// killing the process.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static __thread int my_id;
static volatile sig_atomic_t alarm_by = -1, usr1_by = -1;
static sem_t posted;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_by = my_id;
	sem_post(&posted);
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_by = my_id;
}

static void *sem_waiter(void *arg)
{
	sigset_t s;
	(void)arg;
	my_id = 2;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* the read gets it, not us */
	int r = sem_wait(&posted);
	return (void *)(long)r;
}

static void *usr1_blocker(void *arg)
{
	int *p = arg;
	char c;
	sigset_t s;
	my_id = 3;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	return (void *)(long)read(p[0], &c, 1);
}

static void *sigwaiter(void *arg)
{
	sigset_t s;
	int sig = 0;
	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigwait(&s, &sig);
	return (void *)(long)sig;
}

int main(void)
{
	int pfd[2], qfd[2];
	char c;
	pthread_t t, u;
	void *r;
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	my_id = 1;
	if (pipe(pfd) || pipe(qfd))
		return 1;
	sem_init(&posted, 0, 0);

	/* alarm + read: the classic timeout of a single-threaded server. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	pthread_create(&t, NULL, sem_waiter, NULL);
	struct itimerval it = { .it_value = { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	ssize_t n = read(pfd[0], &c, 1);
	int e = errno;
	pthread_join(t, &r);
	printf("read under alarm: %zd %s, handler ran on thread %d, "
	       "sem_wait after its post: %ld\n",
	       n, strerror(e), (int)alarm_by, (long)r);

	/* A process signal for the one thread that does not block it. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&u, NULL, usr1_blocker, qfd);
	pid_t kid = fork();
	if (kid == 0) {
		/* Long enough for the parent to be asleep, on a loaded
		 * machine too: a signal before the nanosleep would leave it
		 * its whole 5 s, natively as well. */
		usleep(400000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	struct timespec req = { 5, 0 }, rem;
	int sr = nanosleep(&req, &rem);
	e = errno;
	waitpid(kid, NULL, 0);
	printf("sleep under SIGUSR1: %d %s, handled by thread %d\n", sr,
	       strerror(e), (int)usr1_by);
	if (write(qfd[1], "x", 1) != 1)
		return 1;
	pthread_join(u, NULL);

	/* SIGTERM with no handler ends an idle child. */
	kid = fork();
	if (kid == 0) {
		pthread_t w;
		pthread_create(&w, NULL, usr1_blocker, qfd); /* parks */
		read(pfd[0], &c, 1);			     /* parks */
		_exit(0);
	}
	usleep(100000);
	kill(kid, SIGTERM);
	int st;
	waitpid(kid, &st, 0);
	printf("idle child: %s\n",
	       WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM ? "killed by SIGTERM"
							  : "NOT killed");

	/* SIGTERM blocked everywhere waits for sigwait. */
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_create(&t, NULL, sigwaiter, NULL);
	kid = fork();
	if (kid == 0) {
		usleep(100000);
		kill(getppid(), SIGTERM);
		_exit(0);
	}
	pthread_join(t, &r);
	waitpid(kid, NULL, 0);
	printf("SIGTERM blocked by all: sigwait took %s\n",
	       (long)r == SIGTERM ? "SIGTERM" : "something else");
	return 0;
}
