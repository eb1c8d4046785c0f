/*
 * futex.c: goroutines waiting on private futex words, parked in a table
 * keyed by address (Go's semaRoot idea, as sema.c), with the kernel's
 * semantics for the waiters it holds; shim/futex.c says who waits here
 * and how the kernel's own waiters are reached too.
 *
 * A table of its own, not sema.c's: the keys are the program's words,
 * which may be the very words goshim keys its objects' queues by (a raw
 * futex on a sem_t's value), and a futex wake must never meet a
 * semaphore's waiter or the reverse. Each waiter is a struct waiter
 * (waiter.h: claim under the bucket lock, deliver after it) with the
 * bitset it waits for. A requeue moves waiters between buckets, changing
 * their key under both locks; a waiter that leaves by itself (deadline,
 * signal) finds its bucket again from its key.
 *
 * The value check is atomic with respect to wakers as the kernel's: the
 * bucket lock is taken, then the word read and compared, then the waiter
 * queued; a waker changes the word before it takes the same lock.
 *
 * A futex wake is async-signal-safe, so a signal handler may wake while
 * the code it interrupted, on this thread, holds a bucket lock here. So
 * whoever takes a lock here first marks its thread (its goroutine's: TLS
 * is per goroutine) inside; a call that finds its own thread inside
 * takes no lock: a wake marks the bucket and wakes every waiter in it
 * later (spurious wakeups are a futex's right), which the interrupted
 * code does as it leaves; a wait is the kernel's (FUTEX_NOT_HERE).
 *
 * Shared futexes are here too where the kernel keys them as private ones
 * (a private anonymous page: futex_private_page), under keys of their own:
 * libstdc++'s std::atomic wait and notify use shared futex calls on
 * whatever memory the atomic is in.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "futex.h"
#include "netpoll.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "waiter.h"

#define FUTEXTAB_SIZE 251

struct fwaiter {
	struct waiter w; /* w.key: the word; w.next: its bucket's queue */
	uint32_t bitset;
};

/* waiting counts the waiters queued here and those on their way in: a
 * wake that finds it zero takes no lock (futex_wake). */
struct fbucket {
	struct spinlock lock;
	_Atomic int32_t waiting;
	struct waitq q;
} __attribute__((aligned(64)));

static struct fbucket futextab[FUTEXTAB_SIZE];

/* Buckets whose waiters a nested wake left to wake, one bit each. */
static _Atomic uint64_t deferred[(FUTEXTAB_SIZE + 63) / 64];
static _Atomic bool deferred_any;

static __thread volatile sig_atomic_t inside;

/* /proc/self/pagemap, opened before the program runs (and in a child of
 * fork, whose own it must be): an open later would take, for an instant,
 * the lowest free fd, which an open of the program's should have had. */
static struct kept_file pagemap = { .fd = -1 };
static const struct kept_ops hidden = { fd_runtime_open_ro,
					fd_runtime_close };

void futex_pagemap_open(void)
{
	kept_open(&pagemap, "/proc/self/pagemap", &hidden);
}

/* Present (bit 63) and neither a file's page nor shared memory (bit 61):
 * the kernel keys a shared futex there by this process and address, as a
 * private one. A page never written may be the shared zero page, which
 * counts as not private: its waits stay in the kernel. */
bool futex_private_page(const void *addr)
{
	static long pagesize;
	struct stat st;
	uint64_t e;

	if (pagesize == 0)
		pagesize = sysconf(_SC_PAGESIZE);
	if (pagemap.fd < 0 || SYS2(SYS_fstat, pagemap.fd, &st) != 0 ||
	    st.st_dev != pagemap.dev || st.st_ino != pagemap.ino)
		return false;
	off_t off = (off_t)((uintptr_t)addr / (uintptr_t)pagesize * 8);
	if (sys_pread(pagemap.fd, &e, sizeof e, off) != sizeof e)
		return false;
	return (e >> 63 & 1) && !(e >> 61 & 1);
}

