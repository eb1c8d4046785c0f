/*
 * threadlimit.c: a cap on the OS threads the runtime makes, as Go's
 * debug.SetMaxThreads (default 10,000; GOSHIM_MAX_THREADS=N).
 *
 * Ms pile up only when goroutines block in the kernel (each blocked one
 * holds its M while sysmon hands its P to another). A program that blocks
 * ever more of them would otherwise grow until the kernel refuses a
 * thread, and die there with less to say. Past the cap the process ends
 * as Go's does: "runtime: program exceeds N-thread limit", then what its
 * goroutines were doing (a count per state or wait reason, which tells
 * the blocking call that piled the threads up), then abort.
 */
#include <stdlib.h>
#include <string.h>
#include "number.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"

#define DEFAULT_MAX_THREADS 10000
#define MAX_REASONS 16

static int32_t max_threads = DEFAULT_MAX_THREADS;

int32_t threadlimit_parse(const char *s)
{
	const char *end = s + strlen(s);
	uint64_t v;

	if (!parse_uint(&s, end, 10, INT32_MAX, &v) || s != end || v < 1)
		return -1;
	return (int32_t)v;
}

void threadlimit_init(void)
{
	const char *env = getenv("GOSHIM_MAX_THREADS");
	int32_t v;

	if (env == NULL)
		return;
	v = threadlimit_parse(env);
	if (v < 0) {
		print("goshim: GOSHIM_MAX_THREADS=\"%.40s\" is not a "
		      "thread count >= 1; using %d\n",
		      env, DEFAULT_MAX_THREADS);
		return;
	}
	max_threads = v;
}

/* What a goroutine is doing, for the count: its wait reason when parked. */
static const char *doing(const struct g *gp, uint32_t st)
{
	switch (st) {
	case G_RUNNABLE:
		return "runnable";
	case G_RUNNING:
		return "running";
	case G_SYSCALL:
		return "syscall";
	default:
		return gp->waitreason ? gp->waitreason : "waiting";
	}
}

void threadlimit_check(int32_t nthreads)
{
	struct {
		const char *what;
		int n;
	} seen[MAX_REASONS];
	int nseen = 0, other = 0;

	if (nthreads <= max_threads)
		return;
	print("runtime: program exceeds %d-thread limit\n", max_threads);
	for (struct g *gp = sched.allgs; gp; gp = gp->alllink) {
		uint32_t st = atomic_load(&gp->status);
		if (gp->is_g0 || st == G_IDLE || st == G_DEAD)
			continue;
		const char *what = doing(gp, st);
		int i = 0;
		while (i < nseen && strcmp(seen[i].what, what) != 0)
			i++;
		if (i < nseen) {
			seen[i].n++;
		} else if (nseen < MAX_REASONS) {
			seen[nseen].what = what;
			seen[nseen++].n = 1;
		} else {
			other++;
		}
	}
	print("goroutines:");
	for (int i = 0; i < nseen; i++)
		print("%s %d [%s]", i ? "," : "", seen[i].n, seen[i].what);
	if (other)
		print(", %d [other]", other);
	print("\n");
	runtime_throw("thread exhaustion");
}
