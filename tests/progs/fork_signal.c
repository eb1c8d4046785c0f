// fork_signal: a caught signal ends the waits of a fork child that makes no
// thread (its parent has threads, so goshim's scheduler ran there): a
// nanosleep and a sem_timedwait fail with EINTR at once instead of
// sleeping their full time. Then in the parent, with the other thread
// blocking SIGALRM: sem_timedwait fails with EINTR even under SA_RESTART
// (the kernel never restarts a timed futex wait), and an untimed sem_wait
// is restarted under SA_RESTART and returns once the unit is posted.
// goshim-test: shim-max-threads=GOMAXPROCS+4
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

static volatile sig_atomic_t got;
static sem_t units, go_post;

static void on_alrm(int sig)
{
	(void)sig;
	got++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void alarm_in_100ms(void)
{
	struct itimerval it = { .it_value = { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static void handler(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alrm;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}

static void report(const char *who, const char *what, int r, double t0)
{
	printf("%s: %s %d (%s), %s, handler runs %d\n", who, what, r,
	       r ? strerror(errno) : "-",
	       now() - t0 < 1.5 ? "at once" : "after its full time", (int)got);
	fflush(stdout);
}

static void timed_sem(const char *who)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 3;
	alarm_in_100ms();
	double t0 = now();
	int r = sem_timedwait(&units, &dl);
	report(who, "sem_timedwait", r, t0);
}

static void *worker(void *arg)
{
	sigset_t alrm;
	(void)arg;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	sem_wait(&go_post);
	usleep(300000); /* after the alarm */
	sem_post(&units);
	return NULL;
}

int main(void)
{
	pthread_t t;
	sem_init(&units, 0, 0);
	sem_init(&go_post, 0, 0);
	pthread_create(&t, NULL, worker, NULL);

	pid_t pid = fork();
	if (pid == 0) {
		handler(SA_RESTART);
		alarm_in_100ms();
		struct timespec three = { 3, 0 };
		double t0 = now();
		int r = nanosleep(&three, NULL);
		report("child", "nanosleep", r, t0);
		timed_sem("child");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	handler(SA_RESTART);
	timed_sem("parent");
	sem_post(&go_post);
	alarm_in_100ms();
	double t0 = now();
	int r = sem_wait(&units);
	report("parent", "sem_wait under SA_RESTART (a unit posted at 0.3 s)",
	       r, t0);
	pthread_join(t, NULL);
	return 0;
}
