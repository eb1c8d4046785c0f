// pshared_one_p: a thread that waits on a process-shared object does not
// hold up the other threads of its process, even on one processor
// (GOMAXPROCS=1). A second process (this program, spawned with "child")
// holds or has to release, in turn, a process-shared mutex, condition
// variable, barrier, rwlock and semaphore in shared memory while the main
// thread waits on it; it lets go only once another thread of the first
// process has run and said so in shared memory, or after 10 s. Each wait
// reports whether that other thread ran while it waited.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { MUTEX = 1, COND, BARRIER, RWLOCK, SEM, NPHASES = SEM };

static const char *phase_name[] = {
	[MUTEX] = "mutex", [COND] = "cond", [BARRIER] = "barrier",
	[RWLOCK] = "rwlock", [SEM] = "semaphore",
};

struct shared {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_barrier_t bar;
	pthread_rwlock_t rw;
	sem_t sem;
	atomic_int held;    /* the phase the child is ready for */
	atomic_int release; /* the phase in which the child may let go */
	int flag;	    /* the condition, under mu */
};

static struct shared *sh;
static atomic_int other_ran;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "pshared_one_p: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	nanosleep(&ts, NULL);
}

/* Wait (polling) until *v == want; false after limit_ms. */
static bool await(atomic_int *v, int want, long limit_ms)
{
	for (long i = 0; i < limit_ms; i++) {
		if (atomic_load(v) == want)
			return true;
		nap_ms(1);
	}
	return atomic_load(v) == want;
}

static int child(void)
{
	for (int ph = 1; ph <= NPHASES; ph++) {
		if (ph == MUTEX)
			check(pthread_mutex_lock(&sh->mu), "child lock");
		if (ph == RWLOCK)
			check(pthread_rwlock_wrlock(&sh->rw), "child wrlock");
		atomic_store(&sh->held, ph);
		/* Not told in time: let go anyway, the parent reports it. */
		await(&sh->release, ph, 10000);
		switch (ph) {
		case MUTEX:
			check(pthread_mutex_unlock(&sh->mu), "child unlock");
			break;
		case COND:
			check(pthread_mutex_lock(&sh->mu), "child lock");
			sh->flag = ph;
			check(pthread_cond_signal(&sh->cv), "child signal");
			check(pthread_mutex_unlock(&sh->mu), "child unlock");
			break;
		case BARRIER: {
			int r = pthread_barrier_wait(&sh->bar);
			if (r != PTHREAD_BARRIER_SERIAL_THREAD)
				check(r, "child barrier");
			break;
		}
		case RWLOCK:
			check(pthread_rwlock_unlock(&sh->rw), "child rwunlock");
			break;
		case SEM:
			if (sem_post(&sh->sem))
				check(errno, "child sem_post");
			break;
		}
	}
	return 0;
}

static void *other(void *arg)
{
	int ph = (int)(intptr_t)arg;
	nap_ms(20);
	atomic_store(&other_ran, 1);
	atomic_store(&sh->release, ph);
	return NULL;
}

static void wait_on(int ph)
{
	switch (ph) {
	case MUTEX:
		check(pthread_mutex_lock(&sh->mu), "lock");
		check(pthread_mutex_unlock(&sh->mu), "unlock");
		break;
	case COND:
		check(pthread_mutex_lock(&sh->mu), "lock");
		while (sh->flag != ph)
			check(pthread_cond_wait(&sh->cv, &sh->mu), "cond_wait");
		check(pthread_mutex_unlock(&sh->mu), "unlock");
		break;
	case BARRIER: {
		int r = pthread_barrier_wait(&sh->bar);
		if (r != PTHREAD_BARRIER_SERIAL_THREAD)
			check(r, "barrier");
		break;
	}
	case RWLOCK:
		check(pthread_rwlock_rdlock(&sh->rw), "rdlock");
		check(pthread_rwlock_unlock(&sh->rw), "rwunlock");
		break;
	case SEM:
		if (sem_wait(&sh->sem))
			check(errno, "sem_wait");
		break;
	}
}

static void init_shared(void)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pthread_barrierattr_t ba;
	pthread_rwlockattr_t ra;

	check(pthread_mutexattr_init(&ma), "mutexattr_init");
	check(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED),
	      "mutexattr_setpshared");
	check(pthread_mutex_init(&sh->mu, &ma), "mutex_init");
	check(pthread_condattr_init(&ca), "condattr_init");
	check(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED),
	      "condattr_setpshared");
	check(pthread_cond_init(&sh->cv, &ca), "cond_init");
	check(pthread_barrierattr_init(&ba), "barrierattr_init");
	check(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED),
	      "barrierattr_setpshared");
	check(pthread_barrier_init(&sh->bar, &ba, 2), "barrier_init");
	check(pthread_rwlockattr_init(&ra), "rwlockattr_init");
	check(pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED),
	      "rwlockattr_setpshared");
	check(pthread_rwlock_init(&sh->rw, &ra), "rwlock_init");
	if (sem_init(&sh->sem, 1, 0))
		check(errno, "sem_init");
}

int main(int argc, char **argv)
{
	char fdarg[16];
	pid_t pid;
	int fd, status;

	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED,
			  atoi(argv[2]), 0);
		if (sh == MAP_FAILED)
			check(errno, "child mmap");
		return child();
	}
	fd = memfd_create("pshared_one_p", 0);
	if (fd < 0 || ftruncate(fd, sizeof *sh))
		check(errno, "memfd");
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		check(errno, "mmap");
	init_shared();
	snprintf(fdarg, sizeof fdarg, "%d", fd);
	char *args[] = { argv[0], "child", fdarg, NULL };
	check(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ),
	      "posix_spawn");

	for (int ph = 1; ph <= NPHASES; ph++) {
		pthread_t t;
		if (!await(&sh->held, ph, 30000)) {
			fprintf(stderr, "pshared_one_p: child not ready\n");
			return 1;
		}
		atomic_store(&other_ran, 0);
		check(pthread_create(&t, NULL, other, (void *)(intptr_t)ph),
		      "create");
		wait_on(ph);
		int ran = atomic_load(&other_ran);
		check(pthread_join(t, NULL), "join");
		printf("%s: another thread ran during the wait: %s\n",
		       phase_name[ph], ran ? "yes" : "no");
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pshared_one_p: child failed\n");
		return 1;
	}
	check(pthread_mutex_destroy(&sh->mu), "mutex_destroy");
	check(pthread_cond_destroy(&sh->cv), "cond_destroy");
	check(pthread_barrier_destroy(&sh->bar), "barrier_destroy");
	check(pthread_rwlock_destroy(&sh->rw), "rwlock_destroy");
	if (sem_destroy(&sh->sem))
		check(errno, "sem_destroy");
	return 0;
}
