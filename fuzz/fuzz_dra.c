/*
 * fuzz_dra.c - the DRA device allocator (mu_dra_allocate) with untrusted
 * objects, as the scheduler reads them from an API server.  Input: a JSON
 * object {"slices": [...], "classes": [...], "claims": [...], "nodes": [...],
 * "rules": [...]} (rules: DeviceTaintRules); every claim
 * (at most MU_DRA_MAX_CLAIMS) is allocated on node "node-1", and the devices
 * of the first class are counted (mu_dra_class_devices), and every claim's
 * NoExecute eviction time is asked (mu_dra_eviction_ms).  Bad JSON is
 * ignored; whatever parses must not crash, leak or run unbounded.
 */
#include <stdint.h>
#include <stdlib.h>

#include "muster/dra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, 0, NULL);
	if (!json_is_object(in)) {
		json_decref(in);
		return 0;
	}
	mu_dra_view_t v = {json_object_get(in, "slices"), json_object_get(in, "classes"),
			   json_object_get(in, "claims"), json_object_get(in, "nodes"),
			   json_object_get(in, "rules")};
	const json_t *cl[MU_DRA_MAX_CLAIMS];
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(v.claims) && n < MU_DRA_MAX_CLAIMS; i++)
		cl[n++] = json_array_get(v.claims, i);
	json_t *plan = NULL;
	char msg[512];
	mu_dra_allocate(&v, cl, n, "node-1", &plan, msg, sizeof msg);
	const char *cls = json_string_value(json_object_get(json_object_get(json_array_get(v.classes, 0),
									       "metadata"), "name"));
	if (cls) { /* what a node, and the shared slices, have of the first class */
		mu_dra_class_devices(&v, cls, "node-1", msg, sizeof msg);
		mu_dra_class_devices(&v, cls, NULL, msg, sizeof msg);
	}
	for (size_t i = 0; i < json_array_size(v.claims); i++) /* the eviction controller's question */
		mu_dra_eviction_ms(&v, json_array_get(v.claims, i), 1700000000000, msg, sizeof msg);
	json_decref(plan);
	json_decref(in);
	return 0;
}
