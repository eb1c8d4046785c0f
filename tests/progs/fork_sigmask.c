// fork_sigmask: a child of fork or posix_spawn has its parent thread's
// signal mask, and so has what it execs. Under goshim the parent thread's
// kernel mask lets SIGURG through (preemption) even where the goroutine
// blocks it; the child must block it as the program asked. A thread
// blocks SIGURG and SIGUSR1, then forks twice: one child reads its own
// mask from /proc, the other execs cat on /proc/self/status, whose mask
// the parent reads through a pipe; then posix_spawn runs the same cat.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "SIGURG n SIGUSR1 n" from a status file's SigBlk line. */
static void report(const char *who, FILE *f)
{
	char line[256];
	unsigned long long blk = 0;
	int found = 0;

	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SigBlk: %llx", &blk) == 1)
			found = 1;
	if (!found) {
		printf("%s: no SigBlk line\n", who);
		return;
	}
	printf("%s: SIGURG %d SIGUSR1 %d\n", who,
	       (int)(blk >> (SIGURG - 1) & 1), (int)(blk >> (SIGUSR1 - 1) & 1));
}

extern char **environ;

static int wait_ok(pid_t pid)
{
	int st;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0;
}

static void *run(void *arg)
{
	sigset_t set;
	int fds[2];
	(void)arg;

	sigemptyset(&set);
	sigaddset(&set, SIGURG);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = fopen("/proc/self/status", "r");
		if (f == NULL)
			_exit(1);
		report("child", f);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || !wait_ok(pid)) {
		printf("first child failed\n");
		return NULL;
	}

	if (pipe(fds) != 0) {
		perror("pipe");
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl("/bin/cat", "cat", "/proc/self/status", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	report("exec'd cat", f);
	fclose(f);
	if (pid < 0 || !wait_ok(pid)) {
		printf("second child failed\n");
		return NULL;
	}

	posix_spawn_file_actions_t fa;
	char *argv[] = { "cat", "/proc/self/status", NULL };
	if (pipe(fds) != 0) {
		perror("pipe");
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	int err = posix_spawn(&pid, "/bin/cat", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err != 0) {
		printf("posix_spawn: %s\n", strerror(err));
		return NULL;
	}
	f = fdopen(fds[0], "r");
	report("posix_spawn'd cat", f);
	fclose(f);
	if (!wait_ok(pid))
		printf("spawned child failed\n");
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, run, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
