/*
 * fuzz_crd.c - libFuzzer target for CustomResourceDefinitions: the CRD
 * check (mu__validate_crd, which walks the structural schema), the type
 * registry (mu__types_put) and pruning, defaulting and validation of a
 * custom object against the schema (crd.c).  The input is a JSON body
 * {"schema": <openAPIV3Schema>, "object": <a custom object>}, decoded as
 * request bodies are; the first byte says whether unknown fields are
 * pruned.  Invariants: messages stay NUL-terminated and within their
 * bounds, a CRD that passes registers, and pruning twice finds nothing new
 * the second time (unless the schema has defaults, which may bring fields
 * of their own).  Ratcheting: the CRD updated to itself has at most the
 * create's causes (the old CRD's violations are kept), and an object
 * updated to itself has none unless a rule reads oldSelf (kube never
 * ratchets those); an "old" object in the input is validated against.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/crd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_verr(const mu__verr_t *e)
{
	if (e->n < 0 || e->n > MU__VERR_MAX)
		abort();
	for (int i = 0; i < e->n; i++)
		if (!memchr(e->c[i].msg, '\0', sizeof e->c[i].msg) || !memchr(e->c[i].field, '\0', sizeof e->c[i].field))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool prune = data[0] & 1;
	char err[512];
	json_t *in = mu__json_body((const char *)data + 1, size - 1, 1 << 20, err, sizeof err);
	if (!in)
		return 0;
	json_t *schema = json_object_get(in, "schema"), *obj = json_object_get(in, "object");
	json_t *crd = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:b, s:b, s:{s:O}}]}}",
				"apiVersion", "apiextensions.k8s.io/v1", "kind", "CustomResourceDefinition", "metadata",
				"name", "widgets.example.com", "spec", "group", "example.com", "scope", "Namespaced",
				"names", "plural", "widgets", "kind", "Widget", "versions", "name", "v1", "served", 1,
				"storage", 1, "schema", "openAPIV3Schema", schema ? schema : json_null());
	mu__verr_t e = {0}, eu = {0};
	mu__validate_crd(crd, NULL, &e);
	check_verr(&e);
	mu__validate_crd(crd, crd, &eu);
	check_verr(&eu);
	if (eu.n > e.n)
		abort();
	mu__types_t *r = NULL;
	if (e.n == 0 && mu__types_new(&r) == MU_OK) {
		char msg[200];
		int rt = mu__types_put(r, crd, msg, sizeof msg);
		const mu__crdtype_t *c = mu__crdtype(mu__type(r, rt));
		if (rt < MU__RT_COUNT || !c)
			abort();
		if (json_is_object(obj)) {
			mu__unknown_t u;
			mu__crd_prune(c, 0, obj, prune, &u);
			if (u.n < 0 || !memchr(u.text, '\0', sizeof u.text))
				abort();
			if (prune) {
				mu__unknown_t again;
				char *text = json_dumps(schema, JSON_COMPACT);
				mu__crd_prune(c, 0, obj, true, &again);
				if (text && !strstr(text, "\"default\"") && again.n != 0)
					abort();
				free(text);
			}
			mu__verr_t e2 = {0}, e3 = {0}, e4 = {0};
			mu__crd_validate(c, 0, obj, NULL, &e2);
			check_verr(&e2);
			json_t *same = json_deep_copy(obj);
			mu__crd_validate(c, 0, obj, same, &e3);
			check_verr(&e3);
			char *st = json_dumps(schema, JSON_COMPACT);
			if (st && !strstr(st, "oldSelf") && e3.n != 0)
				abort();
			free(st);
			json_decref(same);
			mu__crd_validate(c, 0, obj, json_object_get(in, "old"), &e4);
			check_verr(&e4);
			json_t *cells = json_array();
			mu__crd_row(c, obj, 0, cells);
			if ((int)json_array_size(cells) != c->t.ncols)
				abort();
			json_decref(cells);
		}
		mu__types_free(r);
	}
	json_decref(crd);
	json_decref(in);
	return 0;
}
