// pipe_pairs: 1,000 pipes, each with a writer thread and a reader thread,
// all alive at once (a barrier at the start and one at the end). Writers send WRITES messages whose sizes,
// derived from the pair's index, alternate between small and larger than
// the 64 KiB a pipe holds: a blocking write must take all of it (the
// reader drains meanwhile), and each write is checked to return its full
// length. Readers read with varying buffer sizes until EOF and hash every
// byte; half the pairs use readv/writev. Natively 2,000+ threads.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=2001
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define NPAIRS 1000
#define WRITES 6
#define BIG 150000

static pthread_barrier_t all_up;
static int pipes[NPAIRS][2];
static uint64_t sent_hash[NPAIRS], got_hash[NPAIRS];
static uint64_t sent_bytes[NPAIRS], got_bytes[NPAIRS];

static void die(const char *what, int err)
{
	fprintf(stderr, "pipe_pairs: %s: %s\n", what, strerror(err));
	exit(1);
}

static void barrier(void)
{
	int e = pthread_barrier_wait(&all_up);
	if (e && e != PTHREAD_BARRIER_SERIAL_THREAD)
		die("pthread_barrier_wait", e);
}

static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static void *writer(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint32_t seed = (uint32_t)i * 2654435761u + 1;
	char *buf = malloc(BIG);
	uint64_t h = 1469598103934665603ull, total = 0;

	if (!buf)
		die("malloc", ENOMEM);
	barrier();
	for (int k = 0; k < WRITES; k++) {
		size_t n = 1 + next_rand(&seed) % (k & 1 ? BIG : 4096);
		ssize_t w;
		for (size_t j = 0; j < n; j++)
			buf[j] = (char)next_rand(&seed);
		if (i & 1) {
			struct iovec iov[3] = { { buf, n / 3 },
						{ buf + n / 3, n / 3 },
						{ buf + 2 * (n / 3), n - 2 * (n / 3) } };
			w = writev(pipes[i][1], iov, 3);
		} else {
			w = write(pipes[i][1], buf, n);
		}
		if (w < 0)
			die("write", errno);
		if ((size_t)w != n) {
			fprintf(stderr, "pipe_pairs: short write %zd of %zu\n",
				w, n);
			exit(1);
		}
		h = fnv(h, buf, n);
		total += n;
	}
	if (close(pipes[i][1]))
		die("close", errno);
	sent_hash[i] = h;
	sent_bytes[i] = total;
	free(buf);
	barrier();
	return NULL;
}

static void *reader(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint32_t seed = (uint32_t)i * 40503u + 7;
	char *buf = malloc(BIG);
	uint64_t h = 1469598103934665603ull, total = 0;

	if (!buf)
		die("malloc", ENOMEM);
	barrier();
	for (;;) {
		size_t want = 1 + next_rand(&seed) % 100000;
		ssize_t n;
		if (i & 1) {
			struct iovec iov[2] = { { buf, want / 2 },
						{ buf + want / 2, want - want / 2 } };
			n = readv(pipes[i][0], iov, 2);
		} else {
			n = read(pipes[i][0], buf, want);
		}
		if (n < 0)
			die("read", errno);
		if (n == 0)
			break;
		h = fnv(h, buf, (size_t)n);
		total += (uint64_t)n;
	}
	if (close(pipes[i][0]))
		die("close", errno);
	got_hash[i] = h;
	got_bytes[i] = total;
	free(buf);
	barrier();
	return NULL;
}

int main(void)
{
	static pthread_t w[NPAIRS], r[NPAIRS];
	uint64_t bytes = 0, hash = 0;
	int bad = 0, e;

	if ((e = pthread_barrier_init(&all_up, NULL, 2 * NPAIRS)))
		die("pthread_barrier_init", e);
	for (int i = 0; i < NPAIRS; i++) {
		if (pipe(pipes[i]))
			die("pipe", errno);
		if ((e = pthread_create(&r[i], NULL, reader, (void *)(intptr_t)i)) ||
		    (e = pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i)))
			die("pthread_create", e);
	}
	for (int i = 0; i < NPAIRS; i++) {
		if ((e = pthread_join(w[i], NULL)) || (e = pthread_join(r[i], NULL)))
			die("pthread_join", e);
		bad += sent_hash[i] != got_hash[i] || sent_bytes[i] != got_bytes[i];
		bytes += got_bytes[i];
		hash += got_hash[i];
	}
	printf("pipes: %d, bytes through them: %llu\n", NPAIRS,
	       (unsigned long long)bytes);
	printf("pipes whose reader saw other bytes than were written: %d\n", bad);
	printf("checksum: %016llx\n", (unsigned long long)hash);
	if (bad)
		return 1;
	printf("OK\n");
	return 0;
}
