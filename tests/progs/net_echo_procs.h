/*
 * net_echo_procs.h: the body of net_echo_10k and net_echo_19k, a
 * thread-per-connection TCP echo server on 127.0.0.1 and a
 * thread-per-connection client in a second process.
 *
 * Why two processes: each end of a loopback connection is an fd, and
 * RLIMIT_NOFILE's hard limit (20,000 on the machines this runs on, not
 * raisable) cannot hold both ends of 10,000 connections in one process.
 * So the server forks and execs itself as the client ("PROG client PORT
 * CONNS ROUNDS"); the environment goes with it, LD_PRELOAD included, so
 * under goshim both ends run on it.
 *
 * Server: an acceptor thread accepts CONNS connections and starts one
 * handler thread per connection; the handlers meet at a barrier once all
 * CONNS are accepted (natively the server then has CONNS handler threads
 * and its main thread), then each echoes until EOF with blocking read and
 * write (or send), hashing every byte it read. Client: CONNS threads
 * each connect, meet at a barrier (all connections open at once), do
 * ROUNDS round trips of 1..MAXMSG bytes derived from the thread's index
 * with a call family per thread (read/write, recv/send, readv/writev,
 * sendmsg + MSG_WAITALL), compare what comes back, meet again, close.
 *
 * Every byte is checked three ways: the client compares each message, the
 * client's and the server's per-connection FNV-1a hashes are summed and
 * printed (the same bytes give the same sum), and the server recomputes the
 * sum every client must have sent and fails if what it read differs.
 *
 * 19,000 connections to one server port from one client address need
 * 19,000 ephemeral ports, and connect's port search slows as
 * net.ipv4.ip_local_port_range fills: the client spreads its connections
 * over source addresses 127.0.0.2, 127.0.0.3, ... so that each uses at
 * most a quarter of the range (IP_BIND_ADDRESS_NO_PORT: the port is
 * still chosen at connect), as a load generator does.
 *
 * The programs that include this are nothing but their goshim-test
 * header lines: the numbers come from its args line.
 */
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
#include <sys/wait.h>
#include <unistd.h>

#define MAXMSG 8192
#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

static int conns, rounds;
static pthread_barrier_t all_up;
static const char *side = "server";

static void die(const char *what)
{
	fprintf(stderr, "net_echo_procs %s: %s: %s\n", side, what,
		strerror(errno));
	exit(1);
}

static void die_err(const char *what, int e)
{
	errno = e;
	die(what);
}

static void barrier(void)
{
	int e = pthread_barrier_wait(&all_up);
	if (e && e != PTHREAD_BARRIER_SERIAL_THREAD)
		die_err("pthread_barrier_wait", e);
}

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * FNV_PRIME;
	return h;
}

/* The bytes client i sends: sizes and contents from one xorshift stream. */
static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static uint32_t client_seed(int i)
{
	return 2166136261u ^ (uint32_t)(i * 7919 + 1);
}

static size_t make_msg(uint32_t *seed, char *out)
{
	size_t n = 1 + next_rand(seed) % MAXMSG;
	for (size_t j = 0; j < n; j++)
		out[j] = (char)next_rand(seed);
	return n;
}

static int parse(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 1000000) {
		fprintf(stderr, "net_echo_procs: bad number '%s'\n", s);
		exit(2);
	}
	return (int)v;
}

/* ---- client ---------------------------------------------------------- */

static struct sockaddr_in server_addr;
static int source_addrs = 1; /* 127.0.0.1 only, or 127.0.0.2.. */

struct client_result {
	uint64_t hash, bytes;
	int mismatches;
};
static struct client_result *results;

/* How many source addresses conns connections need to keep each
 * address's share of the ephemeral range under a quarter: connect's
 * search for a free port slows as the range fills (19,000 connections
 * from one address in a range of 28,232 spent 40% of the test's CPU in
 * __inet_hash_connect). */
