// dlopen_tls_race: threads are created and exit without pause while another
// thread loads and unloads modules with TLS. Every new thread must start
// with the initial values of the program's own __thread variables and, while
// the modules are loaded, of theirs: dlopen_tls_ie.so (initial-exec, in the
// static TLS surplus, so ld.so reuses the same space after each dlclose) and
// dlopen_tls_gd.so (global-dynamic, allocated per thread on first use). Each
// thread then scribbles over all of them, so a thread that inherited any of
// its predecessor's values, or a block initialised from a stale image, shows.
// Half the threads are created while a dlopen or dlclose may be under way:
// those check only the program's TLS, as glibc itself can leave a module's
// static block zero in a thread whose creation overlaps the module's dlopen.
// Modules are found at <dir of /proc/self/exe>/mods/NAME.so.
// goshim-test: shim-max-threads=GOMAXPROCS+2
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mods/dlopen_tls_mod.h"

#define CREATORS 3
#define BATCH 8
#define BATCHES 400
#define LOAD_ROUNDS 60

#define FAIL(...) do { fprintf(stderr, "dlopen_tls_race: " __VA_ARGS__); \
	fputc('\n', stderr); exit(1); } while (0)
#define CHECK(c) do { if (!(c)) \
	FAIL("%s:%d: check failed: %s", __FILE__, __LINE__, #c); } while (0)
#define OK(call) do { int e_ = (call); if (e_) \
	FAIL("%s:%d: %s: %s", __FILE__, __LINE__, #call, strerror(e_)); } while (0)

static __thread int own_int = 0x51515151;
static __thread long own_arr[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static __thread char own_bss[200];

static char moddir[PATH_MAX];
static pthread_rwlock_t mods_lock = PTHREAD_RWLOCK_INITIALIZER;
static view_fn *ie_view, *gd_view;	/* non-NULL while loaded */
static sum_fn *ie_sum, *gd_sum;
static long ie_sum0, gd_sum0;	/* the sums of the initial values */
static atomic_long module_checks;
static atomic_int stop;

static void check_own(void)
{
	CHECK(own_int == 0x51515151);
	for (int k = 0; k < 12; k++)
		CHECK(own_arr[k] == k + 1);
	for (size_t k = 0; k < sizeof own_bss; k++)
		CHECK(own_bss[k] == 0);
	own_int = -1;
	for (int k = 0; k < 12; k++)
		own_arr[k] = -k;
	memset(own_bss, 0x5a, sizeof own_bss);
}

static void check_ie(void)
{
	struct tls_view v;
	int arr0[IE_ARR_N] = IE_ARR_INIT;

	ie_view(&v);
	CHECK(*v.i == IE_INT_INIT);
	CHECK(*v.l == IE_LONG_INIT);
	CHECK(memcmp(v.arr, arr0, sizeof arr0) == 0);
	for (int k = 0; k < IE_BSS_N; k++)
		CHECK(v.bss[k] == 0);
	CHECK(ie_sum() == ie_sum0);
	*v.i = 0;
	*v.l = 0;
	memset(v.arr, 0x77, sizeof arr0);
	memset(v.bss, 0x66, IE_BSS_N);
	CHECK(ie_sum() != ie_sum0);
}

static void check_gd(void)
{
	struct tls_view v;
	long arr0[GD_ARR_N] = GD_ARR_INIT;
	long *bss;

	gd_view(&v);
	CHECK(*v.i == GD_INT_INIT);
	CHECK(memcmp(v.l, arr0, sizeof arr0) == 0);
	CHECK(strcmp(v.str, GD_STR_INIT) == 0);
	bss = (long *)v.bss;
	for (int k = 0; k < GD_BSS_N; k++)
		CHECK(bss[k] == 0);
	CHECK(gd_sum() == gd_sum0);
	*v.i = 1;
	memset(v.l, 0x44, sizeof arr0);
	strcpy(v.str, "scribbled");
	memset(bss, 0x33, GD_BSS_N * sizeof(long));
	CHECK(gd_sum() != gd_sum0);
}

static void *child(void *arg)
{
	check_own();
	if (arg == NULL)
		return NULL;
	OK(pthread_rwlock_rdlock(&mods_lock));
	if (ie_view) {
		check_ie();
		check_gd();
		atomic_fetch_add(&module_checks, 1);
	}
	OK(pthread_rwlock_unlock(&mods_lock));
	return NULL;
}

static void *creator(void *arg)
{
	(void)arg;
	for (int b = 0; b < BATCHES; b++) {
		pthread_t t[BATCH];
		bool stable = b & 1;
		if (stable)
			OK(pthread_rwlock_rdlock(&mods_lock));
		for (int k = 0; k < BATCH; k++)
			OK(pthread_create(&t[k], NULL, child,
					  stable ? &module_checks : NULL));
		if (stable)
			OK(pthread_rwlock_unlock(&mods_lock));
		for (int k = 0; k < BATCH; k++)
			OK(pthread_join(t[k], NULL));
	}
	return NULL;
}

static void *load_sym(void *h, const char *name)
{
	void *s = dlsym(h, name);
	if (s == NULL)
		FAIL("dlsym %s: %s", name, dlerror());
	return s;
}

static void *open_mod(const char *name)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/mods/%s.so", moddir, name);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		FAIL("dlopen %s: %s", path, dlerror());
	return h;
}

static void *loader(void *arg)
{
	(void)arg;
	for (int r = 0; r < LOAD_ROUNDS && !atomic_load(&stop); r++) {
		OK(pthread_rwlock_wrlock(&mods_lock));
		void *hi = open_mod("dlopen_tls_ie");
		void *hg = open_mod("dlopen_tls_gd");
		ie_view = load_sym(hi, "dlopen_tls_ie_view");
		ie_sum = load_sym(hi, "dlopen_tls_ie_sum");
		gd_view = load_sym(hg, "dlopen_tls_gd_view");
		gd_sum = load_sym(hg, "dlopen_tls_gd_sum");
		OK(pthread_rwlock_unlock(&mods_lock));
		usleep(500);
		OK(pthread_rwlock_wrlock(&mods_lock));
		ie_view = gd_view = NULL;
		CHECK(dlclose(hi) == 0);
		CHECK(dlclose(hg) == 0);
		OK(pthread_rwlock_unlock(&mods_lock));
		usleep(200);
	}
	return NULL;
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", moddir, sizeof moddir - 1);
	if (n <= 0)
		FAIL("readlink /proc/self/exe failed");
	moddir[n] = 0;
	*strrchr(moddir, '/') = 0;

	/* The sums of the initial values, from a thread that scribbles on
	 * nothing before it sums. */
	void *hi = open_mod("dlopen_tls_ie"), *hg = open_mod("dlopen_tls_gd");
	ie_sum0 = ((sum_fn *)load_sym(hi, "dlopen_tls_ie_sum"))();
	gd_sum0 = ((sum_fn *)load_sym(hg, "dlopen_tls_gd_sum"))();
	CHECK(dlclose(hi) == 0 && dlclose(hg) == 0);

	pthread_t cr[CREATORS], ld;
	OK(pthread_create(&ld, NULL, loader, NULL));
	for (int k = 0; k < CREATORS; k++)
		OK(pthread_create(&cr[k], NULL, creator, NULL));
	for (int k = 0; k < CREATORS; k++)
		OK(pthread_join(cr[k], NULL));
	atomic_store(&stop, 1);
	OK(pthread_join(ld, NULL));
	check_own();
	if (atomic_load(&module_checks) == 0)
		FAIL("no thread ever ran while the modules were loaded");
	printf("dlopen_tls_race: %d threads, each with fresh TLS\n",
	       CREATORS * BATCH * BATCHES);
	return 0;
}
