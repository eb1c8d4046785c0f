/*
 * netpoll.c: goroutines waiting for fds (Go's netpoll.go and
 * netpoll_epoll.go, on the pds of fdtab.c).
 *
 * One epoll instance, edge-triggered, made at start-up (in a child of
 * fork, on its first wait). It and its eventfd are runtime fds, high in
 * the fd table and hidden from the program (fdtab.c). An fd is added on
 * its first wait, for everything at once (EPOLLIN|EPOLLOUT|EPOLLRDHUP|
 * EPOLLPRI|EPOLLET), and the epoll data carries its number and its pd's
 * seq, so an event for a file the table has forgotten is dropped.
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
 * and its number reused by a call goshim does not see: then the kernel
 * has dropped the registration with the old file, and the new one must be
 * added. Adding again on every wait (EEXIST, the common answer) cost a
 * system call per wait on epoll's one mutex, 5% of a 10,000-connection
 * echo server's CPU. So a registration epoll has shown alive within
 * NP_TRUST_NS (an add that found it, an event for it) is trusted. A wait
 * that trusted one is woken by sysmon once the trust has run out
 * (netpoll_recheck, every NP_RECHECK_NS): its caller tries again and
 * waits again, adding the fd first. A file swapped behind goshim's back
 * is found within about NP_TRUST_NS + NP_RECHECK_NS; a busy fd (events
 * come) is never added again, and an idle one once per idle spell.
 *
 * findrunnable polls without blocking when its queues are empty, and the
 * M that finds nothing blocks in epoll until the next timer (netpoll_block);
 * it stays off the idle list, so new work wakes another M, and
 * netpoll_break (an eventfd) brings it back for an earlier timer or when
 * the last waiter leaves (so checkdead can see an idle process again).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include "pd.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "timer.h"
#include "trace.h"
#include "waiter.h"

#define NEVENTS 128
#define BREAK_DATA UINT64_MAX
#define NP_TRUST_NS ((int64_t)250 * 1000 * 1000)
#define NP_RECHECK_NS ((int64_t)100 * 1000 * 1000)

static struct {
	_Atomic bool up;   /* epfd and efd exist */
	_Atomic int epfd, efd; /* moved by fd_vacate */
	_Atomic int32_t efd_users; /* between reading efd and using it */
	_Atomic int32_t waiters;  /* goroutines parked in netpoll_wait */
	_Atomic bool blocked;	  /* an M blocks in netpoll_block */
	_Atomic uint32_t wake_sig; /* a break is pending in efd */
} np = { .epfd = -1, .efd = -1 };

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

int netpoll_deliver(struct waiter *list)
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

/* Under pd's lock. */
void netpoll_unblock(struct pd *pd, struct waiter **list)
{
	take_waiters(pd, 0, list);
	take_waiters(pd, 1, list);
}

/* pd's waiters that trusted its registration, now that epoll has shown
 * nothing for NP_TRUST_NS: woken, to try again and add the fd. */
static void recheck_pd(struct pd *pd, void *arg)
{
	const int64_t *now = arg;
	struct waiter *list = NULL;

	if ((!__atomic_load_n(&pd->wait[0], __ATOMIC_RELAXED) &&
	     !__atomic_load_n(&pd->wait[1], __ATOMIC_RELAXED)) ||
	    *now - atomic_load_explicit(&pd->alive_at, memory_order_relaxed) <
		    NP_TRUST_NS)
		return;
	spin_lock(&pd->lock);
	for (int m = 0; m < 2; m++) {
		for (struct netpoll_link **pp = &pd->wait[m]; *pp;) {
			struct netpoll_link *l = *pp;
			if (!l->trusted) {
				pp = &l->next;
				continue;
			}
			*pp = l->next;
			l->queued = false;
			if (waiter_claim(l->w)) {
				l->w->next = list;
				list = l->w;
			}
		}
	}
	spin_unlock(&pd->lock);
	netpoll_deliver(list);
}

void netpoll_recheck(int64_t now)
{
	static int64_t last;

	if (now - last < NP_RECHECK_NS ||
	    atomic_load_explicit(&np.waiters, memory_order_relaxed) == 0)
		return;
	last = now;
	int64_t coarse = nanotime_coarse();
	pd_each(recheck_pd, &coarse);
}

bool netpoll_fd_is(int fd)
{
	return fd == atomic_load(&np.epfd) || fd == atomic_load(&np.efd);
}

void netpoll_fd_set(int fd, int n)
{
	if (fd == atomic_load(&np.epfd)) {
		atomic_store(&np.epfd, n);
		return;
	}
	atomic_store(&np.efd, n);
	/* Nobody may write the program's file by the old number: wait out
	 * whoever read it before. */
	while (atomic_load(&np.efd_users))
		arch_cpu_relax();
}

/* ---- epoll -------------------------------------------------------------- */

