/*
 * fuzz_json_body.c - libFuzzer target for request bodies of `muster up`.
 * The first byte picks a resource type; the rest is a body decoded with
 * mu__json_body, then defaulted and validated as that type, turned into
 * an object version (label and field extraction), rendered as a table row,
 * and applied as a merge patch and as a strategic merge patch to a fixed
 * pod.  Broken invariants abort.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base_pod[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\","
	"\"labels\":{\"a\":\"b\"},\"finalizers\":[\"f\"]},\"spec\":{\"containers\":[{\"name\":\"c\","
	"\"image\":\"i\",\"env\":[{\"name\":\"E\",\"value\":\"1\"}]}],\"tolerations\":[{\"key\":\"k\"}]},"
	"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int n;
	const mu__rtype_t *types = mu__rtypes(&n);
	int rt = data[0] % n;
	char err[512];
	memset(err, 0x55, sizeof err);
	json_t *o = mu__json_body((const char *)data + 1, size - 1, 1 << 20, err, sizeof err);
	if (!o) {
		if (!memchr(err, '\0', sizeof err))
			abort();
		return 0;
	}
	if (json_is_array(o)) { /* a JSON patch body */
		json_t *d = json_loads(base_pod, 0, NULL);
		char perr[512];
		if (mu__json_patch(&d, o, perr, sizeof perr) != MU_OK && !memchr(perr, '\0', sizeof perr))
			abort();
		json_decref(d);
		json_decref(o);
		return 0;
	}
	if (!json_is_object(o))
		abort();
	/* patches against a fixed pod */
	json_t *t1 = json_loads(base_pod, 0, NULL), *t2 = json_loads(base_pod, 0, NULL);
	int rc1 = mu__merge_patch(t1, o), rc2 = mu__strategic_patch(t2, o);
	if ((rc1 == MU_OK && !json_is_object(t1)) || (rc2 == MU_OK && !json_is_object(t2)))
		abort();
	json_decref(t1);
	json_decref(t2);
	/* defaults, validation, version, table */
	if (types[rt].defaults)
		types[rt].defaults(o);
	mu__verr_t e;
	memset(&e, 0, sizeof e);
	mu__validate(&types[rt], o, NULL, &e);
	if (e.n < 0 || e.n > MU__VERR_MAX)
		abort();
	for (int i = 0; i < e.n; i++)
		if (!memchr(e.c[i].msg, '\0', sizeof e.c[i].msg) || !memchr(e.c[i].field, '\0', sizeof e.c[i].field))
			abort();
	mu__obj_t *ob = mu__obj_new(rt, &types[rt], o, 1);
	if (ob) {
		if (ob->nlabels < 0 || ob->nfields < 0 || strlen(ob->json) != ob->len)
			abort();
		json_t *tab = mu__table(&types[rt], &ob, 1, 0, true);
		if (!tab || json_array_size(json_object_get(tab, "rows")) > 1)
			abort();
		json_t *cells = json_object_get(json_array_get(json_object_get(tab, "rows"), 0), "cells");
		if (cells && (int)json_array_size(cells) != types[rt].ncols)
			abort();
		json_decref(tab);
		mu__obj_unref(ob);
	}
	json_decref(o);
	return 0;
}
