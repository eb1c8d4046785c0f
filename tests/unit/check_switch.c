/*
 * Unit tests of the per-CPU layer (arch/arch.h), run on the CPU it was
 * built for: natively on x86_64, under qemu-user for aarch64
 * (tests/cross/aarch64.mk).
 *
 * Built against the check library by default; with -DNO_CHECK a small
 * runner below stands in, for targets that have no check library, and
 * prints "N passed, M failed".
 *
 * Every context here keeps the calling thread's thread pointer: glibc
 * (errno, TLS, stack protector) needs a real TCB. Only bare_entry, which
 * touches no libc and no TLS, runs with a different one.
 */
#include <errno.h>
#include <fenv.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../../arch/arch.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

#ifndef NO_CHECK
#include <check.h>
#else
/* A failed assertion leaves the test, from whatever stack it runs on,
 * like check's no-fork mode. */
static jmp_buf test_jb;
static void test_failed(const char *file, int line, const char *msg)
{
	fprintf(stderr, "%s:%d: %s\n", file, line, msg);
	longjmp(test_jb, 1);
}
#define START_TEST(name) static void name(void)
#define END_TEST
#define ck_assert_msg(c, ...)                                               \
	do {                                                                \
		if (!(c)) {                                                 \
			char m_[256];                                       \
			snprintf(m_, sizeof m_, __VA_ARGS__);               \
			test_failed(__FILE__, __LINE__, m_);                \
		}                                                           \
	} while (0)
#endif

#define CHECK(c) ck_assert_msg((c), "%s", #c)
#define CHECK_EQ(a, b)                                                      \
	do {                                                                \
		long long a_ = (long long)(a), b_ = (long long)(b);         \
		ck_assert_msg(a_ == b_, "%s == %s: %#llx != %#llx", #a, #b, \
			      a_, b_);                                      \
	} while (0)

#define HIDDEN __attribute__((visibility("hidden")))

/*
 * probe_regs loads every callee-saved integer register (and d8-d15 on
 * aarch64) with seed+k, k its bit below, calls arch_switch(from, to), and
 * once resumed returns a mask of the registers that no longer hold seed+k.
 * Written in assembly because C cannot pin values to registers across a
 * call. Bits: x86_64 rbx rbp r12 r13 r14 r15 = 0-5; aarch64 x19-x28 = 0-9,
 * x29 = 10, d8-d15 = 11-18.
 *
 * derive_guard calls _setjmp(jb) and returns the pointer guard that makes
 * the mangled pc slot equal the known return address, or 0 if the sp slot
 * then does not demangle to the known sp: a check, from real glibc, of the
 * mangling arch_jmpbuf_set_pc assumes.
 */
HIDDEN uint64_t probe_regs(struct arch_ctx *from, const struct arch_ctx *to,
			   uint64_t seed);
HIDDEN uintptr_t derive_guard(jmp_buf jb);

#if defined(__x86_64__)
#define CHK(reg, k)                                                         \
	"leaq " #k "(%rdx), %rcx\n cmpq %rcx, " reg "\n je 1f\n"            \
	"orl $(1 << " #k "), %eax\n1:\n"
__asm__(".text\n"
	".globl probe_regs\n.hidden probe_regs\n.type probe_regs, @function\n"
	"probe_regs:\n"
	"pushq %rbp\n pushq %rbx\n pushq %r12\n pushq %r13\n pushq %r14\n"
	"pushq %r15\n"
	"pushq %rdx\n" /* the seed; the 7th push also aligns rsp for the call */
	"leaq 0(%rdx), %rbx\n leaq 1(%rdx), %rbp\n leaq 2(%rdx), %r12\n"
	"leaq 3(%rdx), %r13\n leaq 4(%rdx), %r14\n leaq 5(%rdx), %r15\n"
	"call arch_switch\n"
	"popq %rdx\n xorl %eax, %eax\n"
	CHK("%rbx", 0) CHK("%rbp", 1) CHK("%r12", 2) CHK("%r13", 3)
	CHK("%r14", 4) CHK("%r15", 5)
	"popq %r15\n popq %r14\n popq %r13\n popq %r12\n popq %rbx\n"
	"popq %rbp\n ret\n"
	".size probe_regs, .-probe_regs\n"

	/* glibc x86_64: jb[6] = rsp, jb[7] = pc, both rol(v ^ guard, 17) */
	".globl derive_guard\n.hidden derive_guard\n"
	".type derive_guard, @function\n"
	"derive_guard:\n"
	"pushq %rbx\n movq %rdi, %rbx\n call _setjmp\n"
	"1: movq 56(%rbx), %rax\n rorq $17, %rax\n leaq 1b(%rip), %rcx\n"
	"xorq %rcx, %rax\n"
	"movq 48(%rbx), %rdx\n rorq $17, %rdx\n xorq %rax, %rdx\n"
	"xorl %ecx, %ecx\n cmpq %rsp, %rdx\n cmovneq %rcx, %rax\n"
	"popq %rbx\n ret\n"
	".size derive_guard, .-derive_guard\n");
