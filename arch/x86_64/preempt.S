/*
 * The asynchronous preemption trampoline for x86_64.
 *
 * arch_preempt_inject (preempt.c) has pointed the interrupted context
 * here and left its pc in the thread-local arch_preempt_pc. The first
 * instructions make it look as if the interrupted instruction had called
 * here from 128 bytes below its stack pointer, so the red zone (live data
 * of a leaf function) stays untouched (lea, push, mov and pop leave
 * the flags alone): the return address sits at interrupted rsp - 136, and
 * `ret $128` returns to the interrupted rsp. Everything the interrupted
 * code may have live is saved on its own stack: rflags, the 15 general
 * purpose registers, and the extended state (x87, MXCSR, xmm/ymm/zmm,
 * opmask) with XSAVEC or XSAVE into an area sized from CPUID (fxsave
 * where the CPU has no XSAVE). XSAVEOPT is never used: its
 * modified-state tracking keeps stale bytes in a reused area.
 */
	.text

	.globl	arch_preempt_tramp
	.hidden	arch_preempt_tramp
	.type	arch_preempt_tramp, @function
arch_preempt_tramp:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_undefined rip
	leaq	-136(%rsp), %rsp
	pushq	%rax
	movq	arch_preempt_pc@gottpoff(%rip), %rax
	movq	%fs:(%rax), %rax
	movq	%rax, 8(%rsp)
	popq	%rax
	.cfi_def_cfa %rsp, 136
	.cfi_offset %rip, -136
	pushfq
	.cfi_adjust_cfa_offset 8
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	pushq	%rcx
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%r8
	.cfi_adjust_cfa_offset 8
	pushq	%r9
	.cfi_adjust_cfa_offset 8
	pushq	%r10
	.cfi_adjust_cfa_offset 8
	pushq	%r11
	.cfi_adjust_cfa_offset 8
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r14, 0
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r15, 0
	/* rbx keeps the register block's address across the call. */
	movq	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	movl	arch_xsave_size(%rip), %eax
	subq	%rax, %rsp
	andq	$-64, %rsp
	movzbl	arch_xsave_mode(%rip), %ecx
	testl	%ecx, %ecx
	jnz	1f
	fxsave64 (%rsp)
	jmp	3f
	/* XRSTOR faults unless the header's reserved bytes are zero, and
	 * XSAVE writes only XSTATE_BV. */
1:	xorl	%eax, %eax
	movq	%rax, 512(%rsp)
	movq	%rax, 520(%rsp)
	movq	%rax, 528(%rsp)
	movq	%rax, 536(%rsp)
	movq	%rax, 544(%rsp)
	movq	%rax, 552(%rsp)
	movq	%rax, 560(%rsp)
	movq	%rax, 568(%rsp)
	movl	$-1, %eax
	movl	$-1, %edx
	cmpl	$2, %ecx
	je	2f
	xsave64	(%rsp)
	jmp	3f
2:	xsavec64 (%rsp)
	/* The runtime is C: it needs what the ABI promises at a call, an
	 * empty x87 stack, default x87 and SSE control words, DF clear
	 * (arch_switch saves and restores the control words per context). */
3:	fninit
	ldmxcsr	mxcsr_default(%rip)
	cld
	call	*arch_preempt_yield(%rip)
	movzbl	arch_xsave_mode(%rip), %ecx
	testl	%ecx, %ecx
	jnz	4f
	fxrstor64 (%rsp)
	jmp	5f
4:	movl	$-1, %eax
	movl	$-1, %edx
	xrstor64 (%rsp)
5:	movq	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	popq	%r15
	.cfi_adjust_cfa_offset -8
	popq	%r14
	.cfi_adjust_cfa_offset -8
	popq	%r13
	.cfi_adjust_cfa_offset -8
	popq	%r12
	.cfi_adjust_cfa_offset -8
	popq	%r11
	.cfi_adjust_cfa_offset -8
	popq	%r10
	.cfi_adjust_cfa_offset -8
	popq	%r9
	.cfi_adjust_cfa_offset -8
	popq	%r8
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	popq	%rax
	.cfi_adjust_cfa_offset -8
	popfq
	.cfi_adjust_cfa_offset -8
	ret	$128
	.cfi_endproc
	.size	arch_preempt_tramp, .-arch_preempt_tramp

	.section .rodata
	.p2align 2
mxcsr_default:
	.long	0x1f80

	.section .note.GNU-stack,"",@progbits
