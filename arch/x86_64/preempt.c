/*
 * x86_64 side of asynchronous preemption: how large the extended-state
 * save area is (CPUID leaf 0xD, for the features the kernel enabled in
 * XCR0), which save instruction the trampoline uses, and the rewrite of
 * an interrupted ucontext into a call of the trampoline (preempt.S).
 */
#include <cpuid.h>
#include <stdint.h>
#include <ucontext.h>
#include "../arch.h"

#define RED_ZONE 128 /* below the stack pointer, left to leaf code */

/* Read by arch_preempt_tramp. 0: fxsave, 1: xsave, 2: xsavec. */
__attribute__((visibility("hidden"))) unsigned char arch_xsave_mode;
/* Bytes to reserve below the registers, alignment slack included. */
__attribute__((visibility("hidden"))) uint32_t arch_xsave_size;
__attribute__((visibility("hidden"))) void (*arch_preempt_yield)(void);
/* The interrupted pc, for the trampoline to push: thread-local, so the
 * goroutine's own TLS block (the handler runs on its thread pointer). */
__attribute__((visibility("hidden"))) __thread uintptr_t arch_preempt_pc;

void arch_preempt_tramp(void);

bool arch_preempt_init(void (*yield)(void))
{
	unsigned a, b, c, d;
	uint32_t size = 512;

	arch_preempt_yield = yield;
	arch_xsave_mode = 0;
	/* OSXSAVE: the kernel manages XCR0, so XSAVE may be used. */
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) &&
	    __get_cpuid_max(0, NULL) >= 0xd) {
		arch_xsave_mode = 1;
		__cpuid_count(0xd, 0, a, b, c, d);
		size = b; /* standard form, features enabled in XCR0 */
		__cpuid_count(0xd, 1, a, b, c, d);
		if (a & (1u << 1)) { /* XSAVEC */
			arch_xsave_mode = 2;
			/* compacted form of XCR0 | IA32_XSS: an upper bound */
			if (b > size)
				size = b;
		}
	}
	arch_xsave_size = size + 64;
	return true;
}

size_t arch_preempt_stack(void)
{
	/* return address + red zone, rflags and 15 registers, save area */
	return 8 + RED_ZONE + 16 * 8 + arch_xsave_size;
}

uintptr_t arch_uc_pc(const void *uc)
{
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
}

uintptr_t arch_uc_sp(const void *uc)
{
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];
}

bool arch_uc_at_syscall(const void *uc)
{
	const unsigned char *pc = (const unsigned char *)arch_uc_pc(uc);

	/* `syscall` is 0f 05. */
	return (pc[-2] == 0x0f && pc[-1] == 0x05) ||
	       (pc[0] == 0x0f && pc[1] == 0x05);
}

bool arch_preempt_inject(void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *r = uc->uc_mcontext.gregs;
	const unsigned char *pc = (const unsigned char *)r[REG_RIP];

	/* A `syscall` about to run again after a signal: the restart (and
	 * restart_syscall's per-thread block) belongs to this thread. */
	if (pc[0] == 0x0f && pc[1] == 0x05)
		return false;
	/* Not pushed here: without an alternate stack the kernel's signal
	 * frame (the saved vector state that sigreturn restores) lies just
	 * below the red zone. The trampoline pushes it once that is gone. */
	arch_preempt_pc = (uintptr_t)r[REG_RIP];
	r[REG_RIP] = (greg_t)(uintptr_t)arch_preempt_tramp;
	return true;
}
