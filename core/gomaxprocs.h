/*
 * gomaxprocs.h: how many Ps the runtime runs (see gomaxprocs.c for the rule).
 *
 * Everything here uses raw system calls only, so it is safe in the library
 * constructor and in a fork child before the runtime is rebuilt.
 */
#ifndef GOSHIM_GOMAXPROCS_H
#define GOSHIM_GOMAXPROCS_H

#include <limits.h>
#include <stddef.h>
#include "sys.h"

/* Largest GOMAXPROCS goshim runs; a bigger one is capped (the env override
 * with a message, the default silently). */
#define GOMAXPROCS_MAX 1024

/* CPUs in this process's affinity mask (>= 1). */
int gomaxprocs_affinity_count(void);

/*
 * Tightest CPU quota in cgroups on the path to the root, as a ceiling count
 * of CPUs (e.g. quota 150000/100000 -> 2), or 0 when unlimited/unknown.
 * proc_root is "/proc" in production; fs_root is prepended to mount points
 * found in mountinfo ("" in production) so tests can feed fake trees. The
 * files are opened, read and closed (the runtime keeps them instead:
 * cg_files_open).
 */
int gomaxprocs_cgroup_limit(const char *proc_root, const char *fs_root);

/* Default: min(affinity, max(2, limit)) when limit > 0, else affinity. */
int gomaxprocs_default(int affinity, int cgroup_limit);

/* Parse an env value; returns N >= 1, or -1 if invalid. */
int gomaxprocs_parse(const char *s);

/* One cgroup directory's quota files (v2: cpu.max; v1: cpu.cfs_quota_us,
 * cpu.cfs_period_us), and the limit last read there (0: none). */
struct cg_level {
	struct kept_file quota, period;
	int last;
};

/* Levels kept open, from the process's directory up; the levels above
 * are read once, at start-up. Eight covers every systemd and container
 * layout seen (user@.service/app.slice/x.scope is five). */
#define CG_KEEP 8

/* The quota files of the process's cgroup path, found once and kept. */
struct cg_files {
	int v2;
	int follow; /* gomaxprocs_update follows the limit (no env value) */
	int n;
	struct cg_level lv[CG_KEEP];
	int above; /* tightest limit of the levels past CG_KEEP; 0: none */
};

/* Find the process's quota files from proc_root's self/cgroup and
 * self/mountinfo (fs_root prepended to mount points) and open each with
 * ops (which closes those it does not keep). */
void cg_files_open(struct cg_files *f, const char *proc_root,
		   const char *fs_root, const struct kept_ops *ops);
/* The tightest limit now, re-reading every kept file from its start, as
 * gomaxprocs_cgroup_limit counts; a file that cannot be read keeps its
 * last value. */
int cg_files_limit(struct cg_files *f);
/* Close the kept files (tests; the runtime keeps them for good). */
void cg_files_close(struct cg_files *f, const struct kept_ops *ops);

/*
 * The whole rule for this process at start-up: env GOMAXPROCS if valid
 * (capped at GOMAXPROCS_MAX), else the default from /proc and the real
 * affinity, with the quota files opened by ops and kept in *cg for
 * gomaxprocs_update; bad env -> one stderr line. The environment is read
 * here only: later, the program may be changing it (setenv).
 */
int gomaxprocs_compute(struct cg_files *cg, const struct kept_ops *ops);

/* The default now (Go 1.25 follows the affinity and the quota while the
 * program runs), or -1 when the environment fixed the count. */
int gomaxprocs_update(struct cg_files *cg);

/*
 * The parsers of the kernel's cgroup files, with no I/O, so that unit
 * tests and the fuzz harnesses (tests/fuzz) reach exactly the code the
 * library runs.
 */

/* Longest line looked at. Cgroup lines are short; longer mountinfo lines
 * (overlay mounts with huge option strings) are skipped whole. */
#define CG_LINE_CAP 8192

/* A file cut into lines as it streams in: read up to
 * sizeof buf - 1 - len bytes to buf + len, then cg_lines_push them;
 * cg_lines_end at end of file. Start zeroed. */
struct cg_lines {
	char buf[CG_LINE_CAP];
	size_t len;
	int skipping; /* inside a line too long to keep */
};

/* fn(line, ctx) for each whole line among the n new bytes (newline
 * stripped, NUL-terminated, writable); nonzero from fn stops, and is
 * returned. */
int cg_lines_push(struct cg_lines *l, size_t n, int (*fn)(char *, void *),
		  void *ctx);
/* The last line, if it had no newline. */
void cg_lines_end(struct cg_lines *l, int (*fn)(char *, void *), void *ctx);

/* The process's cgroup paths, from /proc/self/cgroup. */
struct cg_paths {
	char v2[PATH_MAX]; /* from "0::/path"; "" when absent */
	char v1[PATH_MAX]; /* from "N:...,cpu,...:/path"; "" when absent */
};
/* One line of /proc/self/cgroup into ctx (a struct cg_paths); returns 0. */
int cg_paths_line(char *line, void *ctx);

/* The mount that shows a cgroup path, from /proc/self/mountinfo. */
struct cg_mount {
	int v2;		    /* looking for cgroup2 (else v1 with cpu) */
	const char *path;   /* the process's cgroup path in that hierarchy */
	char mnt[PATH_MAX]; /* best mount point so far */
	const char *rel;    /* path below that mount's root; NULL: none yet */
	size_t rootlen;	    /* that mount's root length */
};
/* One line of /proc/self/mountinfo into ctx (a struct cg_mount); 0. */
int cg_mount_line(char *line, void *ctx);

/* A quota file's content as a CPU count, ceil(quota/period) clamped to
 * INT_MAX; 0 for no limit or anything malformed. v2: cpu.max, "max
 * 100000" or "150000 100000". v1: cpu.cfs_quota_us ("-1" or a number) and
 * cpu.cfs_period_us. One final newline is allowed, nothing else. */
int cg_cpu_max(const char *buf, size_t len);
int cg_cfs(const char *quota, size_t quota_len, const char *period,
	   size_t period_len);

#endif
