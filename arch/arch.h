/*
 * arch.h: the per-CPU interface the runtime is built on.
 *
 * A goroutine that is not running is an arch_ctx: the stack pointer at which
 * its callee-saved registers (and floating-point control state) were pushed,
 * and the thread pointer (its own glibc TCB) to install when it resumes.
 * arch_switch is the only place the thread pointer changes: compilers assume
 * it constant within a C function (stack protector canary, TLS addresses).
 *
 * This header includes nothing of goshim's; each CPU directory provides the
 * same functions.
 */
#ifndef GOSHIM_ARCH_H
#define GOSHIM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arch_ctx {
	void *sp; /* saved stack pointer; registers live below it */
	void *tp; /* thread pointer to install when switching to this context */
};

/* Detect CPU features (FSGSBASE). Call once before the first switch. */
void arch_init(void);

/* Save the running context in *from and resume *to, installing to->tp. */
void arch_switch(struct arch_ctx *from, const struct arch_ctx *to);

/*
 * Make *ctx start entry(arg) on the stack that ends at stack_top, with
 * thread pointer tp. entry must never return. The new context inherits the
 * caller's floating-point control state (as a new kernel thread would).
 */
void arch_ctx_init(struct arch_ctx *ctx, void *stack_top, void *tp,
		   void (*entry)(void *), void *arg);

/* The current thread pointer (what arch_switch installs). */
void *arch_get_tp(void);

/* One raw system call: never goes through libc, so never through goshim's
 * own interposers. Returns -errno on failure, like the kernel. */
long arch_syscall6(long nr, long a1, long a2, long a3, long a4, long a5,
		   long a6);

/*
 * Rewrite the resume address of a glibc jmp_buf (as made by setjmp in the
 * calling process, pointer-mangled with the given guard) so that longjmp to
 * it lands in landing() with the saved stack pointer instead.
 */
void arch_jmpbuf_set_pc(void *jmpbuf, void (*landing)(void), uintptr_t guard);

/*
 * Asynchronous preemption (core/preempt.c). A signal handler redirects
 * the interrupted context (its ucontext_t) into a trampoline that saves
 * every register, flags and the whole vector/x87 state on the
 * interrupted stack, calls yield(), restores all of it and resumes at the
 * interrupted instruction.
 * arch_preempt_init: false where this CPU has no trampoline (preemption
 * is then off). arch_preempt_stack: bytes the trampoline uses below the
 * interrupted stack pointer, yield()'s own frames not included.
 * arch_preempt_inject: false when the context must not be redirected (it
 * sits on a system call instruction the kernel rewound for a restart,
 * which must run again on this same thread).
 */
bool arch_preempt_init(void (*yield)(void));
size_t arch_preempt_stack(void);
uintptr_t arch_uc_pc(const void *uc);
uintptr_t arch_uc_sp(const void *uc);
bool arch_preempt_inject(void *uc);
/* The interrupted context (a ucontext_t) was in a system call: its pc is
 * just after a system call instruction (the call ended with EINTR) or on
 * one (the kernel rewound it to restart the call). */
bool arch_uc_at_syscall(const void *uc);

/* Pause hint for spin loops. */
static inline void arch_cpu_relax(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
#error "goshim: unsupported CPU"
#endif
}

#endif