#elif defined(__aarch64__)
#define CHKX(reg, k)                                                        \
	"add x9, x2, #" #k "\n cmp " reg ", x9\n cset x10, ne\n"            \
	"orr x0, x0, x10, lsl #" #k "\n"
#define SETD(reg, k) "add x9, x2, #" #k "\n fmov " reg ", x9\n"
#define CHKD(reg, k) "fmov x11, " reg "\n" CHKX("x11", k)
__asm__(".text\n"
	".globl probe_regs\n.hidden probe_regs\n.type probe_regs, %function\n"
	"probe_regs:\n"
	"sub sp, sp, #176\n"
	"stp x19, x20, [sp, #0]\n stp x21, x22, [sp, #16]\n"
	"stp x23, x24, [sp, #32]\n stp x25, x26, [sp, #48]\n"
	"stp x27, x28, [sp, #64]\n stp x29, x30, [sp, #80]\n"
	"stp d8, d9, [sp, #96]\n stp d10, d11, [sp, #112]\n"
	"stp d12, d13, [sp, #128]\n stp d14, d15, [sp, #144]\n"
	"str x2, [sp, #160]\n"
	"add x19, x2, #0\n add x20, x2, #1\n add x21, x2, #2\n"
	"add x22, x2, #3\n add x23, x2, #4\n add x24, x2, #5\n"
	"add x25, x2, #6\n add x26, x2, #7\n add x27, x2, #8\n"
	"add x28, x2, #9\n add x29, x2, #10\n"
	SETD("d8", 11) SETD("d9", 12) SETD("d10", 13) SETD("d11", 14)
	SETD("d12", 15) SETD("d13", 16) SETD("d14", 17) SETD("d15", 18)
	"bl arch_switch\n"
	"ldr x2, [sp, #160]\n mov x0, #0\n"
	CHKX("x19", 0) CHKX("x20", 1) CHKX("x21", 2) CHKX("x22", 3)
	CHKX("x23", 4) CHKX("x24", 5) CHKX("x25", 6) CHKX("x26", 7)
	CHKX("x27", 8) CHKX("x28", 9) CHKX("x29", 10)
	CHKD("d8", 11) CHKD("d9", 12) CHKD("d10", 13) CHKD("d11", 14)
	CHKD("d12", 15) CHKD("d13", 16) CHKD("d14", 17) CHKD("d15", 18)
	"ldp x19, x20, [sp, #0]\n ldp x21, x22, [sp, #16]\n"
	"ldp x23, x24, [sp, #32]\n ldp x25, x26, [sp, #48]\n"
	"ldp x27, x28, [sp, #64]\n ldp x29, x30, [sp, #80]\n"
	"ldp d8, d9, [sp, #96]\n ldp d10, d11, [sp, #112]\n"
	"ldp d12, d13, [sp, #128]\n ldp d14, d15, [sp, #144]\n"
	"add sp, sp, #176\n ret\n"
	".size probe_regs, .-probe_regs\n"

	/* glibc aarch64: jb[11] = lr, jb[13] = sp, both v ^ guard */
	".globl derive_guard\n.hidden derive_guard\n"
	".type derive_guard, %function\n"
	"derive_guard:\n"
	"stp x29, x30, [sp, #-32]!\n mov x29, sp\n str x19, [sp, #16]\n"
	"mov x19, x0\n bl _setjmp\n"
	"1: ldr x0, [x19, #88]\n adr x1, 1b\n eor x0, x0, x1\n"
	"ldr x2, [x19, #104]\n eor x2, x2, x0\n mov x3, sp\n cmp x2, x3\n"
	"csel x0, x0, xzr, eq\n"
	"ldr x19, [sp, #16]\n ldp x29, x30, [sp], #32\n ret\n"
	".size derive_guard, .-derive_guard\n");
