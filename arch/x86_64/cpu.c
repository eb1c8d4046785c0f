/*
 * x86_64 pieces that need no assembly file: feature detection, the initial
 * frame of a new context, raw system calls, jmp_buf rewriting.
 */
#include <stdint.h>
#include <sys/auxv.h>
#include "../arch.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

/* Read by arch_switch: nonzero when wrfsbase may be used. */
__attribute__((visibility("hidden"))) unsigned char arch_have_fsgsbase;
/* Called by arch_jmpbuf_landing. */
__attribute__((visibility("hidden"))) void (*goshim_jmpbuf_landing_fn)(void);

void arch_ctx_start(void);
void arch_jmpbuf_landing(void);

void arch_init(void)
{
	arch_have_fsgsbase = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
}

void arch_ctx_init(struct arch_ctx *ctx, void *stack_top, void *tp,
		   void (*entry)(void *), void *arg)
{
	/* After arch_switch's ret the stack pointer must be 16-byte aligned
	 * minus nothing: arch_ctx_start calls entry, which pushes 8 more. */
	uint64_t *top = (uint64_t *)((uintptr_t)stack_top & ~(uintptr_t)15);
	uint64_t *sp = top - 10;
	uint16_t fcw;
	uint32_t mxcsr;

	__asm__ __volatile__("fnstcw %0" : "=m"(fcw));
	__asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
	sp[0] = (uint64_t)fcw | ((uint64_t)mxcsr << 32);
	sp[1] = 0;			/* r15 */
	sp[2] = 0;			/* r14 */
	sp[3] = (uint64_t)entry;	/* r13 */
	sp[4] = (uint64_t)arg;		/* r12 */
	sp[5] = 0;			/* rbx */
	sp[6] = 0;			/* rbp */
	sp[7] = (uint64_t)arch_ctx_start;
	sp[8] = 0;
	sp[9] = 0;
	ctx->sp = sp;
	ctx->tp = tp;
}

void *arch_get_tp(void)
{
	void *tp;
	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return tp;
}

long arch_syscall6(long nr, long a1, long a2, long a3, long a4, long a5,
		   long a6)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
}

/* glibc's x86_64 jmp_buf: rbx rbp r12 r13 r14 r15 rsp pc; rbp, rsp and pc
 * are mangled as rol64(value ^ pointer_guard, 17). */
void arch_jmpbuf_set_pc(void *jmpbuf, void (*landing)(void), uintptr_t guard)
{
	uint64_t *jb = jmpbuf;
	uint64_t v = (uint64_t)(uintptr_t)arch_jmpbuf_landing ^ guard;

	goshim_jmpbuf_landing_fn = landing;
	jb[7] = (v << 17) | (v >> 47);
}
