/*
 * gomaxprocs.c: how many Ps to run.
 *
 * The rule is Go 1.25's: GOMAXPROCS = min(A, max(2, ceil(Q))), where A is
 * the number of CPUs in the affinity mask and Q the CPU bandwidth limit
 * (quota/period) of the process's cgroup; A when there is no limit. The
 * floor of 2 keeps a program with a fractional quota from losing all
 * parallelism (a blocked P would stall everything); the min with A keeps
 * us from running more Ps than CPUs we may use. An env GOMAXPROCS=N wins.
 *
 * One improvement: Go reads only the leaf cgroup (golang/go#81180), but a
 * quota on any ancestor throttles the leaf just the same, so we take the
 * tightest quota from the leaf up to the root visible in the mount.
 *
 * As Go 1.25 does, the quota files are found once, at start-up, and kept
 * open; following the limit (each second, sysmon) re-reads them from
 * their start. That needs no path walk (mountinfo on a busy host is long)
 * and no open: an fd opened for an instant takes the lowest free number,
 * which the program's own open, running meanwhile, should have had.
 * Like Go, a process moved to another cgroup later is not followed.
 *
 * Where the hierarchy lives is read from /proc/self/mountinfo, never
 * assumed: containers mount a sub-tree (the mount's root field), hybrid
 * systems have the cpu controller on v1 and an empty v2 unified mount, and
 * v1 may co-mount cpu with cpuacct under any name.
 *
 * Runs early inside an LD_PRELOAD library: only raw system calls (sys.h)
 * and pure string functions, no stdio, no malloc. Any file we cannot read
 * or parse means "no limit here"; nothing here fails.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "gomaxprocs.h"
#include "number.h"
#include "print.h"
#include "sys.h"

int gomaxprocs_affinity_count(void)
{
	/* Room for 8192 CPUs: the kernel refuses a mask smaller than its own. */
	unsigned long mask[8192 / (8 * sizeof(unsigned long))];
	long n = sys_sched_getaffinity(0, sizeof mask, mask);
	int count = 0;

	if (n <= 0)
		return 1;
	for (long i = 0; i < n / (long)sizeof(unsigned long); i++)
		count += __builtin_popcountl(mask[i]);
	return count > 0 ? count : 1;
}

int gomaxprocs_default(int affinity, int cgroup_limit)
{
	int n = affinity;

	if (cgroup_limit > 0)
		n = cgroup_limit < 2 ? 2 : cgroup_limit;
	return n < affinity ? n : affinity;
}

int gomaxprocs_parse(const char *s)
{
	const char *end;
	uint64_t v;

	if (s == NULL)
		return -1;
	end = s + strlen(s);
	if (!parse_uint(&s, end, 10, INT_MAX, &v) || s != end || v < 1)
		return -1;
	return (int)v;
}

/* ---- line reading ------------------------------------------------------ */

/*
 * The n bytes just put at l->buf + l->len, cut into lines: fn(line, ctx)
 * for each whole one, newline stripped. What is left waits for more; a
 * line that fills the buffer without a newline is skipped whole. Returns
 * nonzero when fn did (stop).
 */
int cg_lines_push(struct cg_lines *l, size_t n, int (*fn)(char *, void *),
		  void *ctx)
{
	char *p = l->buf, *nl;

	l->len += n;
	while ((nl = memchr(p, '\n', (size_t)(l->buf + l->len - p)))) {
		*nl = '\0';
		if (!l->skipping && fn(p, ctx))
			return 1;
		l->skipping = 0;
		p = nl + 1;
	}
	l->len -= (size_t)(p - l->buf);
	memmove(l->buf, p, l->len);
	if (l->len == sizeof l->buf - 1) { /* no newline in a full buffer */
		l->skipping = 1;
		l->len = 0;
	}
	return 0;
}

/* End of file: the last line, which had no newline. */
void cg_lines_end(struct cg_lines *l, int (*fn)(char *, void *), void *ctx)
{
	if (l->len > 0 && !l->skipping) {
		l->buf[l->len] = '\0';
		fn(l->buf, ctx);
	}
}

/*
 * Call fn(line, ctx) for each line of path, newline stripped. The file is
 * streamed, so its size does not matter (mountinfo on a busy host is far
 * beyond any fixed buffer); a line of CG_LINE_CAP - 1 bytes or more is
 * skipped. fn returns nonzero to stop.
 */
