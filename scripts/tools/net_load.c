/* net_load [-P echo|http] [-r REQUESTS] [-u PATH] [-T TIMEOUT_MS]
 *          PORT CONNS WARMUP_MS MEASURE_MS
 *
 * The load generator of `make bench` (its net rows) and `goshim stress`,
 * the same for every server measured (always run natively). Loads
 * 127.0.0.1 only.
 *
 * One thread and one epoll instance drive CONNS keep-alive connections to
 * 127.0.0.1:PORT, closed loop: each connection has one request
 * outstanding, and sends the next as soon as the whole reply is back. A
 * single epoll thread costs the least CPU per request on a machine the
 * server shares, and treats every server the same.
 *
 *   echo  a 64-byte request whose payload varies; the reply must be the
 *         same 64 bytes.
 *   http  "GET PATH HTTP/1.1" (PATH default /); the reply must be
 *         "HTTP/1.x 200" with a Content-Length body.
 *
 * Connections are made first (blocking connects, then non-blocking), all
 * requests start together, the first WARMUP_MS are not counted, then every
 * request completed in the next MEASURE_MS counts: its latency from the send
 * to the last byte back. -r stops sending after REQUESTS requests in all
 * (warm-up included) and ends once they are answered. A failed connect, a
 * reset, a wrong reply, or a request unanswered for TIMEOUT_MS (default
 * 10000) is an error: the connection is closed and not replaced. The run
 * ends at the end of MEASURE_MS, when REQUESTS are answered, or when no
 * connection is left, whichever comes first.
 *
 * Prints "name value" lines: connect_s, conns (connected), sent, total
 * (answered, warm-up included), requests (answered and counted), errors,
 * reqs_per_s, p50_us, p90_us, p99_us, max_us; then closes every connection
 * (the bench's echo server exits when all are gone). Exits 1 if there was
 * any error (after printing), 2 on bad usage.
 *
 * net_load [-P echo|http] [-u PATH] [-T TIMEOUT_MS] [-L FILE] -F MAX PORT
 *
 * Fill (`goshim stress --mem-limit`): how many connections does the server
 * hold? Connections are opened one at a time, each sends one request and
 * waits for its reply, then stays open and idle, until one fails or MAX are
 * held; all of them stay open 500 ms more (the sampler's ticks at the
 * plateau), then close. Prints "held N" (connections answered and open when
 * it ended) and "ended WHY": max, refused (connect refused: nothing
 * listens), closed (the server closed or reset the new connection, or sent
 * a wrong reply), timeout (no connect or reply in TIMEOUT_MS), or generator
 * (this side's limit: fds or local ports). What failed goes to stderr. -L
 * FILE gets the CLOCK_MONOTONIC time (ns) of each held connection's reply,
 * one a line: how many were held when. Exits 0 after a fill, whatever ended
 * it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ECHO_REQ 64
#define REPLY_MAX 1024 /* the largest HTTP reply taken */
#define NEVENTS 512

struct conn {
	int fd;		 /* -1 once closed */
	int got;	 /* bytes of the reply read so far */
	int busy;	 /* a request is outstanding */
	int64_t sent_at; /* ns */
	uint32_t seq;	 /* request number: the echo payload varies */
	char *buf;	 /* http: the reply so far */
};

static int http;
static char http_req[512];
static size_t http_req_len;
static long errors, live, outstanding;

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
	for (int i = 0; i < ECHO_REQ; i++) {
		x = x * 1103515245 + 12345;
		p[i] = (char)(x >> 16);
	}
}

/* An error on C: counted once, the connection closed. */
static void fail(struct conn *c, const char *why)
{
	if (errors++ < 5)
		fprintf(stderr, "net_load: connection %d: %s\n", c->fd, why);
	close(c->fd);
	c->fd = -1;
	live--;
	outstanding -= c->busy;
	c->busy = 0;
}

static void send_req(struct conn *c)
{
	char p[ECHO_REQ];
	const char *msg = p;
	size_t len = ECHO_REQ;

	if (http) {
		msg = http_req;
		len = http_req_len;
	} else {
		payload(c, p);
	}
	c->got = 0;
	c->busy = 1;
	outstanding++;
	c->sent_at = now_ns();
	/* A small request always fits an idle socket's send buffer. */
	if (write(c->fd, msg, len) != (ssize_t)len)
		fail(c, "write failed");
}

/* Reads what is there for C; returns 1 once the whole reply is in, 0 if
 * more is to come, -1 after an error. */
