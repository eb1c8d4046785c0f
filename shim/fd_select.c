/*
 * fd_select.c: select and pselect with a timeout park the goroutine,
 * looking with the call itself and a zero timeout between parks
 * (fd_look.c).
 *
 * Timeouts the kernel would refuse are refused first, as it does
 * (EINVAL). The sets are copied for the looks only as far as the kernel
 * reads them: nfds bits, but never beyond the fd table, and only once the
 * kernel has said it can read and write them (EFAULT). A set holding one
 * of the runtime's own fds, which are not open as far as the program can
 * tell, gets EBADF.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include "fd.h"

/* pselect6's last argument. */
struct sigmask_arg {
	const sigset_t *mask;
	size_t bytes;
};

struct select_args {
	int nfds;
	size_t bytes;	  /* of each set in use, as the kernel reads them */
	fd_set *set[3];	  /* the program's: read, write, except */
	uint64_t *look[3]; /* what a look may overwrite */
	struct sigmask_arg *mask;
};

static long select_look(void *arg)
{
	struct select_args *a = arg;
	struct timespec zero = { 0, 0 };
	uint64_t *s[3];

	for (int i = 0; i < 3; i++) {
		s[i] = a->set[i] ? a->look[i] : NULL;
		if (s[i])
			memcpy(s[i], a->set[i], a->bytes);
	}
	long r = FD_NO_OWN_EINTR(SYS6(SYS_pselect6, a->nfds, s[0], s[1],
				      s[2], &zero, a->mask));
	for (int i = 0; i < 3 && r > 0; i++)
		if (s[i])
			memcpy(a->set[i], s[i], a->bytes);
	return r == 0 && a->mask ? kept_look(a->mask->mask) : r;
}

/* Bit fd of a set of any size, as the kernel reads it. */
static bool in_set(const fd_set *set, int fd)
{
	return set && ((const uint64_t *)set)[fd / 64] >> (fd % 64) & 1;
}

/* What fd waits for: the read and except sets (EPOLLPRI wakes readers)
 * read, the write set write. */
static unsigned select_modes(const struct select_args *a, int fd)
{
	unsigned m = 0;

	if (in_set(a->set[0], fd) || in_set(a->set[2], fd))
		m |= NP_READ;
	if (in_set(a->set[1], fd))
		m |= NP_WRITE;
	return m;
}

/* A set holds one of the runtime's fds: EBADF, as for any fd not open.
 * Only an nfds past the lowest of them looks, at the words of each set
 * that can hold them, copied a few at a time (they are few, and close
 * together); a set the kernel cannot read is left to it (EFAULT). */
static bool select_hides(int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	fd_set *set[3] = { rd, wr, ex };
	int lo = atomic_load_explicit(&fd_runtime_min, memory_order_relaxed);
	int hi = atomic_load_explicit(&fd_runtime_end, memory_order_relaxed);

	if (__builtin_expect(nfds <= lo, 1))
		return false;
	if (hi > nfds)
		hi = nfds;
	for (int s = 0; s < 3; s++)
		for (int base = lo / 64 * 64; set[s] && base < hi;
		     base += 256) {
			uint64_t w[4];
			int nw = (hi - base + 63) / 64 < 4 ? (hi - base + 63) / 64
							   : 4;
			if (sys_copy_in(w, (uint64_t *)set[s] + base / 64,
					(size_t)nw * sizeof *w) != 0)
				break;
			for (int fd = base > lo ? base : lo;
			     fd < hi && fd < base + 64 * nw; fd++)
				if ((w[(fd - base) / 64] >> (fd % 64) & 1) &&
				    fd_runtime(fd))
					return true;
		}
	return false;
}

