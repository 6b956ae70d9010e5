/*
 * fuzz_field_validation.c - libFuzzer target for field validation against
 * the generated schemas (mu__schema_check).  The first byte picks a kind of
 * the schema registry and whether unknown fields are pruned; the rest is a
 * body decoded as request bodies are.  Invariants: the description of the
 * unknown fields stays NUL-terminated, pruning finds nothing the second
 * time, and a body without unknown fields is left unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const mu__sroot_t *root = &mu__sroots[(data[0] & 0x7f) % mu__nsroots];
	bool prune = data[0] & 0x80;
	char err[512];
	json_t *o = mu__json_body((const char *)data + 1, size - 1, 1 << 20, err, sizeof err);
	if (!o)
		return 0;
	int model = mu__schema_model(root->group, root->kind);
	if (model < 0)
		abort();
	json_t *before = json_deep_copy(o);
	mu__unknown_t u;
	mu__schema_check(o, model, prune, &u);
	if (u.n < 0 || !memchr(u.text, '\0', sizeof u.text))
		abort();
	if (u.n == 0 && !json_equal(o, before))
		abort();
	if (!prune && !json_equal(o, before))
		abort();
	if (prune) {
		mu__unknown_t again;
		mu__schema_check(o, model, true, &again);
		if (again.n != 0)
			abort();
	}
	json_decref(before);
	json_decref(o);
	return 0;
}
