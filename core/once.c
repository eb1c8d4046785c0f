/*
 * once.c: once-only initialisation whose waiters park.
 *
 * glibc's once waits on a futex, which would block the whole M while the
 * initialiser (maybe parked) runs on another goroutine. The state word is
 * the program's (pthread_once_t, once_flag): 0 not run (the static
 * initialiser), 1 running, 2 done; waiters park on its address. If the
 * initialiser is cancelled or calls pthread_exit, the word goes back to 0
 * and a waiter takes over, as POSIX asks. A running word also holds the
 * fork generation it started in (glibc's scheme): in the child of a fork
 * the initialiser's thread is gone, and the child runs it again.
 */
#include <dlfcn.h>
#include <limits.h>
#include "once.h"
#include "real.h"
#include "runtime.h"
#include "runtime2.h"

/*
 * once_run's cleanup makes the compiler call the unwinder's
 * __gcc_personality_v0 and _Unwind_Resume, which live in libgcc_s: linked
 * against it, every process under goshim would load it at start (a
 * tenth of a millisecond, more than the rest of goshim's start costs).
 * They are only ever called during an unwind through once_run, run by
 * libgcc_s's unwinder, which is loaded by then (glibc loads it for
 * pthread_exit and cancellation; C++ programs link it): so these two
 * hand over to it, found on first use.
 */
static void *unwinder(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);
	if (f == NULL) {
		void *h = real.dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
		f = h ? dlsym(h, name) : NULL;
	}
	if (f == NULL)
		runtime_throw("an unwind without libgcc_s's unwinder");
	return f;
}

/* <unwind.h>'s types (it gives these two default visibility). */
struct _Unwind_Exception;
struct _Unwind_Context;

int __gcc_personality_v0(int version, int actions, uint64_t cls,
			 struct _Unwind_Exception *ue,
			 struct _Unwind_Context *ctx);
int __gcc_personality_v0(int version, int actions, uint64_t cls,
			 struct _Unwind_Exception *ue,
			 struct _Unwind_Context *ctx)
{
	static int (*_Atomic fn)(int, int, uint64_t,
				 struct _Unwind_Exception *,
				 struct _Unwind_Context *);
	if (fn == NULL)
		fn = unwinder("__gcc_personality_v0");
	return fn(version, actions, cls, ue, ctx);
}

void _Unwind_Resume(struct _Unwind_Exception *ue) __attribute__((noreturn));
void _Unwind_Resume(struct _Unwind_Exception *ue)
{
	static void (*_Atomic fn)(struct _Unwind_Exception *);
	if (fn == NULL)
		fn = unwinder("_Unwind_Resume");
	fn(ue);
	__builtin_unreachable();
}

enum { ONCE_NEW = 0, ONCE_RUNNING = 1, ONCE_DONE = 2 };

static void once_abandoned(_Atomic uint32_t **state)
{
	if (*state == NULL)
		return;
	atomic_store(*state, ONCE_NEW);
	sema_wake(*state, INT_MAX);
}

void once_run(_Atomic uint32_t *state, void (*init)(void))
{
	for (;;) {
		uint32_t v = atomic_load_explicit(state, memory_order_acquire);
		if (v == ONCE_DONE)
			return;
		uint32_t running = ONCE_RUNNING |
				   atomic_load(&fork_generation) << 2;
		if (v != ONCE_NEW && v != running) {
			/* Started before a fork, by a thread that is gone. */
			atomic_compare_exchange_strong(state, &v, ONCE_NEW);
			continue;
		}
		if (v == ONCE_NEW) {
			if (!atomic_compare_exchange_strong(state, &v, running))
				continue;
			/* Runs if init unwinds out (pthread_exit, cancel). */
			_Atomic uint32_t *guard
				__attribute__((cleanup(once_abandoned))) = state;
			init();
			guard = NULL;
			atomic_store_explicit(state, ONCE_DONE,
					      memory_order_release);
			sema_wake(state, INT_MAX);
			return;
		}
		sema_wait(state, v, -1, "once");
	}
}
