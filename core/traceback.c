/*
 * traceback.c: the goroutine dump, as Go's traceback prints it:
 *
 *   goroutine 3 [cond, 2 minutes]:
 *   gopark+0x5b
 *   	/path/libgoshim.so +0xa31b
 *   ...
 *   cond_waiter+0x2b
 *   	/path/prog +0x13fb
 *
 * (function+offset, then the object and the offset in it). A goroutine
 * that is not running is its saved context (arch_ctx): the stack pointer
 * below which arch_switch pushed the callee-saved registers and its
 * return address, which is all an unwinder needs to start from. So the
 * backtrace comes from libunwind with a context built from those. It is
 * dlopen'ed with RTLD_LOCAL on the first dump, never linked: libunwind
 * exports _Unwind_* and, loaded globally, would take C++ exception
 * unwinding over from libgcc_s in the host program.
 *
 * The world is not stopped. A parked or runnable goroutine is held while
 * its stack is read: G_SCAN or'ed into its status, which goready and
 * execute wait out (Go's _Gscan), so it cannot run (or exit and give its
 * stack back) meanwhile. Running goroutines (and those in system calls)
 * are shown as such; only the one doing the dump has its own stack
 * unwound. allgs is read without its lock (Gs are only ever pushed at its
 * head). The dump runs where no lock of the interrupted code is held: on
 * sysmon for SIGQUIT (debug.c) and for `goshim dump` (dumpreq.c, whose
 * writer sends the text to the asking process's pipe), on the exiting
 * goroutine, or on the M that found the deadlock (checkdead.c).
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "debug.h"
#include "print.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "tls.h"

#define MAX_FRAMES 64
#define STR_(x) #x
#define STR(x) STR_(x)

/* libunwind's local-unwinding entry points, by their real names (the
 * header maps unw_step to _ULx86_64_step and so on). */
static struct {
	__typeof__(&unw_init_local) init_local;
	__typeof__(&unw_init_local2) init_local2;
	__typeof__(&unw_step) step;
	__typeof__(&unw_get_reg) get_reg;
	__typeof__(&unw_get_proc_name) get_proc_name;
} unw;
/* C++ names read better demangled: libstdc++'s demangler, if the
 * program has it. */
static char *(*cxa_demangle)(const char *, char *, size_t *, int *);
static _Atomic int unw_state; /* 0 not tried, 1 loaded, -1 unavailable */
static char unw_error[160];

static void to_stderr(const char *s, size_t n)
{
	sys_write(2, s, n);
}

static void say(dump_write_fn *w, const char *s)
{
	w(s, strlen(s));
}

