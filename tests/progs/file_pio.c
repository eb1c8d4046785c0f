// Positioned file I/O from many threads: 16 threads each pwrite and
// pwritev their own blocks of one file and read them back with pread and
// preadv (and the 64-bit forms), with exact contents; pread on a pipe
// says ESPIPE. Under goshim these run under entersyscall.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define NTHREADS 16
#define BLOCK 4096
#define ROUNDS 50

static int fd;

static void fill(unsigned char *b, int id, int round)
{
	for (int i = 0; i < BLOCK; i++)
		b[i] = (unsigned char)(id * 31 + round * 7 + i);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	unsigned char w[BLOCK], r[BLOCK];
	long bad = 0;

	for (int round = 0; round < ROUNDS; round++) {
		off_t off = (off_t)id * BLOCK;
		fill(w, id, round);
		if (round % 2) {
			struct iovec v[2] = { { w, BLOCK / 2 },
					      { w + BLOCK / 2, BLOCK / 2 } };
			bad += pwritev(fd, v, 2, off) != BLOCK;
		} else {
			bad += pwrite64(fd, w, BLOCK, off) != BLOCK;
		}
		memset(r, 0, sizeof r);
		if (round % 3) {
			struct iovec v = { r, BLOCK };
			bad += preadv64(fd, &v, 1, off) != BLOCK;
		} else {
			bad += pread(fd, r, BLOCK, off) != BLOCK;
		}
		bad += memcmp(w, r, BLOCK) != 0;
	}
	return (void *)bad;
}

int main(void)
{
	char path[] = "/tmp/file_pio.XXXXXX";
	pthread_t t[NTHREADS];
	long bad = 0;
	void *r;
	int p[2];
	char c;

	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	unlink(path);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("%d threads x %d rounds of positioned I/O: %s\n", NTHREADS,
	       ROUNDS, bad ? "MISMATCH" : "exact");
	if (pipe(p) != 0)
		return 1;
	errno = 0;
	ssize_t n = pread(p[0], &c, 1, 0);
	printf("pread on a pipe: %zd %s\n", n, strerror(errno));
	return 0;
}
