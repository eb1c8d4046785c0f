/*
 * preempt.c: asynchronous preemption of a goroutine that runs past its
 * slice without calling into the runtime (core/README.md, invariant 8, and
 * its Preemption section for the measurements).
 *
 * sysmon sends SIGURG to the M with rt_tgsigqueueinfo, si_code SI_QUEUE
 * and a per-process random cookie as the value: the program cannot send
 * that by accident, so every other SIGURG is the program's and goes to
 * the disposition it set (kept here; the kernel's is always goshim's).
 *
 * The handler redirects the interrupted context into the arch trampoline
 * only at a safe point: the running context is a goroutine (not g0) on
 * this M (found by its tid: the thread pointer is the goroutine's), in
 * user code (pstate MP_USER, or MP_LOST when sysmon took its P while it
 * slept in the kernel or lived in libc), with its pc in the text of a
 * module that holds no lock of libc's or ours (the program and its own
 * libraries: not libc, ld.so, goshim, libgcc_s, libunwind, the vDSO) or
 * in code a JIT compiler made (anonymous executable memory), not on a
 * signal stack, with room on its stack. Otherwise it does nothing, and sysmon
 * asks again. Runtime locks are taken only in goshim's and libc's text,
 * so a goroutine interrupted elsewhere holds none. The handler runs on
 * the goroutine's stack (no alternate stack unless the program asked for
 * one for SIGURG): the kernel's frame lies below the red zone, so the
 * interrupted pc travels to the trampoline in a thread-local slot.
 *
 * The trampoline calls preempt_yield on the goroutine's own stack, which
 * is gopreempt: the goroutine goes to the global run queue, as with Go's
 * gopreempt_m; when it runs again the trampoline restores every register
 * and returns to the interrupted instruction.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "preempt.h"
#include "procparse.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "sigkeep.h"
#include "sys.h"

/* Stack left below the trampoline's frame for preempt_yield and mcall. */
#define YIELD_STACK 2048
#define REFRESH_NS 1000000000
#define REFRESH_MAX_NS 64000000000LL

/* ---- which code may be interrupted -------------------------------------- */

/* Where a pc is: code that may be interrupted, goshim's own (the
 * goroutine reaches a cooperative check there soon), or another module
 * that may not be. */
enum text_kind { TEXT_UNSAFE, TEXT_OK, TEXT_GOSHIM };

/* Code of a module, or anonymous: an executable mapping of no file, which
 * only a JIT compiler makes (HotSpot's code cache and interpreter, V8's,
 * LuaJIT's). Generated code is the program's own: it calls libc as the
 * program's text does and holds no lock of libc's or ours while it runs,
 * so it may be interrupted. Without that, a Java thread that computes
 * could never be stopped and took its P's M with it after 20 ms, an OS
 * thread per busy Java thread. An anonymous range turns TEXT_UNSAFE (its
 * kind written and read with atomics) as the program unmaps any of it
 * (preempt_text_unmap): the loader may map a library such as libgcc_s
 * there next, and a goroutine stopped in it could hold the loader's lock
 * that sysmon takes. */
struct text_range {
	uintptr_t lo, hi;
	enum text_kind kind;
	bool anon;
};

struct text_map {
	unsigned long long adds, subs; /* dl_iterate_phdr's load counters */
	bool anon;		       /* has anonymous ranges */
	size_t n;
	struct text_range r[];
};

static _Atomic(struct text_map *) text;
static _Atomic bool text_stale;	/* the handler met a pc not in the map */
static int64_t text_refreshed, text_refresh_ns = REFRESH_NS;
/* munmap and mremap calls of the program's that have returned: a map made
 * from /proc/self/maps read before one may hold a range that is gone. */
static _Atomic unsigned long text_unmaps;
/* An unmap took code from the map: look again at once, whatever the
 * backoff says. */
static _Atomic bool text_lost;

/* Modules whose code takes libc's or the loader's locks, or ours, or
 * spin and futex locks of their own that every allocation passes through
 * (the sanitizer runtimes: a goroutine stopped holding one leaves every
 * other M, and sysmon's own calloc for a new M, waiting on it for good). */
