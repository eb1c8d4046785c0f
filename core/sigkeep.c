/*
 * sigkeep.c: the siginfo of signals the runtime holds.
 *
 * The kernel keeps each pending signal's siginfo (the sender, the code,
 * sigqueue's value, a timer's overrun) and queues every instance of a
 * real-time signal. goshim often has to take a signal off the kernel
 * before the goroutine it is for can run its handler: a process signal
 * that lands on an idle M (the goroutine that takes it is parked, on no
 * thread), one that meets a goroutine halfway through a switch, one sent
 * to a goroutine that is not on an M. The runtime's record of such a
 * signal is a bit (g->sigpending, sigroute's routed and unclaimed), which
 * can neither count instances nor carry a siginfo. So beside the bit this
 * file keeps each instance's siginfo, in order, with its holder: a
 * goroutine, or the process until sysmon gives the signal to one. When
 * the goroutine's handler (or its sigwaitinfo) finally takes the signal,
 * the oldest instance's siginfo replaces the one goshim's marked resend
 * carried (sigthread.c), and a further instance sets the bit again, so that
 * each is delivered once, in order.
 *
 * The holders' lists are short (almost always empty). A standard signal
 * is held at most once per holder, as the kernel keeps it pending at most
 * once. Signal handlers put and take on any thread, so the lock is only
 * ever held with every signal blocked on the thread: a handler never
 * spins on a lock its own thread holds. Records come from pages mapped on
 * demand and are reused, never unmapped; past MAX_KEPT only the bit is
 * kept, and the handler sees the siginfo a tgkill would have made.
 *
 * For a real-time signal the kept instances, not the bit, are what is
 * pending: an instance one delivery took leaves a later delivery of the
 * same bit with nothing to take, and that one is spurious (the kernel
 * would not run the handler again). Once an instance could not be kept,
 * bare deliveries of that signal are real again, for good.
 */
#include <stddef.h>
#include <string.h>
#include "runtime.h"
#include "runtime2.h"
#include "sigkeep.h"
#include "sys.h"

struct sigkept {
	struct sigkept *next;
	siginfo_t si;
};

#define CHUNK_BYTES (64 * 1024)
#define MAX_KEPT 65536

struct chunk {
	struct chunk *next;
	struct sigkept rec[];
};

#define PER_CHUNK \
	((CHUNK_BYTES - sizeof(struct chunk)) / sizeof(struct sigkept))

static struct {
	struct spinlock lock;
	struct sigkept *free;
	struct sigkept *process; /* given to no goroutine yet */
	struct chunk *chunks;
	long nrec;
	_Atomic uint64_t lost; /* real-time signals an instance of was not kept */
} kept;

/* Every signal blocked, then the lock: the thread's old mask. */
static uint64_t kept_lock(void)
{
	uint64_t all = ~(uint64_t)0, old;

	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	spin_lock(&kept.lock);
	return old;
}

static void kept_unlock(uint64_t old)
{
	spin_unlock(&kept.lock);
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
}

static struct sigkept **holder(struct g *gp)
{
	return gp ? &gp->kept : &kept.process;
}

/* Under the lock. */
static struct sigkept *rec_alloc(void)
{
	struct sigkept *r = kept.free;

	if (r == NULL && kept.nrec + (long)PER_CHUNK <= MAX_KEPT) {
		struct chunk *c = sys_mmap_anon(CHUNK_BYTES);
		if (c == NULL)
			return NULL;
		c->next = kept.chunks;
		kept.chunks = c;
		kept.nrec += PER_CHUNK;
		for (size_t i = 0; i < PER_CHUNK; i++) {
			c->rec[i].next = kept.free;
			kept.free = &c->rec[i];
		}
		r = kept.free;
	}
	if (r)
		kept.free = r->next;
	return r;
}

static void rec_free(struct sigkept *r)
{
	r->next = kept.free;
	kept.free = r;
}

static bool standard(int sig)
{
	return sig < 32;
}

bool sigkeep_queues(int sig)
{
	return !standard(sig) && sig <= 64 && !(sigbit(sig) & SIG_GLIBC_INTERNAL);
}

bool sigkeep_bare_ok(int sig)
{
	return !sigkeep_queues(sig) ||
	       (atomic_load_explicit(&kept.lost, memory_order_relaxed) &
		sigbit(sig));
}

/* Under the lock: r at the end of *h, or freed where *h already holds
 * its standard signal. */
static void append(struct sigkept **h, struct sigkept *r)
{
	for (; *h; h = &(*h)->next) {
		if (standard(r->si.si_signo) &&
		    (*h)->si.si_signo == r->si.si_signo) {
			rec_free(r);
			return;
		}
	}
	r->next = NULL;
	__atomic_store_n(h, r, __ATOMIC_RELEASE);
}

/* Under the lock: whether the list at h holds an instance of sig. */
static bool holds_locked(struct sigkept *h, int sig)
{
	for (; h; h = h->next)
		if (h->si.si_signo == sig)
			return true;
	return false;
}

