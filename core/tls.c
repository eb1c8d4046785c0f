/*
 * tls.c: each goroutine is a complete glibc thread to the code it runs.
 *
 * __thread variables, errno, C++ thread_local, stdio lock ownership, the
 * malloc tcache and the resolver state all hang off the thread pointer. A
 * goroutine that shares or changes OS threads must keep its own, so every G
 * gets a TLS block + TCB built by ld.so's _dl_allocate_tls at the top of its
 * stack mapping (nptl's own layout), and arch_switch installs it.
 *
 * The TCB is glibc's struct pthread. Its first 0x50 bytes are ABI; the rest
 * (tid, robust list, stack bounds, specific block, rseq) are glibc-internal,
 * so tls_init verifies every offset used here against the main thread and a
 * short-lived real thread and refuses to run when one does not match. The
 * recipe, its reasons and measurements: core/README.md, "A complete glibc
 * thread identity per goroutine" (glibc 2.36, x86_64).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <locale.h>
#include <netdb.h>
/* The struct only: <resolv.h> defines macros (p_type) that clash with
 * <link.h>. */
#include <bits/types/res_state.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "real.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "tls.h"

#if defined(__x86_64__)
/* struct pthread, glibc 2.36 x86_64 */
#define TCB_SIZE 0x940
#define OFF_TCB 0x00
#define OFF_DTV 0x08
#define OFF_SELF 0x10
#define OFF_MULTIPLE_THREADS 0x18
#define OFF_GSCOPE 0x1c
#define OFF_GUARDS 0x28	   /* stack_guard, pointer_guard */
#define OFF_POINTER_GUARD 0x30
#define OFF_FEATURE_1 0x48
#define OFF_LIST 0x2c0	   /* glibc's thread list node: next, prev */
#define OFF_TID 0x2d0
#define OFF_ROBUST_PREV 0x2d8
#define OFF_ROBUST_HEAD 0x2e0 /* list, futex_offset, list_op_pending */
#define OFF_CLEANUP_JMP_BUF 0x300
#define OFF_CANCELHANDLING 0x308
#define OFF_SPECIFIC_1STBLOCK 0x310
#define OFF_SPECIFIC0 0x510
#define OFF_SPECIFIC_END 0x610 /* end of specific[32] */
#define OFF_USER_STACK 0x612
#define OFF_JOINID 0x620
#define OFF_STACKBLOCK 0x690
#define OFF_STACKBLOCK_SIZE 0x698
#define OFF_GUARDSIZE 0x6a0
#define OFF_REPORTED_GUARDSIZE 0x6a8
#define OFF_RES 0x6b8
#define RES_OPTIONS 8 /* offsetof(struct __res_state, options) */
#define RES_INIT 0x1	/* <resolv.h>: options bit of an initialised state */
#define OFF_RSEQ 0x920
#define ROBUST_FUTEX_OFFSET (-32L)
#define HAVE_TCB_LAYOUT 1
#else
#define HAVE_TCB_LAYOUT 0
#define TCB_SIZE 0
#endif

#define AT(tcb, off, type) (*(type *)((char *)(tcb) + (off)))

#if HAVE_TCB_LAYOUT
_Static_assert(offsetof(struct __res_state, options) == RES_OPTIONS,
	       "resolver state layout");
_Static_assert(OFF_RES + sizeof(struct __res_state) <= OFF_RSEQ,
	       "resolver state inside struct pthread");
#endif

typedef struct {
	unsigned long ti_module;
	unsigned long ti_offset;
} tls_index;

/* ld.so's dtv_t: dtv[-1].counter is the slot count, dtv[0] the generation,
 * dtv[1..] one per module. */
typedef union {
	size_t counter;
	struct {
		void *val;
		void *to_free;
	} pointer;
} dtv_t;
#define TLS_DTV_UNALLOCATED ((void *)-1L)

static void *(*dl_allocate_tls)(void *);
static void (*dl_deallocate_tls)(void *, bool);
static void (*dl_get_tls_static_info)(size_t *, size_t *);
static void (*ctype_init)(void);
static void (*call_tls_dtors)(void);
static void *(*tls_get_addr)(tls_index *);

static size_t static_size, static_align;
/* TLS slots, as offsets from the thread pointer (static TLS). */
static ptrdiff_t off_g_current, off_resp, off_errno, off_h_errno, off_dlerror;
static ptrdiff_t libc_block_off;
static size_t libc_block_size;
static bool have_rseq;

