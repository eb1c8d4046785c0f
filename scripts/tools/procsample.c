/* procsample [-i MS] [-s SERIES] [-o SUMMARY] [-c CGROUP] [-e NAME=VALUE]...
 *            -- CMD ARGS...
 *
 * The sampler of `goshim compare` and `goshim stress`. Runs CMD (stdin,
 * stdout and stderr inherited; each -e sets an environment variable for CMD
 * only, so an LD_PRELOAD given that way never loads into the sampler) and,
 * every MS milliseconds (default 10) until CMD exits, sums over CMD's
 * process tree the OS threads and the RSS read from /proc/PID/stat. SERIES
 * gets one line "MS_SINCE_START THREADS RSS_KIB" per sample (MS: when its
 * reading began, to the microsecond); SUMMARY gets
 * "name value" lines:
 *
 *   status N        CMD's exit code, or 128+SIG when killed by SIG
 *   signal N        the signal that killed it (0 if none)
 *   wall_s          from fork to reaping
 *   start_ns        CLOCK_MONOTONIC at the fork, the series' time 0
 *   user_s sys_s    CPU time of CMD and its waited-for descendants (wait4's
 *   vol_cs invol_cs rusage: exact, every thread, however short-lived)
 *   peak_threads mean_threads peak_rss_kib mean_rss_kib samples
 *
 * -c CGROUP is the directory of an empty memory cgroup, v2 (memory.current)
 * or v1 (memory.usage_in_bytes), made by the caller: CMD joins it between
 * fork and exec, the sampler stays outside (so an OOM kill there picks CMD's
 * tree, never the sampler). Each tick then also reads the cgroup's total
 * memory, user and kernel, and its kernel share, and sums the page tables
 * (VmPTE) over the tree; a SERIES line gets "TOTAL_KIB KERNEL_KIB SOCK_KIB
 * PAGETABLES_KIB" more, and SUMMARY these lines more:
 *
 *   mem_cgroup N               1 or 2, the cgroup version
 *   mem_total_peak_kib         user + kernel: v2 memory.peak, v1
 *                              memory.max_usage_in_bytes, or the largest
 *                              sample if that is larger (or the file absent)
 *   mem_kernel_peak_kib        the kernel's part: v2 memory.stat's kernel +
 *                              sock, v1 memory.kmem.usage_in_bytes (or its
 *                              max_usage) + memory.kmem.tcp
 *   mem_sock_peak_kib          socket buffers, sampled: v2 sock, v1
 *                              memory.kmem.tcp (whose max_usage also holds
 *                              the burst of a killed server's sockets
 *                              being torn down)
 *   mem_pagetables_peak_kib    the tree's page tables
 *   mem_oom_kills              processes the kernel killed for the limit
 *
 * v1 charges socket buffers to a counter of their own, apart from
 * memory.usage_in_bytes (and only once something set memory.kmem.tcp's
 * limit): total and kernel add it, so both versions count the same things.
 *
 * Why C and why so: a shell loop cannot read a 10,000-thread process every
 * 10 ms without being the load itself. The tree is found by scanning /proc
 * once per tick, but a pid is classified (ours or not) once, when first
 * seen, and only our pids' stat files are read again; a pid that leaves
 * /proc is forgotten, so a reused pid is classified afresh. Membership is
 * sticky: a descendant reparented to init still counts while CMD lives.
 * Peak RSS is the larger of the sampled tree sum and wait4's ru_maxrss (the
 * largest single process's own peak); both are lower bounds of the true
 * peak, and the second catches a peak shorter than a tick.
 *
 * SIGTERM, SIGINT and SIGHUP are forwarded to CMD; sampling goes on until it
 * is gone. Exits with CMD's status (128+SIG when killed by SIG). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct pidclass {
	int pid;
	int ours;
};

struct table {
	struct pidclass *v;
	size_t n, cap;
};

static volatile sig_atomic_t child_pid;
static long page_kib;

/* The memory cgroup of -c, and what one tick read from it (KiB). */
static const char *cg_dir;
static int cg_version;

