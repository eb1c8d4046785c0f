/*
 * netpoll.c: goroutines waiting for fds (Go's netpoll.go and
 * netpoll_epoll.go), and the table of what goshim knows of each fd.
 *
 * One epoll instance, edge-triggered, made at start-up (in a child of
 * fork, on its first wait). It and its eventfd, like every fd of the
 * runtime's own, sit high in the fd table and are hidden from the program
 * (fd_runtime: see fd_runtime_open and fd_vacate). An fd is
 * added on its first wait, for everything at once (EPOLLIN|EPOLLOUT|
 * EPOLLRDHUP|EPOLLPRI|EPOLLET), and the epoll data carries its number and
 * its poll descriptor's sequence number. Every fd number has a poll descriptor (pd) in a table of chunks
 * allocated on demand, up to the RLIMIT_NOFILE hard limit, never freed
 * (a waker may still look at one). A pd learns lazily what its fd is
 * (fstat) and forgets it on close: close bumps seq, so an event still
 * queued for the closed fd, whose number may already be reused, is
 * ignored, and goroutines waiting on it wake and see EBADF. dup2 and
 * dup3 onto a number are a close of it; the new fd is known as the old.
 *
 * O_NONBLOCK is the program's: goshim sets it only around one
 * non-blocking connect on a socket the process made, under the pd's
 * fl_lock, and every look or change of the flags by the program (and by
 * goshim's "did the program ask for EAGAIN?") takes that lock, so
 * nothing in the process ever sees goshim's flag.
 *
 * Go keeps one waiter per mode (rg/wg, with the pdReady token) because its
 * fds let one reader and one writer in at a time. A C program may have many
 * threads reading one fd (acceptors, workers on a pipe); one token would go
 * to one of them and the wakeup would be lost for the other. So each pd
 * counts the events of each mode: a waiter takes the count before its
 * non-blocking try (netpoll_arm) and parks only if it has not moved since,
 * and an event wakes every waiter of its mode, as the kernel wakes every
 * thread blocked reading a pipe.
 *
 * The fd may have been closed behind goshim's back (fclose, pclose, dup2)
 * and its number reused by a call goshim does not see: every wait first
 * adds the fd to epoll again. EEXIST is the common answer; success means
 * the registration was for a file that is gone, and the new one, if
 * ready, is reported at once.
 *
 * findrunnable polls without blocking when its queues are empty, and the
 * M that finds nothing blocks in epoll until the next timer (netpoll_block);
 * it stays off the idle list, so new work wakes another M, and
 * netpoll_break (an eventfd) brings it back for an earlier timer or when
 * the last waiter leaves (so checkdead can see an idle process again).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include "debug.h"
#include "netpoll.h"
#include "runtime.h"
#include "sys.h"
#include "waiter.h"
#include "trace.h"

#define PD_CHUNK 512
#define NEVENTS 128
#define BREAK_DATA UINT64_MAX

/* PD_RUNTIME: one of the runtime's own fds (fd_runtime). */
enum {
	PD_REGISTERED = 1,
	PD_OURS = 2,
	PD_LISTEN = 4,
	PD_NO_NOWAIT = 8,
	PD_RUNTIME = 16,
};

struct pd {
	struct spinlock lock;	 /* guards count, wait; writes of the rest */
	_Atomic uint32_t seq;	 /* bumped when the fd is forgotten */
	_Atomic uint8_t kind;	 /* enum fd_kind */
	_Atomic uint8_t socktype; /* SOCK_STREAM, ...; 0 not learnt */
	_Atomic uint8_t flags;	 /* PD_* */
	_Atomic uint32_t count[2]; /* events per mode (NP_READ, NP_WRITE) */
	struct netpoll_link *wait[2];
	_Atomic uint32_t serial; /* fd_serial_lock: 0 free, 1 held, 2 waited */
	struct rlock fl_lock;	 /* fd_nowait_call vs the program's flags */
};

static struct {
	struct rlock lock; /* start-up of the table and of epoll */
	_Atomic(_Atomic(struct pd *) *) tab;
	uint32_t nchunks;
	_Atomic bool up;   /* epfd and efd exist */
	_Atomic int epfd, efd; /* moved by fd_vacate */
	_Atomic int32_t efd_users; /* between reading efd and using it */
	_Atomic int32_t waiters;  /* goroutines parked in netpoll_wait */
	_Atomic bool blocked;	  /* an M blocks in netpoll_block */
	_Atomic uint32_t wake_sig; /* a break is pending in efd */
} np = { .epfd = -1, .efd = -1 };

