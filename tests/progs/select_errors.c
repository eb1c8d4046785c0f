// select_errors: select's limits and bad input, and poll's POLLNVAL, as
// Linux gives them: EINVAL for nfds < 0 and for a negative timeout, EBADF
// for a closed fd in a set (at once, with the time left written back), a
// set bit beyond the fd table (ignored, so the wait runs out), a timeout
// with tv_usec over a second, poll's POLLNVAL next to a ready fd, and sets
// larger than fd_set: 16 threads each in select with nfds 32768 for an fd
// above 4000, woken by writes on one P (bits beyond the fd table left as they were),
// and a closed fd above FD_SETSIZE (EBADF).
// goshim-test: env=GOMAXPROCS=1
// goshim-test: native-min-threads=17
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
#define NBIG 16

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

/* Bits of a set of any size (FD_SET may be checked against FD_SETSIZE). */
#define WORD_BITS (8 * (int)sizeof(unsigned long))

static void bit_set(unsigned long *set, int fd)
{
	set[fd / WORD_BITS] |= 1UL << (fd % WORD_BITS);
}

static int bit_isset(const unsigned long *set, int fd)
{
	return set[fd / WORD_BITS] >> (fd % WORD_BITS) & 1;
}

struct big_waiter {
	int p[2];
	int high; /* p[0] again, above FD_SETSIZE */
	int ok;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static int in;

/* nfds far beyond the fd table (fds < BIGFDS): bits there are neither
 * looked at nor written. */
static void *select_big(void *arg)
{
	struct big_waiter *w = arg;
	unsigned long *set = calloc(8 * BIGFDS / 8, 1);
	struct timeval tv = { 10, 0 };

	if (set == NULL)
		die("calloc");
	bit_set(set, w->high);
	bit_set(set, 8 * BIGFDS - 10);
	pthread_mutex_lock(&lock);
	if (++in == NBIG)
		pthread_cond_signal(&all_in);
	pthread_mutex_unlock(&lock);
	w->ok = select(8 * BIGFDS, (fd_set *)set, NULL, NULL, &tv) == 1 &&
		bit_isset(set, w->high) && bit_isset(set, 8 * BIGFDS - 10);
	free(set);
	return NULL;
}

/* Larger sets than fd_set: NBIG threads each wait for an fd above 4000,
 * woken by writes on one P; then a closed fd in the table: EBADF. */
static void big_sets(void)
{
	static struct big_waiter w[NBIG];
	pthread_t t[NBIG];
	struct rlimit rl;
	int ok = 0, e;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < BIGFDS &&
	    rl.rlim_max >= BIGFDS) {
		rl.rlim_cur = BIGFDS;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < NBIG; i++) {
		if (pipe(w[i].p))
			die("pipe");
		w[i].high = dup2(w[i].p[0], BIGFDS - 1 - i);
		if (w[i].high < 0)
			die("dup2");
		if ((e = pthread_create(&t[i], NULL, select_big, &w[i]))) {
			errno = e;
			die("pthread_create");
		}
	}
	pthread_mutex_lock(&lock);
	while (in < NBIG)
		pthread_cond_wait(&all_in, &lock);
	pthread_mutex_unlock(&lock);
	usleep(20000);
	for (int i = 0; i < NBIG; i++)
		if (write(w[i].p[1], "b", 1) != 1)
			die("write");
	for (int i = 0; i < NBIG; i++) {
		pthread_join(t[i], NULL);
		ok += w[i].ok;
		close(w[i].p[0]);
		close(w[i].p[1]);
		close(w[i].high);
	}
	printf("%d threads in select with nfds %d: %d woken\n", NBIG,
	       8 * BIGFDS, ok);
	check(ok == NBIG, "sets larger than fd_set");

	unsigned long *set = calloc(8 * BIGFDS / 8, 1);
	struct timeval tv = { 2, 0 };
	if (set == NULL)
		die("calloc");
	bit_set(set, BIGFDS - 1);
	check(select(8 * BIGFDS, (fd_set *)set, NULL, NULL, &tv) == -1 &&
		      errno == EBADF,
	      "a closed fd above FD_SETSIZE in the table: EBADF");
	free(set);
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

	big_sets();

	close(p[0]);
	close(p[1]);
	close(q[0]);
	printf("OK\n");
	return 0;
}