void futex_fork_child(void)
{
	pagemap.fd = -1; /* the parent's: netpoll_fork_child closes it */
	memset(futextab, 0, sizeof futextab);
	for (size_t i = 0; i < sizeof deferred / sizeof deferred[0]; i++)
		atomic_store(&deferred[i], 0);
	atomic_store(&deferred_any, false);
}

/* A shared futex's key is its address plus one (words are 4-aligned):
 * the kernel never matches a shared wait with a private wake, or the
 * reverse. */
static const void *key_for(const void *addr, bool shared)
{
	return (const char *)addr + shared;
}

static struct fbucket *bucket_of(const void *addr)
{
	return &futextab[((uintptr_t)addr >> 2) % FUTEXTAB_SIZE];
}

static const void *key_of(const struct waiter *w)
{
	return __atomic_load_n(&w->key, __ATOMIC_RELAXED);
}

static struct fwaiter *fw_of(struct waiter *w)
{
	return (struct fwaiter *)((char *)w - offsetof(struct fwaiter, w));
}

static bool enter(void)
{
	if (inside)
		return false;
	inside = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}

static void run_deferred(void);

static void leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	inside = 0;
	atomic_signal_fence(memory_order_seq_cst);
	run_deferred();
}

static void defer_bucket(struct fbucket *b)
{
	size_t i = (size_t)(b - futextab);
	atomic_fetch_or(&deferred[i / 64], (uint64_t)1 << (i % 64));
	atomic_store(&deferred_any, true);
}

/* Both buckets, lower first; one lock if they are the same. */
static void lock2(struct fbucket *a, struct fbucket *b)
{
	if (a > b) {
		struct fbucket *t = a;
		a = b;
		b = t;
	}
	spin_lock(&a->lock);
	if (b != a)
		spin_lock(&b->lock);
}

static void unlock2(struct fbucket *a, struct fbucket *b)
{
	if (b != a)
		spin_unlock(&b->lock);
	spin_unlock(&a->lock);
}

/* A list of claimed waiters, to deliver after unlocking, in order. */
struct claimed {
	struct waiter *head, **tail;
};

/* Claim w (unlinked) onto c; false if its wait ended first. */
static bool claim_onto(struct claimed *c, struct waiter *w)
{
	if (!waiter_claim(w))
		return false;
	*c->tail = w;
	c->tail = &w->next;
	return true;
}

static void deliver_all(struct claimed *c)
{
	*c->tail = NULL;
	struct waiter *list = c->head;
	while (list) {
		struct waiter *w = list;
		list = w->next;
		waiter_deliver(w);
	}
}

/* Unlink and claim up to n waiters on key whose bitset meets bitset (b
 * locked). One whose wait ended meanwhile (deadline, signal) is unlinked
 * and not counted; n < 0: every waiter in b, whatever its key. */
static int claim_waiters(struct fbucket *b, const void *key, int n,
			 uint32_t bitset, struct claimed *c)
{
	struct waiter **pp = &b->q.head, *prev = NULL;
	int woken = 0;

	while (*pp && (n < 0 || woken < n)) {
		struct waiter *w = *pp;
		if (n >= 0 && (w->key != key || !(fw_of(w)->bitset & bitset))) {
			prev = w;
			pp = &w->next;
			continue;
		}
		waitq_unlink(&b->q, pp, prev);
		atomic_fetch_sub_explicit(&b->waiting, 1,
					  memory_order_relaxed);
		woken += claim_onto(c, w);
	}
	return woken;
}

static void run_deferred(void)
{
	while (atomic_load(&deferred_any)) {
		if (!enter())
			return; /* inside already: the outer leave runs it */
		atomic_store(&deferred_any, false);
		struct claimed c = { NULL, &c.head };
		for (size_t i = 0; i < sizeof deferred / sizeof deferred[0];
		     i++) {
			uint64_t bits = atomic_exchange(&deferred[i], 0);
			while (bits) {
				int bit = __builtin_ctzll(bits);
				struct fbucket *b = &futextab[i * 64 + (size_t)bit];
				bits &= bits - 1;
				spin_lock(&b->lock);
				claim_waiters(b, NULL, -1, 0, &c);
				spin_unlock(&b->lock);
			}
		}
		atomic_signal_fence(memory_order_seq_cst);
		inside = 0;
		atomic_signal_fence(memory_order_seq_cst);
		deliver_all(&c);
	}
}

