// A thread is inside a pthread_once initialiser (waiting for main) when
// main forks. The initialiser's thread does not exist in the child, so the
// child's own pthread_once on the same control runs the initialiser
// itself (glibc tells by a fork generation in the once word) instead of
// waiting forever. In the parent the first initialiser finishes once main
// lets it, and a second caller does not run it again.
// goshim-test: timeout=30
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int inside, go_on, runs;

static void init(void)
{
	runs++;
	if (!go_on) {
		pthread_mutex_lock(&m);
		inside = 1;
		pthread_cond_broadcast(&c);
		while (!go_on)
			pthread_cond_wait(&c, &m);
		pthread_mutex_unlock(&m);
	}
}

static void *first(void *arg)
{
	pthread_once(&once, init);
	return arg;
}

int main(void)
{
	pthread_t t1, t2;
	int st;

	pthread_create(&t1, NULL, first, NULL);
	pthread_mutex_lock(&m);
	while (!inside)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		go_on = 1; /* the child's run must not wait for anyone */
		pthread_once(&once, init);
		pthread_once(&once, init);
		printf("child: initialiser ran %d times in all\n", runs);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("parent: child exited with %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	pthread_create(&t2, NULL, first, NULL);
	pthread_mutex_lock(&m);
	go_on = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("parent: initialiser ran %d time\n", runs);
	return 0;
}
