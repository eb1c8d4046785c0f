// keys: pthread_key_create/setspecific/getspecific/key_delete with
// destructors in many threads; destructors that re-set their value;
// pthread_once raced by many threads.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "keys: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)
#define OK(call) do { int e_ = (call); if (e_) { \
	fprintf(stderr, "keys: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, strerror(e_)); \
	exit(1); } } while (0)

#define ROUNDS 4
#define NTHR 50

static void spawn_join(int n, void *(*fn)(void *))
{
	pthread_t t[n];
	for (intptr_t i = 0; i < n; i++)
		OK(pthread_create(&t[i], NULL, fn, (void *)i));
	for (int i = 0; i < n; i++)
		OK(pthread_join(t[i], NULL));
}

/* ---- 1. a destructor per value; NULL values get no destructor call ------- */
static pthread_key_t k_val, k_null;
static atomic_int val_calls, null_calls;
static atomic_long val_sum;
static atomic_int round_base;

static void val_dtor(void *p)
{
	atomic_fetch_add(&val_calls, 1);
	atomic_fetch_add(&val_sum, *(int *)p);
	free(p);
}

static void null_dtor(void *p)
{
	(void)p;
	atomic_fetch_add(&null_calls, 1);
}

static void *val_thread(void *arg)
{
	int id = atomic_load(&round_base) + (int)(intptr_t)arg;
	CHECK(pthread_getspecific(k_val) == NULL);
	CHECK(pthread_getspecific(k_null) == NULL);
	int *p = malloc(sizeof *p);
	CHECK(p);
	*p = id;
	OK(pthread_setspecific(k_val, p));
	OK(pthread_setspecific(k_null, &val_calls));
	sched_yield();
	CHECK(pthread_getspecific(k_val) == p && *p == id);
	CHECK(pthread_getspecific(k_null) == &val_calls);
	OK(pthread_setspecific(k_null, NULL));
	return NULL;
}

/* ---- 2. destructors that set their key again ------------------------------- */
struct rec { int calls, limit; };
static pthread_key_t k_twice, k_always;
static struct rec twice[NTHR], always[NTHR];

static void twice_dtor(void *p)
{
	struct rec *r = p;
	if (++r->calls < r->limit)
		OK(pthread_setspecific(k_twice, r));
}

static void always_dtor(void *p)
{
	struct rec *r = p;
	r->calls++;
	OK(pthread_setspecific(k_always, r));
}

static void *reset_thread(void *arg)
{
	intptr_t i = (intptr_t)arg;
	twice[i].limit = 3;
	OK(pthread_setspecific(k_twice, &twice[i]));
	OK(pthread_setspecific(k_always, &always[i]));
	return NULL;
}

/* ---- 3. key_delete while a thread holds a value ---------------------------- */
static pthread_key_t k_del, k_new;
static atomic_int del_calls;
static pthread_barrier_t bar;

static void del_dtor(void *p)
{
	(void)p;
	atomic_fetch_add(&del_calls, 1);
}

static void *del_thread(void *arg)
{
	OK(pthread_setspecific(k_del, arg));
	pthread_barrier_wait(&bar);   /* main deletes k_del, creates k_new */
	pthread_barrier_wait(&bar);
	CHECK(pthread_getspecific(k_new) == NULL);
	OK(pthread_setspecific(k_new, arg));
	CHECK(pthread_getspecific(k_new) == arg);
	return NULL;
}

/* ---- 4. many keys at once ------------------------------------------------ */
#define NKEYS 200
static pthread_key_t many[NKEYS];

static void *many_thread(void *arg)
{
	char *base = (char *)arg;   /* distinct per thread, never dereferenced */
	for (int k = 0; k < NKEYS; k++)
		OK(pthread_setspecific(many[k], base + k));
	sched_yield();
	for (int k = 0; k < NKEYS; k++)
		CHECK(pthread_getspecific(many[k]) == base + k);
	return NULL;
}

/* ---- 5. pthread_once raced ----------------------------------------------- */
#define ONCE_ROUNDS 8
#define ONCE_THR 32
static pthread_once_t once[ONCE_ROUNDS];
static atomic_int once_round, init_calls, init_done[ONCE_ROUNDS];
static pthread_barrier_t once_bar;

static void once_init(void)
{
	int r = atomic_load(&once_round);
	atomic_fetch_add(&init_calls, 1);
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);   /* let the others pile up on the once */
	atomic_store(&init_done[r], 1);
}

