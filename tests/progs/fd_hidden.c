// fd_hidden: goshim's own fds (its epoll and eventfd, the files sysmon
// reads) are not the program's, and it cannot tell they are there.
// - Threads block reading a pipe and a socketpair, so the netpoller is
//   up; then the next open() gets the lowest free number, as natively.
// - Every fd below min(soft RLIMIT_NOFILE, 65536) the program did not
//   open fails as not open: fcntl F_GETFD and F_GETFL, read and write of
//   0 bytes, epoll_ctl with it as the epoll fd and as the target, dup,
//   ioctl FIONREAD, poll (POLLNVAL) and select (EBADF, or nothing
//   ready beyond the fd table).
// - A daemon's "close every fd from 3 to the soft limit" closes exactly
//   the program's own, and threads still exchange data over a new pipe
//   and socketpair after it.
// - dup2 onto every number up to 64 (goshim keeps its fds at the top of
//   the fd table's first 64 entries) and onto the soft limit's top works,
//   the fds read as their pipe, and the threads still wake.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAIRS 4
#define MAXFD 65536
#define NHIGH 65

static char mine[MAXFD]; /* the fds the program has open */
static int bound;	 /* fds below this are looked at */

static void die(const char *what)
{
	fprintf(stderr, "fd_hidden: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void opened(int fd)
{
	if (fd < 0)
		die("open");
	if (fd < MAXFD)
		mine[fd] = 1;
}

static void closed(int fd)
{
	if (close(fd) != 0)
		die("close");
	if (fd < MAXFD)
		mine[fd] = 0;
}

/* One pipe and one socketpair: a thread reads a byte from each and
 * answers on the other direction. */
struct pair {
	int p[2], q[2]; /* pipe to the thread, pipe back */
	int s[2];	/* socketpair */
};

static void *echo(void *arg)
{
	struct pair *pr = arg;
	char c;

	if (read(pr->p[0], &c, 1) != 1 || write(pr->q[1], &c, 1) != 1)
		die("echo pipe");
	if (recv(pr->s[1], &c, 1, 0) != 1 || send(pr->s[1], &c, 1, 0) != 1)
		die("echo socket");
	return NULL;
}

/* PAIRS threads, blocked in their reads when the main thread writes. */
static void exchange(const char *when)
{
	struct pair pr[PAIRS];
	pthread_t t[PAIRS];
	int ok = 0;

	for (int i = 0; i < PAIRS; i++) {
		if (pipe(pr[i].p) || pipe(pr[i].q) ||
		    socketpair(AF_UNIX, SOCK_STREAM, 0, pr[i].s))
			die("pipe");
		if (pthread_create(&t[i], NULL, echo, &pr[i]))
			die("pthread_create");
	}
	usleep(20000);
	for (int i = 0; i < PAIRS; i++) {
		char c = (char)('a' + i), r = 0;
		if (write(pr[i].p[1], &c, 1) != 1 || read(pr[i].q[0], &r, 1) != 1)
			die("pipe exchange");
		ok += r == c;
		c = (char)('A' + i);
		if (send(pr[i].s[0], &c, 1, 0) != 1 ||
		    recv(pr[i].s[0], &r, 1, 0) != 1)
			die("socket exchange");
		ok += r == c;
	}
	for (int i = 0; i < PAIRS; i++) {
		pthread_join(t[i], NULL);
		close(pr[i].p[0]);
		close(pr[i].p[1]);
		close(pr[i].q[0]);
		close(pr[i].q[1]);
		close(pr[i].s[0]);
		close(pr[i].s[1]);
	}
	printf("%s: %d of %d bytes echoed\n", when, ok, 2 * PAIRS);
}

static int lowest_free(void)
{
	for (int fd = 0;; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			return fd;
}

static void check_open(const char *when)
{
	bool lowest = false;

	/* Not the number itself: a file goshim opens for an instant (see
	 * scripts/README.md, known limits) may shift the program's earlier
	 * numbers, and one opened between the look and the open shifts this
	 * one; never its own fds for good, which the lowest free number
	 * shows, in each of three tries. */
	for (int i = 0; i < 3 && !lowest; i++) {
		int want = lowest_free(), fd = open("/dev/null", O_RDONLY);
		opened(fd);
		lowest = fd == want;
		closed(fd);
	}
	printf("%s: open gives the lowest free fd: %s\n", when,
	       lowest ? "yes" : "no");
}

/* The calls that take an fd, on every fd the program did not open:
 * how many answer otherwise than a closed fd does. */
static void check_not_open(const char *when)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), pp[2], other = 0, n = 0;
	struct epoll_event ev = { .events = EPOLLIN };
	struct pollfd *pfd = calloc((size_t)bound, sizeof *pfd);
	char buf[1];

	opened(ep);
	if (pipe(pp) || pfd == NULL)
		die("pipe");
	opened(pp[0]);
	opened(pp[1]);
	for (int fd = 0; fd < bound; fd++) {
		int v;
		if (mine[fd])
			continue;
		n++;
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF ||
		    fcntl(fd, F_GETFL) != -1 || errno != EBADF ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) != -1 || errno != EBADF ||
		    read(fd, buf, 0) != -1 || errno != EBADF ||
		    write(fd, buf, 0) != -1 || errno != EBADF ||
		    dup(fd) != -1 || errno != EBADF ||
		    ioctl(fd, FIONREAD, &v) != -1 || errno != EBADF ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != -1 ||
		    errno != EBADF ||
		    epoll_ctl(fd, EPOLL_CTL_ADD, pp[0], &ev) != -1 ||
		    errno != EBADF ||
		    epoll_ctl(fd, EPOLL_CTL_DEL, pp[0], NULL) != -1 ||
		    errno != EBADF)
			other++;
	}
	for (int fd = 0; fd < bound; fd++)
		pfd[fd] = (struct pollfd){ .fd = mine[fd] ? -1 : fd,
					   .events = POLLIN };
	if (poll(pfd, (nfds_t)bound, 1000) != n)
		other++;
	for (int fd = 0; fd < bound; fd++)
		other += !mine[fd] && pfd[fd].revents != POLLNVAL;
	/* select's sets as large as the fds looked at, one fd at a time.
	 * Linux reads a set only as far as the fd table goes, and says
	 * nothing of an fd beyond it (0, nothing ready), so a table of
	 * another size (goshim's fds may grow it) gives 0 where the other
	 * gives EBADF: either is an fd not open. EINTR: goshim's
	 * preemption signal. */
	fd_set *set = calloc((size_t)bound / 8 + 8, 1);
	if (set == NULL)
		die("calloc");
	for (int fd = 3; fd < bound; fd++) {
		struct timeval tv = { 0, 0 };
		int r;
		if (mine[fd])
			continue;
		((unsigned long *)set)[fd / (8 * sizeof(long))] =
			1UL << (fd % (8 * sizeof(long)));
		do
			r = select(fd + 1, set, NULL, NULL, &tv);
		while (r == -1 && errno == EINTR);
		if (r != 0 && !(r == -1 && errno == EBADF))
			other++;
		((unsigned long *)set)[fd / (8 * sizeof(long))] = 0;
	}
	free(set);
	free(pfd);
	closed(ep);
	closed(pp[0]);
	closed(pp[1]);
	printf("%s: fds not open that answer otherwise than EBADF: %d\n",
	       when, other);
}

