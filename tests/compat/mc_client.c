/* mc_client PORT THREADS KEYS: drives memcached on 127.0.0.1:PORT for the
 * compatibility suite, over its text protocol. Each of THREADS threads
 * opens its own connection, stores KEYS keys of its own with values of
 * many sizes (up to 20 KB, so a value spans several reads), reads every one
 * back with single and multi-key gets, and adds to one shared counter with
 * incr. Every value read must be exactly the one stored, and the counter
 * must end at its exact total. The client is plain blocking sockets and is
 * not the thing tested: memcached (libevent, epoll, a thread per worker)
 * is. Prints one summary line; exits 1 on any mismatch. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_VALUE 20000
#define MULTI 8 /* keys per multi-get */

struct conn {
	int fd;
	char buf[65536];
	size_t len, off; /* buffered input: buf[off..len) */
};

static int port, nkeys;
static atomic_int bad;
static atomic_long checked;

static void fail(long id, const char *what, const char *key)
{
	fprintf(stderr, "mc_client: thread %ld: %s (key %s)\n", id, what, key);
	atomic_fetch_add(&bad, 1);
}

static int dial(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
		perror("mc_client: connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static void send_all(struct conn *c, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(c->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("mc_client: write");
			exit(1);
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Makes at least n bytes available at buf+off. */
static void need(struct conn *c, size_t n)
{
	if (c->off > 0 && c->len - c->off < n) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	while (c->len - c->off < n) {
		ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "mc_client: read: %s\n",
				r ? strerror(errno) : "connection closed");
			exit(1);
		}
		c->len += (size_t)r;
	}
}

/* One response line without its \r\n, in out. */
static void read_line(struct conn *c, char *out, size_t cap)
{
	for (size_t n = 1;; n++) {
		need(c, n);
		char *p = c->buf + c->off;
		if (n >= 2 && p[n - 2] == '\r' && p[n - 1] == '\n') {
			size_t l = n - 2 < cap - 1 ? n - 2 : cap - 1;
			memcpy(out, p, l);
			out[l] = '\0';
			c->off += n;
			return;
		}
	}
}

/* The value every thread can recompute for key i of thread id: its size
 * and bytes come from a hash of both. */
static size_t value_of(long id, int i, char *out)
{
	uint64_t x = (uint64_t)id * 1000003u + (uint64_t)i + 1;
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	size_t n = 1 + (size_t)(x % MAX_VALUE);
	for (size_t k = 0; k < n; k++)
		out[k] = (char)('a' + (x >> (k % 29)) % 26);
	return n;
}

/* Reads one "VALUE key flags bytes" block and checks it. */
static void check_value(struct conn *c, long id, int i)
{
	static _Thread_local char want[MAX_VALUE], line[256];
	char key[64];
	unsigned flags;
	size_t bytes, n = value_of(id, i, want);
	snprintf(key, sizeof key, "t%ld-k%d", id, i);
	read_line(c, line, sizeof line);
	char got_key[64];
	if (sscanf(line, "VALUE %63s %u %zu", got_key, &flags, &bytes) != 3 ||
	    strcmp(got_key, key) || flags != (unsigned)i) {
		fail(id, line, key);
		exit(1);
	}
	need(c, bytes + 2);
	if (bytes != n || memcmp(c->buf + c->off, want, n))
		fail(id, "wrong value", key);
	c->off += bytes + 2;
	atomic_fetch_add(&checked, 1);
}

static void expect_line(struct conn *c, long id, const char *want,
			const char *key)
{
	char line[256];
	read_line(c, line, sizeof line);
	if (strcmp(line, want))
		fail(id, line, key);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	static _Thread_local char v[MAX_VALUE + 128];
	struct conn *c = calloc(1, sizeof *c);
	char cmd[512], key[64];
	c->fd = dial();

	for (int i = 0; i < nkeys; i++) {
		size_t n = value_of(id, i, v);
		snprintf(key, sizeof key, "t%ld-k%d", id, i);
		int h = snprintf(cmd, sizeof cmd, "set %s %d 0 %zu\r\n", key, i, n);
		send_all(c, cmd, (size_t)h);
		v[n] = '\r', v[n + 1] = '\n';
		send_all(c, v, n + 2);
		expect_line(c, id, "STORED", key);
		h = snprintf(cmd, sizeof cmd, "incr shared %d\r\n", i % 5 + 1);
		send_all(c, cmd, (size_t)h);
		read_line(c, cmd, sizeof cmd); /* the new value: any */
	}
	for (int i = 0; i < nkeys; i++) {
		int h = snprintf(cmd, sizeof cmd, "get t%ld-k%d\r\n", id, i);
		send_all(c, cmd, (size_t)h);
		check_value(c, id, i);
		expect_line(c, id, "END", "get");
	}
	for (int i = 0; i + MULTI <= nkeys; i += MULTI) {
		int h = snprintf(cmd, sizeof cmd, "get");
		for (int k = i; k < i + MULTI; k++)
			h += snprintf(cmd + h, sizeof cmd - (size_t)h,
				      " t%ld-k%d", id, k);
		h += snprintf(cmd + h, sizeof cmd - (size_t)h, "\r\n");
		send_all(c, cmd, (size_t)h);
		for (int k = i; k < i + MULTI; k++)
			check_value(c, id, k);
		expect_line(c, id, "END", "multi-get");
	}
	close(c->fd);
	free(c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: mc_client PORT THREADS KEYS\n");
		return 2;
	}
	port = atoi(argv[1]);
	int nthreads = atoi(argv[2]);
	nkeys = atoi(argv[3]);
	if (nthreads < 1 || nthreads > 1024 || nkeys < 1) {
		fprintf(stderr, "mc_client: THREADS 1..1024, KEYS >= 1\n");
		return 2;
	}
	struct conn *c = calloc(1, sizeof *c);
	c->fd = dial();
	send_all(c, "set shared 0 0 1\r\n0\r\n", 21);
	expect_line(c, -1, "STORED", "shared");

	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "mc_client: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);

	long want = 0;
	for (int i = 0; i < nkeys; i++)
		want += i % 5 + 1;
	want *= nthreads;
	char line[256];
	send_all(c, "get shared\r\n", 12);
	read_line(c, line, sizeof line);
	read_line(c, line, sizeof line);
	long shared = strtol(line, NULL, 10);
	expect_line(c, -1, "END", "shared");
	close(c->fd);
	printf("memcached: %d threads x %d keys, %ld values checked, %d wrong, counter %ld of %ld\n",
	       nthreads, nkeys, atomic_load(&checked), atomic_load(&bad),
	       shared, want);
	return atomic_load(&bad) || shared != want;
}
