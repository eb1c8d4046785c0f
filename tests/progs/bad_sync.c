// bad_sync: the synchronisation objects with bad input and in odd states:
// objects in zero-filled memory (glibc's static initialisers are zeros,
// so they must work, shared by threads; not spinlocks, whose free value
// is 1 on x86_64), barrier counts out of range,
// waits on a cond with a mutex the caller does not hold (EPERM for an
// error-checking one), timeouts out of range (EINVAL, the mutex still
// held), unknown clocks and attribute values, the C11 calls' answers for
// the same, and objects destroyed and made again. Then 100 threads show
// the runtime still works.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <limits.h>
#include <semaphore.h>
#include <threads.h>
#include <time.h>
#include "bad.h"

static struct timespec past = { 1, 0 };
static struct timespec bad_ns = { 0, 1000000000 };

/* ---- zero-filled objects shared by threads -------------------------------- */

struct zeroed {
	pthread_mutex_t m;
	pthread_cond_t c;
	pthread_rwlock_t rw;
	pthread_spinlock_t spin;
	pthread_once_t once;
	long n, rn, onces, turn;
};

static void count_once(void);
static struct zeroed *z;

static void count_once(void)
{
	z->onces++;
}

#define ZTHREADS 8
#define ZROUNDS 500

static void *zero_user(void *arg)
{
	long id = (long)(intptr_t)arg;

	pthread_once(&z->once, count_once);
	for (int i = 0; i < ZROUNDS; i++) {
		pthread_mutex_lock(&z->m);
		z->n++;
		pthread_mutex_unlock(&z->m);
		pthread_rwlock_wrlock(&z->rw);
		z->rn++;
		pthread_rwlock_unlock(&z->rw);
		pthread_rwlock_rdlock(&z->rw);
		pthread_rwlock_unlock(&z->rw);
	}
	/* take turns in id order on the zeroed cond */
	pthread_mutex_lock(&z->m);
	while (z->turn != id)
		pthread_cond_wait(&z->c, &z->m);
	z->turn++;
	pthread_cond_broadcast(&z->c);
	pthread_mutex_unlock(&z->m);
	return NULL;
}

static void zeroed(void)
{
	pthread_t t[ZTHREADS];

	z = mmap(NULL, sizeof *z, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	expect("zeroed mutex: trylock", pthread_mutex_trylock(&z->m), 0);
	expect("zeroed mutex: trylock held", pthread_mutex_trylock(&z->m),
	       EBUSY);
	expect("zeroed mutex: unlock", pthread_mutex_unlock(&z->m), 0);
	expect("zeroed cond: signal", pthread_cond_signal(&z->c), 0);
	expect("zeroed cond: broadcast", pthread_cond_broadcast(&z->c), 0);
	OK(pthread_mutex_lock(&z->m));
	expect("zeroed cond: timedwait, past",
	       pthread_cond_timedwait(&z->c, &z->m, &past), ETIMEDOUT);
	OK(pthread_mutex_unlock(&z->m));
	expect("zeroed rwlock: tryrdlock", pthread_rwlock_tryrdlock(&z->rw), 0);
	expect("zeroed rwlock: trywrlock while read",
	       pthread_rwlock_trywrlock(&z->rw), EBUSY);
	expect("zeroed rwlock: unlock", pthread_rwlock_unlock(&z->rw), 0);
	/* No zeros for a spinlock: glibc's x86_64 one is free at 1. */
	expect("spin_init", pthread_spin_init(&z->spin, 0), 0);
	expect("spin_lock", pthread_spin_lock(&z->spin), 0);
	expect("spin_trylock held", pthread_spin_trylock(&z->spin), EBUSY);
	expect("spin_unlock", pthread_spin_unlock(&z->spin), 0);
	expect("spin_destroy", pthread_spin_destroy(&z->spin), 0);
	for (long i = 0; i < ZTHREADS; i++)
		OK(pthread_create(&t[i], NULL, zero_user, (void *)(intptr_t)i));
	for (int i = 0; i < ZTHREADS; i++)
		OK(pthread_join(t[i], NULL));
	printf("zeroed objects, %d threads: mutex %ld, rwlock %ld, once %ld, "
	       "turns %ld\n",
	       ZTHREADS, z->n, z->rn, z->onces, z->turn);
	truth("zeroed objects: every count right",
	      z->n == ZTHREADS * ZROUNDS && z->rn == ZTHREADS * ZROUNDS &&
		      z->onces == 1 && z->turn == ZTHREADS);
	expect("zeroed mutex: destroy", pthread_mutex_destroy(&z->m), 0);
	expect("zeroed cond: destroy", pthread_cond_destroy(&z->c), 0);
	expect("zeroed rwlock: destroy", pthread_rwlock_destroy(&z->rw), 0);
	munmap(z, sizeof *z);
}

/* ---- barriers --------------------------------------------------------------- */

static void barriers(void)
{
	pthread_barrier_t b;
	pthread_barrierattr_t ba;

	expect("barrier count 0", pthread_barrier_init(&b, NULL, 0), EINVAL);
	expect("barrier count INT_MAX", pthread_barrier_init(&b, NULL, INT_MAX),
	       EINVAL);
	expect("barrier count INT_MAX - 1",
	       pthread_barrier_init(&b, NULL, INT_MAX - 1), 0);
	expect("its destroy", pthread_barrier_destroy(&b), 0);
	expect("barrier count UINT_MAX",
	       pthread_barrier_init(&b, NULL, UINT_MAX), EINVAL);
	OK(pthread_barrierattr_init(&ba));
	expect("barrierattr setpshared(42)",
	       pthread_barrierattr_setpshared(&ba, 42), EINVAL);
	OK(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED));
	expect("shared barrier count 0", pthread_barrier_init(&b, &ba, 0),
	       EINVAL);
	expect("shared barrier count INT_MAX",
	       pthread_barrier_init(&b, &ba, INT_MAX), EINVAL);
	expect("barrier count 1", pthread_barrier_init(&b, NULL, 1), 0);
	expect("wait alone", pthread_barrier_wait(&b),
	       PTHREAD_BARRIER_SERIAL_THREAD);
	expect("wait alone again", pthread_barrier_wait(&b),
	       PTHREAD_BARRIER_SERIAL_THREAD);
	expect("destroy", pthread_barrier_destroy(&b), 0);
	expect("init again, count 2", pthread_barrier_init(&b, NULL, 2), 0);
	expect("destroy", pthread_barrier_destroy(&b), 0);
}

