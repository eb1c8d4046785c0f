// select_errors: select's limits and bad input, and poll's POLLNVAL, as
// Linux gives them: EINVAL for nfds < 0 and for a negative timeout, EBADF
// for a closed fd in a set (at once, with the time left written back), a
// set bit beyond the fd table (ignored, so the wait runs out), a timeout
// with tv_usec over a second, sets larger than fd_set (nfds 4096) woken by
// another thread's write on one P, and poll's POLLNVAL next to a ready fd.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define BIGFDS 4096

static void die(const char *what)
{
	fprintf(stderr, "select_errors: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "select_errors: failed: %s (errno %s)\n", what,
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

static void *write_later(void *arg)
{
	int fd = (int)(intptr_t)arg;
	usleep(30000);
	if (write(fd, "w", 1) != 1)
		die("write");
	return NULL;
}

int main(void)
{
	int p[2], q[2];
	fd_set rd;
	struct timeval tv;
	struct pollfd pf[2];
	int64_t t0;

	if (pipe(p) || pipe(q))
		die("pipe");

	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv = (struct timeval){ 1, 0 };
	check(select(-1, &rd, NULL, NULL, &tv) == -1 && errno == EINVAL,
	      "nfds = -1: EINVAL");
	tv = (struct timeval){ 0, -1 };
	check(select(p[0] + 1, &rd, NULL, NULL, &tv) == -1 && errno == EINVAL,
	      "tv_usec = -1: EINVAL");
	tv = (struct timeval){ -1, 0 };
	check(select(p[0] + 1, &rd, NULL, NULL, &tv) == -1 && errno == EINVAL,
	      "tv_sec = -1: EINVAL");

	/* A closed fd: EBADF at once, the time left written back. */
	close(q[1]);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	FD_SET(q[1], &rd);
	tv = (struct timeval){ 2, 0 };
	t0 = ms_now();
	check(select((p[0] > q[1] ? p[0] : q[1]) + 1, &rd, NULL, NULL, &tv) ==
			      -1 &&
		      errno == EBADF && ms_now() - t0 < 1000,
	      "a closed fd in the set: EBADF at once");
	check(tv.tv_sec >= 1, "the time left is written back");

	/* poll: POLLNVAL beside a ready fd, at once (while q[1] is still
	 * closed: a later open, anyone's, may reuse its number). */
	if (write(p[1], "r", 1) != 1)
		die("write");
	pf[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = q[1], .events = POLLOUT };
	check(poll(pf, 2, 5000) == 2 && pf[0].revents == POLLIN &&
		      pf[1].revents == POLLNVAL,
	      "poll: POLLIN and POLLNVAL together");
	char c;
	if (read(p[0], &c, 1) != 1)
		die("read");

	/* Bits beyond the fd table are not looked at: the wait runs out. */
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	FD_SET(FD_SETSIZE - 1, &rd);
	tv = (struct timeval){ 0, 50000 };
	t0 = ms_now();
	check(select(FD_SETSIZE, &rd, NULL, NULL, &tv) == 0 &&
		      ms_now() - t0 >= 50,
	      "a bit beyond the fd table is ignored");

	/* tv_usec over a second counts as such. */
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv = (struct timeval){ 0, 1100000 };
	t0 = ms_now();
	check(select(p[0] + 1, &rd, NULL, NULL, &tv) == 0 &&
		      ms_now() - t0 >= 1100 && tv.tv_sec == 0 &&
		      tv.tv_usec == 0,
	      "tv_usec = 1.1 s waits 1.1 s");

	/* Larger sets than fd_set: nfds 4096 and an fd above 1024. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < BIGFDS + 1 &&
	    rl.rlim_max > BIGFDS) {
		rl.rlim_cur = BIGFDS + 1;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int high = dup2(p[0], BIGFDS - 2);
	if (high < 0)
		die("dup2");
	fd_set *big = calloc(BIGFDS / 8, 1);
	if (big == NULL)
		die("calloc");
	FD_SET(high, big);
	pthread_t t;
	int e = pthread_create(&t, NULL, write_later, (void *)(intptr_t)p[1]);
	if (e) {
		errno = e;
		die("pthread_create");
	}
	tv = (struct timeval){ 10, 0 };
	t0 = ms_now();
	check(select(BIGFDS, big, NULL, NULL, &tv) == 1 && FD_ISSET(high, big) &&
		      ms_now() - t0 < 5000,
	      "nfds 4096, woken by a write on one P");
	pthread_join(t, NULL);
	free(big);
	close(high);

	close(p[0]);
	close(p[1]);
	close(q[0]);
	printf("OK\n");
	return 0;
}
