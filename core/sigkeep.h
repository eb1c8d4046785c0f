/*
 * sigkeep.h: the siginfo of signals the runtime holds (sigkeep.c).
 */
#ifndef GOSHIM_SIGKEEP_H
#define GOSHIM_SIGKEEP_H

#include <signal.h>
#include <stdbool.h>

struct g;
struct sigkept;

/* Keep an instance of si->si_signo, with its siginfo, for gp (NULL: for
 * the process, not yet given to a goroutine). A standard signal is kept
 * at most once per holder, as the kernel keeps it pending at most once;
 * a real-time one queues. Async-signal-safe. */
void sigkeep_put(struct g *gp, const siginfo_t *si);
/* The oldest instance of sig gp holds, into *si, and taken: false if gp
 * holds none (the caller makes the siginfo a tgkill would). *more says
 * whether gp holds another. */
bool sigkeep_take(struct g *gp, int sig, siginfo_t *si, bool *more);
/* Whether gp (NULL: the process) holds an instance of sig. */
bool sigkeep_holds(struct g *gp, int sig);
/* Whether sig queues (a real-time signal the program may use): its kept
 * instances, not its pending bit, are what is pending. */
bool sigkeep_queues(int sig);
/* Whether a delivery of sig that finds no kept instance is real: a
 * standard or internal signal (its bit is its one instance), or a
 * real-time one an instance of which could not be kept. */
bool sigkeep_bare_ok(int sig);
/* The kernel gave gp an instance of a queueing signal directly, si: if
 * older ones are kept (for the process, for gp), si takes its place behind
 * them and *si becomes the oldest; true then, and *more (si is kept). */
bool sigkeep_behind(struct g *gp, siginfo_t *si, bool *more);
/* Give every instance of sig the process holds to gp, in order. */
void sigkeep_give(struct g *gp, int sig);
/* Give every instance of sig gp holds back to the process, ahead of what
 * the process holds (they are older): gp ended before it took them. */
void sigkeep_return(struct g *gp, int sig);
/* Drop what gp (NULL: the process) holds of sig, or of every signal
 * (sig 0): the signal was ignored, or gp exited. */
void sigkeep_drop(struct g *gp, int sig);
/* In a fork child: nothing is pending there (gp, the forker, and every
 * other G hold nothing). */
void sigkeep_fork_child(void);

#endif
