// Robust and priority-inheritance process-shared mutexes: the next locker
// gets EOWNERDEAD when the owner thread exits holding one, and when the
// owner's whole process exits (a child made with fork); consistent makes
// it usable again. Four threads count through a PI process-shared mutex,
// exactly. (Under goshim the holder is wired to its OS thread, with that
// thread's tid and robust list; a wait on a process-shared mutex holds
// its OS thread, so the four counters may each hold one.)
// goshim-test: shim-max-threads=GOMAXPROCS+7
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNT 20000

struct shared {
	pthread_mutex_t robust;
	pthread_mutex_t pi;
	long counter;
};
static struct shared *sh;

static void *take_and_exit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sh->robust);
	usleep(1000);
	return NULL; /* holding it */
}

static void *counter(void *arg)
{
	(void)arg;
	for (int i = 0; i < COUNT; i++) {
		if (pthread_mutex_lock(&sh->pi) != 0)
			return (void *)1L;
		sh->counter++;
		if (i % 1000 == 0)
			usleep(10); /* block while holding it */
		pthread_mutex_unlock(&sh->pi);
	}
	return NULL;
}

static const char *name(int e)
{
	return e == 0 ? "0" : e == EOWNERDEAD ? "EOWNERDEAD" : strerror(e);
}

static void recover(const char *what)
{
	int e = pthread_mutex_lock(&sh->robust);
	printf("%s: lock gives %s", what, name(e));
	if (e == EOWNERDEAD) {
		pthread_mutex_consistent(&sh->robust);
		pthread_mutex_unlock(&sh->robust);
		e = pthread_mutex_lock(&sh->robust);
		printf(", after consistent %s", name(e));
		pthread_mutex_unlock(&sh->robust);
	}
	printf("\n");
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t[4];
	void *r;
	long bad = 0;

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&sh->robust, &a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_STALLED);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&sh->pi, &a);

	pthread_t h;
	pthread_create(&h, NULL, take_and_exit, NULL);
	pthread_join(h, NULL);
	recover("owner thread exited");

	pid_t kid = fork();
	if (kid == 0) {
		pthread_t k;
		pthread_create(&k, NULL, take_and_exit, NULL);
		usleep(20000); /* k holds it, parked or gone */
		_exit(0);
	}
	waitpid(kid, NULL, 0);
	recover("owner process exited");

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, counter, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("PI mutex: counter %ld of %d, errors %ld\n", sh->counter,
	       4 * COUNT, bad);
	return 0;
}