#else
#error "check_switch: unsupported CPU"
#endif

/* ---- shared fixtures ---------------------------------------------------- */

#define STACK_SIZE (128 * 1024)

static struct arch_ctx main_ctx;
static void *tp0; /* the test thread's own thread pointer */

/* arch_switch saves only from->sp: the tp to resume with is a property of
 * the context, set by its owner (arch_ctx_init for new ones). */
static void setup(void)
{
	arch_init();
	tp0 = arch_get_tp();
	main_ctx.tp = tp0;
}

/* A stack with a PROT_NONE page below it, so an overflow faults instead of
 * corrupting the next test's memory. Returns its top. */
static char *stack_new(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, STACK_SIZE + pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

	CHECK(p != MAP_FAILED);
	CHECK_EQ(mprotect(p, pg, PROT_NONE), 0);
	return p + pg + STACK_SIZE;
}

/* Under ASan, a context that never returned leaves its frames' redzones
 * poisoned: a stack is reused, or given back, only clean. */
static void stack_clean(char *top)
{
#ifdef __SANITIZE_ADDRESS__
	ASAN_UNPOISON_MEMORY_REGION(top - STACK_SIZE, STACK_SIZE);
#else
	(void)top;
#endif
}

static void stack_free(char *top)
{
	long pg = sysconf(_SC_PAGESIZE);

	stack_clean(top);
	munmap(top - STACK_SIZE - pg, STACK_SIZE + pg);
}

/* ---- switching ---------------------------------------------------------- */

#define NRING 3
#define ROUNDS 10000

static struct arch_ctx ring[NRING];
static long ring_count[NRING];
static long ring_turn;

/* Context i runs after i-1 and hands over to i+1, the last one back to
 * main: switches between two contexts and to and from the main stack. Its
 * loop counter n lives in its own frame and must survive every switch. */
static void ring_entry(void *arg)
{
	long i = (long)(intptr_t)arg;

	for (long n = 1;; n++) {
		CHECK_EQ(ring_turn, i);
		CHECK_EQ(arch_get_tp(), tp0);
		CHECK_EQ(++ring_count[i], n);
		ring_turn = i + 1;
		arch_switch(&ring[i], i + 1 < NRING ? &ring[i + 1] : &main_ctx);
	}
}

START_TEST(test_pingpong)
{
	char *stk[NRING];
	long i, r;

	setup();
	for (i = 0; i < NRING; i++) {
		stk[i] = stack_new();
		ring_count[i] = 0;
		arch_ctx_init(&ring[i], stk[i], tp0, ring_entry,
			      (void *)(intptr_t)i);
	}
	for (r = 0; r < ROUNDS; r++) {
		ring_turn = 0;
		arch_switch(&main_ctx, &ring[0]);
		CHECK_EQ(ring_turn, NRING);
		CHECK_EQ(arch_get_tp(), tp0);
	}
	CHECK_EQ(r, ROUNDS);
	for (i = 0; i < NRING; i++) {
		CHECK_EQ(ring_count[i], ROUNDS);
		stack_free(stk[i]);
	}
}
END_TEST

/* ---- callee-saved registers --------------------------------------------- */

static struct arch_ctx peer_ctx;
static uint64_t peer_bad;

/* Probes with its own seeds: while it runs, every callee-saved register
 * holds its values, so main's probe sees them unless arch_switch restores
 * main's. And the other way round. */
static void probe_entry(void *arg)
{
	(void)arg;
	for (uint64_t s = 0x2000000000000000;; s += 64)
		peer_bad |= probe_regs(&peer_ctx, &main_ctx, s);
}

START_TEST(test_callee_saved_regs)
{
	char *stk = stack_new();

	setup();
	peer_bad = 0;
	arch_ctx_init(&peer_ctx, stk, tp0, probe_entry, NULL);
	for (uint64_t n = 0; n < 5000; n++)
		CHECK_EQ(probe_regs(&main_ctx, &peer_ctx,
				    0x1000000000000000 + n * 64), 0);
	CHECK_EQ(peer_bad, 0);
	stack_free(stk);
}
END_TEST

/* Read after the switch: every local below must be live across it, in a
 * callee-saved register or a stack slot. x ^ post and f * fpost cannot be
 * folded into one value before the call (no -ffast-math). */
