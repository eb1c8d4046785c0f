// pipe_child: a child process reads an inherited pipe in blocking mode.
// The parent forks and execs /bin/cat with one pipe as its stdin and
// another as its stdout; one thread writes 2 MiB into cat in pieces, with
// pauses, so that cat's blocking read finds the pipe empty again and
// again (an O_NONBLOCK leaked onto the pipe would make cat fail with
// EAGAIN), while another thread reads cat's output and hashes it. Both
// threads wait on the pipes; the fds still say blocking afterwards, and
// cat exits 0 with every byte passed through. Then, after the parent's
// threads have waited on pipes, a child that does not exec waits in a
// blocking read of an inherited pipe until the parent writes to it.
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
#include <unistd.h>

#define TOTAL (2 << 20)
#define PIECE 32768

static int to_cat[2], from_cat[2];
static uint64_t sent_hash = 1469598103934665603ull;
static uint64_t got_hash = 1469598103934665603ull, got;
static int flags_ok;

static void die(const char *what)
{
	fprintf(stderr, "pipe_child: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static void *feed(void *arg)
{
	static char buf[PIECE];
	uint32_t x = 12345;

	(void)arg;
	for (int done = 0; done < TOTAL; done += PIECE) {
		for (int i = 0; i < PIECE; i++) {
			x = x * 1103515245 + 12345;
			buf[i] = (char)(x >> 16);
		}
		if (write(to_cat[1], buf, PIECE) != PIECE)
			die("write");
		sent_hash = fnv(sent_hash, buf, PIECE);
		if (done % (8 * PIECE) == 0)
			usleep(2000);
	}
	flags_ok = !(fcntl(to_cat[1], F_GETFL) & O_NONBLOCK);
	if (close(to_cat[1]))
		die("close");
	return NULL;
}

static void *drain(void *arg)
{
	static char buf[65536];

	(void)arg;
	for (;;) {
		ssize_t n = read(from_cat[0], buf, sizeof buf);
		if (n < 0)
			die("read");
		if (n == 0)
			break;
		got_hash = fnv(got_hash, buf, (size_t)n);
		got += (uint64_t)n;
	}
	flags_ok &= !(fcntl(from_cat[0], F_GETFL) & O_NONBLOCK);
	return NULL;
}

static void *wait_byte(void *arg)
{
	char c;
	(void)arg;
	if (read(to_cat[0], &c, 1) != 1)
		die("read");
	return NULL;
}

int main(void)
{
	pthread_t f, d;
	int st;

	if (pipe(to_cat) || pipe(from_cat))
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (dup2(to_cat[0], 0) < 0 || dup2(from_cat[1], 1) < 0)
			_exit(126);
		close(to_cat[0]);
		close(to_cat[1]);
		close(from_cat[0]);
		close(from_cat[1]);
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(to_cat[0]);
	close(from_cat[1]);
	if (pthread_create(&d, NULL, drain, NULL) ||
	    pthread_create(&f, NULL, feed, NULL))
		die("pthread_create");
	pthread_join(f, NULL);
	pthread_join(d, NULL);
	close(from_cat[0]);
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	printf("cat passed %llu of %d bytes, same bytes: %s\n",
	       (unsigned long long)got, TOTAL,
	       got_hash == sent_hash ? "yes" : "no");
	printf("cat exited: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	printf("our ends still blocking: %s\n", flags_ok ? "yes" : "no");
	if (got != TOTAL || got_hash != sent_hash || st != 0 || !flags_ok)
		return 1;

	/* Meanwhile a thread of the parent waits on a pipe of its own. */
	int p[2];
	pthread_t w;
	if (pipe(p) || pipe(to_cat))
		die("pipe");
	if (pthread_create(&w, NULL, wait_byte, NULL))
		die("pthread_create");
	usleep(5000);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char c = 0;
		_exit(read(p[0], &c, 1) == 1 ? c : 100);
	}
	usleep(20000);
	if (write(p[1], "*", 1) != 1 || waitpid(pid, &st, 0) != pid)
		die("child");
	if (write(to_cat[1], "+", 1) != 1)
		die("write");
	pthread_join(w, NULL);
	printf("a forked child's blocking read got: %c\n",
	       WIFEXITED(st) ? WEXITSTATUS(st) : '?');
	if (st != '*' << 8)
		return 1;
	printf("OK\n");
	return 0;
}
