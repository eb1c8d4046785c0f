// signal_mask_race: masks stay exact while handlers run in between. Two
// threads block every signal and unblock them again, over and over, while
// another floods the process with SIGUSR1 (which only they take, and
// which their unblock delivers at once, as the call returns): the old
// mask each call reports is exactly the one set before, and a raise right
// after the unblock runs its handler before raise returns. Meanwhile a
// thread waits for SIGCHLD the way dash does (block all, sigsuspend with
// the old mask until the handler has run, restore), and must see every
// one of the signals a fourth thread sends it, one at a time. Idle Ms
// stay few while the masks change: each change that reaches them kicks
// them to read the idle mask again.
// goshim-test: timeout=120
// goshim-test: shim-max-threads=GOMAXPROCS+10
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MASKERS 2
#define MASK_ROUNDS 20000
#define CHLD_ROUNDS 2000

static atomic_int maskers_left = MASKERS;
static atomic_long usr1_hits;
static __thread volatile sig_atomic_t usr2_hits;
static volatile sig_atomic_t got_chld;
static sem_t ack;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_hits, 1);
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2_hits++;
}

static void on_chld(int sig)
{
	(void)sig;
	got_chld = 1;
}

/* Equal for every signal sigismember knows (glibc's two are not its). */
static int same(const sigset_t *a, const sigset_t *b)
{
	for (int sig = 1; sig < 65; sig++) {
		int x = sigismember(a, sig), y = sigismember(b, sig);
		if (x >= 0 && x != y)
			return 0;
	}
	return 1;
}

/* What the kernel keeps of sigfillset: all but SIGKILL and SIGSTOP. */
static void all_blockable(sigset_t *s)
{
	sigfillset(s);
	sigdelset(s, SIGKILL);
	sigdelset(s, SIGSTOP);
}

struct result {
	int wrong_old, late_raise;
};

static void *masker(void *arg)
{
	struct result *r = arg;
	sigset_t all, all_kept, open, old;

	sigfillset(&all);
	all_blockable(&all_kept);
	sigemptyset(&open);
	sigaddset(&open, SIGCHLD); /* the waiter's alone */
	pthread_sigmask(SIG_SETMASK, &open, NULL);
	for (int i = 0; i < MASK_ROUNDS; i++) {
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (!same(&old, &open))
			r->wrong_old++;
		pthread_sigmask(SIG_SETMASK, &open, &old);
		if (!same(&old, &all_kept))
			r->wrong_old++;
		int before = usr2_hits;
		raise(SIGUSR2);
		if (usr2_hits != before + 1)
			r->late_raise++;
	}
	atomic_fetch_sub(&maskers_left, 1);
	return NULL;
}

static void *flooder(void *arg)
{
	pid_t pid = getpid();
	(void)arg;
	while (atomic_load(&maskers_left) > 0)
		kill(pid, SIGUSR1);
	return NULL;
}

/* dash's waitproc. */
static void *waiter(void *arg)
{
	int *wrong = arg;
	sigset_t all, old, none;

	sigfillset(&all);
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < CHLD_ROUNDS; i++) {
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (!same(&old, &none))
			(*wrong)++;
		while (!got_chld)
			sigsuspend(&old);
		got_chld = 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		sem_post(&ack);
	}
	return NULL;
}

int main(void)
{
	pthread_t m[MASKERS], f, w;
	struct result res[MASKERS];
	struct sigaction sa;
	sigset_t blocked;
	int wrong_waiter = 0, lost = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_chld;
	sigfillset(&sa.sa_mask); /* as dash's */
	sigaction(SIGCHLD, &sa, NULL);
	sem_init(&ack, 0, 0);

	/* Everyone else blocks what the maskers and the waiter take. */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	sigaddset(&blocked, SIGUSR2);
	sigaddset(&blocked, SIGCHLD);
	pthread_sigmask(SIG_SETMASK, &blocked, NULL);
	memset(res, 0, sizeof res);
	for (int i = 0; i < MASKERS; i++)
		pthread_create(&m[i], NULL, masker, &res[i]);
	pthread_create(&w, NULL, waiter, &wrong_waiter);
	pthread_create(&f, NULL, flooder, NULL);

	pid_t pid = getpid();
	for (int i = 0; i < CHLD_ROUNDS; i++) {
		struct timespec until;
		kill(pid, SIGCHLD);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 20;
		if (sem_timedwait(&ack, &until) != 0) {
			lost++;
			break;
		}
	}
	if (lost) {
		printf("the waiter missed a SIGCHLD (%d wrong old masks)\n",
		       wrong_waiter);
		fflush(stdout);
		_exit(1);
	}
	pthread_join(w, NULL);
	for (int i = 0; i < MASKERS; i++)
		pthread_join(m[i], NULL);
	pthread_join(f, NULL);
	for (int i = 0; i < MASKERS; i++)
		printf("masker %d: %d wrong old masks, %d raises not handled "
		       "at once\n",
		       i, res[i].wrong_old, res[i].late_raise);
	printf("waiter: %d wrong old masks, %d signals seen\n", wrong_waiter,
	       CHLD_ROUNDS);
	printf("SIGUSR1 handled: %s\n",
	       atomic_load(&usr1_hits) > 0 ? "yes" : "no");
	return 0;
}
