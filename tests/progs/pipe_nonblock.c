// pipe_nonblock: a program that makes its fds non-blocking itself keeps
// its EAGAIN, and goshim never makes the program's fds non-blocking.
// Pipes with O_NONBLOCK set by fcntl and by pipe2; sockets with
// SOCK_NONBLOCK and with O_NONBLOCK set later: read, recv, write to a full
// pipe, accept, and connect (EINPROGRESS, then poll and SO_ERROR). Blocking
// fds read and written by goroutines that had to wait still say blocking
// in F_GETFL afterwards, and a blocking connect to a closed port fails with
// ECONNREFUSED.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "pipe_nonblock: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "pipe_nonblock: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static int nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		die("F_GETFL");
	return !!(fl & O_NONBLOCK);
}

static void *write_later(void *arg)
{
	int fd = (int)(long)arg;
	usleep(20000);
	if (write(fd, "late", 4) != 4)
		die("write");
	return NULL;
}

static void pipes(void)
{
	int p[2];
	char buf[65536];

	if (pipe(p))
		die("pipe");
	if (fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK))
		die("F_SETFL");
	errno = 0;
	check(read(p[0], buf, 1) == -1 && errno == EAGAIN,
	      "read of an empty O_NONBLOCK pipe: EAGAIN");
	check(!nonblocking(p[1]), "its write end stays blocking");
	if (write(p[1], "x", 1) != 1)
		die("write");
	check(read(p[0], buf, sizeof buf) == 1, "then the byte written");
	close(p[0]);
	close(p[1]);

	if (pipe2(p, O_NONBLOCK))
		die("pipe2");
	memset(buf, 'f', sizeof buf);
	ssize_t w = write(p[1], buf, sizeof buf);
	check(w == (ssize_t)sizeof buf, "pipe2(O_NONBLOCK): a pipe's worth fits");
	errno = 0;
	check(write(p[1], buf, 1) == -1 && errno == EAGAIN,
	      "write to a full O_NONBLOCK pipe: EAGAIN");
	w = write(p[1], buf, 0);
	check(w == 0, "a zero-length write: 0");
	close(p[0]);
	close(p[1]);

	/* Blocking pipe, a reader that has to wait: the flags stay. */
	if (pipe(p))
		die("pipe");
	pthread_t t;
	if (pthread_create(&t, NULL, write_later, (void *)(long)p[1]))
		die("pthread_create");
	check(read(p[0], buf, sizeof buf) == 4, "a blocking read waits for data");
	pthread_join(t, NULL);
	check(!nonblocking(p[0]) && !nonblocking(p[1]),
	      "after waiting, both ends are still blocking");
	close(p[0]);
	close(p[1]);
}

static void sockets(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	char buf[16];
	int l, c, s, e;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 8) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	errno = 0;
	check(accept(l, NULL, NULL) == -1 && errno == EAGAIN,
	      "accept on a SOCK_NONBLOCK listener: EAGAIN");

	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c < 0)
		die("socket");
	e = connect(c, (struct sockaddr *)&a, sizeof a);
	check(e == 0 || errno == EINPROGRESS,
	      "non-blocking connect: done or EINPROGRESS");
	struct pollfd pf = { .fd = c, .events = POLLOUT };
	check(poll(&pf, 1, 5000) == 1 && (pf.revents & POLLOUT), "poll: connected");
	int err = -1;
	socklen_t el = sizeof err;
	check(getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0,
	      "SO_ERROR: 0");
	pf = (struct pollfd){ .fd = l, .events = POLLIN };
	check(poll(&pf, 1, 5000) == 1, "poll: the listener has a connection");
	s = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	check(s >= 0 && nonblocking(s), "accept4(SOCK_NONBLOCK) gives it");
	errno = 0;
	check(recv(s, buf, sizeof buf, 0) == -1 && errno == EAGAIN,
	      "recv with nothing there: EAGAIN");
	errno = 0;
	check(read(c, buf, sizeof buf) == -1 && errno == EAGAIN,
	      "read likewise");
	if (send(c, "hi", 2, 0) != 2)
		die("send");
	pf = (struct pollfd){ .fd = s, .events = POLLIN };
	check(poll(&pf, 1, 5000) == 1 && recv(s, buf, sizeof buf, 0) == 2,
	      "then the data");
	close(s);
	close(c);

	/* Blocking sockets, made non-blocking later by the program. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a))
		die("connect");
	check(!nonblocking(c), "a blocking connect leaves the socket blocking");
	pf = (struct pollfd){ .fd = l, .events = POLLIN };
	if (poll(&pf, 1, 5000) != 1)
		die("poll");
	s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	check(!nonblocking(s), "accept gives a blocking socket");
	if (fcntl(s, F_SETFL, O_NONBLOCK))
		die("F_SETFL");
	errno = 0;
	check(recv(s, buf, sizeof buf, 0) == -1 && errno == EAGAIN,
	      "O_NONBLOCK set by fcntl: recv says EAGAIN");
	errno = 0;
	check(recv(c, buf, sizeof buf, MSG_DONTWAIT) == -1 && errno == EAGAIN,
	      "MSG_DONTWAIT on a blocking socket: EAGAIN");
	close(s);
	close(c);
	close(l);

	/* Nobody listens there any more. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0)
		die("socket");
	errno = 0;
	check(connect(c, (struct sockaddr *)&a, sizeof a) == -1 &&
		      errno == ECONNREFUSED,
	      "blocking connect to a closed port: ECONNREFUSED");
	check(!nonblocking(c), "and the socket is still blocking");
	close(c);
}

int main(void)
{
	pipes();
	sockets();
	printf("OK\n");
	return 0;
}
