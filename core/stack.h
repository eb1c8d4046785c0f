/*
 * stack.h: goroutine stacks, each with its TLS block + TCB at the top.
 */
#ifndef GOSHIM_STACK_H
#define GOSHIM_STACK_H

#include <stddef.h>

struct g;

void stack_init(void);
/* GOSHIM_STACK_SIZE's value: decimal digits and an optional k/K or m/M;
 * 0 for anything else or a size past SIZE_MAX. */
size_t stack_parse_size(const char *s);
size_t stack_default_size(void);
size_t stack_page_size(void);
/* Map a stack of stacksize bytes (TLS included, as glibc counts it) plus
 * a guard, and build the TCB at its top. 0, EINVAL or EAGAIN. */
int stack_alloc(struct g *gp, size_t stacksize, size_t guardsize);
/* Use the caller's stack [addr, addr+size): the TCB goes at its top. */
int stack_use_user(struct g *gp, void *addr, size_t size);
/* Give the kernel back the touched pages of a cached stack. */
void stack_release_pages(struct g *gp);
void stack_free(struct g *gp);
/* In a child of fork: the chunk lock another thread may have held. */
void stack_fork_child(void);

#endif
