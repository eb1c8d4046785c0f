// fd_child: children made by fork+exec, posix_spawn and /bin/sh see the
// blocking mode the program set on the fds they inherit, never one goshim
// set, while the parent's threads are blocked reading those very pipes and
// sockets. One pipe the program made O_NONBLOCK itself; the rest blocking.
// The children read the flags from /proc/self/fdinfo (the kernel's word,
// with no goshim in the way) and print them; then the parent's readers
// get their data and the flags in the parent are unchanged too.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define NFD 4

static void die(const char *what)
{
	fprintf(stderr, "fd_child: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* "report FD...": each fd's O_NONBLOCK from /proc/self/fdinfo. */
static int report(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		char path[64], line[256];
		unsigned long flags = 0;
		snprintf(path, sizeof path, "/proc/self/fdinfo/%s", argv[i]);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			die(path);
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "flags: %lo", &flags) == 1)
				break;
		fclose(f);
		printf("  %s fd %d: %s\n", argv[1], i - 2,
		       (flags & O_NONBLOCK) ? "non-blocking" : "blocking");
	}
	return 0;
}

struct reader {
	int fd;
	ssize_t n;
};

static void *do_read(void *arg)
{
	struct reader *r = arg;
	char buf[16];
	r->n = read(r->fd, buf, sizeof buf);
	return NULL;
}

static void wait_child(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		die("child");
}

int main(int argc, char **argv)
{
	int p[2], q[2], s[2], fds[NFD], wfd[NFD];
	struct reader rd[NFD];
	pthread_t t[NFD];
	char a[NFD][12];
	char *args[NFD + 3];

	if (argc > 1)
		return strcmp(argv[1], "report") == 0 ? report(argc, argv) : 2;
	if (pipe(p) || pipe(q) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("setup");
	if (fcntl(q[0], F_SETFL, O_NONBLOCK))
		die("F_SETFL");
	/* Read ends: pipe p, pipe q (non-blocking), socket s[0] and s[1]. */
	fds[0] = p[0];
	fds[1] = q[0];
	fds[2] = s[0];
	fds[3] = s[1];
	wfd[0] = p[1];
	wfd[1] = q[1];
	wfd[2] = s[1];
	wfd[3] = s[0];
	for (int i = 0; i < NFD; i++) {
		if (i == 1)
			continue; /* a read there would just say EAGAIN */
		rd[i] = (struct reader){ .fd = fds[i] };
		if (pthread_create(&t[i], NULL, do_read, &rd[i]))
			die("pthread_create");
	}
	usleep(20000);

	args[0] = "fd_child";
	args[1] = "report";
	for (int i = 0; i < NFD; i++) {
		snprintf(a[i], sizeof a[i], "%d", fds[i]);
		args[2 + i] = a[i];
	}
	args[NFD + 2] = NULL;

	fflush(stdout);
	printf("fork+exec child, while the parent's threads read:\n");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execv("/proc/self/exe", args);
		_exit(127);
	}
	wait_child(pid);

	printf("posix_spawn child:\n");
	fflush(stdout);
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ))
		die("posix_spawn");
	wait_child(pid);

	printf("/bin/sh child:\n");
	fflush(stdout);
	char cmd[256];
	snprintf(cmd, sizeof cmd,
		 "for fd in %d %d %d %d; do "
		 "sed -n 's/^flags:[[:space:]]*/  fd flags /p' /proc/self/fdinfo/$fd; "
		 "done",
		 fds[0], fds[1], fds[2], fds[3]);
	if (system(cmd) != 0)
		die("system");

	for (int i = 0; i < NFD; i++)
		if (i != 1 && write(wfd[i], "data", 4) != 4)
			die("write");
	int ok = 1;
	for (int i = 0; i < NFD; i++) {
		if (i == 1)
			continue;
		pthread_join(t[i], NULL);
		ok &= rd[i].n == 4;
	}
	printf("the parent's readers got their data: %s\n", ok ? "yes" : "no");
	for (int i = 0; i < NFD; i++)
		printf("parent fd %d: %s\n", i,
		       (fcntl(fds[i], F_GETFL) & O_NONBLOCK) ? "non-blocking"
							     : "blocking");
	return ok ? 0 : 1;
}