static bool module_unsafe(const char *path)
{
	static const char *const unsafe[] = {
		"libc.so",	 "ld-linux", "ld64.so",	   "libpthread.so",
		"libdl.so",	 "librt.so", "libgcc_s.so", "libunwind",
		"linux-vdso",	 "linux-gate", "libgoshim", "libasan.so",
		"libubsan.so",	 "liblsan.so", "libtsan.so", "libhwasan.so",
	};
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++)
		if (strncmp(base, unsafe[i], strlen(unsafe[i])) == 0)
			return true;
	return false;
}

struct text_build {
	struct text_map *map;
	size_t cap;
	bool oom;
};

/* The next range of b's map, or NULL (b->oom) when there is no memory. */
static struct text_range *text_slot(struct text_build *b)
{
	if (b->map->n == b->cap) {
		size_t cap = b->cap * 2;
		struct text_map *m = realloc(b->map,
					     sizeof *m + cap * sizeof m->r[0]);
		if (m == NULL) {
			b->oom = true;
			return NULL;
		}
		b->map = m;
		b->cap = cap;
	}
	return &b->map->r[b->map->n++];
}

static int text_add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_build *b = arg;
	uintptr_t self = (uintptr_t)&text_add;
	bool mod_ok = !module_unsafe(info->dlpi_name ? info->dlpi_name : "");

	(void)size;
	b->map->adds = info->dlpi_adds;
	b->map->subs = info->dlpi_subs;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		struct text_range *r = text_slot(b);
		if (r == NULL)
			return 1;
		r->lo = info->dlpi_addr + ph->p_vaddr;
		r->hi = r->lo + ph->p_memsz;
		r->anon = false;
		/* goshim itself, whatever its file is called */
		r->kind = self >= r->lo && self < r->hi ? TEXT_GOSHIM
			  : mod_ok			 ? TEXT_OK
							 : TEXT_UNSAFE;
	}
	return 0;
}

/* A line of /proc/self/maps: into b if it is anonymous code that
 * overlaps none of b's first `modules` ranges (one that does is the
 * module's: a segment's zero-filled tail). */
static void text_add_line(struct text_build *b, size_t modules,
			  const char *line, size_t len)
{
	uintptr_t lo, hi;

	if (!proc_maps_anon_exec(line, len, &lo, &hi))
		return;
	for (size_t i = 0; i < modules; i++)
		if (lo < b->map->r[i].hi && b->map->r[i].lo < hi)
			return;
	struct text_range *r = text_slot(b);
	if (r) {
		*r = (struct text_range){ lo, hi, TEXT_OK, true };
		b->map->anon = true;
	}
}

/* The anonymous executable mappings of /proc/self/maps into b, after its
 * modules. */
static void text_add_anon(struct text_build *b)
{
	enum { BUF = 8192 }; /* a line: 80 bytes and a path */
	char *buf = malloc(BUF);
	size_t len = 0, modules = b->map->n;
	bool skip = false; /* in a line longer than BUF */
	int fd = sys_open("/proc/self/maps", O_RDONLY);

	if (buf == NULL || fd < 0) {
		free(buf);
		if (fd >= 0)
			sys_close(fd);
		return;
	}
	for (;;) {
		long got = sys_read(fd, buf + len, BUF - len);
		if (got <= 0)
			break;
		len += (size_t)got;
		char *line = buf, *end = buf + len, *nl;
		while ((nl = memchr(line, '\n', (size_t)(end - line)))) {
			if (!skip)
				text_add_line(b, modules, line,
					      (size_t)(nl + 1 - line));
			skip = false;
			line = nl + 1;
		}
		len = (size_t)(end - line);
		memmove(buf, line, len);
		if (len == BUF) {
			skip = true;
			len = 0;
		}
	}
	sys_close(fd);
	free(buf);
}

