/*
 * keys.c: pthread keys (thread-specific data) stored per goroutine.
 *
 * glibc keeps key values in the TCB and runs destructors in start_thread,
 * which goroutines never pass through, so goshim keeps values per G. Key
 * numbers still come from glibc's table (shim/pthread_key.c), so a thread
 * goshim did not create uses the same key through glibc. Each key has a
 * sequence number, odd while in use, bumped on create and delete, and
 * per-G values are tagged with the sequence they were set under, so a
 * value set under a deleted key is never seen through a new key with the
 * same index (glibc's scheme). A G's values live in blocks of 32 slots
 * allocated on first use.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "real.h"
#include "runtime.h"
#include "runtime2.h"

#define KEYS_MAX (KEY_L2 * (KEY_L2 + 1)) /* 1056 >= PTHREAD_KEYS_MAX */
#define NKEYS (PTHREAD_KEYS_MAX < KEYS_MAX ? PTHREAD_KEYS_MAX : KEYS_MAX)
#define DESTRUCTOR_ROUNDS PTHREAD_DESTRUCTOR_ITERATIONS

struct key_def {
	_Atomic uintptr_t seq; /* odd: in use */
	void (*_Atomic destructor)(void *);
};

static struct key_def keytab[NKEYS];
static struct spinlock keylock; /* serialises create and delete */

/* In the child of fork: the thread that held it is gone. */
void keys_fork_child(void)
{
	atomic_store(&keylock.v, 0);
}

void keys_register(unsigned key, void (*destructor)(void *))
{
	spin_lock(&keylock);
	uintptr_t seq = atomic_load(&keytab[key].seq);
	atomic_store(&keytab[key].destructor, destructor);
	atomic_store(&keytab[key].seq, (seq & 1) ? seq + 2 : seq + 1);
	spin_unlock(&keylock);
}

void keys_unregister(unsigned key)
{
	spin_lock(&keylock);
	uintptr_t seq = atomic_load(&keytab[key].seq);
	if (seq & 1)
		atomic_store(&keytab[key].seq, seq + 1);
	spin_unlock(&keylock);
}

void keys_adopt_thread(struct g *gp)
{
	/* Keys made and set before the runtime ran (another library's
	 * constructor, a sanitizer's start-up) hold their values in glibc,
	 * for this thread: they become the goroutine's. */
	for (unsigned key = 0; key < NKEYS; key++) {
		if (!(atomic_load(&keytab[key].seq) & 1))
			continue;
		void *v = real.pthread_getspecific(key);
		if (v)
			keys_set(gp, key, v);
	}
}

bool keys_valid(unsigned key)
{
	return key < NKEYS && (atomic_load(&keytab[key].seq) & 1);
}

static struct key_slot *slot(struct g *gp, unsigned key, bool alloc)
{
	unsigned hi = key / KEY_L2, lo = key % KEY_L2;
	if (gp->keys == NULL) {
		if (!alloc)
			return NULL;
		gp->keys = calloc(KEY_L2 + 1, sizeof *gp->keys);
		if (gp->keys == NULL)
			return NULL;
	}
	if (gp->keys[hi] == NULL) {
		if (!alloc)
			return NULL;
		gp->keys[hi] = calloc(KEY_L2, sizeof(struct key_slot));
		if (gp->keys[hi] == NULL)
			return NULL;
	}
	return &gp->keys[hi][lo];
}

void *keys_get(struct g *gp, unsigned key)
{
	struct key_slot *s;

	if (key >= NKEYS)
		return NULL;
	s = slot(gp, key, false);
	if (s == NULL || s->value == NULL)
		return NULL;
	if (s->seq != atomic_load_explicit(&keytab[key].seq,
					   memory_order_relaxed)) {
		s->value = NULL; /* set under a key deleted since */
		return NULL;
	}
	return s->value;
}

int keys_set(struct g *gp, unsigned key, const void *value)
{
	struct key_slot *s;
	uintptr_t seq;

	if (key >= NKEYS)
		return EINVAL;
	seq = atomic_load(&keytab[key].seq);
	if (!(seq & 1))
		return EINVAL;
	s = slot(gp, key, value != NULL);
	if (s == NULL)
		return value ? ENOMEM : 0;
	s->seq = seq;
	s->value = (void *)value;
	if (value)
		gp->keys_used = true;
	return 0;
}

/* POSIX: call each non-NULL value's destructor (value cleared first), and
 * repeat while destructors set new values, up to the iteration limit. */
void keys_run_destructors(struct g *gp)
{
	if (!gp->keys_used)
		return;
	for (int round = 0; round < DESTRUCTOR_ROUNDS; round++) {
		bool again = false;
		for (unsigned k = 0; k < NKEYS; k++) {
			struct key_slot *s = slot(gp, k, false);
			if (s == NULL) {
				k += KEY_L2 - 1 - k % KEY_L2;
				continue;
			}
			void *v = s->value;
			if (v == NULL)
				continue;
			s->value = NULL;
			uintptr_t seq = atomic_load(&keytab[k].seq);
			void (*d)(void *) = atomic_load(&keytab[k].destructor);
			if (s->seq != seq || !(seq & 1) || d == NULL)
				continue;
			d(v);
			again = true;
		}
		if (!again)
			break;
	}
}

/* A dead G about to run a new thread: its blocks stay, their values go. */
void keys_reset(struct g *gp)
{
	if (gp->keys_used) {
		for (int i = 0; i <= KEY_L2; i++)
			if (gp->keys[i])
				memset(gp->keys[i], 0,
				       KEY_L2 * sizeof(struct key_slot));
		gp->keys_used = false;
	}
}
