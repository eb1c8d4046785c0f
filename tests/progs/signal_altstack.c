// Alternate signal stacks are per thread: each thread installs its own,
// a handler it raises runs on it (and on no other thread's), the stack
// stays after sleeps and yields (under goshim it may resume on another OS
// thread), threads without one run handlers on their own stack, and a
// thread that frees its stack after disabling it leaves nothing behind.
// Bad arguments get the kernel's errors.
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NTHREADS 16
#define ALTSZ (64 * 1024)

static __thread char *my_lo, *my_hi;
static __thread volatile int on_mine, on_other;

static void on_usr1(int sig)
{
	char here;
	(void)sig;
	if (my_lo && &here >= my_lo && &here < my_hi)
		on_mine++;
	else
		on_other++;
}

static void *with_stack(void *arg)
{
	stack_t ss = { 0 }, cur;
	long bad = 0;

	(void)arg;
	my_lo = mmap(NULL, ALTSZ, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	my_hi = my_lo + ALTSZ;
	ss.ss_sp = my_lo;
	ss.ss_size = ALTSZ;
	if (sigaltstack(&ss, NULL) != 0)
		return (void *)-1L;
	for (int i = 0; i < 40; i++) {
		if (i % 2)
			usleep(200);
		else
			sched_yield();
		sigaltstack(NULL, &cur);
		bad += cur.ss_sp != my_lo || cur.ss_size != ALTSZ ||
		       cur.ss_flags != 0;
		pthread_kill(pthread_self(), SIGUSR1);
	}
	/* As Rust does at thread exit: disable, then unmap. */
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	munmap(my_lo, ALTSZ);
	my_lo = my_hi = NULL;
	return (void *)(bad * 1000 + on_other * 100 + (on_mine == 40));
}

static void *without_stack(void *arg)
{
	stack_t cur;
	pthread_attr_t at;
	void *lo;
	size_t size;

	(void)arg;
	/* Handlers should run on the thread's own stack. */
	pthread_getattr_np(pthread_self(), &at);
	pthread_attr_getstack(&at, &lo, &size);
	pthread_attr_destroy(&at);
	my_lo = lo;
	my_hi = my_lo + size;
	for (int i = 0; i < 40; i++) {
		usleep(200);
		pthread_kill(pthread_self(), SIGUSR1);
	}
	sigaltstack(NULL, &cur);
	return (void *)(long)((cur.ss_flags & SS_DISABLE) ? on_mine : -1);
}

int main(void)
{
	pthread_t a[NTHREADS], b[NTHREADS];
	struct sigaction sa;
	void *r;
	long ok = 0, plain = 0, other = 0, bad = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);

	for (int i = 0; i < NTHREADS; i++) {
		pthread_create(&a[i], NULL, with_stack, NULL);
		pthread_create(&b[i], NULL, without_stack, NULL);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(a[i], &r);
		ok += (long)r % 10;
		other += (long)r / 100 % 10;
		bad += (long)r / 1000;
		pthread_join(b[i], &r);
		plain += (long)r == 40;
	}
	printf("threads whose 40 handlers all ran on their own stack: %ld "
	       "of %d (elsewhere: %ld, stack lost: %ld)\n",
	       ok, NTHREADS, other, bad);
	printf("threads without one ran 40 handlers on their own stack: "
	       "%ld of %d\n", plain, NTHREADS);

	stack_t ss = { .ss_sp = malloc(1024), .ss_size = 1024 };
	errno = 0;
	int rc = sigaltstack(&ss, NULL);
	printf("too small: %d %s\n", rc, strerror(errno));
	ss.ss_size = ALTSZ;
	ss.ss_flags = 12345;
	rc = sigaltstack(&ss, NULL);
	printf("bad flags: %d %s\n", rc, strerror(errno));
	stack_t cur;
	sigaltstack(NULL, &cur);
	printf("main has none: %s\n",
	       (cur.ss_flags & SS_DISABLE) ? "yes" : "no");
	return 0;
}