static int on_readable(struct conn *c)
{
	if (!http) {
		char want[ECHO_REQ], buf[ECHO_REQ];
		ssize_t r = read(c->fd, buf, (size_t)(ECHO_REQ - c->got));
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r <= 0 || !c->busy) {
			fail(c, r < 0 ? strerror(errno) : "closed by the server");
			return -1;
		}
		/* the bytes so far, kept in order */
		payload(c, want);
		if (memcmp(buf, want + c->got, (size_t)r)) {
			fail(c, "wrong echo");
			return -1;
		}
		c->got += (int)r;
		return c->got == ECHO_REQ;
	}
	ssize_t r = read(c->fd, c->buf + c->got, (size_t)(REPLY_MAX - 1 - c->got));
	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r <= 0 || !c->busy) {
		fail(c, r < 0 ? strerror(errno) : "closed by the server");
		return -1;
	}
	c->got += (int)r;
	c->buf[c->got] = '\0';
	char *end = strstr(c->buf, "\r\n\r\n");
	if (!end) {
		if (c->got == REPLY_MAX - 1) {
			fail(c, "reply head too large");
			return -1;
		}
		return 0;
	}
	if (strncmp(c->buf, "HTTP/1.", 7) || strncmp(c->buf + 8, " 200", 4)) {
		fail(c, "reply not 200");
		return -1;
	}
	long len = -1;
	for (char *h = strstr(c->buf, "\r\n"); h && h < end; h = strstr(h + 2, "\r\n"))
		if (strncasecmp(h + 2, "Content-Length:", 15) == 0)
			len = strtol(h + 17, NULL, 10);
	long whole = (long)(end + 4 - c->buf) + len;
	if (len < 0 || whole >= REPLY_MAX) {
		fail(c, "no usable Content-Length");
		return -1;
	}
	if (c->got < whole)
		return 0;
	if (c->got > whole) {
		fail(c, "bytes after the reply");
		return -1;
	}
	return 1;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static long arg(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < min) {
		fprintf(stderr, "net_load: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: net_load [-P echo|http] [-r REQUESTS] [-u PATH] "
			"[-T TIMEOUT_MS] PORT CONNS WARMUP_MS MEASURE_MS\n"
			"       net_load [-P echo|http] [-u PATH] [-T TIMEOUT_MS] "
			"[-L FILE] -F MAX PORT\n");
	exit(2);
}

/* -F: see the top of the file. */
static int fill(const struct sockaddr_in *a, long max, int64_t timeout_ns,
		FILE *log)
{
	struct timeval tv = { .tv_sec = timeout_ns / 1000000000,
			      .tv_usec = timeout_ns % 1000000000 / 1000 };
	struct conn c = { .fd = -1 };
	const char *ended = "max";
	long held = 0;

	if (http && !(c.buf = malloc(REPLY_MAX)))
		die("malloc");
	while (held < max) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		if (fd < 0) {
			fprintf(stderr, "net_load: connection %ld: socket: %s\n",
				held + 1, strerror(errno));
			ended = "generator";
			break;
		}
		/* a blocking connect that takes longer fails with EINPROGRESS */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, (const struct sockaddr *)a, sizeof *a)) {
			fprintf(stderr, "net_load: connection %ld: connect: %s\n",
				held + 1, strerror(errno));
			ended = errno == ECONNREFUSED	? "refused"
				: errno == EINPROGRESS	? "timeout"
				: errno == EADDRNOTAVAIL ? "generator"
							 : "closed";
			close(fd);
			break;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		fcntl(fd, F_SETFL, O_NONBLOCK);
		c.fd = fd;
		c.seq = (uint32_t)held;
		live = 1;
		send_req(&c);
		int64_t deadline = now_ns() + timeout_ns;
		int r = 0;
		while (c.fd >= 0 && r == 0) {
			struct pollfd p = { .fd = c.fd, .events = POLLIN };
			int64_t left = deadline - now_ns();
			int n = left > 0 ? poll(&p, 1, (int)((left + 999999) / 1000000)) : 0;
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				fail(&c, "no reply in time");
				ended = "timeout";
				break;
			}
			r = on_readable(&c);
		}
		if (r != 1) {
			if (strcmp(ended, "timeout"))
				ended = "closed";
			fprintf(stderr, "net_load: connection %ld failed\n", held + 1);
			break;
		}
		c.busy = 0;
		outstanding--;
		held++; /* its fd stays open until exit */
		if (log)
			fprintf(log, "%lld\n", (long long)now_ns());
	}
	if (log && fclose(log))
		die("-L");
	printf("held %ld\nended %s\n", held, ended);
	fflush(stdout);
	usleep(500000);
	return 0;
}

