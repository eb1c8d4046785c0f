// fork from a thread goshim did not create: glibc's own helper thread that
// runs a SIGEV_THREAD timer's notification. The child's only thread is
// that thread; it makes ten threads, joins them, passes a byte through a
// pipe and exits; the parent's helper thread waits for it and tells main.
// goshim-test: timeout=30
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int done;

static void *twice(void *arg)
{
	usleep(1000);
	return (void *)((long)arg * 2);
}

static void child(void)
{
	pthread_t t[10];
	long sum = 0;
	int p[2];
	char ch = 'k';

	for (long i = 0; i < 10; i++)
		if (pthread_create(&t[i], NULL, twice, (void *)i))
			_exit(2);
	for (int i = 0; i < 10; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	if (pipe(p) || write(p[1], &ch, 1) != 1 || read(p[0], &ch, 1) != 1)
		_exit(3);
	printf("child: ten threads returned %ld, the pipe passed '%c'\n", sum,
	       ch);
	fflush(stdout);
	_exit(0);
}

static void notify(union sigval v)
{
	int st;

	(void)v;
	pid_t pid = fork();
	if (pid == 0)
		child();
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		exit(1);
	printf("parent: child exited with %d\n",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	pthread_mutex_lock(&m);
	done = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
}

int main(void)
{
	timer_t tm;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD,
				.sigev_notify_function = notify };
	struct itimerspec its = { .it_value = { 0, 1000000 } };

	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) ||
	    timer_settime(tm, 0, &its, NULL))
		return 1;
	pthread_mutex_lock(&m);
	while (!done)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return 0;
}
