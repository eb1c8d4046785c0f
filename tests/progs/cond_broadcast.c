// cond_broadcast: every broadcast wakes every waiter. Rounds: waiters sleep
// until the round number changes, the main thread starts a round with one
// broadcast and waits (on a second condition variable) until all waiters
// have seen it. Then POSIX's own destroy pattern, many times over: waiters
// sleep on a condition variable inside a heap object; the deleter
// broadcasts, unlocks, destroys and frees it while the woken waiters have
// yet to take the mutex back (they must not touch the object again), and
// the same with destroy called while the deleter still holds the mutex.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAITERS 100
#define ROUNDS 300

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t round_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t ack_cv = PTHREAD_COND_INITIALIZER;
static int round_no, acks;
static long seen_total;

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "cond_broadcast: %s: error %d\n", what, err);
		exit(1);
	}
}

static void *round_waiter(void *arg)
{
	int seen = 0;
	(void)arg;
	check(pthread_mutex_lock(&mu), "lock");
	while (seen < ROUNDS) {
		while (round_no == seen)
			check(pthread_cond_wait(&round_cv, &mu), "wait");
		seen = round_no;
		seen_total++;
		if (++acks == WAITERS)
			check(pthread_cond_signal(&ack_cv), "signal");
	}
	check(pthread_mutex_unlock(&mu), "unlock");
	return NULL;
}

static void rounds(void)
{
	pthread_t t[WAITERS];
	for (int i = 0; i < WAITERS; i++)
		check(pthread_create(&t[i], NULL, round_waiter, NULL), "create");
	check(pthread_mutex_lock(&mu), "lock");
	for (int r = 1; r <= ROUNDS; r++) {
		acks = 0;
		round_no = r;
		check(pthread_cond_broadcast(&round_cv), "broadcast");
		while (acks < WAITERS)
			check(pthread_cond_wait(&ack_cv, &mu), "wait ack");
	}
	check(pthread_mutex_unlock(&mu), "unlock");
	for (int i = 0; i < WAITERS; i++)
		check(pthread_join(t[i], NULL), "join");
	printf("rounds: %d waiters saw %ld of %d broadcasts\n", WAITERS,
	       seen_total, WAITERS * ROUNDS);
	if (seen_total != WAITERS * ROUNDS)
		exit(1);
}

/* ---- destroy right after the broadcast -------------------------------------- */
#define ELTS 400
#define ELT_WAITERS 4

struct elt {
	int busy;
	pthread_cond_t notbusy;
	char pad[64]; /* the freed memory is reused by the next element */
};

static struct elt *current;
static int gone; /* waiters that saw their element deleted */

static void *elt_waiter(void *arg)
{
	struct elt *e = arg;
	check(pthread_mutex_lock(&mu), "lock");
	while (current == e && e->busy)
		check(pthread_cond_wait(&e->notbusy, &mu), "wait");
	/* e may be freed now: look only at current. */
	gone++;
	check(pthread_mutex_unlock(&mu), "unlock");
	return NULL;
}

static void destroy_after_broadcast(int destroy_locked)
{
	pthread_t t[ELT_WAITERS];
	gone = 0;
	for (int n = 0; n < ELTS; n++) {
		struct elt *e = malloc(sizeof *e);
		memset(e, 0xa5, sizeof *e);
		e->busy = 1;
		check(pthread_cond_init(&e->notbusy, NULL), "cond_init");
		check(pthread_mutex_lock(&mu), "lock");
		current = e;
		check(pthread_mutex_unlock(&mu), "unlock");
		for (int i = 0; i < ELT_WAITERS; i++)
			check(pthread_create(&t[i], NULL, elt_waiter, e),
			      "create");
		/* Let some of them sleep. */
		for (int i = 0; i < n % 3; i++)
			sched_yield();
		check(pthread_mutex_lock(&mu), "lock");
		current = NULL;
		e->busy = 0;
		check(pthread_cond_broadcast(&e->notbusy), "broadcast");
		if (destroy_locked) {
			check(pthread_cond_destroy(&e->notbusy), "destroy");
			check(pthread_mutex_unlock(&mu), "unlock");
		} else {
			check(pthread_mutex_unlock(&mu), "unlock");
			check(pthread_cond_destroy(&e->notbusy), "destroy");
		}
		memset(e, 0x5a, sizeof *e);
		free(e);
		for (int i = 0; i < ELT_WAITERS; i++)
			check(pthread_join(t[i], NULL), "join");
	}
	printf("destroy %s: %d waiters left their deleted element\n",
	       destroy_locked ? "holding the mutex" : "after unlock", gone);
	if (gone != ELTS * ELT_WAITERS)
		exit(1);
}

int main(void)
{
	rounds();
	destroy_after_broadcast(0);
	destroy_after_broadcast(1);
	return 0;
}