static int addrs_needed(int n)
{
	int lo, hi, per;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

	if (f == NULL)
		return 1;
	if (fscanf(f, "%d %d", &lo, &hi) != 2 || hi < lo) {
		fclose(f);
		return 1;
	}
	fclose(f);
	per = (hi - lo + 1) / 4;
	return per < 1 ? n : (n + per - 1) / per;
}

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
				fprintf(stderr, "net_echo_procs: MSG_WAITALL "
					"gave %zd of %zu\n", r, n - got);
				exit(1);
			}
		} else {
			r = read(fd, p + got, n - got);
		}
		if (r < 0)
			die("read");
		if (r == 0) {
			fprintf(stderr, "net_echo_procs: early EOF\n");
			exit(1);
		}
		got += (size_t)r;
	}
}

static void send_msg(int fd, const char *p, size_t n, int family)
{
	ssize_t w;
	size_t half = n / 2;
	struct iovec iov[2] = { { (void *)p, half },
				{ (void *)(p + half), n - half } };

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
		die("write");
	if ((size_t)w != n) {
		fprintf(stderr, "net_echo_procs: short write %zd of %zu\n", w,
			n);
		exit(1);
	}
}

static void *client(void *arg)
{
	int i = (int)(intptr_t)arg, family = i % 4;
	uint32_t seed = client_seed(i);
	char *out = malloc(MAXMSG), *in = malloc(MAXMSG);
	struct client_result r = { FNV_OFFSET, 0, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (!out || !in)
		die("malloc");
	if (fd < 0)
		die("socket");
	if (source_addrs > 1) {
		struct sockaddr_in src = {
			.sin_family = AF_INET,
			.sin_addr.s_addr = htonl(0x7f000002 + i % source_addrs),
		};
		int one = 1;
		if (setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			       sizeof one) ||
		    bind(fd, (struct sockaddr *)&src, sizeof src))
			die("bind");
	}
	if (connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr))
		die("connect");
	barrier();
	for (int k = 0; k < rounds; k++) {
		size_t n = make_msg(&seed, out);
		send_msg(fd, out, n, family);
		read_exact(fd, in, n, family);
		if (memcmp(in, out, n))
			r.mismatches++;
		r.hash = fnv(r.hash, in, n);
		r.bytes += n;
	}
	barrier();
	if (close(fd))
		die("close");
	results[i] = r;
	free(out);
	free(in);
	return NULL;
}

static int client_main(char **argv)
{
	pthread_t *t;
	uint64_t hash = 0, bytes = 0;
	int e, mismatches = 0;

	side = "client";
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	server_addr.sin_port = htons((uint16_t)parse(argv[2]));
	conns = parse(argv[3]);
	rounds = parse(argv[4]);
	source_addrs = addrs_needed(conns);
	t = calloc((size_t)conns, sizeof *t);
	results = calloc((size_t)conns, sizeof *results);
	if (!t || !results)
		die("calloc");
	if ((e = pthread_barrier_init(&all_up, NULL, (unsigned)conns)))
		die_err("pthread_barrier_init", e);
	for (int i = 0; i < conns; i++)
		if ((e = pthread_create(&t[i], NULL, client,
					(void *)(intptr_t)i)))
			die_err("pthread_create", e);
	for (int i = 0; i < conns; i++) {
		if ((e = pthread_join(t[i], NULL)))
			die_err("pthread_join", e);
		hash += results[i].hash;
		bytes += results[i].bytes;
		mismatches += results[i].mismatches;
	}
	printf("client: %d connections open at once, %d round trips\n", conns,
	       conns * rounds);
	printf("client: %llu bytes echoed back, %d mismatched messages\n",
	       (unsigned long long)bytes, mismatches);
	printf("client: checksum of what came back: %016llx\n",
	       (unsigned long long)hash);
	return mismatches ? 1 : 0;
}

/* ---- server ---------------------------------------------------------- */

static int listen_fd;
static pthread_t *handlers;
static int *conn_fd;			 /* per connection */
static uint64_t *read_hash, *read_bytes;

static void *handler(void *arg)
{
	int idx = (int)(intptr_t)arg, fd = conn_fd[idx];
	char *buf = malloc(MAXMSG);
	uint64_t h = FNV_OFFSET, total = 0;

	if (!buf)
		die("malloc");
	barrier();
	for (int k = 0;; k++) {
		ssize_t n = read(fd, buf, MAXMSG), w;
		if (n < 0)
			die("read");
		if (n == 0)
			break;
		h = fnv(h, buf, (size_t)n);
		total += (uint64_t)n;
		/* A blocking socket takes all of it in one call. */
		w = k & 1 ? send(fd, buf, (size_t)n, 0)
			  : write(fd, buf, (size_t)n);
		if (w != n)
			die("write");
	}
	if (close(fd))
		die("close");
	read_hash[idx] = h;
	read_bytes[idx] = total;
	free(buf);
	return NULL;
}

