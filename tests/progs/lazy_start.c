// lazy_start: what a process builds before its second thread is there, as
// natively, once it has threads. goshim starts its scheduler only at the
// first pthread_create: until then the process has one OS thread, no fd
// and no signal handler of goshim's, and the mask the program set. Then
// the handlers installed before (sigaction with a mask and SA_RESTART,
// signal()), the blocked set, a pipe, a pthread key's value, a __thread
// value, a mutex held across the first pthread_create, a semaphore posted
// before and a condvar that timed out before all work as natively.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "lazy_start: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

static atomic_int usr1_runs, usr1_sigint_blocked, alrm_runs;
static __thread int tls_value = 7;
static pthread_key_t key;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t posted;
static int pipefd[2];
static pthread_t main_thread;

static void on_usr1(int sig)
{
	sigset_t now;
	(void)sig;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	usr1_sigint_blocked += sigismember(&now, SIGINT);
	usr1_runs++;
}

static void on_alrm(int sig)
{
	(void)sig;
	alrm_runs++;
}

/* A line of /proc/self/status, as hex or decimal text. */
static void status_field(const char *name, char *out, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	CHECK(f);
	out[0] = 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ':') {
			snprintf(out, len, "%s", line + strlen(name) + 2);
			out[strcspn(out, "\n")] = 0;
		}
	fclose(f);
}

/* Open fds that are an epoll, an eventfd or a /proc file: a runtime's. */
static int runtime_like_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	CHECK(d);
	while ((e = readdir(d))) {
		char path[300], target[300];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t r = readlink(path, target, sizeof target - 1);
		if (r <= 0 || atoi(e->d_name) == dirfd(d))
			continue;
		target[r] = 0;
		n += strstr(target, "eventpoll") || strstr(target, "eventfd") ||
		     strncmp(target, "/proc/", 6) == 0;
	}
	closedir(d);
	return n;
}

static void *worker(void *arg)
{
	sigset_t mask;
	(void)arg;
	/* Inherited the mask main set before the start. */
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	printf("worker: SIGUSR2 blocked %d, __thread value %d (its own)\n",
	       sigismember(&mask, SIGUSR2), tls_value);
	CHECK(pthread_getspecific(key) == NULL);
	CHECK(pthread_mutex_lock(&held) == 0); /* main holds it */
	CHECK(pthread_mutex_unlock(&held) == 0);
	CHECK(sem_wait(&posted) == 0);	/* posted before the start */
	CHECK(write(pipefd[1], "x", 1) == 1);
	usleep(20000);
	CHECK(pthread_kill(main_thread, SIGUSR1) == 0);
	return NULL;
}

int main(void)
{
	char threads[64], cgt[64], blk[64];
	struct sigaction sa, old;
	sigset_t block;
	pthread_t t;
	struct timespec ts;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	CHECK(signal(SIGALRM, on_alrm) != SIG_ERR);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	CHECK(sigprocmask(SIG_BLOCK, &block, NULL) == 0);
	CHECK(pipe(pipefd) == 0);
	CHECK(pthread_key_create(&key, NULL) == 0);
	CHECK(pthread_setspecific(key, &key) == 0);
	tls_value = 42;
	CHECK(sem_init(&posted, 0, 0) == 0);
	CHECK(sem_post(&posted) == 0);
	CHECK(pthread_mutex_lock(&held) == 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	CHECK(pthread_cond_timedwait(&cv, &held, &ts) == ETIMEDOUT);

	status_field("Threads", threads, sizeof threads);
	status_field("SigCgt", cgt, sizeof cgt);
	status_field("SigBlk", blk, sizeof blk);
	printf("before the first thread: %s OS thread(s), caught %s, blocked "
	       "%s, runtime-like fds %d\n", threads, cgt, blk,
	       runtime_like_fds());

	CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
	usleep(20000);
	CHECK(pthread_mutex_unlock(&held) == 0);
	char c;
	CHECK(read(pipefd[0], &c, 1) == 1);
	printf("main: read '%c' from the pipe made before, key value kept %d, "
	       "__thread value %d\n", c, pthread_getspecific(key) == &key,
	       tls_value);
	/* The worker signals main while it sleeps: interrupted, SA_RESTART
	 * or not (nanosleep is never restarted). */
	struct timespec nap = { 5, 0 };
	int r = nanosleep(&nap, NULL);
	printf("main: nanosleep %d (%s) after SIGUSR1; handler runs %d, SIGINT "
	       "blocked inside it %d\n", r, r ? strerror(errno) : "-",
	       usr1_runs, usr1_sigint_blocked);
	CHECK(pthread_join(t, NULL) == 0);

	/* The disposition set before reads back as it was set. */
	CHECK(sigaction(SIGUSR1, NULL, &old) == 0);
	printf("SIGUSR1 reads back: same handler %d, SA_RESTART %d, mask has "
	       "SIGINT %d\n", old.sa_handler == on_usr1,
	       !!(old.sa_flags & SA_RESTART), sigismember(&old.sa_mask, SIGINT));

	struct itimerval it = { .it_value = { 0, 30000 } };
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	r = pause();
	printf("pause %d (%s), SIGALRM handler (signal()) runs %d\n", r,
	       strerror(errno), alrm_runs);
	sigset_t now;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	printf("main still blocks SIGUSR2 %d\n", sigismember(&now, SIGUSR2));
	return 0;
}