static int range_cmp(const void *a, const void *b)
{
	const struct text_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A new map, not yet published, and in *unmaps text_unmaps as it was
 * before /proc/self/maps was read. Not in a signal handler:
 * dl_iterate_phdr takes the loader's lock. A library the loader maps
 * while this runs is never taken for anonymous code: its mappings are its
 * file's (but for a segment's zero-filled tail, where no code runs); its
 * code runs only once the loader has listed it, and its pcs,
 * in no range of this map, make the next scan list it. */
static struct text_map *text_scan(unsigned long *unmaps)
{
	struct text_build b = { .cap = 64 };

	b.map = calloc(1, sizeof *b.map + b.cap * sizeof b.map->r[0]);
	if (b.map == NULL)
		return NULL;
	dl_iterate_phdr(text_add, &b);
	*unmaps = atomic_load(&text_unmaps);
	if (!b.oom)
		text_add_anon(&b);
	if (b.oom) {
		free(b.map);
		return NULL;
	}
	qsort(b.map->r, b.map->n, sizeof b.map->r[0], range_cmp);
	return b.map;
}

/* Marks m's anonymous ranges that overlap [lo, hi) unsafe. */
static void text_forget(struct text_map *m, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].anon && m->r[i].lo < hi && lo < m->r[i].hi)
			__atomic_store_n(&m->r[i].kind, TEXT_UNSAFE,
					 __ATOMIC_SEQ_CST);
}

/* An unmap counted since the mappings were read may have taken code
 * this map holds: then every anonymous range of it is doubtful and waits
 * for the next scan. */
static void text_doubt(struct text_map *m, unsigned long unmaps)
{
	if (m->anon && atomic_load(&text_unmaps) != unmaps) {
		text_forget(m, 0, UINTPTR_MAX);
		atomic_store(&text_stale, true);
	}
}

/* The old map is kept (the handler may be reading it): maps change only
 * when modules were loaded or JIT code appeared, so few are ever made.
 * Looked at before and after: an unmap that counts itself after the
 * second look finds this map when it looks for its range. */
static void text_publish(struct text_map *m, unsigned long unmaps)
{
	text_doubt(m, unmaps);
	atomic_store(&text, m);
	text_doubt(m, unmaps);
}

static void text_build(void)
{
	unsigned long unmaps;
	struct text_map *m = text_scan(&unmaps);

	if (m)
		text_publish(m, unmaps);
}

static bool text_same(struct text_map *a, struct text_map *b)
{
	if (a->n != b->n || a->adds != b->adds || a->subs != b->subs)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].lo != b->r[i].lo || a->r[i].hi != b->r[i].hi ||
		    __atomic_load_n(&a->r[i].kind, __ATOMIC_SEQ_CST) !=
			    b->r[i].kind)
			return false;
	return true;
}

void preempt_text_unmap(uintptr_t addr, size_t len, bool done)
{
	if (done)
		atomic_fetch_add(&text_unmaps, 1);
	struct text_map *m = atomic_load(&text);
	if (m == NULL || !m->anon)
		return;
	uintptr_t hi = addr + len < addr ? UINTPTR_MAX : addr + len;
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].anon && m->r[i].lo < hi && addr < m->r[i].hi) {
			text_forget(m, addr, hi);
			/* what is left of it is found by the next scan */
			atomic_store(&text_lost, true);
			atomic_store(&text_stale, true);
			return;
		}
}

/* A pc in no range: a module loaded since, code made since by a JIT, or
 * code of neither (a file mapped by hand, a memfd's JIT code), which
 * stays unknown: the handler keeps meeting it, so such a map is looked
 * for less and less often, up to once a minute. */
