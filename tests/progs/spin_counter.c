// spin_counter: pthread spinlocks. Return values of init (any pshared value),
// trylock (EBUSY while held), unlock and destroy; 16 threads adding to one
// counter under one spinlock, some holders yielding inside; and a
// process-shared spinlock in shared memory that a parent and a forked child
// both take. Totals are exact.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 16
#define ADDS 20000
#define FORK_ADDS 200000

static int failures;
static pthread_spinlock_t lock;
static long counter;

static void expect(const char *what, int got, int want)
{
	printf("%s: %d\n", what, got);
	if (got != want) {
		fprintf(stderr, "spin_counter: %s: got %d, want %d\n", what,
			got, want);
		failures++;
	}
}

static void *adder(void *arg)
{
	long i = (long)arg;
	for (int k = 0; k < ADDS; k++) {
		if ((i + k) % 4 == 0) {
			while (pthread_spin_trylock(&lock) == EBUSY)
				sched_yield();
		} else {
			pthread_spin_lock(&lock);
		}
		long c = counter;
		if (k % 10000 == 0)
			sched_yield(); /* a holder that loses the CPU */
		counter = c + 1;
		pthread_spin_unlock(&lock);
	}
	return NULL;
}

static void calls(void)
{
	pthread_spinlock_t s;

	expect("init private", pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), 0);
	expect("trylock", pthread_spin_trylock(&s), 0);
	expect("trylock while held", pthread_spin_trylock(&s), EBUSY);
	expect("unlock", pthread_spin_unlock(&s), 0);
	expect("lock", pthread_spin_lock(&s), 0);
	expect("unlock", pthread_spin_unlock(&s), 0);
	expect("destroy", pthread_spin_destroy(&s), 0);
	expect("init shared", pthread_spin_init(&s, PTHREAD_PROCESS_SHARED), 0);
	expect("destroy", pthread_spin_destroy(&s), 0);
	expect("init pshared 7", pthread_spin_init(&s, 7), 0);
	expect("destroy", pthread_spin_destroy(&s), 0);
}

static void threads(void)
{
	pthread_t t[NTHREADS];

	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, adder, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("%d threads x %d adds: %ld\n", NTHREADS, ADDS, counter);
	if (counter != (long)NTHREADS * ADDS)
		failures++;
	pthread_spin_destroy(&lock);
}

struct shared {
	pthread_spinlock_t lock;
	long counter;
};

static void add_shared(struct shared *sh)
{
	for (int k = 0; k < FORK_ADDS; k++) {
		pthread_spin_lock(&sh->lock);
		sh->counter++;
		pthread_spin_unlock(&sh->lock);
	}
}

static void processes(void)
{
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int st;

	if (sh == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	pthread_spin_init(&sh->lock, PTHREAD_PROCESS_SHARED);
	pid_t pid = fork();
	if (pid == 0) {
		add_shared(sh);
		_exit(0);
	}
	add_shared(sh);
	waitpid(pid, &st, 0);
	printf("parent and child x %d adds: %ld, child status %d\n",
	       FORK_ADDS, sh->counter, st);
	if (sh->counter != 2L * FORK_ADDS || st != 0)
		failures++;
	pthread_spin_destroy(&sh->lock);
	munmap(sh, sizeof *sh);
}

int main(void)
{
	calls();
	threads();
	processes();
	return failures ? 1 : 0;
}
