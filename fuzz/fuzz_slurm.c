/*
 * fuzz_slurm.c - libFuzzer target for the readers of Slurm's output in
 * `muster eval slurm` (src/eval/slurm_parse.c): the input, split at
 * newlines, goes line by line through mu_slurm_parse_line() (job
 * completion log and `scontrol -o show job` records) and whole through
 * mu_slurm_parse_time().  The input is not NUL-terminated: the readers
 * must keep to the lengths they are given.
 */
#include <stdint.h>
#include <string.h>

#include "muster/eval_slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	int64_t t;
	(void)mu_slurm_parse_time(s, size, &t);
	size_t b = 0;
	while (b < size) {
		const char *nl = memchr(s + b, '\n', size - b);
		size_t e = nl ? (size_t)(nl - s) : size;
		mu_slurm_line_t x;
		if (mu_slurm_parse_line(s + b, e - b, &x) == MU_OK && x.id < 0)
			__builtin_trap(); /* ids are digits only */
		const char *v;
		size_t n;
		if (mu_slurm_field(s + b, e - b, "StartTime", &v, &n) == MU_OK &&
		    (v < s + b || v + n > s + e))
			__builtin_trap(); /* the value lies inside the line */
		b = e + 1;
	}
	return 0;
}
