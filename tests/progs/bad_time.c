// bad_time: the sleep family, signal masks, waits and dispositions,
// sigaltstack, signalfd, timerfd and raw syscall() with bad input:
// pointers the kernel checks (EFAULT, never a crash), timespecs out of
// range and negative (EINVAL, for absolute sleeps too), unknown clocks,
// signals and flags.
// Then 100 threads show the runtime still works.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <threads.h>
#include <time.h>
#include "bad.h"

static void on_usr1(int sig)
{
	(void)sig;
}

static void sleeps(void *none)
{
	struct timespec big_ns = { 0, 1000000000 }, neg_ns = { 0, -1 },
			neg_s = { -1, 0 }, us = { 0, 1000 };

	EXPECT_ERRNO("nanosleep, req unmapped", nanosleep(none, NULL), EFAULT);
	EXPECT_ERRNO("nanosleep, req in the kernel's half",
		     nanosleep(KERNEL_ADDR, NULL), EFAULT);
	EXPECT_ERRNO("nanosleep, req NULL", nanosleep(NULL, NULL), EFAULT);
	EXPECT_ERRNO("nanosleep, tv_nsec 1e9", nanosleep(&big_ns, NULL), EINVAL);
	EXPECT_ERRNO("nanosleep, tv_nsec -1", nanosleep(&neg_ns, NULL), EINVAL);
	EXPECT_ERRNO("nanosleep, tv_sec -1", nanosleep(&neg_s, NULL), EINVAL);
	EXPECT_RET("nanosleep 1 us, rem unmapped (not written)",
		   nanosleep(&us, none), 0, 0);
	expect("clock_nanosleep MONOTONIC, req unmapped",
	       clock_nanosleep(CLOCK_MONOTONIC, 0, none, NULL), EFAULT);
	expect("clock_nanosleep REALTIME absolute, req unmapped",
	       clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, none, NULL),
	       EFAULT);
	expect("clock_nanosleep REALTIME absolute, tv_sec -1",
	       clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &neg_s, NULL),
	       EINVAL);
	expect("clock_nanosleep MONOTONIC absolute, tv_nsec 1e9",
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &big_ns, NULL),
	       EINVAL);
	expect("clock_nanosleep BOOTTIME, tv_nsec -1",
	       clock_nanosleep(CLOCK_BOOTTIME, 0, &neg_ns, NULL), EINVAL);
	expect("clock_nanosleep clock 42",
	       clock_nanosleep(42, 0, &us, NULL), EINVAL);
	expect("clock_nanosleep clock -1",
	       clock_nanosleep(-1, 0, &us, NULL), EINVAL);
	expect("clock_nanosleep THREAD_CPUTIME_ID",
	       clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &us, NULL), EINVAL);
	expect("clock_nanosleep MONOTONIC, unknown flag bits",
	       clock_nanosleep(CLOCK_MONOTONIC, 0x100, &us, NULL), 0);
	printf("thrd_sleep, unmapped: %d\n", thrd_sleep(none, NULL));
	printf("thrd_sleep, tv_nsec -1: %d\n", thrd_sleep(&neg_ns, NULL));
	EXPECT_ERRNO("syscall(SYS_nanosleep), req unmapped",
		     syscall(SYS_nanosleep, none, NULL), EFAULT);
	EXPECT_ERRNO("syscall(SYS_futex) wait, word unmapped",
		     syscall(SYS_futex, none, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0),
		     EFAULT);
	printf("sleep(0): %u\n", sleep(0));
	EXPECT_RET("usleep(0)", usleep(0), 0, 0);
}

/* A relative sleep cut short by a handler writes the time left: where it
 * cannot, the kernel says EFAULT instead of EINTR. The sleeper sleeps again
 * until one ends; it is signalled until then. */
static void *sleep_bad_rem(void *none)
{
	struct timespec ten = { 10, 0 };
	int r;
	while ((r = nanosleep(&ten, none)) == 0)
		;
	return (void *)(intptr_t)(r == -1 ? errno : 0);
}

