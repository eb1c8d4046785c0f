// fd_swapped: a file swapped behind goshim's back under an fd number it
// has waited on. A thread waits to read one end of a socketpair (goshim
// adds it to epoll); the socket is then closed by fclose(fdopen(fd)), whose
// close is glibc's own (goshim does not see it), and popen's pipe, also
// made inside glibc, takes the same number. Reads of the pipe by fd, by
// threads, must still see the child's output: the kernel dropped the old
// registration with the old file, so goshim has to notice and add the new
// one. Three rounds; each read must come back within a few seconds (a
// lost registration would hang until the test's timeout).
// goshim-test: timeout=30
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "fd_swapped: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct job {
	int fd;
	char buf[64];
	ssize_t n;
};

static void *reader(void *arg)
{
	struct job *j = arg;
	j->n = read(j->fd, j->buf, sizeof j->buf - 1);
	if (j->n < 0)
		die("read");
	j->buf[j->n] = '\0';
	return NULL;
}

static void read_in_thread(struct job *j)
{
	pthread_t t;
	if (pthread_create(&t, NULL, reader, j) != 0)
		die("pthread_create");
	if (pthread_join(t, NULL) != 0)
		die("pthread_join");
}

int main(void)
{
	for (int round = 1; round <= 3; round++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			die("socketpair");
		/* A wait on sv[0]: the reader blocks until the write. */
		struct job j = { .fd = sv[0] };
		pthread_t t;
		if (pthread_create(&t, NULL, reader, &j) != 0)
			die("pthread_create");
		usleep(50000);
		if (write(sv[1], "sock\n", 5) != 5)
			die("write");
		if (pthread_join(t, NULL) != 0)
			die("pthread_join");
		printf("round %d: socket read \"%.4s\"\n", round, j.buf);

		/* Closed inside glibc, then the number reused inside glibc. */
		int num = sv[0];
		FILE *f = fdopen(sv[0], "r");
		if (f == NULL)
			die("fdopen");
		fclose(f);
		FILE *p = popen("sleep 0.3; echo pipe", "r");
		if (p == NULL)
			die("popen");
		printf("round %d: popen took the socket's number: %s\n", round,
		       fileno(p) == num ? "yes" : "no");
		struct job k = { .fd = fileno(p) };
		double t0 = now_s();
		read_in_thread(&k);
		double took = now_s() - t0;
		printf("round %d: pipe read \"%.4s\" within 5 s: %s\n", round,
		       k.buf, took < 5 ? "yes" : "no");
		if (pclose(p) != 0)
			die("pclose");
		close(sv[1]);
	}
	return 0;
}