/* A static-TLS module's block: where it sits below the thread pointer and
 * goshim's own copy of its initial image (ld.so's may be unmapped by a
 * dlclose while a goroutine's TCB is being reset from it). */
struct tls_image {
	ptrdiff_t off;
	size_t filesz, memsz;
	unsigned char init[];
};

/* Static-TLS modules whose image every goroutine TCB already holds. */
#define MAX_TRACKED_MODULES 256
static struct {
	const void *image; /* ld.so's, to know the module again */
	struct tls_image *block;
	bool copy_due; /* not yet copied into the goroutines' TCBs */
} static_modules[MAX_TRACKED_MODULES];
static struct rlock dlopen_lock;

/* What tls_reset copies into a reused TCB: every static-TLS module but
 * libc's. Each goroutine start reads it, so it takes no lock (ld.so's own
 * re-initialisation takes its TLS lock, a line every creating CPU writes):
 * dlopen and dlclose publish a new, immutable set, and a reset that raced
 * with one is redone from the new set. A replaced set and the images of
 * unloaded modules are never freed, as a reset may still be reading them:
 * a few hundred bytes per dlopen or dlclose that changes static TLS. */
struct tls_images {
	uint32_t n;
	const struct tls_image *im[];
};
static const struct tls_images no_images;
static const struct tls_images *_Atomic reset_images = &no_images;

static _Atomic uint64_t fake_tid_next;
static void *(*volatile libc_memset)(void *, int, size_t) = memset;

ptrdiff_t tls_g_offset(void)
{
	return off_g_current;
}

void *tls_robust_head(void *tcb)
{
	return (char *)tcb + OFF_ROBUST_HEAD;
}

uint64_t tls_fake_tids(uint32_t n)
{
	return atomic_fetch_add_explicit(&fake_tid_next, n,
					 memory_order_relaxed);
}

pid_t tls_fake_tid(uint64_t n, bool *again)
{
	/* Above PID_MAX_LIMIT (2^22): never a real tid, never 0. Below
	 * 2^29: a CPU clockid holds ~tid << 3 in 32 bits (glibc's
	 * pthread_getcpuclockid makes one from the TCB's tid), and a larger
	 * one would come back from it as another number, maybe a real
	 * thread's. */
	const uint64_t span = (1u << 29) - (1u << 22);
	*again = n >= span;
	return (pid_t)((1u << 22) + n % span);
}

struct libc_find {
	const void *errno_addr;
	ptrdiff_t off;
	size_t size;
	bool found;
};

static int find_libc_block(struct dl_phdr_info *info, size_t sz, void *arg)
{
	struct libc_find *f = arg;
	(void)sz;
	if (info->dlpi_tls_modid == 0 || info->dlpi_tls_data == NULL)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *lo = info->dlpi_tls_data;
		if (ph->p_type != PT_TLS)
			continue;
		if ((const char *)f->errno_addr >= lo &&
		    (const char *)f->errno_addr < lo + ph->p_memsz) {
			f->off = lo - (const char *)arch_get_tp();
			f->size = ph->p_memsz;
			f->found = true;
			return 1;
		}
	}
	return 0;
}

struct probe {
	const char *why;
	pid_t tid;
};

/* glibc's cancel state and type show as their bits in cancelhandling. */
static bool cancel_bits_seen(char *tp)
{
	int old, st, ty;
	bool ok = AT(tp, OFF_CANCELHANDLING, int) == 0;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	st = AT(tp, OFF_CANCELHANDLING, int);
	pthread_setcancelstate(old, &old);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	ty = AT(tp, OFF_CANCELHANDLING, int);
	pthread_setcanceltype(old, &old);
	return ok && st == TLS_CANCELSTATE_DISABLE && ty == TLS_CANCELTYPE_ASYNC &&
	       AT(tp, OFF_CANCELHANDLING, int) == 0;
}