static volatile uint64_t post;
static volatile double fpost = 1.0;

/* noipa: GCC must not specialize it for sw = 0 and 1 (clang has noinline) */
#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

NOIPA static uint64_t many_locals(uint64_t seed, int sw)
{
	uint64_t a0 = seed * 3 + 1, a1 = a0 * 5 ^ seed, a2 = a1 * 7 + a0;
	uint64_t a3 = a2 ^ (a1 >> 3), a4 = a3 * 11 + a2, a5 = a4 ^ (a0 << 7);
	uint64_t a6 = a5 * 13 + a1, a7 = a6 ^ (a5 >> 11), a8 = a7 * 17 + a3;
	uint64_t a9 = a8 ^ (a2 << 13), a10 = a9 * 19 + a4, a11 = a10 ^ a6;
	double f0 = (double)(a0 & 0xffff) * 0.5, f1 = f0 * 1.25 + 3;
	double f2 = f1 * f0 + 0.125, f3 = f2 - f1 * 0.75, f4 = f3 * 1.5 + f0;
	double f5 = f4 / 3, f6 = f5 * f2 + 7, f7 = f6 - f4 * 0.25;
	uint64_t r = 0;

	if (sw)
		arch_switch(&main_ctx, &peer_ctx);
	uint64_t p = post;
	double fp = fpost;
	r += (a0 ^ p) + (a1 ^ p) * 3 + (a2 ^ p) * 5 + (a3 ^ p) * 7;
	r += (a4 ^ p) * 9 + (a5 ^ p) * 11 + (a6 ^ p) * 13 + (a7 ^ p) * 15;
	r += (a8 ^ p) * 17 + (a9 ^ p) * 19 + (a10 ^ p) * 21 + (a11 ^ p) * 23;
	r += (uint64_t)(f0 * fp) + (uint64_t)(f1 * fp) * 3;
	r += (uint64_t)(f2 * fp) * 5 + (uint64_t)(f3 * fp) * 7;
	r += (uint64_t)(f4 * fp) * 9 + (uint64_t)(f5 * fp) * 11;
	r += (uint64_t)(f6 * fp) * 13 + (uint64_t)(f7 * fp) * 15;
	return r;
}

/* C code compiled by the compiler, not hand-written probes: the values the
 * register allocator put in callee-saved registers survive a switch to a
 * context that overwrites them all (probe_entry). */
START_TEST(test_callee_saved_locals)
{
	char *stk = stack_new();

	setup();
	arch_ctx_init(&peer_ctx, stk, tp0, probe_entry, NULL);
	for (uint64_t s = 1; s < 2000; s++) {
		post = s * 0x9e3779b97f4a7c15;
		CHECK_EQ(many_locals(s, 1), many_locals(s, 0));
	}
	stack_free(stk);
}
END_TEST

/* ---- floating-point control state --------------------------------------- */

static struct arch_ctx fe_ctx[2];
static int fe_mode[2];
static double fe_q[2];
static volatile double one = 1.0, three = 3.0;

/* 1/3 is inexact: rounds up under FE_UPWARD, down under FE_TONEAREST and
 * FE_DOWNWARD. On x86_64 this is SSE (MXCSR) while fegetround reads the x87
 * control word, so the two together see both. */
__attribute__((noinline)) static double third(void)
{
	return one / three;
}

/* Context 0 runs in FE_UPWARD, context 1 in FE_DOWNWARD; 0 hands over to 1,
 * 1 to main, which stays in FE_TONEAREST. Each records, when resumed, the
 * mode it finds before setting its own again. */
static void fe_entry(void *arg)
{
	int i = (int)(intptr_t)arg;

	fesetround(i ? FE_DOWNWARD : FE_UPWARD);
	for (;;) {
		arch_switch(&fe_ctx[i], i ? &main_ctx : &fe_ctx[1]);
		fe_mode[i] = fegetround();
		fe_q[i] = third();
		fesetround(i ? FE_DOWNWARD : FE_UPWARD);
	}
}

static void fe_inherit_entry(void *arg)
{
	fe_mode[0] = fegetround();
	fe_q[0] = third();
	arch_switch(arg, &main_ctx);
	CHECK(!"resumed a finished context");
}

