// pipe_close: close() of a pipe fd while another thread is blocked reading
// it. Linux leaves such a read blocked (the read holds the file) until
// data or EOF; goshim wakes it with EBADF, as the next call on the fd
// would fail (core/README.md, invariant 6). Either way the reader is done once the
// closer has also closed the write end (EOF) or written through a dup of
// the read end's pipe, so the test checks that the reader came back with
// one of those answers and prints nothing that differs. Then the closed
// fd's number, taken by a new pipe, works as the new pipe: no wakeup or
// registration left over from the old one gets in the way.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 50

static void die(const char *what)
{
	fprintf(stderr, "pipe_close: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct reader {
	int fd;
	ssize_t r;
	int err;
	char c;
};

static void *do_read(void *arg)
{
	struct reader *rd = arg;
	rd->r = read(rd->fd, &rd->c, 1);
	rd->err = rd->r < 0 ? errno : 0;
	return NULL;
}

static pthread_t start_reader(struct reader *rd)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, do_read, rd);
	if (e) {
		errno = e;
		die("pthread_create");
	}
	return t;
}

static void join(pthread_t t)
{
	int e = pthread_join(t, NULL);
	if (e) {
		errno = e;
		die("pthread_join");
	}
}

int main(void)
{
	int eof_or_ebadf = 0, data_or_ebadf = 0, reused = 0;

	for (int k = 0; k < ROUNDS; k++) {
		int p[2], q[2];

		/* Close the read end under the reader, then the write end. */
		if (pipe(p))
			die("pipe");
		struct reader rd = { .fd = p[0] };
		pthread_t t = start_reader(&rd);
		usleep(2000);
		if (close(p[0]))
			die("close");
		if (close(p[1]))
			die("close");
		join(t);
		eof_or_ebadf += rd.r == 0 || (rd.r < 0 && rd.err == EBADF);

		/* The same with a dup of the read end kept: then a write
		 * reaches the blocked reader natively, and goshim's reader
		 * has EBADF; the dup is drained after. */
		if (pipe(p))
			die("pipe");
		int keep = dup(p[0]);
		if (keep < 0)
			die("dup");
		rd = (struct reader){ .fd = p[0] };
		t = start_reader(&rd);
		usleep(2000);
		if (close(p[0]))
			die("close");
		if (write(p[1], "d", 1) != 1)
			die("write");
		join(t);
		data_or_ebadf += (rd.r == 1 && rd.c == 'd') ||
				 (rd.r < 0 && rd.err == EBADF);
		if (close(p[1]) || close(keep))
			die("close");

		/* A new pipe takes the lowest free numbers: the old ones. */
		if (pipe(q))
			die("pipe");
		rd = (struct reader){ .fd = q[0] };
		t = start_reader(&rd);
		usleep(1000);
		if (write(q[1], "n", 1) != 1)
			die("write");
		join(t);
		reused += rd.r == 1 && rd.c == 'n';
		if (close(q[0]) || close(q[1]))
			die("close");
	}
	printf("reader of a closed fd came back with EOF or EBADF: %d of %d\n",
	       eof_or_ebadf, ROUNDS);
	printf("... with the written byte or EBADF (dup kept): %d of %d\n",
	       data_or_ebadf, ROUNDS);
	printf("new pipe on the old numbers works: %d of %d\n", reused, ROUNDS);
	if (eof_or_ebadf != ROUNDS || data_or_ebadf != ROUNDS || reused != ROUNDS)
		return 1;
	printf("OK\n");
	return 0;
}