int main(void)
{
	struct rlimit rl;
	struct pair keep;
	int fd, nclosed = 0, high[NHIGH], nhigh = 0, good = 0;
	long soft;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	soft = rl.rlim_cur > 1 << 20 ? 1 << 20 : (long)rl.rlim_cur;
	bound = soft < MAXFD ? (int)soft : MAXFD;
	for (fd = 0; fd < bound; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			mine[fd] = 1;
	if (pipe(keep.p) || socketpair(AF_UNIX, SOCK_STREAM, 0, keep.s))
		die("pipe");
	opened(keep.p[0]);
	opened(keep.p[1]);
	opened(keep.s[0]);
	opened(keep.s[1]);

	exchange("first");
	check_open("after the first threads");
	check_not_open("after the first threads");

	/* A daemon's start: every fd from 3 up goes. */
	for (long i = 3; i < soft; i++)
		if (close((int)i) == 0)
			nclosed++;
	for (fd = 3; fd < bound; fd++)
		mine[fd] = 0;
	printf("close loop from 3: closed %d, the program's\n", nclosed);
	check_open("after the close loop");
	exchange("after the close loop");
	check_not_open("after the close loop");

	/* Every number from the pipe's up to 64 (where goshim keeps its
	 * fds, in the fd table's first 64 entries), and the top. */
	if (pipe(keep.p))
		die("pipe");
	opened(keep.p[0]);
	opened(keep.p[1]);
	for (long i = keep.p[1] + 1; i <= 64; i++) {
		long fd = i < 64 && i < soft ? i : soft - 1;
		if (fd < MAXFD && mine[fd])
			continue;
		if (dup2(keep.p[0], (int)fd) != fd)
			die("dup2 high");
		opened((int)fd);
		high[nhigh++] = (int)fd;
	}
	for (int j = 0; j < nhigh; j++) {
		char c = (char)('0' + j), r = 0;
		if (write(keep.p[1], &c, 1) != 1)
			die("write");
		good += read(high[j], &r, 1) == 1 && r == c;
	}
	printf("dup2 onto %d numbers to 64 and the top: %s\n", nhigh,
	       good == nhigh ? "each reads the pipe" : "wrong");
	exchange("after dup2 onto them");
	for (int j = 0; j < nhigh; j++)
		closed(high[j]);
	check_open("after closing them");
	exchange("after closing them");
	closed(keep.p[0]);
	closed(keep.p[1]);
	check_not_open("at the end");
	return 0;
}
