/*
 * fuzz_walk: gomaxprocs_cgroup_limit whole, on files: the input is a
 * /proc/self/cgroup, a NUL, and a /proc/self/mountinfo, written to a fake
 * /proc in a temporary directory that also holds a small cgroup tree
 * (v2: sys/fs/cgroup/a 1.5 CPUs, a/b max; v1: sys/fs/cgroup/cpu/a 2.5).
 * What the parse harnesses cannot reach is the walk: the directory built
 * from a mount point and the path below its root, cut back one component
 * at a time to the mount. Properties: ASan/UBSan clean, the result is a
 * count >= 0, and the same on a second call (the walk reads, never
 * writes).
 */
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"

static char root[64], proc[96];

static void put(const char *rel, const char *text, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, len) == (ssize_t)len);
	close(fd);
}

static void mkdirs(const char *rel)
{
	char path[256];

	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static int rm_one(const char *path, const struct stat *st, int type,
		  struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(root, sizeof root, "%s",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm/goshim-walk.XXXXXX"
					       : "/tmp/goshim-walk.XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	atexit(cleanup);
	mkdirs("proc/self");
	mkdirs("sys/fs/cgroup/a/b");
	mkdirs("sys/fs/cgroup/cpu/a");
	put("sys/fs/cgroup/a/cpu.max", "150000 100000\n", 14);
	put("sys/fs/cgroup/a/b/cpu.max", "max 100000\n", 11);
	put("sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "250000\n", 7);
	put("sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "100000\n", 7);
	snprintf(proc, sizeof proc, "%s/proc", root);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t clen = nul ? (size_t)(nul - data) : size;
	int n;

	put("proc/self/cgroup", (const char *)data, clen);
	put("proc/self/mountinfo", nul ? (const char *)nul + 1 : "",
	    nul ? size - clen - 1 : 0);
	n = gomaxprocs_cgroup_limit(proc, root);
	CHECK(n >= 0);
	CHECK(gomaxprocs_cgroup_limit(proc, root) == n);
	return 0;
}