_Atomic int fd_runtime_min = INT_MAX, fd_runtime_end;

/* ---- the fd table ------------------------------------------------------- */

static _Atomic(struct pd *) *table(void)
{
	_Atomic(struct pd *) *tab = atomic_load_explicit(&np.tab,
							 memory_order_acquire);
	if (tab)
		return tab;
	rlock_lock(&np.lock);
	tab = atomic_load(&np.tab);
	if (tab == NULL) {
		struct rlimit rl;
		rlim_t max = INT_MAX;
		if (SYS4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
		    rl.rlim_max < max)
			max = rl.rlim_max;
		np.nchunks = (uint32_t)((max + PD_CHUNK - 1) / PD_CHUNK);
		tab = calloc(np.nchunks, sizeof *tab);
		if (tab == NULL)
			runtime_throw("netpoll: out of memory");
		atomic_store_explicit(&np.tab, tab, memory_order_release);
	}
	rlock_unlock(&np.lock);
	return tab;
}

/* fd's pd; NULL beyond the table, or (!alloc) in a chunk never used. */
static struct pd *pd_get(int fd, bool alloc)
{
	_Atomic(struct pd *) *tab;
	struct pd *chunk;
	uint32_t c = (uint32_t)fd / PD_CHUNK;

	if (fd < 0)
		return NULL;
	tab = alloc ? table() : atomic_load_explicit(&np.tab,
						     memory_order_acquire);
	if (tab == NULL || c >= np.nchunks)
		return NULL;
	chunk = atomic_load_explicit(&tab[c], memory_order_acquire);
	if (chunk == NULL) {
		struct pd *none = NULL;
		if (!alloc)
			return NULL;
		chunk = calloc(PD_CHUNK, sizeof *chunk);
		if (chunk == NULL)
			return NULL;
		if (!atomic_compare_exchange_strong(&tab[c], &none, chunk)) {
			free(chunk);
			chunk = none;
		}
	}
	return &chunk[(uint32_t)fd % PD_CHUNK];
}

/* Take every waiter of mode m off pd (lock held): those this call wakes
 * are claimed and pushed on *list, to be delivered after unlocking. */
static void take_waiters(struct pd *pd, int m, struct waiter **list)
{
	struct netpoll_link *l = pd->wait[m];

	pd->wait[m] = NULL;
	for (; l; l = l->next) {
		l->queued = false;
		if (waiter_claim(l->w)) {
			l->w->next = *list;
			*list = l->w;
		}
	}
}

static int deliver(struct waiter *list)
{
	int n = 0;

	while (list) {
		struct waiter *w = list;
		list = w->next;
		waiter_deliver(w);
		n++;
	}
	return n;
}

/* A new file behind fd: wake whoever waited on the old one (EBADF), and
 * know the new one as kind. PD_RUNTIME stays: only a close_range's
 * forgetting (unlocked) can reach a runtime fd made behind it. */
static void pd_reset(struct pd *pd, enum fd_kind kind, int socktype,
		     uint8_t flags)
{
	struct waiter *list = NULL;
	uint8_t keep;

	spin_lock(&pd->lock);
	keep = atomic_load_explicit(&pd->flags, memory_order_relaxed) &
	       PD_RUNTIME;
	atomic_fetch_add(&pd->seq, 1);
	atomic_store_explicit(&pd->kind, kind, memory_order_relaxed);
	atomic_store_explicit(&pd->socktype, socktype, memory_order_relaxed);
	atomic_store_explicit(&pd->flags, flags | keep, memory_order_relaxed);
	take_waiters(pd, 0, &list);
	take_waiters(pd, 1, &list);
	spin_unlock(&pd->lock);
	deliver(list);
}

/* Record something learnt about fd, unless it was closed meanwhile. */
static void pd_note(struct pd *pd, uint32_t seq, enum fd_kind kind,
		    int socktype, uint8_t flags)
{
	spin_lock(&pd->lock);
	if (atomic_load(&pd->seq) == seq) {
		if (kind != FD_UNKNOWN)
			atomic_store_explicit(&pd->kind, kind,
					      memory_order_relaxed);
		if (socktype)
			atomic_store_explicit(&pd->socktype, socktype,
					      memory_order_relaxed);
		atomic_fetch_or_explicit(&pd->flags, flags,
					 memory_order_relaxed);
	}
	spin_unlock(&pd->lock);
}

