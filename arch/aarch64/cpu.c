/*
 * aarch64 pieces that need no assembly file: the initial frame of a new
 * context, the thread pointer, raw system calls, jmp_buf rewriting.
 */
#include <stdint.h>
#include "../arch.h"

/* Called by arch_jmpbuf_landing. */
__attribute__((visibility("hidden"))) void (*goshim_jmpbuf_landing_fn)(void);

__attribute__((visibility("hidden"))) void arch_ctx_start(void);
__attribute__((visibility("hidden"))) void arch_jmpbuf_landing(void);

/* arch_switch's frame, in 8-byte words from the saved sp (see switch.S). */
enum {
	F_X19 = 0,
	F_X20 = 1,
	F_X29 = 10,
	F_X30 = 11,
	F_FPCR = 20,
	F_WORDS = 22, /* 176 bytes: a multiple of 16, as sp must be */
};

/*
 * Nothing to detect: tpidr_el0 is writable from EL0 with a plain msr on
 * every aarch64 Linux (x86_64 needs FSGSBASE for that). Kept so callers
 * are the same on every CPU.
 */
void arch_init(void)
{
}

void arch_ctx_init(struct arch_ctx *ctx, void *stack_top, void *tp,
		   void (*entry)(void *), void *arg)
{
	/* arch_switch pops the frame and returns: sp is then top, 16-byte
	 * aligned as AAPCS64 requires at every call (there is no pushed
	 * return address on aarch64, unlike x86_64). */
	uint64_t *top = (uint64_t *)((uintptr_t)stack_top & ~(uintptr_t)15);
	uint64_t *sp = top - F_WORDS;
	uint64_t fpcr;
	int i;

	__asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
	for (i = 0; i < F_WORDS; i++)
		sp[i] = 0;			/* x21-x28, d8-d15, x29 */
	sp[F_X19] = (uint64_t)(uintptr_t)entry;
	sp[F_X20] = (uint64_t)(uintptr_t)arg;
	sp[F_X29] = 0;				/* ends the frame chain */
	sp[F_X30] = (uint64_t)(uintptr_t)arch_ctx_start;
	sp[F_FPCR] = fpcr;
	ctx->sp = sp;
	ctx->tp = tp;
}

void *arch_get_tp(void)
{
	void *tp;
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
	return tp;
}

/* The kernel takes the number in x8 and arguments in x0-x5, returns in x0
 * and preserves every other register (as glibc's INTERNAL_SYSCALL_RAW). */
long arch_syscall6(long nr, long a1, long a2, long a3, long a4, long a5,
		   long a6)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ __volatile__("svc #0"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4),
			       "r"(x5)
			     : "memory");
	return x0;
}

/*
 * glibc's aarch64 jmp_buf (sysdeps/aarch64/jmpbuf-offsets.h): x19-x28 in
 * words 0-9, x29 in 10, lr in 11 (JB_LR), sp in 13 (JB_SP), d8-d15 in
 * 14-21. setjmp.S mangles lr and sp (not x29) with PTR_MANGLE, which on
 * aarch64 is a plain `eor` with the guard, no rotate (PTR_MANGLE2 in
 * sysdeps/unix/sysv/linux/aarch64/pointer_guard.h; formerly in sysdep.h
 * there). The guard is not in the TCB as on x86_64 but in ld.so's
 * __pointer_chk_guard (__pointer_chk_guard_local in static binaries).
 * __longjmp.S demangles lr and ends in `br x30`.
 */
void arch_jmpbuf_set_pc(void *jmpbuf, void (*landing)(void), uintptr_t guard)
{
	uint64_t *jb = jmpbuf;

	goshim_jmpbuf_landing_fn = landing;
	jb[11] = (uint64_t)(uintptr_t)arch_jmpbuf_landing ^ guard;
}