struct memsample {
	long total, kernel, sock, pagetables;
};

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void die(const char *what)
{
	fprintf(stderr, "procsample: %s: %s\n", what, strerror(errno));
	exit(126);
}

/* PATH's start, NUL-ended, in buf (one read: a /proc or cgroup file is
 * made whole by it); false when it cannot be read. */
static bool read_start(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The first number in DIR/NAME (bytes), or -1 when it cannot be read. */
static long long cg_read(const char *name)
{
	char path[4096], buf[64];
	snprintf(path, sizeof path, "%s/%s", cg_dir, name);
	if (!read_start(path, buf, sizeof buf))
		return -1;
	char *end;
	long long v = strtoll(buf, &end, 10);
	return end == buf ? -1 : v;
}

/* The value of KEY in DIR/NAME, a file of "key value" lines (memory.stat,
 * memory.events, memory.oom_control), or -1 when it is not there. */
static long long cg_key(const char *name, const char *key)
{
	char path[4096], line[256];
	size_t kl = strlen(key);
	long long v = -1;
	snprintf(path, sizeof path, "%s/%s", cg_dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			v = strtoll(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long kib(long long bytes)
{
	return bytes > 0 ? (long)(bytes / 1024) : 0;
}

/* The cgroup's total and kernel share now (the tree's page tables are
 * summed in sample()). */
static void cg_sample(struct memsample *m)
{
	if (cg_version == 2) {
		static const char *const parts[] = { "kernel_stack", "pagetables",
						     "percpu", "slab", "vmalloc" };
		long long kernel = cg_key("memory.stat", "kernel");
		if (kernel < 0) { /* before Linux 5.18: the parts it sums */
			kernel = 0;
			for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
				long long v = cg_key("memory.stat", parts[i]);
				kernel += v > 0 ? v : 0;
			}
		}
		long long sock = cg_key("memory.stat", "sock");
		m->total = kib(cg_read("memory.current"));
		m->sock = kib(sock);
		m->kernel = kib(kernel) + m->sock;
	} else {
		long long tcp = cg_read("memory.kmem.tcp.usage_in_bytes");
		m->sock = kib(tcp);
		m->total = kib(cg_read("memory.usage_in_bytes")) + m->sock;
		m->kernel = kib(cg_read("memory.kmem.usage_in_bytes")) + m->sock;
	}
}

/* VmPTE of PID in KiB, 0 when it cannot be read. */
static long pagetables_of(int pid)
{
	char path[48], line[128];
	long v = 0;
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmPTE:", 6) == 0) {
			v = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* CMD's side of -c, between fork and exec: into the cgroup. */
static void cg_join(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/cgroup.procs", cg_dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0\n", 2) != 2) {
		fprintf(stderr, "procsample: joining %s: %s\n", cg_dir,
			strerror(errno));
		_exit(126);
	}
	close(fd);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct pidclass *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct pidclass *lookup(const struct table *t, int pid)
{
	struct pidclass key = { .pid = pid };
	return bsearch(&key, t->v, t->n, sizeof *t->v, cmp_pid);
}

static void push(struct table *t, int pid, int ours)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->v = realloc(t->v, t->cap * sizeof *t->v);
		if (!t->v)
			die("realloc");
	}
	t->v[t->n++] = (struct pidclass){ .pid = pid, .ours = ours };
}

/* Reads ppid, num_threads and rss (KiB) of PID from /proc/PID/stat; returns
 * -1 when the process is gone, 1 when it is a zombie (exited, not yet
 * reaped: no longer running, so not counted), else 0. The command name
 * (field 2) may hold spaces and parentheses: the fields after it start
 * after its last ')'. */
static int read_stat(int pid, int *ppid, long *threads, long *rss_kib)
{
	char path[48], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (!read_start(path, buf, sizeof buf))
		return -1;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* p+2 is field 3 (state); ppid is 4, num_threads 20, rss 24. */
	long f[25] = { 0 };
	char *s = p + 2;
	int zombie = *s == 'Z';
	for (int i = 3; i <= 24 && *s; i++) {
		if (i == 3) {
			s++;
		} else {
			f[i] = strtol(s, &s, 10);
		}
		while (*s == ' ')
			s++;
	}
	*ppid = (int)f[4];
	*threads = f[20];
	*rss_kib = f[24] * page_kib;
	return zombie;
}

/* One tick: the pids now in /proc, classified (kept from OLD, or new: ours
 * when the parent is ours), into NEW; sums of threads and RSS over ours,
 * and with -c the cgroup's memory into M. */
static void sample(int root, struct table *old, struct table *new,
		   long *threads, long *rss_kib, struct memsample *m)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int again = 1;

	if (!d)
		die("opendir /proc");
	new->n = 0;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		struct pidclass *c = lookup(old, (int)pid);
		push(new, (int)pid, c ? c->ours : -1); /* -1: not known yet */
	}
	closedir(d);
	qsort(new->v, new->n, sizeof *new->v, cmp_pid);

	/* Classify the new ones; a parent new in the same tick is
	 * classified first by going round until nothing changes. */
	*threads = 0;
	*rss_kib = 0;
	*m = (struct memsample){ 0 };
	while (again) {
		again = 0;
		for (size_t i = 0; i < new->n; i++) {
			struct pidclass *c = &new->v[i];
			if (c->ours != -1)
				continue;
			int ppid;
			long th, rss;
			if (c->pid == root) {
				c->ours = 1;
				continue;
			}
			if (read_stat(c->pid, &ppid, &th, &rss) < 0) {
				c->ours = 0; /* gone already */
				continue;
			}
			struct pidclass *p = lookup(new, ppid);
			if (p && p->ours == -1 && p != c) {
				again = 1; /* its parent first */
				continue;
			}
			c->ours = p && p->ours == 1;
		}
	}
	for (size_t i = 0; i < new->n; i++) {
		int ppid;
		long th, rss;
		if (new->v[i].ours == 1 &&
		    read_stat(new->v[i].pid, &ppid, &th, &rss) == 0) {
			*threads += th;
			*rss_kib += rss;
			if (cg_dir)
				m->pagetables += pagetables_of(new->v[i].pid);
		}
	}
	if (cg_dir)
		cg_sample(m);
}

