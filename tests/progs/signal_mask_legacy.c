// signal_mask_legacy: the C library's older calls that change a thread's
// signal mask (BSD sigsetmask, sigblock, siggetmask and sigpause; System
// V sighold, sigrelse, sigset, sigignore and X/Open sigpause; siglongjmp
// back to a sigsetjmp that saved the mask) change the same mask that
// sigprocmask reports and that signals see. dash blocks every signal with
// sigprocmask and clears the mask with sigsetmask(0) around each command
// it starts: the next sigprocmask must report the cleared mask, or dash
// waits in sigsuspend with every signal blocked, for good.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* BSD masks: bit sig - 1 (glibc's sigmask macro warns of itself) */
#define BIT(sig) (1 << ((sig) - 1))

static __thread volatile sig_atomic_t hits; /* handlers run on this thread */
static sigjmp_buf jump;
static volatile sig_atomic_t jumping;

static void on_signal(int sig)
{
	(void)sig;
	hits++;
	if (jumping) {
		jumping = 0;
		siglongjmp(jump, 1);
	}
}

static int blocked(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void show(const char *what)
{
	printf("%-34s USR1 %d USR2 %d hits %d\n", what, blocked(SIGUSR1),
	       blocked(SIGUSR2), (int)hits);
}

/* dash's sigblockall, then its sigclearmask. */
static void dash_pattern(void)
{
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	sigsetmask(0);
	show("sigprocmask(all), sigsetmask(0)");
	raise(SIGUSR1); /* runs before raise returns: nothing blocks it */
	show("raise(SIGUSR1)");
	sigprocmask(SIG_SETMASK, &all, &old);
	printf("old mask of the next block-all:   USR1 %d USR2 %d CHLD %d\n",
	       sigismember(&old, SIGUSR1), sigismember(&old, SIGUSR2),
	       sigismember(&old, SIGCHLD));
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void bsd_calls(void)
{
	int was = sigblock(BIT(SIGUSR1));
	printf("sigblock: old %#x, now %#x\n", (unsigned)was,
	       (unsigned)sigblock(0));
	show("sigblock(USR1)");
	raise(SIGUSR1); /* pending: blocked */
	show("raise(SIGUSR1) blocked");
	was = sigsetmask(was); /* delivers it before returning */
	printf("sigsetmask: old %#x, now %#x\n", (unsigned)was,
	       (unsigned)sigblock(0));
	show("sigsetmask(old)");
}

static void sysv_calls(void)
{
	printf("sighold %d\n", sighold(SIGUSR2));
	show("sighold(USR2)");
	raise(SIGUSR2);
	show("raise(SIGUSR2) held");
	printf("sigrelse %d\n", sigrelse(SIGUSR2));
	show("sigrelse(USR2)");
	int r = sighold(0);
	printf("sighold(0) %d errno %s\n", r,
	       errno == EINVAL ? "EINVAL" : strerror(errno));

	__sighandler_t prev = sigset(SIGUSR2, SIG_HOLD);
	printf("sigset(SIG_HOLD) returned %s\n",
	       prev == on_signal ? "the handler"
	       : prev == SIG_HOLD ? "SIG_HOLD"
				  : "something else");
	show("sigset(USR2, SIG_HOLD)");
	raise(SIGUSR2);
	prev = sigset(SIGUSR2, on_signal); /* unblocks: delivered */
	printf("sigset(handler) returned %s\n",
	       prev == on_signal ? "the handler"
	       : prev == SIG_HOLD ? "SIG_HOLD"
				  : "something else");
	show("sigset(USR2, handler)");

	struct sigaction sa;
	printf("sigignore %d\n", sigignore(SIGWINCH));
	sigaction(SIGWINCH, NULL, &sa);
	printf("SIGWINCH now %s\n", sa.sa_handler == SIG_IGN ? "ignored"
								: "not ignored");
	signal(SIGWINCH, SIG_DFL);

	sigaction(SIGUSR2, NULL, &sa);
	printf("SIGUSR2 SA_RESTART %d\n", !!(sa.sa_flags & SA_RESTART));
	siginterrupt(SIGUSR2, 1);
	sigaction(SIGUSR2, NULL, &sa);
	printf("siginterrupt(1): SA_RESTART %d\n",
	       !!(sa.sa_flags & SA_RESTART));
	siginterrupt(SIGUSR2, 0);
	sigaction(SIGUSR2, NULL, &sa);
	printf("siginterrupt(0): SA_RESTART %d\n",
	       !!(sa.sa_flags & SA_RESTART));
}

static pthread_t main_thread;

/* Sends SIGUSR1 to the main thread once it waits. */
static void *poker(void *arg)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	(void)arg;
	nanosleep(&ts, NULL);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

/* X/Open sigpause(sig) and BSD sigpause(mask), woken by a signal another
 * thread sends while this one blocks it. */
static void pauses(void)
{
	pthread_t t;
	int r, e;

	sigblock(BIT(SIGUSR1));
	pthread_create(&t, NULL, poker, NULL);
	r = sigpause(SIGUSR1); /* <signal.h> names __xpg_sigpause */
	e = errno;
	pthread_join(t, NULL);
	printf("sigpause(SIGUSR1) %d %s\n", r, e == EINTR ? "EINTR" : "?");
	show("after sigpause");

	extern int __sigpause(int, int);
	pthread_create(&t, NULL, poker, NULL);
	r = __sigpause(BIT(SIGUSR2), 0); /* BSD: the mask itself */
	e = errno;
	pthread_join(t, NULL);
	printf("BSD sigpause(mask) %d %s\n", r, e == EINTR ? "EINTR" : "?");
	show("after BSD sigpause");
	sigsetmask(0);
}

/* A handler leaves by siglongjmp: the mask sigsetjmp saved comes back,
 * not the handler's. */
static void jumps(void)
{
	sigset_t usr2;

	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	if (sigsetjmp(jump, 1) == 0) {
		sigprocmask(SIG_UNBLOCK, &usr2, NULL);
		jumping = 1;
		raise(SIGUSR1);
		printf("not reached\n");
	}
	show("siglongjmp out of a handler");
	raise(SIGUSR1);
	show("raise(SIGUSR1) after the jump");
	if (sigsetjmp(jump, 1) == 0) {
		sigprocmask(SIG_UNBLOCK, &usr2, NULL);
		siglongjmp(jump, 1);
	}
	show("siglongjmp restores USR2 blocked");
	sigsetmask(0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* a hang shows how far it got */
	main_thread = pthread_self();
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
	dash_pattern();
	bsd_calls();
	sysv_calls();
	pauses();
	jumps();
	show("end");
	return 0;
}
