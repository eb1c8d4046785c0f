/*
 * Context switch for aarch64 (AAPCS64).
 *
 * A saved context is the stack pointer after storing a 176-byte frame
 * (sp must stay 16-byte aligned at all times on aarch64):
 *
 *   sp+  0  x19 x20     sp+ 48  x25 x26     sp+ 96  d8  d9     sp+144  d14 d15
 *   sp+ 16  x21 x22     sp+ 64  x27 x28     sp+112  d10 d11    sp+160  fpcr, pad
 *   sp+ 32  x23 x24     sp+ 80  x29 x30     sp+128  d12 d13
 *
 * x19-x29, sp and the low 64 bits of v8-v15 are callee-saved in AAPCS64;
 * x30 (lr) is where arch_switch returns to. FPCR (rounding mode, flush to
 * zero, default NaN) is control state a goroutine may change, like the x87
 * control word and MXCSR on x86_64; FPSR holds only sticky flags and is
 * not preserved across calls. The thread pointer (tpidr_el0) is written
 * here and nowhere else. arch_ctx_init (cpu.c) builds the same frame.
 *
 * No BTI landing pads or GNU property note: the objects are not marked
 * BTI/GCS, so the linker does not mark libgoshim.so as guarded and the
 * indirect branches into these entry points (ret, glibc's `br x30`) are
 * allowed.
 */
	.text

/* void arch_switch(struct arch_ctx *from, const struct arch_ctx *to) */
	.globl	arch_switch
	.hidden	arch_switch
	.type	arch_switch, %function
	.p2align 4
arch_switch:
	.cfi_startproc
	sub	sp, sp, #176
	.cfi_def_cfa_offset 176
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	/* From here an unwinder (profiler, debugger) takes the caller's frame
	 * from the slots: after the stack switch below they describe the
	 * resumed context, whose sp and slots are then current. */
	.cfi_offset x29, -96
	.cfi_offset x30, -88
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x9, fpcr
	str	x9, [sp, #160]
	mov	x9, sp
	str	x9, [x0]
	ldp	x9, x10, [x1]		/* to->sp, to->tp */
	mov	sp, x9
	msr	tpidr_el0, x10
	/* Writing FPCR can serialize the pipeline on some cores; almost every
	 * switch finds it unchanged (glibc's fesetenv skips it the same way). */
	ldr	x9, [sp, #160]
	mrs	x10, fpcr
	cmp	x9, x10
	b.eq	1f
	msr	fpcr, x9
1:	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #176
	.cfi_def_cfa_offset 0
	.cfi_restore x29
	.cfi_restore x30
	ret
	.cfi_endproc
	.size	arch_switch, .-arch_switch

/*
 * First frame of every new context: arch_ctx_init leaves entry in x19, its
 * argument in x20 and a zero frame pointer in x29 (the end of the frame
 * record chain). The return address is undefined so unwinders (C++
 * exceptions, pthread_exit's forced unwind, backtraces) stop here.
 */
	.globl	arch_ctx_start
	.hidden	arch_ctx_start
	.type	arch_ctx_start, %function
	.p2align 2
arch_ctx_start:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x20
	blr	x19
	brk	#1000			/* entry returned: what __builtin_trap emits */
	.cfi_endproc
	.size	arch_ctx_start, .-arch_ctx_start

/*
 * Where a rewritten jmp_buf lands (glibc's __longjmp ends in `br x30`): the
 * stack pointer is the one saved by setjmp, already 16-byte aligned since
 * aarch64 sp always is (Linux enables EL0 sp alignment checks). Call the
 * landing function stored by arch_jmpbuf_set_pc.
 */
	.globl	arch_jmpbuf_landing
	.hidden	arch_jmpbuf_landing
	.hidden	goshim_jmpbuf_landing_fn
	.type	arch_jmpbuf_landing, %function
	.p2align 2
arch_jmpbuf_landing:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, #0
	adrp	x16, goshim_jmpbuf_landing_fn
	ldr	x16, [x16, #:lo12:goshim_jmpbuf_landing_fn]
	blr	x16
	brk	#1000
	.cfi_endproc
	.size	arch_jmpbuf_landing, .-arch_jmpbuf_landing

	.section .note.GNU-stack,"",%progbits
