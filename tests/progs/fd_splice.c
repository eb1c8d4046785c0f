// fd_splice: splice, tee, vmsplice, sendfile, copy_file_range, recvmmsg
// and sendmmsg wait the way their blocking calls do, at GOMAXPROCS=1.
// - 20 threads each splice from an empty pipe (and 20 from empty TCP and
//   unix sockets) into another pipe, until data comes; they wait
//   without an OS thread each.
// - Into a full socket (splice from a pipe, sendfile from a file) and a
//   full pipe (vmsplice, tee, sendfile): the call waits until a reader
//   makes room, and every byte arrives in order.
// - SPLICE_F_NONBLOCK, or O_NONBLOCK set by the program: EAGAIN at once.
//   Linux's errors: EINVAL for splice without a pipe, EBADF for bad fds.
// - copy_file_range between files.
// - recvmmsg waits for all its messages; MSG_WAITFORONE returns after the
//   first; the timeout is looked at only after each message and the time
//   left is written back. sendmmsg into a full stream socket finishes
//   every message.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=21
// goshim-test: timeout=60
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 20
#define BIG (1 << 20)

static void die(const char *what)
{
	fprintf(stderr, "fd_splice: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fd_splice: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg))
		die("pthread_create");
	return t;
}

static void *join(pthread_t t)
{
	void *r;
	if (pthread_join(t, &r))
		die("pthread_join");
	return r;
}

static void tcp_pair(int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	sv[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (sv[0] < 0 || connect(sv[0], (struct sockaddr *)&a, sizeof a))
		die("connect");
	sv[1] = accept(l, NULL, NULL);
	if (sv[1] < 0)
		die("accept");
	close(l);
}

/* ---- many splices waiting on empty inputs ------------------------------ */

struct waiter {
	int in, feed;	 /* splice reads in; the test writes feed */
	int out, drain;	 /* splice writes the pipe out; drain is its end */
	long got;
};

static void *splice_wait(void *arg)
{
	struct waiter *w = arg;
	w->got = splice(w->in, NULL, w->out, NULL, 100, 0);
	return NULL;
}

/* kind: 0 pipe, 1 unix socket, 2 TCP socket */
static void waiting_splices(const char *what, int kind)
{
	struct waiter w[WAITERS];
	pthread_t t[WAITERS];
	int ok = 0;
	char msg[100];

	for (int i = 0; i < WAITERS; i++) {
		int in[2], out[2];
		if (pipe(out))
			die("pipe");
		if (kind == 0 && pipe(in))
			die("pipe");
		if (kind == 1 && socketpair(AF_UNIX, SOCK_STREAM, 0, in))
			die("socketpair");
		if (kind == 2)
			tcp_pair(in);
		w[i] = (struct waiter){ .in = in[0], .feed = in[1],
					.out = out[1], .drain = out[0] };
		t[i] = start(splice_wait, &w[i]);
	}
	usleep(20000);
	for (int i = 0; i < WAITERS; i++)
		if (write(w[i].feed, "12345", 5) != 5)
			die("write");
	for (int i = 0; i < WAITERS; i++) {
		char buf[8];
		join(t[i]);
		ok += w[i].got == 5 && read(w[i].drain, buf, sizeof buf) == 5 &&
		      memcmp(buf, "12345", 5) == 0;
		close(w[i].in);
		close(w[i].feed);
		close(w[i].out);
		close(w[i].drain);
	}
	snprintf(msg, sizeof msg, "%d splices from empty %s waited for data",
		 WAITERS, what);
	check(ok == WAITERS, msg);
}

/* ---- into full sockets and pipes ---------------------------------------- */

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + i / 251);
}

struct drain {
	int fd;
	size_t want, got;
	int bad;
};

/* Read want bytes after a pause, checking the pattern. */
static void *drain_later(void *arg)
{
	struct drain *d = arg;
	static __thread unsigned char buf[65536];

	usleep(30000);
	while (d->got < d->want) {
		ssize_t n = read(d->fd, buf, sizeof buf);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			d->bad += buf[i] != pattern(d->got + (size_t)i);
		d->got += (size_t)n;
	}
	return NULL;
}

