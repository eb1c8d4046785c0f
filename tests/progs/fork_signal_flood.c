// fork_signal_flood: the child of a threaded parent, flooded with 2,000
// SIGUSR1s while it sleeps in 1 ms steps and then makes a thread of its
// own, runs its handler and ends normally; 20 children one after another.
// (A handler in such a child once took it for a system call goshim's fork
// had entered and aborted: "acquirep: invalid P state".)
// goshim-test: shim-max-threads=GOMAXPROCS+6
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

static void *nap(void *arg)
{
	(void)arg;
	usleep(20000);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int ok = 0;

	pthread_create(&t, NULL, nap, NULL);
	signal(SIGUSR1, on_usr1);
	for (int round = 0; round < 20; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < 200; i++) {
				struct timespec ts = { 0, 1000000 };
				nanosleep(&ts, NULL);
			}
			pthread_t x;
			pthread_create(&x, NULL, nap, NULL);
			pthread_join(x, NULL);
			_exit(got > 0 ? 0 : 1);
		}
		for (int i = 0; i < 2000; i++)
			kill(pid, SIGUSR1);
		int st;
		waitpid(pid, &st, 0);
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	pthread_join(t, NULL);
	printf("20 flooded children: %d ran the handler and exited 0\n", ok);
	return ok != 20;
}
