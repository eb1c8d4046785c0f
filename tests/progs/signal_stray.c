// signal_stray: a call that waits for a signal, or for time, ends with
// EINTR only after a handler ran on its own thread. Natively nothing else
// interrupts it. Under goshim a signal sent to one goroutine can reach the
// OS thread after that goroutine has left it: a pthread_kill to a thread
// that is about to exit, a pthread_cancel of a thread in a cancellable
// call. The next goroutine on that thread may be waiting in the kernel,
// and goshim's handler, which hands the signal back, still ends its call.
// Two noise threads make many such signals: they cancel short-lived
// threads blocked in sigwait and send SIGUSR1 (a handler without
// SA_RESTART) to short-lived threads as they exit. Two waiters meanwhile
// go round sigtimedwait with a 1 ms timeout (EAGAIN expected), sigsuspend
// and pause (each woken by a SIGUSR2 from a waker thread), and waitpid on
// a child that exits after 2 ms. They count each EINTR seen with no
// handler run on their own thread. goshim's run is under GOSHIM_DEBUG=chaos,
// whose random yields and delays widen the windows: before the fix it
// found such an EINTR in 8 runs of 30, and its check of each M's mask
// record caught a handler that had moved its goroutine to another M under
// a runtime step in 5 of 40.
// goshim-test: timeout=60
// goshim-test: shim-env=GOSHIM_DEBUG=chaos=1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 2
#define NOISE 2
#define ROUNDS 120

static __thread unsigned handled_here;
static atomic_int stop, stray, woken;
static atomic_int noise_events;

static void on_usr(int sig)
{
	(void)sig;
	handled_here++;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "signal_stray: %s: %s\n", what, strerror(err));
	exit(1);
}

/* ---- noise: signals sent to threads that are leaving their OS thread ---- */

/* In the kernel until cancelled: a cancel request interrupts the call
 * with a signal. */
static void *blocked_victim(void *arg)
{
	sigset_t set;
	int sig;
	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMAX);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
	return NULL;
}

static void *short_lived(void *arg)
{
	(void)arg;
	for (volatile int i = 0; i < 2000; i++)
		;
	return NULL;
}

static void *noise(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_t t;
		int e = pthread_create(&t, NULL, blocked_victim, NULL);
		if (e)
			die("pthread_create", e);
		usleep(200);
		pthread_cancel(t);
		pthread_join(t, NULL);
		if ((e = pthread_create(&t, NULL, short_lived, NULL)))
			die("pthread_create", e);
		pthread_kill(t, SIGUSR1);
		pthread_join(t, NULL);
		atomic_fetch_add(&noise_events, 1);
	}
	return NULL;
}

/* ---- waiters -------------------------------------------------------------- */

static pthread_t waiter_thread[WAITERS];
/* A round's thread that asks to be woken, under wake_lock: it cannot end
 * while it is named here. */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t round_thread[WAITERS];
static int want_wake[WAITERS];

static void wake_me(int me, int on)
{
	pthread_mutex_lock(&wake_lock);
	round_thread[me] = pthread_self();
	want_wake[me] = on;
	pthread_mutex_unlock(&wake_lock);
}

/* Sends SIGUSR2 to a waiter that asked, until it says it woke: pause has
 * no mask to hold a signal that came early. */
static void *waker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&wake_lock);
		for (int i = 0; i < WAITERS; i++)
			if (want_wake[i])
				pthread_kill(round_thread[i], SIGUSR2);
		pthread_mutex_unlock(&wake_lock);
		usleep(1000);
	}
	return NULL;
}

static void check(const char *what, int r, int err, unsigned before)
{
	if (r < 0 && err == EINTR && handled_here == before) {
		atomic_fetch_add(&stray, 1);
		fprintf(stderr, "signal_stray: %s: EINTR, no handler ran\n",
			what);
	}
}

struct round {
	int waiter, kind;
};

/* One call, on a thread of its own: a new thread is the one most likely
 * to start on the OS thread a signalled thread has just left. */
static void *one_round(void *arg)
{
	struct round *rd = arg;
	int me = rd->waiter;
	sigset_t usr2, open_mask;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	pthread_sigmask(SIG_SETMASK, NULL, &open_mask);
	sigdelset(&open_mask, SIGUSR2);

	unsigned before = handled_here;
	int r, err;
	switch (rd->kind) {
	case 0: {
		sigset_t none;
		sigemptyset(&none);
		sigaddset(&none, SIGRTMAX);
		struct timespec ts = {0, 1000000};
		r = sigtimedwait(&none, NULL, &ts);
		err = errno;
		if (r >= 0 || (err != EAGAIN && err != EINTR))
			die("sigtimedwait", r >= 0 ? 0 : err);
		check("sigtimedwait", r, err, before);
		break;
	}
	case 1:
		wake_me(me, 1);
		r = sigsuspend(&open_mask);
		err = errno;
		wake_me(me, 0);
		check("sigsuspend", r, err, before);
		/* Returned only after a handler: one ran, or it was a
		 * stray. */
		if (handled_here != before)
			atomic_fetch_add(&woken, 1);
		break;
	case 2:
		pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
		wake_me(me, 1);
		r = pause();
		err = errno;
		wake_me(me, 0);
		pthread_sigmask(SIG_BLOCK, &usr2, NULL);
		check("pause", r, err, before);
		if (handled_here != before)
			atomic_fetch_add(&woken, 1);
		break;
	default: {
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0) {
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
			_exit(0);
		}
		int st;
		do {
			before = handled_here;
			r = waitpid(pid, &st, 0);
			err = errno;
			check("waitpid", r, err, before);
		} while (r < 0 && err == EINTR);
		if (r != pid)
			die("waitpid", err);
		break;
	}
	}
	return NULL;
}

static void *waiter(void *arg)
{
	for (int round = 0; round < ROUNDS; round++) {
		struct round rd = {(int)(long)arg, round % 4};
		pthread_t t;
		int e = pthread_create(&t, NULL, one_round, &rd);
		if (e)
			die("pthread_create", e);
		pthread_join(t, NULL);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: an interrupted call says EINTR */
	if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGUSR2, &sa, NULL))
		die("sigaction", errno);

	pthread_t n[NOISE], wk;
	int e;
	for (int i = 0; i < NOISE; i++)
		if ((e = pthread_create(&n[i], NULL, noise, NULL)))
			die("pthread_create", e);
	for (int i = 0; i < WAITERS; i++)
		if ((e = pthread_create(&waiter_thread[i], NULL, waiter,
					(void *)(long)i)))
			die("pthread_create", e);
	if ((e = pthread_create(&wk, NULL, waker, NULL)))
		die("pthread_create", e);
	for (int i = 0; i < WAITERS; i++)
		pthread_join(waiter_thread[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(wk, NULL);
	for (int i = 0; i < NOISE; i++)
		pthread_join(n[i], NULL);

	printf("waiters: %d rounds each, %d woken by their handler\n", ROUNDS,
	       atomic_load(&woken));
	printf("noise: %s\n", atomic_load(&noise_events) > 0 ? "ran" : "none");
	printf("EINTR with no handler run: %d\n", atomic_load(&stray));
	return 0;
}
