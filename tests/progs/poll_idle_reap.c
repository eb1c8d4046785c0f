// poll_idle_reap: a thread waits in poll() for a pipe that a child process
// closes after more than a second, while the process has more idle OS
// threads than it needs. Under goshim the M that watches the netpoller
// for that long readies the waiting goroutine from its scheduler context
// and must not then go away as a spare thread before someone runs it
// (CPython's subprocess.communicate() waited for good).
// goshim-test: env=GOMAXPROCS=2
// goshim-test: timeout=40
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 3
#define BLOCKERS 6
#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "poll_idle_reap: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

/* A system call goshim cannot park: each holds an OS thread, so the
 * process has spare ones afterwards. */
static void *blocker(void *arg)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	(void)arg;
	syscall(SYS_nanosleep, &ts, NULL);
	return NULL;
}

static void spare_threads(void)
{
	pthread_t t[BLOCKERS];
	for (int i = 0; i < BLOCKERS; i++)
		CHECK(pthread_create(&t[i], NULL, blocker, NULL) == 0);
	for (int i = 0; i < BLOCKERS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
}

static void *poller(void *arg)
{
	int fd = (int)(long)arg;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, -1);
	return (void *)(long)(n == 1 && (p.revents & POLLHUP));
}

int main(void)
{
	int hup = 0;

	for (int r = 0; r < ROUNDS; r++) {
		int fds[2];
		pthread_t t;
		void *ok;

		spare_threads();
		CHECK(pipe(fds) == 0);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			usleep(1200 * 1000); /* past goshim's 1 s spare-M reap */
			_exit(0);
		}
		close(fds[1]);
		/* From the main thread in one round, another thread in the
		 * others: whichever M ends up watching. */
		if (r == 0) {
			ok = poller((void *)(long)fds[0]);
		} else {
			CHECK(pthread_create(&t, NULL, poller,
					     (void *)(long)fds[0]) == 0);
			CHECK(pthread_join(t, &ok) == 0);
		}
		hup += ok != NULL;
		close(fds[0]);
		CHECK(waitpid(pid, NULL, 0) == pid);
	}
	printf("%d of %d polls saw the child's end of the pipe close\n", hup,
	       ROUNDS);
	return 0;
}
