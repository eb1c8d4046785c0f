/*
 * fork.c: fork, vfork, _Fork and the spawning calls from goroutines.
 *
 * glibc's fork runs the pthread_atfork handlers around the system call;
 * goshim's own (core/fork.c) must be the innermost pair, so that the
 * child's runtime is rebuilt before any handler of the program runs in it.
 * glibc runs prepare handlers in reverse order of registration and the
 * others in order, so goshim's are registered before anyone else's: at
 * load time, or from the interposed __register_atfork (what
 * pthread_atfork calls) if another library's constructor comes first. So
 * every way into glibc's fork (fork, daemon, forkpty) is covered, and the
 * program's handlers run on the calling goroutine, with its TLS, as
 * natively.
 *
 * _Fork runs no handlers: goshim's hooks are called around it here.
 * vfork is a fork made the same way (POSIX.1-2001 defines vfork as fork
 * with restrictions on the child): a child that shared the parent's
 * memory, as Linux's vfork does, would run goshim's interposers against
 * the parent's live runtime (a close() would wake the parent's waiters on
 * that fd), and a C function cannot return twice from the same frame.
 *
 * posix_spawn (and glibc's system and popen, made on it) clone a child
 * that shares memory until it execs, on a stack of its own, running only
 * glibc's internal functions: the goroutine's stack and TCB are fine for
 * it. The caller's thread waits meanwhile, and system and pclose then
 * wait for the child to end, so these run as blocking system calls.
 */
#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../core/print.h"
#include "shim.h"

extern void *__dso_handle;
int __register_atfork(void (*prepare)(void), void (*parent)(void),
		      void (*child)(void), void *dso_handle);

static _Atomic int own_state; /* 0 not yet, 1 registering, 2 done */

static int (*register_atfork_fn(void))(void (*)(void), void (*)(void),
				       void (*)(void), void *)
{
	static int (*fn)(void (*)(void), void (*)(void), void (*)(void),
			 void *);
	if (fn == NULL)
		fn = (int (*)(void (*)(void), void (*)(void), void (*)(void),
			      void *))dlsym(RTLD_NEXT, "__register_atfork");
	return fn;
}

static void register_own(void)
{
	int st = 0;

	if (atomic_load_explicit(&own_state, memory_order_acquire) == 2)
		return;
	if (!atomic_compare_exchange_strong(&own_state, &st, 1)) {
		while (atomic_load_explicit(&own_state,
					    memory_order_acquire) != 2)
			cpu_relax();
		return;
	}
	if (register_atfork_fn()(fork_prepare, fork_parent, fork_child,
				 __dso_handle) != 0) {
		print("goshim: cannot register the fork handlers\n");
		abort();
	}
	atomic_store_explicit(&own_state, 2, memory_order_release);
}

__attribute__((constructor)) static void fork_ctor(void)
{
	register_own();
}

GOSHIM_EXPORT int __register_atfork(void (*prepare)(void),
				    void (*parent)(void), void (*child)(void),
				    void *dso_handle)
{
	register_own();
	return register_atfork_fn()(prepare, parent, child, dso_handle);
}

GOSHIM_EXPORT pid_t _Fork(void)
{
	pid_t (*fn)(void) = (pid_t(*)(void))REAL_NEXT_GET(_Fork);
	pid_t pid;
	int e;

	/* Before glibc 2.34 only vfork gets here, and glibc's fork is the
	 * nearest call there is; goshim stays native with such a glibc, so
	 * its hooks (run twice then) do nothing. */
	if (fn == NULL)
		fn = (pid_t(*)(void))REAL_NEXT_GET(fork);
	fork_prepare();
	pid = fn();
	e = errno;
	if (pid == 0)
		fork_child();
	else
		fork_parent();
	errno = e;
	return pid;
}

GOSHIM_EXPORT pid_t vfork(void)
{
	return _Fork();
}

GOSHIM_EXPORT pid_t __vfork(void)
{
	return _Fork();
}

/* A spawned child starts from the calling thread's mask: for the call it
 * is the goroutine's (spawn_mask_begin; pclose, which only waits, alike). */
#define SPAWNING(ret, name, params, args)                            \
	GOSHIM_EXPORT ret name params                                \
	{                                                            \
		ret(*fn) params = (ret(*) params)REAL_NEXT_GET(name); \
		if (!shim_active() || !on_goroutine())               \
			return fn args;                              \
		entersyscall();                                      \
		uint64_t extra_ = spawn_mask_begin();                \
		ret r_ = fn args;                                    \
		int e_ = errno;                                      \
		spawn_mask_end(extra_);                              \
		exitsyscall();                                       \
		errno = e_;                                          \
		return r_;                                           \
	}

SPAWNING(int, posix_spawn,
	 (pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
	  const posix_spawnattr_t *attr, char *const argv[],
	  char *const envp[]),
	 (pid, path, fa, attr, argv, envp))
SPAWNING(int, posix_spawnp,
	 (pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
	  const posix_spawnattr_t *attr, char *const argv[],
	  char *const envp[]),
	 (pid, file, fa, attr, argv, envp))
SPAWNING(int, system, (const char *cmd), (cmd))
SPAWNING(FILE *, popen, (const char *cmd, const char *mode), (cmd, mode))
SPAWNING(int, pclose, (FILE *f), (f))
