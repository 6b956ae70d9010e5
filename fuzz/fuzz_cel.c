/*
 * fuzz_cel.c - the DRA selector CEL subset (mu_cel_check, mu_cel_eval) with
 * untrusted expressions, evaluated against a fixed device with every kind
 * of attribute and a capacity; and the same text as a CRD validation rule
 * (mu_cel_rule_check, mu_cel_rule_eval, with oldSelf mu_cel_rule_eval_old)
 * on a small document, lists walkable by all() and exists().  Input: the expression (a NUL ends it).
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

/* A document for validation rules: self = {n: 7, s: "x", l: [7], m: {n: 7}, d: 1.5}. */
typedef struct node {
	int kind;
	const char *const *keys;
	const struct node *vals;
	size_t n;
} node_t;

static int d_kind(const void *n, int64_t *i, bool *b, const char **s)
{
	*i = 7;
	*b = true;
	*s = "x";
	return ((const node_t *)n)->kind;
}

static const void *d_field(const void *map, const char *name)
{
	const node_t *x = map;
	for (size_t k = 0; x->keys && k < x->n; k++)
		if (!strcmp(x->keys[k], name))
			return &x->vals[k];
	return NULL;
}

static size_t d_size(const void *n)
{
	return ((const node_t *)n)->n;
}

static const node_t leaf[] = {{MU_CEL_NODE_INT, NULL, NULL, 0}};
static const char *const mkeys[] = {"n"};
static const char *const skeys[] = {"n", "s", "l", "m", "d"};
static const node_t svals[] = {
	{MU_CEL_NODE_INT, NULL, NULL, 0}, {MU_CEL_NODE_STRING, NULL, NULL, 0},
	{MU_CEL_NODE_LIST, NULL, leaf, 1}, {MU_CEL_NODE_MAP, mkeys, leaf, 1}, {MU_CEL_NODE_DOUBLE, NULL, NULL, 0},
};
static const node_t self = {MU_CEL_NODE_MAP, skeys, svals, 5};
static const void *d_elem(const void *list, size_t i)
{
	const node_t *x = list;
	return i < x->n ? &x->vals[i] : NULL;
}

static bool d_equal(const void *a, const void *b)
{
	return a == b;
}

static const mu_cel_doc_t doc = {d_kind, d_field, d_size, d_elem, d_equal};

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
	mu_cel_rule_check(s, err, sizeof err);
	mu_cel_rule_eval(s, &doc, &self, &m, err, sizeof err);
	bool tr;
	mu_cel_rule_compile(s, &tr, err, sizeof err);
	mu_cel_rule_eval_old(s, &doc, &self, &svals[3], &m, err, sizeof err);
	free(s);
	return 0;
}
