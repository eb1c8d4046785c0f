/*
 * fuzz_debug: GOSHIM_DEBUG values through parse_debug, as debug_load
 * reads them. The settings it sets are static to debug.c, so this looks
 * for memory and undefined-behaviour errors only (ASan, UBSan): the
 * parse walks items with strcspn and must stay inside the string.
 */
#include "../../core/debug.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	parse_debug(s);
	free(s);
	return 0;
}
