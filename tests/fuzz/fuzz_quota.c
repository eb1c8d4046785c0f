/*
 * fuzz_quota: cgroup CPU quota files, v2 cpu.max and v1
 * cpu.cfs_quota_us + cpu.cfs_period_us, then the default GOMAXPROCS rule
 * on the result. The input's first byte says where the v1 quota file
 * ends and the period file starts; the rest is both. Properties: the
 * count equals ceil(quota/period), clamped to INT_MAX, exactly when the
 * text is "Q P" (v2) or "Q" and "P" (v1), digits only, one final
 * newline allowed, Q and P positive and within 64 bits; 0 otherwise. And
 * GOMAXPROCS from it is in [1, CPUs].
 */
#include "fuzz.h"

/* An independent reading: digits at [*s, end) into *v, 128-bit wide. */
static int ref_num(const uint8_t **s, const uint8_t *end, unsigned __int128 *v)
{
	const uint8_t *p = *s;

	*v = 0;
	while (p < end && *p >= '0' && *p <= '9' && *v <= UINT64_MAX)
		*v = *v * 10 + (unsigned)(*p++ - '0');
	if (p == *s || *v > UINT64_MAX)
		return 0;
	*s = p;
	return 1;
}

static int ref_end(const uint8_t *s, const uint8_t *end)
{
	return s == end || (s + 1 == end && *s == '\n');
}

static int ref_cpus(unsigned __int128 q, unsigned __int128 p)
{
	unsigned __int128 n;

	if (q == 0 || p == 0)
		return 0;
	n = (q + p - 1) / p;
	return n > INT_MAX ? INT_MAX : (int)n;
}

static int ref_v2(const uint8_t *s, size_t len)
{
	const uint8_t *end = s + len;
	unsigned __int128 q, p;

	if (!ref_num(&s, end, &q) || s == end || *s++ != ' ' ||
	    !ref_num(&s, end, &p) || !ref_end(s, end))
		return 0;
	return ref_cpus(q, p);
}

static int ref_v1(const uint8_t *qs, size_t qlen, const uint8_t *ps,
		  size_t plen)
{
	const uint8_t *qend = qs + qlen, *pend = ps + plen;
	unsigned __int128 q, p;

	if (!ref_num(&qs, qend, &q) || !ref_end(qs, qend) ||
	    !ref_num(&ps, pend, &p) || !ref_end(ps, pend))
		return 0;
	return ref_cpus(q, p);
}

static void check_default(int limit)
{
	static const int cpus[] = { 1, 2, 3, 64, 1024, INT_MAX };

	for (size_t i = 0; i < sizeof cpus / sizeof *cpus; i++) {
		int n = gomaxprocs_default(cpus[i], limit);
		CHECK(n >= 1 && n <= cpus[i]);
		CHECK(limit > 0 || n == cpus[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t split;
	char *buf;
	int n;

	if (size == 0)
		return 0;
	split = data[0] % size; /* 0 .. size - 1 bytes of quota */
	data++;
	size--;
	/* exact-size copies: ASan flags any read past the length */
	buf = malloc(size ? size : 1);
	memcpy(buf, data, size);

	n = cg_cpu_max(buf, size);
	CHECK(n == ref_v2(data, size));
	check_default(n);

	n = cg_cfs(buf, split, buf + split, size - split);
	CHECK(n == ref_v1(data, split, data + split, size - split));
	check_default(n);
	free(buf);
	return 0;
}