/* Runs on a real glibc thread: the fields start_thread fills in. */
static void *probe_thread(void *arg)
{
	struct probe *pr = arg;
	char *tp = arch_get_tp();
	char local;
	char *block = AT(tp, OFF_STACKBLOCK, char *);
	size_t bsize = AT(tp, OFF_STACKBLOCK_SIZE, size_t);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (AT(tp, OFF_TID, pid_t) != sys_gettid())
		pr->why = "tid offset";
	else if (AT(tp, off_resp, char *) != tp + OFF_RES)
		pr->why = "resolver state offset";
	else if (!(block && &local > block && &local < block + bsize))
		pr->why = "stack block offsets";
	else if ((char *)(((uintptr_t)block + bsize - TCB_SIZE) &
			  ~(uintptr_t)(static_align - 1)) != tp)
		pr->why = "struct pthread size";
	else if (AT(tp, OFF_GUARDSIZE, size_t) != page ||
		 AT(tp, OFF_REPORTED_GUARDSIZE, size_t) != page)
		pr->why = "guard size offsets";
	else if (AT(tp, OFF_USER_STACK, unsigned char) != 0 ||
		 AT(tp, OFF_JOINID, void *) != NULL)
		pr->why = "user_stack/joinid offsets";
	else if (!(AT(tp, OFF_CLEANUP_JMP_BUF, char *) > block &&
		   AT(tp, OFF_CLEANUP_JMP_BUF, char *) < block + bsize))
		pr->why = "cleanup_jmp_buf offset";
	else if (AT(tp, OFF_SPECIFIC0, char *) != tp + OFF_SPECIFIC_1STBLOCK)
		pr->why = "specific block offset";
	else if (!cancel_bits_seen(tp))
		pr->why = "cancelhandling offset";
	return NULL;
}

static const char *verify_main_thread(void)
{
	char *tp = arch_get_tp();
	void *head = NULL;
	size_t len = 0;

	if (AT(tp, OFF_TCB, char *) != tp || AT(tp, OFF_SELF, char *) != tp)
		return "tcb/self pointers";
	if (AT(tp, OFF_TID, pid_t) != sys_gettid())
		return "tid offset";
	char **list = (char **)(tp + OFF_LIST);
	if (list[0] == NULL || list[1] == NULL ||
	    ((char **)list[0])[1] != (char *)list ||
	    ((char **)list[1])[0] != (char *)list)
		return "thread list offset";
	if (SYS3(SYS_get_robust_list, 0, &head, &len) == 0 &&
	    head != tp + OFF_ROBUST_HEAD)
		return "robust list offset";
	if (AT(tp, OFF_ROBUST_HEAD + 8, long) != ROBUST_FUTEX_OFFSET)
		return "robust futex offset";
	if (AT(tp, OFF_SPECIFIC0, char *) != tp + OFF_SPECIFIC_1STBLOCK)
		return "specific block offset";
	if (have_rseq && __rseq_offset != OFF_RSEQ)
		return "rseq area offset";
	return NULL;
}

bool tls_init(const char **why)
{
	char *tp = arch_get_tp();
	struct libc_find lf = { .errno_addr = &errno };
	void *resp;

	*why = NULL;
	if (!HAVE_TCB_LAYOUT) {
		*why = "no known glibc TCB layout for this CPU";
		return false;
	}
	dl_allocate_tls = dlvsym(RTLD_DEFAULT, "_dl_allocate_tls",
				 "GLIBC_PRIVATE");
	dl_deallocate_tls = dlvsym(RTLD_DEFAULT, "_dl_deallocate_tls",
				   "GLIBC_PRIVATE");
	dl_get_tls_static_info = dlvsym(RTLD_DEFAULT,
					"_dl_get_tls_static_info",
					"GLIBC_PRIVATE");
	ctype_init = dlvsym(RTLD_DEFAULT, "__ctype_init", "GLIBC_PRIVATE");
	call_tls_dtors = dlvsym(RTLD_DEFAULT, "__call_tls_dtors",
				"GLIBC_PRIVATE");
	tls_get_addr = dlsym(RTLD_DEFAULT, "__tls_get_addr");
	resp = dlvsym(RTLD_DEFAULT, "__resp", "GLIBC_PRIVATE");
	if (!dl_allocate_tls || !dl_deallocate_tls ||
	    !dl_get_tls_static_info ||
	    !ctype_init || !call_tls_dtors || !tls_get_addr || !resp) {
		*why = "ld.so/libc private TLS entry points missing";
		return false;
	}
	dl_get_tls_static_info(&static_size, &static_align);
	if (static_align < 64)
		static_align = 64;
	off_resp = (char *)resp - tp;
	off_g_current = (char *)&g_current - tp;
	off_errno = (char *)&errno - tp;
	off_h_errno = (char *)&h_errno - tp;
	void *dlerr = dlvsym(RTLD_DEFAULT, "__libc_dlerror_result",
			     "GLIBC_PRIVATE");
	off_dlerror = dlerr ? (char *)dlerr - tp : 0;
	have_rseq = __rseq_size > 0;
	dl_iterate_phdr(find_libc_block, &lf);
	if (!lf.found) {
		*why = "libc's TLS block not found";
		return false;
	}
	libc_block_off = lf.off;
	libc_block_size = lf.size;
	if ((*why = verify_main_thread()) != NULL)
		return false;
	tls_after_dlopen(); /* record the modules every TCB starts with */
	return true;
}

