// signal_siginfo: a handler sees the siginfo the sender made, wherever the
// signal went first. One thread lets the signals through and waits in
// sem_wait; every other thread blocks them, so the kernel has only that
// thread to give them to. Under goshim that thread is a parked goroutine,
// on no OS thread, so each signal lands on some other thread first and the
// runtime passes it on: what the handler reads must still be the
// sender's. Checked: sigqueue's value, code and sender (five queued
// real-time signals, each delivered once), kill's SI_USER, a
// POSIX timer's SI_TIMER and value, pthread_sigqueue's value to another
// thread (and a raw rt_tgsigqueueinfo's), and sigwaitinfo's siginfo for
// queued signals. The five are printed sorted by value: under goshim
// instances that several idle OS threads took off the kernel at once may
// reach the handler in another order (a limit scripts/README.md states).
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXREC 64

struct rec {
	int sig, code, value, from_self, overrun_ok;
};

static struct rec recs[MAXREC];
static atomic_int nrec;
static atomic_int stop;
static pthread_t waiter_thread;
static sem_t never;
static atomic_int waiter_tid;

static void die(const char *what, int err)
{
	fprintf(stderr, "signal_siginfo: %s: %s\n", what, strerror(err));
	exit(1);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int i = atomic_load(&nrec);
	if (i >= MAXREC)
		return;
	recs[i].sig = sig;
	recs[i].code = si->si_code;
	recs[i].value = si->si_code == SI_USER ? -1 : si->si_value.sival_int;
	recs[i].from_self = si->si_code == SI_TIMER ||
			    (si->si_pid == getpid() && si->si_uid == getuid());
	recs[i].overrun_ok = si->si_code != SI_TIMER || si->si_overrun >= 0;
	atomic_store(&nrec, i + 1);
}

static const char *code_name(int code)
{
	switch (code) {
	case SI_USER: return "SI_USER";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TIMER: return "SI_TIMER";
	case SI_TKILL: return "SI_TKILL";
	default: return "other";
	}
}

static void print_rec(const struct rec *r)
{
	printf("  SIGRTMIN+%d %s value=%d sender=%s%s\n", r->sig - SIGRTMIN,
	       code_name(r->code), r->value, r->from_self ? "this process" : "?",
	       r->overrun_ok ? "" : " bad overrun");
}

static void sigs_for(sigset_t *s)
{
	sigemptyset(s);
	for (int i = 0; i < 3; i++)
		sigaddset(s, SIGRTMIN + i);
	sigaddset(s, SIGUSR1);
}

static void *waiter(void *arg)
{
	(void)arg;
	sigset_t s;
	sigs_for(&s);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	atomic_store(&waiter_tid, gettid());
	while (!atomic_load(&stop))
		if (sem_wait(&never) != 0 && errno != EINTR)
			die("sem_wait", errno);
	return NULL;
}

/* Wait until n records are in (or 5 s went by), then print them. */
static void collect(const char *what, int n)
{
	for (int t = 0; t < 5000 && atomic_load(&nrec) < n; t++)
		usleep(1000);
	usleep(20000); /* a duplicate would show now */
	int got = atomic_load(&nrec);
	for (int i = 1; i < got; i++)
		for (int j = i; j > 0 && recs[j - 1].value > recs[j].value; j--) {
			struct rec t = recs[j];
			recs[j] = recs[j - 1];
			recs[j - 1] = t;
		}
	printf("%s: %d of %d\n", what, got, n);
	for (int i = 0; i < got; i++) {
		struct rec r = recs[i];
		if (r.sig == SIGUSR1)
			printf("  SIGUSR1 %s sender=%s\n", code_name(r.code),
			       r.from_self ? "this process" : "?");
		else
			print_rec(&r);
	}
	atomic_store(&nrec, 0);
}

static void *sigwaiter(void *arg)
{
	sigset_t s;
	siginfo_t si;
	int *values = arg;

	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 3);
	for (int i = 0; i < 3; i++) {
		int sig = sigwaitinfo(&s, &si);
		if (sig != SIGRTMIN + 3)
			die("sigwaitinfo", errno);
		values[i] = si.si_code == SI_QUEUE ? si.si_value.sival_int : -1;
	}
	return NULL;
}

int main(void)
{
	sigset_t s;
	struct sigaction sa;
	union sigval v;
	int err;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	sigs_for(&s);
	for (int i = 0; i < 3; i++)
		sigaction(SIGRTMIN + i, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaddset(&s, SIGRTMIN + 3);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* inherited by every thread */
	sem_init(&never, 0, 0);
	if ((err = pthread_create(&waiter_thread, NULL, waiter, NULL)) != 0)
		die("pthread_create", err);
	usleep(50000); /* the waiter parks */

	for (int i = 0; i < 5; i++) {
		v.sival_int = 100 + i;
		if (sigqueue(getpid(), SIGRTMIN, v) != 0)
			die("sigqueue", errno);
	}
	collect("sigqueue x5 to the process", 5);

	kill(getpid(), SIGUSR1);
	collect("kill to the process", 1);

	timer_t tm;
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGRTMIN + 1;
	ev.sigev_value.sival_int = 42;
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) != 0)
		die("timer_create", errno);
	struct itimerspec its = { .it_value = { 0, 10000000 } };
	timer_settime(tm, 0, &its, NULL);
	collect("a POSIX timer", 1);
	timer_delete(tm);

	v.sival_int = 7;
	if ((err = pthread_sigqueue(waiter_thread, SIGRTMIN + 2, v)) != 0)
		die("pthread_sigqueue", err);
	collect("pthread_sigqueue to the waiter", 1);

	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = SIGRTMIN + 2;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = 9;
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), atomic_load(&waiter_tid),
		    SIGRTMIN + 2, &si) != 0)
		die("rt_tgsigqueueinfo", errno);
	si.si_code = SI_USER;
	printf("rt_tgsigqueueinfo claiming SI_USER: %s\n",
	       syscall(SYS_rt_tgsigqueueinfo, getpid(),
		       atomic_load(&waiter_tid), SIGRTMIN + 2, &si) == 0
		       ? "sent"
		       : strerror(errno));
	collect("rt_tgsigqueueinfo to the waiter", 1);

	pthread_t sw;
	int values[3] = { -2, -2, -2 };
	if ((err = pthread_create(&sw, NULL, sigwaiter, values)) != 0)
		die("pthread_create", err);
	usleep(20000);
	for (int i = 0; i < 3; i++) {
		v.sival_int = 200 + i;
		if (sigqueue(getpid(), SIGRTMIN + 3, v) != 0)
			die("sigqueue", errno);
	}
	pthread_join(sw, NULL);
	printf("sigwaitinfo x3: values %d %d %d\n", values[0], values[1],
	       values[2]);

	atomic_store(&stop, 1);
	pthread_kill(waiter_thread, SIGUSR1);
	pthread_join(waiter_thread, NULL);
	collect("the last wake", 1);
	return 0;
}
