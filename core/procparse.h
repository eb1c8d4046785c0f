/*
 * procparse.h: the /proc text files the runtime reads, parsed without I/O
 * (the callers read them with raw system calls), so that unit tests and
 * the fuzz harnesses (tests/fuzz) reach exactly the code the library runs.
 */
#ifndef GOSHIM_PROCPARSE_H
#define GOSHIM_PROCPARSE_H

#include <stddef.h>
#include <stdint.h>

/* The value of a "Name:\tN" line of /proc/.../status (name given with
 * its colon, "Threads:"), or -1 when it is missing, not a number or
 * more than INT_MAX. */
int proc_status_field(const char *buf, size_t len, const char *name);

/* The scheduler state of a /proc/.../stat line ('R', 'S', 'D', ...; 0 when
 * the line is malformed) and in *blocked its 'blocked' field (32: the
 * first 31 signals the thread blocks), all ones when that is missing. */
char proc_stat_state(const char *buf, size_t len, uint64_t *blocked);

/* A line of /proc/.../maps ("lo-hi perms offset dev inode path"): 1 and
 * its range in [*lo, *hi) when it is an executable mapping of no file
 * (inode 0, no path: code a JIT compiler made), else 0 (a file's, a
 * named one like [vdso], a malformed line). */
int proc_maps_anon_exec(const char *buf, size_t len, uintptr_t *lo,
			uintptr_t *hi);

#endif
