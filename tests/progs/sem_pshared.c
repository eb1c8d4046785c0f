// sem_pshared: unnamed process-shared semaphores (sem_init pshared=1) in
// shared memory, used by a parent and a forked child: ping-pong 2,000
// times, then both add 20,000 times to a counter guarded by a third one
// used as a mutex. The counter is exact and the values are as expected.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000
#define ADDS 20000

struct shared {
	sem_t ping, pong, mutex;
	long counter;
};

static void die(const char *what)
{
	fprintf(stderr, "sem_pshared: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add(struct shared *sh)
{
	for (int i = 0; i < ADDS; i++) {
		if (sem_wait(&sh->mutex) != 0)
			die("sem_wait");
		sh->counter++;
		if (sem_post(&sh->mutex) != 0)
			die("sem_post");
	}
}

int main(void)
{
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, v[3];

	if (sh == MAP_FAILED)
		die("mmap");
	if (sem_init(&sh->ping, 1, 0) || sem_init(&sh->pong, 1, 0) ||
	    sem_init(&sh->mutex, 1, 1))
		die("sem_init");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (int i = 0; i < ROUNDS; i++) {
			if (sem_wait(&sh->ping) != 0)
				die("child sem_wait");
			if (sem_post(&sh->pong) != 0)
				die("child sem_post");
		}
		add(sh);
		_exit(0);
	}
	for (int i = 0; i < ROUNDS; i++) {
		if (sem_post(&sh->ping) != 0)
			die("sem_post");
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 30;
		if (sem_clockwait(&sh->pong, CLOCK_MONOTONIC, &ts) != 0)
			die("sem_clockwait");
	}
	add(sh);
	waitpid(pid, &status, 0);
	printf("%d rounds of ping-pong, child exit status %d\n", ROUNDS,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	printf("counter: %ld\n", sh->counter);
	sem_getvalue(&sh->ping, &v[0]);
	sem_getvalue(&sh->pong, &v[1]);
	sem_getvalue(&sh->mutex, &v[2]);
	printf("values at the end: %d %d %d\n", v[0], v[1], v[2]);
	printf("destroy: %d %d %d\n", sem_destroy(&sh->ping),
	       sem_destroy(&sh->pong), sem_destroy(&sh->mutex));
	return sh->counter == 2 * ADDS ? 0 : 1;
}
