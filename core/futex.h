/*
 * futex.h: the emulated side of private futexes (futex.c): goroutines
 * that wait on a futex word park in a table keyed by its address. The
 * system call's decoding, its errors and the kernel's own waiters are
 * shim/futex.c's.
 */
#ifndef GOSHIM_FUTEX_H
#define GOSHIM_FUTEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* futex_wait could not take the table here (a signal handler interrupted
 * this thread inside it): wait in the kernel instead. */
#define FUTEX_NOT_HERE (-1)

/* shared: a non-PRIVATE futex (futex_private_page says which may be
 * here), which meets only shared calls. */
/* Sleep while *addr == val until a wake whose bitset meets bitset, or the
 * deadline (monotonic ns, -1: none): 0 (woken, which may be spurious),
 * EAGAIN (*addr != val), ETIMEDOUT (the deadline, or a signal ended it:
 * intr_end says), or FUTEX_NOT_HERE. */
int futex_wait(const _Atomic uint32_t *addr, bool shared, uint32_t val,
	       uint32_t bitset, int64_t deadline);
/* Wake up to n (>= 1) waiters on addr whose bitset meets bitset; how many. */
int futex_wake(const void *addr, bool shared, int n, uint32_t bitset);
/* Wake up to nwake waiters on from and move up to nreq of the rest to to;
 * with cmp, only if *from == cmpval (else -EAGAIN). Returns how many it
 * woke, *moved how many it moved. */
int futex_requeue(const _Atomic uint32_t *from, const void *to, bool shared,
		  int nwake, int nreq, bool cmp, uint32_t cmpval, int *moved);
/* FUTEX_WAKE_OP: the operation encoded in op on *addr2, then up to n1
 * (>= 1) waiters on addr1 woken and, if its comparison held, up to n2
 * (>= 1) on addr2. Returns 1 or 0 (the comparison), or -ENOSYS for an
 * unknown comparison (the operation is done, nobody is woken); *woken1,
 * *woken2: how many. The operation must be valid (futex_op_valid). */
int futex_wake_op(const void *addr1, _Atomic uint32_t *addr2, bool shared,
		  int n1, int n2, uint32_t op, int *woken1, int *woken2);
/* The kernel's checks and arithmetic of FUTEX_WAKE_OP's encoded op. */
bool futex_op_valid(uint32_t op);
int futex_op_apply(_Atomic uint32_t *addr, uint32_t op);
/* A shared futex at addr is keyed by the kernel as a private one: the
 * page is this process's own (/proc/self/pagemap, opened at start-up and
 * again in a child of fork by futex_pagemap_open). */
bool futex_private_page(const void *addr);
void futex_pagemap_open(void);
/* In the child of fork: no waiters, nothing locked. */
void futex_fork_child(void);

#endif