/* The fields only a thread glibc starts has, read on one: a thread of its
 * own for an instant, so only once the program makes its second. */
bool tls_probe(const char **why)
{
	struct probe pr = { 0 };
	pthread_t t;
	if (real.pthread_create(&t, NULL, probe_thread, &pr) != 0) {
		*why = "could not start the layout probe thread";
		return false;
	}
	real.pthread_join(t, NULL);
	*why = pr.why;
	return pr.why == NULL;
}

size_t tls_area_size(void)
{
	return static_size + static_align;
}

void *tls_create(char *top)
{
	char *tcb = (char *)(((uintptr_t)top - TCB_SIZE) &
			     ~(uintptr_t)(static_align - 1));
	return dl_allocate_tls(tcb);
}

char *tls_stack_top(void *tcb)
{
	return (char *)(((uintptr_t)tcb + TCB_SIZE - static_size) &
			~(uintptr_t)15);
}

void tls_prepare(struct g *gp, pid_t tid)
{
	char *tcb = gp->tcb;
	char *cur = arch_get_tp();

	AT(tcb, OFF_TCB, void *) = tcb;
	AT(tcb, OFF_SELF, void *) = tcb;
	AT(tcb, OFF_MULTIPLE_THREADS, int) = 1;
	AT(tcb, OFF_GSCOPE, int) = 0;
	/* stack_guard and pointer_guard are process-wide values. */
	memcpy(tcb + OFF_GUARDS, cur + OFF_GUARDS, 16);
	memcpy(tcb + OFF_FEATURE_1, cur + OFF_FEATURE_1, 4);
	AT(tcb, OFF_TID, pid_t) = tid;
	AT(tcb, OFF_ROBUST_PREV, void *) = tcb + OFF_ROBUST_HEAD;
	AT(tcb, OFF_ROBUST_HEAD, void *) = tcb + OFF_ROBUST_HEAD;
	AT(tcb, OFF_ROBUST_HEAD + 8, long) = ROBUST_FUTEX_OFFSET;
	AT(tcb, OFF_ROBUST_HEAD + 16, void *) = NULL;
	AT(tcb, OFF_SPECIFIC0, void *) = tcb + OFF_SPECIFIC_1STBLOCK;
	/* glibc must never free or join this identity itself. */
	AT(tcb, OFF_USER_STACK, unsigned char) = 1;
	AT(tcb, OFF_JOINID, void *) = tcb;
	AT(tcb, OFF_STACKBLOCK, void *) = gp->map;
	AT(tcb, OFF_STACKBLOCK_SIZE, size_t) = gp->map_size;
	AT(tcb, OFF_GUARDSIZE, size_t) = gp->guard_size;
	AT(tcb, OFF_REPORTED_GUARDSIZE, size_t) = gp->guard_size;
	if (have_rseq) {
		/* Not registered with the kernel: sched_getcpu asks it. */
		AT(tcb, OFF_RSEQ, int32_t) = 0;
		AT(tcb, OFF_RSEQ + 4, int32_t) = RSEQ_CPU_ID_REGISTRATION_FAILED;
	}
	AT(tcb, off_resp, void *) = tcb + OFF_RES;
	AT(tcb, off_g_current, struct g *) = gp;
}

static void images_copy(char *t, const struct tls_images *set)
{
	for (uint32_t i = 0; i < set->n; i++) {
		const struct tls_image *im = set->im[i];
		memcpy(t + im->off, im->init, im->filesz);
		libc_memset(t + im->off + im->filesz, 0,
			    im->memsz - im->filesz);
	}
}

