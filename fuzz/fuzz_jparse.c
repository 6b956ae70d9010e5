/*
 * fuzz_jparse.c - libFuzzer target for the daemon's JSON parser
 * (src/util/jparse.c) against json_loadb.  Whatever the single pass
 * (mu__json_fast) takes, json_loadb must take too, with an equal tree
 * whose members print in the same order; mu__json_loadb must give
 * json_loadb's answer (NULL where it gives NULL).  It must never read
 * past the input (which has no NUL after it here).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muster/jpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size ? size : 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	json_t *want = json_loadb(s, size, 0, NULL), *got = mu__json_fast(s, size), *all = mu__json_loadb(s, size);
	if (got) {
		if (!want || !json_equal(want, got))
			abort();
		char *a = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY), *b = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!a || !b || strcmp(a, b))
			abort();
		free(a);
		free(b);
	}
	if ((want == NULL) != (all == NULL) || (want && !json_equal(want, all)))
		abort();
	json_decref(want);
	json_decref(got);
	json_decref(all);
	free(s);
	return 0;
}
