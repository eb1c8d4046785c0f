// Eight threads fork at the same time, ten times each, while four more
// threads keep a mutex, a condition variable, short sleeps and a pipe
// busy: so forks come from goroutines on any M, often while another M is
// inside the runtime (a lock the child must not find held). Each child
// makes four threads that hand a counter around under a mutex and
// condition variable of the child's own, joins them, sleeps and uses a
// pipe, and exits with a status that depends on the forking thread and
// round; the parent checks every status.
// goshim-test: timeout=60
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKERS 8
#define ROUNDS 10
#define CHILD_THREADS 4
#define PASSES 100

static _Atomic int stop;
static pthread_mutex_t bm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bc = PTHREAD_COND_INITIALIZER;
static long busy_count;

/* Keeps the runtime's wait queues, timers and netpoller busy, so that
 * forks often come while another thread is inside one of them. */
static void *busy(void *arg)
{
	long kind = (long)arg;
	int p[2];
	char c = 0;

	if (kind == 2 && pipe(p))
		exit(2);
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&bm);
		busy_count++;
		pthread_cond_signal(&bc);
		pthread_mutex_unlock(&bm);
		if (kind == 1)
			usleep(20);
		else if (kind == 2 && (write(p[1], &c, 1) != 1 ||
				       read(p[0], &c, 1) != 1))
			exit(2);
		sched_yield(); /* no preemption of busy loops under goshim yet */
	}
	return NULL;
}

/* The child's own: a counter passed from thread to thread in turn. */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static int turn, passes;

static void *passer(void *arg)
{
	int me = (int)(long)arg;
	pthread_mutex_lock(&cm);
	while (passes < PASSES) {
		while (turn != me && passes < PASSES)
			pthread_cond_wait(&cc, &cm);
		if (passes < PASSES) {
			passes++;
			turn = (turn + 1) % CHILD_THREADS;
			pthread_cond_broadcast(&cc);
		}
	}
	pthread_mutex_unlock(&cm);
	return NULL;
}

static int child(int code)
{
	pthread_t t[CHILD_THREADS];
	for (long i = 0; i < CHILD_THREADS; i++)
		if (pthread_create(&t[i], NULL, passer, (void *)i))
			return 100;
	for (int i = 0; i < CHILD_THREADS; i++)
		pthread_join(t[i], NULL);
	/* A timer and a pipe of the child's own. */
	int p[2];
	char c = 'c';
	usleep(100);
	if (pipe(p) || write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
		return 102;
	return passes == PASSES ? code : 101;
}

static int good[FORKERS];

static void *forker(void *arg)
{
	long id = (long)arg;
	for (int r = 0; r < ROUNDS; r++) {
		int code = (int)(id * ROUNDS + r) % 90;
		pid_t pid = fork();
		if (pid == 0)
			exit(child(code));
		int st;
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == code)
			good[id]++;
	}
	return NULL;
}

int main(void)
{
	pthread_t b[4], f[FORKERS];

	for (long i = 0; i < 4; i++)
		pthread_create(&b[i], NULL, busy, (void *)(i % 3));
	for (long i = 0; i < FORKERS; i++)
		pthread_create(&f[i], NULL, forker, (void *)i);
	for (int i = 0; i < FORKERS; i++)
		pthread_join(f[i], NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(b[i], NULL);
	for (int i = 0; i < FORKERS; i++)
		printf("forker %d: %d of %d children exited as expected\n", i,
		       good[i], ROUNDS);
	return 0;
}
