/*
 * number.c: parse_uint (see number.h).
 */
#include "number.h"

static int digit(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int parse_uint(const char **s, const char *end, unsigned base, uint64_t max,
	       uint64_t *v)
{
	const char *p = *s;
	uint64_t u = 0;
	int d;

	for (; p < end && (d = digit(*p, base)) >= 0; p++) {
		if ((unsigned)d > max || u > (max - (unsigned)d) / base)
			return 0;
		u = u * base + (unsigned)d;
	}
	if (p == *s)
		return 0;
	*s = p;
	*v = u;
	return 1;
}