static void interrupted(void *none)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t;
	void *r;

	OK(sigaction(SIGUSR1, &sa, NULL) ? errno : 0);
	OK(pthread_create(&t, NULL, sleep_bad_rem, none));
	while (pthread_tryjoin_np(t, &r) == EBUSY) {
		pthread_kill(t, SIGUSR1);
		usleep(20000);
	}
	expect("nanosleep 10 s interrupted, rem unmapped", (int)(intptr_t)r,
	       EFAULT);
}

static void masks(void *none)
{
	sigset_t usr2, cur, empty;
	struct timespec zero = { 0, 0 }, big_ns = { 0, 1000000000 };

	sigemptyset(&usr2);
	sigemptyset(&empty);
	sigaddset(&usr2, SIGUSR2);
	expect("pthread_sigmask, old unmapped",
	       pthread_sigmask(SIG_BLOCK, NULL, none), EFAULT);
	expect("pthread_sigmask, how 99", pthread_sigmask(99, &usr2, &cur),
	       EINVAL);
	expect("pthread_sigmask, how 99, no set",
	       pthread_sigmask(99, NULL, &cur), 0);
	truth("the mask blocks no SIGUSR2", !sigismember(&cur, SIGUSR2));
	expect("pthread_sigmask block SIGUSR2, old in the kernel's half",
	       pthread_sigmask(SIG_BLOCK, &usr2, KERNEL_ADDR), EFAULT);
	OK(pthread_sigmask(SIG_BLOCK, NULL, &cur));
	truth("SIGUSR2 blocked all the same", sigismember(&cur, SIGUSR2));
	EXPECT_ERRNO("sigprocmask, old unmapped",
		     sigprocmask(SIG_UNBLOCK, &usr2, none), EFAULT);
	OK(pthread_sigmask(SIG_BLOCK, NULL, &cur));
	truth("SIGUSR2 unblocked all the same", !sigismember(&cur, SIGUSR2));
	EXPECT_ERRNO("sigpending, unmapped", sigpending(none), EFAULT);

	OK(pthread_sigmask(SIG_BLOCK, &usr2, NULL));
	EXPECT_ERRNO("sigtimedwait, set unmapped",
		     sigtimedwait(none, NULL, &zero), EFAULT);
	EXPECT_ERRNO("sigtimedwait, set NULL",
		     sigtimedwait(NULL, NULL, &zero), EFAULT);
	EXPECT_ERRNO("sigtimedwait, timeout unmapped",
		     sigtimedwait(&usr2, NULL, none), EFAULT);
	EXPECT_ERRNO("sigtimedwait, tv_nsec 1e9",
		     sigtimedwait(&usr2, NULL, &big_ns), EINVAL);
	EXPECT_ERRNO("sigtimedwait, nothing pending",
		     sigtimedwait(&usr2, NULL, &zero), EAGAIN);
	EXPECT_ERRNO("sigwaitinfo, set unmapped", sigwaitinfo(none, NULL),
		     EFAULT);
	int sig = -1;
	expect("sigwait, set unmapped", sigwait(none, &sig), EFAULT);
	truth("sigwait left sig alone", sig == -1);
	EXPECT_ERRNO("sigsuspend, set unmapped", sigsuspend(none), EFAULT);
	EXPECT_ERRNO("signalfd, mask unmapped", signalfd(-1, none, 0), EFAULT);
	EXPECT_ERRNO("signalfd, flags 0x1234", signalfd(-1, &usr2, 0x1234),
		     EINVAL);
	EXPECT_ERRNO("signalfd, fd 5000 not open", signalfd(5000, &usr2, 0),
		     EBADF);
	EXPECT_ERRNO("signalfd, fd 1 not a signalfd", signalfd(1, &usr2, 0),
		     EINVAL);
	/* A signal the wait takes, with nowhere to put its siginfo: the
	 * kernel takes it and says EFAULT. */
	OK(pthread_kill(pthread_self(), SIGUSR2));
	EXPECT_ERRNO("sigtimedwait, SIGUSR2 pending, info unmapped",
		     sigtimedwait(&usr2, none, &zero), EFAULT);
	OK(sigpending(&cur));
	truth("SIGUSR2 taken all the same", !sigismember(&cur, SIGUSR2));
	OK(pthread_sigmask(SIG_UNBLOCK, &usr2, NULL));
}

