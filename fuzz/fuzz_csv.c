/*
 * fuzz_csv.c - libFuzzer target for the CSV loaders: the input is loaded as
 * a CSV trace (NUL-terminated copy), then validated, loaded once more
 * through mu_load_buffer() (after which validation must find repeated
 * names), and released.  The input's size picks the Philly options
 * (defaults for half the sizes), so that windows, max_jobs and gang
 * splitting get fuzzed too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muster/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	mu_load_opts_t o;
	mu_load_opts_defaults(&o);
	if (size & 64) {
		o.gpus_per_node = 1 + (int32_t)(size % 8);
		o.from_s = size & 8 ? 60 : 0;
		o.to_s = size & 16 ? 86400 : 0;
		o.max_jobs = size & 32 ? 3 : 0;
	}
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	if (mu_load_csv("fuzz.csv", buf, size, &o, &s, &d) == MU_OK) {
		mu_specs_validate(&s, &d);
		/* again through the format sniffing and the queue merging, into
		 * the same set: names now repeat, which validation must catch */
		if (mu_load_buffer("fuzz.txt", buf, size, &o, &s, &d) == MU_OK &&
		    s.njobs + s.nnodes > 0 && mu_specs_validate(&s, &d) == MU_OK)
			abort();
	}
	mu_specs_release(&s);
	free(buf);
	return 0;
}
