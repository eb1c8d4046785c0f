// epoll_wait: epoll_wait, epoll_pwait and epoll_pwait2 on one P. Timeouts
// (only elapsed >= timeout is asserted), wakeups by another thread's write
// long before a 10 s timeout or with none (the waiter must not hold the
// only P, or the writer never runs), edge- and level-triggered interest,
// an epoll fd watched by another, bad input (EBADF, EINVAL, EFAULT), a
// pending signal the call's mask lets through (EINTR, after the events),
// and 1,000 threads each blocked in epoll_wait on its own pipe.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+5
// goshim-test: native-min-threads=1001
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NWAITERS 1000

static void die(const char *what)
{
	fprintf(stderr, "epoll_wait: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "epoll_wait: failed: %s (errno %s)\n", what,
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

static int watch(int fd, uint32_t events, uint32_t data)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = events, .data.u32 = data };
	if (ep < 0)
		die("epoll_create1");
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl");
	return ep;
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
	int p[2], ep;
	struct epoll_event ev[4];
	struct timespec ts = { 0, 90000000 };
	sigset_t none;
	int64_t t0;

	make_pipe(p);
	ep = watch(p[0], EPOLLIN, 7);
	sigemptyset(&none);
	t0 = ms_now();
	check(epoll_wait(ep, ev, 4, 100) == 0 && ms_now() - t0 >= 100,
	      "epoll_wait waits out 100 ms");
	t0 = ms_now();
	check(epoll_pwait(ep, ev, 4, 80, &none) == 0 && ms_now() - t0 >= 80,
	      "epoll_pwait waits out 80 ms");
	t0 = ms_now();
	check(epoll_pwait2(ep, ev, 4, &ts, NULL) == 0 && ms_now() - t0 >= 90,
	      "epoll_pwait2 waits out 90 ms");
	check(ts.tv_sec == 0 && ts.tv_nsec == 90000000,
	      "epoll_pwait2 leaves its timeout as it was");
	check(epoll_wait(ep, ev, 4, 0) == 0, "a zero timeout does not wait");
	close(ep);
	close(p[0]);
	close(p[1]);
}

static void wakeups(void)
{
	int p[2], ep, ep2;
	struct epoll_event ev[4];
	char c;
	int64_t t0;
	pthread_t t;

	make_pipe(p);
	ep = watch(p[0], EPOLLIN, 7);
	t = start(write_later, (void *)(intptr_t)p[1]);
	t0 = ms_now();
	check(epoll_wait(ep, ev, 4, 10000) == 1 && ev[0].events == EPOLLIN &&
		      ev[0].data.u32 == 7 && ms_now() - t0 < 5000,
	      "epoll_wait woken by a write on the only P");
	join(t);
	check(read(p[0], &c, 1) == 1, "drained");

	t = start(write_later, (void *)(intptr_t)p[1]);
	check(epoll_pwait2(ep, ev, 4, NULL, NULL) == 1 && ev[0].data.u32 == 7,
	      "epoll_pwait2 without a timeout woken by a write");
	join(t);

	/* Level-triggered: still ready while the byte is there. */
	check(epoll_wait(ep, ev, 4, 1000) == 1, "level-triggered: ready again");
	check(read(p[0], &c, 1) == 1, "drained");

	/* An epoll fd inside another. */
	ep2 = watch(ep, EPOLLIN, 9);
	t = start(write_later, (void *)(intptr_t)p[1]);
	check(epoll_wait(ep2, ev, 4, 10000) == 1 && ev[0].data.u32 == 9,
	      "an outer epoll woken by its inner one");
	check(epoll_wait(ep, ev, 4, 0) == 1 && ev[0].data.u32 == 7,
	      "the inner one has the event");
	join(t);
	check(read(p[0], &c, 1) == 1, "drained");
	close(ep2);
	close(ep);

	/* Edge-triggered: one event per write. */
	ep = watch(p[0], EPOLLIN | EPOLLET, 8);
	t = start(write_later, (void *)(intptr_t)p[1]);
	check(epoll_wait(ep, ev, 4, 10000) == 1 && ev[0].data.u32 == 8,
	      "edge-triggered: woken by the write");
	join(t);
	t0 = ms_now();
	check(epoll_wait(ep, ev, 4, 50) == 0 && ms_now() - t0 >= 50,
	      "edge-triggered: no second event for the same byte");
	close(ep);
	close(p[0]);
	close(p[1]);
}