static void for_each_line(const char *path, int (*fn)(char *, void *),
			  void *ctx)
{
	struct cg_lines l;
	long n;
	int fd = sys_open(path, O_RDONLY);

	if (fd < 0)
		return;
	l.len = 0;
	l.skipping = 0;
	for (;;) {
		n = sys_read(fd, l.buf + l.len, sizeof l.buf - 1 - l.len);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		if (cg_lines_push(&l, (size_t)n, fn, ctx))
			goto out;
	}
	if (n == 0)
		cg_lines_end(&l, fn, ctx);
out:
	sys_close(fd);
}

/* Is tok one of the comma-separated items of list? ("cpuacct" is not
 * "cpu": this machine's v1 has both as separate hierarchies.) */
static int has_item(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, tok, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	}
	return 0;
}

/* ---- /proc/self/cgroup ------------------------------------------------- */

/* A ".." component: a cgroup outside our cgroup namespace, which no mount
 * shows (and which must not lead the walk out of the mount). */
static int has_dotdot(const char *path)
{
	for (const char *p = strstr(path, "/.."); p; p = strstr(p + 1, "/.."))
		if (p[3] == '/' || p[3] == '\0')
			return 1;
	return 0;
}

int cg_paths_line(char *line, void *ctx)
{
	struct cg_paths *cg = ctx;
	char *c1 = strchr(line, ':'), *c2, *dst;

	if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
		return 0;
	*c2 = '\0';
	if (c1 == line + 1 && line[0] == '0' && c2 == c1 + 1)
		dst = cg->v2;
	else if (has_item(c1 + 1, "cpu"))
		dst = cg->v1;
	else
		return 0;
	if (c2[1] == '/' && strlen(c2 + 1) < PATH_MAX && !has_dotdot(c2 + 1))
		strcpy(dst, c2 + 1);
	return 0;
}

/* ---- /proc/self/mountinfo ---------------------------------------------- */

/* Next space-separated field of *p (maybe ""), NUL-terminated; NULL after
 * the last one. */
static char *next_field(char **p)
{
	char *f = *p, *sp;

	if (f == NULL)
		return NULL;
	sp = strchr(f, ' ');
	if (sp) {
		*sp = '\0';
		*p = sp + 1;
	} else {
		*p = NULL;
	}
	return f;
}

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline,
 * \134 backslash) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* The part of cgroup path that lies below a mount's root (a suffix of path,
 * "" or "/..."), or NULL when the mount does not show path. */
