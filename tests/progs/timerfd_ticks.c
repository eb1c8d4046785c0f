// timerfd_ticks: timerfds read by threads on one P while other threads
// run. 8 readers each count 20 expirations of their own periodic 10 ms
// timer (elapsed >= 200 ms) while a worker keeps sleeping and counting;
// a one-shot timer read once (elapsed >= its 50 ms), the same through
// poll and epoll_wait; bad input: a short buffer and write (EINVAL), an
// unarmed TFD_NONBLOCK timer (EAGAIN), a bad clock (EINVAL).
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=9
// goshim-test: timeout=60
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NREADERS 8
#define TICKS 20

static void die(const char *what)
{
	fprintf(stderr, "timerfd_ticks: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "timerfd_ticks: failed: %s (errno %s)\n", what,
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

static int timer(long first_ms, long every_ms, int flags)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, flags);
	struct itimerspec its = {
		.it_value = { first_ms / 1000, first_ms % 1000 * 1000000 },
		.it_interval = { every_ms / 1000, every_ms % 1000 * 1000000 },
	};
	if (fd < 0)
		die("timerfd_create");
	if ((first_ms || every_ms) && timerfd_settime(fd, 0, &its, NULL))
		die("timerfd_settime");
	return fd;
}

struct reader {
	uint64_t ticks;
	int64_t ms;
};

static volatile int readers_done;

static void *read_ticks(void *arg)
{
	struct reader *r = arg;
	int fd = timer(10, 10, 0);
	int64_t t0 = ms_now();
	uint64_t n;

	while (r->ticks < TICKS) {
		if (read(fd, &n, sizeof n) != sizeof n || n == 0)
			die("read");
		r->ticks += n;
	}
	r->ms = ms_now() - t0;
	close(fd);
	return NULL;
}

static void *work(void *arg)
{
	long *rounds = arg;
	while (!readers_done) {
		usleep(1000);
		++*rounds;
	}
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

static void periodic(void)
{
	struct reader r[NREADERS] = { { 0, 0 } };
	pthread_t t[NREADERS], w;
	long rounds = 0;
	int ok = 1;

	w = start(work, &rounds);
	for (int i = 0; i < NREADERS; i++)
		t[i] = start(read_ticks, &r[i]);
	for (int i = 0; i < NREADERS; i++) {
		pthread_join(t[i], NULL);
		ok &= r[i].ticks >= TICKS && r[i].ms >= TICKS * 10;
	}
	readers_done = 1;
	pthread_join(w, NULL);
	printf("periodic: %d readers, %d expirations each\n", NREADERS, TICKS);
	check(ok, "every reader saw its expirations, none early");
	check(rounds > 0, "the worker ran meanwhile");
}

static void one_shot(void)
{
	uint64_t n;
	int64_t t0;
	int fd, ep;
	struct pollfd pf;
	struct epoll_event ev = { .events = EPOLLIN };

	t0 = ms_now();
	fd = timer(50, 0, 0);
	check(read(fd, &n, sizeof n) == sizeof n && n == 1 &&
		      ms_now() - t0 >= 50,
	      "a one-shot timer read once, after 50 ms");
	close(fd);

	t0 = ms_now();
	fd = timer(50, 0, 0);
	pf = (struct pollfd){ .fd = fd, .events = POLLIN };
	check(poll(&pf, 1, 10000) == 1 && pf.revents == POLLIN &&
		      ms_now() - t0 >= 50,
	      "poll on a timerfd");
	close(fd);

	t0 = ms_now();
	fd = timer(50, 0, 0);
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll");
	check(epoll_wait(ep, &ev, 1, 10000) == 1 && ms_now() - t0 >= 50,
	      "epoll_wait on a timerfd");
	check(read(fd, &n, sizeof n) == sizeof n && n == 1, "then read it");
	close(ep);
	close(fd);
}

static void bad_input(void)
{
	char small[4];
	uint64_t n = 1;
	int fd = timer(0, 0, 0);

	/* At once, though the timer is blocking and never expires. */
	check(read(fd, small, sizeof small) == -1 && errno == EINVAL,
	      "read of 4 bytes: EINVAL");
	check(write(fd, &n, sizeof n) == -1 && errno == EINVAL,
	      "write: EINVAL");
	close(fd);
	fd = timer(0, 0, TFD_NONBLOCK);
	check(read(fd, &n, sizeof n) == -1 && errno == EAGAIN,
	      "TFD_NONBLOCK, unarmed: EAGAIN");
	close(fd);
	check(timerfd_create(12345, 0) == -1 && errno == EINVAL,
	      "a bad clock: EINVAL");
}

int main(void)
{
	periodic();
	one_shot();
	bad_input();
	printf("OK\n");
	return 0;
}
