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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "real.h"
#include "runtime.h"
#include "sys.h"

#define DEFAULT_MAX_THREADS 10000
#define MAX_REASONS 16

static int32_t max_threads = DEFAULT_MAX_THREADS;

static void say(const char *buf, int n, size_t cap)
{
	if (n > 0)
		sys_write(2, buf, (size_t)n < cap ? (size_t)n : cap - 1);
}

/* Digits only, by hand: libc's strtol may be a sanitizer's that refuses
 * calls made during its own start-up, when this runs (see real.h). */
int32_t threadlimit_parse(const char *s)
{
	int64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT32_MAX)
			return -1;
	}
	return v < 1 ? -1 : (int32_t)v;
}

void threadlimit_init(void)
{
	const char *env = getenv("GOSHIM_MAX_THREADS");
	int32_t v;

	if (env == NULL)
		return;
	v = threadlimit_parse(env);
	if (v < 0) {
		char buf[160];
		int n = snprintf(buf, sizeof buf,
				 "goshim: GOSHIM_MAX_THREADS=\"%.40s\" is not a "
				 "thread count >= 1; using %d\n",
				 env, DEFAULT_MAX_THREADS);
		say(buf, n, sizeof buf);
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
	char buf[160];
	int n;

	if (nthreads <= max_threads)
		return;
	n = snprintf(buf, sizeof buf,
		     "runtime: program exceeds %d-thread limit\n", max_threads);
	say(buf, n, sizeof buf);
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
	say("goroutines:", 11, 12);
	for (int i = 0; i < nseen; i++) {
		n = snprintf(buf, sizeof buf, "%s %d [%s]", i ? "," : "",
			     seen[i].n, seen[i].what);
		say(buf, n, sizeof buf);
	}
	if (other) {
		n = snprintf(buf, sizeof buf, ", %d [other]", other);
		say(buf, n, sizeof buf);
	}
	say("\n", 1, 2);
	runtime_throw("thread exhaustion");
}