static const char *below_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return path;
	if (strncmp(path, root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path + n;
}

int cg_mount_line(char *line, void *ctx)
{
	struct cg_mount *m = ctx;
	char *p = line, *root, *mnt, *f, *fstype, *superopts;
	const char *rel;

	/* id parent major:minor root mountpoint opts [optional...] - fstype
	 * source superopts */
	for (int i = 0; i < 3; i++)
		if (next_field(&p) == NULL)
			return 0;
	root = next_field(&p);
	mnt = next_field(&p);
	if (mnt == NULL)
		return 0;
	while ((f = next_field(&p)) && strcmp(f, "-") != 0)
		;
	fstype = next_field(&p);
	next_field(&p);
	superopts = next_field(&p);
	if (superopts == NULL)
		return 0;
	if (m->v2 ? strcmp(fstype, "cgroup2") != 0
		  : strcmp(fstype, "cgroup") != 0 || !has_item(superopts, "cpu"))
		return 0;
	unescape(root);
	unescape(mnt);
	rel = below_root(m->path, root);
	/* Of several mounts showing our cgroup, the one with the shortest root
	 * shows the most ancestors. */
	if (rel == NULL || mnt[0] != '/' || strlen(mnt) >= sizeof m->mnt ||
	    (m->rel && strlen(root) >= m->rootlen))
		return 0;
	strcpy(m->mnt, mnt);
	m->rel = rel;
	m->rootlen = strlen(root);
	return 0;
}

/* ---- quota files --------------------------------------------------------- */

/* A whole file's content ends at s (one optional newline)? */
static int at_end(const char *s, const char *end)
{
	return s == end || (s + 1 == end && s[0] == '\n');
}

/* ceil(quota/period) as a CPU count, clamped to INT_MAX; 0 if malformed. */
static int cpus_for(uint64_t quota, uint64_t period)
{
	uint64_t n;

	if (quota == 0 || period == 0)
		return 0;
	n = quota / period + (quota % period != 0);
	return n > INT_MAX ? INT_MAX : (int)n;
}

int cg_cpu_max(const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len;
	uint64_t quota, period;

	if (!parse_uint(&s, end, 10, UINT64_MAX, &quota) || s == end ||
	    *s++ != ' ' || !parse_uint(&s, end, 10, UINT64_MAX, &period) ||
	    !at_end(s, end))
		return 0; /* "max 100000" lands here too */
	return cpus_for(quota, period);
}

int cg_cfs(const char *quota_buf, size_t quota_len, const char *period_buf,
	   size_t period_len)
{
	const char *q = quota_buf, *qend = quota_buf + quota_len;
	const char *p = period_buf, *pend = period_buf + period_len;
	uint64_t quota, period;

	if (!parse_uint(&q, qend, 10, UINT64_MAX, &quota) ||
	    !at_end(q, qend) || /* "-1" */
	    !parse_uint(&p, pend, 10, UINT64_MAX, &period) || !at_end(p, pend))
		return 0;
	return cpus_for(quota, period);
}

/* ---- kept quota files ---------------------------------------------------- */

/* Level l's limit now, 0 for none; its last one when it cannot be read. */
static int level_limit(struct cg_files *f, struct cg_level *l)
{
	char quota[64], period[64];
	long qlen = kept_read(&l->quota, quota, sizeof quota), plen;

	if (qlen < 0)
		return l->last;
	if (f->v2) {
		l->last = cg_cpu_max(quota, (size_t)qlen);
	} else {
		if ((plen = kept_read(&l->period, period, sizeof period)) < 0)
			return l->last;
		l->last = cg_cfs(quota, (size_t)qlen, period, (size_t)plen);
	}
	return l->last;
}

static void level_close(struct cg_level *l, const struct kept_ops *ops)
{
	kept_close(&l->quota, ops);
	kept_close(&l->period, ops);
}

struct cg_walk {
	struct cg_files *f;
	const struct kept_ops *ops;
	int seen; /* some level has a quota file */
};

/* Directory dir's quota files: kept as the next level, or (past
 * CG_KEEP) read once into f->above. *seen if its quota file exists. v2:
 * cpu.max; v1: cpu.cfs_quota_us with cpu.cfs_period_us. */
static void level_add(struct cg_walk *w, const char *dir)
{
	struct cg_files *f = w->f;
	struct cg_level l = { .quota.fd = -1, .period.fd = -1 };
	char path[PATH_MAX + 32];

	if (snprint(path, sizeof path, "%s/%s", dir,
			    f->v2 ? "cpu.max" : "cpu.cfs_quota_us") >=
	    sizeof path)
		return;
	kept_open(&l.quota, path, w->ops);
	if (l.quota.fd < 0)
		return;
	w->seen = 1;
	if (!f->v2) {
		snprint(path, sizeof path, "%s/cpu.cfs_period_us", dir);
		kept_open(&l.period, path, w->ops);
		if (l.period.fd < 0) {
			kept_close(&l.quota, w->ops);
			return; /* no limit here */
		}
	}
	if (f->n < CG_KEEP) {
		f->lv[f->n++] = l;
		return;
	}
	int n = level_limit(f, &l);
	if (n > 0 && (f->above == 0 || n < f->above))
		f->above = n;
	level_close(&l, w->ops);
}

/* Each level from the process's directory in one hierarchy up to the
 * mount point (inclusive), leaf first. */
static void hierarchy_walk(struct cg_walk *w, const char *proc_root,
			   const char *fs_root, const char *cgpath)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct cg_mount m = { .v2 = w->f->v2, .path = cgpath };
	size_t base, len;

	if (cgpath[0] == '\0')
		return;
	if (snprint(path, sizeof path, "%s/self/mountinfo",
			    proc_root) >= sizeof path)
		return;
	for_each_line(path, cg_mount_line, &m);
	if (m.rel == NULL)
		return;
	/* dir = fs_root + mount point + rel, without trailing slashes; base is
	 * the length of the mount point's directory, where the walk stops. A
	 * mount at "/" has base "" and its files at "/cpu.max". */
	len = snprint(dir, sizeof dir, "%s%s", fs_root, m.mnt);
	if (len >= sizeof dir)
		return;
	while (len > 0 && dir[len - 1] == '/')
		len--;
	base = len;
	len += snprint(dir + len, sizeof dir - len, "%s", m.rel);
	if (len >= sizeof dir)
		return;
	while (len > base && dir[len - 1] == '/')
		len--;
	dir[len] = '\0';
	for (;;) {
		level_add(w, dir);
		if (len <= base)
			break;
		while (len > base && dir[len - 1] != '/') /* to the parent */
			len--;
		if (len > base)
			len--;
		dir[len] = '\0';
	}
}

