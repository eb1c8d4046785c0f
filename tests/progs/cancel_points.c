// cancel_points: pthread_cancel reaches a thread in every kind of wait
// that POSIX or glibc makes a cancellation point: a condvar wait (its
// cleanup handler runs with the mutex held again), a join (the target
// stays joinable), reads, writes, accept, recv, poll, select,
// epoll_wait, sigwait, sigsuspend, pause, waitpid and fcntl(F_SETLKW)
// (the last three glibc's own calls, which goshim runs in the kernel),
// and a loop of asynchronous type. Each thread runs its cleanup handler
// and its joiner gets PTHREAD_CANCELED. A thread with cancellation
// disabled finishes its read, enables it again, and is cancelled at its
// next read although that one has a byte ready.
// A cancelled condvar waiter never swallows a signal meant for another.
// goshim-test: shim-max-threads=GOMAXPROCS+8
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

static atomic_int cleanups;
static int pipe_in[2], pipe_full[2], sock[2], listener, lockfd;
static pid_t sleeper_child, lock_child;
static pthread_mutex_t m;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void count_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

/* Runs with the mutex held again: a second lock of the error-checking
 * mutex says EDEADLK. */
static void cond_cleanup(void *arg)
{
	(void)arg;
	int e = pthread_mutex_lock(&m);
	printf("  cond cleanup: mutex held again: %s\n",
	       e == EDEADLK ? "yes" : "no");
	pthread_mutex_unlock(&m);
	atomic_fetch_add(&cleanups, 1);
}

