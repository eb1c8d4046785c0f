/*
 * cputimer.c: POSIX timers (timer_create) on goroutines' CPU clocks.
 *
 * The kernel's timer on a thread CPU clock would count the M's thread,
 * whatever goroutines it runs, so these are goshim's own: sysmon looks at
 * each armed one every round, and since a thread's CPU clock advances no
 * faster than time, it sleeps no longer than the CPU time still missing
 * for the nearest. The kernel looks at a tick (HZ) and fires as late; so
 * does sysmon, at its own pace. An expiry sends what the sigevent says:
 * a process-directed signal with the kernel's timer siginfo (SI_TIMER,
 * si_timerid, si_overrun, si_value), a signal to one thread
 * (SIGEV_THREAD_ID; to a goroutine it comes as pthread_kill's would, with
 * no timer fields), or a new detached thread running the function
 * (SIGEV_THREAD, as glibc does; the attributes given are not used).
 * Overruns count the periods of an interval timer that passed between two
 * looks, not the expiries whose signal was still pending (the kernel
 * counts both). A timer on the clock of a thread that has ended stays
 * armed and never fires, as on Linux.
 *
 * Ids are 2^32 + slot: above any kernel timer id (an int) and apart from
 * glibc's SIGEV_THREAD ids (negative).
 */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include "cpuclock.h"
#include "runtime2.h"
#include "deadline.h"
#include "stack.h"
#include "sys.h"

#define ID_BASE ((uintptr_t)1 << 32)

struct cputimer {
	struct g *gp; /* whose clock, while it is the thread tid */
	pid_t tid;
	int which;
	struct sigevent sev;
	int64_t expires;  /* on its clock; 0: disarmed */
	int64_t interval;
	int overrun;	  /* of the last expiry */
};

static struct rlock lock;
static struct cputimer **tab;
static int32_t ntab;
static _Atomic int32_t narmed;

static struct cputimer *lookup(uintptr_t id)
{
	if (id < ID_BASE || id - ID_BASE >= (uintptr_t)ntab)
		return NULL;
	return tab[id - ID_BASE];
}

bool cputimer_id(uintptr_t id)
{
	return id >= ID_BASE && id - ID_BASE < (uintptr_t)INT32_MAX;
}

static bool thread_of_process(pid_t tid)
{
	return g_from_tid(tid) != NULL ||
	       SYS3(SYS_tgkill, sys_getpid(), tid, 0) == 0;
}

int cputimer_create(struct g *gp, int which, const struct sigevent *sev,
		    uintptr_t *id)
{
	struct cputimer *t = calloc(1, sizeof *t);
	int32_t slot;

	if (t == NULL)
		return EAGAIN;
	t->gp = gp;
	t->tid = gp->tid;
	t->which = which;
	if (sev) {
		t->sev = *sev;
	} else {
		t->sev.sigev_notify = SIGEV_SIGNAL;
		t->sev.sigev_signo = SIGALRM;
	}
	switch (t->sev.sigev_notify) {
	case SIGEV_NONE:
	case SIGEV_THREAD:
		break;
	case SIGEV_THREAD_ID:
		if (!thread_of_process(t->sev._sigev_un._tid)) {
			free(t);
			return EINVAL;
		}
		/* fall through */
	case SIGEV_SIGNAL:
		if (t->sev.sigev_signo < 1 || t->sev.sigev_signo > 64) {
			free(t);
			return EINVAL;
		}
		break;
	default:
		free(t);
		return EINVAL;
	}
	rlock_lock(&lock);
	for (slot = 0; slot < ntab && tab[slot]; slot++)
		;
	if (slot == ntab) {
		struct cputimer **nt = realloc(tab, (size_t)(ntab + 16) *
							    sizeof *tab);
		if (nt == NULL) {
			rlock_unlock(&lock);
			free(t);
			return EAGAIN;
		}
		memset(nt + ntab, 0, 16 * sizeof *tab);
		tab = nt;
		ntab += 16;
	}
	tab[slot] = t;
	if (!sev)
		t->sev.sigev_value.sival_int = slot;
	rlock_unlock(&lock);
	*id = ID_BASE + (uintptr_t)slot;
	return 0;
}

/* lock held; now: its clock's value, or -1 (its thread ended). */
static void get_locked(const struct cputimer *t, int64_t now,
		       struct itimerspec *cur)
{
	memset(cur, 0, sizeof *cur);
	cur->it_interval = ts_from_ns(t->interval);
	if (t->expires == 0 || now < 0)
		return;
	/* Due, not yet fired: about to (as the kernel says). */
	cur->it_value = now < t->expires ? ts_from_ns(t->expires - now)
					 : (struct timespec){ 0, 1 };
}

int cputimer_gettime(uintptr_t id, struct itimerspec *cur)
{
	rlock_lock(&lock);
	struct cputimer *t = lookup(id);
	if (t == NULL) {
		rlock_unlock(&lock);
		return EINVAL;
	}
	get_locked(t, cpuclock_value(t->gp, t->tid, t->which, NULL), cur);
	rlock_unlock(&lock);
	return 0;
}

