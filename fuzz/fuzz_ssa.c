/*
 * fuzz_ssa.c - libFuzzer target for server-side apply and field ownership
 * (ssa.c).  The input is a JSON object: either an applied configuration,
 * applied to a fixed live pod that two managers already own fields of, or
 * {"live": OBJECT, "applied": OBJECT, "force": BOOL} with both given (a
 * live object's managedFields come from the store, but a fuzzer may well
 * hand it garbage).  The applied result is then updated by another
 * manager (mu__mf_record), as a later PATCH would.  Invariants: a conflict
 * (MU_ESTATE) has at least one FieldManagerConflict cause and a message;
 * a success gives an object whose managedFields, when present, is an array
 * of entries with a FieldsV1 object each; nothing crashes or leaks.
 * With "conv": true the apply is made at version ex/v2 through
 * mu__ssa_apply_conv, whose converter renames spec.n (ex/v1) to spec.m
 * (ex/v2) and knows no other version, with the same invariants.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/ssa.h"
#include "apiserver/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char live_pod[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\","
	"\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"managedFields\":["
	"{\"manager\":\"m1\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
	"\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:a\":{}}},\"f:spec\":{\"f:containers\":"
	"{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:name\":{},\"f:image\":{}}}}}},"
	"{\"manager\":\"m2\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-01-01T00:00:00Z\","
	"\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\"f:b\":{}}}}}]},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";

static bool mf_ok(const json_t *o)
{
	const json_t *mf = json_object_get(json_object_get(o, "metadata"), "managedFields");
	if (!mf)
		return true;
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
		if (!json_is_object(json_object_get(e, "fieldsV1")))
			return false;
	return json_is_array(mf);
}

/* ex/v1's spec.n is ex/v2's spec.m; other versions are unknown. */
static int conv(void *ctx, json_t *objs, const char *av, char *msg, size_t msglen)
{
	(void)ctx;
	if (strcmp(av, "ex/v1") && strcmp(av, "ex/v2")) {
		snprintf(msg, msglen, "no version %s", av);
		return MU_ENOENT;
	}
	size_t i;
	json_t *o;
	json_array_foreach(objs, i, o) {
		if (!json_is_object(o))
			continue;
		json_t *spec = json_object_get(o, "spec");
		const char *from = av[4] == '1' ? "m" : "n", *to = av[4] == '1' ? "n" : "m";
		json_t *v = json_is_object(spec) ? json_object_get(spec, from) : NULL;
		if (v) {
			json_object_set(spec, to, v);
			json_object_del(spec, from);
		}
		json_object_set_new(o, "apiVersion", json_string(av));
	}
	return MU_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *in = mu__json_body((const char *)data, size, 1 << 20, err, sizeof err);
	if (!in || !json_is_object(in)) {
		json_decref(in);
		return 0;
	}
	json_t *live = json_object_get(in, "live"), *applied = json_object_get(in, "applied");
	if (json_is_object(live) && json_is_object(applied)) {
		json_incref(live);
	} else {
		live = json_loads(live_pod, 0, NULL);
		applied = in;
	}
	mu__mgr_t m = {.name = "fuzz", .api_version = "v1", .reset_status = true, .builtin = true,
		       .model = mu__schema_model("", "Pod"), .force = json_is_true(json_object_get(in, "force"))};
	mu__verr_t e = {0};
	json_t *out = NULL;
	memset(err, 0x55, sizeof err);
	bool versions = json_is_true(json_object_get(in, "conv"));
	if (versions) {
		snprintf(m.api_version, sizeof m.api_version, "ex/v2");
		m.builtin = false;
		m.model = -1;
	}
	int rc = versions ? mu__ssa_apply_conv(live, applied, &m, conv, NULL, &out, err, sizeof err, &e)
			  : mu__ssa_apply(live, applied, &m, &out, err, sizeof err, &e);
	if (rc != MU_OK && !memchr(err, '\0', sizeof err))
		abort();
	if (rc == MU_ESTATE && (e.n == 0 || strcmp(e.c[0].reason, "FieldManagerConflict")))
		abort();
	if (rc == MU_OK && (!json_is_object(out) || !mf_ok(out)))
		abort();
	if (rc == MU_OK) {
		json_t *nw = json_deep_copy(out);
		mu__mgr_t u = m;
		snprintf(u.name, sizeof u.name, "other");
		json_object_set_new(nw, "extra", json_string("x"));
		mu__mf_record(out, nw, &u);
		if (!mf_ok(nw))
			abort();
		json_decref(nw);
	}
	json_decref(out);
	json_decref(live);
	json_decref(in);
	return 0;
}
