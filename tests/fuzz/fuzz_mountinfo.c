/*
 * fuzz_mountinfo: /proc/self/mountinfo content, through the line
 * splitter and cg_mount_line, for both hierarchies. The input's first
 * line is the process's cgroup path (absolute, as /proc/self/cgroup gave
 * it), the rest the mountinfo. Properties: a mount found has an absolute mount
 * point shorter than PATH_MAX, the path below its root is a tail of the
 * cgroup path ("" or "/..."), and the answer does not depend on how
 * read() cuts the file.
 */
#include "fuzz.h"

static void check_mount(const struct cg_mount *m)
{
	size_t plen = strlen(m->path);

	if (m->rel == NULL)
		return;
	CHECK(strnlen(m->mnt, PATH_MAX) < PATH_MAX);
	CHECK(m->mnt[0] == '/');
	CHECK(m->rel >= m->path && m->rel <= m->path + plen);
	CHECK(m->rel[0] == '\0' || m->rel[0] == '/');
	CHECK(m->rootlen <= plen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cg_mount whole, cut;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl ? (size_t)(nl - data) : size;
	char *path;

	/* as cg_paths_line gives it: absolute, shorter than PATH_MAX */
	if (plen == 0 || plen >= PATH_MAX || data[0] != '/')
		return 0;
	path = fuzz_cstr(data, plen);
	data += nl ? plen + 1 : plen;
	size -= nl ? plen + 1 : plen;
	for (int v2 = 0; v2 <= 1; v2++) {
		uint32_t seed = 2654435761u * (uint32_t)(size + v2) | 1;

		memset(&whole, 0, sizeof whole);
		memset(&cut, 0, sizeof cut);
		whole.v2 = cut.v2 = v2;
		whole.path = cut.path = path;
		fuzz_lines(data, size, 0, cg_mount_line, &whole);
		fuzz_lines(data, size, seed, cg_mount_line, &cut);
		check_mount(&whole);
		CHECK((whole.rel == NULL) == (cut.rel == NULL));
		if (whole.rel) {
			CHECK(whole.rel == cut.rel);
			CHECK(strcmp(whole.mnt, cut.mnt) == 0);
			CHECK(whole.rootlen == cut.rootlen);
		}
	}
	free(path);
	return 0;
}
