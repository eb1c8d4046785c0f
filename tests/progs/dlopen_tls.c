// dlopen_tls: modules dlopen()ed while 64 threads already exist and wait.
// Module dlopen_tls_ie.so uses initial-exec TLS, so ld.so puts it in the static
// TLS surplus and must initialise that block in every existing thread;
// dlopen_tls_gd.so uses global-dynamic TLS, allocated lazily per thread. The
// waiting threads (half spinning on an atomic flag with sched_yield, half
// blocked in a pthread_barrier_wait), main, and new threads created afterwards
// must all see the initial values, then keep values of their own across
// yields. Then both modules are dlclose()d and loaded again (the static TLS
// space is reclaimed and usually reused, still holding the old values in
// every thread) and everything is checked once more.
// The modules are found at <dir of /proc/self/exe>/mods/NAME.so (the Makefile
// builds tests/progs/mods/NAME.c into build/tests/progs/mods/NAME.so).
// goshim-test: shim-max-threads=GOMAXPROCS+2
// goshim-test: native-min-threads=65
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mods/dlopen_tls_mod.h"

#define NEARLY 16	/* threads that exit before the first dlopen */
#define NWAIT 64	/* threads that wait across the dlopens */
#define NLATE 16	/* threads created after each dlopen */
#define ROUNDS 8
#define LOADS 2		/* dlopen; dlclose + dlopen */
#define STATIC_WINDOW (64 * 1024)	/* static TLS lies this close to the TP */

#define FAIL(...) do { fprintf(stderr, "dlopen_tls: " __VA_ARGS__); \
	fputc('\n', stderr); exit(1); } while (0)
#define CHECK(c) do { if (!(c)) \
	FAIL("%s:%d: check failed: %s", __FILE__, __LINE__, #c); } while (0)
#define OK(call) do { int e_ = (call); if (e_) \
	FAIL("%s:%d: %s: %s", __FILE__, __LINE__, #call, strerror(e_)); } while (0)

struct mod {
	const char *name;
	void *h;
	view_fn *view;
	sum_fn *sum;
};

static struct mod ie = { .name = "dlopen_tls_ie" };
static struct mod gd = { .name = "dlopen_tls_gd" };
static char moddir[PATH_MAX];

/*
 * Phase n: the n-th load is done; waiting threads may run their checks. Odd
 * waiting threads spin on it; even ones and main meet at barrier release.
 */
static atomic_int phase;

static pthread_barrier_t started, release, wait_mid, wait_done, late_mid;
static atomic_int ie_not_static;

/* Addresses of the live threads' TLS blocks: they must all differ. */
static uintptr_t addr_ie[NWAIT + 1], addr_gd[NWAIT + 1];
static uintptr_t late_ie[NLATE], late_gd[NLATE];

static char *thread_pointer(void)
{
	char *tp;
#if defined(__x86_64__)
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = NULL;
#endif
	return tp;
}

/* Is p in this thread's static TLS (next to the thread pointer)? */
static int in_static_tls(const void *p)
{
	const char *tp = thread_pointer(), *a = p;
#if defined(__x86_64__)
	return a < tp && a >= tp - STATIC_WINDOW; /* TLS blocks below the TCB */
#elif defined(__aarch64__)
	return a >= tp && a < tp + STATIC_WINDOW; /* TLS blocks above the TP */
#else
	(void)tp;
	(void)a;
	return 1;
#endif
}

static void load(struct mod *m)
{
	char path[PATH_MAX + 64], sym[64];

	snprintf(path, sizeof path, "%s/mods/%s.so", moddir, m->name);
	m->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!m->h)
		FAIL("dlopen %s: %s", path, dlerror());
	snprintf(sym, sizeof sym, "%s_view", m->name);
	m->view = (view_fn *)dlsym(m->h, sym);
	snprintf(sym, sizeof sym, "%s_sum", m->name);
	m->sum = (sum_fn *)dlsym(m->h, sym);
	if (!m->view || !m->sum)
		FAIL("%s: missing symbols: %s", m->name, dlerror());
}

static void unload(struct mod *m)
{
	char path[PATH_MAX + 64];

	if (dlclose(m->h) != 0)
		FAIL("dlclose %s: %s", m->name, dlerror());
	m->h = NULL;
	m->view = NULL;
	m->sum = NULL;
	snprintf(path, sizeof path, "%s/mods/%s.so", moddir, m->name);
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h)
		FAIL("%s still loaded after dlclose", m->name);
}

