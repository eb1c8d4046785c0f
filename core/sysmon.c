/*
 * sysmon.c: the system monitor, Go's sysmon: a thread of its own, outside
 * the P accounting, that watches the Ps.
 *
 * It retakes a P whose M has sat in a system call past one tick (20 us
 * when busy) while other work waits, and hands it to another M
 * (handoffp), so a slow syscall costs an OS thread, never a P. It sleeps
 * 20 us while it finds something to do, doubling up to 10 ms after 50
 * idle rounds, as Go does. Being a real thread in a known state, it also
 * starts the new Ms the scheduler asks for (newm), woken at once for it.
 */
#include <pthread.h>
#include <signal.h>
#include "debug.h"
#include "real.h"
#include "runtime.h"
#include "sys.h"

#define SYSMON_MIN_US 20
#define SYSMON_MAX_US 10000

static struct note wake;
static _Atomic bool running;

void sysmon_wake(void)
{
	note_wakeup(&wake);
}

static void *sysmon_main(void *arg)
{
	uint32_t idle = 0;
	int64_t delay_us = SYSMON_MIN_US;

	(void)arg;
	/* Signals are the program's: never deliver one here (but glibc's
	 * own, SIGCANCEL and SIGSETXID, which every thread must take). The
	 * Ms sysmon creates start with this mask until they run a G. */
	uint64_t all = ~((uint64_t)3 << 31);
	SYS4(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
	for (;;) {
		if (idle == 0)
			delay_us = SYSMON_MIN_US;
		else if (idle > 50)
			delay_us *= 2;
		if (delay_us > SYSMON_MAX_US)
			delay_us = SYSMON_MAX_US;
		/* Cleared before looking: a newm after this wakes the next
		 * sleep at once. */
		if (note_sleep_ns(&wake, delay_us * 1000))
			note_clear(&wake);
		debug_sysmon();
		newm_start_pending();

		int64_t now = nanotime();
		int retaken = 0;
		for (int32_t i = 0; i < gomaxprocs; i++)
			retaken += retake_syscall_p(allp[i], now);
		idle = retaken ? 0 : idle + 1;
	}
	return NULL;
}

void sysmon_start(void)
{
	pthread_t t;
	pthread_attr_t attr;
	bool no = false;

	if (!atomic_compare_exchange_strong(&running, &no, true))
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (real.pthread_create(&t, &attr, sysmon_main, NULL))
		runtime_throw("cannot start sysmon");
	pthread_attr_destroy(&attr);
	sched.nruntime_threads++;
}

void sysmon_ensure(void)
{
	if (!atomic_load_explicit(&running, memory_order_relaxed))
		sysmon_start();
}

/* In the child of fork the thread is gone: the next goroutine the child
 * makes starts another (made from the goroutine that forked, which is a
 * real glibc thread there). */
void sysmon_fork_child(void)
{
	note_clear(&wake);
	atomic_store(&running, false);
}
