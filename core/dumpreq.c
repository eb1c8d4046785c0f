/*
 * dumpreq.c: `goshim dump PID`, jstack's idea: another process of the
 * same user asks a running program for its goroutine dump and gets it on
 * a pipe of its own, whatever the program does with SIGQUIT (blocks it in
 * every thread, handles it, ignores it) and wherever its stderr goes.
 *
 * The request (scripts/goshim's dump_request): the tool makes a pipe,
 * finds sysmon's thread by its name (SYSMON_NAME, in
 * /proc/PID/task/TID/comm) and sends that thread SIGURG with
 * rt_tgsigqueueinfo: si_code SI_QUEUE, its own pid in si_pid, and in
 * si_value DUMPREQ_MAGIC (16 bits), the fd number of the pipe's write
 * end (16 bits) and when it asked (CLOCK_MONOTONIC in ms, the low 32
 * bits). A request older than STALE_MS is dropped: one that waited while
 * the program was stopped names a pipe, perhaps a pid, that is no longer
 * the tool's.
 *
 * No handler sees it. sysmon blocks every signal, and unblocking one
 * there would make sysmon a thread the kernel may hand the program's own
 * process-directed signals of that number to. The request stays pending
 * on sysmon's thread; sysmon looks every LOOK_NS (rt_sigpending, one
 * system call), and takes it with sigtimedwait only once
 * /proc/self/task/TID/status shows SIGURG pending on this thread itself:
 * a SIGURG of the program's, pending on the process while every thread
 * blocks it, is the program's to take. SIGURG because its default action
 * is to be ignored: a request that met the wrong thread would do no harm.
 *
 * The answer: sysmon opens /proc/PID/fd/N (the tool's pipe: a new open
 * of it, non-blocking, close-on-exec, hidden from the program like the
 * runtime's other files), writes the dump the SIGQUIT path writes, and
 * closes it; the tool reads to the end. Only a pipe is written to: a
 * request that names another kind of file is dropped. sysmon never waits
 * on the pipe for more than WRITE_WAIT_NS in all, and a reader gone
 * (EPIPE) ends the answer; the SIGPIPE the kernel then sends sysmon's
 * thread (blocked there) is taken off it again.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include "debug.h"
#include "lock.h"
#include "netpoll.h"
#include "number.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"

/* Must match scripts/goshim. */
#define DUMPREQ_MAGIC 0x6764u /* "gd" */
#define SYSMON_NAME "goshim-sysmon"

#define LOOK_NS 10000000LL
#define WRITE_WAIT_NS 5000000000LL
#define POLL_SLICE_NS 100000000LL
#define STALE_MS 30000u

static char inherited_name[16];
static pid_t sysmon_tid;
static int statusfd; /* fd + 1; 0: none */
static int64_t next_look;

/* The pipe being answered on. fd_vacate (under the fd table's lock) may
 * move it while the program takes its number: a write holds lock. */
static struct {
	struct rlock lock;
	_Atomic int fd; /* -1: none */
	int64_t deadline;
	bool broken;
} out = { .fd = -1 };

void dumpreq_sysmon_start(void)
{
	SYS2(SYS_prctl, PR_GET_NAME, inherited_name);
	SYS2(SYS_prctl, PR_SET_NAME, SYSMON_NAME);
	sysmon_tid = sys_gettid();
	/* A fork child's sysmon: the parent's files are not this thread's
	 * (the child closed them), and the parent's sysmon may have held the
	 * lock as the fork was made. */
	statusfd = 0;
	next_look = 0;
	memset(&out.lock, 0, sizeof out.lock);
	atomic_store(&out.fd, -1);
}

void dumpreq_thread_name(void)
{
	char name[16] = { 0 };

	/* Only a thread that has sysmon's name inherited it from sysmon. */
	if (SYS2(SYS_prctl, PR_GET_NAME, name) == 0 &&
	    strcmp(name, SYSMON_NAME) == 0 && inherited_name[0])
		SYS2(SYS_prctl, PR_SET_NAME, inherited_name);
}

/* Is sig pending on this (sysmon's) thread itself, by its status file?
 * The file stays open for the next look (fd + 1 in statusfd), checked to
 * still be the runtime's and to name this thread. */
