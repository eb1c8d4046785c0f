/*
 * dlopen_tls_mod.h: the interface between tests/progs/dlopen_tls.c and the
 * two modules it dlopen()s (dlopen_tls_ie.so, dlopen_tls_gd.so): initial
 * values of the modules' __thread variables and the views the modules hand
 * out. Each module fills a view with the addresses of its TLS variables as
 * seen by the calling thread, computed by the module's own TLS access code.
 */
#ifndef DLOPEN_TLS_MOD_H
#define DLOPEN_TLS_MOD_H

#include <stddef.h>

/* dlopen_tls_ie.so: initial-exec TLS (lands in the static TLS surplus). */
#define IE_INT_INIT	0x1e1e1e1e
#define IE_LONG_INIT	(-0x123456789abcL)
#define IE_ARR_N	16
#define IE_ARR(k)	((k) * 7 + 3)
#define IE_ARR_INIT { IE_ARR(0), IE_ARR(1), IE_ARR(2), IE_ARR(3), \
	IE_ARR(4), IE_ARR(5), IE_ARR(6), IE_ARR(7), IE_ARR(8), IE_ARR(9), \
	IE_ARR(10), IE_ARR(11), IE_ARR(12), IE_ARR(13), IE_ARR(14), IE_ARR(15) }
#define IE_BSS_N	48	/* zero-initialised: .tbss */

/* dlopen_tls_gd.so: ordinary global-dynamic TLS. */
#define GD_INT_INIT	0x6d6d6d6d
#define GD_STR_INIT	"global-dynamic TLS"
#define GD_STR_N	32
#define GD_ARR_N	8
#define GD_ARR(k)	(1000L * (k) - 77)
#define GD_ARR_INIT { GD_ARR(0), GD_ARR(1), GD_ARR(2), GD_ARR(3), \
	GD_ARR(4), GD_ARR(5), GD_ARR(6), GD_ARR(7) }
#define GD_BSS_N	8	/* longs, zero-initialised */

struct tls_view {
	int *i;			/* IE_INT_INIT / GD_INT_INIT */
	long *l;		/* ie: IE_LONG_INIT; gd: GD_ARR_INIT */
	int *arr;		/* ie: IE_ARR_INIT; gd: NULL */
	char *str;		/* ie: NULL; gd: GD_STR_INIT */
	unsigned char *bss;	/* ie: IE_BSS_N zero bytes; gd: GD_BSS_N zero longs */
};

/* "dlopen_tls_ie_view" / "dlopen_tls_gd_view": fill *v for the caller. */
typedef void view_fn(struct tls_view *v);
/*
 * "dlopen_tls_ie_sum" / "dlopen_tls_gd_sum": a checksum of the caller's
 * TLS variables, read by the module's own code (not through the view).
 */
typedef long sum_fn(void);

#endif