static void bad_input(void)
{
	int p[2], ep;
	struct epoll_event ev[2];
	struct timespec bad = { 0, 1000000000 }, neg = { -1, 0 };
	struct timespec *volatile nowhere = (struct timespec *)8;

	make_pipe(p);
	ep = watch(p[0], EPOLLIN, 1);
	errno = 0;
	check(epoll_wait(-1, ev, 2, 100) == -1 && errno == EBADF,
	      "epoll_wait(-1): EBADF");
	check(epoll_wait(ep, ev, 0, 100) == -1 && errno == EINVAL,
	      "maxevents 0: EINVAL");
	check(epoll_wait(p[0], ev, 2, 100) == -1 && errno == EINVAL,
	      "not an epoll fd: EINVAL");
	check(epoll_pwait2(ep, ev, 2, &bad, NULL) == -1 && errno == EINVAL,
	      "epoll_pwait2, tv_nsec = 1e9: EINVAL");
	check(epoll_pwait2(ep, ev, 2, &neg, NULL) == -1 && errno == EINVAL,
	      "epoll_pwait2, tv_sec = -1: EINVAL");
	check(epoll_pwait2(ep, ev, 2, nowhere, NULL) == -1 && errno == EFAULT,
	      "epoll_pwait2, timeout at a bad address: EFAULT");
	check(epoll_pwait2(-1, ev, 2, &bad, NULL) == -1 && errno == EINVAL,
	      "a bad timeout is reported before a bad fd");
	close(ep);
	check(epoll_wait(ep, ev, 2, 100) == -1 && errno == EBADF,
	      "a closed epoll fd: EBADF");
	close(p[0]);
	close(p[1]);
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void signals(void)
{
	int p[2], ep;
	struct epoll_event ev[2];
	sigset_t usr1, none;
	char c;
	int64_t t0;

	signal(SIGUSR1, on_usr1);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&none);
	if (sigprocmask(SIG_BLOCK, &usr1, NULL))
		die("sigprocmask");
	make_pipe(p);
	ep = watch(p[0], EPOLLIN, 3);

	/* Events first: the signal stays pending. */
	if (write(p[1], "s", 1) != 1)
		die("write");
	raise(SIGUSR1);
	check(epoll_pwait(ep, ev, 2, 1000, &none) == 1 && handled == 0,
	      "epoll_pwait: events before a pending signal");
	check(read(p[0], &c, 1) == 1, "drained");
	t0 = ms_now();
	check(epoll_pwait(ep, ev, 2, 5000, &none) == -1 && errno == EINTR &&
		      handled == 1 && ms_now() - t0 < 4000,
	      "epoll_pwait: EINTR for a pending signal its mask lets through");
	raise(SIGUSR1);
	check(epoll_pwait2(ep, ev, 2, NULL, &none) == -1 && errno == EINTR &&
		      handled == 2,
	      "epoll_pwait2: EINTR likewise");
	raise(SIGUSR1);
	t0 = ms_now();
	check(epoll_pwait(ep, ev, 2, 60, &usr1) == 0 && handled == 2 &&
		      ms_now() - t0 >= 60,
	      "a mask that blocks it: the wait runs out");
	/* That wait parked: the goroutine may have moved to another OS
	 * thread, away from the one the signal is pending on (raise
	 * directs it at a thread): its delivery now is not checked. */
	if (sigprocmask(SIG_UNBLOCK, &usr1, NULL))
		die("sigprocmask");
	close(ep);
	close(p[0]);
	close(p[1]);
}

struct waiter {
	int p[2];
	int index;
	int got;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static int in;

static void *wait_one(void *arg)
{
	struct waiter *w = arg;
	int ep = watch(w->p[0], EPOLLIN, (uint32_t)w->index);
	struct epoll_event ev;
	char c;

	pthread_mutex_lock(&lock);
	if (++in == NWAITERS)
		pthread_cond_signal(&all_in);
	pthread_mutex_unlock(&lock);
	if (epoll_wait(ep, &ev, 1, -1) != 1)
		die("epoll_wait");
	if (read(w->p[0], &c, 1) != 1)
		die("read");
	w->got = (int)ev.data.u32 + (c == 'm');
	close(ep);
	return NULL;
}

static void many(void)
{
	static struct waiter w[NWAITERS];
	static pthread_t t[NWAITERS];
	long sum = 0, want = 0;
	struct rlimit rl;

	/* Three fds a waiter. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < NWAITERS; i++) {
		make_pipe(w[i].p);
		w[i].index = i;
		t[i] = start(wait_one, &w[i]);
	}
	pthread_mutex_lock(&lock);
	while (in < NWAITERS)
		pthread_cond_wait(&all_in, &lock);
	pthread_mutex_unlock(&lock);
	usleep(20000);
	for (int i = NWAITERS - 1; i >= 0; i--)
		if (write(w[i].p[1], "m", 1) != 1)
			die("write");
	for (int i = 0; i < NWAITERS; i++) {
		join(t[i]);
		sum += w[i].got;
		want += i + 1;
		close(w[i].p[0]);
		close(w[i].p[1]);
	}
	printf("%d threads in epoll_wait: sum %ld\n", NWAITERS, sum);
	check(sum == want, "every waiter got its own event and byte");
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
