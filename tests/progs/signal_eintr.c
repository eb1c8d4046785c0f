// A signal sent with pthread_kill to a thread blocked in a call that
// signals interrupt: nanosleep (EINTR and the time left), read on a pipe
// accept and sem_wait (EINTR, or restarted under SA_RESTART), poll
// (EINTR even under SA_RESTART); pthread_cond_wait is not interrupted
// (the handler runs, the wait goes on). Each handler runs on its thread.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static __thread volatile sig_atomic_t handled;
static volatile sig_atomic_t blocked_now;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void use_handler(bool restart)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
}

/* Send SIGUSR1 to t once it has been blocked a while. */
static void interrupt(pthread_t t)
{
	while (!blocked_now)
		usleep(1000);
	usleep(30000);
	pthread_kill(t, SIGUSR1);
}

static void *sleeper(void *arg)
{
	struct timespec req = { 5, 0 }, rem = { 0, 0 };
	(void)arg;
	blocked_now = 1;
	int r = nanosleep(&req, &rem);
	int e = errno;
	printf("nanosleep: %d %s, time left > 4 s: %s, handled %d\n", r,
	       strerror(e), rem.tv_sec >= 4 ? "yes" : "no", (int)handled);
	return NULL;
}

static int pfd[2];
static void *reader(void *arg)
{
	char c;
	(void)arg;
	blocked_now = 1;
	ssize_t n = read(pfd[0], &c, 1);
	int e = errno;
	printf("read: %zd %s, handled %d\n", n, n < 0 ? strerror(e) : "data",
	       (int)handled);
	return NULL;
}

static void *poller(void *arg)
{
	struct pollfd p = { .fd = pfd[0], .events = POLLIN };
	(void)arg;
	blocked_now = 1;
	int n = poll(&p, 1, 5000);
	int e = errno;
	printf("poll: %d %s, handled %d\n", n, strerror(e), (int)handled);
	return NULL;
}

static sem_t sem;
static void *sem_waiter(void *arg)
{
	(void)arg;
	blocked_now = 1;
	int r = sem_wait(&sem);
	int e = errno;
	printf("sem_wait: %d %s, handled %d\n", r, strerror(e), (int)handled);
	return NULL;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;
static void *cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	blocked_now = 1;
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	printf("cond_wait: woken by the signal on the condvar, handled %d\n",
	       (int)handled);
	return NULL;
}

static int lfd;
static void *acceptor(void *arg)
{
	(void)arg;
	blocked_now = 1;
	int c = accept(lfd, NULL, NULL);
	int e = errno;
	printf("accept: %s, handled %d\n", c >= 0 ? "a connection"
						 : strerror(e),
	       (int)handled);
	if (c >= 0)
		close(c);
	return NULL;
}

static void run(void *(*fn)(void *), void (*after)(void))
{
	pthread_t t;
	blocked_now = 0;
	pthread_create(&t, NULL, fn, NULL);
	interrupt(t);
	if (after) {
		usleep(30000);
		after();
	}
	pthread_join(t, NULL);
}

static void write_byte(void)
{
	if (write(pfd[1], "x", 1) != 1)
		perror("write");
}

static void signal_cond(void)
{
	pthread_mutex_lock(&mu);
	go = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

static void post_sem(void)
{
	sem_post(&sem);
}

static struct sockaddr_in addr;
static void connect_one(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(s, (struct sockaddr *)&addr, sizeof addr) != 0)
		perror("connect");
	close(s);
}

int main(void)
{
	socklen_t alen = sizeof addr;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pfd) != 0)
		return 1;
	sem_init(&sem, 0, 0);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
	    listen(lfd, 8) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0) {
		perror("listen");
		return 1;
	}

	use_handler(false);
	run(sleeper, NULL);
	run(reader, NULL);
	run(poller, NULL);
	run(sem_waiter, NULL);
	run(acceptor, NULL);

	use_handler(true);
	printf("-- SA_RESTART\n");
	run(sleeper, NULL);
	run(reader, write_byte);
	run(poller, NULL);
	run(sem_waiter, post_sem);
	run(acceptor, connect_one);
	run(cond_waiter, signal_cond);
	return 0;
}
