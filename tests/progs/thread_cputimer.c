// thread_cputimer: POSIX timers on thread CPU clocks (timer_create on
// CLOCK_THREAD_CPUTIME_ID and on a pthread_getcpuclockid clock) expire
// when that thread has used the time, not its OS thread under goshim: with
// one P (GOMAXPROCS=1) a second busy thread shares the M. Everything
// compared is CPU time. The kernel looks at timers at each tick, so an
// expiry comes up to a few ms late: the bounds leave room for that.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=240
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static struct itimerspec after(long long ns, long long every)
{
	return (struct itimerspec){ { every / 1000000000, every % 1000000000 },
				    { ns / 1000000000, ns % 1000000000 } };
}

static atomic_int fired, overruns;
static _Atomic long long fired_at;
static atomic_int stop;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	/* Only a timer's siginfo has an overrun count. */
	if (si->si_code == SI_TIMER)
		atomic_fetch_add(&overruns, si->si_overrun);
	if (atomic_fetch_add(&fired, 1) == 0)
		atomic_store(&fired_at, self_ns());
}

/* Another thread busy on the same CPU, blocking the timer's signal. */
static void *rival(void *unused)
{
	sigset_t set;
	(void)unused;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	while (!atomic_load(&stop))
		;
	return NULL;
}

static struct sigevent signal_event(void)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_value.sival_int = 42;
	return ev;
}

/* Its own clock: a one-shot timer, a SIGEV_NONE one, an interval one. */
static void *timed(void *unused)
{
	timer_t t, quiet;
	struct sigevent ev = signal_event();
	struct itimerspec cur;
	(void)unused;

	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t) != 0) {
		perror("timer_create");
		exit(1);
	}
	long long start = self_ns();
	struct itimerspec when = after(start + 50 * MS, 0);
	timer_settime(t, TIMER_ABSTIME, &when, NULL);
	timer_gettime(t, &cur);
	long long left = cur.it_value.tv_sec * 1000000000LL + cur.it_value.tv_nsec;
	printf("armed for 50 ms of its own time, timer_gettime says "
	       "(0, 50 ms]: %s\n",
	       yes(left > 0 && left <= 50 * MS));
	while (!atomic_load(&fired) && self_ns() - start < 2000 * MS)
		;
	long long at = atomic_load(&fired_at) - start;
	printf("fired after >= 50 ms and < 150 ms of its own CPU time: %s\n",
	       yes(atomic_load(&fired) == 1 && at >= 50 * MS && at < 150 * MS));
	if (!(at >= 50 * MS && at < 150 * MS))
		fprintf(stderr, "fired %d times, first at %lld ns\n",
			atomic_load(&fired), at);
	timer_gettime(t, &cur);
	printf("one-shot, after: disarmed: %s\n",
	       yes(cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0));

	ev.sigev_notify = SIGEV_NONE;
	timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &quiet);
	when = after(100 * MS, 0);
	timer_settime(quiet, 0, &when, NULL);
	long long q0 = self_ns();
	while (self_ns() - q0 < 20 * MS)
		;
	timer_gettime(quiet, &cur);
	left = cur.it_value.tv_sec * 1000000000LL + cur.it_value.tv_nsec;
	printf("SIGEV_NONE timer, 20 ms later, has <= 80 ms left: %s\n",
	       yes(left > 0 && left <= 80 * MS));
	timer_delete(quiet);
	errno = 0;
	printf("deleted: timer_gettime EINVAL: %s\n",
	       yes(timer_gettime(quiet, &cur) == -1 && errno == EINVAL));

	/* Every 10 ms for 100 ms: about 10 expiries (signals + overruns). */
	atomic_store(&fired, 0);
	atomic_store(&overruns, 0);
	long long i0 = self_ns();
	when = after(10 * MS, 10 * MS);
	timer_settime(t, 0, &when, NULL);
	while (self_ns() - i0 < 100 * MS)
		;
	when = after(0, 0);
	timer_settime(t, 0, &when, NULL);
	int n = atomic_load(&fired) + atomic_load(&overruns);
	printf("interval 10 ms over 100 ms: 7..10 expiries: %s\n",
	       yes(n >= 7 && n <= 10));
	if (!(n >= 7 && n <= 10))
		fprintf(stderr, "%d expiries\n", n);
	timer_delete(t);
	return NULL;
}

/* ---- a timer on another thread's clock, notifying by a new thread ---- */
static clockid_t watched_clock;
static _Atomic long long notified_at = -1;
static atomic_int notified;

static void on_notify(union sigval v)
{
	atomic_store(&notified_at, clock_ns(watched_clock));
	atomic_store(&notified, v.sival_int);
}

static void *spinner(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop))
		;
	return NULL;
}

int main(void)
{
	pthread_t r, t;
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_timer;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	pthread_create(&r, NULL, rival, NULL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	pthread_create(&t, NULL, timed, NULL);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_join(t, NULL);
	atomic_store(&stop, 1);
	pthread_join(r, NULL);
	atomic_store(&stop, 0);

	pthread_create(&t, NULL, spinner, NULL);
	pthread_getcpuclockid(t, &watched_clock);
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = on_notify;
	ev.sigev_value.sival_int = 7;
	timer_t w;
	if (timer_create(watched_clock, &ev, &w) != 0) {
		perror("timer_create on another thread's clock");
		return 1;
	}
	long long base = clock_ns(watched_clock);
	struct itimerspec when = after(base + 30 * MS, 0);
	timer_settime(w, TIMER_ABSTIME, &when, NULL);
	for (int i = 0; i < 20000 && !atomic_load(&notified); i++) {
		struct timespec nap = { 0, MS };
		nanosleep(&nap, NULL);
	}
	long long at = atomic_load(&notified_at);
	printf("SIGEV_THREAD on another thread's clock: its function ran, "
	       "once that thread used 30 ms: %s\n",
	       yes(atomic_load(&notified) == 7 && at >= base + 30 * MS));
	timer_delete(w);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);

	/* An ended thread's clock takes no timer (once the kernel has
	 * dropped its id, a moment after the join). */
	struct timespec ts;
	for (int i = 0; i < 2000 && clock_gettime(watched_clock, &ts) == 0;
	     i++) {
		struct timespec nap = { 0, MS };
		nanosleep(&nap, NULL);
	}
	errno = 0;
	printf("timer_create on an ended thread's clock: EINVAL: %s\n",
	       yes(timer_create(watched_clock, NULL, &w) == -1 &&
		   errno == EINVAL));
	return 0;
}