static void usage(void)
{
	fprintf(stderr, "usage: procsample [-i MS] [-s SERIES] [-o SUMMARY] "
			"[-c CGROUP] [-e NAME=VALUE]... -- CMD ARGS...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *series_path = NULL, *summary_path = NULL;
	char **envs = calloc((size_t)argc, sizeof *envs);
	int nenv = 0, opt;
	long interval_ms = 10;

	if (!envs)
		die("calloc");
	while ((opt = getopt(argc, argv, "+i:s:o:c:e:")) != -1) {
		switch (opt) {
		case 'i':
			interval_ms = atol(optarg);
			if (interval_ms < 1)
				usage();
			break;
		case 's':
			series_path = optarg;
			break;
		case 'o':
			summary_path = optarg;
			break;
		case 'c':
			cg_dir = optarg;
			break;
		case 'e':
			if (!strchr(optarg, '='))
				usage();
			envs[nenv++] = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	page_kib = sysconf(_SC_PAGESIZE) / 1024;
	if (cg_dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/memory.current", cg_dir);
		if (access(path, R_OK) == 0) {
			cg_version = 2;
		} else {
			snprintf(path, sizeof path, "%s/memory.usage_in_bytes",
				 cg_dir);
			if (access(path, R_OK))
				die(path);
			cg_version = 1;
		}
	}

	FILE *series = NULL;
	if (series_path && !(series = fopen(series_path, "w")))
		die(series_path);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	double t0 = now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		for (int i = 0; i < nenv; i++)
			putenv(envs[i]);
		if (cg_dir)
			cg_join();
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "procsample: exec %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	child_pid = pid;

	struct table a = { 0 }, b = { 0 }, *old = &a, *cur = &b;
	struct timespec next;
	struct rusage ru;
	struct memsample m, peak = { 0 };
	long peak_threads = 0, peak_rss = 0, samples = 0;
	double sum_threads = 0, sum_rss = 0;
	int status = 0;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		long th, rss;
		/* A sample's time is when its reading began: what the program
		 * had done by then is in it (a reading of a busy tree takes
		 * a while, and a fill answers connections meanwhile). */
		double t_read = now();
		sample(pid, old, cur, &th, &rss, &m);
		struct table *t = old;
		old = cur;
		cur = t;
		pid_t r = wait4(pid, &status, WNOHANG, &ru);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			die("wait4");
		/* A sample taken as the last thread left reads 0: not a
		 * sample of the running program. */
		if (th > 0) {
			samples++;
			sum_threads += (double)th;
			sum_rss += (double)rss;
			if (th > peak_threads)
				peak_threads = th;
			if (rss > peak_rss)
				peak_rss = rss;
			if (m.total > peak.total)
				peak.total = m.total;
			if (m.kernel > peak.kernel)
				peak.kernel = m.kernel;
			if (m.sock > peak.sock)
				peak.sock = m.sock;
			if (m.pagetables > peak.pagetables)
				peak.pagetables = m.pagetables;
			if (series && cg_dir)
				fprintf(series, "%.3f %ld %ld %ld %ld %ld %ld\n",
					(t_read - t0) * 1e3, th, rss, m.total,
					m.kernel, m.sock, m.pagetables);
			else if (series)
				fprintf(series, "%.3f %ld %ld\n",
					(t_read - t0) * 1e3, th, rss);
		}
		next.tv_nsec += interval_ms * 1000000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
	}
	double wall = now() - t0;
	int code = WIFEXITED(status) ? WEXITSTATUS(status)
				     : 128 + WTERMSIG(status);
	if (series)
		fclose(series);
	if (ru.ru_maxrss > peak_rss)
		peak_rss = ru.ru_maxrss;
	long long oom_kills = 0;
	if (cg_dir) {
		/* The kernel's own high-water marks catch a peak between two
		 * ticks; v1 keeps one for the kernel share too. */
		long total = kib(cg_read(cg_version == 2 ? "memory.peak"
							 : "memory.max_usage_in_bytes"));
		if (total > peak.total)
			peak.total = total;
		if (cg_version == 1) {
			long kernel = kib(cg_read("memory.kmem.max_usage_in_bytes"));
			if (kernel > peak.kernel)
				peak.kernel = kernel;
		}
		oom_kills = cg_version == 2 ? cg_key("memory.events", "oom_kill")
					    : cg_key("memory.oom_control", "oom_kill");
		if (oom_kills < 0)
			oom_kills = 0;
	}

	if (summary_path) {
		FILE *f = fopen(summary_path, "w");
		if (!f)
			die(summary_path);
		fprintf(f, "status %d\n", code);
		fprintf(f, "signal %d\n",
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		fprintf(f, "wall_s %.3f\n", wall);
		fprintf(f, "start_ns %.0f\n", t0 * 1e9);
		fprintf(f, "user_s %.3f\n",
			ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
		fprintf(f, "sys_s %.3f\n",
			ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
		fprintf(f, "vol_cs %ld\n", ru.ru_nvcsw);
		fprintf(f, "invol_cs %ld\n", ru.ru_nivcsw);
		fprintf(f, "peak_threads %ld\n", peak_threads);
		fprintf(f, "mean_threads %.1f\n",
			samples ? sum_threads / (double)samples : 0.0);
		fprintf(f, "peak_rss_kib %ld\n", peak_rss);
		fprintf(f, "mean_rss_kib %.0f\n",
			samples ? sum_rss / (double)samples : 0.0);
		fprintf(f, "samples %ld\n", samples);
		if (cg_dir) {
			fprintf(f, "mem_cgroup %d\n", cg_version);
			fprintf(f, "mem_total_peak_kib %ld\n", peak.total);
			fprintf(f, "mem_kernel_peak_kib %ld\n", peak.kernel);
			fprintf(f, "mem_sock_peak_kib %ld\n", peak.sock);
			fprintf(f, "mem_pagetables_peak_kib %ld\n",
				peak.pagetables);
			fprintf(f, "mem_oom_kills %lld\n", oom_kills);
		}
		if (fclose(f))
			die(summary_path);
	}
	return code;
}
