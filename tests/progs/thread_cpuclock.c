// thread_cpuclock: each thread's CPU clock (CLOCK_THREAD_CPUTIME_ID,
// pthread_getcpuclockid, getrusage(RUSAGE_THREAD)) counts that thread's
// own CPU time. Under goshim a thread is a goroutine on an M that runs
// many: with one P (GOMAXPROCS=1) two busy threads share one M, and a
// clock that read the M's time would count both. Every figure compared is
// CPU time, never wall time, so a loaded machine changes nothing.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=240
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

static const char *yes(int ok)
{
	return ok ? "yes" : "no";
}

static long long clock_ns(clockid_t clk)
{
	struct timespec ts;
	if (clock_gettime(clk, &ts) != 0) {
		perror("clock_gettime");
		exit(1);
	}
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long self_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Run on the CPU until the caller's own clock has advanced by ns. */
static void burn(long long ns)
{
	long long end = self_ns() + ns;
	while (self_ns() < end)
		;
}

static long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

/* ---- a new thread starts near 0, whatever its creator used ---- */
static long long fresh_clock, fresh_rusage, fresh_raw;

static void *fresh(void *unused)
{
	struct rusage ru;
	struct timespec ts;
	(void)unused;
	fresh_clock = self_ns();
	syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
	fresh_raw = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	getrusage(RUSAGE_THREAD, &ru);
	fresh_rusage = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
	return NULL;
}

/* ---- two busy threads, each until its own clock shows 150 ms ---- */
static long long busy_final[2];

static void *busy(void *arg)
{
	int i = (int)(long)arg;
	burn(150 * MS);
	busy_final[i] = self_ns();
	return NULL;
}

/* ---- a thread that others read while it runs, then while it sleeps ---- */
static _Atomic long long published;
static atomic_int phase; /* 1: it ran 100 ms; 2: go on; 3: 200 ms, asleep */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int wake;
static long long sleeper_own;

static void *watched(void *unused)
{
	(void)unused;
	long long start = self_ns();
	while (self_ns() - start < 100 * MS)
		atomic_store(&published, self_ns());
	atomic_store(&phase, 1);
	while (self_ns() - start < 200 * MS)
		atomic_store(&published, self_ns());
	sleeper_own = self_ns();
	pthread_mutex_lock(&mu);
	atomic_store(&phase, 3);
	while (!wake)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* ---- a thread clock to sleep on, and blocking waits to count ---- */
static atomic_int spin_stop;
static void *spinner(void *unused)
{
	(void)unused;
	while (!atomic_load(&spin_stop))
		;
	return NULL;
}

/* Ten rounds in which the waiter blocks in pthread_cond_wait: main
 * gives the turn only once the waiter is in its wait (it said so under
 * the mutex), and a moment later, so that it has gone to sleep. */
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int ready, turn;
static long waits_nvcsw;
static void *waiter(void *unused)
{
	struct rusage ru;
	(void)unused;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 10; i++) {
		ready = 1;
		pthread_cond_signal(&ready_cv);
		while (!turn)
			pthread_cond_wait(&cv, &mu);
		turn = 0;
	}
	pthread_mutex_unlock(&mu);
	getrusage(RUSAGE_THREAD, &ru);
	waits_nvcsw = ru.ru_nvcsw;
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	clockid_t clk;
	struct timespec ts;

	/* The creator has used 100 ms; the new thread has used ~0. */
	burn(100 * MS);
	pthread_create(&t[0], NULL, fresh, NULL);
	pthread_join(t[0], NULL);
	printf("main's clock >= 100 ms: %s\n", yes(self_ns() >= 100 * MS));
	printf("new thread's clock < 5 ms: %s\n", yes(fresh_clock < 5 * MS));
	printf("new thread's RUSAGE_THREAD time < 5 ms: %s\n",
	       yes(fresh_rusage < 5 * MS));
	printf("...and through syscall(SYS_clock_gettime): %s\n",
	       yes(fresh_raw < 5 * MS));

	/* Two threads each burn 150 ms of their own clocks; the process's
	 * CPU time meanwhile is about what they both used. */
	long long p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, busy, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	long long proc = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p0;
	long long sum = busy_final[0] + busy_final[1];
	printf("busy threads' clocks >= 150 ms and < 200 ms: %s\n",
	       yes(busy_final[0] >= 150 * MS && busy_final[1] >= 150 * MS &&
		   busy_final[0] < 200 * MS && busy_final[1] < 200 * MS));
	/* Not more than the process used (a clock that counted its OS
	 * thread would count the other's time too), and not far less (goshim
	 * adds its own work to the process's time, more the longer the wall
	 * time, on a loaded machine). */
	printf("their sum at most the process's CPU time, at least half: %s\n",
	       yes(sum <= proc + MS && sum * 2 >= proc));
	if (!(sum <= proc + MS && sum * 2 >= proc))
		fprintf(stderr, "sum %lld ns, process %lld ns\n", sum, proc);

	/* Another thread's clock, read through its clockid while it runs
	 * and after it went to sleep. */
	pthread_create(&t[0], NULL, watched, NULL);
	if (pthread_getcpuclockid(t[0], &clk) != 0) {
		perror("pthread_getcpuclockid");
		return 1;
	}
	int behind = 0;
	long long last = 0;
	while (atomic_load(&phase) < 1)
		sched_yield();
	while (atomic_load(&phase) < 3) {
		long long mine = atomic_load(&published);
		long long seen = clock_ns(clk);
		if (seen < mine || seen < last)
			behind++;
		last = seen;
		sched_yield();
	}
	printf("a running thread's clock, read by another, never behind what "
	       "it read itself: %s\n",
	       yes(behind == 0));
	long long a = clock_ns(clk);
	burn(50 * MS);
	long long b = clock_ns(clk);
	printf("a sleeping thread's clock within 2 ms of its own last read: "
	       "%s\n",
	       yes(a >= sleeper_own && a - sleeper_own < 2 * MS));
	printf("...and still while another burns 50 ms: %s\n",
	       yes(b - a < MS));
	pthread_mutex_lock(&mu);
	wake = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(t[0], NULL);

	/* A clockid outlives its thread: EINVAL, as the kernel gives. The
	 * kernel lets a join return as the thread exits, a moment before it
	 * drops its id: a sleep on the clock of a thread still exiting never
	 * ends, so nothing sleeps on it before its clock_gettime fails. */
	int gone = 0;
	for (int i = 0; i < 2000 && !gone; i++) {
		struct timespec nap = { 0, MS };
		errno = 0;
		gone = clock_gettime(clk, &ts) == -1 && errno == EINVAL;
		if (!gone)
			nanosleep(&nap, NULL);
	}
	printf("ended thread's clock_gettime: EINVAL: %s\n", yes(gone));
	if (!gone)
		return 1;
	errno = 0;
	printf("ended thread's clock_getres: EINVAL: %s\n",
	       yes(clock_getres(clk, &ts) == -1 && errno == EINVAL));
	ts = (struct timespec){ 0, MS };
	printf("ended thread's clock_nanosleep: EINVAL: %s\n",
	       yes(clock_nanosleep(clk, 0, &ts, NULL) == EINVAL));

	/* Sleeping on another thread's clock; not on one's own. */
	pthread_create(&t[0], NULL, spinner, NULL);
	pthread_getcpuclockid(t[0], &clk);
	long long s0 = clock_ns(clk);
	ts = (struct timespec){ 0, 50 * MS };
	int r = clock_nanosleep(clk, 0, &ts, NULL);
	long long s1 = clock_ns(clk);
	printf("clock_nanosleep 50 ms on a busy thread's clock: %d, it ran "
	       ">= 50 ms meanwhile: %s\n",
	       r, yes(s1 - s0 >= 50 * MS));
	ts = (struct timespec){ (s1 + 30 * MS) / 1000000000,
				(s1 + 30 * MS) % 1000000000 };
	r = clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL);
	printf("absolute clock_nanosleep on it: %d, reached: %s\n", r,
	       yes(clock_ns(clk) >= s1 + 30 * MS));
	atomic_store(&spin_stop, 1);
	pthread_join(t[0], NULL);
	pthread_getcpuclockid(pthread_self(), &clk);
	ts = (struct timespec){ 0, MS };
	printf("clock_nanosleep on its own clockid: %s\n",
	       strerror(clock_nanosleep(clk, 0, &ts, NULL)));
	printf("clock_nanosleep on CLOCK_THREAD_CPUTIME_ID: %s\n",
	       strerror(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL)));
	printf("own clockid reads its own clock: %s\n",
	       yes(llabs(clock_ns(clk) - self_ns()) < MS));
	printf("clock_getres of a thread clock: %s\n",
	       yes(clock_getres(clk, &ts) == 0 && ts.tv_sec == 0 &&
		   ts.tv_nsec == 1));

	/* getrusage: a busy thread's user+system time is its clock's; each
	 * blocking wait is a voluntary context switch. */
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	long long ru_ns = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
	long long own = self_ns();
	printf("main's RUSAGE_THREAD time within 5 ms below its clock: %s\n",
	       yes(ru_ns <= own && own - ru_ns < 5 * MS));
	printf("RUSAGE_THREAD peak RSS is the process's: %s\n", ({
		       struct rusage self;
		       getrusage(RUSAGE_SELF, &self);
		       yes(ru.ru_maxrss > 0 && ru.ru_maxrss <= self.ru_maxrss);
	       }));
	pthread_create(&t[0], NULL, waiter, NULL);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 10; i++) {
		struct timespec nap = { 0, 2 * MS };
		while (!ready)
			pthread_cond_wait(&ready_cv, &mu);
		ready = 0;
		nanosleep(&nap, NULL);
		turn = 1;
		pthread_cond_signal(&cv);
	}
	pthread_mutex_unlock(&mu);
	pthread_join(t[0], NULL);
	printf("10 blocking waits, ru_nvcsw >= 8: %s\n",
	       yes(waits_nvcsw >= 8));

	/* The child of fork is a new thread: its clock starts over. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(self_ns() < 5 * MS ? 0 : 1);
	int st;
	waitpid(pid, &st, 0);
	printf("fork child's thread clock < 5 ms: %s\n",
	       yes(WIFEXITED(st) && WEXITSTATUS(st) == 0));
	return 0;
}
