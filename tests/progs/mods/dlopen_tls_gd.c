/*
 * dlopen_tls_gd.c -> dlopen_tls_gd.so: a module with ordinary
 * global-dynamic TLS (__tls_get_addr), allocated lazily per thread by ld.so
 * from the thread's DTV after tests/progs/dlopen_tls dlopen()s it.
 */
#include "dlopen_tls_mod.h"

#define GD __attribute__((tls_model("global-dynamic")))

__thread int dlopen_tls_gd_int GD = GD_INT_INIT;
__thread char dlopen_tls_gd_str[GD_STR_N] GD = GD_STR_INIT;
__thread long dlopen_tls_gd_arr[GD_ARR_N] GD = GD_ARR_INIT;
__thread long dlopen_tls_gd_bss[GD_BSS_N] GD;

void dlopen_tls_gd_view(struct tls_view *v)
{
	v->i = &dlopen_tls_gd_int;
	v->l = dlopen_tls_gd_arr;
	v->arr = NULL;
	v->str = dlopen_tls_gd_str;
	v->bss = (unsigned char *)dlopen_tls_gd_bss;
}

long dlopen_tls_gd_sum(void)
{
	long s = dlopen_tls_gd_int;
	for (int k = 0; k < GD_STR_N; k++)
		s += (long)(unsigned char)dlopen_tls_gd_str[k] * (k + 1);
	for (int k = 0; k < GD_ARR_N; k++)
		s += dlopen_tls_gd_arr[k] * (k + 5);
	for (int k = 0; k < GD_BSS_N; k++)
		s += dlopen_tls_gd_bss[k] * (k + 7);
	return s;
}
