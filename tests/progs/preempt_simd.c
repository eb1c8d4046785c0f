// goshim-test: env=GOMAXPROCS=1
// goshim-test: timeout=120
/*
 * Preemption must restore every register exactly: three threads run
 * long floating-point loops (SSE doubles, AVX2 ymm when the CPU has it,
 * x87 long doubles, and one of them under a different rounding mode in
 * MXCSR and the x87 control word) and print bit-exact checksums, which
 * depend on nothing but their own registers. At GOMAXPROCS=1 under goshim
 * they only interleave when sysmon preempts them, so they also check
 * that they did interleave (natively the kernel interleaves them).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define THREADS 3
#define ROUNDS 60

typedef double v4d __attribute__((vector_size(32)));

static atomic_int last = -1;
static int switches[THREADS];

/* One round: ~10 ms of dependent arithmetic with many live values. */
static double sse_round(double seed)
{
	double a = seed, b = 1.0 / (seed + 3), c = 0.5, d = seed * seed;
	for (int i = 0; i < 400000; i++) {
		a = a * 0.999999 + b;
		b = b * 1.000001 - c * 1e-7;
		c = c + d * 1e-9;
		d = d * 0.9999995 + a * 1e-8;
	}
	return a + b + c + d;
}

__attribute__((target("avx2,fma"))) static double avx_round(double seed)
{
	v4d x = { seed, seed + 1, seed + 2, seed + 3 };
	v4d y = { 1e-3, 2e-3, 3e-3, 4e-3 };
	v4d k = { 0.9999991, 0.9999992, 0.9999993, 0.9999994 };
	for (int i = 0; i < 300000; i++) {
		x = x * k + y;
		y = y * k - x * 1e-9;
	}
	return x[0] + x[1] + x[2] + x[3] + y[0] + y[1] + y[2] + y[3];
}

static long double x87_round(long double seed)
{
	long double a = seed, b = 1.0L / 3;
	for (int i = 0; i < 200000; i++) {
		a = a * 0.9999999L + b;
		b = b * 1.0000001L - a * 1e-12L;
	}
	return a + b;
}

/* Round upward in both the x87 control word and MXCSR (fesetround
 * without libm). */
static void round_upward(void)
{
	uint16_t cw;
	uint32_t mx;
	__asm__ __volatile__("fnstcw %0" : "=m"(cw));
	cw = (uint16_t)((cw & ~0xc00) | 0x800);
	__asm__ __volatile__("fldcw %0" : : "m"(cw));
	__asm__ __volatile__("stmxcsr %0" : "=m"(mx));
	mx = (mx & ~0x6000u) | 0x4000u;
	__asm__ __volatile__("ldmxcsr %0" : : "m"(mx));
}

static uint64_t bits(double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	return u;
}

static void *work(void *arg)
{
	int id = (int)(intptr_t)arg;
	int avx = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	uint64_t sum = 0;

	if (id == 1)
		round_upward();
	for (int r = 0; r < ROUNDS; r++) {
		double s = sse_round(id + r * 0.25);
		double v = avx ? avx_round(id + r * 0.5) : s;
		long double x = x87_round(id + r * 0.125L);
		sum = sum * 31 + bits(s);
		sum = sum * 31 + (avx ? bits(v) : 0);
		sum = sum * 31 + bits((double)x);
		if (atomic_exchange(&last, id) != id)
			switches[id]++;
	}
	return (void *)(uintptr_t)sum;
}

int main(void)
{
	pthread_t t[THREADS];
	uint64_t want[THREADS];

	/* The checksums of the same work done with nothing else running. */
	for (int i = 0; i < THREADS; i++) {
		pthread_create(&t[0], NULL, work, (void *)(intptr_t)i);
		void *r;
		pthread_join(t[0], &r);
		want[i] = (uint64_t)(uintptr_t)r;
	}
	memset(switches, 0, sizeof switches);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, work, (void *)(intptr_t)i);
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		printf("thread %d: %s\n", i,
		       (uint64_t)(uintptr_t)r == want[i] ? "bit-exact"
							 : "DIFFERENT");
	}
	int interleaved = 0;
	for (int i = 0; i < THREADS; i++)
		interleaved += switches[i] >= 5;
	printf("interleaved: %s\n", interleaved == THREADS ? "yes" : "no");
	return 0;
}
