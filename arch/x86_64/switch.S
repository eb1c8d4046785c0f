/*
 * Context switch for x86_64 (System V ABI).
 *
 * A saved context is the stack pointer after pushing the callee-saved
 * registers and an 8-byte slot holding the x87 control word (bytes 0-1) and
 * MXCSR (bytes 4-7): both are callee-saved in the ABI and a goroutine may
 * change them. The thread pointer is written here and nowhere else:
 * wrfsbase when the kernel enabled FSGSBASE, else arch_prctl(ARCH_SET_FS).
 */
	.text

/* void arch_switch(struct arch_ctx *from, const struct arch_ctx *to) */
	.globl	arch_switch
	.hidden	arch_switch
	.type	arch_switch, @function
arch_switch:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	fnstcw	(%rsp)
	stmxcsr	4(%rsp)
	/* Reloaded with the store sizes, so the loads are forwarded. */
	movzwl	(%rsp), %edx
	movl	4(%rsp), %ecx
	movq	%rsp, (%rdi)
	movq	(%rsi), %rsp
	/* Loading MXCSR and the x87 control word is slow (serialising);
	 * skip it when the next context uses the same values, as it nearly
	 * always does. */
	cmpw	(%rsp), %dx
	jne	4f
	cmpl	4(%rsp), %ecx
	je	1f
4:	fldcw	(%rsp)
	ldmxcsr	4(%rsp)
1:	movq	8(%rsi), %rax
	cmpb	$0, arch_have_fsgsbase(%rip)
	je	2f
	wrfsbase %rax
	jmp	3f
2:	movq	%rax, %rsi
	movl	$0x1002, %edi		/* ARCH_SET_FS */
	movl	$158, %eax		/* SYS_arch_prctl */
	syscall
3:	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r15
	.cfi_adjust_cfa_offset -8
	popq	%r14
	.cfi_adjust_cfa_offset -8
	popq	%r13
	.cfi_adjust_cfa_offset -8
	popq	%r12
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	arch_switch, .-arch_switch

/*
 * First frame of every new context: arch_ctx_init leaves entry in r13 and
 * its argument in r12. The return address is undefined so unwinders (C++
 * exceptions, pthread_exit's forced unwind, backtraces) stop here.
 */
	.globl	arch_ctx_start
	.hidden	arch_ctx_start
	.type	arch_ctx_start, @function
arch_ctx_start:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%r12, %rdi
	call	*%r13
	ud2
	.cfi_endproc
	.size	arch_ctx_start, .-arch_ctx_start

/*
 * Where a rewritten jmp_buf lands: the stack pointer is the one saved by
 * setjmp (16-byte aligned at a call site); call goshim_jmpbuf_landing_fn.
 */
	.globl	arch_jmpbuf_landing
	.hidden	arch_jmpbuf_landing
	.type	arch_jmpbuf_landing, @function
arch_jmpbuf_landing:
	.cfi_startproc
	.cfi_undefined rip
	andq	$-16, %rsp
	xorl	%ebp, %ebp
	call	*goshim_jmpbuf_landing_fn(%rip)
	ud2
	.cfi_endproc
	.size	arch_jmpbuf_landing, .-arch_jmpbuf_landing

	.section .note.GNU-stack,"",@progbits
