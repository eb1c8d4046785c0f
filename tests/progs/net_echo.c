// net_echo: a thread-per-connection TCP echo server on 127.0.0.1 (an
// ephemeral port) and 1,000 client threads, one connection each, all open
// at once (the 2,000 threads meet at a barrier once every connection is up,
// and again before they exit).
// Each client does ROUNDS round trips of 1..16384 bytes derived from its
// index, with a different call family per client (read/write, recv/send,
// readv/writev, sendmsg + recv(MSG_WAITALL)), and checks every byte that
// comes back; the server echoes with read and write or send. Blocking
// connect, accept, and reads that must wait are the point: natively this
// takes 2,000+ threads, under goshim a handful.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=2001
// goshim-test: timeout=60
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define NCONN 1000
#define ROUNDS 20
#define MAXMSG 16384

static struct sockaddr_in server_addr;
static int listen_fd;
static pthread_barrier_t all_up;
static pthread_t handlers[NCONN];

struct result {
	uint64_t hash;	    /* FNV-1a over every byte echoed back */
	uint64_t bytes;
	int mismatches;
};
static struct result results[NCONN];
static uint64_t echoed[NCONN]; /* bytes each handler echoed */

static void die(const char *what)
{
	fprintf(stderr, "net_echo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void barrier(void)
{
	int e = pthread_barrier_wait(&all_up);
	if (e && e != PTHREAD_BARRIER_SERIAL_THREAD) {
		errno = e;
		die("pthread_barrier_wait");
	}
}

static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void write_all(int fd, const char *p, size_t n, int use_send)
{
	/* A blocking socket takes all of it in one call. */
	ssize_t w = use_send ? send(fd, p, n, 0) : write(fd, p, n);
	if (w < 0)
		die("write");
	if ((size_t)w != n) {
		fprintf(stderr, "net_echo: short write %zd of %zu\n", w, n);
		exit(1);
	}
}

static void *handler(void *arg)
{
	int fd = (int)(intptr_t)arg >> 16, idx = (int)(intptr_t)arg & 0xffff;
	char *buf = malloc(MAXMSG);
	uint64_t total = 0;
	int k = 0;

	if (!buf)
		die("malloc");
	barrier();
	for (;;) {
		ssize_t n = read(fd, buf, MAXMSG);
		if (n < 0)
			die("server read");
		if (n == 0)
			break;
		write_all(fd, buf, (size_t)n, k++ & 1);
		total += (uint64_t)n;
	}
	if (close(fd))
		die("close");
	echoed[idx] = total;
	free(buf);
	barrier();
	return NULL;
}

static void *acceptor(void *arg)
{
	(void)arg;
	for (int i = 0; i < NCONN; i++) {
		int c = accept(listen_fd, NULL, NULL);
		if (c < 0)
			die("accept");
		int e = pthread_create(&handlers[i], NULL, handler,
				       (void *)(intptr_t)(c << 16 | i));
		if (e) {
			errno = e;
			die("pthread_create");
		}
	}
	return NULL;
}

/* Read exactly n bytes, the way this client's call family does it. */
static void read_exact(int fd, char *p, size_t n, int family)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;
		if (family == 1) {
			r = recv(fd, p + got, n - got, 0);
		} else if (family == 2) {
			size_t half = (n - got) / 2;
			struct iovec iov[2] = { { p + got, half },
						{ p + got + half, n - got - half } };
			r = readv(fd, iov, 2);
		} else if (family == 3) {
			r = recv(fd, p + got, n - got, MSG_WAITALL);
			if (r >= 0 && (size_t)r != n - got) {
				fprintf(stderr, "net_echo: MSG_WAITALL gave "
					"%zd of %zu\n", r, n - got);
				exit(1);
			}
		} else {
			r = read(fd, p + got, n - got);
		}
		if (r < 0)
			die("client read");
		if (r == 0) {
			fprintf(stderr, "net_echo: early EOF\n");
			exit(1);
		}
		got += (size_t)r;
	}
}

static void send_msg(int fd, const char *p, size_t n, int family)
{
	ssize_t w;
	size_t half = n / 2;
	struct iovec iov[2] = { { (void *)p, half }, { (void *)(p + half), n - half } };

	if (family == 2) {
		w = writev(fd, iov, 2);
	} else if (family == 3) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
		w = sendmsg(fd, &m, 0);
	} else if (family == 1) {
		w = send(fd, p, n, 0);
	} else {
		w = write(fd, p, n);
	}
	if (w < 0)
		die("client write");
	if ((size_t)w != n) {
		fprintf(stderr, "net_echo: short client write\n");
		exit(1);
	}
}

static void *client(void *arg)
{
	int i = (int)(intptr_t)arg, family = i % 4;
	uint32_t seed = 2166136261u ^ (uint32_t)(i * 7919 + 1);
	char *out = malloc(MAXMSG), *in = malloc(MAXMSG);
	struct result r = { 1469598103934665603ull, 0, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (!out || !in)
		die("malloc");
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr))
		die("connect");
	barrier();
	for (int k = 0; k < ROUNDS; k++) {
		size_t n = 1 + next_rand(&seed) % MAXMSG;
		for (size_t j = 0; j < n; j++)
			out[j] = (char)next_rand(&seed);
		send_msg(fd, out, n, family);
		read_exact(fd, in, n, family);
		if (memcmp(in, out, n))
			r.mismatches++;
		for (size_t j = 0; j < n; j++)
			r.hash = (r.hash ^ (unsigned char)in[j]) *
				 1099511628211ull;
		r.bytes += n;
	}
	if (close(fd))
		die("close");
	results[i] = r;
	free(out);
	free(in);
	barrier();
	return NULL;
}

int main(void)
{
	static pthread_t clients[NCONN];
	pthread_t acc;
	socklen_t len = sizeof server_addr;
	int e;

	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0)
		die("socket");
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, SOMAXCONN) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &len))
		die("listen");
	if ((e = pthread_barrier_init(&all_up, NULL, 2 * NCONN))) {
		errno = e;
		die("pthread_barrier_init");
	}
	if ((e = pthread_create(&acc, NULL, acceptor, NULL))) {
		errno = e;
		die("pthread_create");
	}
	for (int i = 0; i < NCONN; i++) {
		if ((e = pthread_create(&clients[i], NULL, client,
					(void *)(intptr_t)i))) {
			errno = e;
			die("pthread_create");
		}
	}
	uint64_t hash = 0, bytes = 0, back = 0;
	int mismatches = 0;
	for (int i = 0; i < NCONN; i++) {
		if ((e = pthread_join(clients[i], NULL))) {
			errno = e;
			die("pthread_join");
		}
		hash += results[i].hash;
		bytes += results[i].bytes;
		mismatches += results[i].mismatches;
	}
	if ((e = pthread_join(acc, NULL))) {
		errno = e;
		die("pthread_join");
	}
	for (int i = 0; i < NCONN; i++) {
		if ((e = pthread_join(handlers[i], NULL))) {
			errno = e;
			die("pthread_join");
		}
		back += echoed[i];
	}
	close(listen_fd);
	printf("connections: %d, round trips: %d\n", NCONN, NCONN * ROUNDS);
	printf("bytes sent: %llu, echoed by the server: %llu\n",
	       (unsigned long long)bytes, (unsigned long long)back);
	printf("mismatched messages: %d\n", mismatches);
	printf("checksum: %016llx\n", (unsigned long long)hash);
	if (mismatches || back != bytes)
		return 1;
	printf("OK\n");
	return 0;
}