enum fd_kind fd_kind(int fd)
{
	struct pd *pd = pd_get(fd, true);
	struct stat st;
	enum fd_kind k;

	if (pd == NULL)
		return FD_OTHER;
	k = atomic_load_explicit(&pd->kind, memory_order_relaxed);
	if (k != FD_UNKNOWN)
		return k;
	uint32_t seq = atomic_load(&pd->seq);
	if (SYS2(SYS_fstat, fd, &st) < 0)
		return FD_OTHER; /* not open: the call says so */
	k = S_ISFIFO(st.st_mode)   ? FD_PIPE
	    : S_ISSOCK(st.st_mode) ? FD_SOCKET
				   : FD_OTHER;
	pd_note(pd, seq, k, 0, 0);
	return k;
}

static int sockopt(int fd, int opt)
{
	int v = 0;
	socklen_t len = sizeof v;

	if (SYS6(SYS_getsockopt, fd, SOL_SOCKET, opt, &v, &len, 0) < 0)
		return 0;
	return v;
}

int fd_socktype(int fd)
{
	struct pd *pd = pd_get(fd, true);
	int t;

	if (pd == NULL)
		return sockopt(fd, SO_TYPE);
	t = atomic_load_explicit(&pd->socktype, memory_order_relaxed);
	if (t == 0) {
		uint32_t seq = atomic_load(&pd->seq);
		t = sockopt(fd, SO_TYPE);
		pd_note(pd, seq, FD_UNKNOWN, t, 0);
	}
	return t;
}

bool fd_listening(int fd)
{
	struct pd *pd = pd_get(fd, true);

	if (pd == NULL)
		return false;
	if (atomic_load_explicit(&pd->flags, memory_order_relaxed) &
	    PD_LISTEN)
		return true;
	/* Not cached while false: listen() may come later. */
	uint32_t seq = atomic_load(&pd->seq);
	if (!sockopt(fd, SO_ACCEPTCONN))
		return false;
	pd_note(pd, seq, FD_UNKNOWN, 0, PD_LISTEN);
	return true;
}

bool fd_ours(int fd)
{
	struct pd *pd = pd_get(fd, false);
	return pd && (atomic_load_explicit(&pd->flags, memory_order_relaxed) &
		      PD_OURS);
}

void fd_learn(int fd, enum fd_kind kind, int socktype, bool ours)
{
	struct pd *pd = pd_get(fd, true);
	if (pd)
		pd_reset(pd, kind, socktype, ours ? PD_OURS : 0);
}

void fd_lost_nowait(int fd)
{
	struct pd *pd = pd_get(fd, true);
	if (pd)
		pd_note(pd, atomic_load(&pd->seq), FD_UNKNOWN, 0, PD_NO_NOWAIT);
}

bool fd_nowait(int fd)
{
	struct pd *pd = pd_get(fd, false);
	return pd == NULL ||
	       !(atomic_load_explicit(&pd->flags, memory_order_relaxed) &
		 PD_NO_NOWAIT);
}

void fd_copy(int from, int to)
{
	struct pd *src = pd_get(from, true), *dst = pd_get(to, true);
	enum fd_kind kind = FD_UNKNOWN;
	int socktype = 0;
	uint8_t flags = 0;

	if (dst == NULL)
		return;
	if (src) {
		kind = atomic_load_explicit(&src->kind, memory_order_relaxed);
		socktype = atomic_load_explicit(&src->socktype,
						memory_order_relaxed);
		flags = atomic_load_explicit(&src->flags,
					     memory_order_relaxed) &
			(PD_OURS | PD_LISTEN | PD_NO_NOWAIT);
	}
	pd_reset(dst, kind, socktype, flags);
}

bool fd_runtime(int fd)
{
	struct pd *pd = pd_get(fd, false);
	return pd && (atomic_load_explicit(&pd->flags, memory_order_relaxed) &
		      PD_RUNTIME);
}

/* Under np.lock; the mark under the pd's lock, against pd_reset. The
 * program cannot make, close or dup onto a marked number without
 * fd_vacate first. */
