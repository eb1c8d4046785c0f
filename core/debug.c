/*
 * debug.c: GOSHIM_DEBUG, Go's GODEBUG for goshim: a comma-separated list
 * of name=value (schedtrace=MS, scheddetail=1, dumponexit=1,
 * dumponquit=0, chaos=1, chaosseed=N), and the SIGQUIT goroutine dump.
 *
 * SIGQUIT: at start-up, if the program left it at the default action,
 * goshim installs a handler (a program that installs its own later simply
 * replaces it, and one that asks sees goshim's). The handler only asks
 * sysmon for the dump and returns: sysmon is a real thread that holds no
 * lock when it looks for work, while the interrupted thread may hold any
 * (malloc's, the loader's, the scheduler's). The program keeps running,
 * as a JVM does after its SIGQUIT thread dump, because the dump is for
 * looking into a live process (a server that seems stuck); natively the
 * default action ends the process with a core dump, and Go exits after
 * its dump. dumponquit=0 leaves SIGQUIT alone, for that default action.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "chaos.h"
#include "debug.h"
#include "number.h"
#include "print.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "trace.h"

/* GOSHIM_DEBUG, parsed once as the library loads. */
static struct {
	int64_t schedtrace_ns; /* 0: off */
	bool scheddetail;
	bool dumponexit;
	bool dumponquit;
	bool chaos;		/* chaos.h's stress mode */
	int64_t chaosseed;	/* -1: from the clock */
} debug = { .dumponquit = true, .chaosseed = -1 };

static int64_t schedtrace_next;

/* The SIGQUIT dump: asked for by the handler, done by sysmon; more
 * SIGQUITs while one is under way are the same request. */
static _Atomic bool quit_asked;

/* A non-negative decimal number of at most 12 digits that fills the whole
 * of s, or -1. */
static long long number(const char *s, size_t len)
{
	const char *end = s + len;
	uint64_t v;

	if (len > 12 || !parse_uint(&s, end, 10, UINT64_MAX, &v) || s != end)
		return -1;
	return (long long)v;
}

void parse_debug(const char *spec)
{
	while (*spec) {
		size_t len = strcspn(spec, ",");
		size_t klen = strcspn(spec, "=");
		const char *val = spec + klen + 1;
		long long v = klen < len ? number(val, len - klen - 1) : -1;

#define KEY(k) (klen == sizeof(k) - 1 && strncmp(spec, k, klen) == 0)
		if (len == 0) {
			/* an empty item (",,"): nothing */
		} else if (!KEY("schedtrace") && !KEY("scheddetail") &&
			   !KEY("dumponexit") && !KEY("dumponquit") &&
			   !KEY("chaos") && !KEY("chaosseed")) {
			print("goshim: GOSHIM_DEBUG: unknown setting \"%.*s\" "
			      "ignored (known: schedtrace=MS, scheddetail=1, "
			      "dumponexit=1, dumponquit=0, chaos=1, "
			      "chaosseed=N)\n",
			      (int)(len > 64 ? 64 : len), spec);
		} else if (v < 0) {
			print("goshim: GOSHIM_DEBUG: \"%.*s\" ignored: the "
			      "value must be a number\n",
			      (int)(len > 64 ? 64 : len), spec);
		} else if (KEY("schedtrace")) {
			debug.schedtrace_ns = (int64_t)v * 1000000;
		} else if (KEY("scheddetail")) {
			debug.scheddetail = v != 0;
		} else if (KEY("dumponexit")) {
			debug.dumponexit = v != 0;
		} else if (KEY("chaos")) {
			debug.chaos = v != 0;
		} else if (KEY("chaosseed")) {
			debug.chaosseed = v;
		} else {
			debug.dumponquit = v != 0;
		}
#undef KEY
		spec += len;
		if (*spec == ',')
			spec++;
	}
}

static void on_sigquit(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	atomic_store(&quit_asked, true);
	sysmon_wake();
}

static void sigquit_install(void)
{
	struct sigaction old, sa;

	/* The kernel's own call: the handler is goshim's, not one the
	 * program installed (sigroute's record stays the default). */
	if (!debug.dumponquit || real.sigaction(SIGQUIT, NULL, &old) != 0 ||
	    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigquit;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	real.sigaction(SIGQUIT, &sa, NULL);
}

/* A child of fork is native until its first goroutine (fork.c): goshim's
 * SIGQUIT handler, which asks a sysmon the child does not have yet, gives
 * way to the default action; debug_fork_resume installs it again. */
void debug_fork_child(void)
{
	struct sigaction cur, dfl;

	if (real.sigaction(SIGQUIT, NULL, &cur) != 0 ||
	    !(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_sigquit)
		return;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	real.sigaction(SIGQUIT, &dfl, NULL);
}

void debug_fork_resume(void)
{
	sigquit_install();
}

static void dump_at_exit(void)
{
	print("goshim: goroutines at exit:\n");
	goroutines_dump(getg());
}

void debug_load(void)
{
	const char *spec = getenv("GOSHIM_DEBUG");

	if (spec)
		parse_debug(spec);
}

bool debug_chaos_asked(void)
{
	return debug.chaos;
}

void debug_start(void)
{
	if (debug.chaos)
		chaos_start(debug.chaosseed);
	schedtrace_start(nanotime());
	schedtrace_next = debug.schedtrace_ns ? nanotime() : 0;
	sigquit_install();
	if (debug.dumponexit)
		runtime_atexit(dump_at_exit);
	trace_init(getenv("GOSHIM_TRACE"));
}

void debug_sysmon(void)
{
	dumpreq_poll();
	if (__builtin_expect(atomic_load_explicit(&quit_asked,
						  memory_order_relaxed),
			     0)) {
		atomic_store(&quit_asked, false);
		print("SIGQUIT: goroutine dump\n");
		goroutines_dump(NULL);
	}
	if (debug.schedtrace_ns) {
		int64_t now = nanotime();
		if (now >= schedtrace_next) {
			schedtrace(debug.scheddetail, now);
			schedtrace_next = now + debug.schedtrace_ns;
		}
	}
}
