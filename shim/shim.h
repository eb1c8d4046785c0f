/*
 * shim.h: what every interposer needs.
 *
 * An interposer first asks shim_active(): it starts the runtime if nobody
 * has, and answers whether the caller should get goshim's behaviour. When
 * the runtime is off (GOSHIM_DISABLE, a refused start) it forwards to the
 * C library's own function through `real`. It is a runtime entry: under
 * GOSHIM_DEBUG=chaos the goroutine may move to another M there, so it is
 * asked before, never between, steps that act on the OS thread (a signal
 * mask set and recorded).
 */
#ifndef GOSHIM_SHIM_H
#define GOSHIM_SHIM_H

#include <errno.h>
#include "../core/real.h"
#include "../core/runtime.h"

#define GOSHIM_EXPORT __attribute__((visibility("default")))

bool shim_start(void);

/* One load on every interposed call once the runtime runs. Under
 * GOSHIM_DEBUG=chaos every call takes shim_start, which may yield. */
static inline bool shim_active(void)
{
	if (__builtin_expect(atomic_load_explicit(&shim_fast,
						  memory_order_acquire),
			     1))
		return true;
	return shim_start();
}

/* shim_active() without the call: true once the runtime runs (never
 * under chaos), for an interposer's leaf fast path. */
static inline bool shim_on(void)
{
	return atomic_load_explicit(&shim_fast, memory_order_acquire);
}

/* pthread_cancel.c: act on a cancel request at a cancellation point:
 * glibc's pthread_testcancel, which does not return if it acts. */
void shim_testcancel(void);

/* The goroutine behind a pthread_t, or NULL for a thread goshim did not
 * create (then glibc's own function applies). */
static inline struct g *shim_thread(pthread_t t)
{
	return shim_active() ? g_from_handle((uintptr_t)t) : NULL;
}

/*
 * Make a call that may block in the kernel. On a goroutine it runs under
 * entersyscall/exitsyscall, so sysmon can give the P to another M while it
 * blocks; errno is the call's (exitsyscall may run runtime code).
 */
#define IN_SYSCALL(call)                           \
	({                                         \
		bool in_ = on_goroutine();         \
		if (in_)                           \
			entersyscall();            \
		__typeof__(call) r_ = (call);      \
		int e_ = errno;                    \
		if (in_)                           \
			exitsyscall();             \
		errno = e_;                        \
		r_;                                \
	})

/*
 * An EINTR the program would not have had natively: no handler of its
 * ran on the calling goroutine since `before` (g_handlers_ran). A signal
 * goshim sent to one goroutine can reach its OS thread after that
 * goroutine has left it (a pthread_kill or pthread_cancel that met the
 * thread as it switched); goshim's handler hands it back
 * (sigthread_misdirected), but the kernel has already ended whatever call
 * the next goroutine waits in, whatever SA_RESTART says for calls that
 * never restart (pause, sigsuspend, the timed waits), and for all of them
 * when the handler has no SA_RESTART (glibc's SIGCANCEL). Such a call is
 * made again.
 */
static inline bool own_eintr(uint32_t before)
{
	return on_goroutine() && g_handlers_ran() == before;
}

/* IN_SYSCALL for a call in the C library's form (-1 and errno) that
 * is made again after an EINTR of goshim's (own_eintr), with the
 * caller's errno back: one with no side effect when it fails with EINTR.
 * A relative timeout starts over then. */
#define IN_SYSCALL_AGAIN(call)                                        \
	({                                                            \
		int ea_ = errno;                                      \
		uint32_t ha_ = g_handlers_ran();                      \
		__typeof__(call) ra_;                                 \
		while ((ra_ = IN_SYSCALL(call)) == -1 && errno == EINTR && \
		       own_eintr(ha_))                                \
			errno = ea_;                                  \
		ra_;                                                  \
	})

/*
 * A raw system call that is a cancellation point (glibc's would be), run
 * under entersyscall: a cancel request already due acts first, and one
 * made during the call interrupts it (gcancel sends SIGCANCEL; sysmon
 * again while the call goes on): its EINTR acts once the call is left.
 * An EINTR of goshim's (own_eintr) makes the call again. A caller with
 * something to undo first uses the two halves (cancel_syscall_enter and
 * _exit, core/runtime.h) and looks at g_cancel_due after an EINTR.
 */
#define SYS_CANCEL(call)                                           \
	({                                                         \
		uint32_t ch_ = g_handlers_ran();                   \
		long cr_;                                          \
		do {                                               \
			shim_testcancel();                         \
			struct g *cg_ = cancel_syscall_enter();    \
			cr_ = (call);                              \
			cancel_syscall_exit(cg_);                  \
			if (cr_ == -EINTR)                         \
				shim_testcancel();                 \
		} while (cr_ == -EINTR && own_eintr(ch_));         \
		cr_;                                               \
	})

/* thread_id.c: the caller's thread id (a goroutine's own, g_tid), and
 * syscall()'s thread-id calls (gettid, set_tid_address, tgkill, tkill):
 * true if it answered nr, with the C library's result in *ret. */
pid_t shim_gettid(void);
bool shim_tid_syscall(long nr, const long *a, long *ret);
/* futex.c: syscall(SYS_futex, a...) on a private futex: true if it
 * answered, with the C library's result in *ret. */
bool shim_futex_syscall(const long *a, long *ret);
/* thread_sched.c: syscall()'s scheduling calls on a goroutine's tid
 * (affinity, policy, priority, nice): true if it answered, with the C
 * library's result in *ret. */
bool shim_sched_syscall(long nr, const long *a, long *ret);
/* prctl.c: prctl(option, a[0..3]) where it names the calling goroutine:
 * true if it answered, with the kernel's -errno result in *ret. */
bool shim_prctl(int option, const unsigned long *a, long *ret);
/* pthread_name.c: a goroutine's name (at most 15 bytes, NUL-ended): 0 or
 * an errno. */
int shim_name_set(struct g *gp, const char *name);
int shim_name_get(struct g *gp, char name[16]);

/* mmap.c: syscall(SYS_munmap or SYS_mremap, a...): true if it was one,
 * with the C library's result in *ret. */
bool shim_unmap_syscall(long nr, const long *a, long *ret);
/* cpuclock.c: what a CPU clockid names: a goroutine's thread clock (in
 * *gp, counting *which: 0 user+system, 1 user, 2 all), a clock only the
 * kernel knows (a process's; a thread goshim did not make), or no clock
 * (EINVAL: a goroutine that has ended; a bad kind). */
enum { CPU_KERNEL, CPU_GOROUTINE, CPU_INVALID };
int shim_cpuclock_target(clockid_t clk, struct g **gp, int *which);

/* syscall()'s CPU clock calls (clock_gettime, clock_getres, getrusage,
 * clock_nanosleep on a thread clock): true if it answered nr, with the
 * C library's result in *ret. */
bool shim_cpuclock_syscall(long nr, const long *a, long *ret);


#endif
