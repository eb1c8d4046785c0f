/*
 * fuzz.h: what the libFuzzer harnesses share: a NUL-terminated copy for
 * parsers of C strings (an environment value holds no NUL, so the copy
 * stops at the first), a check that names the broken property before
 * aborting, and a file fed to the cgroup line splitter in chunks of
 * varying size, as read() may return it.
 */
#ifndef GOSHIM_FUZZ_H
#define GOSHIM_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/gomaxprocs.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: property failed: %s\n",     \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

/* data up to its first NUL, NUL-terminated, in malloc'd memory (so ASan
 * sees a read past its end). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t n = nul ? (size_t)(nul - data) : size;
	char *s = malloc(n + 1);

	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/* Feed data through cg_lines as a file read in chunks: whole reads when
 * seed is 0, else sizes from 1 up drawn from seed. */
static inline void fuzz_lines(const uint8_t *data, size_t size,
			      uint32_t seed, int (*fn)(char *, void *),
			      void *ctx)
{
	struct cg_lines *l = malloc(sizeof *l);

	l->len = 0;
	l->skipping = 0;
	while (size > 0) {
		size_t room = sizeof l->buf - 1 - l->len, n = room;

		if (seed) {
			seed = seed * 1103515245 + 12345;
			n = 1 + (seed >> 8) % (seed & 0x80 ? 4096 : 16);
		}
		if (n > room)
			n = room;
		if (n > size)
			n = size;
		memcpy(l->buf + l->len, data, n);
		data += n;
		size -= n;
		if (cg_lines_push(l, n, fn, ctx))
			goto out;
	}
	cg_lines_end(l, fn, ctx);
out:
	free(l);
}

#endif
