/* net_load PORT CONNS WARMUP_MS MEASURE_MS: the load generator of `make
 * bench-net`, the same for every server measured (always run natively).
 *
 * One thread and one epoll instance drive CONNS connections to
 * 127.0.0.1:PORT, closed loop: each connection has one request of REQ
 * bytes outstanding, and sends the next as soon as the whole echo is back
 * (and equal to what was sent). A single epoll thread costs the least CPU
 * per request on a machine the server shares, and treats every server the
 * same. Connections are made first (blocking connects, then
 * non-blocking), all requests start together, the first WARMUP_MS are not
 * counted, then every request completed in the next MEASURE_MS counts: its
 * latency from the send to the last byte back. Prints "reqs_per_s",
 * "p50_us", "p99_us", "requests" and "connect_s", then closes every
 * connection (the server exits when all are gone). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ 64
#define NEVENTS 512

struct conn {
	int fd;
	int got;	   /* bytes of the echo read so far */
	int64_t sent_at;   /* ns */
	uint32_t seq;	   /* request number: the payload varies */
};

static void die(const char *what)
{
	fprintf(stderr, "net_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void payload(const struct conn *c, char *p)
{
	uint32_t x = c->seq * 2654435761u ^ (uint32_t)c->fd;
	for (int i = 0; i < REQ; i++) {
		x = x * 1103515245 + 12345;
		p[i] = (char)(x >> 16);
	}
}

static void send_req(struct conn *c)
{
	char p[REQ];

	payload(c, p);
	c->got = 0;
	c->sent_at = now_ns();
	/* 64 bytes always fit an idle socket's send buffer. */
	if (write(c->fd, p, REQ) != REQ)
		die("write");
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static long arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < 1) {
		fprintf(stderr, "net_load: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev[NEVENTS];
	int64_t *lat = NULL, t0, start, end;
	size_t nlat = 0, cap = 0;
	struct conn *cs;
	long conns;
	int ep;

	if (argc != 5) {
		fprintf(stderr,
			"usage: net_load PORT CONNS WARMUP_MS MEASURE_MS\n");
		return 2;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)arg(argv[1]));
	conns = arg(argv[2]);
	cs = calloc((size_t)conns, sizeof *cs);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!cs || ep < 0)
		die("setup");

	t0 = now_ns();
	for (long i = 0; i < conns; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = &cs[i] };
		if (fd < 0)
			die("socket");
		if (connect(fd, (struct sockaddr *)&a, sizeof a))
			die("connect");
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		fcntl(fd, F_SETFL, O_NONBLOCK);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e))
			die("epoll_ctl");
		cs[i].fd = fd;
	}
	start = now_ns();
	printf("connect_s %.3f\n", (double)(start - t0) / 1e9);
	for (long i = 0; i < conns; i++)
		send_req(&cs[i]);
	start += arg(argv[3]) * 1000000;
	end = start + arg(argv[4]) * 1000000;

	for (int64_t t = now_ns(); t < end; t = now_ns()) {
		int n = epoll_wait(ep, ev, NEVENTS, 10);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;
			char want[REQ], buf[REQ];
			ssize_t r = read(c->fd, buf + c->got,
					 (size_t)(REQ - c->got));
			if (r < 0 && errno == EAGAIN)
				continue;
			if (r <= 0) {
				errno = r ? errno : ECONNRESET;
				die("read");
			}
			/* the bytes so far, kept in order */
			payload(c, want);
			if (memcmp(buf + c->got, want + c->got, (size_t)r)) {
				fprintf(stderr, "net_load: wrong echo\n");
				return 1;
			}
			c->got += (int)r;
			if (c->got < REQ)
				continue;
			int64_t done = now_ns();
			if (done >= start && done < end) {
				if (nlat == cap) {
					cap = cap ? 2 * cap : 1 << 16;
					lat = realloc(lat, cap * sizeof *lat);
					if (!lat)
						die("realloc");
				}
				lat[nlat++] = done - c->sent_at;
			}
			c->seq++;
			send_req(c);
		}
	}
	if (nlat == 0) {
		fprintf(stderr, "net_load: no request completed\n");
		return 1;
	}
	qsort(lat, nlat, sizeof *lat, cmp64);
	printf("requests %zu\n", nlat);
	printf("reqs_per_s %.0f\n", (double)nlat / ((double)(end - start) / 1e9));
	printf("p50_us %.1f\n", (double)lat[nlat / 2] / 1e3);
	printf("p99_us %.1f\n", (double)lat[nlat * 99 / 100] / 1e3);
	for (long i = 0; i < conns; i++)
		close(cs[i].fd);
	return 0;
}
