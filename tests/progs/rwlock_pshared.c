// rwlock_pshared: process-shared rwlocks (glibc's own) in shared memory.
// Between threads: EDEADLK for the writer asking again, a reader thread that
// blocks until the writer lets go while other threads keep running, and
// a timed read lock that times out. Between a parent and a forked child:
// EBUSY from the try forms while the other process writes, a timed write
// lock that waits for the other process, and 20,000 locked increments by
// each process, with exact totals.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ADDS 20000

struct shared {
	pthread_rwlock_t lock;
	long counter;
	atomic_int child_waiting;
};

static int failures;
static struct shared *sh;
static atomic_int reader_in, ticks;

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case ETIMEDOUT: return "ETIMEDOUT";
	}
	return "other";
}

static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "rwlock_pshared: %s: got %s, want %s\n", what,
			ename(got), ename(want));
		failures++;
	}
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	nanosleep(&ts, NULL);
}

static struct timespec in_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(&sh->lock);
	atomic_store(&reader_in, 1);
	pthread_rwlock_unlock(&sh->lock);
	return NULL;
}

static void *ticker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++) {
		nap_ms(2);
		atomic_fetch_add(&ticks, 1);
	}
	return NULL;
}

static void threads(void)
{
	pthread_t r, t;
	struct timespec ts;

	expect("wrlock", pthread_rwlock_wrlock(&sh->lock), 0);
	expect("wrlock again", pthread_rwlock_wrlock(&sh->lock), EDEADLK);
	expect("rdlock while writing", pthread_rwlock_rdlock(&sh->lock),
	       EDEADLK);
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&t, NULL, ticker, NULL);
	/* The reader blocks in the kernel; the ticker still runs. */
	pthread_join(t, NULL);
	printf("another thread ran while a reader waited: %s\n",
	       atomic_load(&ticks) == 10 ? "yes" : "no");
	printf("reader in before unlock: %s\n",
	       atomic_load(&reader_in) ? "yes" : "no");
	if (atomic_load(&ticks) != 10 || atomic_load(&reader_in))
		failures++;
	expect("unlock", pthread_rwlock_unlock(&sh->lock), 0);
	pthread_join(r, NULL);
	printf("reader in after unlock: %s\n",
	       atomic_load(&reader_in) ? "yes" : "no");

	expect("rdlock", pthread_rwlock_rdlock(&sh->lock), 0);
	ts = in_ms(20);
	expect("timedwrlock 20ms while we read",
	       pthread_rwlock_timedwrlock(&sh->lock, &ts), ETIMEDOUT);
	expect("unlock", pthread_rwlock_unlock(&sh->lock), 0);
}

static void adds(void)
{
	for (int i = 0; i < ADDS; i++) {
		if (i % 2) {
			pthread_rwlock_wrlock(&sh->lock);
		} else {
			while (pthread_rwlock_trywrlock(&sh->lock) == EBUSY)
				;
		}
		sh->counter++;
		pthread_rwlock_unlock(&sh->lock);
		if (i % 100 == 0) {
			pthread_rwlock_rdlock(&sh->lock);
			pthread_rwlock_unlock(&sh->lock);
		}
	}
}

static void processes(void)
{
	int st;

	pthread_rwlock_wrlock(&sh->lock);
	pid_t pid = fork();
	if (pid == 0) {
		int a = pthread_rwlock_trywrlock(&sh->lock);
		int b = pthread_rwlock_tryrdlock(&sh->lock);
		atomic_store(&sh->child_waiting, 1);
		struct timespec ts = in_ms(10000);
		int c = pthread_rwlock_timedwrlock(&sh->lock, &ts);
		pthread_rwlock_unlock(&sh->lock);
		adds();
		_exit(a == EBUSY && b == EBUSY && c == 0 ? 0 : 1);
	}
	while (!atomic_load(&sh->child_waiting))
		nap_ms(1);
	nap_ms(20);
	pthread_rwlock_unlock(&sh->lock);
	adds();
	waitpid(pid, &st, 0);
	printf("child: EBUSY from the try forms, timed wait got in: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	printf("counter: %ld\n", sh->counter);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || sh->counter != 2 * ADDS)
		failures++;
}

int main(void)
{
	pthread_rwlockattr_t attr;

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	expect("init", pthread_rwlock_init(&sh->lock, &attr), 0);
	pthread_rwlockattr_destroy(&attr);
	threads();
	processes();
	expect("destroy", pthread_rwlock_destroy(&sh->lock), 0);
	return failures ? 1 : 0;
}
