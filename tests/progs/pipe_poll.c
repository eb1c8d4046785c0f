// pipe_poll: poll and select with timeouts, on pipes and sockets.
// Timeouts that expire (only elapsed >= timeout is asserted), wakeups by
// another thread's write well before a long timeout, POLLHUP when the
// other end closes, POLLOUT and POLLNVAL at once, poll(NULL, 0, ms) as a
// sleep, select's sets and remaining time, a select that waits for a full
// pipe to drain, and 200 threads each polling its own pipe, half woken
// by a writer before a 10 s timeout and half timing out at 100 ms (the
// written half has the long timeout so that a loaded machine, or ASan,
// slow to create the 200 threads, cannot make a write come too late).
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NPOLLERS 200

static void die(const char *what)
{
	fprintf(stderr, "pipe_poll: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "pipe_poll: failed: %s\n", what);
		exit(1);
	}
}

static int64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void make_pipe(int p[2])
{
	if (pipe(p))
		die("pipe");
}

struct later {
	int fd;
	int ms;	     /* after this long */
	int close;   /* close fd instead of writing to it */
	int spin_ms; /* busy first (the sleep then starts while others wait) */
};

static void *do_later(void *arg)
{
	struct later *l = arg;
	int64_t t0 = ms_now();
	while (ms_now() - t0 < l->spin_ms)
		;
	usleep((useconds_t)l->ms * 1000);
	if (l->close ? close(l->fd) : write(l->fd, "x", 1) != 1)
		die("later");
	return NULL;
}

static pthread_t start_later(struct later *l)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, do_later, l);
	if (e) {
		errno = e;
		die("pthread_create");
	}
	return t;
}

static void join(pthread_t t)
{
	int e = pthread_join(t, NULL);
	if (e) {
		errno = e;
		die("pthread_join");
	}
}

static void timeouts(void)
{
	int p[2];
	struct pollfd pf;
	fd_set rd;
	struct timeval tv = { 0, 120000 };
	int64_t t0;

	make_pipe(p);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t0 = ms_now();
	check(poll(&pf, 1, 150) == 0, "poll timeout returns 0");
	check(ms_now() - t0 >= 150, "poll waited its timeout");
	check(pf.revents == 0, "no revents after a timeout");

	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	t0 = ms_now();
	check(select(p[0] + 1, &rd, NULL, NULL, &tv) == 0, "select timeout");
	check(ms_now() - t0 >= 120, "select waited its timeout");
	check(!FD_ISSET(p[0], &rd), "select clears the set on timeout");
	check(tv.tv_sec == 0 && tv.tv_usec == 0, "select: no time left");

	t0 = ms_now();
	check(poll(NULL, 0, 60) == 0, "poll(NULL, 0, 60)");
	check(ms_now() - t0 >= 60, "poll as a sleep");
	close(p[0]);
	close(p[1]);
	printf("timeouts: poll, select and poll(NULL, 0) wait them out\n");
}

