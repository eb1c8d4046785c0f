/*
 * trace_events: 16 threads that do a bit of everything the scheduler
 * traces: wait at a gate (a condition variable) until main opens it, lock
 * a shared mutex, ping-pong on a condition variable, sleep,
 * wait in read for bytes another thread writes into a pipe, write to
 * /dev/null (a system call), then end and are joined.
 * tests/run/diag-check.py runs it with GOSHIM_TRACE and checks the JSON it leaves: it parses, every track's slices nest, and
 * there is one goroutine per thread (16 + main).
 */
// goshim-test: shim-env=GOSHIM_TRACE=/dev/null
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define NTHREADS 16
#define ROUNDS 50

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;
static int turn;
static int gate_open, at_gate;

static int pipes[NTHREADS / 2][2];

/* Pairs of threads: the even one sleeps a little and writes a byte into
 * the pair's pipe, the odd one waits in read for it. */
static void *worker(void *arg)
{
	long id = (long)arg;
	int *fds = pipes[id / 2];
	char c = 'x';
	int devnull = open("/dev/null", O_WRONLY);

	if (devnull < 0) {
		perror("open");
		return NULL;
	}
	/* Everyone waits on cv until main opens the gate. */
	pthread_mutex_lock(&mu);
	at_gate++;
	while (!gate_open)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		/* threads 0 and 2 take turns */
		if (id == 0 || id == 2) {
			while (turn != id / 2)
				pthread_cond_wait(&cv, &mu);
			turn = !turn;
			pthread_cond_broadcast(&cv);
		}
		pthread_mutex_unlock(&mu);
		if (id % 2 == 0) {
			usleep(100);
			if (write(fds[1], &c, 1) != 1)
				perror("write");
		} else if (read(fds[0], &c, 1) != 1) {
			perror("read");
		}
		if (write(devnull, &c, 1) != 1)
			perror("write");
	}
	close(devnull);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (int i = 0; i < NTHREADS / 2; i++)
		if (pipe(pipes[i]) != 0) {
			perror("pipe");
			return 1;
		}
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	/* Open the gate once a thread waits at it (and a little later, so
	 * that it has surely blocked). */
	for (int waiting = 0; !waiting; usleep(1000)) {
		pthread_mutex_lock(&mu);
		waiting = at_gate;
		pthread_mutex_unlock(&mu);
	}
	usleep(10 * 1000);
	pthread_mutex_lock(&mu);
	gate_open = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("counter=%ld\n", counter);
	return 0;
}
