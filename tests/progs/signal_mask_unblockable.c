// signal_mask_unblockable: SIGKILL and SIGSTOP can be named in a mask
// but never blocked, and no mask reports them: not the one read back
// after blocking them (by every way of asking), not the old mask of the
// next change, not a new thread's (it starts with its creator's), not the
// one a handler runs under, not the one sigsuspend's handler sees.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static char in_handler[64];

static void report(const char *what, const sigset_t *s)
{
	printf("%-32s KILL %d STOP %d USR1 %d\n", what, sigismember(s, SIGKILL),
	       sigismember(s, SIGSTOP), sigismember(s, SIGUSR1));
}

static void current(const char *what)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	report(what, &cur);
}

static void on_usr2(int sig)
{
	sigset_t cur;
	(void)sig;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	snprintf(in_handler, sizeof in_handler, "KILL %d STOP %d USR2 %d",
		 sigismember(&cur, SIGKILL), sigismember(&cur, SIGSTOP),
		 sigismember(&cur, SIGUSR2));
}

static void *thread(void *arg)
{
	(void)arg;
	current("new thread");
	return NULL;
}

int main(void)
{
	sigset_t s, old, all;
	pthread_t t;

	sigemptyset(&s);
	sigaddset(&s, SIGKILL);
	sigaddset(&s, SIGSTOP);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, &old);
	report("old, before blocking", &old);
	current("after SIG_BLOCK");
	sigprocmask(SIG_SETMASK, &s, &old);
	report("old of SIG_SETMASK", &old);
	current("after SIG_SETMASK");

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	current("after sigfillset, SETMASK");
	pthread_create(&t, NULL, thread, NULL);
	pthread_join(t, NULL);
	sigprocmask(SIG_UNBLOCK, &all, &old);
	report("old of SIG_UNBLOCK", &old);
	current("after SIG_UNBLOCK of all");

	/* A handler with SIGKILL and SIGSTOP in its sa_mask. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr2;
	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	printf("%-32s %s\n", "in a handler", in_handler);

	/* sigsuspend with them in its mask, woken by a handler. */
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_BLOCK, &s, NULL);
	raise(SIGUSR2);
	sigfillset(&s);
	sigdelset(&s, SIGUSR2);
	sigsuspend(&s);
	printf("%-32s %s\n", "in sigsuspend's handler", in_handler);
	current("after sigsuspend");
	return 0;
}
