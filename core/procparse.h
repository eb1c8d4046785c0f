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

#endif