static void actions(void *none)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	stack_t ss;

	EXPECT_ERRNO("sigaction signal 0", sigaction(0, &sa, NULL), EINVAL);
	EXPECT_ERRNO("sigaction signal 65", sigaction(65, &sa, NULL), EINVAL);
	EXPECT_ERRNO("sigaction signal -1", sigaction(-1, &sa, NULL), EINVAL);
	EXPECT_ERRNO("sigaction SIGKILL", sigaction(SIGKILL, &sa, NULL), EINVAL);
	EXPECT_ERRNO("sigaction SIGSTOP", sigaction(SIGSTOP, &sa, NULL), EINVAL);
	EXPECT_RET("sigaction SIGKILL, query only",
		   sigaction(SIGKILL, NULL, &old), 0, 0);
	errno = 0;
	truth("signal(0) is SIG_ERR, EINVAL",
	      signal(0, on_usr1) == SIG_ERR && errno == EINVAL);
	errno = 0;
	truth("signal(SIGKILL, SIG_IGN) is SIG_ERR, EINVAL",
	      signal(SIGKILL, SIG_IGN) == SIG_ERR && errno == EINVAL);
	errno = 0;
	truth("signal(1000) is SIG_ERR, EINVAL",
	      signal(1000, on_usr1) == SIG_ERR && errno == EINVAL);
	errno = 0;
	truth("signal(SIGUSR1, SIG_ERR) is SIG_ERR, EINVAL",
	      signal(SIGUSR1, SIG_ERR) == SIG_ERR && errno == EINVAL);

	expect("pthread_kill signal -1", pthread_kill(pthread_self(), -1),
	       EINVAL);
	expect("pthread_kill signal 65", pthread_kill(pthread_self(), 65),
	       EINVAL);
	expect("pthread_kill SIGCANCEL (32)", pthread_kill(pthread_self(), 32),
	       EINVAL);
	expect("pthread_kill SIGSETXID (33)", pthread_kill(pthread_self(), 33),
	       EINVAL);
	expect("pthread_kill signal 0", pthread_kill(pthread_self(), 0), 0);
	expect("pthread_sigqueue signal 1000",
	       pthread_sigqueue(pthread_self(), 1000, (union sigval){ 0 }),
	       EINVAL);

	EXPECT_ERRNO("sigaltstack, new unmapped", sigaltstack(none, NULL),
		     EFAULT);
	EXPECT_ERRNO("sigaltstack, old unmapped", sigaltstack(NULL, none),
		     EFAULT);
	ss = (stack_t){ .ss_sp = malloc(100), .ss_size = 100 };
	EXPECT_ERRNO("sigaltstack, 100 bytes", sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_flags = 0x1234;
	EXPECT_ERRNO("sigaltstack, flags 0x1234", sigaltstack(&ss, NULL),
		     EINVAL);
	free(ss.ss_sp);
	OK(sigaltstack(NULL, &ss));
	truth("no alternate stack", ss.ss_flags == SS_DISABLE);

	EXPECT_ERRNO("timerfd_create clock 42", timerfd_create(42, 0), EINVAL);
	EXPECT_ERRNO("timerfd_create flags 0x1234",
		     timerfd_create(CLOCK_MONOTONIC, 0x1234), EINVAL);
}

/* The same from a created thread: under goshim a goroutine, whose
 * timeouts on its own stack are checked without the kernel. */
static void *sleeps_thread(void *none)
{
	sleeps(none);
	return NULL;
}

int main(void)
{
	void *none = bad_start();
	pthread_t t;

	sleeps(none);
	OK(pthread_create(&t, NULL, sleeps_thread, none));
	OK(pthread_join(t, NULL));
	interrupted(none);
	masks(none);
	actions(none);
	return bad_finish("bad_time");
}
