/*
 * pthread_exit.c: leave a goroutine the way glibc leaves a thread.
 *
 * glibc's own pthread_exit unwinds the stack (cleanup handlers, C++
 * destructors) and longjmps to the buffer start_thread left in the TCB.
 * Goroutines have such a buffer in g_entry (core/g.c), so glibc's
 * function is used as is. The main goroutine's buffer is glibc's, in
 * __libc_start_call_main, which would end the OS thread under whatever M
 * runs main at that moment: its resume address is pointed at
 * main_goroutine_exit instead, keeping the same stack pointer, so the
 * unwinding stops at the same frame and the main goroutine ends as a
 * goroutine.
 */
#include <pthread.h>
#include "../core/tls.h"
#include "shim.h"

static void main_landing(void)
{
	main_goroutine_exit();
}

GOSHIM_EXPORT void pthread_exit(void *retval)
{
	struct g *gp;

	if (!shim_active() || !on_goroutine())
		real.pthread_exit(retval);
	gp = getg();
	gp->retval = retval;
	if (gp->is_main) {
		__pthread_unwind_buf_t *b = tls_bottom_unwind_buf(gp->tcb);
		if (b == NULL)
			main_goroutine_exit(); /* nothing to unwind to */
		arch_jmpbuf_set_pc(b->__cancel_jmp_buf[0].__cancel_jmp_buf,
				   main_landing, tls_pointer_guard(gp->tcb));
	}
	real.pthread_exit(retval);
}
