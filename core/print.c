/*
 * print.c: vsnprint, the runtime's formatter, and print, its printer to
 * stderr (see print.h). Async-signal-safe: it touches only the caller's
 * buffer, its own stack and one raw write system call.
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include "number.h"
#include "print.h"
#include "sys.h"

/* Output that counts every byte but stores only what fits, as snprintf. */
struct out {
	char *buf;
	size_t cap, n;
};

static void out_byte(struct out *o, char c)
{
	if (o->n + 1 < o->cap)
		o->buf[o->n] = c;
	o->n++;
}

static void out_bytes(struct out *o, const char *s, size_t n)
{
	while (n--)
		out_byte(o, *s++);
}

/* u in base 10 or 16, most significant digit first. */
static void out_uint(struct out *o, uint64_t u, unsigned base)
{
	char d[20];
	int n = 0;

	do
		d[n++] = "0123456789abcdef"[u % base];
	while (u /= base);
	while (n)
		out_byte(o, d[--n]);
}

char *print_int(char *p, int64_t v)
{
	struct out o = { p, SIZE_MAX, 0 };

	if (v < 0) {
		out_byte(&o, '-');
		out_uint(&o, -(uint64_t)v, 10);
	} else {
		out_uint(&o, (uint64_t)v, 10);
	}
	return p + o.n;
}

size_t vsnprint(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = { buf, cap, 0 };

	for (const char *f = fmt; *f; f++) {
		const char *start = f;
		bool alt = false;
		int prec = -1, lng = 0;

		if (*f != '%') {
			out_byte(&o, *f);
			continue;
		}
		if (*++f == '#')
			alt = true, f++;
		if (*f == '.') {
			uint64_t u;
			f++;
			if (*f == '*') {
				prec = va_arg(ap, int);
				f++;
			} else {
				prec = parse_uint(&f, f + strlen(f), 10, INT_MAX,
						  &u) ? (int)u : 0;
			}
		}
		for (; *f == 'l'; f++)
			lng++;
		if (*f == 'z')
			lng = 2, f++;
		switch (*f) {
		case 'd': {
			int64_t v = lng ? (lng == 1 ? va_arg(ap, long)
						    : va_arg(ap, long long))
					: va_arg(ap, int);
			if (v < 0)
				out_byte(&o, '-');
			out_uint(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10);
			break;
		}
		case 'u':
		case 'x': {
			uint64_t u = lng ? (lng == 1 ? va_arg(ap, unsigned long)
						     : va_arg(ap,
							      unsigned long long))
					 : va_arg(ap, unsigned);
			if (*f == 'x' && alt && u)
				out_bytes(&o, "0x", 2);
			out_uint(&o, u, *f == 'x' ? 16 : 10);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			for (int i = 0; s[i] && (prec < 0 || i < prec); i++)
				out_byte(&o, s[i]);
			break;
		}
		case '%':
			out_byte(&o, '%');
			break;
		default: /* not goshim's subset: the text as it stands */
			if (*f == '\0')
				f--;
			out_bytes(&o, start, (size_t)(f + 1 - start));
			break;
		}
	}
	if (cap)
		buf[o.n < cap ? o.n : cap - 1] = '\0';
	return o.n;
}

size_t snprint(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	size_t n = vsnprint(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

void print(const char *fmt, ...)
{
	char buf[PRINT_MAX];
	va_list ap;

	va_start(ap, fmt);
	size_t n = vsnprint(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		sys_write(2, buf, n < sizeof buf ? n : sizeof buf - 1);
}