int cputimer_settime(uintptr_t id, int flags, const struct itimerspec *nv,
		     struct itimerspec *old)
{
	if (!ts_valid(&nv->it_value) || !ts_valid(&nv->it_interval))
		return EINVAL;
	rlock_lock(&lock);
	struct cputimer *t = lookup(id);
	if (t == NULL) {
		rlock_unlock(&lock);
		return EINVAL;
	}
	int64_t now = cpuclock_value(t->gp, t->tid, t->which, NULL);
	if (old)
		get_locked(t, now, old);
	bool was = t->expires != 0;
	int64_t v = ts_to_ns(&nv->it_value);
	t->interval = ts_to_ns(&nv->it_interval);
	t->overrun = 0;
	if (v == 0) {
		t->expires = 0;
	} else {
		if (!(flags & TIMER_ABSTIME) && now >= 0)
			v = v > INT64_MAX - now ? INT64_MAX : now + v;
		t->expires = v;
	}
	bool is = t->expires != 0;
	rlock_unlock(&lock);
	if (is != was)
		atomic_fetch_add(&narmed, is ? 1 : -1);
	if (is) {
		sysmon_ensure();
		sysmon_wake(); /* it may be due at once */
	}
	return 0;
}

int cputimer_getoverrun(uintptr_t id)
{
	rlock_lock(&lock);
	struct cputimer *t = lookup(id);
	int r = t ? t->overrun : -EINVAL;
	rlock_unlock(&lock);
	return r;
}

int cputimer_delete(uintptr_t id)
{
	rlock_lock(&lock);
	struct cputimer *t = lookup(id);
	if (t)
		tab[id - ID_BASE] = NULL;
	rlock_unlock(&lock);
	if (t == NULL)
		return EINVAL;
	if (t->expires)
		atomic_fetch_sub(&narmed, 1);
	free(t);
	return 0;
}

struct notify {
	void (*fn)(union sigval);
	union sigval value;
};

static void *notify_thread(void *arg)
{
	struct notify n = *(struct notify *)arg;
	free(arg);
	n.fn(n.value);
	return NULL;
}

/* What the sigevent says, from sysmon; lock held. */
static void fire(struct cputimer *t, int slot)
{
	const struct sigevent *ev = &t->sev;
	siginfo_t si;

	memset(&si, 0, sizeof si);
	si.si_signo = ev->sigev_signo;
	si.si_code = SI_TIMER;
	si.si_timerid = slot;
	si.si_overrun = t->overrun;
	si.si_value = ev->sigev_value;
	switch (ev->sigev_notify) {
	case SIGEV_SIGNAL:
		SYS3(SYS_rt_sigqueueinfo, sys_getpid(), si.si_signo, &si);
		break;
	case SIGEV_THREAD_ID: {
		struct g *gp = g_from_tid(ev->_sigev_un._tid);
		if (gp)
			sigthread_queue(gp, &si);
		else
			SYS4(SYS_rt_tgsigqueueinfo, sys_getpid(),
			     ev->_sigev_un._tid, si.si_signo, &si);
		break;
	}
	case SIGEV_THREAD: {
		struct notify *n = malloc(sizeof *n);
		struct spawn_attr attr = { .detached = true,
					   .guardsize = stack_page_size() };
		void *handle;
		int err;
		if (n == NULL)
			break;
		n->fn = ev->sigev_notify_function;
		n->value = ev->sigev_value;
		if (newproc(notify_thread, n, &attr, &handle, &err) == NULL)
			free(n);
		break;
	}
	}
}

void cputimers_run(int64_t now, int64_t *next)
{
	if (atomic_load_explicit(&narmed, memory_order_relaxed) == 0)
		return;
	rlock_lock(&lock);
	for (int32_t i = 0; i < ntab; i++) {
		struct cputimer *t = tab[i];
		if (t == NULL || t->expires == 0)
			continue;
		int64_t v = cpuclock_value(t->gp, t->tid, t->which, NULL);
		if (v < 0)
			continue; /* its thread ended: never fires */
		if (v >= t->expires) {
			int64_t missed = 0;
			if (t->interval > 0) {
				missed = (v - t->expires) / t->interval;
				t->expires += (missed + 1) * t->interval;
			} else {
				t->expires = 0;
				atomic_fetch_sub(&narmed, 1);
			}
			t->overrun = missed > INT_MAX ? INT_MAX : (int)missed;
			fire(t, i);
			if (t->expires == 0)
				continue;
		}
		if (t->expires - v < *next - now)
			*next = now + (t->expires - v);
	}
	rlock_unlock(&lock);
}

void cputimers_fork_child(void)
{
	/* Timers are not inherited across fork. */
	atomic_store(&lock.key, 0);
	for (int32_t i = 0; i < ntab; i++) {
		free(tab[i]);
		tab[i] = NULL;
	}
	atomic_store(&narmed, 0);
}
