// goshim-test: env=GOMAXPROCS=1
// goshim-test: timeout=60
/*
 * goshim preempts with SIGURG; a program's own SIGURG stays its own. The
 * program sets a handler (sigaction and signal), reads its disposition
 * back, and gets every SIGURG it sends itself (raise, pthread_kill, kill), while a spinning thread
 * is being preempted around it all the time (GOMAXPROCS=1: the spinner
 * and the raiser share the one P). Preemption signals never reach the
 * program's handler: the count is exact. SIGURG is not left blocked.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RAISES 200

static atomic_int stop;
static volatile unsigned long sink;
static volatile sig_atomic_t got, got_info, bad_info;

static void on_urg(int sig)
{
	if (sig == SIGURG)
		got++;
}

static void on_urg_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGURG &&
	    (si->si_code == SI_TKILL || si->si_code == SI_USER))
		got_info++;
	else
		bad_info++;
}

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sink++;
	return NULL;
}

static void *raiser(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	(void)arg;
	for (int i = 0; i < RAISES; i++) {
		raise(SIGURG);
		pthread_kill(pthread_self(), SIGURG);
		kill(getpid(), SIGURG); /* process-directed */
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static void run(void)
{
	pthread_t s, r;
	atomic_store(&stop, 0);
	pthread_create(&s, NULL, spin, NULL);
	pthread_create(&r, NULL, raiser, NULL);
	pthread_join(r, NULL);
	atomic_store(&stop, 1);
	pthread_join(s, NULL);
}

int main(void)
{
	struct sigaction sa, old;
	sigset_t mask;

	sigaction(SIGURG, NULL, &old);
	printf("initial: %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "?");

	if (signal(SIGURG, on_urg) != SIG_DFL)
		printf("signal() returned the wrong old handler\n");
	sigaction(SIGURG, NULL, &old);
	printf("after signal(): %s, SA_RESTART %d\n",
	       old.sa_handler == on_urg ? "on_urg" : "?",
	       !!(old.sa_flags & SA_RESTART));
	run();
	printf("signal(): %d of %d\n", got, 3 * RAISES);

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_urg_info;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGURG, &sa, &old);
	printf("old: %s\n", old.sa_handler == on_urg ? "on_urg" : "?");
	sigaction(SIGURG, NULL, &old);
	printf("now: %s, SA_SIGINFO %d\n",
	       old.sa_sigaction == on_urg_info ? "on_urg_info" : "?",
	       !!(old.sa_flags & SA_SIGINFO));
	run();
	printf("sigaction(): %d of %d, %d with wrong siginfo\n", got_info,
	       3 * RAISES, bad_info);

	/* Ignored: nothing reaches the program, preemption goes on. */
	signal(SIGURG, SIG_IGN);
	got = got_info = 0;
	run();
	printf("ignored: %d\n", got + got_info);

	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	printf("SIGURG blocked: %d\n", sigismember(&mask, SIGURG));
	return 0;
}