static void *acceptor(void *arg)
{
	(void)arg;
	for (int i = 0; i < conns; i++) {
		int c = accept(listen_fd, NULL, NULL), e;
		if (c < 0)
			die("accept");
		conn_fd[i] = c;
		if ((e = pthread_create(&handlers[i], NULL, handler,
					(void *)(intptr_t)i)))
			die_err("pthread_create", e);
	}
	return NULL;
}

/* The sum over clients of the hash of everything client i sends. */
static uint64_t expected_hash(uint64_t *bytes)
{
	char *msg = malloc(MAXMSG);
	uint64_t sum = 0;

	if (!msg)
		die("malloc");
	*bytes = 0;
	for (int i = 0; i < conns; i++) {
		uint32_t seed = client_seed(i);
		uint64_t h = FNV_OFFSET;
		for (int k = 0; k < rounds; k++) {
			size_t n = make_msg(&seed, msg);
			h = fnv(h, msg, n);
			*bytes += n;
		}
		sum += h;
	}
	free(msg);
	return sum;
}

static int server_main(char **argv)
{
	char port[8], nconns[12], nrounds[12];
	socklen_t len = sizeof server_addr;
	uint64_t hash = 0, bytes = 0, want_hash, want_bytes;
	pthread_t acc;
	pid_t pid;
	int e, st;

	conns = parse(argv[1]);
	rounds = parse(argv[2]);
	handlers = calloc((size_t)conns, sizeof *handlers);
	conn_fd = calloc((size_t)conns, sizeof *conn_fd);
	read_hash = calloc((size_t)conns, sizeof *read_hash);
	read_bytes = calloc((size_t)conns, sizeof *read_bytes);
	if (!handlers || !conn_fd || !read_hash || !read_bytes)
		die("calloc");
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0)
		die("socket");
	server_addr.sin_family = AF_INET;
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) ||
	    listen(listen_fd, SOMAXCONN) ||
	    getsockname(listen_fd, (struct sockaddr *)&server_addr, &len))
		die("listen");

	/* The client: this program again, before any thread of ours. */
	snprintf(port, sizeof port, "%d", ntohs(server_addr.sin_port));
	snprintf(nconns, sizeof nconns, "%d", conns);
	snprintf(nrounds, sizeof nrounds, "%d", rounds);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(listen_fd);
		execl("/proc/self/exe", argv[0], "client", port, nconns,
		      nrounds, (char *)NULL);
		_exit(127);
	}

	if ((e = pthread_barrier_init(&all_up, NULL, (unsigned)conns)))
		die_err("pthread_barrier_init", e);
	if ((e = pthread_create(&acc, NULL, acceptor, NULL)))
		die_err("pthread_create", e);
	/* A client that fails ends the test here, not in a hang in accept. */
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	if (st != 0) {
		fprintf(stderr, "net_echo_procs: the client failed (status "
			"%#x)\n", st);
		exit(1);
	}
	if ((e = pthread_join(acc, NULL)))
		die_err("pthread_join", e);
	for (int i = 0; i < conns; i++) {
		if ((e = pthread_join(handlers[i], NULL)))
			die_err("pthread_join", e);
		hash += read_hash[i];
		bytes += read_bytes[i];
	}
	close(listen_fd);
	want_hash = expected_hash(&want_bytes);
	printf("server: %d connections held by %d handler threads at once\n",
	       conns, conns);
	printf("server: %llu bytes echoed, checksum %016llx\n",
	       (unsigned long long)bytes, (unsigned long long)hash);
	printf("server: every byte the clients sent: %s\n",
	       hash == want_hash && bytes == want_bytes ? "yes" : "no");
	return hash == want_hash && bytes == want_bytes ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client_main(argv);
	if (argc != 3) {
		fprintf(stderr, "usage: %s CONNS ROUNDS\n", argv[0]);
		return 2;
	}
	return server_main(argv);
}
