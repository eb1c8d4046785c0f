/*
 * stack.c: goroutine stacks.
 *
 * Like nptl, a stack mapping carries the goroutine's static TLS and TCB at
 * its top, so one mmap is one thread identity. Mappings are MAP_NORESERVE:
 * only touched pages cost memory, so the default size can stay glibc's
 * (RLIMIT_STACK). Guard pages are made with MADV_GUARD_INSTALL, which does
 * not split the VMA: with mprotect each guard costs a VMA and
 * vm.max_map_count (65530) would stop a process near 32k threads. On
 * kernels without it, mprotect guards are used while the VMA budget allows,
 * and goshim says once on stderr when it stops adding them.
 *
 * Stacks of the default size and guard are carved from chunks of up to 64
 * mapped at once (stack_chunk_take): one mmap, one process_madvise for all
 * their guards and one that prefaults each one's top two pages (its TCB
 * and TLS, and the frames a new thread pushes first), where a stack of its
 * own costs an mmap, a madvise and two page faults (~10 us in a VM, most
 * of a million-thread start). Chunks grow from 4 stacks, so a program with
 * a few threads pays for a few. Without process_madvise (before Linux
 * 6.15's PIDFD_SELF, or seccomp) the guards are madvised one by one.
 *
 * Each stack is registered with valgrind, when its headers are there (the
 * requests cost a few instructions outside it): memcheck otherwise takes
 * a switch to a stack less than 2 MiB away (a caller-supplied one in the
 * heap) for a frame push, and the heap between for dead stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "number.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "stack.h"
#include "sys.h"
#include "tls.h"
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define VALGRIND_STACK_REGISTER(lo, hi) 0u
#define VALGRIND_STACK_DEREGISTER(id) ((void)(id))
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef PIDFD_SELF
#define PIDFD_SELF (-10000)
#endif
#define MINIMAL_REST_STACK 2048
#define MPROTECT_GUARD_BUDGET 30000

static size_t page_size;
static size_t default_size;
static _Atomic int guard_mode; /* 0 unknown, 1 madvise, 2 mprotect */
static _Atomic int mprotect_guards;

static size_t round_page(size_t n)
{
	return (n + page_size - 1) & ~(page_size - 1);
}

size_t stack_parse_size(const char *s)
{
	const char *p = s;
	uint64_t v;
	size_t unit = 1;

	if (!parse_uint(&p, s + strlen(s), 10, SIZE_MAX, &v))
		return 0;
	if (*p == 'k' || *p == 'K')
		unit = (size_t)1 << 10, p++;
	else if (*p == 'm' || *p == 'M')
		unit = (size_t)1 << 20, p++;
	return *p || v > SIZE_MAX / unit ? 0 : v * unit;
}

void stack_init(void)
{
	struct rlimit rl;
	const char *env = getenv("GOSHIM_STACK_SIZE");

	page_size = (size_t)sysconf(_SC_PAGESIZE);
	/* glibc's rule: RLIMIT_STACK, or 2 MiB when unlimited. */
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		default_size = rl.rlim_cur;
	else
		default_size = 2u << 20;
	if (env) {
		size_t v = stack_parse_size(env);
		if (v < 16384 || round_page(v) < v) {
			print("goshim: GOSHIM_STACK_SIZE=\"%s\" is not a size "
			      ">= 16K; using %zu\n", env, default_size);
		} else {
			default_size = v;
		}
	}
	default_size = round_page(default_size);
	if (default_size < tls_area_size() + 4 * page_size)
		default_size = round_page(tls_area_size() + 4 * page_size);
}

size_t stack_default_size(void)
{
	return default_size;
}

size_t stack_page_size(void)
{
	return page_size;
}

/* MADV_GUARD_INSTALL puts a marker in every PTE of the guard: past what
 * one page table maps, a guard costs page tables in proportion (a 64 GiB
 * guard, 128 MiB of them; a huge one, all memory). Such a guard is made
 * with mprotect, one VMA whatever its size, as glibc makes every guard. */
#define GUARD_MADVISE_MAX ((size_t)2 << 20)

static void install_guard(char *map, size_t guard)
{
	int mode = atomic_load(&guard_mode);

	if (guard == 0)
		return;
	if (guard > GUARD_MADVISE_MAX) {
		mprotect(map, guard, PROT_NONE);
		return;
	}
	if (mode != 2) {
		if (madvise(map, guard, MADV_GUARD_INSTALL) == 0) {
			atomic_store(&guard_mode, 1);
			return;
		}
		atomic_store(&guard_mode, 2);
	}
	if (atomic_fetch_add(&mprotect_guards, 1) < MPROTECT_GUARD_BUDGET) {
		mprotect(map, guard, PROT_NONE);
	} else if (atomic_load(&mprotect_guards) == MPROTECT_GUARD_BUDGET + 1) {
		print("goshim: kernel lacks MADV_GUARD_INSTALL and the VMA "
		      "budget is spent: new goroutine stacks get no guard "
		      "page\n");
	}
}

/* ---- chunks of default stacks ------------------------------------------ */

#define CHUNK_MIN 4
#define CHUNK_MAX 64
#define CHUNK_MAX_BYTES ((size_t)1 << 30)

static struct rlock chunk_lock;
static char *chunk_next; /* the next stack's lowest address */
static size_t chunk_left;
static size_t chunk_grow = CHUNK_MIN;
static bool chunk_no_pmadvise; /* process_madvise refused: one by one */

/* The raw call: the program's syscall() (shim/blocking.c) would hand this
 * M's P on, which newproc holds. Bytes done, or -errno. */
