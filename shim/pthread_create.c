/*
 * pthread_create.c: a new thread is a new goroutine.
 *
 * The program's attr is read through glibc's own getters, so any attr the
 * program built with glibc is understood; what goshim does not act on
 * (scheduling policy, scope) is stored and reported back by
 * pthread_getattr_np.
 */
#include <errno.h>
#include <pthread.h>
#include "../core/stack.h"
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

	if (!shim_active())
		return real.pthread_create(thread, attr, start, arg);
	if (attr && (err = read_attr(attr, &sa)) != 0)
		return err;
	if (go_spawn(start, arg, &sa, (void **)thread, &err) == NULL)
		return err;
	return 0;
}
