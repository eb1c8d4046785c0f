// pshared_cond: process-shared condition variables between two processes.
// Two producer threads here put 20,000 numbers into a 16-slot ring in
// shared memory; two consumer threads in a second process (this program,
// spawned with "child") take them out, under one process-shared mutex,
// waiting on "not full" and "not empty" conds (signal). The consumer that
// takes the last number wakes the other with a broadcast. Count and sum
// are exact.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ITEMS 10000 /* per producer */
#define THREADS 2   /* producers here, consumers there */
#define SLOTS 16

extern char **environ;

struct shared {
	pthread_mutex_t mu;
	pthread_cond_t not_full, not_empty;
	long ring[SLOTS];
	int head, len;
	long taken, sum;
};

static struct shared *sh;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "pshared_cond: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void *producer(void *arg)
{
	long base = (long)(intptr_t)arg * ITEMS;
	for (long i = 1; i <= ITEMS; i++) {
		check(pthread_mutex_lock(&sh->mu), "lock");
		while (sh->len == SLOTS)
			check(pthread_cond_wait(&sh->not_full, &sh->mu),
			      "wait not_full");
		sh->ring[(sh->head + sh->len++) % SLOTS] = base + i;
		check(pthread_cond_signal(&sh->not_empty), "signal");
		check(pthread_mutex_unlock(&sh->mu), "unlock");
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	check(pthread_mutex_lock(&sh->mu), "lock");
	for (;;) {
		while (sh->len == 0 && sh->taken < THREADS * ITEMS)
			check(pthread_cond_wait(&sh->not_empty, &sh->mu),
			      "wait not_empty");
		if (sh->taken == THREADS * ITEMS)
			break;
		sh->sum += sh->ring[sh->head];
		sh->head = (sh->head + 1) % SLOTS;
		sh->len--;
		if (++sh->taken == THREADS * ITEMS)
			check(pthread_cond_broadcast(&sh->not_empty),
			      "broadcast");
		check(pthread_cond_signal(&sh->not_full), "signal");
	}
	check(pthread_mutex_unlock(&sh->mu), "unlock");
	return NULL;
}

static void run(void *(*fn)(void *))
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		check(pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i),
		      "create");
	for (int i = 0; i < THREADS; i++)
		check(pthread_join(t[i], NULL), "join");
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	char fdarg[16];
	pid_t pid;
	int fd, status;

	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED,
			  atoi(argv[2]), 0);
		if (sh == MAP_FAILED)
			check(errno, "child mmap");
		run(consumer);
		return 0;
	}
	fd = memfd_create("pshared_cond", 0);
	if (fd < 0 || ftruncate(fd, sizeof *sh))
		check(errno, "memfd");
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		check(errno, "mmap");
	check(pthread_mutexattr_init(&ma), "mutexattr_init");
	check(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED),
	      "mutexattr_setpshared");
	check(pthread_mutex_init(&sh->mu, &ma), "mutex_init");
	check(pthread_condattr_init(&ca), "condattr_init");
	check(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED),
	      "condattr_setpshared");
	check(pthread_cond_init(&sh->not_full, &ca), "cond_init");
	check(pthread_cond_init(&sh->not_empty, &ca), "cond_init");
	snprintf(fdarg, sizeof fdarg, "%d", fd);
	char *args[] = { argv[0], "child", fdarg, NULL };
	check(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ),
	      "posix_spawn");
	run(producer);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pshared_cond: child failed\n");
		return 1;
	}
	long n = THREADS * ITEMS;
	printf("taken %ld of %ld, sum %ld (expected %ld)\n", sh->taken, n,
	       sh->sum, n * (n + 1) / 2);
	check(pthread_cond_destroy(&sh->not_empty), "cond_destroy");
	check(pthread_cond_destroy(&sh->not_full), "cond_destroy");
	check(pthread_mutex_destroy(&sh->mu), "mutex_destroy");
	return sh->taken == n && sh->sum == n * (n + 1) / 2 ? 0 : 1;
}