/* select and pselect on a goroutine, nfds >= 0: the count, or -errno. */
static long select_park(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			int64_t deadline, const sigset_t *mask)
{
	struct sigmask_arg sm = { mask, SIGSET_BYTES };
	struct select_args a = { nfds, 0, { rd, wr, ex }, { NULL },
				 mask ? &sm : NULL };
	uint64_t few_sets[3][FD_SETSIZE / 64], *sets = few_sets[0];
	struct netpoll_req few[FEW], *reqs;
	struct timespec ts;
	bool native = false;
	long r;
	int n = 0;

	fd_cancel_point();
	if (nfds > FD_SETSIZE) {
		/* Linux reads a set larger than fd_set only as far as
		 * the fd table goes (FDSize), so may the looks. */
		int max = proc_status_get("FDSize:");
		if (max < 0)
			goto blocking;
		/* Bits beyond are not read: the same call, on what is. */
		if (nfds > max)
			nfds = a.nfds = max;
	}
	a.bytes = (size_t)(nfds + 63) / 64 * 8;
	if (a.bytes > sizeof few_sets[0] &&
	    (sets = malloc(3 * a.bytes)) == NULL)
		goto blocking;
	for (int i = 0; i < 3; i++)
		a.look[i] = sets + i * a.bytes / 8;
	/* The kernel reads the sets and writes them back: a set it cannot
	 * is its EFAULT (here at once), not a SIGSEGV in the looks' copies.
	 * The same bytes go back, so the check changes nothing. */
	for (int i = 0; i < 3; i++)
		if (a.set[i] &&
		    (sys_copy_in(a.look[i], a.set[i], a.bytes) != 0 ||
		     sys_copy_out(a.set[i], a.look[i], a.bytes) != 0)) {
			r = -EFAULT;
			goto out;
		}
	r = select_look(&a);
	if (r != 0)
		goto out;
	for (int fd = 0; fd < nfds; fd++)
		n += select_modes(&a, fd) != 0;
	reqs = reqs_alloc(few, (size_t)n);
	if (reqs == NULL) {
		r = -ENOMEM;
		goto out;
	}
	n = 0;
	for (int fd = 0; fd < nfds; fd++) {
		unsigned m = select_modes(&a, fd);
		/* An fd that is not open passed the look only because it
		 * lies beyond the fd table, where Linux does not read the
		 * sets: it waits for nothing (its EBADF from netpoll_wait
		 * would have the loop spin). */
		if (m && SYS2(SYS_fcntl, fd, F_GETFD) >= 0) {
			reqs[n].fd = fd;
			reqs[n++].modes = m;
		}
	}
	r = fd_look_loop(select_look, &a, reqs, n, deadline, &native);
	if (reqs != few)
		free(reqs);
	/* Timed out: nothing is ready, all sets come back empty. */
	for (int i = 0; i < 3 && r == 0 && !native; i++)
		if (a.set[i])
			memset(a.set[i], 0, a.bytes);
out:
	if (sets != few_sets[0])
		free(sets);
	if (r == -ECANCELED)
		shim_testcancel();
	if (!native)
		return r;
blocking:
	return SYS_CANCEL(SYS6(SYS_pselect6, nfds, rd, wr, ex,
			       deadline_left(&ts, deadline), a.mask));
}

static long raw_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		       struct timeval *tv)
{
	struct timespec ts;
	if (tv) {
		ts.tv_sec = tv->tv_sec + tv->tv_usec / 1000000;
		ts.tv_nsec = tv->tv_usec % 1000000 * 1000L;
	}
	return SYS6(SYS_pselect6, nfds, rd, wr, ex, tv ? &ts : NULL, NULL);
}

GOSHIM_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			 struct timeval *tv)
{
	int64_t deadline = -1;
	struct timespec left = { 0, 0 };
	long r;

	if (select_hides(nfds, rd, wr, ex) &&
	    (!tv || (tv->tv_sec >= 0 && tv->tv_usec >= 0)))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || nfds < 0 ||
	    (tv && tv->tv_sec == 0 && tv->tv_usec == 0))
		return (int)FD_NOWAIT_CALL(select,
					   raw_select(nfds, rd, wr, ex, tv),
					   nfds, rd, wr, ex, tv);
	if (tv && (tv->tv_sec < 0 || tv->tv_usec < 0))
		return (int)fd_ret(-EINVAL);
	/* tv_usec may hold more than a second, as for the kernel. */
	if (tv) {
		struct timespec rel = {
			tv->tv_usec / 1000000 > INT64_MAX - tv->tv_sec
				? INT64_MAX
				: tv->tv_sec + tv->tv_usec / 1000000,
			tv->tv_usec % 1000000 * 1000
		};
		deadline = deadline_after(&rel);
	}
	r = select_park(nfds, rd, wr, ex, deadline, NULL);
	/* Linux tells select's caller how much of the timeout is left. */
	if (tv) {
		deadline_left(&left, deadline);
		tv->tv_sec = left.tv_sec;
		tv->tv_usec = left.tv_nsec / 1000;
	}
	return (int)fd_ret(r);
}

/* The C library's pselect leaves the program's timeout as it was. */
static long raw_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			const struct timespec *ts, const sigset_t *mask)
{
	struct sigmask_arg sm = { mask, SIGSET_BYTES };
	struct timespec t;
	if (ts) {
		t = *ts;
		ts = &t;
	}
	return SYS6(SYS_pselect6, nfds, rd, wr, ex, ts, &sm);
}

GOSHIM_EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			  const struct timespec *ts, const sigset_t *mask)
{
	if (select_hides(nfds, rd, wr, ex) && (!ts || ts_valid(ts)))
		return (int)fd_ret(-EBADF);
	if (!fd_parks() || nfds < 0 || ts_zero(ts)) {
		long r = FD_NOWAIT_CALL(pselect,
					raw_pselect(nfds, rd, wr, ex, ts, mask),
					nfds, rd, wr, ex, ts, mask);
		return r == 0 ? (int)fd_ret(kept_look(mask)) : (int)r;
	}
	if (ts && !ts_valid(ts))
		return (int)fd_ret(-EINVAL);
	return (int)fd_ret(
		select_park(nfds, rd, wr, ex, deadline_after(ts), mask));
}