static long ie_sum_of(const struct tls_view *v)
{
	long s = *v->i + *v->l;
	for (int k = 0; k < IE_ARR_N; k++)
		s += (long)v->arr[k] * (k + 1);
	for (int k = 0; k < IE_BSS_N; k++)
		s += (long)v->bss[k] * (k + 3);
	return s;
}

static long gd_sum_of(const struct tls_view *v)
{
	long s = *v->i;
	const long *bss = (const long *)v->bss;
	for (int k = 0; k < GD_STR_N; k++)
		s += (long)(unsigned char)v->str[k] * (k + 1);
	for (int k = 0; k < GD_ARR_N; k++)
		s += v->l[k] * (k + 5);
	for (int k = 0; k < GD_BSS_N; k++)
		s += bss[k] * (k + 7);
	return s;
}

static void check_initial(int id, int load_no, const struct tls_view *vi,
			  const struct tls_view *vg)
{
	static const int ie_arr[IE_ARR_N] = IE_ARR_INIT;
	static const long gd_arr[GD_ARR_N] = GD_ARR_INIT;
	static const char gd_str[GD_STR_N] = GD_STR_INIT;
	const long *gd_bss = (const long *)vg->bss;
	int bad = *vi->i != IE_INT_INIT || *vi->l != IE_LONG_INIT ||
		  memcmp(vi->arr, ie_arr, sizeof ie_arr) != 0;

	for (int k = 0; k < IE_BSS_N; k++)
		bad |= vi->bss[k] != 0;
	if (bad)
		FAIL("thread %d, load %d: initial-exec TLS of the module does not "
		     "hold its initial values: int %#x (want %#x), long %ld "
		     "(want %ld), arr[0] %d (want %d), bss[0] %d (want 0)",
		     id, load_no, *vi->i, IE_INT_INIT, *vi->l, IE_LONG_INIT,
		     vi->arr[0], IE_ARR(0), vi->bss[0]);
	if (ie.sum() != ie_sum_of(vi))
		FAIL("thread %d, load %d: initial-exec module reads %ld, "
		     "the view %ld", id, load_no, ie.sum(), ie_sum_of(vi));

	bad = *vg->i != GD_INT_INIT || memcmp(vg->l, gd_arr, sizeof gd_arr) != 0 ||
	      memcmp(vg->str, gd_str, sizeof gd_str) != 0;
	for (int k = 0; k < GD_BSS_N; k++)
		bad |= gd_bss[k] != 0;
	if (bad)
		FAIL("thread %d, load %d: global-dynamic TLS of the module does "
		     "not hold its initial values: int %#x (want %#x), "
		     "str \"%.31s\", arr[1] %ld (want %ld)", id, load_no, *vg->i,
		     GD_INT_INIT, vg->str, vg->l[1], GD_ARR(1));
	if (gd.sum() != gd_sum_of(vg))
		FAIL("thread %d, load %d: global-dynamic module reads %ld, "
		     "the view %ld", id, load_no, gd.sum(), gd_sum_of(vg));
}

