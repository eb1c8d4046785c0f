// fork_native: a child of fork that makes no thread is a plain process
// again, though its parent made threads (so goshim's scheduler ran there):
// one OS thread, no fd of a runtime's (epoll, eventfd, /proc or cgroup
// files), the same caught, ignored and blocked signals, before and after
// it sleeps (an idle M must not start a monitor thread), and SIGQUIT's
// default action ends it. A caught signal ends its read of an empty pipe
// (EINTR, no SA_RESTART). A child that then makes a thread gets it run.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_usr1(int sig)
{
	(void)sig;
}

static void *work(void *arg)
{
	return (char *)arg + 1;
}

/* The status lines a native process and goshim's should share. */
static void status(const char *when)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f) {
		perror("status");
		exit(1);
	}
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Threads:", 8) ||
		    !strncmp(line, "SigBlk:", 7) ||
		    !strncmp(line, "SigIgn:", 7) ||
		    !strncmp(line, "SigCgt:", 7))
			printf("%s: %s", when, line);
	fclose(f);
}

/* fds of the kinds a runtime keeps: event polls, eventfds, /proc and
 * cgroup files. */
static void runtime_fds(const char *when)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d) {
		perror("fd");
		exit(1);
	}
	while ((e = readdir(d))) {
		char path[300], to[300];
		ssize_t len;
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		len = readlink(path, to, sizeof to - 1);
		if (len < 0)
			continue;
		to[len] = '\0';
		if (strstr(to, "eventpoll") || strstr(to, "eventfd") ||
		    !strncmp(to, "/proc/", 6) || !strncmp(to, "/sys/", 5)) {
			printf("%s: fd %s -> %s\n", when, e->d_name, to);
			n++;
		}
	}
	closedir(d);
	printf("%s: %d runtime fds\n", when, n);
}

static void run_child(void (*body)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		body();
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("child ended by signal %d\n", WTERMSIG(st));
	else
		printf("child exited %d\n", WEXITSTATUS(st));
	fflush(stdout);
}

static void plain(void)
{
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };

	status("at once");
	runtime_fds("at once");
	nanosleep(&ms50, NULL);
	usleep(20000);
	status("after sleeping");
	runtime_fds("after sleeping");
}

static void quit(void)
{
	struct rlimit none = { 0, 0 };

	setrlimit(RLIMIT_CORE, &none);
	fflush(stdout);
	kill(getpid(), SIGQUIT);
	usleep(200000);
	printf("still running after SIGQUIT\n");
}

static void pipe_read(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct itimerval it = { .it_value = { 0, 100000 } };
	int p[2];
	char c;

	if (pipe(p) != 0) {
		perror("pipe");
		return;
	}
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	ssize_t n = read(p[0], &c, 1);
	printf("read of an empty pipe: %zd (%s)\n", n,
	       n < 0 ? strerror(errno) : "-");
}

static void threads(void)
{
	pthread_t t;
	void *r;
	char base[2];

	if (pthread_create(&t, NULL, work, base) != 0) {
		printf("pthread_create failed\n");
		return;
	}
	pthread_join(t, &r);
	printf("thread in the child ran: %d\n", r == base + 1);
}

int main(void)
{
	pthread_t t;
	void *r;
	char base[2];
	sigset_t usr2;

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	signal(SIGUSR1, on_usr1);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	pthread_create(&t, NULL, work, base);
	pthread_join(t, &r);
	run_child(plain);
	run_child(quit);
	run_child(pipe_read);
	run_child(threads);
	return 0;
}