/* ---- conds and mutexes ------------------------------------------------------ */

static void conds(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t ec = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_condattr_t ca;
	pthread_mutexattr_t ma;

	expect("cond wait, errorcheck mutex not held",
	       pthread_cond_wait(&c, &ec), EPERM);
	expect("cond timedwait, errorcheck mutex not held",
	       pthread_cond_timedwait(&c, &ec, &past), EPERM);
	expect("cond wait, recursive mutex not held",
	       pthread_cond_wait(&c, &rec), EPERM);
	OK(pthread_mutex_lock(&m));
	expect("cond timedwait, tv_nsec 1e9",
	       pthread_cond_timedwait(&c, &m, &bad_ns), EINVAL);
	expect("cond clockwait, clock 42",
	       pthread_cond_clockwait(&c, &m, 42, &past), EINVAL);
	expect("cond clockwait, PROCESS_CPUTIME_ID",
	       pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &past),
	       EINVAL);
	expect("cond clockwait MONOTONIC, tv_nsec -1",
	       pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC,
				      &(struct timespec){ 0, -1 }),
	       EINVAL);
	expect("cond timedwait, tv_sec -1",
	       pthread_cond_timedwait(&c, &m, &(struct timespec){ -1, 0 }),
	       ETIMEDOUT);
	expect("mutex still held: trylock", pthread_mutex_trylock(&m), EBUSY);
	OK(pthread_mutex_unlock(&m));

	OK(pthread_mutex_lock(&ec));
	expect("errorcheck timedlock held, tv_nsec 1e9",
	       pthread_mutex_timedlock(&ec, &bad_ns), EDEADLK);
	OK(pthread_mutex_unlock(&ec));
	expect("errorcheck unlock, not held", pthread_mutex_unlock(&ec), EPERM);
	expect("recursive unlock, not held", pthread_mutex_unlock(&rec), EPERM);

	OK(pthread_condattr_init(&ca));
	expect("condattr setclock PROCESS_CPUTIME_ID",
	       pthread_condattr_setclock(&ca, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
	expect("condattr setclock 42", pthread_condattr_setclock(&ca, 42),
	       EINVAL);
	OK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC));
	expect("cond destroy", pthread_cond_destroy(&c), 0);
	expect("cond init MONOTONIC", pthread_cond_init(&c, &ca), 0);
	OK(pthread_mutex_lock(&m));
	expect("MONOTONIC cond timedwait, past",
	       pthread_cond_timedwait(&c, &m, &past), ETIMEDOUT);
	OK(pthread_mutex_unlock(&m));
	expect("cond destroy", pthread_cond_destroy(&c), 0);
	OK(pthread_condattr_destroy(&ca));

	OK(pthread_mutexattr_init(&ma));
	expect("mutexattr settype(42)", pthread_mutexattr_settype(&ma, 42),
	       EINVAL);
	expect("mutexattr setrobust(42)", pthread_mutexattr_setrobust(&ma, 42),
	       EINVAL);
	expect("mutexattr setprotocol(42)",
	       pthread_mutexattr_setprotocol(&ma, 42), EINVAL);
	expect("mutexattr setpshared(42)",
	       pthread_mutexattr_setpshared(&ma, 42), EINVAL);
	expect("mutex init, attr untouched by the refusals",
	       pthread_mutex_init(&m, &ma), 0);
	expect("its trylock", pthread_mutex_trylock(&m), 0);
	expect("its unlock", pthread_mutex_unlock(&m), 0);
	expect("its destroy", pthread_mutex_destroy(&m), 0);
	OK(pthread_mutexattr_destroy(&ma));

	pthread_rwlockattr_t ra;
	pthread_rwlock_t rw;
	OK(pthread_rwlockattr_init(&ra));
	expect("rwlockattr setkind_np(42)",
	       pthread_rwlockattr_setkind_np(&ra, 42), EINVAL);
	expect("rwlockattr setpshared(42)",
	       pthread_rwlockattr_setpshared(&ra, 42), EINVAL);
	expect("rwlock init", pthread_rwlock_init(&rw, &ra), 0);
	expect("rwlock timedwrlock free, tv_nsec 1e9",
	       pthread_rwlock_timedwrlock(&rw, &bad_ns), EINVAL);
	expect("rwlock destroy", pthread_rwlock_destroy(&rw), 0);
	OK(pthread_rwlockattr_destroy(&ra));
}

