// pshared_barrier: a process-shared barrier (and its destroy) between two
// processes. Two threads here and two in a second process (this program,
// spawned with "child") meet at one barrier in shared memory 1,000 times;
// each adds 1 to a shared counter before the barrier, and the one thread
// that gets PTHREAD_BARRIER_SERIAL_THREAD checks that all four adds of the
// round are there before a second barrier lets the next round start.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 1000
#define PER_PROCESS 2

extern char **environ;

struct shared {
	pthread_barrier_t bar;
	atomic_long counter;
	atomic_int serials, mismatches;
};

static struct shared *sh;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "pshared_barrier: %s: %s\n", what,
			strerror(err));
		exit(1);
	}
}

static int barrier_wait(void)
{
	int r = pthread_barrier_wait(&sh->bar);
	if (r != PTHREAD_BARRIER_SERIAL_THREAD)
		check(r, "barrier_wait");
	return r;
}

static void *rounds(void *arg)
{
	(void)arg;
	for (long r = 1; r <= ROUNDS; r++) {
		atomic_fetch_add(&sh->counter, 1);
		if (barrier_wait() == PTHREAD_BARRIER_SERIAL_THREAD) {
			atomic_fetch_add(&sh->serials, 1);
			if (atomic_load(&sh->counter) != 2 * PER_PROCESS * r)
				atomic_fetch_add(&sh->mismatches, 1);
		}
		barrier_wait();
	}
	return NULL;
}

static void run_threads(void)
{
	pthread_t t[PER_PROCESS];
	for (int i = 0; i < PER_PROCESS; i++)
		check(pthread_create(&t[i], NULL, rounds, NULL), "create");
	for (int i = 0; i < PER_PROCESS; i++)
		check(pthread_join(t[i], NULL), "join");
}

int main(int argc, char **argv)
{
	pthread_barrierattr_t ba;
	char fdarg[16];
	pid_t pid;
	int fd, status;

	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED,
			  atoi(argv[2]), 0);
		if (sh == MAP_FAILED)
			check(errno, "child mmap");
		run_threads();
		return 0;
	}
	fd = memfd_create("pshared_barrier", 0);
	if (fd < 0 || ftruncate(fd, sizeof *sh))
		check(errno, "memfd");
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		check(errno, "mmap");
	check(pthread_barrierattr_init(&ba), "barrierattr_init");
	check(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED),
	      "barrierattr_setpshared");
	check(pthread_barrier_init(&sh->bar, &ba, 2 * PER_PROCESS),
	      "barrier_init");
	snprintf(fdarg, sizeof fdarg, "%d", fd);
	char *args[] = { argv[0], "child", fdarg, NULL };
	check(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ),
	      "posix_spawn");
	run_threads();
	check(pthread_barrier_destroy(&sh->bar), "barrier_destroy");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pshared_barrier: child failed\n");
		return 1;
	}
	printf("rounds %d, serial threads %d, counter %ld, mismatches %d\n",
	       ROUNDS, atomic_load(&sh->serials), atomic_load(&sh->counter),
	       atomic_load(&sh->mismatches));
	return atomic_load(&sh->serials) == ROUNDS &&
			       atomic_load(&sh->mismatches) == 0
		       ? 0
		       : 1;
}
