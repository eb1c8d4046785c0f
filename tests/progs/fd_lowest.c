// fd_lowest: open() gives the lowest free fd while goshim works, and a
// select() that does not wait never fails with EINTR. The main thread
// opens and closes /dev/null for two seconds, while one thread spins
// (sysmon looks at the threads, and follows the cgroup quota each
// second) and one polls in turn with select() (timeout 0, nfds beyond
// FD_SETSIZE: goshim reads the fd table's size), poll() and
// epoll_wait(), timeout 0. goshim reads its /proc and cgroup
// files through fds it keeps open, hidden high in the table; it opens a
// thread's /proc files once, at sysmon's first look at that thread, and
// an open of the program's at that instant gets the next number
// (scripts/README.md, known limits): a few such runs are allowed, not one
// a second or one a look.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define NFDS 4096

static volatile int stop;
static int pipefd[2], epfd;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	(void)arg;
	while (!stop)
		x++;
	return NULL;
}

static void *poller(void *arg)
{
	fd_set *rd = calloc(NFDS / 8, 1);
	struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
	struct epoll_event ev;
	long bad = 0;
	(void)arg;
	for (unsigned i = 0; !stop; i++) {
		struct timeval tv = { 0, 0 };
		int r;
		FD_SET(pipefd[0], rd);
		if (i % 3 == 0)
			r = select(NFDS, rd, NULL, NULL, &tv);
		else if (i % 3 == 1)
			r = poll(&p, 1, 0);
		else
			r = epoll_wait(epfd, &ev, 1, 0);
		bad += r != 0;
	}
	free(rd);
	return (void *)bad;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	pthread_t sp, se;
	void *bad;
	long opens = 0, runs = 0;
	int moved = 0;

	struct epoll_event ev = { .events = EPOLLIN };
	if (pipe(pipefd) != 0 || (epfd = epoll_create1(0)) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &ev) != 0)
		return 1;
	pthread_create(&sp, NULL, spin, NULL);
	pthread_create(&se, NULL, poller, NULL);
	usleep(50000); /* the spinner has run a while: sysmon looks */
	int want = open("/dev/null", O_RDONLY);
	close(want);
	for (double end = now() + 2; now() < end;) {
		for (int i = 0; i < 1000; i++, opens++) {
			int fd = open("/dev/null", O_RDONLY);
			runs += fd != want && !moved;
			moved = fd != want;
			close(fd);
		}
	}
	stop = 1;
	pthread_join(sp, NULL);
	pthread_join(se, &bad);
	if (runs <= 4)
		printf("runs of opens not at the lowest free fd: at most 4\n");
	else
		printf("runs of opens not at the lowest free fd: %ld\n", runs);
	printf("polls that did not time out: %ld\n", (long)bad);
	return opens > 0 ? 0 : 1;
}
