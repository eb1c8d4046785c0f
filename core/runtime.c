/*
 * runtime.c: start-up, and the few services everything else needs.
 *
 * The runtime starts on the main thread, from the library's constructor or
 * from the first interposed call that needs it, whichever comes first. It
 * refuses (stays native, says why once on stderr) when it cannot give every
 * goroutine a correct glibc identity: unverified TCB layout, not started on
 * the main thread, or GOSHIM_DISABLE=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <time.h>
#include "chaos.h"
#include "debug.h"
#include "gomaxprocs.h"
#include "netpoll.h"
#include "real.h"
#include "runtime.h"
#include "wire.h"
#include "stack.h"
#include "sys.h"
#include "tls.h"

bool runtime_enabled;
_Atomic bool runtime_running;
_Atomic bool shim_fast;
static _Atomic int init_state; /* 0 not yet, 1 running, 2 done */
static _Atomic pid_t init_tid;

int64_t nanotime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A few ms of resolution, a few ns of cost: for wait times in dumps. */
int64_t nanotime_coarse(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void runtime_throw(const char *msg)
{
	char buf[256];
	int n = snprintf(buf, sizeof buf, "goshim: fatal error: %s\n", msg);
	if (n > 0)
		sys_write(2, buf, (size_t)n < sizeof buf ? (size_t)n
							 : sizeof buf - 1);
	abort();
}

static void refuse(const char *why)
{
	char buf[320];
	int n = snprintf(buf, sizeof buf,
			 "goshim: staying native: %s\n", why);
	if (n > 0)
		sys_write(2, buf, (size_t)n < sizeof buf ? (size_t)n
							 : sizeof buf - 1);
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
		if (!ok) {
			char buf[160];
			int n = snprintf(buf, sizeof buf,
					 "goshim: unknown setting %.*s "
					 "ignored\n", (int)(len > 64 ? 64 : len),
					 *e);
			if (n > 0)
				sys_write(2, buf, (size_t)n < sizeof buf
							  ? (size_t)n
							  : sizeof buf - 1);
		}
	}
}

static void runtime_init(void)
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
		char msg[200];
		snprintf(msg, sizeof msg,
			 "glibc TCB layout check failed (%s); goshim knows "
			 "glibc 2.36 on x86_64", why);
		refuse(msg);
		return;
	}
	stack_init();
	threadlimit_init();
	prctl(PR_GET_NAME, sched.main_name);
	sched_init(sysmon_gomaxprocs());
	proc_status_open();
	wire_init();
	debug_init();
	netpoll_init();
	/* Goroutines run in parallel from now on, whatever glibc counted. */
	__libc_single_threaded = 0;
	sysmon_start();
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
		runtime_init();
		atomic_store_explicit(&init_state, 2, memory_order_release);
		if (runtime_enabled) {
			atomic_store_explicit(&runtime_running, true,
					      memory_order_release);
			atomic_store_explicit(&shim_fast, !chaos(),
					      memory_order_release);
		}
		return;
	}
	/* Called again from inside the start-up (a malloc replacement or
	 * constructor calling an interposer): native until it is done. */
	if (init_tid == sys_gettid())
		return;
	/* Another thread is initialising (only possible for threads the
	 * runtime did not create): wait for it. */
	while (atomic_load_explicit(&init_state, memory_order_acquire) != 2)
		arch_cpu_relax();
}
