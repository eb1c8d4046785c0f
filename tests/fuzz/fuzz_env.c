/*
 * fuzz_env: the environment values goshim reads as numbers: GOMAXPROCS,
 * GOSHIM_STACK_SIZE, GOSHIM_MAX_THREADS. Properties, against readings
 * written apart from the library's: GOMAXPROCS is digits only and >= 1,
 * else -1; a stack size is digits and one k/K/m/M, exact or 0 when past
 * SIZE_MAX; a thread cap is -1 or in [1, INT32_MAX].
 */
#include "../../core/runtime.h"
#include "../../core/runtime2.h"
#include "../../core/stack.h"
#include "fuzz.h"

/* The digits of s in 128 bits (saturating), or -1 if s has a non-digit
 * before its end or suffix byte; *rest: where they stop. */
static __int128 ref_digits(const char *s, const char **rest)
{
	__int128 v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		if (v <= (__int128)UINT64_MAX * 2)
			v = v * 10 + (*s - '0');
	*rest = s;
	return v;
}

static int ref_gomaxprocs(const char *s)
{
	const char *rest;
	__int128 v = ref_digits(s, &rest);

	return v < 1 || *rest || v > INT_MAX ? -1 : (int)v;
}

static size_t ref_stack(const char *s)
{
	const char *rest;
	__int128 v = ref_digits(s, &rest);

	if (v < 0)
		return 0;
	if (*rest == 'k' || *rest == 'K')
		v *= 1024, rest++;
	else if (*rest == 'm' || *rest == 'M')
		v *= 1024 * 1024, rest++;
	return *rest || v > (__int128)SIZE_MAX ? 0 : (size_t)v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	int32_t t;

	CHECK(gomaxprocs_parse(s) == ref_gomaxprocs(s));
	CHECK(stack_parse_size(s) == ref_stack(s));
	t = threadlimit_parse(s);
	CHECK(t == -1 || t >= 1);
	free(s);
	return 0;
}
