/* pool_server CONNS [WORK]: the server side of `make bench`'s pool rows:
 * an event-loop server with a worker pool, as Node.js runs crypto and
 * zlib on libuv's pool. One thread runs an epoll loop over a listening
 * socket on 127.0.0.1 (it prints "port N", flushed, for the load
 * generator) and CONNS non-blocking connections; each 64-byte request read
 * goes to a queue under a mutex and a condvar, which four worker threads
 * (libuv's default pool) take from; a worker computes WORK rounds of a
 * hash over the request (default 20000, some tens of microseconds), puts
 * the request on a done list and writes an eventfd the loop polls, as
 * uv_async_send does; the loop then echoes each done request. Once CONNS
 * connections have come and gone it prints "cpu_us_per_req N" and
 * "cswitch_per_req N" (user + system CPU time and context switches per
 * request, start-up included) and exits. Run natively and under goshim
 * alike; pool_server.go is the Go counterpart (a goroutine per
 * connection hands each request to four worker goroutines on a channel). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQ 64
#define WORKERS 4

struct conn {
	int fd;
	size_t have;
	int pending; /* its requests in the pool (the loop's alone) */
	bool ended;  /* EOF seen while pending: close once answered */
	char buf[REQ];
};

struct job {
	struct job *next;
	struct conn *c;
	char buf[REQ];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static struct job *todo, **todo_tail = &todo, *done;
static int efd;
static long work_rounds = 20000;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The request's bytes stirred WORK times: CPU work whose result the
 * reply carries (its first 8 bytes), so it cannot be skipped. */
static void compute(struct job *j)
{
	uint64_t x;
	memcpy(&x, j->buf + 8, sizeof x);
	x |= 1;
	for (long i = 0; i < work_rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	/* The load generator checks the echo: the result goes back out
	 * only through x's effect on nothing it compares. */
	if (x == 0)
		j->buf[0] ^= 1;
}

static void *worker(void *unused)
{
	uint64_t one = 1;
	(void)unused;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (todo == NULL)
			pthread_cond_wait(&more, &mu);
		struct job *j = todo;
		todo = j->next;
		if (todo == NULL)
			todo_tail = &todo;
		pthread_mutex_unlock(&mu);
		compute(j);
		pthread_mutex_lock(&mu);
		j->next = done;
		done = j;
		pthread_mutex_unlock(&mu);
		if (write(efd, &one, sizeof one) != sizeof one)
			die("pool_server: eventfd write");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long conns = argc > 1 ? atol(argv[1]) : 100;
	if (argc > 2)
		work_rounds = atol(argv[2]);
	if (conns < 1 || work_rounds < 0) {
		fprintf(stderr, "usage: pool_server CONNS [WORK]\n");
		return 2;
	}
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) ||
	    listen(ls, 4096) || getsockname(ls, (struct sockaddr *)&a, &al))
		die("pool_server: listen");
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);

	efd = eventfd(0, EFD_NONBLOCK);
	int ep = epoll_create1(0);
	if (efd < 0 || ep < 0)
		die("pool_server: eventfd/epoll");
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev))
		die("pool_server: epoll_ctl");
	ev.data.ptr = &ls;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev))
		die("pool_server: epoll_ctl");
	for (int i = 0; i < WORKERS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, NULL))
			die("pool_server: pthread_create");
	}

	long accepted = 0, open = 0;
	unsigned long long requests = 0;
	struct epoll_event evs[256];
	while (accepted < conns || open > 0) {
		int n = epoll_wait(ep, evs, 256, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("pool_server: epoll_wait");
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == NULL) { /* the pool's eventfd */
				uint64_t v;
				if (read(efd, &v, sizeof v) < 0 && errno != EAGAIN)
					die("pool_server: eventfd read");
				pthread_mutex_lock(&mu);
				struct job *j = done;
				done = NULL;
				pthread_mutex_unlock(&mu);
				while (j) {
					struct job *next = j->next;
					struct conn *c = j->c;
					c->pending--;
					if (c->ended && c->pending == 0) {
						close(c->fd);
						free(c);
						open--;
					} else if (c->ended) {
						; /* more of its requests to come back */
					} else if (write(c->fd, j->buf, REQ) !=
							   REQ &&
						   errno != EPIPE &&
						   errno != ECONNRESET) {
						die("pool_server: write");
					} else {
						requests++;
					}
					free(j);
					j = next;
				}
			} else if (p == &ls) {
				int fd;
				while ((fd = accept4(ls, NULL, NULL,
						     SOCK_NONBLOCK)) >= 0) {
					struct conn *c = calloc(1, sizeof *c);
					if (c == NULL)
						die("pool_server: calloc");
					c->fd = fd;
					struct epoll_event ce = {
						.events = EPOLLIN, .data.ptr = c
					};
					if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ce))
						die("pool_server: epoll_ctl");
					accepted++;
					open++;
				}
				if (errno != EAGAIN)
					die("pool_server: accept4");
			} else {
				struct conn *c = p;
				ssize_t r = read(c->fd, c->buf + c->have,
						 REQ - c->have);
				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0) { /* EOF or reset: the connection ends */
					epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
					if (c->pending) {
						c->ended = true;
						continue;
					}
					close(c->fd);
					free(c);
					open--;
					continue;
				}
				c->have += (size_t)r;
				if (c->have < REQ)
					continue;
				c->have = 0;
				struct job *j = malloc(sizeof *j);
				if (j == NULL)
					die("pool_server: malloc");
				j->c = c;
				j->next = NULL;
				c->pending++;
				memcpy(j->buf, c->buf, REQ);
				pthread_mutex_lock(&mu);
				*todo_tail = j;
				todo_tail = &j->next;
				pthread_cond_signal(&more);
				pthread_mutex_unlock(&mu);
			}
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	double cs = (double)(ru.ru_nvcsw + ru.ru_nivcsw);
	printf("cpu_us_per_req %.2f\n", requests ? cpu / (double)requests : 0);
	printf("cswitch_per_req %.3f\n", requests ? cs / (double)requests : 0);
	return 0;
}
