/*
 * fuzz_cgroup: /proc/self/cgroup content, through the line splitter and
 * cg_paths_line, as gomaxprocs_cgroup_limit reads it. Properties: a path
 * found is absolute, shorter than PATH_MAX, has no ".." component (it
 * must not lead the walk out of the mount), and is the same however
 * read() cuts the file.
 */
#include "fuzz.h"

static void check_path(const char *p)
{
	size_t n = strnlen(p, PATH_MAX);

	CHECK(n < PATH_MAX);
	if (n == 0)
		return;
	CHECK(p[0] == '/');
	for (const char *d = strstr(p, "/.."); d; d = strstr(d + 1, "/.."))
		CHECK(d[3] != '/' && d[3] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cg_paths whole, cut;
	uint32_t seed = size ? data[0] * 2654435761u + (uint32_t)size : 1;

	whole.v1[0] = whole.v2[0] = cut.v1[0] = cut.v2[0] = '\0';
	fuzz_lines(data, size, 0, cg_paths_line, &whole);
	fuzz_lines(data, size, seed | 1, cg_paths_line, &cut);
	check_path(whole.v1);
	check_path(whole.v2);
	CHECK(strcmp(whole.v1, cut.v1) == 0);
	CHECK(strcmp(whole.v2, cut.v2) == 0);
	return 0;
}