void sigkeep_put(struct g *gp, const siginfo_t *si)
{
	int sig = si->si_signo;

	/* goshim's and glibc's own signals carry nothing to keep. */
	if (sig < 1 || sig > 64 || sigbit(sig) & SIG_GLIBC_INTERNAL)
		return;
	uint64_t old = kept_lock();
	struct sigkept *r = rec_alloc();
	if (r) {
		memcpy(&r->si, si, sizeof *si);
		append(holder(gp), r);
	} else if (!standard(sig)) {
		atomic_fetch_or(&kept.lost, sigbit(sig));
	}
	kept_unlock(old);
}

bool sigkeep_holds(struct g *gp, int sig)
{
	struct sigkept **h = holder(gp);
	bool found = false;

	if (__atomic_load_n(h, __ATOMIC_ACQUIRE) == NULL)
		return false;
	uint64_t old = kept_lock();
	found = holds_locked(*h, sig);
	kept_unlock(old);
	return found;
}

bool sigkeep_take(struct g *gp, int sig, siginfo_t *si, bool *more)
{
	struct sigkept **h = holder(gp), *r = NULL;

	*more = false;
	/* Put before the bit that sends the signal was set: seen here. */
	if (__atomic_load_n(h, __ATOMIC_ACQUIRE) == NULL)
		return false;
	uint64_t old = kept_lock();
	while (*h && (*h)->si.si_signo != sig)
		h = &(*h)->next;
	if ((r = *h) != NULL) {
		*h = r->next;
		for (struct sigkept *q = r->next; q && !*more; q = q->next)
			*more = q->si.si_signo == sig;
	}
	if (r) {
		memcpy(si, &r->si, sizeof *si);
		rec_free(r);
	}
	kept_unlock(old);
	return r != NULL;
}

/* Under the lock: every instance of sig the process holds to the end of
 * gp's list, in order. */
static void give_locked(struct g *gp, int sig)
{
	for (struct sigkept **h = &kept.process; *h;) {
		struct sigkept *r = *h;
		if (r->si.si_signo != sig) {
			h = &r->next;
			continue;
		}
		*h = r->next;
		append(&gp->kept, r);
	}
}

bool sigkeep_behind(struct g *gp, siginfo_t *si, bool *more)
{
	int sig = si->si_signo;
	bool swapped = false;

	*more = false;
	if (__atomic_load_n(&kept.process, __ATOMIC_ACQUIRE) == NULL &&
	    __atomic_load_n(&gp->kept, __ATOMIC_ACQUIRE) == NULL)
		return false;
	uint64_t old = kept_lock();
	if (holds_locked(kept.process, sig) || holds_locked(gp->kept, sig)) {
		give_locked(gp, sig);
		struct sigkept **h = &gp->kept;
		while ((*h)->si.si_signo != sig)
			h = &(*h)->next;
		struct sigkept *r = *h;
		*h = r->next;
		/* The oldest out, si in its record behind the rest. */
		siginfo_t oldest = r->si;
		memcpy(&r->si, si, sizeof *si);
		append(&gp->kept, r);
		*si = oldest;
		*more = true;
		swapped = true;
	}
	kept_unlock(old);
	return swapped;
}

void sigkeep_give(struct g *gp, int sig)
{
	if (__atomic_load_n(&kept.process, __ATOMIC_ACQUIRE) == NULL)
		return;
	uint64_t old = kept_lock();
	give_locked(gp, sig);
	kept_unlock(old);
}

void sigkeep_return(struct g *gp, int sig)
{
	struct sigkept *back = NULL, **tail = &back;

	if (__atomic_load_n(&gp->kept, __ATOMIC_ACQUIRE) == NULL)
		return;
	uint64_t old = kept_lock();
	for (struct sigkept **h = &gp->kept; *h;) {
		struct sigkept *r = *h;
		if (r->si.si_signo != sig) {
			h = &r->next;
			continue;
		}
		*h = r->next;
		/* A standard signal is pending once: the process's own
		 * instance stands for both. */
		if (standard(sig) && holds_locked(kept.process, sig)) {
			rec_free(r);
			continue;
		}
		*tail = r;
		tail = &r->next;
	}
	*tail = kept.process;
	__atomic_store_n(&kept.process, back, __ATOMIC_RELEASE);
	kept_unlock(old);
}

void sigkeep_drop(struct g *gp, int sig)
{
	struct sigkept **h = holder(gp);

	if (__atomic_load_n(h, __ATOMIC_ACQUIRE) == NULL)
		return;
	uint64_t old = kept_lock();
	while (*h) {
		struct sigkept *r = *h;
		if (sig != 0 && r->si.si_signo != sig) {
			h = &r->next;
			continue;
		}
		*h = r->next;
		rec_free(r);
	}
	kept_unlock(old);
}

void sigkeep_fork_child(void)
{
	atomic_store(&kept.lock.v, 0);
	kept.process = NULL;
	kept.free = NULL;
	for (struct chunk *c = kept.chunks; c; c = c->next)
		for (size_t i = 0; i < PER_CHUNK; i++)
			rec_free(&c->rec[i]);
	for (struct g *gp = sched.allgs; gp; gp = gp->alllink)
		gp->kept = NULL;
}
