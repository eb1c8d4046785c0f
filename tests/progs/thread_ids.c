// thread_ids: each thread has one thread id for its life, unique among the
// live threads, the main thread's the pid: gettid(), syscall(SYS_gettid)
// and set_tid_address agree and do not change across yields and sleeps
// (under goshim the threads share and change OS threads). tgkill and tkill
// (libc's and through syscall()) reach the thread the id names; the
// scheduling calls take it (sched_getaffinity, getpriority); kill and
// sigqueue with it signal the process, as Linux does; an id whose
// thread has been joined is ESRCH; set_tid_address's word is cleared and
// woken when its thread exits.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N 64
#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "thread_ids: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

static pid_t tids[N];
static atomic_int ready, hits[N], wrong, stable = 1;
static atomic_int release;
static __thread int my_index = -1;
static int cleared_word;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	if (my_index >= 0 && gettid() == tids[my_index])
		hits[my_index]++;
	else
		wrong++;
}

static atomic_int usr2;

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	usr2++;
}

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	my_index = i;
	pid_t t = gettid();
	tids[i] = t;
	if (syscall(SYS_gettid) != t || t == getpid())
		stable = 0;
	atomic_fetch_add(&ready, 1);
	for (int k = 0; k < 20; k++) {
		if (k % 2)
			sched_yield();
		else
			usleep(200);
		if (gettid() != t || syscall(SYS_gettid) != t)
			stable = 0;
	}
	while (!atomic_load(&release))
		usleep(500);
	return NULL;
}

static atomic_int clearer_same = -1;

/* Detached: its word is now ours, not glibc's, which join would wait on. */
static void *clearer(void *arg)
{
	(void)arg;
	pid_t r = (pid_t)syscall(SYS_set_tid_address, &cleared_word);
	atomic_store(&clearer_same, r == gettid());
	return NULL;
}

int main(void)
{
	pthread_t th[N];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);

	CHECK(gettid() == getpid() && syscall(SYS_gettid) == getpid());
	for (long i = 0; i < N; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	while (atomic_load(&ready) < N)
		usleep(1000);
	int dup = 0;
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			dup += tids[i] == tids[j];
	printf("%d threads: ids unique %d, none the pid %d, stable across "
	       "yields and sleeps %d\n", N, dup == 0, 1, (int)stable);

	for (int i = 0; i < N; i++) {
		if (i % 3 == 0)
			CHECK(tgkill(getpid(), tids[i], SIGUSR1) == 0);
		else if (i % 3 == 1)
			CHECK(syscall(SYS_tgkill, getpid(), tids[i], SIGUSR1) == 0);
		else
			CHECK(syscall(SYS_tkill, tids[i], SIGUSR1) == 0);
	}
	CHECK(tgkill(getpid(), tids[0], 0) == 0);
	CHECK(tgkill(getpid(), tids[0], 65) == -1 && errno == EINVAL);
	int ok_sched = 0;
	for (int i = 0; i < N; i++) {
		cpu_set_t set;
		errno = 0;
		ok_sched += sched_getaffinity(tids[i], sizeof set, &set) == 0 &&
			    CPU_COUNT(&set) > 0 &&
			    getpriority(PRIO_PROCESS, (id_t)tids[i]) != -1;
	}
	for (int tries = 0; tries < 2000; tries++) {
		int all = 1;
		for (int i = 0; i < N; i++)
			all &= hits[i] == 1;
		if (all)
			break;
		usleep(1000);
	}
	int each = 1;
	for (int i = 0; i < N; i++)
		each &= hits[i] == 1;
	printf("tgkill/tkill by id: each thread got its own signal once %d, "
	       "wrong thread %d\n", each, (int)wrong);
	printf("sched_getaffinity and getpriority by id: %d of %d\n", ok_sched, N);
	/* One at a time: a signal pending for the process counts once. */
	for (int k = 1; k <= 3; k++) {
		if (k == 1)
			CHECK(kill(tids[k], SIGUSR2) == 0);
		else if (k == 2)
			CHECK(sigqueue(tids[k], SIGUSR2,
				       (union sigval){ .sival_int = 7 }) == 0);
		else
			CHECK(syscall(SYS_kill, tids[k], SIGUSR2) == 0);
		for (int tries = 0; tries < 2000 && atomic_load(&usr2) < k;
		     tries++)
			usleep(1000);
	}
	printf("kill, sigqueue and raw kill by id signal the process: %d\n",
	       (int)usr2);

	atomic_store(&release, 1);
	for (int i = 0; i < N; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	errno = 0;
	int r = tgkill(getpid(), tids[5], SIGUSR1);
	printf("tgkill of a joined thread's id: %d %s\n", r, strerror(errno));

	pthread_t c;
	pthread_attr_t attr;
	cleared_word = 12345;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	CHECK(pthread_create(&c, &attr, clearer, NULL) == 0);
	struct timespec ten = { 10, 0 };
	while (__atomic_load_n(&cleared_word, __ATOMIC_ACQUIRE) != 0)
		if (syscall(SYS_futex, &cleared_word, FUTEX_WAIT, 12345, &ten,
			    NULL, 0) == -1 && errno == ETIMEDOUT)
			break;
	printf("set_tid_address returned the thread's id %d; its word after "
	       "exit %d\n", (int)clearer_same, cleared_word);
	return 0;
}
