/*
 * runtime.c: start-up, and the few services everything else needs.
 *
 * goshim starts in two steps. As the library loads (its constructor, or
 * the first interposed call, whichever comes first) it decides whether it
 * can run at all, and refuses (stays native, says why once on stderr) when
 * it cannot give every goroutine a correct glibc identity: unverified TCB
 * layout, not loaded on the main thread, or GOSHIM_DISABLE=1. The
 * scheduler itself starts only when the program makes its second thread
 * (runtime_start): a shell, a coreutil, any process that stays single-
 * threaded runs exactly as natively, with no thread, fd, signal handler
 * or mask of goshim's. Until then its one thread is like a thread goshim
 * did not create: interposers give it the C library's behaviour, and
 * lock objects keep goshim's layout (so a mutex locked before the start
 * is unlocked correctly after it).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <time.h>
#include "chaos.h"
#include "debug.h"
#include "futex.h"
#include "gomaxprocs.h"
#include "netpoll.h"
#include "preempt.h"
#include "print.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "wire.h"
#include "stack.h"
#include "sys.h"
#include "tls.h"

bool runtime_enabled;
_Atomic bool runtime_running;
_Atomic bool shim_fast;
static _Atomic int init_state; /* load: 0 not yet, 1 running, 2 done */
static _Atomic pid_t init_tid;
static _Atomic int start_state; /* the scheduler's: the same */
static _Atomic pid_t start_tid;

int64_t nanotime(void)
{
	struct timespec ts;
	real.clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A few ms of resolution, a few ns of cost: for wait times in dumps. */
int64_t nanotime_coarse(void)
{
	struct timespec ts;
	real.clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void runtime_throw(const char *msg)
{
	print("goshim: fatal error: %s\n", msg);
	abort();
}

static void refuse(const char *why)
{
	print("goshim: staying native: %s\n", why);
}

static void refuse_layout(const char *why)
{
	char msg[200];
	snprint(msg, sizeof msg,
		"glibc TCB layout check failed (%s); goshim knows glibc 2.36 "
		"on x86_64", why);
	refuse(msg);
}

/* Unknown GOSHIM_ settings are reported once, never silently ignored. */
static void check_settings(void)
{
	static const char *const known[] = {
		"GOSHIM_DISABLE", "GOSHIM_STACK_SIZE", "GOSHIM_MAX_THREADS",
		"GOSHIM_DEBUG",	  "GOSHIM_TRACE",
	};
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "GOSHIM_", 7) != 0)
			continue;
		size_t len = strcspn(*e, "=");
		bool ok = false;
		for (size_t i = 0; i < sizeof known / sizeof *known; i++)
			ok |= strlen(known[i]) == len &&
			      strncmp(*e, known[i], len) == 0;
		if (!ok)
			print("goshim: unknown setting %.*s ignored\n",
			      (int)(len > 64 ? 64 : len), *e);
	}
}

/* As the library loads: everything that can refuse, and nothing the
 * program could see (no thread, fd, handler or mask of goshim's). */
static void runtime_load(void)
{
	const char *why = NULL;
	const char *dis = getenv("GOSHIM_DISABLE");

	if (dis && strcmp(dis, "0") != 0 && *dis)
		return; /* asked to stay native: silently */
	if (sys_gettid() != sys_getpid()) {
		refuse("the runtime must start on the main thread (was the "
		       "library dlopen'ed instead of LD_PRELOAD'ed?)");
		return;
	}
	check_settings();
	arch_init();
	if (!tls_init(&why)) {
		refuse_layout(why);
		return;
	}
	debug_load();
	runtime_enabled = true;
}

static void run_exit_hook(void *fn)
{
	((void (*)(void))fn)();
}

void runtime_atexit(void (*fn)(void))
{
	real.cxa_atexit(run_exit_hook, (void *)fn, NULL);
}

void runtime_ensure_init(void)
{
	int st = atomic_load_explicit(&init_state, memory_order_acquire);
	if (st == 2)
		return;
	st = 0;
	if (atomic_compare_exchange_strong(&init_state, &st, 1)) {
		init_tid = sys_gettid();
		runtime_load();
		atomic_store_explicit(&init_state, 2, memory_order_release);
		if (runtime_enabled)
			atomic_store_explicit(&shim_fast, !debug_chaos_asked(),
					      memory_order_release);
		return;
	}
	/* Called again from inside the load (a malloc replacement or
	 * constructor calling an interposer): native until it is done. */
	if (init_tid == sys_gettid())
		return;
	/* Another thread is loading (only possible for threads the runtime
	 * did not create): wait for it. */
	while (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
		arch_cpu_relax();
}

/*
 * The scheduler starts with the program's second thread: the caller
 * (normally the main thread, inside its first pthread_create) becomes the
 * main goroutine with everything it built natively (handlers, mask,
 * alternate stack, key values, TLS), and goshim's own threads, fds and
 * handlers appear only now. A thread goshim did not create may get here
 * first (a glibc helper thread, raw clone): it stays such a thread, and
 * the main thread is then one too.
 */
static void runtime_start_now(void)
{
	const char *why = NULL;

	if (!tls_probe(&why)) {
		refuse_layout(why);
		return;
	}
	stack_init();
	threadlimit_init();
	SYS2(SYS_prctl, PR_GET_NAME, sched.main_name);
	sched_init(sysmon_gomaxprocs(), sys_gettid() == sys_getpid());
	proc_status_open();
	p_claim_init(proc_status_get("Threads:") == 1);
	futex_pagemap_open();
	wire_init();
	/* The handlers the program installed natively go behind goshim's;
	 * SIGURG's is preempt.c's to chain. */
	preempt_init();
	sigroute_adopt();
	sched_main_mask();
	debug_start();
	netpoll_init();
	/* Goroutines run in parallel from now on, whatever glibc counted. */
	__libc_single_threaded = 0;
	sysmon_start();
	atomic_store_explicit(&runtime_running, true, memory_order_release);
}

bool runtime_start(void)
{
	int st = atomic_load_explicit(&start_state, memory_order_acquire);

	if (st != 2) {
		st = 0;
		if (atomic_compare_exchange_strong(&start_state, &st, 1)) {
			start_tid = sys_gettid();
			runtime_start_now();
			atomic_store_explicit(&start_state, 2,
					      memory_order_release);
		} else if (start_tid == sys_gettid()) {
			return false; /* from inside the start: native */
		} else {
			while (atomic_load_explicit(&start_state,
						    memory_order_acquire) != 2)
				arch_cpu_relax();
		}
	}
	return atomic_load_explicit(&runtime_running, memory_order_acquire);
}
