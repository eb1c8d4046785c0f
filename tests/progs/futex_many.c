// futex_many: 1,000 threads each wait on one word with a raw
// syscall(SYS_futex, FUTEX_WAIT_PRIVATE) until main changes the word and
// wakes them all with one FUTEX_WAKE of INT_MAX; all are joined. Natively
// every waiter holds an OS thread in the kernel; under goshim they park,
// so a few OS threads carry them all.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=1001
// goshim-test: timeout=60
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS 1000

static _Atomic uint32_t word;
static atomic_int arrived, woken, odd;

static void *waiter(void *arg)
{
	(void)arg;
	atomic_fetch_add(&arrived, 1);
	while (atomic_load(&word) == 0) {
		long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL,
				 NULL, 0);
		if (r != 0 && errno != EAGAIN && errno != EINTR)
			atomic_fetch_add(&odd, 1);
	}
	atomic_fetch_add(&woken, 1);
	return NULL;
}


int main(void)
{
	static pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++) {
		int err = pthread_create(&t[i], NULL, waiter, NULL);
		if (err) {
			fprintf(stderr, "pthread_create: %d\n", err);
			return 1;
		}
	}
	while (atomic_load(&arrived) < THREADS)
		usleep(1000);
	/* Let them all get into the wait. */
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	atomic_store(&word, 1);
	/* One wake of INT_MAX reaches every waiter; a thread that had not got
	 * into the wait yet sees the word and does not wait. */
	long n = syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
		    0);
	if (n < 0 || n > THREADS)
		printf("wake returned %ld\n", n);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%d threads woken, %d odd results\n", atomic_load(&woken),
	       atomic_load(&odd));
	return 0;
}