START_TEST(test_fenv)
{
	char *stk[2] = { stack_new(), stack_new() };
	double q_near;
	int n;

	setup();
	CHECK_EQ(fesetround(FE_TONEAREST), 0);
	q_near = third();
	for (n = 0; n < 2; n++)
		arch_ctx_init(&fe_ctx[n], stk[n], tp0, fe_entry,
			      (void *)(intptr_t)n);
	arch_switch(&main_ctx, &fe_ctx[0]); /* both set their own mode */
	for (n = 0; n < 100; n++) {
		CHECK_EQ(fegetround(), FE_TONEAREST);
		CHECK(third() == q_near);
		fe_mode[0] = fe_mode[1] = -1;
		arch_switch(&main_ctx, &fe_ctx[0]);
		CHECK_EQ(fe_mode[0], FE_UPWARD);
		CHECK_EQ(fe_mode[1], FE_DOWNWARD);
		CHECK(fe_q[0] > q_near);
		CHECK(fe_q[1] == q_near);
	}

	/* A new context starts with its creator's state, like a new thread. */
	CHECK_EQ(fesetround(FE_UPWARD), 0);
	arch_ctx_init(&fe_ctx[0], stk[0], tp0, fe_inherit_entry, &fe_ctx[0]);
	CHECK_EQ(fesetround(FE_TONEAREST), 0);
	arch_switch(&main_ctx, &fe_ctx[0]);
	CHECK_EQ(fe_mode[0], FE_UPWARD);
	CHECK(fe_q[0] > q_near);
	CHECK_EQ(fegetround(), FE_TONEAREST);
	stack_free(stk[0]);
	stack_free(stk[1]);
}
END_TEST

/* ---- thread pointer ----------------------------------------------------- */

static __thread int tls_var;
static struct arch_ctx tp_ctx;
static void *tp_seen;
static int *tls_seen;

static void tp_entry(void *arg)
{
	(void)arg;
	for (;;) {
		tp_seen = arch_get_tp();
		tls_seen = &tls_var;
		arch_switch(&tp_ctx, &main_ctx);
	}
}

/* Runs on a thread pointer that is no TCB: may call nothing but the arch
 * layer and touch no TLS. */
static void bare_entry(void *arg)
{
	(void)arg;
	for (;;) {
		tp_seen = arch_get_tp();
		arch_switch(&tp_ctx, &main_ctx);
	}
}

#if defined(__x86_64__)
extern unsigned char arch_have_fsgsbase; /* arch/x86_64/cpu.c */
#endif

START_TEST(test_tp)
{
	/* x86_64's arch_get_tp reads the TCB's self pointer at %fs:0 and the
	 * stack protector its canary at %fs:0x28: copy the header, point it
	 * at itself. aarch64 reads tpidr_el0 itself. */
	static uint64_t fake_tcb[8] __attribute__((aligned(64)));
	char *stk = stack_new();
	int pass;

	setup();
	arch_ctx_init(&tp_ctx, stk, tp0, tp_entry, NULL);
	for (int n = 0; n < 1000; n++) {
		tp_seen = NULL;
		tls_seen = NULL;
		arch_switch(&main_ctx, &tp_ctx);
		CHECK_EQ(tp_seen, tp0);
		CHECK_EQ(tls_seen, &tls_var);
		CHECK_EQ(arch_get_tp(), tp0);
	}

#if defined(__x86_64__)
	memcpy(fake_tcb, tp0, sizeof fake_tcb);
	fake_tcb[0] = (uintptr_t)fake_tcb;
#endif
	/* arch_switch installs to->tp and gives main its own back. On x86_64
	 * run it both with wrfsbase and with the arch_prctl fallback. */
	for (pass = 0; pass < 2; pass++) {
#if defined(__x86_64__)
		unsigned char have = arch_have_fsgsbase;
		if (pass == 1)
			arch_have_fsgsbase = 0;
#endif
		arch_ctx_init(&tp_ctx, stk, fake_tcb, bare_entry, NULL);
		for (int n = 0; n < 100; n++) {
			tp_seen = NULL;
			arch_switch(&main_ctx, &tp_ctx);
			CHECK_EQ(tp_seen, fake_tcb);
			CHECK_EQ(arch_get_tp(), tp0);
			CHECK_EQ(&tls_var, tls_seen);
		}
#if defined(__x86_64__)
		arch_have_fsgsbase = have;
#endif
	}
	stack_free(stk);
}
END_TEST

/* ---- raw system calls --------------------------------------------------- */