void cg_files_open(struct cg_files *f, const char *proc_root,
		   const char *fs_root, const struct kept_ops *ops)
{
	char path[PATH_MAX];
	struct cg_paths cg;
	struct cg_walk w = { .f = f, .ops = ops };

	memset(f, 0, sizeof *f);
	cg.v1[0] = cg.v2[0] = '\0';
	if (snprint(path, sizeof path, "%s/self/cgroup", proc_root) >=
	    sizeof path)
		return;
	for_each_line(path, cg_paths_line, &cg);
	/* v2 when it has the cpu controller here (some cpu.max on our path);
	 * else v1's cpu hierarchy (hybrid systems: the v2 mount is empty). */
	f->v2 = 1;
	hierarchy_walk(&w, proc_root, fs_root, cg.v2);
	if (w.seen)
		return;
	f->v2 = 0;
	hierarchy_walk(&w, proc_root, fs_root, cg.v1);
}

int cg_files_limit(struct cg_files *f)
{
	int best = f->above;

	for (int i = 0; i < f->n; i++) {
		int n = level_limit(f, &f->lv[i]);
		if (n > 0 && (best == 0 || n < best))
			best = n;
	}
	return best;
}

void cg_files_close(struct cg_files *f, const struct kept_ops *ops)
{
	for (int i = 0; i < f->n; i++)
		level_close(&f->lv[i], ops);
	f->n = 0;
}

static int open_plain(const char *path)
{
	return sys_open(path, O_RDONLY);
}

static void close_plain(int fd)
{
	sys_close(fd);
}

int gomaxprocs_cgroup_limit(const char *proc_root, const char *fs_root)
{
	static const struct kept_ops plain = { open_plain, close_plain };
	struct cg_files f;
	int n;

	cg_files_open(&f, proc_root, fs_root, &plain);
	n = cg_files_limit(&f);
	cg_files_close(&f, &plain);
	return n;
}

/* ---- the rule ------------------------------------------------------------ */

/* One line to stderr. The env value is the user's: cut it short and keep
 * control characters from breaking the line. */
static void say_bad(const char *val, int using)
{
	char safe[72];
	size_t i;

	for (i = 0; val[i] && i < 64; i++)
		safe[i] = (val[i] < ' ' || val[i] == 0x7f) ? '?' : val[i];
	safe[i] = '\0';
	print("goshim: GOMAXPROCS=\"%s%s\" is not a positive integer; "
	      "using %d\n",
	      safe, val[i] ? "..." : "", using);
}

int gomaxprocs_compute(struct cg_files *cg, const struct kept_ops *ops)
{
	const char *env = getenv("GOMAXPROCS");
	int n = env ? gomaxprocs_parse(env) : -1;

	memset(cg, 0, sizeof *cg);
	if (n > GOMAXPROCS_MAX) {
		print("goshim: GOMAXPROCS=%d is more than %d; using %d\n", n,
		      GOMAXPROCS_MAX, GOMAXPROCS_MAX);
		return GOMAXPROCS_MAX;
	}
	if (n > 0)
		return n;
	cg_files_open(cg, "/proc", "", ops);
	cg->follow = 1;
	n = gomaxprocs_update(cg);
	if (env)
		say_bad(env, n);
	return n;
}

int gomaxprocs_update(struct cg_files *cg)
{
	int n;

	if (!cg->follow)
		return -1;
	n = gomaxprocs_default(gomaxprocs_affinity_count(),
			       cg_files_limit(cg));
	return n > GOMAXPROCS_MAX ? GOMAXPROCS_MAX : n;
}
