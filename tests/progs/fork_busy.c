// fork from a program with 100 running threads: 50 busy computing (with a
// yield now and then), 25 blocked on a condition variable, 25 blocked
// reading pipes. The child has only the forking thread: it creates 100
// threads of its own, joins them, passes tokens around a ring of pipes
// (goroutines parked on fds in the child), counts under a mutex, wakes
// waiters with a condition variable, then forks a grandchild that does a
// smaller round of the same, and exits 0. The parent's threads went on
// meanwhile; it waits for the child, checks its status, then stops its
// own threads and joins them.
// goshim-test: timeout=60
// goshim-test: shim-max-threads=GOMAXPROCS+6
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUSY 50
#define CONDW 25
#define READERS 25

static void die(const char *what)
{
	fprintf(stderr, "fork_busy: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the parent's threads ---- */

static _Atomic int stop;
static _Atomic long work;
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc = PTHREAD_COND_INITIALIZER;
static int released;
static int readpipe[READERS][2];

static void *busy(void *arg)
{
	unsigned x = (unsigned)(long)arg + 1;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 10000; i++)
			x = x * 1103515245 + 12345;
		atomic_fetch_add(&work, x & 1);
		sched_yield();
	}
	return NULL;
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pm);
	while (!released)
		pthread_cond_wait(&pc, &pm);
	pthread_mutex_unlock(&pm);
	return NULL;
}

static void *pipe_reader(void *arg)
{
	long i = (long)arg;
	char c;
	if (read(readpipe[i][0], &c, 1) != 1 || c != 'x')
		die("parent read");
	return NULL;
}

/* ---- the child's threads ---- */

#define RING 16
static int ring[RING][2];
static long token_hops;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static long counted;
static int go_ahead;

/* Reads the token from its pipe and passes it on, rounds times. */
static void *ring_node(void *arg)
{
	long i = (long)arg;
	int rounds = 50;
	for (int r = 0; r < rounds; r++) {
		long tok;
		if (read(ring[i][0], &tok, sizeof tok) != sizeof tok)
			die("ring read");
		tok++;
		pthread_mutex_lock(&cm);
		token_hops++;
		pthread_mutex_unlock(&cm);
		/* The last node's last pass would have no reader. */
		if (i == RING - 1 && r == rounds - 1)
			break;
		if (write(ring[(i + 1) % RING][1], &tok, sizeof tok) !=
		    sizeof tok)
			die("ring write");
	}
	return NULL;
}

static void *counter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm);
	while (!go_ahead)
		pthread_cond_wait(&cc, &cm);
	pthread_mutex_unlock(&cm);
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&cm);
		counted++;
		pthread_mutex_unlock(&cm);
	}
	return NULL;
}

/* nthreads threads: RING ring nodes, the rest counters. Returns 0 if
 * everything added up. */
static int child_round(const char *who, int nthreads)
{
	pthread_t t[100];
	long tok = 0;

	token_hops = 0;
	counted = 0;
	go_ahead = 0;
	for (int i = 0; i < RING; i++)
		if (pipe(ring[i]))
			die("pipe");
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, i < RING ? ring_node : counter,
				   (void *)i))
			die("pthread_create");
	if (write(ring[0][1], &tok, sizeof tok) != sizeof tok)
		die("ring start");
	pthread_mutex_lock(&cm);
	go_ahead = 1;
	pthread_cond_broadcast(&cc);
	pthread_mutex_unlock(&cm);
	for (int i = 0; i < nthreads; i++)
		if (pthread_join(t[i], NULL))
			die("pthread_join");
	for (int i = 0; i < RING; i++) {
		close(ring[i][0]);
		close(ring[i][1]);
	}
	printf("%s: %d threads joined, %ld token hops, %ld counted\n", who,
	       nthreads, token_hops, counted);
	fflush(stdout);
	return token_hops == RING * 50 &&
			       counted == 1000L * (nthreads - RING)
		       ? 0
		       : 1;
}

static int wait_for(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void child(void)
{
	if (child_round("child", 100))
		_exit(3);
	pid_t pid = fork();
	if (pid < 0)
		die("fork (grandchild)");
	if (pid == 0)
		exit(child_round("grandchild", 30));
	int st = wait_for(pid);
	printf("child: grandchild exited with %d\n", st);
	exit(st == 0 ? 0 : 4);
}

int main(void)
{
	pthread_t t[BUSY + CONDW + READERS];
	int n = 0;

	for (int i = 0; i < READERS; i++)
		if (pipe(readpipe[i]))
			die("pipe");
	for (long i = 0; i < BUSY; i++)
		if (pthread_create(&t[n++], NULL, busy, (void *)i))
			die("pthread_create");
	for (long i = 0; i < CONDW; i++)
		if (pthread_create(&t[n++], NULL, cond_waiter, NULL))
			die("pthread_create");
	for (long i = 0; i < READERS; i++)
		if (pthread_create(&t[n++], NULL, pipe_reader, (void *)i))
			die("pthread_create");
	usleep(20000); /* let them start working and block */
	printf("parent: %d threads running\n", n);
	fflush(stdout);

	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		child();
	long before = atomic_load(&work);
	int st = wait_for(pid);
	printf("parent: child exited with %d\n", st);

	/* The parent's threads kept going through the fork. */
	while (atomic_load(&work) == before)
		sched_yield();
	atomic_store(&stop, 1);
	pthread_mutex_lock(&pm);
	released = 1;
	pthread_cond_broadcast(&pc);
	pthread_mutex_unlock(&pm);
	for (int i = 0; i < READERS; i++)
		if (write(readpipe[i][1], "x", 1) != 1)
			die("write");
	for (int i = 0; i < n; i++)
		if (pthread_join(t[i], NULL))
			die("pthread_join");
	printf("parent: %d threads joined\n", n);
	return st;
}