/* Thread id's own values for load load_no. */
static void write_own(int id, int load_no, const struct tls_view *vi,
		      const struct tls_view *vg)
{
	int x = id * 10 + load_no;
	long *gd_bss = (long *)vg->bss;

	*vi->i = x;
	*vi->l = -1000L * x;
	for (int k = 0; k < IE_ARR_N; k++)
		vi->arr[k] = x * 100 + k;
	for (int k = 0; k < IE_BSS_N; k++)
		vi->bss[k] = (unsigned char)(x * 3 + k + 1);
	*vg->i = x + 7;
	snprintf(vg->str, GD_STR_N, "thread %d load %d", id, load_no);
	for (int k = 0; k < GD_ARR_N; k++)
		vg->l[k] = x * 1000L + k;
	for (int k = 0; k < GD_BSS_N; k++)
		gd_bss[k] = -(long)x - k;
}

static void check_own(int id, int load_no, const struct tls_view *vi,
		      const struct tls_view *vg)
{
	int x = id * 10 + load_no, bad = 0;
	const long *gd_bss = (const long *)vg->bss;
	char str[GD_STR_N];

	bad |= *vi->i != x || *vi->l != -1000L * x;
	for (int k = 0; k < IE_ARR_N; k++)
		bad |= vi->arr[k] != x * 100 + k;
	for (int k = 0; k < IE_BSS_N; k++)
		bad |= vi->bss[k] != (unsigned char)(x * 3 + k + 1);
	if (bad)
		FAIL("thread %d, load %d: initial-exec TLS lost its values "
		     "across a yield (int %d, want %d)", id, load_no, *vi->i, x);
	snprintf(str, sizeof str, "thread %d load %d", id, load_no);
	bad |= *vg->i != x + 7 || strcmp(vg->str, str) != 0;
	for (int k = 0; k < GD_ARR_N; k++)
		bad |= vg->l[k] != x * 1000L + k;
	for (int k = 0; k < GD_BSS_N; k++)
		bad |= gd_bss[k] != -(long)x - k;
	if (bad)
		FAIL("thread %d, load %d: global-dynamic TLS lost its values "
		     "across a yield (int %d, want %d)", id, load_no, *vg->i,
		     x + 7);
	if (ie.sum() != ie_sum_of(vi) || gd.sum() != gd_sum_of(vg))
		FAIL("thread %d, load %d: a module reads other values than "
		     "its view", id, load_no);
}

/*
 * The whole check for one thread: initial values, own values, a barrier so
 * every thread of the group has written its values, yields, own values again.
 */
static void check_tls(int id, int load_no, pthread_barrier_t *mid,
		      uintptr_t *slot_ie, uintptr_t *slot_gd)
{
	struct tls_view vi, vg;

	ie.view(&vi);
	gd.view(&vg);
	if (!in_static_tls(vi.i) || !in_static_tls(vi.bss))
		atomic_store(&ie_not_static, 1);
	check_initial(id, load_no, &vi, &vg);
	write_own(id, load_no, &vi, &vg);
	*slot_ie = (uintptr_t)vi.i;
	*slot_gd = (uintptr_t)vg.i;
	pthread_barrier_wait(mid);
	for (int r = 0; r < ROUNDS; r++) {
		sched_yield();
		struct tls_view wi, wg;
		ie.view(&wi);
		gd.view(&wg);
		if (wi.i != vi.i || wi.bss != vi.bss || wg.i != vg.i ||
		    wg.str != vg.str)
			FAIL("thread %d, load %d: TLS addresses changed across "
			     "a yield", id, load_no);
		check_own(id, load_no, &vi, &vg);
	}
}

static void *early(void *arg)
{
	return arg;
}

static void wait_phase(int id, int p)
{
	if (id % 2) {
		while (atomic_load(&phase) < p)
			sched_yield();
		return;
	}
	pthread_barrier_wait(&release);
	CHECK(atomic_load(&phase) == p);
}

static void *waiter(void *arg)
{
	int id = (int)(intptr_t)arg;

	pthread_barrier_wait(&started);
	for (int p = 1; p <= LOADS; p++) {
		wait_phase(id, p);
		check_tls(id, p, &wait_mid, &addr_ie[id], &addr_gd[id]);
		pthread_barrier_wait(&wait_done);
	}
	return NULL;
}

