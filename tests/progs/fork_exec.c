// A thread that is not main forks and the child execs this same program
// (the environment, LD_PRELOAD included, kept), and another thread starts
// it with posix_spawn, while the parent has threads waiting on a
// condition variable. Each exec'd program makes 200 threads that wait
// on a condition variable, says on stderr how many OS threads it has
// meanwhile (under goshim: a handful, which shows it runs under goshim
// too), joins them and exits with status 7. The parent checks both.
// goshim-test: timeout=60
// goshim-test: shim-stderr=200 threads waiting on [0-9] OS threads
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAITERS 200

extern char **environ;
static const char *self_path;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int waiting, released;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	waiting++;
	pthread_cond_broadcast(&c);
	while (!released)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static int os_threads(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	int n = -1;
	while (f && fgets(buf, sizeof buf, f))
		if (strncmp(buf, "Threads:", 8) == 0)
			n = atoi(buf + 8);
	if (f)
		fclose(f);
	return n;
}

/* nthreads wait on the condvar, then all are released and joined. */
static void wait_round(int nthreads)
{
	pthread_t t[WAITERS];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, waiter, NULL))
			exit(1);
	pthread_mutex_lock(&m);
	while (waiting < nthreads)
		pthread_cond_wait(&c, &m);
	fprintf(stderr, "exec'd program: %d threads waiting on %d OS threads\n",
		nthreads, os_threads());
	released = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
}

static int status_of(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void *fork_exec(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		execl(self_path, self_path, "exec", (char *)NULL);
		_exit(127);
	}
	printf("fork+exec: exit status %d\n", pid > 0 ? status_of(pid) : -1);
	return NULL;
}

static void *spawn(void *arg)
{
	char *argv[] = { (char *)self_path, "exec", NULL };
	pid_t pid;
	(void)arg;
	int err = posix_spawn(&pid, self_path, NULL, NULL, argv, environ);
	printf("posix_spawn: exit status %d\n", err ? -1 : status_of(pid));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t f, s;

	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		wait_round(WAITERS);
		return 7;
	}
	self_path = argv[0];
	pthread_t t[20];
	for (int i = 0; i < 20; i++)
		pthread_create(&t[i], NULL, waiter, NULL);
	pthread_create(&f, NULL, fork_exec, NULL);
	pthread_join(f, NULL);
	pthread_create(&s, NULL, spawn, NULL);
	pthread_join(s, NULL);
	pthread_mutex_lock(&m);
	released = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 20; i++)
		pthread_join(t[i], NULL);
	printf("parent: done\n");
	return 0;
}
