/*
 * number.h: the runtime's one number parser (number.c), for every number
 * it reads from outside: settings in the environment, /proc and cgroup
 * files, paths the program opens.
 *
 * By hand, not strtoul: that skips blanks and takes a sign and a 0x, and
 * wraps or clamps on overflow, where each of goshim's readers wants digits
 * only and a refusal; and libc's may be a sanitizer's that refuses calls
 * made during its own start-up, when the settings are read (see real.h).
 * It reads no byte at or past end, so a read that stopped short is safe.
 */
#ifndef GOSHIM_NUMBER_H
#define GOSHIM_NUMBER_H

#include <stdint.h>

/* The digits at [*s, end) in base 10 or 16 (lower-case a-f), up to the
 * first byte that is not one: 1, the value in *v and *s past them; 0
 * (with *s and *v as they were) when there is none or the value is more
 * than max. */
int parse_uint(const char **s, const char *end, unsigned base, uint64_t max,
	       uint64_t *v);

#endif