static void runtime_mark(int fd)
{
	struct pd *pd = pd_get(fd, true);

	if (pd == NULL)
		return; /* out of memory: the program sees it */
	spin_lock(&pd->lock);
	atomic_fetch_or(&pd->flags, PD_RUNTIME);
	spin_unlock(&pd->lock);
	if (fd < atomic_load(&fd_runtime_min))
		atomic_store(&fd_runtime_min, fd);
	if (fd >= atomic_load(&fd_runtime_end))
		atomic_store(&fd_runtime_end, fd + 1);
}

static void runtime_unmark(int fd)
{
	struct pd *pd = pd_get(fd, false);

	if (pd) {
		spin_lock(&pd->lock);
		atomic_fetch_and(&pd->flags, (uint8_t)~PD_RUNTIME);
		spin_unlock(&pd->lock);
	}
}

/*
 * A close-on-exec copy of fd high in the table, or -errno. The kernel
 * gives the program the lowest free number, so the runtime's fds must sit
 * where the program does not reach, or its open() would get other numbers
 * than natively. But not high enough to grow the fd table, which the
 * kernel sizes to the highest open fd: that would cost memory and its
 * copy at every fork (a soft limit may be a million), change FDSize in
 * /proc/self/status, and make select say EBADF for a set bit it ignores
 * natively, beyond the table. Every table has at least 64 entries
 * (BITS_PER_LONG), so the copy goes to the top 16 of those (epoll, its
 * eventfd, the trace and sysmon's files), under the soft limit: only a
 * program with 48 fds open gets numbers that differ (it skips ours), and
 * its table grew anyway. Downward in halves when nothing is free from
 * there to the soft limit. fd_hidden's one compare becomes a look at the
 * pd for the program's fds from 48 up.
 */
static long dup_high(int fd)
{
	struct rlimit rl;
	long top = 64, r = -EMFILE;

	if (SYS4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	for (long base = top - 16; r == -EMFILE && base > 2; base /= 2)
		r = SYS3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base);
	return r;
}

/* fd moved high (its old number closed), or fd itself if nothing is
 * free up there. */
static int move_high(int fd)
{
	long n = dup_high(fd);

	if (n < 0)
		return fd;
	sys_close(fd);
	return (int)n;
}

/* Opened under np.lock: a close_range closes around the runtime's fds,
 * and this one is not marked before it is moved. */