static long pmadvise(struct iovec *v, size_t n, int advice)
{
	return chunk_no_pmadvise ? -ENOSYS
				 : SYS6(SYS_process_madvise, PIDFD_SELF, v, n,
					advice, 0, 0);
}

/* Address space for stacks: only touched pages cost memory. */
static char *map_stacks(size_t len)
{
	char *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				 MAP_STACK,
			 -1, 0);
	return map == MAP_FAILED ? NULL : map;
}

/* Under chunk_lock: map n stacks of span bytes with their guards and
 * prefaulted tops. False if the kernel refused (the caller maps one). */
static bool chunk_new(size_t span, size_t guard, size_t n)
{
	struct iovec v[CHUNK_MAX];
	char *map = map_stacks(n * span);

	if (map == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct iovec){ map + i * span, guard };
	if (pmadvise(v, n, MADV_GUARD_INSTALL) != (long)(n * guard)) {
		chunk_no_pmadvise = true; /* it may have done some: again */
		for (size_t i = 0; i < n; i++)
			if (madvise(map + i * span, guard,
				    MADV_GUARD_INSTALL) != 0) {
				sys_munmap(map, n * span);
				return false;
			}
	}
	/* Only a prefault: a page it could not give faults in later. */
	size_t top = 2 * page_size < span - guard ? 2 * page_size : 0;
	for (size_t i = 0; top && i < n; i++)
		v[i] = (struct iovec){ map + (i + 1) * span - top, top };
	if (top)
		(void)pmadvise(v, n, MADV_POPULATE_WRITE);
	chunk_next = map;
	chunk_left = n;
	return true;
}

/* A default stack with a default guard (span bytes: every chunk's stacks
 * are that size), the guard at its bottom installed; NULL where chunks
 * cannot be had. */
static char *stack_chunk_take(size_t span, size_t guard)
{
	char *map = NULL;

	if (atomic_load(&guard_mode) != 1 || guard != page_size ||
	    span > CHUNK_MAX_BYTES / CHUNK_MIN)
		return NULL;
	rlock_lock(&chunk_lock);
	if (chunk_left == 0) {
		size_t n = chunk_grow;
		if (n * span > CHUNK_MAX_BYTES)
			n = CHUNK_MAX_BYTES / span;
		chunk_left = 0;
		if (chunk_new(span, guard, n) && chunk_grow < CHUNK_MAX)
			chunk_grow *= 2;
	}
	if (chunk_left > 0) {
		map = chunk_next;
		chunk_next += span;
		chunk_left--;
	}
	rlock_unlock(&chunk_lock);
	return map;
}

void stack_fork_child(void)
{
	/* Another thread may have held it, mid-chunk: start a new one. */
	atomic_store(&chunk_lock.key, 0);
	chunk_left = 0;
}

int stack_alloc(struct g *gp, size_t stacksize, size_t guardsize)
{
	size_t guard = round_page(guardsize);
	size_t size = round_page(stacksize);
	char *map;
	void *tcb;

	if (size < tls_area_size() + MINIMAL_REST_STACK)
		return EINVAL;
	if (size + guard < size)
		return EINVAL;
	map = size == default_size ? stack_chunk_take(size + guard, guard)
				   : NULL;
	if (map == NULL) {
		map = map_stacks(size + guard);
		if (map == NULL)
			return EAGAIN;
		install_guard(map, guard);
	}
	tcb = tls_create(map + size + guard);
	if (tcb == NULL) {
		sys_munmap(map, size + guard);
		return EAGAIN;
	}
	gp->map = map;
	gp->map_size = size + guard;
	gp->guard_size = guard;
	gp->tcb = tcb;
	gp->stack_lo = map + guard;
	gp->stack_hi = tls_stack_top(tcb);
	gp->user_stack = false;
	gp->vg_stack = VALGRIND_STACK_REGISTER(gp->stack_lo, gp->stack_hi);
	handle_add(tcb, gp);
	return 0;
}

int stack_use_user(struct g *gp, void *addr, size_t size)
{
	void *tcb;

	if (size < tls_area_size() + MINIMAL_REST_STACK)
		return EINVAL;
	/* The caller's memory may hold anything: the TLS area must be zero. */
	memset((char *)addr + size - tls_area_size(), 0, tls_area_size());
	tcb = tls_create((char *)addr + size);
	if (tcb == NULL)
		return EAGAIN;
	gp->map = addr;
	gp->map_size = size;
	gp->guard_size = 0;
	gp->tcb = tcb;
	gp->stack_lo = addr;
	gp->stack_hi = tls_stack_top(tcb);
	gp->user_stack = true;
	gp->vg_stack = VALGRIND_STACK_REGISTER(gp->stack_lo, gp->stack_hi);
	handle_add(tcb, gp);
	return 0;
}

void stack_release_pages(struct g *gp)
{
	char *lo = gp->map + gp->guard_size;
	char *hi = (char *)((uintptr_t)gp->stack_hi & ~(page_size - 1));

	if (gp->map && !gp->user_stack && hi > lo)
		madvise(lo, (size_t)(hi - lo), MADV_DONTNEED);
}

void stack_free(struct g *gp)
{
	void *tcb = gp->tcb;

	/* Off allgs' view first: a dlopen copies a module's TLS image into
	 * every G's block under alllock (tls.c), and must not meet this one
	 * unmapped. */
	rlock_lock(&sched.alllock);
	gp->tcb = NULL;
	handle_del_locked(tcb);
	rlock_unlock(&sched.alllock);
	VALGRIND_STACK_DEREGISTER(gp->vg_stack);
	tls_destroy(tcb);
	if (!gp->user_stack)
		sys_munmap(gp->map, gp->map_size);
	gp->map = NULL;
	gp->map_size = 0;
	gp->stack_lo = gp->stack_hi = NULL;
}