void preempt_refresh_text(int64_t now)
{
	unsigned long unmaps;
	struct text_map *m, *old;

	if (atomic_exchange(&text_lost, false))
		text_refresh_ns = REFRESH_NS;
	if (!atomic_load_explicit(&text_stale, memory_order_relaxed) ||
	    now - text_refreshed < text_refresh_ns)
		return;
	atomic_store(&text_stale, false);
	text_refreshed = now;
	if ((m = text_scan(&unmaps)) == NULL)
		return;
	old = atomic_load(&text);
	if (old && text_same(old, m)) {
		free(m);
		if (text_refresh_ns < REFRESH_MAX_NS)
			text_refresh_ns *= 2;
		return;
	}
	text_refresh_ns = REFRESH_NS;
	text_publish(m, unmaps);
}

/* May the code at pc be interrupted? Async-signal-safe. */
static enum text_kind text_kind(uintptr_t pc)
{
	struct text_map *m = atomic_load_explicit(&text,
						  memory_order_acquire);
	size_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < m->r[mid].lo)
			hi = mid;
		else if (pc >= m->r[mid].hi)
			lo = mid + 1;
		else
			return __atomic_load_n(&m->r[mid].kind,
					       __ATOMIC_ACQUIRE);
	}
	atomic_store_explicit(&text_stale, true, memory_order_relaxed);
	return TEXT_UNSAFE;
}

/* ---- the program's SIGURG ----------------------------------------------- */

/* The disposition the program set, as the kernel would report it. A
 * seqlock: the handler reads it; writers block SIGURG while they write,
 * so the handler never waits for its own thread. */
static struct {
	struct spinlock lock;
	struct seqcount seq;
	struct sigaction act;
} prog;

static bool installed;
static uintptr_t cookie;
static size_t stack_need;


static void prog_read(struct sigaction *out)
{
	seq_read(&prog.seq, out, &prog.act, sizeof *out);
}

static void prog_write(const struct sigaction *act)
{
	uint64_t urg = sigbit(SIGURG), old;

	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &urg, &old, 8);
	spin_lock(&prog.lock);
	seq_write(&prog.seq, &prog.act, act, sizeof *act);
	spin_unlock(&prog.lock);
	SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
}

/* A SIGURG that is not goshim's: what the program asked for. */
static void prog_deliver(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;

	prog_read(&a);
	if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN)
		return; /* SIGURG's default action is to ignore it */
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl = a;
		dfl.sa_handler = SIG_DFL;
		dfl.sa_flags &= ~SA_SIGINFO;
		prog_write(&dfl);
	}
	/* The mask the kernel would have set for the program's handler:
	 * the interrupted one, its sa_mask, SIGURG unless SA_NODEFER. */
	uint64_t mask, want, now;
	memcpy(&mask, &((ucontext_t *)uc)->uc_sigmask, sizeof mask);
	memcpy(&want, &a.sa_mask, sizeof want);
	want |= mask;
	want = (a.sa_flags & SA_NODEFER) ? want & ~sigbit(SIGURG)
					 : want | sigbit(SIGURG);
	now = mask | sigbit(SIGURG);
	want &= ~SIG_KERNEL_UNBLOCKABLE;
	/* On a goroutine the records say so first, and come back after, as
	 * for the program's other handlers (sigroute.c): its sigprocmask
	 * reports want, and a handler nested in this one gives want back. */
	struct g *gp = getg();
	uint64_t own = 0;
	if (gp && gp->m) {
		own = gp->sigmask;
		gp->sigmask = want & ~SIG_GLIBC_INTERNAL;
		gp->m->sigmask = want;
	}
	if (want != now)
		SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &want, NULL, 8);
	uintptr_t locked = 0;
	if (gp) {
		locked = preempt_handler_enter(gp, uc);
		gp->in_sighandler++;
		gp->handlers_ran++;
	}
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	if (gp) {
		gp->in_sighandler--;
		preempt_handler_done(gp, locked);
	}
	if (gp && gp->m) {
		/* sigreturn puts back the kernel's mask from before */
		gp->sigmask = own;
		gp->m->sigmask = mask;
		m_taken_until_sigreturn(gp->m, mask);
	}
}