static void wait_unlock(void *arg)
{
	spin_unlock(&((struct fbucket *)arg)->lock);
	leave();
}

/* After its wait ended without a wakeup: off the queue, if no waker took
 * it off, in whichever bucket a requeue left it. */
static void withdraw(struct waiter *w)
{
	for (;;) {
		struct fbucket *b = bucket_of(key_of(w));
		enter();
		spin_lock(&b->lock);
		bool here = bucket_of(w->key) == b;
		if (here && w->queued) {
			waitq_remove(&b->q, w);
			atomic_fetch_sub_explicit(&b->waiting, 1,
						  memory_order_relaxed);
		}
		spin_unlock(&b->lock);
		leave();
		if (here)
			return;
	}
}

int futex_wait(const _Atomic uint32_t *addr, bool shared, uint32_t val,
	       uint32_t bitset, int64_t deadline)
{
	const void *key = key_for(addr, shared);
	struct fbucket *b = bucket_of(key);
	struct fwaiter fw;

	if (!enter())
		return FUTEX_NOT_HERE;
	/* Counted before the word is read (a full barrier): a waker that
	 * changed the word, fenced and then read zero comes before it, and
	 * the read below sees the change. */
	atomic_fetch_add(&b->waiting, 1);
	spin_lock(&b->lock);
	int err = 0;
	if (atomic_load(addr) != val)
		err = EAGAIN;
	else if (deadline >= 0 && nanotime() >= deadline)
		err = ETIMEDOUT;
	if (err) {
		atomic_fetch_sub_explicit(&b->waiting, 1,
					  memory_order_relaxed);
		spin_unlock(&b->lock);
		leave();
		return err;
	}
	waiter_init(&fw.w);
	fw.w.key = key;
	fw.bitset = bitset;
	waitq_push(&b->q, &fw.w, false);
	if (waiter_block(&fw.w, wait_unlock, b, "futex", deadline) == W_WOKEN)
		return 0;
	withdraw(&fw.w);
	return ETIMEDOUT;
}

