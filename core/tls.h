/*
 * tls.h: a complete glibc thread identity (TLS block + TCB) per goroutine.
 * See tls.c and core/README.md (the per-goroutine glibc identity).
 */
#ifndef GOSHIM_TLS_H
#define GOSHIM_TLS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct g;

/* Resolve ld.so's private entry points and verify the TCB layout on the
 * calling (main) thread. On failure, *why says what did not match and the
 * runtime must stay native. */
bool tls_init(const char **why);
/* Verify the rest of the layout on a short-lived real thread (as the
 * scheduler starts); false with *why as tls_init. */
bool tls_probe(const char **why);

/* Bytes a stack mapping must keep at its top for static TLS + TCB. */
size_t tls_area_size(void);

/* Build a TCB whose static TLS ends at top (zeroed memory). Returns the
 * thread pointer, or NULL when ld.so could not allocate the DTV. */
void *tls_create(char *top);

/* Lowest address of the static TLS below a TCB: where the stack ends. */
char *tls_stack_top(void *tcb);

/* Fill in the header of a new or reused TCB for gp (tid, guards, stack
 * bounds, getg slot). tid is a fake unique tid, or a real one for g0. */
void tls_prepare(struct g *gp, pid_t tid);

/* Reset the TLS of a dead goroutine's TCB for reuse: every module's block
 * back to its initial image, except libc's, whose malloc tcache and arena
 * are kept (glibc frees them only in an unexported function). */
void tls_reset(void *tcb);

/* Release a TCB's DTV and dynamic TLS blocks (the memory stays). */
void tls_destroy(void *tcb);

/* On the goroutine, before user code: libc per-thread init. */
void tls_enter(struct g *gp);

/* On the goroutine, at exit: C++ thread_local destructors. */
void tls_exit(void);

/* Point the TCB's cancellation/unwind buffer at buf (start_thread's). */
void tls_set_unwind_buf(void *tcb, void *buf);
/* The bottom buffer of a TCB's unwind chain, or NULL. */
void *tls_bottom_unwind_buf(void *tcb);
unsigned long tls_pointer_guard(void *tcb);

/* Before a goroutine forks: its TCB becomes a thread list of its own, as
 * glibc's child code relinks the caller's TCB into its list. */
void tls_fork_prepare(void *tcb);
/* In the child of fork: the dlopen lock unlocked; m_tcb (the forking M's
 * own TCB, or NULL) marked in use again; g_tcb (the forking goroutine's,
 * or NULL) off glibc's thread list, where glibc's fork put it. */
void tls_fork_child(void *m_tcb, void *g_tcb);

/* A TCB's tid (struct pthread's, at an offset tls.c checks at start-up):
 * inline, since every mutex lock stores it as the owner. */
extern const ptrdiff_t tls_off_tid;
static inline pid_t tls_tid(void *tcb)
{
	return *(pid_t *)((char *)tcb + tls_off_tid);
}

static inline void tls_set_tid(void *tcb, pid_t tid)
{
	*(pid_t *)((char *)tcb + tls_off_tid) = tid;
}

/* The word glibc has the kernel clear and wake when the thread exits
 * (CLONE_CHILD_CLEARTID, set_tid_address): the TCB's tid. */
static inline _Atomic int *tls_tid_word(void *tcb)
{
	return (_Atomic int *)((char *)tcb + tls_off_tid);
}

/* glibc's cancellation word (struct pthread's cancelhandling, checked at
 * start-up) and its bits: pthread_cancel, pthread_setcancelstate and
 * pthread_setcanceltype work on it, and goshim reads it to know when a
 * goroutine's wait must end (deferred) or glibc's signal did not reach it
 * (asynchronous: glibc aims SIGCANCEL at the goroutine's fake tid). */
#define TLS_CANCELSTATE_DISABLE 0x01
#define TLS_CANCELTYPE_ASYNC 0x02
#define TLS_CANCELING 0x04
#define TLS_CANCELED 0x08
#define TLS_EXITING 0x10
#define TLS_TERMINATED 0x20
extern const ptrdiff_t tls_off_cancelhandling;
static inline _Atomic int *tls_cancelhandling(void *tcb)
{
	return (_Atomic int *)((char *)tcb + tls_off_cancelhandling);
}
/* pthread_testcancel would act: cancelled, enabled, not yet exiting. */
static inline bool tls_cancel_due(void *tcb)
{
	int ch = atomic_load_explicit(tls_cancelhandling(tcb),
				      memory_order_relaxed);
	return (ch & (TLS_CANCELSTATE_DISABLE | TLS_CANCELED | TLS_EXITING |
		      TLS_TERMINATED)) == TLS_CANCELED;
}

/* The TCB's robust mutex list head (glibc's, for set_robust_list). */
void *tls_robust_head(void *tcb);

/* After dlopen: initialise modules placed in static TLS in every
 * goroutine's TCB (ld.so only knows its own threads). */
void tls_after_dlopen(void);
/* After dlclose: forget the modules that are gone. */
void tls_after_dlclose(void);

/* Fake tids, never real ones: tls_fake_tids reserves n of them and
 * returns the first's number; tls_fake_tid is number k's tid, with
 * *again once the ids have come round (a live thread may still have it). */
uint64_t tls_fake_tids(uint32_t n);
pid_t tls_fake_tid(uint64_t k, bool *again);

#endif
