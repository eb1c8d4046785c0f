// pipe_fifo: the fds goshim leaves to the C library still behave. A FIFO
// opened by name (no per-call RWF_NOWAIT there) is read by a thread that
// has to wait while, with one P, another thread sleeps and then writes
// into it; a regular file is written and read back whole with write,
// writev, read and readv, and read at EOF returns 0.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define FILESZ 300000

static char path[64];

static void die(const char *what)
{
	fprintf(stderr, "pipe_fifo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *late_writer(void *arg)
{
	int fd = (int)(long)arg;
	usleep(20000);
	if (write(fd, "fifo", 4) != 4)
		die("write");
	return NULL;
}

static void fifo(void)
{
	char buf[16] = "";
	pthread_t t;

	snprintf(path, sizeof path, "/tmp/pipe_fifo.%d", (int)getpid());
	if (mkfifo(path, 0600))
		die("mkfifo");
	/* O_RDWR: the open does not wait for a writer. */
	int fd = open(path, O_RDWR);
	if (fd < 0)
		die("open");
	unlink(path);
	if (pthread_create(&t, NULL, late_writer, (void *)(long)fd))
		die("pthread_create");
	ssize_t n = read(fd, buf, sizeof buf - 1);
	pthread_join(t, NULL);
	printf("FIFO read waited for the writer: %zd bytes, \"%s\"\n", n, buf);
	close(fd);
}

static void regular(void)
{
	char *out = malloc(FILESZ), *in = malloc(FILESZ);
	FILE *f = tmpfile();
	int fd = f ? fileno(f) : -1;

	if (!out || !in || fd < 0)
		die("tmpfile");
	for (int i = 0; i < FILESZ; i++)
		out[i] = (char)(i * 7 + 3);
	struct iovec iov[2] = { { out, 1000 }, { out + 1000, FILESZ / 2 - 1000 } };
	if (writev(fd, iov, 2) != FILESZ / 2 ||
	    write(fd, out + FILESZ / 2, FILESZ - FILESZ / 2) != FILESZ - FILESZ / 2)
		die("write");
	if (lseek(fd, 0, SEEK_SET) != 0)
		die("lseek");
	struct iovec riov[2] = { { in, 12345 }, { in + 12345, 100000 } };
	ssize_t a = readv(fd, riov, 2);
	ssize_t b = read(fd, in + 112345, FILESZ - 112345);
	int same = memcmp(in, out, FILESZ) == 0;
	ssize_t c = read(fd, in, 10);
	printf("regular file: readv %zd, read %zd, then %zd at EOF, same bytes: %s\n",
	       a, b, c, same ? "yes" : "no");
	fclose(f);
	free(out);
	free(in);
}

int main(void)
{
	fifo();
	regular();
	return 0;
}
