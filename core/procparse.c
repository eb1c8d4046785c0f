/*
 * procparse.c: /proc status fields and stat lines, parsed (see
 * procparse.h). Every parser stays inside buf + len: the kernel's text is
 * trusted no more than any input, and a read may stop short.
 */
#include <limits.h>
#include <string.h>
#include "number.h"
#include "procparse.h"

int proc_status_field(const char *buf, size_t len, const char *name)
{
	const char *end = buf + len, *line = buf;
	size_t n = strlen(name);

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;

		if ((size_t)(eol - line) > n && memcmp(line, name, n) == 0) {
			const char *s = line + n;
			while (s < eol && (*s == '\t' || *s == ' '))
				s++;
			uint64_t v;
			return parse_uint(&s, eol, 10, INT_MAX, &v) ? (int)v
								    : -1;
		}
		line = eol + 1;
	}
	return -1;
}

char proc_stat_state(const char *buf, size_t len, uint64_t *blocked)
{
	/* "pid (comm) S ppid ...": comm may hold spaces and ')', so the
	 * state follows the last ')'. */
	const char *end = buf + len, *p = memrchr(buf, ')', len);
	char state;

	*blocked = ~(uint64_t)0;
	if (p == NULL || end - p < 3 || p[1] != ' ')
		return 0;
	state = p[2];
	p += 2;
	/* from field 3, the state, to field 32, 'blocked' */
	for (int f = 3; f < 32; f++) {
		p = memchr(p, ' ', (size_t)(end - p));
		if (p == NULL)
			return state;
		p++;
	}
	if (!parse_uint(&p, end, 10, UINT64_MAX, blocked))
		*blocked = ~(uint64_t)0;
	return state;
}

/* Hexadecimal digits at [*s, end), at least one, into *v; *s past them. */
static int hex(const char **s, const char *end, uint64_t *v)
{
	return parse_uint(s, end, 16, UINT64_MAX, v);
}

/* The byte c at *s, and *s past it. */
static int expect(const char **s, const char *end, char c)
{
	if (*s == end || **s != c)
		return 0;
	(*s)++;
	return 1;
}

int proc_maps_anon_exec(const char *buf, size_t len, uintptr_t *lo,
			uintptr_t *hi)
{
	const char *s = buf, *end = buf + len, *perms;
	uint64_t a, b, v;

	if (!hex(&s, end, &a) || !expect(&s, end, '-') || !hex(&s, end, &b) ||
	    !expect(&s, end, ' ') || end - s < 5)
		return 0;
	perms = s;
	s += 4;
	if (!expect(&s, end, ' ') || !hex(&s, end, &v) ||
	    !expect(&s, end, ' ') || !hex(&s, end, &v) ||
	    !expect(&s, end, ':') || !hex(&s, end, &v) ||
	    !expect(&s, end, ' ') ||
	    !parse_uint(&s, end, 10, UINT64_MAX, &v)) /* the inode */
		return 0;
	while (s < end && *s == ' ')
		s++;
	if (s < end && *s == '\n')
		s++;
	if (s != end || v != 0 || perms[2] != 'x' || a >= b ||
	    b > UINTPTR_MAX)
		return 0;
	*lo = (uintptr_t)a;
	*hi = (uintptr_t)b;
	return 1;
}
