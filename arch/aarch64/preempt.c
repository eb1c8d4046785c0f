/*
 * aarch64 side of asynchronous preemption: there is no trampoline for
 * this CPU yet (it would have to save x0-x30, NZCV, FPSR/FPCR and the
 * SVE/SME state sized from the signal frame's records), so
 * arch_preempt_init says no and core/preempt.c never sends the signal:
 * a goroutine in a tight loop keeps its P here, as before preemption.
 * Reading the interrupted pc and sp is real, for the callers' checks.
 */
#include <ucontext.h>
#include "../arch.h"

bool arch_preempt_init(void (*yield)(void))
{
	(void)yield;
	return false;
}

size_t arch_preempt_stack(void)
{
	return 0;
}

uintptr_t arch_uc_pc(const void *uc)
{
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
}

uintptr_t arch_uc_sp(const void *uc)
{
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.sp;
}

bool arch_uc_at_syscall(const void *uc)
{
	const uint32_t *pc = (const uint32_t *)arch_uc_pc(uc);

	/* `svc #0` is d4000001. */
	return pc[-1] == 0xd4000001u || pc[0] == 0xd4000001u;
}

bool arch_preempt_inject(void *uc)
{
	(void)uc;
	return false;
}
