/*
 * gomaxprocs.h: how many Ps the runtime runs (see gomaxprocs.c for the rule).
 *
 * Everything here uses raw system calls only, so it is safe in the library
 * constructor and in a fork child before the runtime is rebuilt.
 */
#ifndef GOSHIM_GOMAXPROCS_H
#define GOSHIM_GOMAXPROCS_H

/* Largest GOMAXPROCS goshim runs; a bigger one is capped (the env override
 * with a message, the default silently). */
#define GOMAXPROCS_MAX 1024

/* CPUs in this process's affinity mask (>= 1). */
int gomaxprocs_affinity_count(void);

/*
 * Tightest CPU quota in cgroups on the path to the root, as a ceiling count
 * of CPUs (e.g. quota 150000/100000 -> 2), or 0 when unlimited/unknown.
 * proc_root is "/proc" in production; fs_root is prepended to mount points
 * found in mountinfo ("" in production) so tests can feed fake trees.
 */
int gomaxprocs_cgroup_limit(const char *proc_root, const char *fs_root);

/* Default: min(affinity, max(2, limit)) when limit > 0, else affinity. */
int gomaxprocs_default(int affinity, int cgroup_limit);

/* Parse an env value; returns N >= 1, or -1 if invalid. */
int gomaxprocs_parse(const char *s);

/*
 * The whole rule for this process: env GOMAXPROCS if valid (capped at
 * GOMAXPROCS_MAX), else the default from /proc and the real affinity;
 * bad env -> one stderr line.
 */
int gomaxprocs_compute(void);

#endif
