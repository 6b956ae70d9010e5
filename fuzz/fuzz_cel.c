/*
 * fuzz_cel.c - the DRA selector CEL subset (mu_cel_check, mu_cel_eval) with
 * untrusted expressions, evaluated against a fixed device with every kind
 * of attribute and a capacity.  Input: the expression (a NUL ends it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "muster/cel.h"

static const mu_cel_attr_t attrs[] = {
	{"d.com/s", MU_CEL_STRING, 0, false, "x"},
	{"d.com/i", MU_CEL_INT, 7, false, NULL},
	{"d.com/b", MU_CEL_BOOL, 0, true, NULL},
	{"d.com/v", MU_CEL_VERSION, 0, false, "1.2.3"},
};
static const mu_cel_attr_t caps[] = {{"d.com/m", MU_CEL_QUANTITY, 1000000, false, NULL}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	char err[256];
	bool m;
	mu_cel_device_t dev = {"d.com", attrs, 4, caps, 1};
	mu_cel_check(s, err, sizeof err);
	mu_cel_eval(s, &dev, &m, err, sizeof err);
	free(s);
	return 0;
}
