/*
 * fuzz_mig.c - libFuzzer target for the MIG layout text (mu_mig_parse_node,
 * the muster.io/mig-layout annotation that `muster scheduler
 * --mig-layouts` reads back from Nodes): the input is parsed for every
 * MIG model and for any model; every layout it accepts must be valid
 * (mu_mig_valid) and read back the same after mu_mig_format_node().  A
 * broken promise aborts, so that the fuzzer reports it like a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muster/error.h"
#include "muster/mig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses s for m (NULL: any model) and checks the promises. */
static void one(const mu_mig_model_t *m, const char *s)
{
	mu_mig_gpu_t g[MU_MAX_GPUS], h[MU_MAX_GPUS];
	char why[200], text[MU_MAX_GPUS * 160];
	memset(why, 0x55, sizeof why);
	int n = mu_mig_parse_node(m, s, g, MU_MAX_GPUS, why, sizeof why);
	if (n < 0) {
		if (!memchr(why, '\0', sizeof why))
			abort();
		return;
	}
	if (n < 1 || n > MU_MAX_GPUS)
		abort();
	const mu_mig_model_t *fm = m ? m : mu_mig_model("A100-80GB");
	for (int i = 0; m && i < n; i++)
		if (!mu_mig_valid(m, &g[i]))
			abort();
	if (!m)
		return; /* any model: the profile indexes are that model's */
	size_t k = mu_mig_format_node(fm, g, n, text, sizeof text);
	if (k >= sizeof text || mu_mig_parse_node(m, text, h, MU_MAX_GPUS, why, sizeof why) != n)
		abort();
	for (int i = 0; i < n; i++)
		if (!mu_mig_same(&g[i], &h[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	one(NULL, s);
	one(mu_mig_model("A100-40GB"), s);
	one(mu_mig_model("A100-80GB"), s);
	one(mu_mig_model("H100-80GB"), s);
	free(s);
	return 0;
}
