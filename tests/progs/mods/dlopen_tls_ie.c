/*
 * dlopen_tls_ie.c -> dlopen_tls_ie.so: a module whose TLS uses the
 * initial-exec model (R_X86_64_TPOFF64, DF_STATIC_TLS). ld.so must place its
 * block in the static TLS surplus of every thread when tests/progs/dlopen_tls
 * dlopen()s it, and initialise that block in the threads that already exist.
 */
#include "dlopen_tls_mod.h"

#define IE __attribute__((tls_model("initial-exec")))

static __thread int ie_int IE = IE_INT_INIT;
static __thread long ie_long IE = IE_LONG_INIT;
static __thread int ie_arr[IE_ARR_N] IE = IE_ARR_INIT;
static __thread unsigned char ie_bss[IE_BSS_N] IE;

void dlopen_tls_ie_view(struct tls_view *v)
{
	v->i = &ie_int;
	v->l = &ie_long;
	v->arr = ie_arr;
	v->str = NULL;
	v->bss = ie_bss;
}

long dlopen_tls_ie_sum(void)
{
	long s = ie_int + ie_long;
	for (int k = 0; k < IE_ARR_N; k++)
		s += (long)ie_arr[k] * (k + 1);
	for (int k = 0; k < IE_BSS_N; k++)
		s += (long)ie_bss[k] * (k + 3);
	return s;
}
