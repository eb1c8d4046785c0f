// signal_raise_park: a signal a thread sends itself (raise, pthread_kill
// of pthread_self, pthread_sigqueue) while it blocks it stays pending for
// that thread, however long the thread sleeps in between: sigpending shows
// it, the unblock delivers it there and once, sigwait takes it, and a
// ppoll, pselect or epoll_pwait whose mask lets it through fails at once
// with EINTR after running the handler. Three threads spin meanwhile, so
// that under goshim the sleeper comes back on another OS thread. Last, a
// signal another thread sent while the target blocked it ends the
// target's ppoll the same way.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#define ROUNDS 100
#define SPINNERS 3

static atomic_int stop;
static __thread int hits;   /* handlers run on this thread */
static atomic_int hits_all; /* on any thread */

static void die(const char *what)
{
	fprintf(stderr, "signal_raise_park: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void on_signal(int sig)
{
	(void)sig;
	hits++;
	atomic_fetch_add(&hits_all, 1);
}

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		;
	return NULL;
}

static void block(int sig, int how)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	if (pthread_sigmask(how, &s, NULL) != 0)
		die("pthread_sigmask");
}

static int is_pending(int sig)
{
	sigset_t s;
	if (sigpending(&s) != 0)
		die("sigpending");
	return sigismember(&s, sig);
}

enum send { RAISE, KILL_SELF, QUEUE_SELF, NSEND };
static const char *const send_name[NSEND] = { "raise", "pthread_kill(self)",
					      "pthread_sigqueue(self)" };

static void send_self(enum send how, int sig)
{
	int err = 0;
	switch (how) {
	case RAISE:
		err = raise(sig) != 0 ? errno : 0;
		break;
	case KILL_SELF:
		err = pthread_kill(pthread_self(), sig);
		break;
	case QUEUE_SELF:
		err = pthread_sigqueue(pthread_self(), sig,
				       (union sigval){ .sival_int = 7 });
		break;
	default:
		break;
	}
	if (err) {
		errno = err;
		die(send_name[how]);
	}
}

/* Blocked, sent, slept on: still pending, then delivered here at the
 * unblock, once. */
static void unblock_rounds(enum send how)
{
	int not_pending = 0, not_delivered = 0, twice = 0;

	for (int i = 0; i < ROUNDS; i++) {
		block(SIGUSR1, SIG_BLOCK);
		hits = 0;
		send_self(how, SIGUSR1);
		usleep(1000);
		not_pending += !is_pending(SIGUSR1);
		block(SIGUSR1, SIG_UNBLOCK);
		not_delivered += hits == 0;
		twice += hits > 1;
	}
	printf("%s, blocked, then 1 ms asleep: not pending %d, not delivered "
	       "at the unblock %d, delivered twice %d (of %d)\n",
	       send_name[how], not_pending, not_delivered, twice, ROUNDS);
}

static void sigwait_rounds(void)
{
	int wrong = 0;
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	for (int i = 0; i < ROUNDS; i++) {
		int got = 0;
		block(SIGUSR2, SIG_BLOCK);
		send_self(i % NSEND, SIGUSR2);
		usleep(1000);
		if (sigwait(&s, &got) != 0)
			die("sigwait");
		wrong += got != SIGUSR2 || is_pending(SIGUSR2);
		block(SIGUSR2, SIG_UNBLOCK);
	}
	printf("sigwait after 1 ms asleep: wrong %d (of %d)\n", wrong, ROUNDS);
}

enum waitcall { PPOLL, PSELECT, EPOLL_PWAIT, NWAIT };
static const char *const wait_name[NWAIT] = { "ppoll", "pselect",
					      "epoll_pwait" };

/* A wait of 5 s on a pipe that stays empty, with a mask that lets SIGUSR1
 * through: its return value and errno. */
static int masked_wait(enum waitcall how, int rd, int ep, int *err)
{
	struct timespec ts = { 5, 0 };
	sigset_t none;
	int r = -2;

	sigemptyset(&none);
	if (how == PPOLL) {
		struct pollfd p = { .fd = rd, .events = POLLIN };
		r = ppoll(&p, 1, &ts, &none);
	} else if (how == PSELECT) {
		fd_set set;
		FD_ZERO(&set);
		FD_SET(rd, &set);
		r = pselect(rd + 1, &set, NULL, NULL, &ts, &none);
	} else {
		struct epoll_event ev;
		r = epoll_pwait(ep, &ev, 1, 5000, &none);
	}
	*err = errno;
	return r;
}

static void masked_wait_rounds(int rd, int ep)
{
	for (int how = 0; how < NWAIT; how++) {
		int wrong = 0, missed = 0;
		for (int i = 0; i < ROUNDS / 4; i++) {
			int err;
			block(SIGUSR1, SIG_BLOCK);
			hits = 0;
			send_self(i % NSEND, SIGUSR1);
			usleep(1000);
			int r = masked_wait(how, rd, ep, &err);
			wrong += r != -1 || err != EINTR;
			missed += hits != 1;
			block(SIGUSR1, SIG_UNBLOCK);
		}
		printf("%s letting the kept signal through: not EINTR %d, "
		       "handler not run once here %d (of %d)\n",
		       wait_name[how], wrong, missed, ROUNDS / 4);
	}
}

/* Another thread sends SIGUSR1 while the target blocks it; the target
 * then waits in ppoll with a mask that lets it through. */
static pthread_t target;
static atomic_int sent;

static void *sender(void *arg)
{
	(void)arg;
	int err = pthread_kill(target, SIGUSR1);
	if (err) {
		errno = err;
		die("pthread_kill");
	}
	atomic_store(&sent, 1);
	return NULL;
}

static void other_sender_rounds(int rd, int ep)
{
	int wrong = 0, missed = 0;

	target = pthread_self();
	for (int i = 0; i < ROUNDS / 4; i++) {
		pthread_t t;
		int err;
		block(SIGUSR1, SIG_BLOCK);
		hits = 0;
		atomic_store(&sent, 0);
		if (pthread_create(&t, NULL, sender, NULL) != 0)
			die("pthread_create");
		pthread_join(t, NULL);
		int r = masked_wait(i % NWAIT, rd, ep, &err);
		wrong += r != -1 || err != EINTR;
		missed += hits != 1;
		block(SIGUSR1, SIG_UNBLOCK);
	}
	printf("sent by another thread, then a masked wait letting it "
	       "through: not EINTR %d, handler not run once here %d (of %d)\n",
	       wrong, missed, ROUNDS / 4);
}

int main(void)
{
	struct sigaction sa;
	pthread_t spinners[SPINNERS];
	int p[2];

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0 ||
	    sigaction(SIGUSR2, &sa, NULL) != 0)
		die("sigaction");
	if (pipe(p) != 0)
		die("pipe");
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = p[0] };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) != 0)
		die("epoll");
	for (int i = 0; i < SPINNERS; i++)
		if (pthread_create(&spinners[i], NULL, spin, NULL) != 0)
			die("pthread_create");

	for (int how = 0; how < NSEND; how++)
		unblock_rounds(how);
	sigwait_rounds();
	masked_wait_rounds(p[0], ep);
	other_sender_rounds(p[0], ep);

	atomic_store(&stop, 1);
	for (int i = 0; i < SPINNERS; i++)
		pthread_join(spinners[i], NULL);
	int expect = 3 * ROUNDS + NWAIT * (ROUNDS / 4) + ROUNDS / 4;
	printf("handlers run: %s\n",
	       atomic_load(&hits_all) == expect ? "as many as sent"
						: "not as many as sent");
	return 0;
}