/* Fill fd (non-blocking for the moment) with the pattern; the count. */
static size_t fill(int fd)
{
	static unsigned char buf[4096];
	size_t n = 0;
	ssize_t w;
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	for (;;) {
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = pattern(n + i);
		w = write(fd, buf, sizeof buf);
		if (w <= 0)
			break;
		n += (size_t)w;
		if ((size_t)w < sizeof buf)
			break;
	}
	fcntl(fd, F_SETFL, fl);
	return n;
}

static int pattern_file(size_t from, size_t len)
{
	char path[] = "/tmp/fd_splice.XXXXXX";
	unsigned char *buf = malloc(len);
	int fd = mkstemp(path);

	if (fd < 0 || buf == NULL)
		die("mkstemp");
	unlink(path);
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(from + i);
	if (write(fd, buf, len) != (ssize_t)len)
		die("write");
	free(buf);
	return fd;
}

static void into_full(void)
{
	int s[2], p[2], q[2];
	size_t n, sent;
	struct drain d;
	pthread_t t;
	ssize_t r;

	/* splice pipe -> full unix socket */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) || pipe(p))
		die("setup");
	n = fill(s[0]);
	for (size_t i = 0; i < 4096; i++) {
		unsigned char c = pattern(n + i);
		if (write(p[1], &c, 1) != 1)
			die("write");
	}
	d = (struct drain){ .fd = s[1], .want = n + 4096 };
	t = start(drain_later, &d);
	r = splice(p[0], NULL, s[0], NULL, 4096, 0);
	join(t);
	check(r == 4096 && d.got == n + 4096 && !d.bad,
	      "splice into a full socket waited; every byte in order");

	/* sendfile file -> full socket */
	n = fill(s[0]);
	int f = pattern_file(n, BIG);
	d = (struct drain){ .fd = s[1], .want = n + BIG };
	t = start(drain_later, &d);
	off_t off = 0;
	sent = 0;
	while (sent < BIG) {
		r = sendfile(s[0], f, &off, BIG - sent);
		if (r <= 0)
			die("sendfile");
		sent += (size_t)r;
	}
	join(t);
	check(off == BIG && d.got == n + BIG && !d.bad,
	      "sendfile into a full socket waited; every byte in order");
	close(f);
	close(s[0]);
	close(s[1]);

	/* vmsplice into a full pipe */
	n = fill(p[1]);
	static unsigned char mem[8192];
	for (size_t i = 0; i < sizeof mem; i++)
		mem[i] = pattern(n + i);
	struct iovec iov = { mem, sizeof mem };
	d = (struct drain){ .fd = p[0], .want = n + sizeof mem };
	t = start(drain_later, &d);
	sent = 0;
	while (sent < sizeof mem) {
		iov = (struct iovec){ mem + sent, sizeof mem - sent };
		r = vmsplice(p[1], &iov, 1, 0);
		if (r <= 0)
			die("vmsplice");
		sent += (size_t)r;
	}
	join(t);
	check(d.got == n + sizeof mem && !d.bad,
	      "vmsplice into a full pipe waited; every byte in order");

	/* sendfile file -> full pipe */
	n = fill(p[1]);
	f = pattern_file(n, 8192);
	d = (struct drain){ .fd = p[0], .want = n + 8192 };
	t = start(drain_later, &d);
	off = 0;
	while (off < 8192)
		if (sendfile(p[1], f, &off, (size_t)(8192 - off)) <= 0)
			die("sendfile");
	join(t);
	check(d.got == n + 8192 && !d.bad,
	      "sendfile into a full pipe waited; every byte in order");
	close(f);

	/* tee from a pipe with data into a full pipe */
	if (pipe(q))
		die("pipe");
	n = fill(p[1]);
	for (size_t i = 0; i < 100; i++) {
		unsigned char c = pattern(n + i);
		if (write(q[1], &c, 1) != 1)
			die("write");
	}
	d = (struct drain){ .fd = p[0], .want = n + 100 };
	t = start(drain_later, &d);
	r = tee(q[0], p[1], 100, 0);
	join(t);
	check(r == 100 && d.got == n + 100 && !d.bad,
	      "tee into a full pipe waited; every byte in order");
	char c;
	check(read(q[0], &c, 1) == 1 && (unsigned char)c == pattern(n),
	      "tee left its input as it was");
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* ---- the program's own non-blocking, and errors ------------------------- */