static void *once_thread(void *arg)
{
	(void)arg;
	int r = atomic_load(&once_round);
	pthread_barrier_wait(&once_bar);
	OK(pthread_once(&once[r], once_init));
	CHECK(atomic_load(&init_done[r]) == 1);
	return NULL;
}

int main(void)
{
	/* 1 */
	OK(pthread_key_create(&k_val, val_dtor));
	OK(pthread_key_create(&k_null, null_dtor));
	CHECK(k_val != k_null);
	for (int r = 0; r < ROUNDS; r++) {
		atomic_store(&round_base, r * NTHR);
		spawn_join(NTHR, val_thread);
	}
	long n = ROUNDS * NTHR;
	printf("destructors: %d calls, value sum %ld\n", atomic_load(&val_calls),
	       atomic_load(&val_sum));
	printf("NULL values: %d destructor calls\n", atomic_load(&null_calls));
	CHECK(atomic_load(&val_calls) == n);
	CHECK(atomic_load(&val_sum) == n * (n - 1) / 2);
	CHECK(atomic_load(&null_calls) == 0);
	OK(pthread_key_delete(k_val));
	OK(pthread_key_delete(k_null));

	/* 2 */
	OK(pthread_key_create(&k_twice, twice_dtor));
	OK(pthread_key_create(&k_always, always_dtor));
	spawn_join(NTHR, reset_thread);
	for (int i = 1; i < NTHR; i++)
		CHECK(twice[i].calls == twice[0].calls && always[i].calls == always[0].calls);
	printf("destructor re-setting twice: %d calls per thread\n", twice[0].calls);
	printf("destructor always re-setting: %d calls per thread (PTHREAD_DESTRUCTOR_ITERATIONS %d)\n",
	       always[0].calls, PTHREAD_DESTRUCTOR_ITERATIONS);
	CHECK(twice[0].calls == 3);
	CHECK(always[0].calls >= PTHREAD_DESTRUCTOR_ITERATIONS);
	OK(pthread_key_delete(k_twice));
	OK(pthread_key_delete(k_always));

	/* 3 */
	static int x, y;
	pthread_t t;
	OK(pthread_barrier_init(&bar, NULL, 2));
	OK(pthread_key_create(&k_del, del_dtor));
	OK(pthread_setspecific(k_del, &x));
	OK(pthread_create(&t, NULL, del_thread, &y));
	pthread_barrier_wait(&bar);
	OK(pthread_key_delete(k_del));
	OK(pthread_key_create(&k_new, NULL));
	CHECK(pthread_getspecific(k_new) == NULL);
	pthread_barrier_wait(&bar);
	OK(pthread_join(t, NULL));
	printf("key_delete: %d destructor calls, a new key reads NULL everywhere\n",
	       atomic_load(&del_calls));
	CHECK(atomic_load(&del_calls) == 0);
	OK(pthread_key_delete(k_new));
	OK(pthread_barrier_destroy(&bar));

	/* 4 */
	static char area[8][NKEYS];
	pthread_t mt[8];
	for (int k = 0; k < NKEYS; k++)
		OK(pthread_key_create(&many[k], NULL));
	for (int k = 1; k < NKEYS; k++)
		CHECK(many[k] != many[k - 1]);
	for (int i = 0; i < 8; i++)
		OK(pthread_create(&mt[i], NULL, many_thread, area[i]));
	for (int i = 0; i < 8; i++)
		OK(pthread_join(mt[i], NULL));
	for (int k = 0; k < NKEYS; k++) {
		CHECK(pthread_getspecific(many[k]) == NULL);
		OK(pthread_key_delete(many[k]));
	}
	printf("%d keys x 8 threads: values kept apart\n", NKEYS);

	/* 5 */
	OK(pthread_barrier_init(&once_bar, NULL, ONCE_THR));
	for (int r = 0; r < ONCE_ROUNDS; r++) {
		once[r] = (pthread_once_t)PTHREAD_ONCE_INIT;
		atomic_store(&once_round, r);
		spawn_join(ONCE_THR, once_thread);
		CHECK(atomic_load(&init_calls) == r + 1);
	}
	OK(pthread_barrier_destroy(&once_bar));
	printf("pthread_once: %d rounds x %d threads, init ran %d times\n",
	       ONCE_ROUNDS, ONCE_THR, atomic_load(&init_calls));
	printf("OK\n");
	return 0;
}
