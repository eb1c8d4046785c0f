// sock_timeo: SO_RCVTIMEO and SO_SNDTIMEO, as Linux honours them.
// - recv, read, recvmsg on an empty socket: EAGAIN after the timeout (at
//   least the timeout, less one 4 ms kernel tick, which Linux may round
//   off); MSG_WAITALL with part of the data there: that part.
// - send of more than the socket holds, nobody reading: the count sent
//   so far; again on the full socket: EAGAIN.
// - accept on a listener with SO_RCVTIMEO: EAGAIN; connect to a listener
//   whose backlog is full, with SO_SNDTIMEO: EINPROGRESS.
// - The timeout set through a dup, and through syscall(), counts for the
//   original fd too.
// - 100 threads, each timing out on its own socket at GOMAXPROCS=1: they
//   wait without an OS thread each, all get EAGAIN.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=101
// goshim-test: timeout=60
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TIMEO_MS 60
#define SLACK_MS 5 /* one kernel tick at HZ=250, and some */
#define THREADS 100

static void die(const char *what)
{
	fprintf(stderr, "sock_timeo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "sock_timeo: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_timeo(int fd, int opt, int ms)
{
	struct timeval tv = { ms / 1000, ms % 1000 * 1000 };
	if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv))
		die("setsockopt");
}

static int waited(long t0)
{
	return now_ms() - t0 >= TIMEO_MS - SLACK_MS;
}

static void receiving(void)
{
	int s[2];
	char buf[64];
	long t0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("socketpair");
	set_timeo(s[0], SO_RCVTIMEO, TIMEO_MS);
	struct timeval tv;
	socklen_t len = sizeof tv;
	check(getsockopt(s[0], SOL_SOCKET, SO_RCVTIMEO, &tv, &len) == 0 &&
		      tv.tv_sec == 0 && tv.tv_usec == TIMEO_MS * 1000,
	      "getsockopt gives SO_RCVTIMEO back");

	t0 = now_ms();
	errno = 0;
	check(recv(s[0], buf, sizeof buf, 0) == -1 && errno == EAGAIN &&
		      waited(t0),
	      "recv on an empty socket: EAGAIN after the timeout");
	t0 = now_ms();
	errno = 0;
	check(read(s[0], buf, sizeof buf) == -1 && errno == EAGAIN &&
		      waited(t0),
	      "read: likewise");
	struct iovec iov = { buf, sizeof buf };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	t0 = now_ms();
	errno = 0;
	check(recvmsg(s[0], &m, 0) == -1 && errno == EAGAIN && waited(t0),
	      "recvmsg: likewise");

	if (write(s[1], "abc", 3) != 3)
		die("write");
	t0 = now_ms();
	check(recv(s[0], buf, sizeof buf, MSG_WAITALL) == 3 && waited(t0),
	      "MSG_WAITALL, part there: that part after the timeout");

	/* Through a dup, and through syscall(): the same socket. */
	int d = dup(s[0]);
	set_timeo(d, SO_RCVTIMEO, 0);
	struct timeval ttv = { 0, TIMEO_MS * 1000 };
	if (syscall(SYS_setsockopt, d, SOL_SOCKET, SO_RCVTIMEO, &ttv,
		    sizeof ttv))
		die("syscall setsockopt");
	t0 = now_ms();
	errno = 0;
	check(recv(s[0], buf, sizeof buf, 0) == -1 && errno == EAGAIN &&
		      waited(t0),
	      "timeout set through a dup by syscall(): honoured");
	close(d);
	close(s[0]);
	close(s[1]);
}

static void sending(void)
{
	int s[2];
	size_t big = 8 << 20;
	char *buf = calloc(1, big);
	long t0;
	ssize_t n;

	if (buf == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("setup");
	set_timeo(s[0], SO_SNDTIMEO, TIMEO_MS);
	t0 = now_ms();
	n = send(s[0], buf, big, 0);
	check(n > 0 && (size_t)n < big && waited(t0),
	      "send of more than fits: the count sent, after the timeout");
	t0 = now_ms();
	errno = 0;
	check(write(s[0], buf, big) == -1 && errno == EAGAIN && waited(t0),
	      "write to the full socket: EAGAIN after the timeout");
	free(buf);
	close(s[0]);
	close(s[1]);
}

static void accepting(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int l, c[8], timedout = 0;
	long t0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 0) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	set_timeo(l, SO_RCVTIMEO, TIMEO_MS);
	t0 = now_ms();
	errno = 0;
	check(accept(l, NULL, NULL) == -1 && errno == EAGAIN && waited(t0),
	      "accept with nobody connecting: EAGAIN after the timeout");

	/* Backlog 0 holds one connection; the next handshakes are not
	 * answered, and a connect waits for them. */
	for (int i = 0; i < 8; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i] < 0)
			die("socket");
		set_timeo(c[i], SO_SNDTIMEO, TIMEO_MS);
		t0 = now_ms();
		errno = 0;
		if (connect(c[i], (struct sockaddr *)&a, sizeof a) == -1) {
			if (errno != EINPROGRESS || !waited(t0))
				die("connect");
			timedout++;
		}
	}
	check(timedout > 0,
	      "connect to a full backlog: EINPROGRESS after the timeout");
	for (int i = 0; i < 8; i++)
		close(c[i]);
	close(l);
}

static void *time_out(void *unused)
{
	int s[2];
	char c;

	(void)unused;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("socketpair");
	set_timeo(s[0], SO_RCVTIMEO, TIMEO_MS);
	long t0 = now_ms();
	ssize_t n = recv(s[0], &c, 1, 0);
	int ok = n == -1 && errno == EAGAIN && waited(t0);
	close(s[0]);
	close(s[1]);
	return (void *)(long)ok;
}

static void many(void)
{
	pthread_t t[THREADS];
	int ok = 0;

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, time_out, NULL))
			die("pthread_create");
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		ok += (long)r;
	}
	check(ok == THREADS, "100 threads timed out, each with EAGAIN");
}

int main(void)
{
	receiving();
	sending();
	accepting();
	many();
	printf("OK\n");
	return 0;
}
