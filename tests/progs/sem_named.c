// sem_named: named semaphores between two processes. The parent creates two
// with sem_open(O_CREAT | O_EXCL), forks, and parent and child play
// ping-pong 2,000 times, the child opening them by name; sem_open O_EXCL of
// an existing name says EEXIST, sem_unlink removes the names (ENOENT after),
// and the values are 0 at the end.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000

static void die(const char *what)
{
	fprintf(stderr, "sem_named: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(void)
{
	char ping_name[64], pong_name[64];
	int status, v1 = -1, v2 = -1;

	snprintf(ping_name, sizeof ping_name, "/goshim-sem-named-ping-%d",
		 (int)getpid());
	snprintf(pong_name, sizeof pong_name, "/goshim-sem-named-pong-%d",
		 (int)getpid());
	sem_t *ping = sem_open(ping_name, O_CREAT | O_EXCL, 0600, 0);
	sem_t *pong = sem_open(pong_name, O_CREAT | O_EXCL, 0600, 0);
	if (ping == SEM_FAILED || pong == SEM_FAILED)
		die("sem_open");
	sem_t *again = sem_open(ping_name, O_CREAT | O_EXCL, 0600, 0);
	printf("sem_open O_EXCL of an existing name: %s\n",
	       again == SEM_FAILED && errno == EEXIST ? "EEXIST" : "other");

	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		sem_t *a = sem_open(ping_name, 0);
		sem_t *b = sem_open(pong_name, 0);
		if (a == SEM_FAILED || b == SEM_FAILED)
			die("child sem_open");
		for (int i = 0; i < ROUNDS; i++) {
			if (sem_wait(a) != 0)
				die("child sem_wait");
			if (sem_post(b) != 0)
				die("child sem_post");
		}
		sem_close(a);
		sem_close(b);
		_exit(0);
	}
	for (int i = 0; i < ROUNDS; i++) {
		if (sem_post(ping) != 0)
			die("sem_post");
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 30;
		if (sem_timedwait(pong, &ts) != 0)
			die("sem_timedwait");
	}
	waitpid(pid, &status, 0);
	printf("%d rounds of ping-pong, child exit status %d\n", ROUNDS,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	sem_getvalue(ping, &v1);
	sem_getvalue(pong, &v2);
	printf("values at the end: %d %d\n", v1, v2);
	printf("trywait: %s\n",
	       sem_trywait(ping) == -1 && errno == EAGAIN ? "EAGAIN" : "other");
	printf("sem_unlink: %d %d\n", sem_unlink(ping_name),
	       sem_unlink(pong_name));
	printf("sem_unlink again: %s\n",
	       sem_unlink(ping_name) == -1 && errno == ENOENT ? "ENOENT"
							      : "other");
	printf("sem_close: %d %d\n", sem_close(ping), sem_close(pong));
	return 0;
}
