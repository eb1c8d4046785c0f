/*
 * wire.h: goroutines wired to their own M (Go's LockOSThread).
 *
 * A thread's CPU affinity, scheduling policy and priority, and nice value
 * belong to an OS thread. A goroutine that sets its own is wired to the M
 * it runs on for as long as they differ from the process's (the values at
 * start-up): the M runs nothing else, and when the goroutine blocks, the M
 * hands its P on and sleeps until the goroutine is runnable again. Values
 * set on another goroutine that is not wired wait in that goroutine until
 * it next runs, and wire it then. A wired goroutine that ends while its
 * thread still carries its values takes its M with it, as in Go, unless
 * the thread can be put back.
 */
#ifndef GOSHIM_WIRE_H
#define GOSHIM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include "runtime.h"

struct thread_attrs {
	bool pending; /* set from another thread: apply when it runs */
	bool has_mask, has_sched, has_nice;
	int policy, priority, nice;
	unsigned char mask[]; /* wire_mask_bytes() */
};

/* Read the process's values (the baseline). */
void wire_init(void);
/* A new M (made by sysmon, which runs with a short slice of its own)
 * takes the process's scheduling values. */
void wire_new_m(void);
/* The kernel's CPU mask size in bytes. */
size_t wire_mask_bytes(void);

/* Errors are the kernel's (EINVAL, EPERM, ESRCH). gp is a live goroutine,
 * the caller's own or another's. */
int wire_set_affinity(struct g *gp, size_t len, const void *mask);
int wire_get_affinity(struct g *gp, size_t len, void *mask);
/* policy -1: keep the current policy (sched_setparam). */
int wire_set_sched(struct g *gp, int policy, int priority);
void wire_get_sched(struct g *gp, int *policy, int *priority);
int wire_set_nice(struct g *gp, int nice);
int wire_get_nice(struct g *gp);

/* A copy of creator's values for a goroutine it creates (NULL if none):
 * new threads inherit them. */
struct thread_attrs *wire_inherit(struct g *creator);
/* Make a in the new goroutine's copy the explicit scheduling it was
 * created with; EPERM/EINVAL as pthread_create gives them. */
int wire_explicit_sched(struct thread_attrs **a, int policy, int priority);
/* The same for an affinity the attr carries (EINVAL: no usable CPU). */
int wire_explicit_mask(struct thread_attrs **a, size_t len, const void *mask);
/* The g.rtprio of a goroutine created with a (NULL: the process's). */
int wire_rtprio(const struct thread_attrs *a);

/*
 * Around a process-shared lock (core/README.md, invariant 5): the owner the kernel
 * and other processes see is a thread, so from the first such lock taken
 * to the last released the goroutine stays wired to its M, its TCB holds
 * the M's real tid (a PI futex needs it) and its robust list is the one
 * the kernel walks when the thread dies (EOWNERDEAD in the other process).
 * wire_hold before taking one; wire_drop after releasing it, or when the
 * take failed.
 */
void wire_hold(void);
void wire_drop(void);
/* The robust list the kernel is to walk for gp: what set_robust_list gave
 * it, else its TCB's. */
struct robust_list_head *wire_robust_list(struct g *gp);
/* set_robust_list on gp: its list, as the kernel keeps one per thread;
 * the kernel's too while gp is wired for a process-shared lock, since the
 * kernel then walks it. 0 or -errno. */
long wire_set_robust_list(struct g *gp, struct robust_list_head *head,
			  size_t len);

/* proc.c: a goroutine with values waiting is about to run on mp. */
void wire_adopt(struct m *mp, struct g *gp);
/* g.c, on g0: the wired gp has ended; false if mp's thread could not
 * be given back the process's values (then the M must exit). */
bool wire_release(struct m *mp, struct g *gp);

#endif