void tls_reset(void *tcb)
{
	char *t = tcb;

	/* As nptl does for a cached stack: free the dynamic TLS blocks,
	 * re-initialise the static ones, clear struct pthread. The DTV is
	 * kept with its generation: its static entries still point into this
	 * TCB, a freed entry becomes "not allocated", and __tls_get_addr
	 * brings an old generation up to date, as for a long-lived thread. */
	dtv_t *dtv = AT(t, OFF_DTV, dtv_t *);
	for (size_t i = 1; i <= dtv[-1].counter; i++)
		if (dtv[i].pointer.to_free) {
			free(dtv[i].pointer.to_free);
			dtv[i].pointer.val = TLS_DTV_UNALLOCATED;
			dtv[i].pointer.to_free = NULL;
		}
	/* A stale image copied after a dlopen copied the new one here is
	 * seen: dlopen publishes its set before copying (images_publish), and
	 * the fence orders this reset's stores before the second look. It
	 * comes before the big clears below, which it would wait for. */
	const struct tls_images *set =
		atomic_load_explicit(&reset_images, memory_order_acquire);
	for (;;) {
		images_copy(t, set);
		atomic_thread_fence(memory_order_seq_cst);
		const struct tls_images *now = atomic_load_explicit(
			&reset_images, memory_order_acquire);
		if (now == set)
			break;
		set = now;
	}
	AT(t, off_errno, int) = 0;
	AT(t, off_h_errno, int) = 0;
	if (off_dlerror)
		AT(t, off_dlerror, void *) = NULL;
	memset(t, 0, OFF_DTV);
	/* libc's memset, not an inlined `rep stos`: 3x faster at this size.
	 * Skipped: glibc's own key blocks (goroutines use goshim's keys, so
	 * they stay zero) and the resolver state unless it was initialised
	 * (a fresh thread's is all zero). */
	libc_memset(t + OFF_DTV + sizeof(void *), 0,
		    OFF_SPECIFIC_1STBLOCK - OFF_DTV - sizeof(void *));
	libc_memset(t + OFF_SPECIFIC_END, 0, OFF_RES - OFF_SPECIFIC_END);
	if (AT(t, OFF_RES + RES_OPTIONS, unsigned long) & RES_INIT)
		libc_memset(t + OFF_RES, 0, sizeof(struct __res_state));
	libc_memset(t + OFF_RES + sizeof(struct __res_state), 0,
		    TCB_SIZE - OFF_RES - sizeof(struct __res_state));
}

void tls_destroy(void *tcb)
{
	dl_deallocate_tls(tcb, false);
}

void tls_enter(struct g *gp)
{
	if (gp->tls_used)
		uselocale(LC_GLOBAL_LOCALE); /* a reused block may hold another */
	ctype_init();
}

void tls_exit(void)
{
	call_tls_dtors();
}

void tls_set_unwind_buf(void *tcb, void *buf)
{
	AT(tcb, OFF_CLEANUP_JMP_BUF, void *) = buf;
}

void *tls_bottom_unwind_buf(void *tcb)
{
	/* __pthread_unwind_buf_t: the chain link is __pad[0]. */
	__pthread_unwind_buf_t *b = AT(tcb, OFF_CLEANUP_JMP_BUF, void *);
	while (b && b->__pad[0])
		b = b->__pad[0];
	return b;
}

void tls_fork_prepare(void *tcb)
{
	char **list = (char **)((char *)tcb + OFF_LIST);
	list[0] = list[1] = (char *)list;
}

void tls_fork_child(void *m_tcb, void *g_tcb)
{
	atomic_store(&dlopen_lock.key, 0);
	/* glibc's child marked the stacks of the parent's threads free for
	 * reuse (tid 0), the M's own among them: it is still in use. */
	if (m_tcb)
		AT(m_tcb, OFF_TID, pid_t) = sys_gettid();
	/* ...and linked the goroutine's TCB into its list of threads. Out
	 * again, as every goroutine's: ld.so walks that list (dlopen of a
	 * static-TLS module, setxid), and the TCB is reused once the
	 * goroutine exits. */
	if (g_tcb) {
		char **node = (char **)((char *)g_tcb + OFF_LIST);
		((char **)node[0])[1] = node[1];
		((char **)node[1])[0] = node[0];
		node[0] = node[1] = (char *)node;
	}
}

unsigned long tls_pointer_guard(void *tcb)
{
	return AT(tcb, OFF_POINTER_GUARD, unsigned long);
}

const ptrdiff_t tls_off_tid = OFF_TID;
const ptrdiff_t tls_off_cancelhandling = OFF_CANCELHANDLING;