int futex_wake(const void *addr, bool shared, int n, uint32_t bitset)
{
	const void *key = key_for(addr, shared);
	struct fbucket *b = bucket_of(key);
	struct claimed c = { NULL, &c.head };

	/* The caller changed the word: after the fence, a waiter not
	 * counted yet will read the new value (futex_wait). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&b->waiting, memory_order_relaxed) == 0)
		return 0;
	if (!enter()) {
		defer_bucket(b);
		return 0;
	}
	spin_lock(&b->lock);
	int woken = claim_waiters(b, key, n, bitset, &c);
	spin_unlock(&b->lock);
	leave();
	deliver_all(&c);
	return woken;
}

/* As the kernel: the waiters on from in queue order; the first nwake
 * woken, the next nreq moved to the tail of to's queue (or keep their
 * place when to's bucket is from's). A waiter whose wait has ended is
 * passed over. */
int futex_requeue(const _Atomic uint32_t *from, const void *to, bool shared,
		  int nwake, int nreq, bool cmp, uint32_t cmpval, int *moved)
{
	const void *k1 = key_for(from, shared), *k2 = key_for(to, shared);
	struct fbucket *b1 = bucket_of(k1), *b2 = bucket_of(k2);
	struct claimed c = { NULL, &c.head };
	int woken = 0, nmoved = 0;

	*moved = 0;
	if (!enter()) {
		if (cmp && atomic_load(from) != cmpval)
			return -EAGAIN;
		defer_bucket(b1);
		return 0;
	}
	lock2(b1, b2);
	if (cmp && atomic_load(from) != cmpval) {
		unlock2(b1, b2);
		leave();
		return -EAGAIN;
	}
	struct waiter **pp = &b1->q.head, *prev = NULL;
	while (*pp && (woken < nwake || nmoved < nreq)) {
		struct waiter *w = *pp;
		if (w->key != k1) {
			prev = w;
			pp = &w->next;
			continue;
		}
		if (woken < nwake) {
			waitq_unlink(&b1->q, pp, prev);
			atomic_fetch_sub_explicit(&b1->waiting, 1,
						  memory_order_relaxed);
			woken += claim_onto(&c, w);
			continue;
		}
		if (atomic_load(&w->state) != W_WAITING) {
			prev = w;
			pp = &w->next;
			continue;
		}
		__atomic_store_n(&w->key, k2, __ATOMIC_RELAXED);
		nmoved++;
		if (b2 == b1) {
			prev = w;
			pp = &w->next;
			continue;
		}
		waitq_unlink(&b1->q, pp, prev);
		atomic_fetch_sub_explicit(&b1->waiting, 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&b2->waiting, 1,
					  memory_order_relaxed);
		waitq_push(&b2->q, w, false);
	}
	unlock2(b1, b2);
	leave();
	deliver_all(&c);
	*moved = nmoved;
	return woken;
}

/* ---- FUTEX_WAKE_OP ------------------------------------------------------ */

static int op_code(uint32_t op)
{
	return (int)((op >> 28) & 7);
}

static int32_t sext12(uint32_t v)
{
	return (int32_t)(v << 20) >> 20;
}

bool futex_op_valid(uint32_t op)
{
	return op_code(op) <= 4; /* SET ADD OR ANDN XOR */
}

int futex_op_apply(_Atomic uint32_t *addr, uint32_t op)
{
	int32_t oparg = sext12(op >> 12), cmparg = sext12(op);
	uint32_t old = atomic_load(addr), new;

	if (op & (8u << 28)) /* FUTEX_OP_OPARG_SHIFT; the kernel masks */
		oparg = (int32_t)(1u << (oparg & 31));
	do {
		switch (op_code(op)) {
		case 0: new = (uint32_t)oparg; break;
		case 1: new = old + (uint32_t)oparg; break;
		case 2: new = old | (uint32_t)oparg; break;
		case 3: new = old & ~(uint32_t)oparg; break;
		default: new = old ^ (uint32_t)oparg; break;
		}
	} while (!atomic_compare_exchange_weak(addr, &old, new));
	int32_t o = (int32_t)old;
	switch ((op >> 24) & 15) {
	case 0: return o == cmparg;
	case 1: return o != cmparg;
	case 2: return o < cmparg;
	case 3: return o <= cmparg;
	case 4: return o > cmparg;
	case 5: return o >= cmparg;
	default: return -ENOSYS;
	}
}

int futex_wake_op(const void *addr1, _Atomic uint32_t *addr2, bool shared,
		  int n1, int n2, uint32_t op, int *woken1, int *woken2)
{
	const void *k1 = key_for(addr1, shared), *k2 = key_for(addr2, shared);
	struct fbucket *b1 = bucket_of(k1), *b2 = bucket_of(k2);
	struct claimed c = { NULL, &c.head };
	int ret;

	*woken1 = *woken2 = 0;
	if (!enter()) {
		ret = futex_op_apply(addr2, op);
		if (ret >= 0)
			defer_bucket(b1);
		if (ret > 0)
			defer_bucket(b2);
		return ret;
	}
	lock2(b1, b2);
	ret = futex_op_apply(addr2, op);
	if (ret >= 0)
		*woken1 = claim_waiters(b1, k1, n1, ~0u, &c);
	if (ret > 0)
		*woken2 = claim_waiters(b2, k2, n2, ~0u, &c);
	unlock2(b1, b2);
	leave();
	deliver_all(&c);
	return ret;
}
