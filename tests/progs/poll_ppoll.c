// poll_ppoll: ppoll and pselect on one P. Timeouts (only elapsed >=
// timeout is asserted) that leave the program's timespec as it was,
// wakeups by another thread's write with and without a timeout (the
// waiter must not hold the only P, or the writer never runs), bad input
// (EINVAL for bad timeouts and too many fds, POLLNVAL, EBADF), a pending
// signal the call's mask lets through (EINTR; ready fds first), and 1,000
// threads each blocked in ppoll on its own pipe.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+5
// goshim-test: native-min-threads=1001
// goshim-test: timeout=60
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define NWAITERS 1000

static void die(const char *what)
{
	fprintf(stderr, "poll_ppoll: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "poll_ppoll: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static int64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void make_pipe(int p[2])
{
	if (pipe(p))
		die("pipe");
}

static void *write_later(void *arg)
{
	int fd = (int)(intptr_t)arg;
	usleep(30000);
	if (write(fd, "w", 1) != 1)
		die("write");
	return NULL;
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, fn, arg);
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

static void timeouts(void)
{
	int p[2];
	struct pollfd pf;
	struct timespec ts = { 0, 100000000 }, ts2 = { 0, 80000000 };
	fd_set rd;
	int64_t t0;

	make_pipe(p);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t0 = ms_now();
	check(ppoll(&pf, 1, &ts, NULL) == 0 && ms_now() - t0 >= 100 &&
		      pf.revents == 0,
	      "ppoll waits out 100 ms");
	check(ts.tv_sec == 0 && ts.tv_nsec == 100000000,
	      "ppoll leaves its timeout as it was");
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	t0 = ms_now();
	check(pselect(p[0] + 1, &rd, NULL, NULL, &ts2, NULL) == 0 &&
		      ms_now() - t0 >= 80 && !FD_ISSET(p[0], &rd),
	      "pselect waits out 80 ms and clears the set");
	check(ts2.tv_sec == 0 && ts2.tv_nsec == 80000000,
	      "pselect leaves its timeout as it was");
	ts2.tv_nsec = 50000000;
	t0 = ms_now();
	check(ppoll(NULL, 0, &ts2, NULL) == 0 && ms_now() - t0 >= 50,
	      "ppoll on no fds sleeps");
	close(p[0]);
	close(p[1]);
}

static void wakeups(void)
{
	int p[2];
	struct pollfd pf;
	struct timespec ts = { 10, 0 };
	fd_set rd, wr;
	char c;
	int64_t t0;
	pthread_t t;

	make_pipe(p);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	t = start(write_later, (void *)(intptr_t)p[1]);
	t0 = ms_now();
	check(ppoll(&pf, 1, &ts, NULL) == 1 && pf.revents == POLLIN &&
		      ms_now() - t0 < 5000,
	      "ppoll woken by a write on the only P");
	join(t);
	check(read(p[0], &c, 1) == 1, "drained");

	t = start(write_later, (void *)(intptr_t)p[1]);
	check(ppoll(&pf, 1, NULL, NULL) == 1 && pf.revents == POLLIN,
	      "ppoll without a timeout woken by a write");
	join(t);
	check(read(p[0], &c, 1) == 1, "drained");

	t = start(write_later, (void *)(intptr_t)p[1]);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	FD_ZERO(&wr);
	FD_SET(p[0], &wr); /* a read end is never writable */
	check(pselect(p[0] + 1, &rd, &wr, NULL, &ts, NULL) == 1 &&
		      FD_ISSET(p[0], &rd) && !FD_ISSET(p[0], &wr),
	      "pselect woken by a write: the read set only");
	join(t);
	check(read(p[0], &c, 1) == 1, "drained");

	/* The write end closed: POLLHUP. */
	pf.revents = 0;
	close(p[1]);
	check(ppoll(&pf, 1, &ts, NULL) == 1 && pf.revents == POLLHUP,
	      "POLLHUP once the writer is gone");
	close(p[0]);
}

static void bad_input(void)
{
	int p[2];
	struct pollfd pf[2];
	struct timespec bad = { 0, 1000000000 }, neg = { -1, 0 },
			ts = { 1, 0 };
	struct rlimit rl;
	fd_set rd;
	int64_t t0;

	make_pipe(p);
	pf[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	check(ppoll(pf, 1, &bad, NULL) == -1 && errno == EINVAL,
	      "ppoll, tv_nsec = 1e9: EINVAL");
	check(ppoll(pf, 1, &neg, NULL) == -1 && errno == EINVAL,
	      "ppoll, tv_sec = -1: EINVAL");
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	check(pselect(p[0] + 1, &rd, NULL, NULL, &bad, NULL) == -1 &&
		      errno == EINVAL,
	      "pselect, tv_nsec = 1e9: EINVAL");
	check(pselect(-1, &rd, NULL, NULL, &ts, NULL) == -1 && errno == EINVAL,
	      "pselect, nfds = -1: EINVAL");
	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	check(ppoll(pf, (nfds_t)rl.rlim_cur + 1, &ts, NULL) == -1 &&
		      errno == EINVAL,
	      "ppoll, more fds than RLIMIT_NOFILE: EINVAL");
	close(p[1]);
	pf[0] = (struct pollfd){ .fd = p[1], .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = -1, .events = POLLIN };
	t0 = ms_now();
	check(ppoll(pf, 2, &ts, NULL) == 1 && pf[0].revents == POLLNVAL &&
		      pf[1].revents == 0 && ms_now() - t0 < 900,
	      "ppoll: POLLNVAL for a closed fd at once, a negative fd ignored");
	FD_ZERO(&rd);
	FD_SET(p[1], &rd);
	check(pselect(p[1] + 1, &rd, NULL, NULL, &ts, NULL) == -1 &&
		      errno == EBADF,
	      "pselect on a closed fd: EBADF");
	close(p[0]);
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void signals(void)
{
	int p[2];
	struct pollfd pf;
	struct timespec ts = { 5, 0 }, short_ts = { 0, 60000000 };
	sigset_t usr1, none;
	fd_set rd;
	char c;
	int64_t t0;

	signal(SIGUSR1, on_usr1);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&none);
	if (sigprocmask(SIG_BLOCK, &usr1, NULL))
		die("sigprocmask");
	make_pipe(p);
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };

	if (write(p[1], "s", 1) != 1)
		die("write");
	raise(SIGUSR1);
	check(ppoll(&pf, 1, &ts, &none) == 1 && handled == 0,
	      "ppoll: a ready fd before a pending signal");
	check(read(p[0], &c, 1) == 1, "drained");
	t0 = ms_now();
	check(ppoll(&pf, 1, &ts, &none) == -1 && errno == EINTR &&
		      handled == 1 && ms_now() - t0 < 4000,
	      "ppoll: EINTR for a pending signal its mask lets through");
	raise(SIGUSR1);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	check(pselect(p[0] + 1, &rd, NULL, NULL, NULL, &none) == -1 &&
		      errno == EINTR && handled == 2,
	      "pselect: EINTR likewise");
	raise(SIGUSR1);
	t0 = ms_now();
	check(ppoll(&pf, 1, &short_ts, &usr1) == 0 && handled == 2 &&
		      ms_now() - t0 >= 60,
	      "a mask that blocks it: the wait runs out");
	/* That wait parked: the goroutine may have moved to another OS
	 * thread, away from the one the signal is pending on (raise
	 * directs it at a thread): its delivery now is not checked. */
	if (sigprocmask(SIG_UNBLOCK, &usr1, NULL))
		die("sigprocmask");
	close(p[0]);
	close(p[1]);
}

struct waiter {
	int p[2];
	int got;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static int in;

static void *wait_one(void *arg)
{
	struct waiter *w = arg;
	struct pollfd pf = { .fd = w->p[0], .events = POLLIN };
	char c;

	pthread_mutex_lock(&lock);
	if (++in == NWAITERS)
		pthread_cond_signal(&all_in);
	pthread_mutex_unlock(&lock);
	if (ppoll(&pf, 1, NULL, NULL) != 1 || pf.revents != POLLIN)
		die("ppoll");
	if (read(w->p[0], &c, 1) != 1)
		die("read");
	w->got = c == 'm';
	return NULL;
}

static void many(void)
{
	static struct waiter w[NWAITERS];
	static pthread_t t[NWAITERS];
	int got = 0;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < NWAITERS; i++) {
		make_pipe(w[i].p);
		t[i] = start(wait_one, &w[i]);
	}
	pthread_mutex_lock(&lock);
	while (in < NWAITERS)
		pthread_cond_wait(&all_in, &lock);
	pthread_mutex_unlock(&lock);
	usleep(20000);
	for (int i = 0; i < NWAITERS; i++)
		if (write(w[i].p[1], "m", 1) != 1)
			die("write");
	for (int i = 0; i < NWAITERS; i++) {
		join(t[i]);
		got += w[i].got;
		close(w[i].p[0]);
		close(w[i].p[1]);
	}
	printf("%d threads in ppoll: %d woken\n", NWAITERS, got);
	check(got == NWAITERS, "every waiter woken by its own write");
}

int main(void)
{
	timeouts();
	wakeups();
	bad_input();
	signals();
	many();
	printf("OK\n");
	return 0;
}
