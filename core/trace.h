/*
 * trace.h: GOSHIM_TRACE=FILE, scheduler events as Chrome trace-event JSON
 * (see trace.c). The hooks sit in the scheduler's paths; with tracing off
 * each costs one load of trace_on and a branch predicted not taken.
 */
#ifndef GOSHIM_TRACE_H
#define GOSHIM_TRACE_H

#include <stdbool.h>

struct g;
struct m;
struct p;

/* hidden: one cmpb on a rip-relative address, no GOT load */
extern bool trace_on __attribute__((visibility("hidden")));

#define TRACE(call)                                 \
	do {                                        \
		if (__builtin_expect(trace_on, 0)) \
			call;                       \
	} while (0)

/* debug.c, at start-up: file NULL or empty leaves tracing off. */
void trace_init(const char *file);

void trace_gocreate(const struct g *gp, const struct g *parent);
void trace_gostart(const struct g *gp, const struct p *pp); /* on its M */
/* It leaves its M: blocked (why = its wait reason), yielded, queued after
 * a syscall, or ended (ended true). */
void trace_gostop(const struct g *gp, const char *why, bool ended);
void trace_gounblock(const struct g *gp, const struct g *by);
void trace_syscall_enter(const struct g *gp);
void trace_syscall_exit(const struct g *gp);
void trace_procstart(const struct p *pp, const struct m *mp);
void trace_procstop(const struct p *pp);
void trace_steal(const struct p *thief, const struct p *victim);
/* The trace file is fd (fd_vacate, under its lock, which keeps the file
 * where it is): trace_fd_set moves it to the copy at fd. */
bool trace_fd_is(int fd);
void trace_fd_set(int fd);
/* The child of fork records nothing: the file and buffers are the
 * parent's. */
void trace_fork_child(void);

#endif
