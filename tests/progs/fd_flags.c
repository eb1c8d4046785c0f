// fd_flags: fcntl F_GETFL / F_SETFL and ioctl FIONBIO are the program's
// own view of its fds: goshim never sets O_NONBLOCK where the program
// can see it.
// - After blocking reads and writes that had to wait (pipe, socket), a
//   blocking accept and a blocking connect (both waiting), F_GETFL
//   returns exactly what the program set (O_APPEND on the pipe, nothing
//   on the sockets).
// - A thread reads F_GETFL of sockets while another connects them, over
//   and over: it never sees O_NONBLOCK.
// - FIONBIO on: read gives EAGAIN and F_GETFL shows O_NONBLOCK; off: a
//   read waits again.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONNECTS 300

static void die(const char *what)
{
	fprintf(stderr, "fd_flags: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fd_flags: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static int getfl(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		die("F_GETFL");
	return fl;
}

static void *write_later(void *arg)
{
	int fd = (int)(long)arg;
	usleep(20000);
	if (write(fd, "late", 4) != 4)
		die("write");
	return NULL;
}

static void *drain_later(void *arg)
{
	int fd = (int)(long)arg;
	char buf[65536];
	usleep(20000);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return NULL;
	}
}

static pthread_t start(void *(*fn)(void *), int fd)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, (void *)(long)fd))
		die("pthread_create");
	return t;
}

static void waited_pipe(void)
{
	int p[2], fl0, fl1;
	char buf[65536];

	if (pipe(p))
		die("pipe");
	if (fcntl(p[1], F_SETFL, O_APPEND))
		die("F_SETFL");
	fl0 = getfl(p[0]);
	fl1 = getfl(p[1]);
	pthread_t t = start(write_later, p[1]);
	check(read(p[0], buf, sizeof buf) == 4, "pipe: a read that waited");
	pthread_join(t, NULL);
	/* Fill the pipe, then write more while a reader drains later. */
	memset(buf, 'x', sizeof buf);
	if (write(p[1], buf, sizeof buf) != sizeof buf)
		die("write");
	t = start(drain_later, p[0]);
	check(write(p[1], buf, sizeof buf) == sizeof buf,
	      "pipe: a write that waited");
	check(getfl(p[1]) == fl1, "pipe: the write end's flags are as set");
	close(p[1]);
	pthread_join(t, NULL);
	check(getfl(p[0]) == fl0, "pipe: the read end's flags are as they were");
	printf("pipe flags: read end %#o, write end %#o\n", fl0, fl1);
	close(p[0]);
}

static void waited_sockets(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int l, c, s;
	char buf[16];

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 8) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0)
		die("socket");
	int fl_l = getfl(l), fl_c = getfl(c);
	check(connect(c, (struct sockaddr *)&a, sizeof a) == 0,
	      "socket: a blocking connect");
	s = accept(l, NULL, NULL);
	check(s >= 0, "socket: a blocking accept");
	pthread_t t = start(write_later, c);
	check(recv(s, buf, sizeof buf, 0) == 4, "socket: a recv that waited");
	pthread_join(t, NULL);
	check(getfl(l) == fl_l && getfl(c) == fl_c && !(getfl(s) & O_NONBLOCK),
	      "socket: listener, client and accepted flags as the program set");
	check(!(fl_l & O_NONBLOCK) && !(fl_c & O_NONBLOCK),
	      "socket: none of them non-blocking");
	close(s);
	close(c);
	close(l);
}

static _Atomic int current = -1, stop;
static int seen_nonblock, looks;

static void *look_at_flags(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop)) {
		int fd = atomic_load(&current);
		int fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
		if (fl >= 0) {
			looks++;
			seen_nonblock += !!(fl & O_NONBLOCK);
		}
		sched_yield();
	}
	return NULL;
}

static void racing_connects(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int l;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) ||
	    listen(l, CONNECTS) || getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	pthread_t t = start(look_at_flags, 0);
	for (int i = 0; i < CONNECTS; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0)
			die("socket");
		atomic_store(&current, c);
		if (connect(c, (struct sockaddr *)&a, sizeof a))
			die("connect");
		atomic_store(&current, -1);
		int s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept");
		close(s);
		close(c);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	check(seen_nonblock == 0,
	      "F_GETFL during connects never shows O_NONBLOCK");
	close(l);
}

static void fionbio(void)
{
	int p[2], on = 1, off = 0;
	char c;

	if (pipe(p))
		die("pipe");
	check(ioctl(p[0], FIONBIO, &on) == 0, "FIONBIO on");
	check(getfl(p[0]) & O_NONBLOCK, "F_GETFL shows O_NONBLOCK");
	errno = 0;
	check(read(p[0], &c, 1) == -1 && errno == EAGAIN,
	      "read of an empty pipe: EAGAIN");
	check(!(getfl(p[1]) & O_NONBLOCK), "the other end is untouched");
	check(ioctl(p[0], FIONBIO, &off) == 0 && !(getfl(p[0]) & O_NONBLOCK),
	      "FIONBIO off");
	pthread_t t = start(write_later, p[1]);
	check(read(p[0], &c, 1) == 1 && c == 'l', "a read waits again");
	pthread_join(t, NULL);
	errno = 0;
	check(ioctl(12345, FIONBIO, &on) == -1 && errno == EBADF,
	      "FIONBIO on a closed fd: EBADF");
	check(fcntl(12345, F_GETFL) == -1 && errno == EBADF,
	      "F_GETFL on a closed fd: EBADF");
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	waited_pipe();
	waited_sockets();
	racing_connects();
	fionbio();
	printf("OK\n");
	return 0;
}