static void *in_cond(void *arg)
{
	struct timespec ts;
	pthread_mutex_lock(&m);
	pthread_cleanup_push(cond_cleanup, NULL);
	if (arg) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 100;
		for (;;)
			pthread_cond_timedwait(&c, &m, &ts);
	} else {
		for (;;)
			pthread_cond_wait(&c, &m);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static void *forever(void *arg)
{
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	for (;;)
		pause();
	pthread_cleanup_pop(0);
	return NULL;
}

static pthread_t join_target;

static void *in_join(void *arg)
{
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	pthread_join(join_target, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_read(void *arg)
{
	char b;
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	read(pipe_in[0], &b, 1);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_write(void *arg)
{
	static char big[1 << 20];
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	for (;;)
		write(pipe_full[1], big, sizeof big);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_accept(void *arg)
{
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	accept(listener, NULL, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_recv(void *arg)
{
	char b;
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	recv(sock[0], &b, 1, 0);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_poll(void *arg)
{
	struct pollfd p = { .fd = pipe_in[0], .events = POLLIN };
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	poll(&p, 1, -1);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_select(void *arg)
{
	fd_set rd;
	(void)arg;
	FD_ZERO(&rd);
	FD_SET(pipe_in[0], &rd);
	pthread_cleanup_push(count_cleanup, NULL);
	select(pipe_in[0] + 1, &rd, NULL, NULL, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_epoll(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	(void)arg;
	epoll_ctl(ep, EPOLL_CTL_ADD, pipe_in[0], &ev);
	pthread_cleanup_push(count_cleanup, NULL);
	epoll_wait(ep, &ev, 1, -1);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_sigwait(void *arg)
{
	sigset_t set;
	int sig;
	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_cleanup_push(count_cleanup, NULL);
	sigwait(&set, &sig);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_sigsuspend(void *arg)
{
	sigset_t none;
	(void)arg;
	sigemptyset(&none);
	pthread_cleanup_push(count_cleanup, NULL);
	sigsuspend(&none);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_waitpid(void *arg)
{
	int st;
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	waitpid(sleeper_child, &st, 0);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *in_lockw(void *arg)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	fcntl(lockfd, F_SETLKW, &fl);
	pthread_cleanup_pop(0);
	return NULL;
}

static volatile unsigned long spins;

static void *in_async_loop(void *arg)
{
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (;;)
		spins++;
	pthread_cleanup_pop(0);
	return NULL;
}

static void *disabled_read(void *arg)
{
	char b;
	int old;
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_cleanup_push(count_cleanup, NULL);
	ssize_t n = read(sock[1], &b, 1);
	printf("  disabled: read finished with %zd byte\n", n);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	/* A byte is ready: the read need not wait, and acts all the
	 * same. */
	read(sock[1], &b, 1);
	printf("  disabled: not cancelled (wrong)\n");
	pthread_cleanup_pop(0);
	return NULL;
}

static void settle(void)
{
	usleep(50000);
}

static void run(const char *what, void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;
	int before = atomic_load(&cleanups);

	pthread_create(&t, NULL, fn, arg);
	settle();
	int e = pthread_cancel(t);
	pthread_join(t, &ret);
	printf("%s: cancel %d, %s, cleanup %s\n", what, e,
	       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned",
	       atomic_load(&cleanups) == before + 1 ? "ran" : "missing");
	fflush(stdout);
}

/* Two waiters, one token, one signal, and one waiter cancelled at the
 * same moment: the token is always taken. */
static int tokens, taken;
static pthread_cond_t tc = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;

static void unlock_tm(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&tm);
}

static void *token_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&tm);
	pthread_cleanup_push(unlock_tm, NULL);
	for (;;) {
		while (tokens == 0)
			pthread_cond_wait(&tc, &tm);
		tokens--;
		taken++;
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static void token_race(int rounds)
{
	int lost = 0;
	for (int i = 0; i < rounds; i++) {
		pthread_t a, b;
		pthread_create(&a, NULL, token_waiter, NULL);
		pthread_create(&b, NULL, token_waiter, NULL);
		usleep(2000);
		pthread_mutex_lock(&tm);
		tokens = 1;
		taken = 0;
		pthread_mutex_unlock(&tm);
		pthread_cancel(a);
		pthread_cond_signal(&tc);
		int ok = 0;
		for (int w = 0; w < 2000 && !ok; w++) {
			pthread_mutex_lock(&tm);
			ok = taken == 1;
			pthread_mutex_unlock(&tm);
			if (!ok)
				usleep(1000);
		}
		lost += !ok;
		pthread_join(a, NULL);
		pthread_cancel(b);
		pthread_join(b, NULL);
	}
	printf("token race: %d rounds, %d lost wakeups\n", rounds, lost);
}

int main(void)
{
	pthread_mutexattr_t ma;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof sa;
	char path[] = "/tmp/cancel_points.XXXXXX";
	sigset_t usr1;

	/* SIGUSR1 stays pending for sigwait, never delivered. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &ma);
	if (pipe(pipe_in) || pipe(pipe_full) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sock))
		return 1;
	listener = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(listener, (struct sockaddr *)&sa, sl) ||
	    listen(listener, 4))
		return 1;
	lockfd = mkstemp(path);
	unlink(path);

	sleeper_child = fork();
	if (sleeper_child == 0) {
		sleep(30);
		_exit(0);
	}
	int ready[2];
	if (pipe(ready))
		return 1;
	lock_child = fork();
	if (lock_child == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		fcntl(lockfd, F_SETLK, &fl);
		write(ready[1], "x", 1);
		sleep(30);
		_exit(0);
	}
	char x;
	read(ready[0], &x, 1);

	run("cond_wait", in_cond, NULL);
	run("cond_timedwait", in_cond, (void *)1);
	pthread_create(&join_target, NULL, forever, NULL);
	run("join", in_join, NULL);
	void *r;
	pthread_cancel(join_target);
	printf("join: target still joinable: %s\n",
	       pthread_join(join_target, &r) == 0 && r == PTHREAD_CANCELED
		       ? "yes"
		       : "no");
	run("read", in_read, NULL);
	run("write", in_write, NULL);
	run("accept", in_accept, NULL);
	run("recv", in_recv, NULL);
	run("poll", in_poll, NULL);
	run("select", in_select, NULL);
	run("epoll_wait", in_epoll, NULL);
	run("sigwait", in_sigwait, NULL);
	run("sigsuspend", in_sigsuspend, NULL);
	run("pause", forever, NULL);
	run("waitpid", in_waitpid, NULL);
	run("fcntl F_SETLKW", in_lockw, NULL);
	run("async loop", in_async_loop, NULL);

	pthread_t t;
	void *ret;
	pthread_create(&t, NULL, disabled_read, NULL);
	settle();
	pthread_cancel(t);
	settle();
	write(sock[0], "yz", 2);
	pthread_join(t, &ret);
	printf("disabled: %s\n",
	       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned");

	token_race(200);

	kill(sleeper_child, SIGKILL);
	kill(lock_child, SIGKILL);
	waitpid(sleeper_child, NULL, 0);
	waitpid(lock_child, NULL, 0);
	printf("cleanups: %d\n", atomic_load(&cleanups));
	return 0;
}