static void *late(void *arg)
{
	int i = (int)(intptr_t)arg;
	check_tls(NWAIT + 1 + i, atomic_load(&phase), &late_mid, &late_ie[i],
		  &late_gd[i]);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

static void all_distinct(uintptr_t *a, int n, const char *what)
{
	qsort(a, n, sizeof *a, cmp);
	for (int i = 1; i < n; i++)
		if (a[i] == a[i - 1])
			FAIL("two live threads share one %s TLS block", what);
}

static void find_moddir(void)
{
	ssize_t n = readlink("/proc/self/exe", moddir, sizeof moddir - 1);
	if (n <= 0)
		FAIL("readlink /proc/self/exe failed");
	moddir[n] = '\0';
	char *slash = strrchr(moddir, '/');
	if (!slash)
		FAIL("odd /proc/self/exe: %s", moddir);
	*slash = '\0';
}

int main(void)
{
	static pthread_t tw[NWAIT], tl[NLATE];
	pthread_t te[NEARLY];

	find_moddir();

	/* Threads that have come and gone before any module is loaded. */
	for (int i = 0; i < NEARLY; i++)
		OK(pthread_create(&te[i], NULL, early, NULL));
	for (int i = 0; i < NEARLY; i++)
		OK(pthread_join(te[i], NULL));

	OK(pthread_barrier_init(&started, NULL, NWAIT + 1));
	OK(pthread_barrier_init(&release, NULL, NWAIT / 2 + 1));
	OK(pthread_barrier_init(&wait_mid, NULL, NWAIT + 1));
	OK(pthread_barrier_init(&wait_done, NULL, NWAIT + 1));
	OK(pthread_barrier_init(&late_mid, NULL, NLATE));
	for (int i = 1; i <= NWAIT; i++)
		OK(pthread_create(&tw[i - 1], NULL, waiter, (void *)(intptr_t)i));
	pthread_barrier_wait(&started);
	printf("%d threads started and waiting, no module loaded\n", NWAIT);

	for (int p = 1; p <= LOADS; p++) {
		if (p > 1) {
			unload(&gd);
			unload(&ie);
		}
		load(&ie);
		load(&gd);
		printf("load %d: %s.so (initial-exec) and %s.so (global-dynamic) "
		       "loaded\n", p, ie.name, gd.name);

		atomic_store(&phase, p);
		pthread_barrier_wait(&release);
		check_tls(0, p, &wait_mid, &addr_ie[0], &addr_gd[0]);
		pthread_barrier_wait(&wait_done);
		all_distinct(addr_ie, NWAIT + 1, "initial-exec");
		all_distinct(addr_gd, NWAIT + 1, "global-dynamic");
		printf("load %d: %d waiting threads and main: initial values, "
		       "then their own across yields\n", p, NWAIT);

		for (int i = 0; i < NLATE; i++)
			OK(pthread_create(&tl[i], NULL, late, (void *)(intptr_t)i));
		for (int i = 0; i < NLATE; i++)
			OK(pthread_join(tl[i], NULL));
		all_distinct(late_ie, NLATE, "initial-exec");
		all_distinct(late_gd, NLATE, "global-dynamic");
		printf("load %d: %d new threads: initial values, then their own "
		       "across yields\n", p, NLATE);
	}
	for (int i = 0; i < NWAIT; i++)
		OK(pthread_join(tw[i], NULL));

	int is_static = !atomic_load(&ie_not_static);
	printf("initial-exec module in static TLS in every thread: %s\n",
	       is_static ? "yes" : "no");
	if (!is_static)
		FAIL("the initial-exec module's TLS is not next to the thread "
		     "pointer: the test does not test static TLS");
	printf("OK\n");
	return 0;
}
