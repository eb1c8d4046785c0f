/*
 * print.h: the runtime's one formatter and its one printer (print.c).
 *
 * Every message goshim writes, every path it builds, goes through
 * vsnprint: a subset of printf done by hand, with no locale, no malloc and
 * no lock, so that it may run in a signal handler, on g0, on an M with no
 * P, or while a sanitizer's interceptors are still starting.
 *
 * The subset is what the runtime's messages use, and it formats as glibc's
 * printf does: %d %u %x (with l, ll or z; '#' prefixes 0x to a non-zero
 * %x), %s (with a precision, .N or .*), %%. Anything else is copied as it
 * stands.
 */
#ifndef GOSHIM_PRINT_H
#define GOSHIM_PRINT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Formats into buf, at most cap - 1 bytes and a NUL (cap > 0); returns the
 * length the whole text has, as snprintf does, so a caller sees a cut. */
size_t vsnprint(char *buf, size_t cap, const char *fmt, va_list ap);
size_t snprint(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One message to stderr: formatted on the stack (PRINT_MAX bytes at most,
 * cut there) and written with one write system call, so that lines of
 * concurrent writers never interleave. */
#define PRINT_MAX 512
void print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The decimal digits of v (a '-' first when negative) at p, no NUL; returns
 * their end. For the formatters that build text a byte at a time on a hot
 * path (wait reasons, trace events). At most 20 bytes. */
char *print_int(char *p, int64_t v);

#endif
