/*
 * wire.c: the thread values a goroutine may set (CPU affinity, scheduling
 * policy and priority, nice), and the wiring they need (see wire.h).
 *
 * A goroutine with its own values runs only on its M, so the kernel call
 * that sets them is made on that M's thread, and the kernel's answer,
 * errors included, is the program's. Values set on a goroutine that is
 * not wired cannot be applied before it runs: they are checked the way
 * the kernel would check them and kept until then. Everything here is
 * rare and slow-path: one spinlock per goroutine (jlock) orders it.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include "sys.h"
#include "runtime2.h"
#include "tls.h"
#include "wire.h"

#define MASK_MAX_BYTES 8192 /* CONFIG_NR_CPUS at most 8192... bits */

static size_t mask_bytes;
static unsigned char *base_mask;
static int base_policy, base_priority, base_nice;
static int base_rtprio;

/* A g.rtprio: the priority of a real-time policy, else 0 (below them). */
static int rtprio_of(int policy, int priority)
{
	int p = policy & ~SCHED_RESET_ON_FORK;
	return p == SCHED_FIFO || p == SCHED_RR ? priority : 0;
}

void wire_init(void)
{
	for (size_t len = 64; len <= MASK_MAX_BYTES; len *= 2) {
		unsigned char *m = calloc(1, len);
		if (m == NULL)
			runtime_throw("wire_init: out of memory");
		long r = SYS3(SYS_sched_getaffinity, 0, len, m);
		if (r > 0) {
			mask_bytes = (size_t)r;
			base_mask = m;
			break;
		}
		free(m);
	}
	if (base_mask == NULL)
		runtime_throw("wire_init: sched_getaffinity failed");
	struct sched_param sp = { 0 };
	base_policy = (int)SYS1(SYS_sched_getscheduler, 0);
	SYS2(SYS_sched_getparam, 0, &sp);
	base_priority = sp.sched_priority;
	base_nice = 20 - (int)SYS2(SYS_getpriority, PRIO_PROCESS, 0);
	base_rtprio = rtprio_of(base_policy, base_priority);
	/* The caller becomes the main goroutine with its thread's values. */
	if (on_goroutine())
		atomic_store(&getg()->rtprio, base_rtprio);
}

void wire_new_m(void)
{
	struct sys_sched_attr a = {
		.size = sizeof a,
		.policy = (uint32_t)(base_policy & ~SCHED_RESET_ON_FORK),
		.flags = base_policy & SCHED_RESET_ON_FORK ? 1 : 0,
		.nice = base_nice,
		.priority = (uint32_t)base_priority,
	};
	/* runtime 0: the kernel's default slice, not sysmon's short one */
	SYS3(SYS_sched_setattr, 0, &a, 0);
}

size_t wire_mask_bytes(void)
{
	return mask_bytes;
}

/* ---- checks the kernel would make (for values kept until later) ---- */