static bool pending_here(int sig)
{
	char buf[4096], want[32];

	snprint(want, sizeof want, "\nPid:\t%d\n", (int)sysmon_tid);
	for (int tries = 0; tries < 2; tries++) {
		if (statusfd && !fd_runtime(statusfd - 1))
			statusfd = 0; /* the program's now: never close it */
		if (statusfd == 0) {
			char path[64];
			snprint(path, sizeof path, "/proc/self/task/%d/status",
				(int)sysmon_tid);
			int fd = fd_runtime_open_ro(path);
			if (fd < 0)
				return false;
			statusfd = fd + 1;
		}
		long n = sys_pread(statusfd - 1, buf, sizeof buf - 1, 0);
		if (n <= 0) {
			statusfd = 0;
			continue;
		}
		buf[n] = '\0';
		const char *p = strstr(buf, "\nSigPnd:\t");
		if (strstr(buf, want) == NULL || p == NULL) {
			statusfd = 0; /* not this thread's file any more */
			continue;
		}
		uint64_t set;
		p += 9;
		if (!parse_uint(&p, buf + n, 16, UINT64_MAX, &set) ||
		    (*p != '\n' && *p != '\0'))
			return false;
		return set & sigbit(sig);
	}
	return false;
}

/* Take sig off this thread, without waiting; the signal number, or
 * -errno (EAGAIN: none). */
static long take(int sig, siginfo_t *si)
{
	uint64_t set = sigbit(sig);
	struct timespec zero = { 0, 0 };

	return SYS4(SYS_rt_sigtimedwait, &set, si, &zero, 8);
}

static void reply_write(const char *s, size_t n)
{
	while (n > 0 && !out.broken) {
		rlock_lock(&out.lock);
		int fd = atomic_load(&out.fd);
		long r = SYS3(SYS_write, fd, s, n);
		rlock_unlock(&out.lock);
		if (r > 0) {
			s += r;
			n -= (size_t)r;
		} else if (r == -EAGAIN) {
			int64_t left = out.deadline - nanotime();
			if (left <= 0) {
				out.broken = true;
				break;
			}
			if (left > POLL_SLICE_NS)
				left = POLL_SLICE_NS;
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			struct timespec ts = { left / 1000000000,
					       left % 1000000000 };
			SYS4(SYS_ppoll, &p, 1, &ts, NULL);
		} else if (r != -EINTR) {
			if (r == -EPIPE && pending_here(SIGPIPE)) {
				siginfo_t si;
				take(SIGPIPE, &si);
			}
			out.broken = true;
		}
	}
}

/* fd_runtime_close takes the fd table's lock, under which fd_vacate
 * takes out.lock: closed without it, again if the pipe moved meanwhile. */
static void reply_close(void)
{
	for (;;) {
		int fd = atomic_load(&out.fd);
		fd_runtime_close(fd);
		rlock_lock(&out.lock);
		bool same = atomic_load(&out.fd) == fd;
		if (same)
			atomic_store(&out.fd, -1);
		rlock_unlock(&out.lock);
		if (same)
			return;
	}
}

static void answer(pid_t pid, int fd)
{
	char path[64], head[96];

	snprint(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	int f = fd_runtime_open(path, O_WRONLY | O_NONBLOCK, 0);
	if (f < 0)
		return;
	if (SYS3(SYS_fcntl, f, F_GETPIPE_SZ, 0) <= 0) {
		fd_runtime_close(f); /* not a pipe */
		return;
	}
	out.deadline = nanotime() + WRITE_WAIT_NS;
	out.broken = false;
	atomic_store(&out.fd, f);
	size_t n = snprint(head, sizeof head,
			   "goshim dump: goroutines of pid %d\n",
			   (int)sys_getpid());
	reply_write(head, n);
	goroutines_dump_to(NULL, reply_write);
	reply_close();
}

void dumpreq_poll(void)
{
	int64_t now = nanotime_coarse();
	uint64_t pending = 0;
	siginfo_t si;

	if (sysmon_tid == 0 || now < next_look)
		return;
	next_look = now + LOOK_NS;
	if (SYS2(SYS_rt_sigpending, &pending, 8) != 0 ||
	    !(pending & sigbit(SIGURG)) || !pending_here(SIGURG))
		return;
	if (take(SIGURG, &si) != SIGURG)
		return;
	uint64_t v = (uint64_t)(uintptr_t)si.si_value.sival_ptr;
	uint32_t age = (uint32_t)(nanotime() / 1000000) - (uint32_t)v;
	/* Anything else sent to this thread is dropped, as SIGURG's
	 * default action would. */
	if (si.si_code != SI_QUEUE || si.si_pid <= 0 ||
	    si.si_pid == sys_getpid() || (v >> 48) != DUMPREQ_MAGIC ||
	    age > STALE_MS)
		return;
	answer(si.si_pid, (int)(v >> 32 & 0xffff));
}

bool dumpreq_fd_is(int fd)
{
	return fd >= 0 && fd == atomic_load(&out.fd);
}

void dumpreq_fd_set(int fd)
{
	rlock_lock(&out.lock);
	atomic_store(&out.fd, fd);
	rlock_unlock(&out.lock);
}
