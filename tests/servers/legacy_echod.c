/* legacy_echod PORT: the bundled echo server for `goshim stress --proto
 * echo`. Thread-per-connection like legacy_httpd, and as unaware of
 * goshim: a blocking accept loop on 127.0.0.1:PORT, one detached pthread
 * per connection, and each thread writes back whatever it reads until EOF.
 * (The bench's net_server takes an ephemeral port and exits after a set
 * number of connections; stress needs a fixed port and a server that runs
 * until it is killed.) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "legacy_echod: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *connection(void *arg)
{
	int fd = (int)(long)arg;
	char buf[4096];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				goto out;
			off += w;
		}
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
		fprintf(stderr, "usage: legacy_echod PORT\n");
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
			fprintf(stderr, "legacy_echod: pthread_create: %s\n",
				strerror(err));
			close(fd);
		}
	}
}
