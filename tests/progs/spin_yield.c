// spin_yield: a spinlock holder that sleeps while four threads spin for the
// lock, ten times over, with GOMAXPROCS=1. A spinner must give way: under
// goshim all five share one P, so a spinner that kept it would never let the
// sleeping holder run again to unlock.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+3
// goshim-test: timeout=30
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define SPINNERS 4
#define ROUNDS 10

static pthread_spinlock_t lock;
static atomic_int waiting;
static long inside;

static void *spinner(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		atomic_fetch_add(&waiting, 1);
		pthread_spin_lock(&lock);
		inside++;
		pthread_spin_unlock(&lock);
		atomic_fetch_sub(&waiting, 1);
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[SPINNERS];
	int blocked = 0;

	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_lock(&lock);
	for (int i = 0; i < SPINNERS; i++)
		pthread_create(&t[i], NULL, spinner, NULL);
	for (int r = 0; r < ROUNDS * 2; r++) {
		/* Hold it across a sleep while the others spin. */
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
		blocked += atomic_load(&waiting) > 0;
		pthread_spin_unlock(&lock);
		nanosleep(&ts, NULL);
		pthread_spin_lock(&lock);
	}
	pthread_spin_unlock(&lock);
	for (int i = 0; i < SPINNERS; i++)
		pthread_join(t[i], NULL);
	printf("spinners got in %ld times\n", inside);
	printf("spinners waited while we slept: %s\n", blocked ? "yes" : "no");
	return inside == SPINNERS * ROUNDS && blocked ? 0 : 1;
}