/* ---- semaphores ------------------------------------------------------------- */

static void sems(void)
{
	sem_t s;
	int v = -1;

	EXPECT_ERRNO("sem_init SEM_VALUE_MAX + 1",
		     sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1), EINVAL);
	EXPECT_ERRNO("sem_init UINT_MAX", sem_init(&s, 0, UINT_MAX), EINVAL);
	EXPECT_RET("sem_init 0", sem_init(&s, 0, 0), 0, 0);
	EXPECT_ERRNO("sem_timedwait, tv_nsec 1e9", sem_timedwait(&s, &bad_ns),
		     EINVAL);
	EXPECT_ERRNO("sem_timedwait, tv_nsec -1",
		     sem_timedwait(&s, &(struct timespec){ 0, -1 }), EINVAL);
	EXPECT_ERRNO("sem_timedwait, tv_sec -1",
		     sem_timedwait(&s, &(struct timespec){ -1, 0 }), ETIMEDOUT);
	EXPECT_ERRNO("sem_clockwait, clock 42",
		     sem_clockwait(&s, 42, &past), EINVAL);
	EXPECT_ERRNO("sem_trywait", sem_trywait(&s), EAGAIN);
	EXPECT_RET("sem_destroy", sem_destroy(&s), 0, 0);
	EXPECT_RET("sem_init again, 1", sem_init(&s, 0, 1), 0, 0);
	EXPECT_RET("sem_trywait", sem_trywait(&s), 0, 0);
	EXPECT_RET("sem_getvalue", sem_getvalue(&s, &v), 0, 0);
	truth("value 0", v == 0);
	EXPECT_RET("sem_destroy", sem_destroy(&s), 0, 0);
}

/* ---- C11 -------------------------------------------------------------------- */

static const char *thrd_name(int r)
{
	switch (r) {
	case thrd_success: return "thrd_success";
	case thrd_error: return "thrd_error";
	case thrd_nomem: return "thrd_nomem";
	case thrd_timedout: return "thrd_timedout";
	case thrd_busy: return "thrd_busy";
	}
	return "thrd_?";
}

static void expect_thrd(const char *what, int got, int want)
{
	printf("%s: %s\n", what, thrd_name(got));
	if (got != want) {
		fprintf(stderr, "%s: got %s", what, thrd_name(got));
		fprintf(stderr, ", want %s\n", thrd_name(want));
		failures++;
	}
}

static void c11(void)
{
	mtx_t m;
	cnd_t c;

	/* glibc takes any type: a plain mutex unless it says recursive */
	expect_thrd("mtx_init type 42", mtx_init(&m, 42), thrd_success);
	expect_thrd("its lock", mtx_lock(&m), thrd_success);
	expect_thrd("its trylock held", mtx_trylock(&m), thrd_busy);
	expect_thrd("its unlock", mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);
	expect_thrd("mtx_init recursive alone", mtx_init(&m, mtx_recursive),
		    thrd_success);
	expect_thrd("its lock", mtx_lock(&m), thrd_success);
	expect_thrd("its trylock held", mtx_trylock(&m), thrd_success);
	expect_thrd("its unlock", mtx_unlock(&m), thrd_success);
	expect_thrd("its unlock", mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);
	expect_thrd("mtx_init timed", mtx_init(&m, mtx_timed), thrd_success);
	expect_thrd("mtx_lock", mtx_lock(&m), thrd_success);
	expect_thrd("mtx_timedlock held, tv_nsec 1e9",
		    mtx_timedlock(&m, &bad_ns), thrd_error);
	expect_thrd("mtx_trylock held", mtx_trylock(&m), thrd_busy);
	expect_thrd("cnd_init", cnd_init(&c), thrd_success);
	expect_thrd("cnd_timedwait, tv_nsec 1e9", cnd_timedwait(&c, &m, &bad_ns),
		    thrd_error);
	expect_thrd("cnd_timedwait, past", cnd_timedwait(&c, &m, &past),
		    thrd_timedout);
	expect_thrd("mtx_unlock", mtx_unlock(&m), thrd_success);
	expect_thrd("cnd_signal, no waiter", cnd_signal(&c), thrd_success);
	cnd_destroy(&c);
	mtx_destroy(&m);
}

int main(void)
{
	bad_start();
	zeroed();
	barriers();
	conds();
	sems();
	c11();
	return bad_finish("bad_sync");
}
