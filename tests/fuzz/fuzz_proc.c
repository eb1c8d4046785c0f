/*
 * fuzz_proc: /proc text that sysmon, checkdead and select read: a task's
 * stat line (state, 'blocked'), status fields (Threads:, FDSize:) and a
 * maps line (anonymous code, for preemption).
 * Properties: the state is the byte after the last ") " or 0; 'blocked'
 * is field 32's number when that field is digits, else all ones; a status
 * field is -1 or the digits after "Name:" and blanks at a line's start; a
 * maps line taken as anonymous code begins with its range in hex.
 */
#include "../../core/procparse.h"
#include "fuzz.h"

/* Field 32 by another route: count space-separated fields from the
 * state, field 3. */
static uint64_t ref_blocked(const uint8_t *p, const uint8_t *end)
{
	unsigned __int128 v = 0;
	int field = 3;
	const uint8_t *s;

	for (; p < end && field < 32; p++)
		if (*p == ' ')
			field++;
	if (field < 32 || p == end || *p < '0' || *p > '9')
		return ~(uint64_t)0;
	for (s = p; s < end && *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT64_MAX)
			return ~(uint64_t)0;
	}
	return (uint64_t)v;
}

static void check_stat(const char *buf, const uint8_t *data, size_t size)
{
	const uint8_t *rp = NULL;
	uint64_t blocked;
	char st = proc_stat_state(buf, size, &blocked);

	for (size_t i = 0; i < size; i++)
		if (data[i] == ')')
			rp = data + i;
	if (rp == NULL || data + size - rp < 3 || rp[1] != ' ') {
		CHECK(st == 0);
		return;
	}
	CHECK(st == (char)rp[2]);
	CHECK(blocked == ref_blocked(rp + 2, data + size));
}

static void check_field(const char *buf, const uint8_t *data, size_t size,
			const char *name)
{
	int v = proc_status_field(buf, size, name);
	size_t n = strlen(name);

	CHECK(v >= -1);
	if (v < 0)
		return;
	/* some line starts with name, blanks, then v's digits */
	int found = 0;
	for (size_t i = 0; i + n < size && !found; i++) {
		if ((i > 0 && data[i - 1] != '\n') ||
		    memcmp(data + i, name, n) != 0)
			continue;
		size_t j = i + n;
		while (j < size && (data[j] == ' ' || data[j] == '\t'))
			j++;
		long w = 0;
		size_t k = j;
		while (k < size && data[k] >= '0' && data[k] <= '9' &&
		       w <= INT_MAX)
			w = w * 10 + (data[k++] - '0');
		found = k > j && w == v;
	}
	CHECK(found);
}

/* A maps line taken as anonymous code starts "lo-hi " in lower-case hex
 * (the kernel pads to 8 digits), lo below hi, and its permissions have
 * x third. */
static void check_maps(const char *buf, const uint8_t *data, size_t size)
{
	uintptr_t lo, hi;
	char *s = malloc(size + 1), *end;

	if (proc_maps_anon_exec(buf, size, &lo, &hi)) {
		memcpy(s, data, size);
		s[size] = '\0';
		/* no blank or sign that strtoull would skip */
		CHECK(lo < hi && s[0] && strchr("0123456789abcdef", s[0]));
		CHECK(strtoull(s, &end, 16) == lo && *end == '-');
		CHECK(strtoull(end + 1, &end, 16) == hi && *end == ' ');
		CHECK(end + 4 < s + size && end[3] == 'x');
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: ASan flags any read past the length */
	char *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
	check_stat(buf, data, size);
	check_field(buf, data, size, "Threads:");
	check_field(buf, data, size, "FDSize:");
	check_maps(buf, data, size);
	free(buf);
	return 0;
}
