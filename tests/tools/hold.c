/* hold THREADS MIB MS [READY_FILE]: a program of known shape for
 * tests/run/tools-check.sh to measure. Starts THREADS threads that wait on a
 * condition variable, touches MIB MiB of fresh memory, creates READY_FILE
 * (if given) once all of that is in place, holds it for MS milliseconds,
 * then releases the threads, joins them and prints "held N threads, M MiB".
 * So natively it has exactly THREADS + 1 OS threads and MIB MiB more RSS
 * for MS ms: numbers `goshim compare` must report, and the test reads them
 * from /proc on its own while READY_FILE exists. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!released)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: hold THREADS MIB MS [READY_FILE]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	size_t mib = (size_t)atol(argv[2]);
	long ms = atol(argv[3]);
	pthread_t *ts = calloc((size_t)n + 1, sizeof *ts);
	volatile char *mem = malloc(mib << 20);
	if (!ts || !mem) {
		perror("hold");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&ts[i], NULL, waiter, NULL);
		if (err) {
			fprintf(stderr, "hold: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	/* one write per page makes it resident */
	for (size_t off = 0; off < mib << 20; off += 4096)
		mem[off] = (char)off;
	if (argc == 5) {
		int fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(argv[4]);
			return 1;
		}
		close(fd);
	}
	usleep((useconds_t)ms * 1000);
	pthread_mutex_lock(&mu);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++)
		pthread_join(ts[i], NULL);
	printf("held %d threads, %zu MiB\n", n, mib);
	return 0;
}
