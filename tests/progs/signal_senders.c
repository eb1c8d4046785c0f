// signal_senders: the pattern of many POSIX conformance tests. Two sender
// threads signal a worker over and over, each waiting on a semaphore that
// the worker's handler posts before it sends again, while the worker does
// what the test is about: fork with pthread_atfork handlers, change its
// own scheduling policy and priority, take a contended mutex, sleep. A
// signal lost, or kept where no handler ever runs it, leaves its sender
// waiting forever. Each phase runs with thread-directed signals
// (pthread_kill of the worker) and with process-directed ones (kill of
// the process, which only the worker lets through). The thread bound
// leaves room for the Ms that fork, waitpid and a SCHED_FIFO worker's
// wiring take when the machine is loaded (a system call off the CPU past
// 20 us has its P handed to another M): 6-9 threads quiet, up to 12 seen
// beside other jobs; a leak of Ms (250 once) is far past it.
// goshim-test: shim-max-threads=GOMAXPROCS+10
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sem_t handled[2];
static atomic_int stop, worker_ready, directed, senders_done;
static atomic_long handlers;
static pthread_t worker_thread;
static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static atomic_int prepares, parents;

static void die(const char *what, int err)
{
	fprintf(stderr, "signal_senders: %s: %s\n", what, strerror(err));
	exit(1);
}

static void on_signal(int sig)
{
	atomic_fetch_add(&handlers, 1);
	sem_post(&handled[sig == SIGUSR1 ? 0 : 1]);
}

static void *sender(void *arg)
{
	int i = (int)(long)arg, sig = i == 0 ? SIGUSR1 : SIGUSR2;

	while (!atomic_load(&worker_ready))
		sched_yield();
	while (!atomic_load(&stop)) {
		int err = atomic_load(&directed)
				  ? pthread_kill(worker_thread, sig)
				  : (kill(getpid(), sig) == 0 ? 0 : errno);
		if (err)
			die("send", err);
		while (sem_wait(&handled[i]) != 0)
			if (errno != EINTR)
				die("sem_wait", errno);
	}
	atomic_fetch_add(&senders_done, 1);
	return NULL;
}

static void prepare(void) { atomic_fetch_add(&prepares, 1); }
static void parent(void) { atomic_fetch_add(&parents, 1); }

static void work_fork(void)
{
	for (int i = 0; i < 40; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0)
			_exit(7);
		int st;
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				die("waitpid", errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 7)
			die("child status", EINVAL);
	}
}

static void work_sched(void)
{
	struct sched_param sp = { 0 };
	int other = SCHED_OTHER, alt = SCHED_BATCH;

	/* SCHED_FIFO where allowed (it is the conformance tests' case). */
	sp.sched_priority = 1;
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
		alt = SCHED_FIFO;
	for (int i = 0; i < 2000; i++) {
		int pol = i % 2 ? alt : other;
		sp.sched_priority = pol == SCHED_FIFO ? 1 + i % 10 : 0;
		int err = pthread_setschedparam(pthread_self(), pol, &sp);
		if (err)
			die("pthread_setschedparam", err);
		int got;
		if ((err = pthread_getschedparam(pthread_self(), &got, &sp)))
			die("pthread_getschedparam", err);
		if (got != pol)
			die("policy read back", EINVAL);
	}
	sp.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

static void *holder(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&contended);
		usleep(200);
		pthread_mutex_unlock(&contended);
		sched_yield();
	}
	return NULL;
}

static void work_mutex(void)
{
	pthread_t h;
	int err = pthread_create(&h, NULL, holder, NULL);
	if (err)
		die("pthread_create", err);
	for (int i = 0; i < 3000; i++) {
		pthread_mutex_lock(&contended);
		pthread_mutex_unlock(&contended);
	}
	atomic_store(&stop, 1);
	pthread_join(h, NULL);
}

static void work_sleep(void)
{
	struct timespec ts = { 0, 100000 };
	for (int i = 0; i < 2000; i++)
		nanosleep(&ts, NULL); /* EINTR is fine: go on */
}

static void (*work)(void);

static void *worker(void *arg)
{
	sigset_t s;
	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	atomic_store(&worker_ready, 1);
	work();
	atomic_store(&stop, 1);
	/* The last signal each sender sent still needs its handler here. */
	while (atomic_load(&senders_done) < 2)
		usleep(1000);
	return NULL;
}

static void phase(const char *name, void (*fn)(void), int dir)
{
	pthread_t s[2];
	int err;

	work = fn;
	atomic_store(&stop, 0);
	atomic_store(&worker_ready, 0);
	atomic_store(&senders_done, 0);
	atomic_store(&directed, dir);
	if ((err = pthread_create(&worker_thread, NULL, worker, NULL)))
		die("pthread_create", err);
	for (long i = 0; i < 2; i++)
		if ((err = pthread_create(&s[i], NULL, sender, (void *)i)))
			die("pthread_create", err);
	pthread_join(worker_thread, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(s[i], NULL);
	printf("%s, %s signals: done, handlers ran\n", name,
	       dir ? "thread" : "process");
}

int main(void)
{
	sigset_t s;
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* only the worker takes them */
	sem_init(&handled[0], 0, 0);
	sem_init(&handled[1], 0, 0);
	pthread_atfork(prepare, parent, NULL);

	for (int dir = 1; dir >= 0; dir--) {
		phase("fork with atfork handlers", work_fork, dir);
		phase("pthread_setschedparam", work_sched, dir);
		phase("contended mutex", work_mutex, dir);
		phase("nanosleep", work_sleep, dir);
	}
	printf("atfork prepare and parent ran for every fork: %s\n",
	       prepares == 80 && parents == 80 ? "yes" : "no");
	return 0;
}