static double pct_us(const int64_t *lat, size_t n, int pct)
{
	return n ? (double)lat[n * (size_t)pct / 100] / 1e3 : 0.0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev[NEVENTS];
	int64_t *lat = NULL, t0, start, end, last_done = 0, timeout_ns;
	long conns, limit = -1, sent = 0, total = 0, fill_max = 0;
	size_t nlat = 0, cap = 0;
	const char *path = "/";
	FILE *log = NULL;
	struct conn *cs;
	int ep, opt;

	timeout_ns = 10000 * (int64_t)1000000;
	while ((opt = getopt(argc, argv, "P:r:u:T:F:L:")) != -1) {
		switch (opt) {
		case 'P':
			if (strcmp(optarg, "http") == 0)
				http = 1;
			else if (strcmp(optarg, "echo") != 0)
				usage();
			break;
		case 'r':
			limit = arg(optarg, 1);
			break;
		case 'u':
			path = optarg;
			break;
		case 'T':
			timeout_ns = arg(optarg, 1) * (int64_t)1000000;
			break;
		case 'F':
			fill_max = arg(optarg, 1);
			break;
		case 'L':
			if (!(log = fopen(optarg, "we")))
				die(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != (fill_max ? 1 : 4) || path[0] != '/' ||
	    strlen(path) > 256 || (fill_max && limit != -1) || (log && !fill_max))
		usage();
	argv += optind;
	http_req_len = (size_t)snprintf(http_req, sizeof http_req,
					"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
					path);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	long port = arg(argv[0], 1);
	if (port > 65535)
		usage();
	a.sin_port = htons((uint16_t)port);
	if (fill_max)
		return fill(&a, fill_max, timeout_ns, log);
	conns = arg(argv[1], 1);
	cs = calloc((size_t)conns, sizeof *cs);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!cs || ep < 0)
		die("setup");

	t0 = now_ns();
	for (long i = 0; i < conns; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = &cs[i] };
		cs[i].fd = -1;
		if (fd < 0)
			die("socket");
		if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
			if (errors++ < 5)
				fprintf(stderr, "net_load: connect: %s\n",
					strerror(errno));
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		fcntl(fd, F_SETFL, O_NONBLOCK);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e))
			die("epoll_ctl");
		if (http && !(cs[i].buf = malloc(REPLY_MAX)))
			die("malloc");
		cs[i].fd = fd;
		live++;
	}
	start = now_ns();
	printf("connect_s %.3f\n", (double)(start - t0) / 1e9);
	printf("conns %ld\n", live);
	for (long i = 0; i < conns && sent != limit; i++) {
		if (cs[i].fd < 0)
			continue;
		send_req(&cs[i]);
		sent++;
	}
	start += arg(argv[2], 0) * 1000000;
	end = start + arg(argv[3], 1) * 1000000;

	int64_t next_sweep = now_ns() + 100000000;
	for (int64_t t = now_ns(); t < end; t = now_ns()) {
		if (t >= next_sweep) {
			/* unanswered too long: an error */
			for (long i = 0; i < conns; i++)
				if (cs[i].busy && t - cs[i].sent_at > timeout_ns)
					fail(&cs[i], "timed out");
			next_sweep = t + 100000000;
		}
		if (live == 0 || (outstanding == 0 && sent == limit))
			break;
		int n = epoll_wait(ep, ev, NEVENTS, 10);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;
			if (c->fd < 0 || on_readable(c) != 1)
				continue;
			int64_t done = now_ns();
			c->busy = 0;
			outstanding--;
			total++;
			if (done >= start && done < end) {
				if (nlat == cap) {
					cap = cap ? 2 * cap : 1 << 16;
					lat = realloc(lat, cap * sizeof *lat);
					if (!lat)
						die("realloc");
				}
				lat[nlat++] = done - c->sent_at;
				last_done = done;
			}
			c->seq++;
			if (sent != limit) {
				send_req(c);
				sent++;
			}
		}
	}
	/* A run cut short by REQUESTS is measured up to its last answer. */
	if (last_done > start && last_done < end && sent == limit)
		end = last_done;
	qsort(lat, nlat, sizeof *lat, cmp64);
	printf("sent %ld\n", sent);
	printf("total %ld\n", total);
	printf("requests %zu\n", nlat);
	printf("errors %ld\n", errors);
	printf("reqs_per_s %.0f\n",
	       end > start ? (double)nlat / ((double)(end - start) / 1e9) : 0.0);
	printf("p50_us %.1f\n", pct_us(lat, nlat, 50));
	printf("p90_us %.1f\n", pct_us(lat, nlat, 90));
	printf("p99_us %.1f\n", pct_us(lat, nlat, 99));
	printf("max_us %.1f\n", nlat ? (double)lat[nlat - 1] / 1e3 : 0.0);
	for (long i = 0; i < conns; i++)
		if (cs[i].fd >= 0)
			close(cs[i].fd);
	if (nlat == 0 && errors == 0) {
		fprintf(stderr, "net_load: no request completed\n");
		return 1;
	}
	return errors ? 1 : 0;
}
