// fd_dup: dup, dup2, dup3 and fcntl F_DUPFD / F_DUPFD_CLOEXEC.
// - 50 threads each block reading a different dup of a pipe's read end
//   (and of a socketpair end), at GOMAXPROCS=1: they wait without an OS
//   thread each, and each gets the byte written for it.
// - dup2 onto an fd number a thread is blocked reading: Linux leaves the
//   reader waiting on the old pipe (a write there reaches it; a dup of
//   the old read end is kept, as the blocked read keeps the file open
//   natively), goshim wakes it with EBADF as close does; either answer is accepted, and the
//   number then reads the new pipe.
// - Linux's errors: EBADF for a bad old fd or a new fd out of range,
//   EINVAL for dup3 onto itself or with flags other than O_CLOEXEC, and
//   for F_DUPFD beyond the fd limit; dup2 onto itself returns the fd;
//   O_CLOEXEC / F_DUPFD_CLOEXEC set FD_CLOEXEC, dup and dup2 do not.
// - dup2 onto every fd number from 3 to 63 the program has not opened
//   itself (as a shell's "exec 5>file" does) succeeds, while a thread
//   waits in a read; the read and later ones still wake.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=51
// goshim-test: timeout=30
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define READERS 50

static void die(const char *what)
{
	fprintf(stderr, "fd_dup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fd_dup: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

struct reader {
	int fd;
	ssize_t r;
	int err;
	char c;
};

static void *do_read(void *arg)
{
	struct reader *rd = arg;
	rd->r = read(rd->fd, &rd->c, 1);
	rd->err = rd->r < 0 ? errno : 0;
	return NULL;
}

static pthread_t start_reader(struct reader *rd)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, do_read, rd);
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

static int cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);
	if (f < 0)
		die("F_GETFD");
	return !!(f & FD_CLOEXEC);
}

static int fails(int r, int err)
{
	return r == -1 && errno == err;
}

/* Many readers, each on its own dup of one end; one byte each. */
static void readers_on_dups(int rfd, int wfd, const char *what)
{
	struct reader rd[READERS];
	pthread_t t[READERS];
	char msg[80];
	int got = 0;

	for (int i = 0; i < READERS; i++) {
		int how = i % 3;
		rd[i] = (struct reader){ .fd = how == 0   ? dup(rfd)
					       : how == 1 ? fcntl(rfd, F_DUPFD, 100)
							  : fcntl(rfd, F_DUPFD_CLOEXEC, 0) };
		if (rd[i].fd < 0)
			die("dup");
		t[i] = start_reader(&rd[i]);
	}
	usleep(20000);
	for (int i = 0; i < READERS; i++)
		if (write(wfd, "x", 1) != 1)
			die("write");
	for (int i = 0; i < READERS; i++) {
		join(t[i]);
		got += rd[i].r == 1 && rd[i].c == 'x';
		close(rd[i].fd);
	}
	snprintf(msg, sizeof msg, "%d readers on dups of a %s end got a byte each",
		 READERS, what);
	check(got == READERS, msg);
}

static void dup2_under_reader(void)
{
	int a[2], b[2], answered = 0, newread = 0;

	for (int k = 0; k < 20; k++) {
		if (pipe(a) || pipe(b))
			die("pipe");
		/* Kept so that pipe a has a reader under goshim too (a
		 * parked reader holds no reference to the file). */
		int keep = dup(a[0]);
		if (keep < 0)
			die("dup");
		struct reader rd = { .fd = a[0] };
		pthread_t t = start_reader(&rd);
		usleep(5000);
		if (dup2(b[0], a[0]) != a[0])
			die("dup2");
		/* Natively the reader still waits on pipe a; one that came
		 * late to its read reads pipe b. */
		if (write(a[1], "a", 1) != 1 || write(b[1], "b", 1) != 1)
			die("write");
		join(t);
		answered += (rd.r == 1 && (rd.c == 'a' || rd.c == 'b')) ||
			    (rd.r < 0 && rd.err == EBADF);
		/* The number now reads pipe b, waiting for it. */
		rd = (struct reader){ .fd = a[0] };
		t = start_reader(&rd);
		usleep(1000);
		if (write(b[1], "c", 1) != 1)
			die("write");
		join(t);
		newread += rd.r == 1 && (rd.c == 'b' || rd.c == 'c');
		close(keep);
		close(a[0]);
		close(a[1]);
		close(b[0]);
		close(b[1]);
	}
	check(answered == 20, "a reader under dup2 came back with the old "
			      "pipe's byte, EBADF, or (late) the new pipe's");
	check(newread == 20, "the number then reads the new pipe");
}