/* The child of fork shares the epoll instance with its parent: it makes
 * its own on its next wait (its copies are closed with the runtime's other
 * fds: fdtab_fork_child). Nobody waits: the waiters were the parent's. */
void netpoll_fork_child(void)
{
	atomic_store(&np.epfd, -1);
	atomic_store(&np.efd, -1);
	atomic_store(&np.efd_users, 0);
	atomic_store(&np.up, false);
	atomic_store(&np.waiters, 0);
	atomic_store(&np.blocked, false);
	atomic_store(&np.wake_sig, 0);
	fdtab_fork_child();
}

static bool poll_up(void)
{
	if (atomic_load_explicit(&np.up, memory_order_acquire))
		return true;
	fdtab_lock();
	if (!atomic_load(&np.up)) {
		/* Each is made at the lowest free number, then moved: a
		 * program's open racing this gets the next number, not the
		 * one it would natively (no call makes an fd at a chosen
		 * number). */
		int ep = (int)SYS1(SYS_epoll_create1, EPOLL_CLOEXEC), ef;
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = BREAK_DATA };
		if (ep >= 0)
			ep = fd_move_high(ep);
		ef = (int)SYS2(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (ef >= 0)
			ef = fd_move_high(ef);
		if (ep >= 0 && ef >= 0 &&
		    SYS4(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, ef, &ev) == 0) {
			fd_runtime_mark(ep);
			fd_runtime_mark(ef);
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
	fdtab_unlock();
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

/* Add fd to epoll, unless its registration is trusted (see the top:
 * *trusted says so). 0, EBADF, or EPERM: epoll cannot watch it (a regular
 * file; out of watches). */
static int pd_register(struct pd *pd, int fd, uint32_t seq, int64_t now,
		       bool *trusted)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLET,
		.data.u64 = (uint64_t)seq << 32 | (uint32_t)fd,
	};

	*trusted = (atomic_load_explicit(&pd->flags, memory_order_relaxed) &
		    PD_REGISTERED) &&
		   atomic_load_explicit(&pd->seq, memory_order_relaxed) ==
			   seq &&
		   now - atomic_load_explicit(&pd->alive_at,
					      memory_order_relaxed) <
			   NP_TRUST_NS &&
		   !sysmon_absent(); /* nobody would recheck */
	if (*trusted)
		return 0;
	long r = epoll_ctl_np(EPOLL_CTL_ADD, fd, &ev);
	if (r == -EEXIST) {
		if (atomic_load_explicit(&pd->flags, memory_order_relaxed) &
		    PD_REGISTERED) {
			atomic_store_explicit(&pd->alive_at, now,
					      memory_order_relaxed);
			return 0;
		}
		/* Left from an fd goshim forgot: carry our seq now. */
		r = epoll_ctl_np(EPOLL_CTL_MOD, fd, &ev);
	}
	if (r == 0) {
		atomic_store_explicit(&pd->alive_at, now,
				      memory_order_relaxed);
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

	while (*what)
		*buf++ = *what++;
	buf = print_int(buf, n != 1 ? n : r->fd);
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
	int64_t now = nanotime_coarse();
	waiter_init(&w);
	for (int i = 0; i < n && !ready; i++) {
		struct netpoll_req *r = &reqs[i];
		struct pd *pd = r->pd;
		bool trusted;
		int e;

		if (pd == NULL ||
		    (e = pd_register(pd, r->fd, r->seq, now, &trusted)) ==
			    EPERM)
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
				l->trusted = trusted;
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
	if (intr == ERESTART_CALL && deadline < 0)
		return ERESTART;
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

void netpoll_io_arm(struct netpoll_io *io, int fd, unsigned mode, bool rw)
{
	netpoll_arm(&io->r, fd, mode);
	io->rw = rw;
	io->nowait = !rw || fd_nowait(fd);
}

int netpoll_io_wait(struct netpoll_io *io, long n)
{
	int fd = io->r.fd;
	unsigned mode = io->r.modes;
	int e;

	if (n == -EOPNOTSUPP) {
		if (!io->rw)
			return EOPNOTSUPP;
		fd_lost_nowait(fd);
	} else {
		if (fd_nonblocking(fd))
			return EAGAIN;
		if (io->deadline == FD_DEADLINE_UNKNOWN)
			io->deadline =
				io->rw && fd_kind(fd) != FD_SOCKET
					? -1
					: fd_sock_deadline(fd, mode == NP_READ
								       ? SO_RCVTIMEO
								       : SO_SNDTIMEO);
		e = netpoll_wait(&io->r, 1, io->deadline);
		if (e == ETIMEDOUT)
			return EAGAIN;
		if (e != 0 && e != ERESTART)
			return e;
	}
	netpoll_io_arm(io, fd, mode, io->rw);
	return 0;
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
	int64_t polled = nanotime_coarse();
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
			atomic_store_explicit(&pd->alive_at, polled,
					      memory_order_relaxed);
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
	return netpoll_deliver(list);
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
