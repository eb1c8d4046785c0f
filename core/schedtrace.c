/*
 * schedtrace.c: GOSHIM_DEBUG=schedtrace=MS, Go's scheduler trace line,
 *
 *   SCHED 1004ms: gomaxprocs=2 idleprocs=0 threads=5 spinningthreads=0
 *   idlethreads=1 runqueue=3 [12 8]
 *
 * (one line), and with scheddetail=1 Go's P, M and G lines, in Go's words
 * and status numbers, so that what reads Go's output reads this.
 *
 * Printed by sysmon, which holds no lock then, and reads the scheduler
 * without taking any either, as Go's schedtrace does: the numbers of one
 * line are not a consistent snapshot, each is what it was when read. Ps
 * and Ms are never freed and Gs never unlinked, so the reads are safe.
 */
#include <stdarg.h>
#include <string.h>
#include "debug.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"

static int64_t start_ns;

/* One line at a time into buf; written when full or at the end. */
struct out {
	char buf[4096];
	size_t n;
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char line[256];

	va_start(ap, fmt);
	size_t n = vsnprint(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n == 0)
		return;
	if (n >= sizeof line)
		n = sizeof line - 1;
	if (o->n + n > sizeof o->buf) {
		sys_write(2, o->buf, o->n);
		o->n = 0;
	}
	memcpy(o->buf + o->n, line, n);
	o->n += n;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Go's G status numbers (_Grunnable 1, _Grunning 2, _Gsyscall 3,
 * _Gwaiting 4, _Gdead 6). */
static int go_gstatus(uint32_t st)
{
	switch (st & ~G_SCAN) {
	case G_RUNNABLE:
		return 1;
	case G_RUNNING:
		return 2;
	case G_SYSCALL:
		return 3;
	case G_WAITING:
		return 4;
	case G_DEAD:
		return 6;
	default:
		return 0;
	}
}

static long long goid_or(const struct g *gp)
{
	return gp ? (long long)LOAD(gp->goid) : -1;
}

static void detail(struct out *o)
{
	for (int32_t i = 0; i < gomaxprocs; i++) {
		struct p *pp = allp[i];
		struct m *mp = LOAD(pp->m);
		uint32_t h = atomic_load(&pp->runqhead);
		uint32_t t = atomic_load(&pp->runqtail);
		put(o,
		    "  P%d: status=%u schedtick=%u syscalltick=%u m=%lld "
		    "runqsize=%u gfreecnt=%d\n",
		    pp->id, atomic_load(&pp->status), LOAD(pp->schedtick),
		    atomic_load(&pp->syscalltick),
		    mp ? (long long)LOAD(mp->id) : -1LL, t - h,
		    LOAD(pp->ngfree));
	}
	for (struct m *mp = LOAD(sched.allms); mp; mp = LOAD(mp->alllink)) {
		struct p *pp = LOAD(mp->p);
		struct g *curg = LOAD(mp->curg);
		/* Go's mallocing, throwing, preemptoff, locks and dying have
		 * no counterpart here; kept at their quiet values so the
		 * line parses as Go's. An M with neither P nor goroutine is
		 * asleep on its note (Go's blocked). */
		put(o,
		    "  M%lld: p=%d curg=%lld mallocing=0 throwing=0 "
		    "preemptoff= locks=0 dying=0 spinning=%s blocked=%s "
		    "lockedg=%lld\n",
		    (long long)mp->id, pp ? LOAD(pp->id) : -1, goid_or(curg),
		    LOAD(mp->spinning) ? "true" : "false",
		    !pp && !curg ? "true" : "false",
		    goid_or(LOAD(mp->lockedg)));
	}
	for (struct g *gp = LOAD(sched.allgs); gp; gp = LOAD(gp->alllink)) {
		uint32_t st = atomic_load(&gp->status);
		if (gp->is_g0 || st == G_IDLE)
			continue;
		struct m *mp = LOAD(gp->m);
		struct m *lm = LOAD(gp->lockedm);
		const char *why = (st & ~G_SCAN) == G_WAITING
					  ? LOAD(gp->waitreason)
					  : NULL;
		put(o, "  G%llu: status=%d(%s) m=%lld lockedm=%lld\n",
		    (unsigned long long)LOAD(gp->goid), go_gstatus(st),
		    why ? why : "", mp ? (long long)LOAD(mp->id) : -1LL,
		    lm ? (long long)LOAD(lm->id) : -1LL);
	}
}

void schedtrace(bool detailed, int64_t now)
{
	struct out o = { .n = 0 };

	/* Go counts sysmon among its threads (it is an M there). */
	int32_t threads = LOAD(sched.mcount) + LOAD(sched.nruntime_threads);
	put(&o,
	    "SCHED %lldms: gomaxprocs=%d idleprocs=%d threads=%d "
	    "spinningthreads=%d idlethreads=%d runqueue=%d",
	    (long long)((now - start_ns) / 1000000), gomaxprocs,
	    atomic_load(&sched.npidle), threads,
	    atomic_load(&sched.nmspinning), LOAD(sched.nmidle),
	    atomic_load(&sched.runqsize));
	if (detailed) {
		put(&o, " nmidlelocked=%d\n", LOAD(sched.nmidlelocked));
		detail(&o);
	} else {
		put(&o, " [");
		for (int32_t i = 0; i < gomaxprocs; i++) {
			uint32_t h = atomic_load(&allp[i]->runqhead);
			uint32_t t = atomic_load(&allp[i]->runqtail);
			put(&o, i ? " %u" : "%u", t - h);
		}
		put(&o, "]\n");
	}
	sys_write(2, o.buf, o.n);
}

/* The clock of the SCHED lines starts with the runtime. */
void schedtrace_start(int64_t now)
{
	start_ns = now;
}