int fd_runtime_open(const char *path, int flags, int mode)
{
	int fd;

	table(); /* not under np.lock, which making it takes */
	rlock_lock(&np.lock);
	fd = (int)SYS4(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
	if (fd >= 0) {
		fd = move_high(fd);
		runtime_mark(fd);
	}
	rlock_unlock(&np.lock);
	return fd;
}

int fd_runtime_open_ro(const char *path)
{
	return fd_runtime_open(path, O_RDONLY, 0);
}

void fd_runtime_close(int fd)
{
	rlock_lock(&np.lock);
	if (fd_runtime(fd)) {
		runtime_unmark(fd);
		sys_close(fd);
	}
	rlock_unlock(&np.lock);
}

/* Under np.lock, so that no two move one fd. */
int fd_vacate(int fd)
{
	int err = 0;
	long n;

	rlock_lock(&np.lock);
	if (!fd_runtime(fd))
		goto out;
	if (fd != atomic_load(&np.epfd) && fd != atomic_load(&np.efd) &&
	    !trace_fd_is(fd) && !dumpreq_fd_is(fd)) {
		/* A file only read (an M's stat for sysmon): its owner finds
		 * the program's file there and lets the number go. */
		runtime_unmark(fd);
		goto out;
	}
	n = dup_high(fd);
	if (n < 0)
		n = SYS3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
	if (n < 0) {
		err = (int)-n;
		goto out;
	}
	runtime_mark((int)n);
	if (fd == atomic_load(&np.epfd)) {
		atomic_store(&np.epfd, (int)n);
	} else if (fd == atomic_load(&np.efd)) {
		atomic_store(&np.efd, (int)n);
		/* Nobody may write the program's file by the old number: wait
		 * out whoever read it before. */
		while (atomic_load(&np.efd_users))
			arch_cpu_relax();
	} else if (dumpreq_fd_is(fd)) {
		dumpreq_fd_set((int)n);
	} else {
		trace_fd_set((int)n);
	}
	runtime_unmark(fd);
out:
	rlock_unlock(&np.lock);
	return err;
}

bool fd_close(int fd)
{
	struct pd *pd;

	if (fd_hidden(fd))
		return false;
	pd = pd_get(fd, false);
	if (pd)
		pd_reset(pd, FD_UNKNOWN, 0, 0);
	return true;
}

/* Under np.lock, so the runtime's fds are neither made nor moved while
 * the kernel closes the pieces between them. They are few and high: the
 * look is at the chunks of the table that exist. */
long fd_close_range(unsigned first, unsigned last)
{
	_Atomic(struct pd *) *tab = table();
	unsigned at = first;
	long r = 0;

	if (first > last)
		return -EINVAL;
	rlock_lock(&np.lock);
	for (uint32_t c = first / PD_CHUNK; r == 0 && c < np.nchunks &&
					    c <= last / PD_CHUNK;
	     c++) {
		struct pd *chunk = atomic_load_explicit(&tab[c],
							memory_order_acquire);
		for (uint32_t i = 0; chunk && r == 0 && i < PD_CHUNK; i++) {
			uint32_t fd = c * PD_CHUNK + i;
			if (fd < at || fd > last ||
			    !(atomic_load(&chunk[i].flags) & PD_RUNTIME))
				continue;
			if (fd > at)
				r = SYS3(SYS_close_range, at, fd - 1, 0);
			at = fd + 1;
		}
	}
	if (r == 0 && at <= last) /* fds are below INT_MAX: at never wraps */
		r = SYS3(SYS_close_range, at, last, 0);
	rlock_unlock(&np.lock);
	for (uint32_t c = first / PD_CHUNK; r == 0 && c < np.nchunks &&
					    c <= last / PD_CHUNK;
	     c++) {
		struct pd *chunk = atomic_load_explicit(&tab[c],
							memory_order_acquire);
		for (uint32_t i = 0; chunk && i < PD_CHUNK; i++) {
			uint32_t fd = c * PD_CHUNK + i;
			if (fd >= first && fd <= last && !fd_runtime((int)fd))
				pd_reset(&chunk[i], FD_UNKNOWN, 0, 0);
		}
	}
	return r;
}

long fd_nowait_call(int fd, long (*call)(void *), void *arg)
{
	struct pd *pd = pd_get(fd, true);
	long fl, r;

	if (pd == NULL)
		return -EPERM;
	rlock_lock(&pd->fl_lock);
	fl = SYS3(SYS_fcntl, fd, F_GETFL, 0);
	if (fl < 0) {
		r = fl;
	} else if (fl & O_NONBLOCK) {
		r = call(arg);
	} else {
		SYS3(SYS_fcntl, fd, F_SETFL, fl | O_NONBLOCK);
		r = call(arg);
		SYS3(SYS_fcntl, fd, F_SETFL, fl);
	}
	rlock_unlock(&pd->fl_lock);
	return r;
}

long fd_flags_call(int fd, long (*call)(void *), void *arg)
{
	struct pd *pd = pd_get(fd, true);
	long r;

	if (pd == NULL)
		return call(arg);
	rlock_lock(&pd->fl_lock);
	r = call(arg);
	rlock_unlock(&pd->fl_lock);
	return r;
}

/* A futex-style mutex on the pd (Drepper's), parking on sema.c. */
int fd_serial_lock(struct netpoll_req *r, int64_t deadline)
{
	struct pd *pd = r->pd;
	uint32_t c = 0;

	if (pd == NULL)
		return 0;
	if (!atomic_compare_exchange_strong(&pd->serial, &c, 1)) {
		if (c != 2)
			c = atomic_exchange(&pd->serial, 2);
		while (c != 0) {
			if (sema_wait(&pd->serial, 2, deadline, "accept") ==
			    ETIMEDOUT)
				return ETIMEDOUT;
			c = atomic_exchange(&pd->serial, 2);
		}
	}
	return atomic_load(&pd->seq) != r->seq ? EBADF : 0;
}

void fd_serial_unlock(struct netpoll_req *r)
{
	if (r->pd && atomic_exchange(&r->pd->serial, 0) == 2)
		sema_wake(&r->pd->serial, 1);
}

/* ---- epoll -------------------------------------------------------------- */

/* The child of fork shares the epoll instance with its parent: it closes
 * its copies and makes its own on its next wait. The runtime's other fds
 * were the Ms' that are gone (or the trace's, which the child does not
 * write, or /proc/self's, the parent's, or the cgroup's, which fork_resume
 * opens again): closed too, so that the child has no fd of goshim's.
 * Every fd is forgotten: its waiters are gone, and its lock may be held
 * by a thread that is gone too. */
void netpoll_fork_child(void)
{
	_Atomic(struct pd *) *tab = atomic_load(&np.tab);

	for (uint32_t c = 0; tab && c < np.nchunks; c++) {
		struct pd *chunk = atomic_load(&tab[c]);
		for (uint32_t i = 0; chunk && i < PD_CHUNK; i++)
			if (atomic_load(&chunk[i].flags) & PD_RUNTIME)
				sys_close((int)(c * PD_CHUNK + i));
	}
	atomic_store(&np.epfd, -1);
	atomic_store(&np.efd, -1);
	atomic_store(&np.efd_users, 0);
	atomic_store(&np.up, false);
	atomic_store(&fd_runtime_min, INT_MAX);
	atomic_store(&fd_runtime_end, 0);
	atomic_store(&np.lock.key, 0);
	atomic_store(&np.waiters, 0);
	atomic_store(&np.blocked, false);
	atomic_store(&np.wake_sig, 0);
	for (uint32_t c = 0; tab && c < np.nchunks; c++) {
		struct pd *chunk = atomic_load(&tab[c]);
		if (chunk)
			memset(chunk, 0, PD_CHUNK * sizeof *chunk);
	}
}

static bool poll_up(void)
{
	if (atomic_load_explicit(&np.up, memory_order_acquire))
		return true;
	table(); /* not under np.lock, which making it takes */
	rlock_lock(&np.lock);
	if (!atomic_load(&np.up)) {
		/* Each is made at the lowest free number, then moved: a
		 * program's open racing this gets the next number, not the
		 * one it would natively (no call makes an fd at a chosen
		 * number). */
		int ep = (int)SYS1(SYS_epoll_create1, EPOLL_CLOEXEC), ef;
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = BREAK_DATA };
		if (ep >= 0)
			ep = move_high(ep);
		ef = (int)SYS2(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (ef >= 0)
			ef = move_high(ef);
		if (ep >= 0 && ef >= 0 &&
		    SYS4(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, ef, &ev) == 0) {
			runtime_mark(ep);
			runtime_mark(ef);
			atomic_store(&np.epfd, ep);
			atomic_store(&np.efd, ef);
			atomic_store_explicit(&np.up, true,
					      memory_order_release);
		} else {
			/* Out of fds, say: waits make the blocking call. */
			if (ep >= 0)
				sys_close(ep);
			if (ef >= 0)
				sys_close(ef);
		}
	}
	rlock_unlock(&np.lock);
	return atomic_load(&np.up);
}

/* Made before main() rather than on the first wait: the fds are made at
 * the lowest free numbers and then moved high, holding for an instant a
 * number the program's own open may want (and, should the move grow the
 * fd table while threads run, for an RCU grace period: milliseconds).
 * With one thread, and nothing of the program's running yet, that cannot
 * happen. A failure is tried again on the first wait. */
void netpoll_init(void)
{
	poll_up();
}

/* epoll_ctl on the runtime's epoll fd, again if fd_vacate moved it
 * meanwhile (the old number may be the program's file by now). */
static long epoll_ctl_np(int op, int fd, struct epoll_event *ev)
{
	for (;;) {
		int ep = atomic_load(&np.epfd);
		long r = SYS4(SYS_epoll_ctl, ep, op, fd, ev);
		if (r >= 0 || r == -EEXIST || atomic_load(&np.epfd) == ep)
			return r;
	}
}

/* Add fd to epoll, again if need be (see the top). 0, EBADF, or EPERM:
 * epoll cannot watch it (a regular file; out of watches). */
static int pd_register(struct pd *pd, int fd, uint32_t seq)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLET,
		.data.u64 = (uint64_t)seq << 32 | (uint32_t)fd,
	};
	long r = epoll_ctl_np(EPOLL_CTL_ADD, fd, &ev);

	if (r == -EEXIST) {
		if (atomic_load_explicit(&pd->flags, memory_order_relaxed) &
		    PD_REGISTERED)
			return 0;
		/* Left from an fd goshim forgot: carry our seq now. */
		r = epoll_ctl_np(EPOLL_CTL_MOD, fd, &ev);
	}
	if (r == 0) {
		pd_note(pd, seq, FD_UNKNOWN, 0, PD_REGISTERED);
		return 0;
	}
	return r == -EBADF ? EBADF : EPERM;
}