int preempt_sigaction(const struct sigaction *act, struct sigaction *old)
{
	struct sigaction cur;

	prog_read(&cur);
	if (act) {
		struct sigaction mine, next = *act;
#ifdef SA_RESTORER
		/* Reported back as the kernel would: glibc's restorer. */
		real.sigaction(SIGURG, NULL, &mine);
		next.sa_flags |= SA_RESTORER;
		next.sa_restorer = mine.sa_restorer;
#endif
		prog_write(&next);
		/* The program's handler runs inside goshim's: on the
		 * alternate stack only if it asked for it. */
		if ((act->sa_flags ^ cur.sa_flags) & SA_ONSTACK) {
			real.sigaction(SIGURG, NULL, &mine);
			mine.sa_flags = (mine.sa_flags & ~SA_ONSTACK) |
					(act->sa_flags & SA_ONSTACK);
			real.sigaction(SIGURG, &mine, NULL);
		}
	}
	if (old)
		*old = cur;
	return 0;
}

/* ---- the signal --------------------------------------------------------- */

/* The M of this thread: the current G's M may be in flux (a switch is
 * half done), the thread is not. Ms are never freed, so the list can be
 * walked without its lock. */
static struct m *m_self(void)
{
	pid_t tid = sys_gettid();

	for (struct m *mp = __atomic_load_n(&sched.allms, __ATOMIC_ACQUIRE);
	     mp; mp = mp->alllink)
		if (mp->tid == tid)
			return mp;
	return NULL;
}

static bool preempt_ok(struct m *mp, struct g *gp, void *uc);

static void preempt_here(void *uc)
{
	struct m *mp = m_self();
	struct g *gp = getg();

	if (mp == NULL)
		return;
	enum text_kind where = text_kind(arch_uc_pc(uc));
	if (where != TEXT_OK || !preempt_ok(mp, gp, uc) ||
	    !arch_preempt_inject(uc)) {
		/* sysmon asks again, or takes the P from a goroutine that
		 * lives where it cannot be stopped (in goshim it soon meets
		 * a cooperative check) */
		if (where != TEXT_GOSHIM)
			atomic_store(&mp->preempt_refused, true);
		atomic_store(&mp->preempt_sent, 0);
		return;
	}
	/* Cleared by gopreempt once the goroutine has left the M: a second
	 * signal before that could meet a SIGURG the next goroutine sends
	 * itself, and standard signals do not queue. */
}

uintptr_t preempt_handler_enter(struct g *gp, const void *uc)
{
	uintptr_t was = gp->locked_frame_sp, sp = arch_uc_sp(uc);

	if (text_kind(arch_uc_pc(uc)) != TEXT_OK && sp > was)
		gp->locked_frame_sp = sp;
	return was;
}

void preempt_handler_done(struct g *gp, uintptr_t token)
{
	gp->locked_frame_sp = token;
}

/* Is the interrupted context a safe point (its pc aside)? */
static bool preempt_ok(struct m *mp, struct g *gp, void *uc)
{
	if (gp == NULL || gp->is_g0 || gp->m != mp || mp->curg != gp ||
	    atomic_load(&gp->status) != G_RUNNING)
		return false;
	uint32_t ps = atomic_load(&mp->pstate);
	if (ps != MP_USER && ps != MP_LOST)
		return false;
	if (((ucontext_t *)uc)->uc_stack.ss_flags & SS_ONSTACK)
		return false; /* in a handler of the program's, on its stack */
	uintptr_t sp = arch_uc_sp(uc);
	if (gp->locked_frame_sp) {
		if (sp < gp->locked_frame_sp)
			return false; /* a handler over a lock holder */
		gp->locked_frame_sp = 0;
	}
	if (gp->stack_lo &&
	    (sp > (uintptr_t)gp->stack_hi ||
	     sp - (uintptr_t)gp->stack_lo < stack_need))
		return false;
	return true;
}

