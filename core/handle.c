/*
 * handle.c: which goroutine a pthread_t names, without asking the kernel.
 *
 * A pthread_t is the address of a TCB. g_from_handle must not read a
 * handle's memory before it knows the memory is there (a handle outlives
 * its thread: g.c), and asking the kernel costs a system call on every
 * pthread_join, pthread_kill and pthread_detach. So the TCBs goshim builds
 * are kept here, TCB to G, from the stack's mapping to its unmapping: a
 * handle found here needs no probe, because a G is never freed and says
 * which TCB it has now.
 *
 * The table is a cache, and may miss: writers hold sched.alllock, readers
 * take no lock and may meet an entry that moves (a delete shifts the run
 * after it back, with no tombstones), or a key and a G from two writes;
 * the caller checks the G's own TCB and asks the kernel on any doubt.
 * It only grows (doubling at half full), and an outgrown table stays
 * allocated, since a reader may still be in it: all of them together are
 * less than twice the largest.
 */
#include <stdlib.h>
#include "runtime.h"
#include "runtime2.h"

#define HANDLE_MIN_SLOTS 64

struct handle_slot {
	_Atomic uintptr_t tcb; /* 0: empty */
	struct g *_Atomic gp;
};

struct handle_table {
	size_t mask; /* slots - 1 */
	size_t used;
	struct handle_table *outgrown;
	struct handle_slot slot[];
};

static _Atomic(struct handle_table *) table;

static size_t home(const struct handle_table *t, uintptr_t tcb)
{
	/* TCBs are aligned and a stack apart: the high bits of a
	 * multiplicative hash spread them. */
	return (size_t)(((uint64_t)tcb * 0x9e3779b97f4a7c15ull) >> 32) &
	       t->mask;
}

static void put(struct handle_table *t, uintptr_t tcb, struct g *gp)
{
	size_t i = home(t, tcb);

	while (atomic_load_explicit(&t->slot[i].tcb, memory_order_relaxed))
		i = (i + 1) & t->mask;
	atomic_store_explicit(&t->slot[i].gp, gp, memory_order_relaxed);
	atomic_store_explicit(&t->slot[i].tcb, tcb, memory_order_release);
	t->used++;
}

/* Under alllock. Out of memory, the table stays as it is: lookups of the
 * new handle miss and ask the kernel. */
static struct handle_table *room_for_one(void)
{
	struct handle_table *t = atomic_load_explicit(&table,
						      memory_order_relaxed);
	if (t && 2 * (t->used + 1) <= t->mask + 1)
		return t;
	size_t slots = t ? 2 * (t->mask + 1) : HANDLE_MIN_SLOTS;
	struct handle_table *n =
		calloc(1, sizeof *n + slots * sizeof n->slot[0]);
	if (n == NULL)
		return t && t->used < t->mask ? t : NULL;
	n->mask = slots - 1;
	n->outgrown = t;
	for (size_t i = 0; t && i <= t->mask; i++) {
		uintptr_t tcb = atomic_load_explicit(&t->slot[i].tcb,
						     memory_order_relaxed);
		if (tcb)
			put(n, tcb,
			    atomic_load_explicit(&t->slot[i].gp,
						 memory_order_relaxed));
	}
	atomic_store_explicit(&table, n, memory_order_release);
	return n;
}

void handle_add(void *tcb, struct g *gp)
{
	rlock_lock(&sched.alllock);
	struct handle_table *t = room_for_one();
	if (t)
		put(t, (uintptr_t)tcb, gp);
	rlock_unlock(&sched.alllock);
}

/* Under alllock. Linear probing's delete: the entries after the hole
 * that belong before it move back into it, so a probe still ends at the
 * first empty slot. */
void handle_del_locked(void *tcb)
{
	struct handle_table *t = atomic_load_explicit(&table,
						      memory_order_relaxed);
	if (t == NULL)
		return;
	size_t i = home(t, (uintptr_t)tcb), n = 0;
	while (atomic_load_explicit(&t->slot[i].tcb, memory_order_relaxed) !=
	       (uintptr_t)tcb) {
		if (!atomic_load_explicit(&t->slot[i].tcb,
					  memory_order_relaxed) ||
		    ++n > t->mask)
			return; /* not kept (no memory when it was made) */
		i = (i + 1) & t->mask;
	}
	for (size_t j = (i + 1) & t->mask;; j = (j + 1) & t->mask) {
		uintptr_t k = atomic_load_explicit(&t->slot[j].tcb,
						   memory_order_relaxed);
		if (k == 0)
			break;
		/* k may fill the hole at i if its home is not in (i, j]. */
		size_t h = home(t, k);
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		atomic_store_explicit(
			&t->slot[i].gp,
			atomic_load_explicit(&t->slot[j].gp,
					     memory_order_relaxed),
			memory_order_relaxed);
		atomic_store_explicit(&t->slot[i].tcb, k,
				      memory_order_release);
		i = j;
	}
	atomic_store_explicit(&t->slot[i].tcb, 0, memory_order_release);
	t->used--;
}

struct g *handle_find(uintptr_t tcb)
{
	struct handle_table *t = atomic_load_explicit(&table,
						      memory_order_acquire);
	if (t == NULL || tcb == 0)
		return NULL;
	size_t i = home(t, tcb);
	for (size_t n = 0; n <= t->mask; n++, i = (i + 1) & t->mask) {
		uintptr_t k = atomic_load_explicit(&t->slot[i].tcb,
						   memory_order_acquire);
		if (k == tcb)
			return atomic_load_explicit(&t->slot[i].gp,
						    memory_order_relaxed);
		if (k == 0)
			break;
	}
	return NULL;
}