static void nonblocking_and_errors(void)
{
	int p[2], q[2], s[2];
	char path[] = "/tmp/fd_splice.XXXXXX";
	int f = mkstemp(path), g;
	loff_t oi = 0, oo = 0;

	if (f < 0 || pipe(p) || pipe(q) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("setup");
	unlink(path);
	errno = 0;
	check(splice(p[0], NULL, q[1], NULL, 10, SPLICE_F_NONBLOCK) == -1 &&
		      errno == EAGAIN,
	      "SPLICE_F_NONBLOCK from an empty pipe: EAGAIN");
	errno = 0;
	check(tee(p[0], q[1], 10, SPLICE_F_NONBLOCK) == -1 && errno == EAGAIN,
	      "tee SPLICE_F_NONBLOCK from an empty pipe: EAGAIN");
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	errno = 0;
	check(splice(p[0], NULL, q[1], NULL, 10, 0) == -1 && errno == EAGAIN,
	      "splice from an O_NONBLOCK empty pipe: EAGAIN");
	fcntl(p[0], F_SETFL, 0);
	fcntl(s[0], F_SETFL, O_NONBLOCK);
	errno = 0;
	check(splice(s[0], NULL, q[1], NULL, 10, 0) == -1 && errno == EAGAIN,
	      "splice from an O_NONBLOCK empty socket: EAGAIN");
	errno = 0;
	check(splice(f, NULL, s[1], NULL, 10, 0) == -1 && errno == EINVAL,
	      "splice file -> socket (no pipe): EINVAL");
	errno = 0;
	check(splice(12345, NULL, q[1], NULL, 10, 0) == -1 && errno == EBADF,
	      "splice from a closed fd: EBADF");
	errno = 0;
	check(sendfile(12345, f, NULL, 10) == -1 && errno == EBADF,
	      "sendfile to a closed fd: EBADF");
	errno = 0;
	check(vmsplice(12345, NULL, 0, 0) == -1 && errno == EBADF,
	      "vmsplice on a closed fd: EBADF");

	if (write(f, "copy me, please", 15) != 15)
		die("write");
	g = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	if (g < 0)
		die("O_TMPFILE");
	check(copy_file_range(f, &oi, g, &oo, 15, 0) == 15 && oi == 15 &&
		      oo == 15,
	      "copy_file_range: 15 bytes");
	char buf[16] = { 0 };
	check(pread(g, buf, 15, 0) == 15 && strcmp(buf, "copy me, please") == 0,
	      "copy_file_range: the bytes");
	errno = 0;
	check(copy_file_range(p[0], NULL, g, NULL, 1, 0) == -1 &&
		      errno == EINVAL,
	      "copy_file_range from a pipe: EINVAL");
	close(f);
	close(g);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(s[0]);
	close(s[1]);
}

/* ---- recvmmsg, sendmmsg ------------------------------------------------- */

struct sender {
	int fd, n, pause_ms;
};

static void *send_later(void *arg)
{
	struct sender *sd = arg;
	for (int i = 0; i < sd->n; i++) {
		usleep((useconds_t)sd->pause_ms * 1000);
		char c = (char)('a' + i);
		if (send(sd->fd, &c, 1, 0) != 1)
			die("send");
	}
	return NULL;
}

static int recv_some(int fd, unsigned vlen, int flags, struct timespec *tmo,
		     char *got)
{
	struct mmsghdr v[8];
	struct iovec iov[8];

	memset(v, 0, sizeof v);
	for (unsigned i = 0; i < vlen; i++) {
		iov[i] = (struct iovec){ got + i, 1 };
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	return recvmmsg(fd, v, vlen, flags, tmo);
}

static void mmsg(void)
{
	int s[2];
	char got[9] = { 0 };
	struct sender sd;
	pthread_t t;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, s))
		die("socketpair");
	sd = (struct sender){ s[1], 4, 10 };
	t = start(send_later, &sd);
	check(recv_some(s[0], 4, 0, NULL, got) == 4 &&
		      strcmp(got, "abcd") == 0,
	      "recvmmsg waits for all its messages");
	join(t);

	memset(got, 0, sizeof got);
	sd = (struct sender){ s[1], 1, 20 };
	t = start(send_later, &sd);
	check(recv_some(s[0], 4, MSG_WAITFORONE, NULL, got) == 1 &&
		      strcmp(got, "a") == 0,
	      "MSG_WAITFORONE: back after the first");
	join(t);

	/* One message there, the next only after the timeout: Linux waits
	 * for it (the timeout is looked at after each message). */
	memset(got, 0, sizeof got);
	if (send(s[1], "x", 1, 0) != 1)
		die("send");
	sd = (struct sender){ s[1], 1, 150 };
	t = start(send_later, &sd);
	struct timespec tmo = { 0, 50000000 };
	check(recv_some(s[0], 8, 0, &tmo, got) == 2 && strcmp(got, "xa") == 0,
	      "recvmmsg with a timeout: the message after it, then back");
	check(tmo.tv_sec == 0 && tmo.tv_nsec == 0, "no time left written back");
	join(t);
	tmo = (struct timespec){ 0, 1000000000 };
	errno = 0;
	check(recv_some(s[0], 8, 0, &tmo, got) == -1 && errno == EINVAL,
	      "recvmmsg with a bad timeout: EINVAL");

	/* sendmmsg on datagrams */
	struct mmsghdr v[3];
	struct iovec iov[3];
	memset(v, 0, sizeof v);
	for (int i = 0; i < 3; i++) {
		iov[i] = (struct iovec){ "xyz" + i, 1 };
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	memset(got, 0, sizeof got);
	check(sendmmsg(s[1], v, 3, 0) == 3 &&
		      recv_some(s[0], 3, 0, NULL, got) == 3 &&
		      strcmp(got, "xyz") == 0,
	      "sendmmsg of three datagrams");
	close(s[0]);
	close(s[1]);

	/* sendmmsg into a full stream socket: every message whole. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("socketpair");
	size_t n = fill(s[0]);
	static unsigned char big[3][100000];
	size_t at = n;
	for (int m = 0; m < 3; m++) {
		for (size_t i = 0; i < sizeof big[m]; i++)
			big[m][i] = pattern(at + i);
		at += sizeof big[m];
		iov[m] = (struct iovec){ big[m], sizeof big[m] };
		v[m].msg_hdr.msg_iov = &iov[m];
		v[m].msg_hdr.msg_iovlen = 1;
	}
	struct drain d = { .fd = s[1], .want = at };
	t = start(drain_later, &d);
	int r = sendmmsg(s[0], v, 3, 0);
	join(t);
	check(r == 3 && v[0].msg_len == sizeof big[0] &&
		      v[1].msg_len == sizeof big[1] &&
		      v[2].msg_len == sizeof big[2] && d.got == at && !d.bad,
	      "sendmmsg into a full stream socket: every message whole");
	close(s[0]);
	close(s[1]);
}

int main(void)
{
	waiting_splices("pipes", 0);
	waiting_splices("unix sockets", 1);
	waiting_splices("TCP sockets", 2);
	into_full();
	nonblocking_and_errors();
	mmsg();
	printf("OK\n");
	return 0;
}