static void sigurg_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	struct g *gp = getg();
	bool here;

	if (si->si_code == SI_QUEUE && si->si_pid == sys_getpid() &&
	    (uintptr_t)si->si_value.sival_ptr == cookie) {
		preempt_here(uc);
	} else if (sigthread_misdirected(sig, si, &here)) {
		/* handed back to the goroutine it was sent for */
	} else if (gp && gp->is_g0) {
		sigkeep_put(NULL, si);
		sigroute_note(sig); /* an idle M took the program's SIGURG */
	} else if (gp && (gp->sigmask & sigbit(SIGURG))) {
		/* blocked by the goroutine, not by its thread: kept until
		 * it unblocks (sigmask.c delivers it then) */
		if (!here)
			sigkeep_put(gp, si);
		atomic_fetch_or(&gp->sigpending, sigbit(SIGURG));
	} else {
		if (here && gp)
			sigthread_kept_siginfo(gp, sig, si); /* standard: true */
		prog_deliver(sig, si, uc);
	}
	errno = saved;
}

/* Called by the trampoline, on the goroutine's stack. */
static void preempt_yield(void)
{
	int saved = errno;
	gopreempt();
	errno = saved;
}

bool preempt_m(struct m *mp, struct g *gp, int64_t now)
{
	int64_t sent = atomic_load(&mp->preempt_sent);
	siginfo_t si;

	/* A signal the thread had blocked meanwhile may never arrive: send
	 * again after a slice. */
	if (sent && now - sent < 10000000)
		return false;
	if (!atomic_compare_exchange_strong(&mp->preempt_sent, &sent, now))
		return false;
	atomic_store(&mp->preempt_refused, false);
	/* gp may have left the M since sysmon looked (gopreempt clears the
	 * flag after it has): then the signal would meet another goroutine,
	 * and perhaps a SIGURG of its own. */
	if (__atomic_load_n(&mp->curg, __ATOMIC_SEQ_CST) != gp) {
		atomic_store(&mp->preempt_sent, 0);
		return false;
	}
	sigthread_siginfo(&si, SIGURG, SI_QUEUE);
	si.si_value.sival_ptr = (void *)cookie;
	return SYS4(SYS_rt_tgsigqueueinfo, si.si_pid, mp->tid, SIGURG, &si) ==
	       0;
}

uint64_t preempt_unblockable_set;

bool preempt_on(void)
{
	return installed;
}

void preempt_init(void)
{
	struct sigaction act, old;

	if (installed)
		return;
	/* Once per process (a child of fork has what its parent built). */
	if (atomic_load(&text) == NULL) {
		if (!arch_preempt_init(preempt_yield))
			return; /* no trampoline for this CPU: no preemption */
		stack_need = arch_preempt_stack() + YIELD_STACK;
		if (SYS3(SYS_getrandom, &cookie, sizeof cookie, 0) !=
		    sizeof cookie)
			cookie = (uintptr_t)nanotime() ^ (uintptr_t)&cookie;
		text_build();
		if (atomic_load(&text) == NULL)
			return;
	}
	if (real.sigaction(SIGURG, NULL, &old) != 0)
		return;
	prog_write(&old);
	memset(&act, 0, sizeof act);
	act.sa_sigaction = sigurg_handler;
	/* SA_RESTART: a system call that was about to block when the signal
	 * came restarts, as if there had been none. */
	act.sa_flags = SA_SIGINFO | SA_RESTART | (old.sa_flags & SA_ONSTACK);
	sigemptyset(&act.sa_mask);
	if (real.sigaction(SIGURG, &act, NULL) == 0) {
		installed = true;
		preempt_unblockable_set = sigbit(SIGURG);
	}
}

/* A child of fork is native until its first goroutine (fork.c): a SIGURG
 * the program leaves at its default or ignores goes back to the kernel so,
 * and preempt_init puts goshim's handler back then. A handler of the
 * program's keeps goshim's in front of it, which runs it as natively. */
void preempt_fork_child(void)
{
	struct sigaction a;

	if (!installed)
		return;
	prog_read(&a);
	if ((a.sa_flags & SA_SIGINFO) ||
	    (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN))
		return;
	if (real.sigaction(SIGURG, &a, NULL) == 0) {
		installed = false;
		preempt_unblockable_set = 0;
	}
}