static bool capable_sys_nice(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (SYS2(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

static bool valid_policy(int policy)
{
	switch (policy & ~SCHED_RESET_ON_FORK) {
	case SCHED_OTHER:
	case SCHED_BATCH:
	case SCHED_IDLE:
	case SCHED_FIFO:
	case SCHED_RR:
		return true;
	}
	return false;
}

static int check_sched(int policy, int priority)
{
	int p = policy & ~SCHED_RESET_ON_FORK;
	struct rlimit rl;

	if (!valid_policy(policy) || priority < sched_get_priority_min(p) ||
	    priority > sched_get_priority_max(p))
		return EINVAL;
	if ((p == SCHED_FIFO || p == SCHED_RR) && !capable_sys_nice()) {
		if (getrlimit(RLIMIT_RTPRIO, &rl) != 0 ||
		    (rlim_t)priority > rl.rlim_cur)
			return EPERM;
	}
	return 0;
}

static int check_nice(int nice)
{
	struct rlimit rl;

	/* Lowering it below the process's needs RLIMIT_NICE or the
	 * capability (the thread would start from the process's). */
	if (nice < base_nice && !capable_sys_nice() &&
	    (getrlimit(RLIMIT_NICE, &rl) != 0 ||
	     20 - nice > (long)rl.rlim_cur))
		return EACCES;
	return 0;
}

static int check_mask(const unsigned char *mask)
{
	for (size_t i = 0; i < mask_bytes; i++)
		if (mask[i] & base_mask[i])
			return 0;
	return EINVAL;
}

/* ---- the values of one goroutine (gp->jlock held) ---- */

static struct thread_attrs *attrs_of(struct g *gp)
{
	if (gp->attrs == NULL) {
		gp->attrs = calloc(1, sizeof *gp->attrs + mask_bytes);
		if (gp->attrs == NULL)
			return NULL;
	}
	return gp->attrs;
}

/* The thread runs with the process's values again: forget them, and let
 * the goroutine go from its M (only the goroutine itself, on its M). */
static void settle(struct g *gp)
{
	struct thread_attrs *a = gp->attrs;

	if (a && a->has_mask && memcmp(a->mask, base_mask, mask_bytes) == 0)
		a->has_mask = false;
	if (a && a->has_sched && a->policy == base_policy &&
	    a->priority == base_priority)
		a->has_sched = false;
	if (a && a->has_nice && a->nice == base_nice)
		a->has_nice = false;
	if (a && !a->has_mask && !a->has_sched && !a->has_nice) {
		free(a);
		gp->attrs = NULL;
	}
	if (gp->attrs == NULL && gp->pshared_holds == 0 && gp->lockedm) {
		gp->lockedm->lockedg = NULL;
		gp->lockedm = NULL;
	}
}

/*
 * Where a value set on gp goes now: its own M's thread (0, *tid set), or
 * nowhere yet (0, *tid = 0: keep it pending). The caller's own goroutine
 * is wired first, so the call lands on the thread it will keep.
 */
static void target_thread(struct g *gp, pid_t *tid, bool *wired_now)
{
	struct g *me = getg();

	*wired_now = false;
	*tid = 0;
	if (gp == me && gp->lockedm == NULL) {
		gp->lockedm = me->m;
		me->m->lockedg = gp;
		*wired_now = true;
	}
	if (gp->lockedm && !(gp->attrs && gp->attrs->pending))
		*tid = gp->lockedm->tid;
}

static void unwire_failed(struct g *gp, bool wired_now)
{
	if (wired_now && gp->attrs == NULL) {
		gp->lockedm->lockedg = NULL;
		gp->lockedm = NULL;
	}
}

/* One value set on a goroutine. */
struct value {
	enum { V_MASK, V_SCHED, V_NICE } kind;
	const unsigned char *mask; /* mask_bytes */
	int policy, priority, nice;
};

static long value_apply(pid_t tid, const struct value *v)
{
	struct sched_param sp = { .sched_priority = v->priority };

	switch (v->kind) {
	case V_MASK:
		return SYS3(SYS_sched_setaffinity, tid, mask_bytes, v->mask);
	case V_SCHED:
		return SYS3(SYS_sched_setscheduler, tid, v->policy, &sp);
	case V_NICE:
		return SYS3(SYS_setpriority, PRIO_PROCESS, tid, v->nice);
	}
	return -EINVAL;
}

static int value_check(const struct value *v)
{
	switch (v->kind) {
	case V_MASK:
		return check_mask(v->mask);
	case V_SCHED:
		return check_sched(v->policy, v->priority);
	case V_NICE:
		return check_nice(v->nice);
	}
	return EINVAL;
}

static void value_store(struct thread_attrs *a, const struct value *v)
{
	switch (v->kind) {
	case V_MASK:
		memcpy(a->mask, v->mask, mask_bytes);
		a->has_mask = true;
		break;
	case V_SCHED:
		a->policy = v->policy;
		a->priority = v->priority;
		a->has_sched = true;
		break;
	case V_NICE:
		a->nice = v->nice;
		a->has_nice = true;
		break;
	}
}

/* Set v on gp: on its M's thread if it has one (the kernel's answer is the
 * caller's), else checked and kept until it runs. */
static int wire_set(struct g *gp, struct value *v)
{
	pid_t tid;
	bool wired_now;
	int err = 0;

	spin_lock(&gp->jlock);
	if (gp->exited) {
		err = ESRCH;
		goto out;
	}
	if (v->kind == V_SCHED && v->policy < 0)
		v->policy = gp->attrs && gp->attrs->has_sched
				    ? gp->attrs->policy
				    : base_policy;
	target_thread(gp, &tid, &wired_now);
	if (tid) {
		long r = value_apply(tid, v);
		if (r < 0) {
			err = (int)-r;
			unwire_failed(gp, wired_now);
			goto out;
		}
	} else if ((err = value_check(v)) != 0) {
		goto out;
	}
	struct thread_attrs *a = attrs_of(gp);
	if (a == NULL) {
		err = ENOMEM;
		unwire_failed(gp, wired_now);
		goto out;
	}
	value_store(a, v);
	__atomic_store_n(&a->pending, tid == 0, __ATOMIC_RELEASE);
	/* Natively the thread's place in wait queues it joins from now. */
	if (v->kind == V_SCHED)
		atomic_store_explicit(&gp->rtprio,
				      rtprio_of(v->policy, v->priority),
				      memory_order_relaxed);
	if (gp == getg())
		settle(gp);
out:
	spin_unlock(&gp->jlock);
	return err;
}

/* The program's set is read the kernel's way: EFAULT for a bad one. */
int wire_set_affinity(struct g *gp, size_t len, const void *mask)
{
	unsigned char *m = calloc(1, mask_bytes);
	struct value v = { .kind = V_MASK, .mask = m };
	int err;

	if (m == NULL)
		return ENOMEM;
	if (sys_copy_in(m, mask, len < mask_bytes ? len : mask_bytes) != 0)
		err = EFAULT;
	else
		err = wire_set(gp, &v);
	free(m);
	return err;
}

/* As the kernel and glibc answer: the kernel's mask size is written the
 * kernel's way (EFAULT for a bad buffer), the rest is cleared. */
int wire_get_affinity(struct g *gp, size_t len, void *mask)
{
	/* The kernel's rules for the buffer (sched_getaffinity). */
	if (len < mask_bytes || (len & (sizeof(long) - 1)))
		return EINVAL;
	unsigned char *m = calloc(1, mask_bytes);
	if (m == NULL)
		return ENOMEM;
	spin_lock(&gp->jlock);
	struct thread_attrs *a = gp->attrs;
	long r = 0;
	if (a && a->has_mask && !a->pending && gp->lockedm)
		r = SYS3(SYS_sched_getaffinity, gp->lockedm->tid, mask_bytes,
			 m);
	else if (a && a->has_mask)
		for (size_t i = 0; i < mask_bytes; i++)
			m[i] = a->mask[i] & base_mask[i];
	else
		memcpy(m, base_mask, mask_bytes);
	spin_unlock(&gp->jlock);
	if (r >= 0)
		r = sys_copy_out(mask, m, mask_bytes);
	free(m);
	if (r < 0)
		return (int)-r;
	memset((char *)mask + mask_bytes, 0, len - mask_bytes);
	return 0;
}

int wire_set_sched(struct g *gp, int policy, int priority)
{
	struct value v = { .kind = V_SCHED, .policy = policy,
			   .priority = priority };
	return wire_set(gp, &v);
}

void wire_get_sched(struct g *gp, int *policy, int *priority)
{
	spin_lock(&gp->jlock);
	struct thread_attrs *a = gp->attrs;
	*policy = a && a->has_sched ? a->policy : base_policy;
	*priority = a && a->has_sched ? a->priority : base_priority;
	spin_unlock(&gp->jlock);
}

int wire_set_nice(struct g *gp, int nice)
{
	struct value v = { .kind = V_NICE,
			   .nice = nice < -20 ? -20 : nice > 19 ? 19 : nice };
	return wire_set(gp, &v);
}

int wire_get_nice(struct g *gp)
{
	spin_lock(&gp->jlock);
	int nice = gp->attrs && gp->attrs->has_nice ? gp->attrs->nice
						    : base_nice;
	spin_unlock(&gp->jlock);
	return nice;
}

/* ---- process-shared locks ---- */

#define FUTEX_TID_BITS 0x3fffffffu
#define FUTEX_OWNER_DIED_BIT 0x40000000u
#define FUTEX_WAITERS_BIT 0x80000000u

struct robust_list_head *wire_robust_list(struct g *gp)
{
	return gp->robust_list ? gp->robust_list : tls_robust_head(gp->tcb);
}

long wire_set_robust_list(struct g *gp, struct robust_list_head *head,
			  size_t len)
{
	if (len != sizeof *head)
		return -EINVAL;
	gp->robust_list = head;
	if (gp->pshared_holds > 0)
		return SYS2(SYS_set_robust_list, head, len);
	return 0;
}

void wire_hold(void)
{
	struct g *gp = getg();
	struct m *mp = gp->m;
	size_t len;

	if (gp->pshared_holds++ > 0)
		return;
	spin_lock(&gp->jlock);
	if (gp->lockedm == NULL) {
		gp->lockedm = mp;
		mp->lockedg = gp;
	}
	spin_unlock(&gp->jlock);
	gp->own_tid = tls_tid(gp->tcb);
	tls_set_tid(gp->tcb, mp->tid);
	SYS3(SYS_get_robust_list, 0, &mp->robust_prev, &len);
	SYS2(SYS_set_robust_list, wire_robust_list(gp), len);
}

static void unhold(struct g *gp, struct m *mp)
{
	size_t len;
	void *head;

	SYS3(SYS_get_robust_list, 0, &head, &len);
	SYS2(SYS_set_robust_list, mp->robust_prev, len);
	tls_set_tid(gp->tcb, gp->own_tid);
}

void wire_drop(void)
{
	struct g *gp = getg();

	if (gp->pshared_holds <= 0 || --gp->pshared_holds > 0)
		return;
	unhold(gp, gp->m);
	spin_lock(&gp->jlock);
	settle(gp);
	spin_unlock(&gp->jlock);
}

/*
 * The goroutine ends holding robust process-shared mutexes: what the
 * kernel does when a thread dies (its exit_robust_list): each one it owns
 * is marked owner-died and a waiter woken, so the next locker, in this
 * process or another, gets EOWNERDEAD.
 */
static void robust_died(struct g *gp, pid_t tid)
{
	struct robust_list_head *h = wire_robust_list(gp);
	struct robust_list *e = h->list.next;

	for (int n = 0; e != &h->list && n < 2048; n++) {
		struct robust_list *next = e->next;
		/* bit 0 marks a PI futex: the kernel owns its state */
		if (!((uintptr_t)e & 1)) {
			_Atomic uint32_t *f = (_Atomic uint32_t *)
				((char *)e + h->futex_offset);
			uint32_t v = atomic_load(f);
			while ((v & FUTEX_TID_BITS) == (uint32_t)tid &&
			       !atomic_compare_exchange_weak(
				       f, &v,
				       (v & FUTEX_WAITERS_BIT) |
					       FUTEX_OWNER_DIED_BIT))
				;
			if ((v & FUTEX_TID_BITS) == (uint32_t)tid)
				SYS3(SYS_futex, f, FUTEX_WAKE, 1);
		}
		e = (struct robust_list *)((uintptr_t)next & ~(uintptr_t)1);
	}
}

/* ---- creation, running, ending ---- */

int wire_rtprio(const struct thread_attrs *a)
{
	if (a == NULL || !a->has_sched)
		return base_rtprio;
	return rtprio_of(a->policy, a->priority);
}

struct thread_attrs *wire_inherit(struct g *creator)
{
	struct thread_attrs *a = NULL;

	if (creator == NULL || creator->attrs == NULL)
		return NULL;
	spin_lock(&creator->jlock);
	if (creator->attrs) {
		a = malloc(sizeof *a + mask_bytes);
		if (a) {
			memcpy(a, creator->attrs, sizeof *a + mask_bytes);
			a->pending = true;
			/* SCHED_RESET_ON_FORK: children start from normal
			 * scheduling. */
			if (a->has_sched &&
			    (a->policy & SCHED_RESET_ON_FORK)) {
				a->has_sched = false;
				if (a->has_nice && a->nice < 0)
					a->has_nice = false;
			}
		}
	}
	spin_unlock(&creator->jlock);
	return a;
}

int wire_explicit_sched(struct thread_attrs **ap, int policy, int priority)
{
	int err = check_sched(policy, priority);

	if (err)
		return err;
	if (policy == base_policy && priority == base_priority) {
		if (*ap)
			(*ap)->has_sched = false;
		return 0;
	}
	if (*ap == NULL && (*ap = calloc(1, sizeof **ap + mask_bytes)) == NULL)
		return EAGAIN;
	(*ap)->pending = true;
	(*ap)->has_sched = true;
	(*ap)->policy = policy;
	(*ap)->priority = priority;
	return 0;
}

int wire_explicit_mask(struct thread_attrs **ap, size_t len, const void *mask)
{
	if (*ap == NULL && (*ap = calloc(1, sizeof **ap + mask_bytes)) == NULL)
		return EAGAIN;
	memset((*ap)->mask, 0, mask_bytes);
	memcpy((*ap)->mask, mask, len < mask_bytes ? len : mask_bytes);
	if (check_mask((*ap)->mask) != 0)
		return EINVAL;
	(*ap)->pending = true;
	(*ap)->has_mask = memcmp((*ap)->mask, base_mask, mask_bytes) != 0;
	return 0;
}

static void apply_all(pid_t tid, const struct thread_attrs *a)
{
	/* Checked when they were set; the kernel may still refuse (limits
	 * changed meanwhile): then the thread keeps what it had, as a
	 * failed call would have left it. */
	if (a->has_mask)
		value_apply(tid, &(struct value){ .kind = V_MASK,
						  .mask = a->mask });
	if (a->has_sched)
		value_apply(tid, &(struct value){ .kind = V_SCHED,
						  .policy = a->policy,
						  .priority = a->priority });
	if (a->has_nice)
		value_apply(tid, &(struct value){ .kind = V_NICE,
						  .nice = a->nice });
}

/* The lock is busy for a moment when another thread reads or sets gp's
 * values; for good when gp itself holds it, stopped inside wire_set (a
 * handler of the program's that parked there): gp cannot let go before it
 * runs, so past a while its values wait for its next run. */
#define ADOPT_WAIT_NS 100000

void wire_adopt(struct m *mp, struct g *gp)
{
	struct thread_attrs *a = gp->attrs;
	if (a == NULL || !__atomic_load_n(&a->pending, __ATOMIC_ACQUIRE))
		return;
	int64_t until = 0;
	while (!spin_trylock(&gp->jlock)) {
		int64_t now = nanotime();
		if (until == 0)
			until = now + ADOPT_WAIT_NS;
		else if (now > until)
			return;
		cpu_relax();
	}
	a = gp->attrs;
	if (a && a->pending) {
		if (gp->lockedm == NULL) {
			gp->lockedm = mp;
			mp->lockedg = gp;
		}
		apply_all(mp->tid, a);
		__atomic_store_n(&a->pending, false, __ATOMIC_RELEASE);
	}
	spin_unlock(&gp->jlock);
}

bool wire_release(struct m *mp, struct g *gp)
{
	bool ok = true;

	if (gp->pshared_holds > 0) {
		robust_died(gp, mp->tid);
		unhold(gp, mp);
		gp->pshared_holds = 0;
	}
	spin_lock(&gp->jlock);
	struct thread_attrs *a = gp->attrs;
	if (a && !a->pending) {
		/* The process's values back on the thread. */
		if (a->has_mask &&
		    value_apply(mp->tid, &(struct value){ .kind = V_MASK,
							  .mask = base_mask }) < 0)
			ok = false;
		if (a->has_sched &&
		    value_apply(mp->tid,
				&(struct value){ .kind = V_SCHED,
						 .policy = base_policy,
						 .priority = base_priority }) < 0)
			ok = false;
		if (a->has_nice &&
		    value_apply(mp->tid, &(struct value){ .kind = V_NICE,
							  .nice = base_nice }) < 0)
			ok = false;
	}
	free(a);
	gp->attrs = NULL;
	if (gp->lockedm) {
		gp->lockedm->lockedg = NULL;
		gp->lockedm = NULL;
	}
	spin_unlock(&gp->jlock);
	return ok;
}
