/*
 * once.h: once-only initialisation whose waiters park (see once.c).
 */
#ifndef GOSHIM_ONCE_H
#define GOSHIM_ONCE_H

#include <stdint.h>

/* Runs init once over every caller with this state word (zero: not run);
 * the others wait until it has returned. */
void once_run(_Atomic uint32_t *state, void (*init)(void));

#endif