static void wakeups(void)
{
	int p[2], s[2];
	struct pollfd pf[2];
	fd_set rd;
	struct timeval tv = { 10, 0 };
	int64_t t0;

	/* A write 30 ms later ends a 10 s poll; on several Ps the writer's
	 * sleep starts while the poll is already parked (an earlier timer
	 * must reach the M that waits for fds). */
	make_pipe(p);
	struct later l = { p[1], 30, 0, 10 };
	pthread_t t = start_later(&l);
	pf[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t0 = ms_now();
	check(poll(pf, 1, 10000) == 1, "poll woken by a write");
	check(pf[0].revents == POLLIN, "POLLIN");
	check(ms_now() - t0 < 5000, "woken by the write, not the timeout");
	join(t);

	/* Two fds, the event on the second: a socket. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("socketpair");
	char c;
	check(read(p[0], &c, 1) == 1, "drain");
	struct later l2 = { s[1], 20, 0, 0 };
	t = start_later(&l2);
	pf[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = s[0], .events = POLLIN | POLLPRI };
	check(poll(pf, 2, -1) == 1, "poll on two fds");
	check(pf[0].revents == 0 && pf[1].revents == POLLIN, "the socket is ready");
	join(t);
	check(read(s[0], &c, 1) == 1, "drain socket");

	/* select woken on the socket. */
	struct later l3 = { s[1], 20, 0, 0 };
	t = start_later(&l3);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	FD_SET(s[0], &rd);
	int nfds = (p[0] > s[0] ? p[0] : s[0]) + 1;
	check(select(nfds, &rd, NULL, NULL, &tv) == 1, "select woken");
	check(FD_ISSET(s[0], &rd) && !FD_ISSET(p[0], &rd), "select's set");
	check(tv.tv_sec < 10, "select counts down the time left");
	join(t);

	/* The write end closed: POLLHUP. */
	struct later l4 = { p[1], 20, 1, 0 };
	t = start_later(&l4);
	pf[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	check(poll(pf, 1, 10000) == 1, "poll woken by close");
	check(pf[0].revents == POLLHUP, "POLLHUP");
	join(t);
	close(p[0]);
	close(s[0]);
	close(s[1]);
	printf("wakeups: by write, on a socket, in select, by hang-up\n");
}

static void at_once(void)
{
	int p[2];
	struct pollfd pf[2];

	make_pipe(p);
	pf[0] = (struct pollfd){ .fd = p[1], .events = POLLOUT };
	pf[1] = (struct pollfd){ .fd = -1, .events = POLLIN };
	check(poll(pf, 2, 1000) == 1 && pf[0].revents == POLLOUT &&
		      pf[1].revents == 0,
	      "POLLOUT at once, negative fd ignored");
	close(p[1]);
	pf[0] = (struct pollfd){ .fd = p[1], .events = POLLIN };
	check(poll(pf, 1, 1000) == 1 && pf[0].revents == POLLNVAL,
	      "POLLNVAL for a closed fd");
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(p[1], &rd);
	struct timeval tv = { 1, 0 };
	check(select(p[1] + 1, &rd, NULL, NULL, &tv) == -1 && errno == EBADF,
	      "select on a closed fd: EBADF");
	close(p[0]);
	printf("at once: POLLOUT, POLLNVAL, select's EBADF\n");
}

static void *drain_later(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[4096];
	usleep(30000);
	if (read(fd, buf, sizeof buf) != sizeof buf)
		die("drain");
	return NULL;
}

static void full_pipe(void)
{
	int p[2];
	char buf[4096];
	fd_set wr;
	int64_t filled = 0;

	make_pipe(p);
	/* Fill it, without blocking: the flag is set on our own pipe. */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK))
		die("fcntl");
	memset(buf, 'f', sizeof buf);
	while (write(p[1], buf, sizeof buf) == sizeof buf)
		filled += sizeof buf;
	check(errno == EAGAIN, "a full non-blocking pipe says EAGAIN");
	pthread_t t;
	int e = pthread_create(&t, NULL, drain_later, (void *)(intptr_t)p[0]);
	if (e) {
		errno = e;
		die("pthread_create");
	}
	FD_ZERO(&wr);
	FD_SET(p[1], &wr);
	check(select(p[1] + 1, NULL, &wr, NULL, NULL) == 1 && FD_ISSET(p[1], &wr),
	      "select waits for room");
	join(t);
	close(p[0]);
	close(p[1]);
	printf("full pipe: %lld bytes, then select waited for room\n",
	       (long long)filled);
}

struct poller {
	int p[2];
	int timeout_ms;
	int woken, timed_out;
};

static void *poll_one(void *arg)
{
	struct poller *q = arg;
	struct pollfd pf = { .fd = q->p[0], .events = POLLIN };
	int64_t t0 = ms_now();
	int r = poll(&pf, 1, q->timeout_ms);
	if (r < 0)
		die("poll");
	if (r == 1 && pf.revents == POLLIN)
		q->woken = 1;
	if (r == 0 && ms_now() - t0 >= q->timeout_ms)
		q->timed_out = 1;
	return NULL;
}

static void many(void)
{
	static struct poller q[NPOLLERS];
	static pthread_t t[NPOLLERS];
	int woken = 0, timed_out = 0, e;

	for (int i = 0; i < NPOLLERS; i++) {
		make_pipe(q[i].p);
		q[i].timeout_ms = i % 2 == 0 ? 10000 : 100;
		if ((e = pthread_create(&t[i], NULL, poll_one, &q[i]))) {
			errno = e;
			die("pthread_create");
		}
	}
	usleep(20000);
	for (int i = 0; i < NPOLLERS; i += 2)
		if (write(q[i].p[1], "w", 1) != 1)
			die("write");
	for (int i = 0; i < NPOLLERS; i++) {
		join(t[i]);
		woken += q[i].woken;
		timed_out += q[i].timed_out;
		close(q[i].p[0]);
		close(q[i].p[1]);
	}
	printf("%d pollers: %d woken by a write, %d timed out\n", NPOLLERS,
	       woken, timed_out);
	check(woken + timed_out == NPOLLERS, "every poller woken or timed out");
}

int main(void)
{
	timeouts();
	wakeups();
	at_once();
	full_pipe();
	many();
	printf("OK\n");
	return 0;
}
