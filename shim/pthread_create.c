/*
 * pthread_create.c: a new thread is a new goroutine.
 *
 * The program's attr is read through glibc's own getters, so any attr the
 * program built with glibc is understood. The new thread's CPU affinity,
 * policy, priority and nice come from its creator, or from the attr
 * (explicit scheduling, an affinity set in it); when they are not the
 * process's, the goroutine runs wired to an M of its own (core/wire.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "../core/stack.h"
#include "../core/wire.h"
#include "shim.h"

/* What glibc's getstacksize reports for an attr whose size was never set:
 * such an attr means "the default", which may be goshim's own. */
static size_t glibc_default_stacksize(void)
{
	static size_t size;
	if (size == 0) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_getstacksize(&a, &size);
		pthread_attr_destroy(&a);
	}
	return size;
}

static int read_attr(const pthread_attr_t *attr, struct spawn_attr *sa)
{
	int detach, policy, inherit, scope;
	struct sched_param param;
	size_t size, guard;
	void *addr;

	if (pthread_attr_getdetachstate(attr, &detach) ||
	    pthread_attr_getguardsize(attr, &guard) ||
	    pthread_attr_getschedpolicy(attr, &policy) ||
	    pthread_attr_getschedparam(attr, &param) ||
	    pthread_attr_getinheritsched(attr, &inherit) ||
	    pthread_attr_getscope(attr, &scope))
		return EINVAL;
	/* glibc reports stackaddr - stacksize: their sum is 0 unless the
	 * program supplied a stack (stackaddr is its top). */
	if (pthread_attr_getstack(attr, &addr, &size))
		return EINVAL;
	bool user_stack = (uintptr_t)addr + size != 0;
	if (!user_stack && pthread_attr_getstacksize(attr, &size))
		return EINVAL;
	sa->detached = detach == PTHREAD_CREATE_DETACHED;
	sa->guardsize = guard;
	sa->sched_policy = policy;
	sa->sched_priority = param.sched_priority;
	sa->inheritsched = inherit;
	sa->scope = scope;
	if (user_stack) {
		sa->stackaddr = addr;
		sa->stacksize = size;
	} else if (size != glibc_default_stacksize()) {
		sa->stacksize = size;
	}
	return 0;
}

/* The attr's CPU set, in a buffer of *len bytes (at least the kernel's
 * mask size): glibc refuses to hand out a set that has bits beyond the
 * size asked for, so ask for more until it fits. NULL if out of memory. */
static cpu_set_t *attr_mask(const pthread_attr_t *attr, size_t *len)
{
	cpu_set_t *mask = NULL;

	for (*len = wire_mask_bytes();; *len *= 2) {
		free(mask);
		if ((mask = calloc(1, *len)) == NULL)
			return NULL;
		if (pthread_attr_getaffinity_np(attr, *len, mask) != EINVAL ||
		    *len >= (1u << 20))
			return mask;
	}
}

/* The thread values the new goroutine starts with (NULL: the process's). */
static int thread_values(const pthread_attr_t *attr, struct spawn_attr *sa)
{
	int err = 0;

	sa->attrs = on_goroutine() ? wire_inherit(getg()) : NULL;
	if (attr && sa->inheritsched == PTHREAD_EXPLICIT_SCHED)
		err = wire_explicit_sched(&sa->attrs, sa->sched_policy,
					  sa->sched_priority);
	if (err == 0 && attr) {
		size_t len;
		cpu_set_t *mask = attr_mask(attr, &len);
		if (mask == NULL)
			err = EAGAIN;
		/* glibc reports all CPUs for an attr without affinity. The
		 * kernel reads a set only as far as its own mask goes: CPUs
		 * beyond do not exist, and a set of only those is EINVAL. */
		else if ((size_t)CPU_COUNT_S(len, mask) != len * 8)
			err = wire_explicit_mask(&sa->attrs, len, mask);
		free(mask);
	}
	if (err) {
		free(sa->attrs);
		sa->attrs = NULL;
	}
	return err;
}

GOSHIM_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				 void *(*start)(void *), void *arg)
{
	struct spawn_attr sa = {
		.guardsize = stack_page_size(),
		.sched_policy = SCHED_OTHER,
		.inheritsched = PTHREAD_INHERIT_SCHED,
		.scope = PTHREAD_SCOPE_SYSTEM,
	};
	int err;

	/* The program's second thread starts the scheduler. */
	if (!shim_active() || !runtime_start())
		return real.pthread_create(thread, attr, start, arg);
	if (attr && (err = read_attr(attr, &sa)) != 0)
		return err;
	if ((err = thread_values(attr, &sa)) != 0)
		return err;
	if (newproc(start, arg, &sa, (void **)thread, &err) == NULL) {
		free(sa.attrs);
		return err;
	}
	return 0;
}
