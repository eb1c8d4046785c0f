/* legacy_httpd PORT: the bundled legacy server of `goshim stress` and
 * `make demo`. A classic thread-per-connection HTTP/1.1 server written the
 * way servers were before event loops, and unaware of goshim: a blocking
 * accept loop on 127.0.0.1:PORT, one detached pthread per connection with
 * default attributes, blocking read/write, keep-alive (HTTP/1.1's default;
 * "Connection: close" or HTTP/1.0 without keep-alive ends it).
 *
 *   GET /            "hello\n"; counts one hit
 *   GET /sleep?ms=N  usleep(N ms), then "slept N\n"; counts one hit
 *   GET /hits        the hit count (hits so far, this request not counted)
 *   anything else    404 (not counted)
 *
 * The counter sits behind a mutex, as such servers had it. Natively each
 * connection costs one OS thread; under goshim one goroutine. It runs until
 * killed. Requests are small: a request whose head exceeds the buffer gets
 * 431 and the connection is closed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_mutex_t hits_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long hits;

static void die(const char *what)
{
	fprintf(stderr, "legacy_httpd: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Head and body in one write: two small writes would meet Nagle and the
 * client's delayed ACK (40 ms per request). */
static int respond(int fd, int code, const char *reason, const char *body,
		   int keep_alive)
{
	char msg[512];
	int n = snprintf(msg, sizeof msg,
			 "HTTP/1.1 %d %s\r\n"
			 "Content-Type: text/plain\r\n"
			 "Content-Length: %zu\r\n"
			 "Connection: %s\r\n\r\n%s",
			 code, reason, strlen(body),
			 keep_alive ? "keep-alive" : "close", body);
	return write_all(fd, msg, (size_t)n);
}

/* Does the header block HEAD (NUL-terminated) have NAME: with a value
 * containing TOKEN (case-insensitive)? */
static int header_has(const char *head, const char *name, const char *token)
{
	size_t nl = strlen(name);
	for (const char *p = strstr(head, "\r\n"); p; p = strstr(p, "\r\n")) {
		p += 2;
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *end = strstr(p, "\r\n");
			char val[128];
			size_t len = end ? (size_t)(end - p - nl - 1) : 0;
			if (len >= sizeof val)
				len = sizeof val - 1;
			memcpy(val, p + nl + 1, len);
			val[len] = '\0';
			return strcasestr(val, token) != NULL;
		}
	}
	return 0;
}

/* Serves one request whose head is HEAD; returns whether the connection
 * stays open. */
static int serve(int fd, char *head)
{
	char method[16], target[256], version[16], body[64];
	if (sscanf(head, "%15s %255s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0) {
		respond(fd, 400, "Bad Request", "bad request\n", 0);
		return 0;
	}
	int keep = strcmp(version, "HTTP/1.0") == 0
			   ? header_has(head, "Connection", "keep-alive")
			   : !header_has(head, "Connection", "close");
	int r;
	if (strcmp(method, "GET") != 0) {
		r = respond(fd, 405, "Method Not Allowed", "GET only\n", keep);
	} else if (strcmp(target, "/") == 0) {
		pthread_mutex_lock(&hits_mu);
		hits++;
		pthread_mutex_unlock(&hits_mu);
		r = respond(fd, 200, "OK", "hello\n", keep);
	} else if (strncmp(target, "/sleep?ms=", 10) == 0) {
		long ms = strtol(target + 10, NULL, 10);
		if (ms < 0 || ms > 60000)
			ms = 0;
		usleep((useconds_t)ms * 1000);
		pthread_mutex_lock(&hits_mu);
		hits++;
		pthread_mutex_unlock(&hits_mu);
		snprintf(body, sizeof body, "slept %ld\n", ms);
		r = respond(fd, 200, "OK", body, keep);
	} else if (strcmp(target, "/hits") == 0) {
		pthread_mutex_lock(&hits_mu);
		unsigned long long h = hits;
		pthread_mutex_unlock(&hits_mu);
		snprintf(body, sizeof body, "%llu\n", h);
		r = respond(fd, 200, "OK", body, keep);
	} else {
		r = respond(fd, 404, "Not Found", "not found\n", keep);
	}
	return r == 0 && keep;
}

static void *connection(void *arg)
{
	int fd = (int)(long)arg;
	char buf[4096];
	size_t have = 0;

	for (;;) {
		char *end;
		buf[have] = '\0';
		while (!(end = strstr(buf, "\r\n\r\n"))) {
			if (have == sizeof buf - 1) {
				respond(fd, 431, "Request Header Fields Too Large",
					"too large\n", 0);
				goto out;
			}
			ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				goto out;
			have += (size_t)n;
			buf[have] = '\0';
		}
		end += 4;
		/* GET requests have no body: what follows is the next request. */
		char saved = *end;
		*end = '\0';
		int keep = serve(fd, buf);
		*end = saved;
		if (!keep)
			break;
		have -= (size_t)(end - buf);
		memmove(buf, end, have);
	}
out:
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char *end;
	long port = argc == 2 ? strtol(argv[1], &end, 10) : -1;
	int one = 1, lfd;

	if (argc != 2 || *end || port < 1 || port > 65535) {
		fprintf(stderr, "usage: legacy_httpd PORT\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(lfd, (struct sockaddr *)&a, sizeof a))
		die("bind");
	if (listen(lfd, SOMAXCONN))
		die("listen");
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* out of fds or memory: shed load, as such servers do */
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				usleep(10000);
				continue;
			}
			die("accept");
		}
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		int err = pthread_create(&t, &at, connection, (void *)(long)fd);
		pthread_attr_destroy(&at);
		if (err) {
			fprintf(stderr, "legacy_httpd: pthread_create: %s\n",
				strerror(err));
			close(fd);
		}
	}
}
