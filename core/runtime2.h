/*
 * runtime2.h: what the scheduler's files (proc.c, m.c, p.c, g.c,
 * syscall.c, sigmask.c) share and shim/ must not call. runtime.h is the
 * face shim/ uses; the types of G, M and P are there too, since shim
 * reads some of their fields.
 */
#ifndef GOSHIM_RUNTIME2_H
#define GOSHIM_RUNTIME2_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "runtime.h"

/* proc.c */
/* What g0 runs for a G that switched to it (m.mcall_fn). */
typedef struct g *(*mcall_fn)(struct g *);
/* Switch to g0 and run fn(gp) there; returns when gp is resumed. */
void mcall(mcall_fn fn);
void schedule(struct m *mp) __attribute__((noreturn));

/* m.c */
struct m *allocm(void);
/* Run some M on pp (an idle P if NULL). */
void startm(struct p *pp, bool spinning);
/* Work was added: start a spinning M if a P idles and nobody looks. */
void wakep(void);
bool stopm(struct m *mp, int64_t deadline);
int64_t m_reap_deadline(struct m *mp);
void m_reap(struct m *mp);
void m_wait_for_p(struct m *mp);
void stoplockedm(struct m *mp);
void startlockedm(struct m *mp, struct g *gp);
void mexit(struct m *mp);
/* In the child of fork: no M waits to be started. */
void newm_fork_child(void);

/* p.c (sched.lock held for the idle list and acquirep/releasep) */
struct p *pidleget(void);
void pidleput(struct p *pp);
void acquirep(struct m *mp, struct p *pp);
struct p *releasep(struct m *mp);
void p_drain(struct p *pp);
struct g *p_retire(struct m *mp, struct g *gp);

/* syscall.c */
struct g *exitsyscall0(struct g *gp);
void handoffp(struct p *pp);

/* g.c */
void gfput_global(struct g *gp); /* sched.gflock held */

/* sigmask.c */
void m_set_altstack(struct m *mp, const stack_t *ss);
void idle_signals_block(struct m *mp);
/* A new goroutine's signal state: none pending, no alternate stack, and
 * the mask its creator has (a thread's, for one goroutine did not make). */
void g_signals_init(struct g *gp);

/* keys.c */
void keys_reset(struct g *gp);

#endif
