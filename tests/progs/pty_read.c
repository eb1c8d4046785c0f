// pty_read: threads read a terminal (a pty pair from posix_openpt,
// grantpt, unlockpt, in raw mode) while other threads write to it, and the
// terminal's file status flags never change.
// 1. A reader thread blocks reading the slave while a writer thread writes
//    32 KiB into the master in pieces, pausing so that the reader finds the
//    terminal empty again and again; 2. the same from the slave to the
//    master; 3. a child (fork + exec of head -c) reads the inherited slave
//    with blocking reads while a thread of ours writes the master and
//    another reads head's output back from it (an O_NONBLOCK set on the
//    shared open file description would make head fail with EAGAIN).
// Each writer also reads F_GETFL of the fd its reader is blocked on; the
// flags of both ends are compared with those from before any thread
// read. GOMAXPROCS=1: under goshim a reader blocked in the kernel must
// not keep the writer from running.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=30
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define TOTAL 32768
#define PIECE 256
#define CHILD_BYTES 4096

struct stream {
	int from, to;	    /* the writer writes to, the reader reads from */
	size_t total;
	uint64_t sent_hash, got_hash;
	size_t got;
	int flags_seen; /* F_GETFL of 'from' while its reader waited */
};

static void die(const char *what)
{
	fprintf(stderr, "pty_read: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static void *reader(void *arg)
{
	struct stream *s = arg;
	char buf[4096];

	while (s->got < s->total) {
		ssize_t n = read(s->from, buf, sizeof buf);
		if (n < 0)
			die("read");
		if (n == 0) {
			fprintf(stderr, "pty_read: early EOF\n");
			exit(1);
		}
		s->got_hash = fnv(s->got_hash, buf, (size_t)n);
		s->got += (size_t)n;
	}
	return NULL;
}

static void *writer(void *arg)
{
	struct stream *s = arg;
	char buf[PIECE];
	uint32_t x = (uint32_t)s->to * 2654435761u + 1;

	usleep(10000); /* the reader blocks first */
	s->flags_seen = fcntl(s->from, F_GETFL);
	for (size_t done = 0; done < s->total; done += PIECE) {
		for (int i = 0; i < PIECE; i++) {
			x = x * 1103515245 + 12345;
			buf[i] = (char)(x >> 16);
		}
		if (write(s->to, buf, PIECE) != PIECE)
			die("write");
		s->sent_hash = fnv(s->sent_hash, buf, PIECE);
		if (done % (16 * PIECE) == 0)
			usleep(1000);
	}
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(t, NULL, fn, arg);
	if (e) {
		errno = e;
		die("pthread_create");
	}
}

/* Move s->total bytes from s->to to s->from, a reader and a writer thread. */
static void run(struct stream *s)
{
	pthread_t r, w;

	s->sent_hash = s->got_hash = 1469598103934665603ull;
	start(&r, reader, s);
	start(&w, writer, s);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
}

static int report(const char *what, const struct stream *s, int flags)
{
	int ok = s->got == s->total && s->got_hash == s->sent_hash &&
		 s->flags_seen == flags;
	printf("%s: %zu of %zu bytes, same bytes: %s, flags while the reader "
	       "waited unchanged: %s\n",
	       what, s->got, s->total, s->got_hash == s->sent_hash ? "yes" : "no",
	       s->flags_seen == flags ? "yes" : "no");
	return ok;
}

int main(void)
{
	struct termios tio;
	int master, slave, mflags, sflags, ok = 1, st;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0)
		die("posix_openpt");
	if (grantpt(master) || unlockpt(master))
		die("grantpt/unlockpt");
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	if (slave < 0)
		die("open slave");
	/* Raw: bytes pass unchanged, no echo, no line buffering. */
	if (tcgetattr(slave, &tio))
		die("tcgetattr");
	cfmakeraw(&tio);
	if (tcsetattr(slave, TCSANOW, &tio))
		die("tcsetattr");
	mflags = fcntl(master, F_GETFL);
	sflags = fcntl(slave, F_GETFL);
	if (mflags < 0 || sflags < 0)
		die("fcntl");
	printf("master, slave blocking: %s, %s\n",
	       mflags & O_NONBLOCK ? "no" : "yes",
	       sflags & O_NONBLOCK ? "no" : "yes");

	struct stream down = { .from = slave, .to = master, .total = TOTAL };
	run(&down);
	ok &= report("master -> slave", &down, sflags);

	struct stream up = { .from = master, .to = slave, .total = TOTAL };
	run(&up);
	ok &= report("slave -> master", &up, mflags);

	/* A child on the terminal, like a shell's job. */
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0)
			_exit(126);
		close(slave);
		close(master);
		execlp("head", "head", "-c", "4096", (char *)NULL);
		_exit(127);
	}
	struct stream child = { .from = master, .to = master,
				.total = CHILD_BYTES };
	run(&child);
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	ok &= report("master -> head -c on the slave -> master", &child,
		     mflags);
	printf("head exited: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ok &= st == 0;

	int m2 = fcntl(master, F_GETFL), s2 = fcntl(slave, F_GETFL);
	printf("master, slave flags as before: %s, %s\n",
	       m2 == mflags ? "yes" : "no", s2 == sflags ? "yes" : "no");
	ok &= m2 == mflags && s2 == sflags;
	close(slave);
	close(master);
	if (!ok)
		return 1;
	printf("OK\n");
	return 0;
}
