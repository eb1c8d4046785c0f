// pthread_atfork handlers around a fork made by a thread that is not main,
// while other threads wait on a mutex and sleep: prepare handlers run in
// reverse order of registration, parent and child handlers in order, all
// on the forking thread (its pthread_self, its __thread values, its
// errno). The classic use works: prepare takes the program's lock, parent
// and child release it, and the child can take it again. In the child the
// forking thread is the only one: pthread_self is still its handle, gettid
// is the new pid, and new threads work.
// goshim-test: timeout=30
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static __thread int tls_tag;
static pthread_t forker;
static pthread_mutex_t biglock = PTHREAD_MUTEX_INITIALIZER;
static char log_buf[512];

static void note(const char *what)
{
	char one[64];
	int same = pthread_equal(pthread_self(), forker);
	snprintf(one, sizeof one, "%s(tag=%d,self=%s,errno=%d) ", what,
		 tls_tag, same ? "forker" : "other", errno);
	strcat(log_buf, one);
}

static void prep_a(void) { note("prepare-A"); }
static void prep_b(void)
{
	note("prepare-B");
	pthread_mutex_lock(&biglock);
}
static void prep_c(void) { note("prepare-C"); }
static void parent_a(void) { note("parent-A"); }
static void parent_b(void)
{
	note("parent-B");
	pthread_mutex_unlock(&biglock);
}
static void parent_c(void) { note("parent-C"); }
static void child_a(void) { note("child-A"); }
static void child_b(void)
{
	note("child-B");
	pthread_mutex_unlock(&biglock);
}
static void child_c(void) { note("child-C"); }

static void *lock_user(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&biglock);
		usleep(100);
		pthread_mutex_unlock(&biglock);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	usleep(100000);
	return NULL;
}

static void *hello(void *arg)
{
	tls_tag = (int)(long)arg;
	return (void *)(long)(tls_tag * 2);
}

static void *fork_thread(void *arg)
{
	(void)arg;
	tls_tag = 42;
	forker = pthread_self();
	errno = 7;
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		printf("child: %s\n", log_buf);
		printf("child: self is forker: %s, tag %d\n",
		       pthread_equal(pthread_self(), forker) ? "yes" : "no",
		       tls_tag);
		printf("child: gettid is getpid: %s\n",
		       syscall(SYS_gettid) == getpid() ? "yes" : "no");
		printf("child: lock taken again: %s\n",
		       pthread_mutex_lock(&biglock) == 0 ? "yes" : "no");
		pthread_mutex_unlock(&biglock);
		long sum = 0;
		pthread_t t[10];
		for (long i = 0; i < 10; i++)
			pthread_create(&t[i], NULL, hello, (void *)i);
		for (int i = 0; i < 10; i++) {
			void *r;
			pthread_join(t[i], &r);
			sum += (long)r;
		}
		printf("child: 10 threads returned %ld, tag still %d\n", sum,
		       tls_tag);
		fflush(stdout);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		exit(1);
	}
	printf("parent: %s\n", log_buf);
	printf("parent: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return NULL;
}

int main(void)
{
	pthread_t users[4], sl, f;

	pthread_atfork(prep_a, parent_a, child_a);
	pthread_atfork(prep_b, parent_b, child_b);
	pthread_atfork(prep_c, parent_c, child_c);
	for (int i = 0; i < 4; i++)
		pthread_create(&users[i], NULL, lock_user, NULL);
	pthread_create(&sl, NULL, sleeper, NULL);
	usleep(1000);
	pthread_create(&f, NULL, fork_thread, NULL);
	pthread_join(f, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(users[i], NULL);
	pthread_join(sl, NULL);
	printf("parent: all joined\n");
	return 0;
}