static void errors(void)
{
	struct rlimit rl;
	int p[2], fd;

	if (pipe(p) || getrlimit(RLIMIT_NOFILE, &rl))
		die("setup");
	errno = 0;
	check(fails(dup(-1), EBADF), "dup(-1): EBADF");
	check(fails(dup(12345), EBADF), "dup of a closed fd: EBADF");
	check(fails(dup2(12345, p[0]), EBADF), "dup2 from a closed fd: EBADF");
	check(fails(dup2(12345, 12345), EBADF), "dup2(closed, same): EBADF");
	check(dup2(p[0], p[0]) == p[0], "dup2(fd, fd): fd");
	check(fails(dup2(p[0], -1), EBADF), "dup2 onto -1: EBADF");
	check(fails(dup2(p[0], (int)rl.rlim_cur), EBADF),
	      "dup2 onto the fd limit: EBADF");
	check(fails(dup3(p[0], p[0], 0), EINVAL), "dup3(fd, fd): EINVAL");
	check(fails(dup3(12345, 12345, 0), EINVAL),
	      "dup3(closed, same): EINVAL");
	check(fails(dup3(p[0], 50, O_NONBLOCK), EINVAL),
	      "dup3 with O_NONBLOCK: EINVAL");
	check(fails(dup3(12345, 50, 0), EBADF), "dup3 from a closed fd: EBADF");
	check(fails(fcntl(p[0], F_DUPFD, (int)rl.rlim_cur), EINVAL),
	      "F_DUPFD at the fd limit: EINVAL");
	check(fails(fcntl(p[0], F_DUPFD, -1), EINVAL), "F_DUPFD -1: EINVAL");
	check(fails(fcntl(12345, F_DUPFD, 0), EBADF), "F_DUPFD of a closed fd: EBADF");

	fd = dup(p[0]);
	check(fd >= 0 && !cloexec(fd), "dup: no FD_CLOEXEC");
	close(fd);
	check(dup3(p[0], 60, O_CLOEXEC) == 60 && cloexec(60),
	      "dup3 O_CLOEXEC: FD_CLOEXEC");
	check(dup2(p[0], 60) == 60 && !cloexec(60),
	      "dup2 over it: FD_CLOEXEC cleared");
	close(60);
	fd = fcntl(p[0], F_DUPFD_CLOEXEC, 70);
	check(fd >= 70 && cloexec(fd), "F_DUPFD_CLOEXEC: FD_CLOEXEC, >= arg");
	close(fd);
	/* A dup'ed write end keeps the pipe open after the original closes. */
	fd = dup(p[1]);
	close(p[1]);
	if (write(fd, "z", 1) != 1)
		die("write");
	char c = 0;
	check(read(p[0], &c, 1) == 1 && c == 'z', "data through a dup");
	close(fd);
	check(read(p[0], &c, 1) == 0, "EOF once every dup is closed");
	close(p[0]);
}

static void dup2_anywhere(void)
{
	int p[2], q[2], null = open("/dev/null", O_WRONLY), taken = 0;

	if (null < 0 || pipe(p) || pipe(q))
		die("setup");
	struct reader rd = { .fd = p[0] };
	pthread_t t = start_reader(&rd);
	usleep(5000);
	for (int n = 3; n < 64; n++) {
		if (n == null || n == p[0] || n == p[1] || n == q[0] ||
		    n == q[1])
			continue;
		if (dup2(null, n) != n)
			die("dup2 onto a number the program left free");
		taken++;
	}
	if (write(p[1], "w", 1) != 1)
		die("write");
	join(t);
	check(rd.r == 1 && rd.c == 'w',
	      "dup2 onto each free number below 64 while a read waits; it wakes");
	for (int n = 3; n < 64; n++)
		if (n != null && n != p[0] && n != p[1] && n != q[0] &&
		    n != q[1])
			close(n);
	rd = (struct reader){ .fd = q[0] };
	t = start_reader(&rd);
	usleep(5000);
	if (write(q[1], "v", 1) != 1)
		die("write");
	join(t);
	check(rd.r == 1 && rd.c == 'v' && taken > 50, "a later read waits and wakes");
	close(null);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

int main(void)
{
	int p[2], s[2];

	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		die("setup");
	readers_on_dups(p[0], p[1], "pipe");
	readers_on_dups(s[0], s[1], "socket");
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	dup2_under_reader();
	dup2_anywhere();
	errors();
	printf("OK\n");
	return 0;
}