/* Under dlopen_lock: the set tls_reset copies from, made anew. */
static void images_publish(void)
{
	uint32_t n = 0;
	for (size_t m = 0; m < MAX_TRACKED_MODULES; m++)
		n += static_modules[m].block != NULL;
	struct tls_images *set = malloc(sizeof *set + n * sizeof set->im[0]);
	if (set == NULL)
		runtime_throw("tls: out of memory for the static TLS images");
	set->n = 0;
	for (size_t m = 0; m < MAX_TRACKED_MODULES; m++)
		if (static_modules[m].block &&
		    static_modules[m].block->off != libc_block_off)
			set->im[set->n++] = static_modules[m].block;
	atomic_store_explicit(&reset_images, set, memory_order_seq_cst);
}

static void copy_module_image(const struct tls_image *im)
{
	rlock_lock(&sched.alllock);
	for (struct g *gp = sched.allgs; gp; gp = gp->alllink) {
		char *tcb = gp->tcb; /* stack_free clears it under alllock */
		if (gp->is_main || (gp->is_g0 && gp->map == NULL))
			continue; /* real glibc threads: ld.so did them */
		if (tcb == NULL)
			continue; /* a G on a free list, its stack given back */
		char *block = tcb + im->off;
		memcpy(block, im->init, im->filesz);
		memset(block + im->filesz, 0, im->memsz - im->filesz);
	}
	rlock_unlock(&sched.alllock);
}

static int scan_module(struct dl_phdr_info *info, size_t sz, void *arg)
{
	char *tp = arg;
	(void)sz;
	if (info->dlpi_tls_modid == 0 ||
	    info->dlpi_tls_modid >= MAX_TRACKED_MODULES)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_TLS)
			continue;
		tls_index ti = { info->dlpi_tls_modid, 0 };
		char *block = tls_get_addr(&ti);
		ptrdiff_t off = block - tp;
		const void *image = (const char *)info->dlpi_addr + ph->p_vaddr;
		/* In static TLS iff the block sits below the thread pointer. */
		if (off >= 0 || (size_t)-off > static_size)
			break;
		size_t m = info->dlpi_tls_modid;
		if (static_modules[m].image == image &&
		    static_modules[m].block->off == off)
			break;
		struct tls_image *im = malloc(sizeof *im + ph->p_filesz);
		if (im == NULL)
			runtime_throw("tls: out of memory for a static TLS image");
		im->off = off;
		im->filesz = ph->p_filesz;
		im->memsz = ph->p_memsz;
		memcpy(im->init, image, ph->p_filesz);
		static_modules[m].image = image;
		static_modules[m].block = im;
		static_modules[m].copy_due = true;
		break;
	}
	return 0;
}

static int mark_present(struct dl_phdr_info *info, size_t sz, void *arg)
{
	bool *present = arg;
	(void)sz;
	if (info->dlpi_tls_modid && info->dlpi_tls_modid < MAX_TRACKED_MODULES)
		present[info->dlpi_tls_modid] = true;
	return 0;
}

void tls_after_dlclose(void)
{
	bool present[MAX_TRACKED_MODULES] = { false };
	bool changed = false;

	rlock_lock(&dlopen_lock);
	dl_iterate_phdr(mark_present, present);
	/* A module loaded again gets the same id, address and offset: it
	 * must not look already initialised. */
	for (size_t m = 0; m < MAX_TRACKED_MODULES; m++)
		if (!present[m] && static_modules[m].image) {
			static_modules[m].image = NULL;
			static_modules[m].block = NULL;
			changed = true;
		}
	if (changed)
		images_publish();
	rlock_unlock(&dlopen_lock);
}

void tls_after_dlopen(void)
{
	bool changed = false;

	rlock_lock(&dlopen_lock);
	dl_iterate_phdr(scan_module, arch_get_tp());
	for (size_t m = 0; m < MAX_TRACKED_MODULES; m++)
		changed |= static_modules[m].copy_due;
	/* Published first: a reset that copies from the old set after this
	 * copies the new image into a TCB sees the new set and is redone. */
	if (changed)
		images_publish();
	for (size_t m = 0; m < MAX_TRACKED_MODULES; m++)
		if (static_modules[m].copy_due) {
			copy_module_image(static_modules[m].block);
			static_modules[m].copy_due = false;
		}
	rlock_unlock(&dlopen_lock);
}