START_TEST(test_syscall)
{
	long p;

	setup();
	CHECK_EQ(arch_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0), getpid());

	/* Failure is -errno, and libc's errno is not touched. */
	errno = 0;
	CHECK_EQ(arch_syscall6(SYS_close, -1, 0, 0, 0, 0, 0), -EBADF);
	CHECK_EQ(errno, 0);

	/* All six arguments reach the kernel: the fd (5th) makes a
	 * file mapping fail, the offset (6th) an anonymous one. */
	CHECK_EQ(arch_syscall6(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, -1,
			       0), -EBADF);
	CHECK_EQ(arch_syscall6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 1), -EINVAL);
	p = arch_syscall6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK((unsigned long)p < -4096UL);
	*(volatile char *)p = 1;
	CHECK_EQ(arch_syscall6(SYS_munmap, p, 4096, 0, 0, 0, 0), 0);
}
END_TEST

/* ---- stack alignment at entry ------------------------------------------- */

static struct arch_ctx al_ctx;
static uintptr_t al_frame, al_local;

/* 16 is the ABI's stack alignment, so the compiler trusts sp and does not
 * realign: a misaligned entry stack shows in these addresses (on x86_64 the
 * frame address is the entry rsp - 8, which the ABI makes 16-aligned). */
static void align_entry(void *arg)
{
	_Alignas(16) volatile char buf[16];

	buf[0] = 1;
	al_local = (uintptr_t)buf;
	al_frame = (uintptr_t)__builtin_frame_address(0);
	arch_switch(arg, &main_ctx);
	CHECK(!"resumed a finished context");
}

START_TEST(test_stack_align)
{
	char *stk = stack_new();

	setup();
	/* arch_ctx_init rounds any stack top down. */
	for (int off = 0; off < 16; off++) {
		al_frame = al_local = 1;
		stack_clean(stk);
		arch_ctx_init(&al_ctx, stk - off, tp0, align_entry, &al_ctx);
		arch_switch(&main_ctx, &al_ctx);
		CHECK_EQ(al_frame % 16, 0);
		CHECK_EQ(al_local % 16, 0);
		CHECK(al_local < (uintptr_t)stk - off);
		CHECK(al_local > (uintptr_t)stk - STACK_SIZE);
	}
	stack_free(stk);
}
END_TEST

/* ---- jmp_buf rewriting -------------------------------------------------- */

static jmp_buf jb_out;
static volatile int landed;

static void landing(void)
{
	landed++;
	longjmp(jb_out, 1);
}

__attribute__((noinline)) static void jump_via_landing(uintptr_t guard)
{
	jmp_buf jb;

	if (setjmp(jb) == 0) {
		arch_jmpbuf_set_pc(jb, landing, guard);
		longjmp(jb, 1);
	}
	CHECK(!"longjmp went back to setjmp, not to the landing");
}

START_TEST(test_jmpbuf)
{
	jmp_buf probe;
	uintptr_t guard;

	setup();
	guard = derive_guard(probe);
	CHECK(guard != 0); /* 0: the sp slot disagrees with the pc slot */
	landed = 0;
	if (setjmp(jb_out) == 0)
		jump_via_landing(guard);
	CHECK_EQ(landed, 1);
}
END_TEST

/* ------------------------------------------------------------------------- */

#define TESTS(X)                                                            \
	X(test_pingpong)                                                    \
	X(test_callee_saved_regs)                                           \
	X(test_callee_saved_locals)                                         \
	X(test_fenv)                                                        \
	X(test_tp)                                                          \
	X(test_syscall)                                                     \
	X(test_stack_align)                                                 \
	X(test_jmpbuf)

#ifdef NO_CHECK
static int npassed, nfailed;

static void run1(const char *name, void (*fn)(void))
{
	if (setjmp(test_jb) == 0) {
		fn();
		npassed++;
	} else {
		fprintf(stderr, "FAIL %s\n", name);
		nfailed++;
	}
	fesetround(FE_TONEAREST); /* a failed test may leave its mode */
}

int main(void)
{
#define RUN1(t) run1(#t, t);
	TESTS(RUN1)
	printf("%d passed, %d failed\n", npassed, nfailed);
	return nfailed != 0;
}
#else
int main(void)
{
	Suite *s = suite_create("switch");
	TCase *tc = tcase_create("arch");
	SRunner *sr;
	int failed;

#define ADD1(t) tcase_add_test(tc, t);
	TESTS(ADD1)
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0;
}
#endif
