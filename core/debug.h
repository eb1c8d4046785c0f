/*
 * debug.h: the Go-style diagnostics: GOSHIM_DEBUG (schedtrace, scheddetail,
 * dumponexit, dumponquit), the SIGQUIT goroutine dump, and the
 * goroutine list with backtraces that checkdead shares.
 *
 * Everything runs off the scheduler's hot path: schedtrace and the SIGQUIT
 * dump are done by sysmon (a real thread that holds no runtime lock when
 * it calls debug_sysmon), the exit dump by the exiting goroutine.
 */
#ifndef GOSHIM_DEBUG_H
#define GOSHIM_DEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct g;

/* runtime.c, as the library loads with goshim enabled: parse
 * GOSHIM_DEBUG (no side effects). */
void debug_load(void);
/* GOSHIM_DEBUG asks for chaos mode (chaos.h), whether or not it has
 * started. */
bool debug_chaos_asked(void);
/* runtime.c, as the scheduler starts: start chaos mode, open GOSHIM_TRACE,
 * install the SIGQUIT handler, arm the exit hooks. */
void debug_start(void);
/* The SIGQUIT handler leaves a child of fork, and comes back (fork.c). */
void debug_fork_child(void);
void debug_fork_resume(void);

/* GOSHIM_DEBUG's value into the settings; bad items are named on stderr
 * and ignored. debug_load calls it; the fuzz harness too. */
void parse_debug(const char *spec);

/* sysmon, at the top of every round (before taking any lock). */
void debug_sysmon(void);

/* schedtrace.c: print one SCHED line (and the P, M, G lines); the times
 * count from schedtrace_start. */
void schedtrace(bool detailed, int64_t now);
void schedtrace_start(int64_t now);

/* traceback.c: print every goroutine, Go's way, on stderr: state, wait
 * reason and time, and a backtrace from its saved registers. self is the
 * goroutine doing the dump (its own stack is unwound live), or NULL.
 * Takes no lock: allgs is read as it is (Gs are never unlinked). */
void goroutines_dump(const struct g *self);
/* The same, each piece of text handed to w instead (`goshim dump`). */
typedef void dump_write_fn(const char *s, size_t n);
void goroutines_dump_to(const struct g *self, dump_write_fn *w);

/* dumpreq.c: `goshim dump PID`, a dump asked for from outside.
 * On sysmon's thread as it starts: name it (the tool finds it by name)
 * and learn its tid. */
void dumpreq_sysmon_start(void);
/* A thread sysmon created (an M): the name sysmon had before it took
 * its own, as if the thread had been made by the program. */
void dumpreq_thread_name(void);
/* sysmon, each round: answer a request, if one came. */
void dumpreq_poll(void);
/* The pipe a dump is being written to (fd_vacate moves it when the
 * program takes its number). */
bool dumpreq_fd_is(int fd);
void dumpreq_fd_set(int fd);

#endif
