// In the child of a fork made by a thread that is not main, the forking
// thread starts another and exits; the other joins it, makes ten more
// threads (whose stacks may be the exited thread's, reused), then
// dlopen()s a module with initial-exec TLS, which makes ld.so walk its
// list of threads to initialise the module's block in each, and uses the
// module's TLS from new threads; then it forks again. The child exits
// with the sum the threads computed, and the parent checks it.
// goshim-test: timeout=30
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char modpath[PATH_MAX];
static pthread_t forker;
static long (*ie_sum)(void);

static void *add(void *arg)
{
	return (void *)((long)arg + 1);
}

static void *module_user(void *arg)
{
	(void)arg;
	return (void *)(long)(ie_sum() != 0);
}

static int status_of(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void *survivor(void *arg)
{
	pthread_t t[10];
	long sum = 0;
	void *r;

	(void)arg;
	if (pthread_join(forker, &r) || (long)r != 5)
		exit(10);
	for (long i = 0; i < 10; i++)
		pthread_create(&t[i], NULL, add, (void *)i);
	for (int i = 0; i < 10; i++) {
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	void *h = dlopen(modpath, RTLD_NOW);
	if (h == NULL || (ie_sum = (long (*)(void))dlsym(h, "dlopen_tls_ie_sum")) == NULL)
		exit(11);
	for (int i = 0; i < 4; i++) {
		pthread_create(&t[i], NULL, module_user, NULL);
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(ie_sum() != 0 ? 3 : 4);
	if (status_of(pid) != 3)
		exit(12);
	exit((int)sum); /* 55 + 4 */
}

static void *fork_thread(void *arg)
{
	(void)arg;
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t s;
		forker = pthread_self();
		pthread_create(&s, NULL, survivor, NULL);
		pthread_exit((void *)5);
	}
	printf("child exited with %d\n", status_of(pid));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t f;

	(void)argc;
	snprintf(modpath, sizeof modpath, "%s/mods/dlopen_tls_ie.so",
		 dirname(strdup(argv[0])));
	pthread_create(&f, NULL, fork_thread, NULL);
	pthread_join(f, NULL);
	return 0;
}