void netpoll_arm(struct netpoll_req *r, int fd, unsigned modes)
{
	struct pd *pd = pd_get(fd, true);

	r->fd = fd;
	r->modes = modes;
	r->pd = pd;
	r->link[0].w = r->link[1].w = NULL;
	if (pd) {
		r->seq = atomic_load(&pd->seq);
		r->count[0] = atomic_load(&pd->count[0]);
		r->count[1] = atomic_load(&pd->count[1]);
	}
}

static void nothing_to_unlock(void *unused)
{
	(void)unused;
}

/* "read fd 7" and the like, for goroutine dumps. Made for every park, so
 * by hand: snprintf cost 2% of a 10,000-connection echo server's CPU. */
static void wait_reason(char buf[24], const struct netpoll_req *r, int n)
{
	const char *what = n != 1		? "poll "
			   : r->modes == NP_READ  ? "read fd "
			   : r->modes == NP_WRITE ? "write fd "
						  : "poll fd ";
	char digits[12];
	int64_t v = n != 1 ? n : r->fd;
	int nd = 0;

	while (*what)
		*buf++ = *what++;
	if (v < 0) {
		*buf++ = '-';
		v = -v;
	}
	do {
		digits[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (nd)
		*buf++ = digits[--nd];
	if (n != 1) {
		for (what = " fds"; *what;)
			*buf++ = *what++;
	}
	*buf = '\0';
}

static int wait_for(struct netpoll_req *reqs, int n, int64_t deadline,
		    bool cancel)
{
	struct waiter w;
	char reason[24];
	int watched = 0, intr = 0;
	bool ready = false, closed = false;
	uint32_t st;

	if (!poll_up())
		return EPERM;
	waiter_init(&w);
	for (int i = 0; i < n && !ready; i++) {
		struct netpoll_req *r = &reqs[i];
		struct pd *pd = r->pd;
		int e;

		if (pd == NULL || (e = pd_register(pd, r->fd, r->seq)) == EPERM)
			continue;
		watched++;
		spin_lock(&pd->lock);
		if (e == EBADF || atomic_load(&pd->seq) != r->seq) {
			closed = ready = true;
		} else {
			for (int m = 0; m < 2 && !ready; m++) {
				struct netpoll_link *l = &r->link[m];
				if (!(r->modes & (1u << m)))
					continue;
				if (atomic_load(&pd->count[m]) != r->count[m]) {
					ready = true;
					break;
				}
				l->w = &w;
				l->queued = true;
				l->next = pd->wait[m];
				pd->wait[m] = l;
			}
		}
		spin_unlock(&pd->lock);
	}
	if (watched == 0 && deadline < 0)
		return EPERM;
	wait_reason(reason, reqs, n);
	if (ready) {
		/* No park, unless an event on an fd queued already claimed
		 * us: its goready must find us parked. */
		st = waiter_claim(&w) ? W_WOKEN
				      : waiter_block(&w, nothing_to_unlock,
						     NULL, reason, -1);
	} else {
		atomic_fetch_add(&np.waiters, 1);
		if (cancel)
			intr_begin_cancel();
		else
			intr_begin();
		st = waiter_block(&w, nothing_to_unlock, NULL, reason,
				  deadline);
		intr = intr_end(true);
		/* The last waiter gone: a blocked M must not keep waiting
		 * for fds (see netpoll_block). */
		if (atomic_fetch_sub(&np.waiters, 1) == 1 &&
		    atomic_load(&np.blocked))
			netpoll_break();
	}
	for (int i = 0; i < n; i++) {
		for (int m = 0; m < 2; m++) {
			struct netpoll_link *l = &reqs[i].link[m], **pp;
			struct pd *pd = reqs[i].pd;
			if (l->w == NULL)
				continue;
			spin_lock(&pd->lock);
			for (pp = &pd->wait[m]; l->queued && *pp;
			     pp = &(*pp)->next) {
				if (*pp == l) {
					*pp = l->next;
					l->queued = false;
					break;
				}
			}
			spin_unlock(&pd->lock);
		}
		if (reqs[i].pd && atomic_load(&reqs[i].pd->seq) != reqs[i].seq)
			closed = true;
	}
	if (closed)
		return EBADF;
	if (intr == ECANCEL_CALL)
		return ECANCELED;
	if (intr)
		return EINTR;
	return st == W_TIMEDOUT ? ETIMEDOUT : 0;
}

int netpoll_wait(struct netpoll_req *reqs, int n, int64_t deadline)
{
	return wait_for(reqs, n, deadline, true);
}

int netpoll_wait_nocancel(struct netpoll_req *reqs, int n, int64_t deadline)
{
	return wait_for(reqs, n, deadline, false);
}

/* One epoll_wait: until an event, netpoll_break or the deadline (block),
 * or not at all. Readies the waiters; returns how many. */
_Atomic int64_t netpoll_lastpoll;

static int netpoll_run(bool block, int64_t deadline)
{
	struct epoll_event ev[NEVENTS];
	struct timespec ts = { 0, 0 }, *tsp = &ts;
	struct waiter *list = NULL;
	long n;
	int ep = atomic_load(&np.epfd);

	if (block && deadline < 0) {
		tsp = NULL;
	} else if (block) {
		int64_t left = deadline - nanotime();
		if (left > 0) {
			ts.tv_sec = left / 1000000000;
			ts.tv_nsec = left % 1000000000;
		}
	}
	atomic_store_explicit(&netpoll_lastpoll, nanotime(),
			      memory_order_relaxed);
	n = sys_epoll_wait_ts(ep, ev, NEVENTS, tsp, NULL);
	if (n < 0) {
		/* A signal, or fd_vacate moved epoll: look again. */
		if (n == -EINTR || atomic_load(&np.epfd) != ep)
			return 0;
		runtime_throw("netpoll: epoll_wait failed");
	}
	for (long i = 0; i < n; i++) {
		uint64_t data = ev[i].data.u64;
		uint32_t e = ev[i].events;
		struct pd *pd;

		if (data == BREAK_DATA) {
			/* A non-blocking look leaves it to the blocked M. */
			if (block) {
				uint64_t v;
				atomic_fetch_add(&np.efd_users, 1);
				SYS3(SYS_read, atomic_load(&np.efd), &v,
				     sizeof v);
				atomic_fetch_sub(&np.efd_users, 1);
				atomic_store(&np.wake_sig, 0);
			}
			continue;
		}
		pd = pd_get((int)(uint32_t)data, false);
		if (pd == NULL)
			continue;
		spin_lock(&pd->lock);
		if (atomic_load(&pd->seq) == (uint32_t)(data >> 32)) {
			if (e & (EPOLLIN | EPOLLRDHUP | EPOLLPRI | EPOLLHUP |
				 EPOLLERR)) {
				atomic_fetch_add(&pd->count[0], 1);
				take_waiters(pd, 0, &list);
			}
			if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
				atomic_fetch_add(&pd->count[1], 1);
				take_waiters(pd, 1, &list);
			}
		}
		spin_unlock(&pd->lock);
	}
	return deliver(list);
}

int netpoll_check(void)
{
	if (atomic_load_explicit(&np.waiters, memory_order_relaxed) == 0 ||
	    atomic_load(&np.blocked))
		return 0;
	return netpoll_run(false, 0);
}

bool netpoll_unwatched(void)
{
	return atomic_load_explicit(&np.waiters, memory_order_relaxed) > 0 &&
	       !atomic_load(&np.blocked);
}

bool netpoll_block(int64_t deadline)
{
	bool no = false, waiting;

	if (atomic_load(&np.waiters) == 0 ||
	    !atomic_compare_exchange_strong(&np.blocked, &no, true))
		return false;
	/* netpoll_wait breaks a blocked M when the last waiter leaves:
	 * look again now that we are it. */
	waiting = atomic_load(&np.waiters) > 0;
	if (waiting)
		netpoll_run(true, deadline);
	atomic_store(&np.blocked, false);
	return waiting;
}

void netpoll_break(void)
{
	uint32_t zero = 0;
	uint64_t one = 1;

	if (!atomic_load_explicit(&np.up, memory_order_acquire) ||
	    !atomic_compare_exchange_strong(&np.wake_sig, &zero, 1))
		return;
	atomic_fetch_add(&np.efd_users, 1);
	SYS3(SYS_write, atomic_load(&np.efd), &one, sizeof one);
	atomic_fetch_sub(&np.efd_users, 1);
}
