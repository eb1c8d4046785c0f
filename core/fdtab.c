/*
 * fdtab.c: the table of what goshim knows of each fd (Go's internal/poll.FD
 * beside the runtime's pollDesc, one pd per fd number: pd.h).
 *
 * A pd learns lazily what its fd is (fstat, getsockopt) and forgets it
 * when the program closes the fd or makes a new file at its number: the
 * reset moves seq, so an event still queued for the closed fd, whose
 * number may already be reused, is ignored, and goroutines waiting on it
 * wake and see EBADF (netpoll_unblock). dup2 and dup3 onto a number are a
 * close of it; the new fd is known as the old.
 *
 * O_NONBLOCK is the program's: goshim sets it only around one
 * non-blocking connect on a socket the process made, under the pd's
 * fl_lock, and every look or change of the flags by the program (and by
 * goshim's "did the program ask for EAGAIN?", fd_nonblocking) takes that
 * lock, so nothing in the process ever sees goshim's flag.
 *
 * The runtime's own fds (epoll and its eventfd, the trace file, the files
 * sysmon reads) sit high in the fd table, marked PD_RUNTIME, and are
 * hidden from the program (fd_hidden): see dup_high and fd_vacate. They
 * are made, moved and closed under fdt.lock, against close_range.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include "pd.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "debug.h"
#include "trace.h"

static struct {
	struct rlock lock; /* start-up of the table; the runtime's fds */
	_Atomic(_Atomic(struct pd *) *) tab;
	uint32_t nchunks;
} fdt;

_Atomic int fd_runtime_min = INT_MAX, fd_runtime_end;

static _Atomic(struct pd *) *table(void)
{
	_Atomic(struct pd *) *tab = atomic_load_explicit(&fdt.tab,
							 memory_order_acquire);
	if (tab)
		return tab;
	rlock_lock(&fdt.lock);
	tab = atomic_load(&fdt.tab);
	if (tab == NULL) {
		struct rlimit rl;
		rlim_t max = INT_MAX;
		if (SYS4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
		    rl.rlim_max < max)
			max = rl.rlim_max;
		fdt.nchunks = (uint32_t)((max + PD_CHUNK - 1) / PD_CHUNK);
		tab = sys_mmap_anon(fdt.nchunks * sizeof *tab);
		if (tab == NULL)
			runtime_throw("fdtab: out of memory");
		atomic_store_explicit(&fdt.tab, tab, memory_order_release);
	}
	rlock_unlock(&fdt.lock);
	return tab;
}

struct pd *pd_get(int fd, bool alloc)
{
	_Atomic(struct pd *) *tab;
	struct pd *chunk;
	uint32_t c = (uint32_t)fd / PD_CHUNK;

	if (fd < 0)
		return NULL;
	tab = alloc ? table() : atomic_load_explicit(&fdt.tab,
						     memory_order_acquire);
	if (tab == NULL || c >= fdt.nchunks)
		return NULL;
	chunk = atomic_load_explicit(&tab[c], memory_order_acquire);
	if (chunk == NULL) {
		struct pd *none = NULL;
		if (!alloc)
			return NULL;
		chunk = sys_mmap_anon(PD_CHUNK * sizeof *chunk);
		if (chunk == NULL)
			return NULL;
		if (!atomic_compare_exchange_strong(&tab[c], &none, chunk)) {
			sys_munmap(chunk, PD_CHUNK * sizeof *chunk);
			chunk = none;
		}
	}
	return &chunk[(uint32_t)fd % PD_CHUNK];
}


void pd_each(void (*fn)(struct pd *pd, void *arg), void *arg)
{
	_Atomic(struct pd *) *tab = atomic_load_explicit(&fdt.tab,
							 memory_order_acquire);

	for (uint32_t c = 0; tab && c < fdt.nchunks; c++) {
		struct pd *chunk = atomic_load_explicit(&tab[c],
							memory_order_acquire);
		for (uint32_t i = 0; chunk && i < PD_CHUNK; i++)
			fn(&chunk[i], arg);
	}
}

void fdtab_lock(void)
{
	table(); /* not under fdt.lock, which making it takes */
	rlock_lock(&fdt.lock);
}

void fdtab_unlock(void)
{
	rlock_unlock(&fdt.lock);
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
	netpoll_unblock(pd, &list);
	spin_unlock(&pd->lock);
	netpoll_deliver(list);
}

