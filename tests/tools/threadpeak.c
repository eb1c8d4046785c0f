/* threadpeak CMD [ARGS...]: run CMD (stdin from /dev/null, stdout and stderr
 * inherited), sample the "Threads:" line of /proc/PID/status every
 * millisecond while it runs, and write "PEAK SECONDS" (peak OS thread count,
 * wall-clock seconds) to the file named by $THREADPEAK_OUT (not passed on to
 * CMD). Exits with CMD's status, or 128+N when CMD was killed by signal N.
 * SIGTERM/SIGINT/SIGHUP are forwarded to CMD, and sampling goes on until CMD
 * is gone. Built by tests/run/run-progs.sh itself, not by the Makefile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Threads: count of PATH, or -1 when it cannot be read (not there yet, or
 * already reaped). */
static int threads_of(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strstr(buf, "\nThreads:");
	return p ? atoi(p + 9) : -1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: THREADPEAK_OUT=FILE threadpeak CMD [ARGS...]\n");
		return 2;
	}
	const char *out = getenv("THREADPEAK_OUT");
	char *out_copy = out ? strdup(out) : NULL;
	unsetenv("THREADPEAK_OUT");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("threadpeak: fork");
		return 126;
	}
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0 && fd != 0) {
			dup2(fd, 0);
			close(fd);
		}
		execvp(argv[1], argv + 1);
		fprintf(stderr, "threadpeak: exec %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	child_pid = pid;

	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	int peak = 0, status = 0;
	const struct timespec tick = { 0, 1000000 };
	for (;;) {
		int n = threads_of(path);
		if (n > peak)
			peak = n;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			perror("threadpeak: waitpid");
			return 126;
		}
		nanosleep(&tick, NULL);
	}
	double secs = now() - t0;

	if (out_copy) {
		FILE *f = fopen(out_copy, "w");
		if (f) {
			fprintf(f, "%d %.2f\n", peak, secs);
			fclose(f);
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 126;
}
