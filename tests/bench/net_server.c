/* net_server CONNS: the server side of `make bench`'s net rows, a classic
 * thread-per-connection echo server, the kind goshim is for: it listens on
 * 127.0.0.1 (an ephemeral port), prints "port N" (flushed) for the load
 * generator, accepts CONNS connections with one blocking thread each
 * (default attributes), and each thread echoes what it reads until EOF.
 * Once every connection has ended it prints "rss_peak_kib N" (VmHWM from
 * /proc/self/status: the peak over the whole run), "cpu_us_per_req N"
 * and "cswitch_per_req N" (its user + system CPU time and its context
 * switches, start-up included, per 64 bytes echoed: figures that other
 * load on the machine disturbs less than requests/s) and exits. Run natively
 * and under goshim alike; net_server.go is the Go counterpart. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static long finished;
static unsigned long long echoed; /* bytes, under mu */

static void die(const char *what)
{
	fprintf(stderr, "net_server: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *handler(void *arg)
{
	int fd = (int)(long)arg;
	char buf[4096];
	unsigned long long total = 0;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		if (write(fd, buf, (size_t)n) != n)
			break;
		total += (unsigned long long)n;
	}
	close(fd);
	pthread_mutex_lock(&mu);
	finished++;
	echoed += total;
	pthread_cond_signal(&all_done);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static long vmhwm_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	pthread_attr_t attr;
	struct rusage ru;
	long conns = argc == 2 ? atol(argv[1]) : 0;
	int lfd;

	if (conns < 1) {
		fprintf(stderr, "usage: net_server CONNS\n");
		return 2;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) ||
	    listen(lfd, SOMAXCONN) ||
	    getsockname(lfd, (struct sockaddr *)&a, &len))
		die("listen");
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long i = 0; i < conns; i++) {
		pthread_t t;
		int c = accept(lfd, NULL, NULL), e;
		if (c < 0)
			die("accept");
		if ((e = pthread_create(&t, &attr, handler, (void *)(long)c))) {
			errno = e;
			die("pthread_create");
		}
	}
	pthread_mutex_lock(&mu);
	while (finished < conns)
		pthread_cond_wait(&all_done, &mu);
	pthread_mutex_unlock(&mu);
	printf("rss_peak_kib %ld\n", vmhwm_kib());
	if (getrusage(RUSAGE_SELF, &ru) == 0 && echoed >= 64) {
		double us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
			    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
		printf("cpu_us_per_req %.2f\n", us / (double)(echoed / 64));
		printf("cswitch_per_req %.3f\n",
		       (double)(ru.ru_nvcsw + ru.ru_nivcsw) / (double)(echoed / 64));
	}
	return 0;
}