void pd_note(struct pd *pd, uint32_t seq, enum fd_kind kind,
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

/* Under fdt.lock; the mark under the pd's lock, against pd_reset. The
 * program cannot make, close or dup onto a marked number without
 * fd_vacate first. */
void fd_runtime_mark(int fd)
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

int fd_move_high(int fd)
{
	long n = dup_high(fd);

	if (n < 0)
		return fd;
	sys_close(fd);
	return (int)n;
}

/* Opened under fdt.lock: a close_range closes around the runtime's fds,
 * and this one is not marked before it is moved. */
int fd_runtime_open(const char *path, int flags, int mode)
{
	int fd;

	fdtab_lock();
	fd = (int)SYS4(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
	if (fd >= 0) {
		fd = fd_move_high(fd);
		fd_runtime_mark(fd);
	}
	fdtab_unlock();
	return fd;
}

int fd_runtime_open_ro(const char *path)
{
	return fd_runtime_open(path, O_RDONLY, 0);
}

void fd_runtime_close(int fd)
{
	rlock_lock(&fdt.lock);
	if (fd_runtime(fd)) {
		runtime_unmark(fd);
		sys_close(fd);
	}
	rlock_unlock(&fdt.lock);
}

/* Under fdt.lock, so that no two move one fd. */
int fd_vacate(int fd)
{
	int err = 0;
	long n;

	rlock_lock(&fdt.lock);
	if (!fd_runtime(fd))
		goto out;
	if (!netpoll_fd_is(fd) && !trace_fd_is(fd) && !dumpreq_fd_is(fd)) {
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
	fd_runtime_mark((int)n);
	if (netpoll_fd_is(fd)) {
		netpoll_fd_set(fd, (int)n);
	} else if (dumpreq_fd_is(fd)) {
		dumpreq_fd_set((int)n);
	} else {
		trace_fd_set((int)n);
	}
	runtime_unmark(fd);
out:
	rlock_unlock(&fdt.lock);
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

/* Under fdt.lock, so the runtime's fds are neither made nor moved while
 * the kernel closes the pieces between them. They are few and high: the
 * look is at the chunks of the table that exist. */
long fd_close_range(unsigned first, unsigned last)
{
	_Atomic(struct pd *) *tab = table();
	unsigned at = first;
	long r = 0;

	if (first > last)
		return -EINVAL;
	rlock_lock(&fdt.lock);
	for (uint32_t c = first / PD_CHUNK; r == 0 && c < fdt.nchunks &&
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
	rlock_unlock(&fdt.lock);
	for (uint32_t c = first / PD_CHUNK; r == 0 && c < fdt.nchunks &&
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

bool fd_nonblocking(int fd)
{
	struct pd *pd = pd_get(fd, true);
	long fl;

	if (pd)
		rlock_lock(&pd->fl_lock);
	fl = SYS3(SYS_fcntl, fd, F_GETFL, 0);
	if (pd)
		rlock_unlock(&pd->fl_lock);
	return fl >= 0 && (fl & O_NONBLOCK);
}

int64_t fd_sock_deadline(int fd, int opt)
{
	struct timeval tv;
	socklen_t len = sizeof tv;

	if (SYS6(SYS_getsockopt, fd, SOL_SOCKET, opt, &tv, &len, 0) < 0 ||
	    len != sizeof tv || (tv.tv_sec == 0 && tv.tv_usec == 0))
		return -1;
	return nanotime() + (int64_t)tv.tv_sec * 1000000000 +
	       (int64_t)tv.tv_usec * 1000;
}

/* The runtime's fds were the parent's: closed, so that the child has no
 * fd of goshim's (those it needs it makes again). Every fd is forgotten:
 * its waiters are gone, and its lock may be held by a thread that is gone
 * too. */
void fdtab_fork_child(void)
{
	_Atomic(struct pd *) *tab = atomic_load(&fdt.tab);

	for (uint32_t c = 0; tab && c < fdt.nchunks; c++) {
		struct pd *chunk = atomic_load(&tab[c]);
		for (uint32_t i = 0; chunk && i < PD_CHUNK; i++)
			if (atomic_load(&chunk[i].flags) & PD_RUNTIME)
				sys_close((int)(c * PD_CHUNK + i));
	}
	atomic_store(&fd_runtime_min, INT_MAX);
	atomic_store(&fd_runtime_end, 0);
	atomic_store(&fdt.lock.key, 0);
	for (uint32_t c = 0; tab && c < fdt.nchunks; c++) {
		struct pd *chunk = atomic_load(&tab[c]);
		if (chunk)
			memset(chunk, 0, PD_CHUNK * sizeof *chunk);
	}
}
