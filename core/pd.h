/*
 * pd.h: the poll descriptor, shared by the fd table (fdtab.c) and the
 * poller (netpoll.c); nothing outside core/ sees it.
 *
 * Every fd number has one pd (Go's pollDesc, with what Go keeps in
 * internal/poll.FD beside it): in a table of chunks made on demand up to
 * the RLIMIT_NOFILE hard limit and never freed, since a waker may still
 * look at one. seq names the file behind the number: it moves whenever the
 * table forgets the fd (close, dup2 onto it, a new socket or pipe there),
 * and a waiter or an epoll event carrying an older seq is about a file
 * that is gone.
 *
 * fdtab.c writes kind, socktype, flags and seq; netpoll.c writes count and
 * wait and sets PD_REGISTERED. Both under lock (the flags PD_REGISTERED
 * through pd_note), so a reset and a waiter queueing itself see each other.
 */
#ifndef GOSHIM_PD_H
#define GOSHIM_PD_H

#include "fdtab.h"
#include "lock.h"
#include "netpoll.h"

#define PD_CHUNK 512

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
	_Atomic int64_t alive_at; /* epoll last showed the registration */
	struct netpoll_link *wait[2];
	_Atomic uint32_t serial; /* fd_serial_lock: 0 free, 1 held, 2 waited */
	struct rlock fl_lock;	 /* fd_nowait_call vs the program's flags */
};

/* fdtab.c. fd's pd; NULL beyond the table, or (!alloc) in a chunk never
 * used. */
struct pd *pd_get(int fd, bool alloc);
/* Record something learnt about fd, unless it was closed meanwhile (its
 * seq is no longer seq). */
void pd_note(struct pd *pd, uint32_t seq, enum fd_kind kind, int socktype,
	     uint8_t flags);
/* fn on every pd of the table's chunks that exist (sysmon's look at the
 * waits, netpoll_recheck: no lock, fn takes the pd's). */
void pd_each(void (*fn)(struct pd *pd, void *arg), void *arg);
/* The lock under which the runtime's fds are made, moved and closed (the
 * table is made first: making it takes the lock). */
void fdtab_lock(void);
void fdtab_unlock(void);
/* fd moved high in the table (its old number closed), or fd itself if
 * nothing is free up there; and marked as the runtime's (fdtab_lock
 * held). */
int fd_move_high(int fd);
void fd_runtime_mark(int fd);
/* In the child of fork (netpoll_fork_child): every runtime fd closed,
 * every fd forgotten. */
void fdtab_fork_child(void);

/* netpoll.c. Lock of pd held: every waiter on it, of both modes, taken off
 * and pushed on *list if this call wakes it (Go's runtime_pollUnblock);
 * netpoll_deliver readies them after the unlock, and says how many. */
void netpoll_unblock(struct pd *pd, struct waiter **list);
int netpoll_deliver(struct waiter *list);
/* fd is the poller's own (epoll, its eventfd); fdtab_lock held, fd_vacate
 * moves it to n. */
bool netpoll_fd_is(int fd);
void netpoll_fd_set(int fd, int n);

#endif
