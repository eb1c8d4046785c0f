/*
 * pthread_exit.c: leave a goroutine the way glibc leaves a thread.
 *
 * glibc's own pthread_exit unwinds the stack (cleanup handlers, C++
 * destructors) and longjmps to the buffer start_thread left in the TCB.
 * Goroutines have such a buffer in g_entry (core/g.c), so glibc's
 * function is used as is, once go_unwind_prepare has kept the value and
 * pointed the main goroutine's buffer (glibc's own, which would end the OS
 * thread under whatever M runs main) at the main goroutine's end.
 */
#include <pthread.h>
#include "shim.h"

GOSHIM_EXPORT void pthread_exit(void *retval)
{
	if (!shim_active() || !on_goroutine())
		real.pthread_exit(retval);
	go_unwind_prepare(retval);
	real.pthread_exit(retval);
}
