/*
 * raw.h: a system call made with the instruction itself, which no library
 * (goshim included) sees: what Rust's std or a C++ atomic wait does.
 */
#ifndef RAW_H
#define RAW_H

/* A system call made with the instruction itself (4 arguments). */
static inline long raw4(long nr, long a, long b, long c, long d)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ __volatile__("svc 0"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
			     : "memory");
	ret = x0;
#endif
	return ret;
}

#endif
