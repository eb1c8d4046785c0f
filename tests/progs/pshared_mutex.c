// pshared_mutex: process-shared mutexes and condition variables work
// across processes. Parent and child (fork) increment one counter in shared
// memory under a process-shared mutex, each from two threads; the total is
// exact. The child then signals a process-shared condition variable the
// parent waits on. Error codes of a process-shared error-checking mutex
// are glibc's.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ITERS 200000
#define THREADS 2

struct shared {
	pthread_mutex_t mu;
	pthread_mutex_t errchk;
	pthread_cond_t cv;
	long counter;
	int child_done;
};

static struct shared *sh;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "pshared_mutex: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void *incr(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		check(pthread_mutex_lock(&sh->mu), "lock");
		sh->counter++;
		check(pthread_mutex_unlock(&sh->mu), "unlock");
	}
	return NULL;
}

static void run_threads(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		check(pthread_create(&t[i], NULL, incr, NULL), "create");
	for (int i = 0; i < THREADS; i++)
		check(pthread_join(t[i], NULL), "join");
}

int main(void)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	check(pthread_mutexattr_init(&ma), "mutexattr_init");
	check(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED),
	      "setpshared");
	check(pthread_mutex_init(&sh->mu, &ma), "mutex_init");
	check(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK),
	      "settype");
	check(pthread_mutex_init(&sh->errchk, &ma), "mutex_init errorcheck");
	check(pthread_mutexattr_destroy(&ma), "mutexattr_destroy");
	check(pthread_condattr_init(&ca), "condattr_init");
	check(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED),
	      "condattr_setpshared");
	check(pthread_cond_init(&sh->cv, &ca), "cond_init");
	check(pthread_condattr_destroy(&ca), "condattr_destroy");

	printf("errorcheck lock: %d\n", pthread_mutex_lock(&sh->errchk));
	printf("errorcheck relock is EDEADLK: %d\n",
	       pthread_mutex_lock(&sh->errchk) == EDEADLK);
	printf("errorcheck unlock: %d\n", pthread_mutex_unlock(&sh->errchk));
	printf("errorcheck unlock unlocked is EPERM: %d\n",
	       pthread_mutex_unlock(&sh->errchk) == EPERM);
	fflush(stdout);

	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* One thread here: the child of a forked goroutine runtime
		 * keeps only the caller. */
		incr(NULL);
		incr(NULL);
		check(pthread_mutex_lock(&sh->mu), "child lock");
		sh->child_done = 1;
		check(pthread_cond_signal(&sh->cv), "child signal");
		check(pthread_mutex_unlock(&sh->mu), "child unlock");
		_exit(0);
	}
	run_threads();
	check(pthread_mutex_lock(&sh->mu), "lock");
	while (!sh->child_done)
		check(pthread_cond_wait(&sh->cv, &sh->mu), "cond_wait");
	check(pthread_mutex_unlock(&sh->mu), "unlock");
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pshared_mutex: child failed\n");
		return 1;
	}
	printf("counter %ld of %d\n", sh->counter, 2 * THREADS * ITERS);
	check(pthread_cond_destroy(&sh->cv), "cond_destroy");
	check(pthread_mutex_destroy(&sh->errchk), "mutex_destroy");
	check(pthread_mutex_destroy(&sh->mu), "mutex_destroy");
	return sh->counter == 2 * THREADS * ITERS ? 0 : 1;
}