static void sayf(dump_write_fn *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sayf(dump_write_fn *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	size_t n = vsnprint(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		w(buf, n < sizeof buf ? n : sizeof buf - 1);
}

static bool unw_load(void)
{
	int st = atomic_load(&unw_state);
	if (st)
		return st > 0;
	cxa_demangle = (__typeof__(cxa_demangle))dlsym(RTLD_DEFAULT,
						       "__cxa_demangle");
	/* The C library's dlopen, not the library's own (core calls no
	 * interposer): then what the interposer adds, libunwind's TLS in
	 * every goroutine. */
	void *h = real.dlopen("libunwind.so.8", RTLD_LOCAL | RTLD_LAZY);
	if (h) {
		tls_after_dlopen();
		unw.init_local = (__typeof__(unw.init_local))dlsym(
			h, STR(unw_init_local));
		unw.init_local2 = (__typeof__(unw.init_local2))dlsym(
			h, STR(unw_init_local2));
		unw.step = (__typeof__(unw.step))dlsym(h, STR(unw_step));
		unw.get_reg = (__typeof__(unw.get_reg))dlsym(h,
							   STR(unw_get_reg));
		unw.get_proc_name = (__typeof__(unw.get_proc_name))dlsym(
			h, STR(unw_get_proc_name));
	}
	if (!h)
		snprint(unw_error, sizeof unw_error,
			"no backtraces: cannot load libunwind.so.8 (%s); "
			"install libunwind8", dlerror());
	else if (!unw.init_local || !unw.init_local2 || !unw.step ||
		 !unw.get_reg || !unw.get_proc_name)
		snprint(unw_error, sizeof unw_error,
			"no backtraces: libunwind.so.8 lacks %s (1.3 or later "
			"needed)",
			STR(unw_init_local2));
	st = unw_error[0] ? -1 : 1;
	atomic_store(&unw_state, st);
	return st > 0;
}

/* The registers arch_switch saved (see arch/ * /switch.S), as the
 * context the unwinder starts from: it resumes where arch_switch would
 * return to. */
static void ctx_to_ucontext(const struct arch_ctx *ctx, ucontext_t *uc)
{
	const uint64_t *sp = ctx->sp;

	memset(uc, 0, sizeof *uc);
#if defined(__x86_64__)
	/* sp[0] FP control, then r15 r14 r13 r12 rbx rbp, return address */
	greg_t *r = uc->uc_mcontext.gregs;
	r[REG_R15] = (greg_t)sp[1];
	r[REG_R14] = (greg_t)sp[2];
	r[REG_R13] = (greg_t)sp[3];
	r[REG_R12] = (greg_t)sp[4];
	r[REG_RBX] = (greg_t)sp[5];
	r[REG_RBP] = (greg_t)sp[6];
	r[REG_RIP] = (greg_t)sp[7];
	r[REG_RSP] = (greg_t)(uintptr_t)(sp + 8);
#elif defined(__aarch64__)
	/* x19..x30 in the first 96 bytes of a 176-byte frame */
	for (int i = 0; i < 12; i++)
		uc->uc_mcontext.regs[19 + i] = sp[i];
	uc->uc_mcontext.pc = sp[11];
	uc->uc_mcontext.sp = (uint64_t)(uintptr_t)sp + 176;
#else
#error "goshim: traceback: unsupported CPU"
#endif
}

/* Frames whose stack pointer is at or below skip_to are the dump's own
 * (NULL: none), not shown. */
static void print_frames(dump_write_fn *w, unw_cursor_t *cur,
			 const void *skip_to)
{
	unw_word_t sp = 0;
	int skip = 0;

	while (skip_to && unw.get_reg(cur, UNW_REG_SP, &sp) == 0 &&
	       sp <= (uintptr_t)skip_to) {
		if (unw.step(cur) <= 0)
			return;
		skip++;
	}
	for (int i = 0; i < MAX_FRAMES; i++) {
		unw_word_t ip = 0, off = 0;
		char name[128];
		Dl_info info;

		if (unw.get_reg(cur, UNW_REG_IP, &ip) < 0 || ip == 0)
			return;
		if (unw.get_proc_name(cur, name, sizeof name, &off) < 0)
			snprint(name, sizeof name, "?");
		char *plain = NULL;
		if (cxa_demangle && name[0] == '_' && name[1] == 'Z')
			plain = cxa_demangle(name, NULL, NULL, NULL);
		if (plain) {
			snprint(name, sizeof name, "%s", plain);
			free(plain);
		}
		/* ip - 1: a return address may be the first byte of the next
		 * function (after a noreturn call). */
		if (dladdr((void *)(uintptr_t)(ip - (i + skip > 0)), &info) &&
		    info.dli_fname)
			sayf(w, "%s+0x%lx\n\t%s +0x%lx\n", name,
			     (unsigned long)off,
			     info.dli_fname,
			     (unsigned long)(ip - (uintptr_t)info.dli_fbase));
		else
			sayf(w, "%s+0x%lx\n\t? pc=0x%lx\n", name,
			     (unsigned long)off, (unsigned long)ip);
		if (unw.step(cur) <= 0)
			return;
	}
	say(w, "...additional frames elided...\n");
}

static void backtrace_saved(dump_write_fn *w, const struct g *gp)
{
	ucontext_t uc;
	unw_cursor_t cur;

	ctx_to_ucontext(&gp->ctx, &uc);
	/* As a signal frame: the saved pc is used as it is, not as a return
	 * address (pc - 1). It is one in all but a goroutine that never ran,
	 * whose pc is arch_ctx_start's first byte; after a call, pc is still
	 * inside the caller (mcall returns). */
	if (unw.init_local2(&cur, &uc, UNW_INIT_SIGNAL_FRAME) < 0) {
		say(w, "\tcannot unwind from the saved registers\n");
		return;
	}
	print_frames(w, &cur, NULL);
}

/* The running stack, from the frame above the dump's (skip_to). */
static void backtrace_here(dump_write_fn *w, const void *skip_to)
{
	ucontext_t uc;
	unw_cursor_t cur;

	if (getcontext(&uc) != 0 || unw.init_local(&cur, &uc) < 0) {
		say(w, "\tcannot unwind the running stack\n");
		return;
	}
	print_frames(w, &cur, skip_to);
}

/* Hold a parked or runnable G still: true, with its status in *st;
 * false (and its status) if it runs, is in a syscall, is gone, or another
 * dump holds it. */
static bool scan_hold(struct g *gp, uint32_t *st)
{
	uint32_t s = atomic_load(&gp->status);
	for (;;) {
		*st = s;
		/* G_SCAN already set: another dump holds it */
		if (s != G_WAITING && s != G_RUNNABLE)
			return false;
		if (atomic_compare_exchange_weak(&gp->status, &s, s | G_SCAN))
			return true;
	}
}

static void header(dump_write_fn *w, const struct g *gp, uint32_t st,
		   int64_t now)
{
	const char *what = st == G_RUNNABLE  ? "runnable"
			   : st == G_SYSCALL ? "syscall"
			   : st == G_WAITING ? (gp->waitreason ? gp->waitreason
							       : "waiting")
					     : "running";
	int64_t mins = st == G_WAITING ? (now - gp->waitsince) / 60000000000LL
				       : 0;
	if (mins > 0)
		sayf(w, "\ngoroutine %llu [%s, %lld minutes]:%s\n",
		     (unsigned long long)gp->goid, what, (long long)mins,
		     gp->is_main ? " (main)" : "");
	else
		sayf(w, "\ngoroutine %llu [%s]:%s\n",
		     (unsigned long long)gp->goid, what,
		     gp->is_main ? " (main)" : "");
}

/* skip_to: the dump's frame, for self's backtrace. */
static void dump_one(dump_write_fn *w, struct g *gp, const struct g *self,
		     bool unwind, int64_t now, const void *skip_to)
{
	uint32_t st;

	if (gp->is_g0)
		return;
	bool held = scan_hold(gp, &st);
	if (st == G_IDLE || st == G_DEAD || (st & G_SCAN))
		return;
	header(w, gp, st, now);
	if (held) {
		if (unwind)
			backtrace_saved(w, gp);
		atomic_store(&gp->status, st);
	} else if (gp == self && unwind) {
		backtrace_here(w, skip_to);
	} else {
		say(w, "\tgoroutine running on other thread; stack "
		       "unavailable\n");
	}
}

#define NEXT(gp) __atomic_load_n(&(gp)->alllink, __ATOMIC_ACQUIRE)

/* Go's order: the dumping goroutine first, then the others oldest first
 * (allgs has the newest at its head). */
void goroutines_dump(const struct g *self)
{
	goroutines_dump_to(self, to_stderr);
}

void goroutines_dump_to(const struct g *self, dump_write_fn *w)
{
	int64_t now = nanotime_coarse();
	bool unwind = unw_load();
	struct g *head = __atomic_load_n(&sched.allgs, __ATOMIC_ACQUIRE);
	size_t n = 0;
	const void *frame = __builtin_frame_address(0);

	if (!unwind)
		sayf(w, "goshim: %s\n", unw_error);
	if (self)
		dump_one(w, (struct g *)self, self, unwind, now, frame);
	for (struct g *gp = head; gp; gp = NEXT(gp))
		n++;
	struct g **all = malloc(n * sizeof *all);
	if (all == NULL) { /* newest first, then */
		for (struct g *gp = head; gp; gp = NEXT(gp))
			if (gp != self)
				dump_one(w, gp, self, unwind, now, frame);
		return;
	}
	size_t k = 0;
	for (struct g *gp = head; gp && k < n; gp = NEXT(gp))
		all[k++] = gp;
	while (k-- > 0)
		if (all[k] != self)
			dump_one(w, all[k], self, unwind, now, frame);
	free(all);
}
