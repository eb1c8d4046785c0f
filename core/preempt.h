/*
 * preempt.h: asynchronous preemption by signal (core/README.md, invariant 8),
 * and the program's own view of SIGURG, the signal it uses.
 */
#ifndef GOSHIM_PREEMPT_H
#define GOSHIM_PREEMPT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct m;

/* At start-up, on the main thread: learn which code may be interrupted,
 * take over SIGURG (keeping the program's disposition as its own). */
void preempt_init(void);
void preempt_fork_child(void);
/* True once goshim's SIGURG handler is installed. */
bool preempt_on(void);
/* The signals no thread may block while it runs goroutines: SIGURG, once
 * preemption is on. A goroutine that blocks it has that in its own mask
 * (g.sigmask) only; the program's SIGURG then stays kept in the G. Set
 * once at start-up; read on every switch (m_set_sigmask). */
extern uint64_t preempt_unblockable_set;
static inline uint64_t preempt_unblockable(void)
{
	return preempt_unblockable_set;
}
/* sysmon: signal mp, whose thread runs, to yield its goroutine gp; false
 * if a signal sent less than a slice ago is still on its way, or gp has
 * left the M. */
struct g;
bool preempt_m(struct m *mp, struct g *gp, int64_t now);
/* sysmon: the handler met code it did not know (a module loaded since):
 * read the list of loaded modules again. */
void preempt_refresh_text(int64_t now);

/* munmap or mremap of [addr, addr + len) by the program, before the
 * kernel's call (done false) and once it has returned (done true): JIT
 * code there is no longer known to be code. Async-signal-safe and
 * allocates nothing: an allocator's own munmap (jemalloc's) comes here,
 * its locks held. */
void preempt_text_unmap(uintptr_t addr, size_t len, bool done);

/* A program handler is to run on gp over the context uc: till
 * preempt_handler_done(gp, token), gp is not preempted if that context
 * may hold a lock (its pc is not the program's own code). */
uintptr_t preempt_handler_enter(struct g *gp, const void *uc);
void preempt_handler_done(struct g *gp, uintptr_t token);

/* sigaction(SIGURG, act, old) as the program sees it (shim/signal.c). */
int preempt_sigaction(const struct sigaction *act, struct sigaction *old);

#endif
