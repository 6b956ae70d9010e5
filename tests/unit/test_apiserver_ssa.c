/*
 * test_apiserver_ssa.c - field ownership and server-side apply (ssa.c):
 * FieldsV1 sets of built-in objects (maps with ".", keyed lists, set
 * lists, atomic lists), Update recording (changed fields move to the
 * writer, gone fields leave every set), apply conflicts with kube's
 * message and causes, force, sharing and removal; a status write recorded
 * against mu__mf_before's copy of the old object gives the entries a copy
 * of the whole object gives, for keys printed directly and through JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "apiserver/ssa.h"
#include "apiserver/schema.h"
#include "check.h"

static char *dump(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static mu__mgr_t mgr(const char *name, bool force)
{
	mu__mgr_t m = {.api_version = "v1", .reset_status = true, .builtin = true,
		       .model = mu__schema_model("", "Pod"), .force = force};
	snprintf(m.name, sizeof m.name, "%s", name);
	return m;
}

static void test_fieldset(mu_t_t *t)
{
	json_t *pod = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"uid\":\"u\","
				 "\"labels\":{\"a\":\"1\"},\"finalizers\":[\"x\"]},\"spec\":{\"containers\":[{\"name\":"
				 "\"c\",\"image\":\"i\",\"args\":[\"1\",\"2\"]}]},\"status\":{\"phase\":\"Running\"}}",
				 0, NULL);
	mu__mgr_t m = mgr("m", false);
	json_t *s = mu__fieldset(pod, &m);
	char *got = dump(s);
	CHECK_STR(t, got, "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"x\\\"\":{}},\"f:labels\":{\".\":{},\"f:a\":{}}},"
			  "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:args\":{},"
			  "\"f:image\":{},\"f:name\":{}}}}}");
	free(got);
	json_decref(s);
	json_decref(pod);
}

static json_t *mf_of(const json_t *o)
{
	return json_object_get(json_object_get(o, "metadata"), "managedFields");
}

static void test_update_and_apply(mu_t_t *t)
{
	json_t *v1 = json_loads("{\"metadata\":{\"name\":\"c\"},\"data\":{\"x\":\"1\",\"y\":\"2\"}}", 0, NULL);
	mu__mgr_t a = mgr("alice", false), b = mgr("bob", false);
	a.model = b.model = mu__schema_model("", "ConfigMap");
	mu__mf_record(NULL, v1, &a);
	CHECK_EQ_INT(t, (long)json_array_size(mf_of(v1)), 1);
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(mf_of(v1), 0), "operation")), "Update");

	/* bob applies x with another value: a conflict naming alice's Update */
	json_t *ap = json_loads("{\"metadata\":{\"name\":\"c\"},\"data\":{\"x\":\"9\"}}", 0, NULL);
	json_t *out = NULL;
	char msg[1500];
	mu__verr_t e = {0};
	CHECK_EQ_INT(t, mu__ssa_apply(v1, ap, &b, &out, msg, sizeof msg, &e), MU_ESTATE);
	CHECK(t, out == NULL);
	CHECK(t, !strncmp(msg, "Apply failed with 1 conflict: conflict with \"alice\" using v1 at ", 64));
	CHECK(t, strstr(msg, ": .data.x") != NULL);
	CHECK_EQ_INT(t, e.n, 1);
	CHECK_STR(t, e.c[0].reason, "FieldManagerConflict");
	CHECK_STR(t, e.c[0].field, ".data.x");

	/* forced: x moves to bob, y stays alice's */
	b.force = true;
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(t, mu__ssa_apply(v1, ap, &b, &out, msg, sizeof msg, &e), MU_OK);
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(out, "data"), "x")), "9");
	char *got = dump(mf_of(out));
	CHECK(t, strstr(got, "\"fieldsV1\":{\"f:data\":{\".\":{},\"f:y\":{}}},\"manager\":\"alice\"") != NULL);
	CHECK(t, strstr(got, "\"fieldsV1\":{\"f:data\":{\".\":{},\"f:x\":{}}},\"manager\":\"bob\"") != NULL);
	free(got);

	/* bob stops applying x: nobody else owns it, so it goes */
	json_t *none = json_loads("{\"metadata\":{\"name\":\"c\"},\"data\":{}}", 0, NULL);
	json_t *out2 = NULL;
	b.force = false;
	CHECK_EQ_INT(t, mu__ssa_apply(out, none, &b, &out2, msg, sizeof msg, &e), MU_OK);
	got = dump(json_object_get(out2, "data"));
	CHECK_STR(t, got, "{\"y\":\"2\"}");
	free(got);

	/* an Update by alice of y keeps her the owner; deleting y empties her set */
	json_t *v3 = json_deep_copy(out2);
	json_object_del(json_object_get(v3, "data"), "y");
	mu__mf_record(out2, v3, &a);
	got = dump(mf_of(v3));
	CHECK(t, strstr(got, "f:y") == NULL);
	free(got);

	json_decref(v3);
	json_decref(out2);
	json_decref(none);
	json_decref(out);
	json_decref(ap);
	json_decref(v1);
}

static void test_shared(mu_t_t *t)
{
	json_t *live = json_loads("{\"metadata\":{\"name\":\"c\"},\"data\":{\"x\":\"1\"}}", 0, NULL);
	mu__mgr_t a = mgr("alice", false), b = mgr("bob", false);
	a.model = b.model = mu__schema_model("", "ConfigMap");
	mu__mf_record(NULL, live, &a);
	json_t *same = json_loads("{\"data\":{\"x\":\"1\"}}", 0, NULL), *out = NULL;
	char msg[512];
	mu__verr_t e = {0};
	CHECK_EQ_INT(t, mu__ssa_apply(live, same, &b, &out, msg, sizeof msg, &e), MU_OK);
	CHECK_EQ_INT(t, (long)json_array_size(mf_of(out)), 2);
	/* alice's Update still owns x: bob dropping it leaves the value */
	json_t *none = json_loads("{\"data\":{}}", 0, NULL), *out2 = NULL;
	CHECK_EQ_INT(t, mu__ssa_apply(out, none, &b, &out2, msg, sizeof msg, &e), MU_OK);
	char *got = dump(json_object_get(out2, "data"));
	CHECK_STR(t, got, "{\"x\":\"1\"}");
	free(got);
	json_decref(out2);
	json_decref(none);
	json_decref(out);
	json_decref(same);
	json_decref(live);
}

/* A container's ports are keyed by (containerPort, protocol), TCP when left
 * out; applying the UDP port of a pair merges into that element only. */
static void test_port_keys(mu_t_t *t)
{
	json_t *pod = json_loads("{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":53},"
				 "{\"containerPort\":53,\"protocol\":\"UDP\",\"name\":\"u\"}]}]}}", 0, NULL);
	mu__mgr_t m = mgr("m", false);
	json_t *s = mu__fieldset(pod, &m);
	char *got = dump(s);
	CHECK(t, strstr(got, "\"k:{\\\"containerPort\\\":53,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
			     "\"f:containerPort\":{}}") != NULL);
	CHECK(t, strstr(got, "\"k:{\\\"containerPort\\\":53,\\\"protocol\\\":\\\"UDP\\\"}\"") != NULL);
	free(got);
	json_decref(s);
	json_t *ap = json_loads("{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":53,"
				"\"protocol\":\"UDP\",\"name\":\"dns\"}]}]}}", 0, NULL);
	CHECK_EQ_INT(t, mu__apply_merge(pod, ap), MU_OK);
	got = dump(json_object_get(json_array_get(mu__jget(pod, "spec.containers"), 0), "ports"));
	CHECK_STR(t, got, "[{\"containerPort\":53},{\"containerPort\":53,\"name\":\"dns\",\"protocol\":\"UDP\"}]");
	free(got);
	json_decref(ap);
	json_decref(pod);
}

/* An update's managedFields replace the stored ones only as a non-empty
 * list of objects ([{}] clears them; [] keeps them). */
static void test_mf_given(mu_t_t *t)
{
	json_t *empty = json_array(), *reset = json_loads("[{}]", 0, NULL), *bad = json_loads("[1]", 0, NULL);
	CHECK(t, !mu__mf_given(NULL));
	CHECK(t, !mu__mf_given(empty));
	CHECK(t, mu__mf_given(reset));
	CHECK(t, !mu__mf_given(bad));
	json_decref(empty);
	json_decref(reset);
	json_decref(bad);
}

/* Drops every entry's time (two records made a second apart differ only
 * there) and dumps the managedFields sorted. */
static char *entries_no_time(json_t *obj)
{
	json_t *mf = json_object_get(json_object_get(obj, "metadata"), "managedFields");
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
		json_object_del(e, "time");
	return dump(mf);
}

/* The simulated kubelet's start of a pod (status phase, five conditions
 * keyed by type, statuses keyed by container name), recorded by
 * mu__mf_controller against the whole old pod and against
 * mu__mf_before's copy: the same entries.  A condition type with a quote
 * takes the JSON path of the keys, the others are printed directly; both
 * name their elements as kube does. */
static void test_kubelet_before(mu_t_t *t)
{
	int n;
	const mu__rtype_t *pods = &mu__rtypes(&n)[MU__RT_PODS];
	json_t *old = json_loads(
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\","
		"\"labels\":{\"a\":\"1\"},\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Update\","
		"\"apiVersion\":\"v1\",\"time\":\"2026-11-27T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
		"{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:a\":{}}},\"f:spec\":{\"f:containers\":{}}}}]},"
		"\"spec\":{\"nodeName\":\"n\",\"containers\":[{\"name\":\"c1\",\"image\":\"i\"},{\"name\":\"c2\","
		"\"image\":\"i\"}]},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
		"\"status\":\"True\"},{\"type\":\"x\\\"y\",\"status\":\"False\"}]}}",
		0, NULL);
	CHECK(t, old != NULL);
	if (!old)
		return;
	json_t *nw = json_deep_copy(old);
	json_t *st = json_object_get(nw, "status");
	json_object_set_new(st, "phase", json_string("Running"));
	json_t *conds = json_object_get(st, "conditions");
	json_object_set_new(json_array_get(conds, 1), "status", json_string("True"));
	const char *types[] = {"Ready", "ContainersReady", "Initialized"};
	for (int i = 0; i < 3; i++)
		json_array_append_new(conds, json_pack("{s:s, s:s}", "type", types[i], "status", "True"));
	json_object_set_new(st, "containerStatuses",
			    json_pack("[{s:s, s:b}, {s:s, s:b}]", "name", "c1", "ready", 1, "name", "c2", "ready", 1));
	json_t *nw2 = json_deep_copy(nw);
	json_t *before = mu__mf_before(pods, old, true);
	CHECK(t, before && json_object_size(before) == 1 && json_object_get(before, "status"));
	mu__mf_controller(pods, old, nw, "kubelet", true);
	mu__mf_controller(pods, before, nw2, "kubelet", true);
	char *a = entries_no_time(nw), *b = entries_no_time(nw2);
	CHECK(t, a && b && !strcmp(a, b));
	CHECK(t, a && strstr(a, "\"manager\":\"kubelet\"") && strstr(a, "\"subresource\":\"status\""));
	/* printed directly, and through JSON for the quoted type */
	CHECK(t, a && strstr(a, "\"k:{\\\"type\\\":\\\"Ready\\\"}\""));
	CHECK(t, a && strstr(a, "\"k:{\\\"name\\\":\\\"c2\\\"}\""));
	CHECK(t, a && strstr(a, "\"k:{\\\"type\\\":\\\"x\\\\\\\"y\\\"}\""));
	/* a changed condition of the old pod's is the kubelet's, an unchanged one not */
	CHECK(t, a && !strstr(a, "PodScheduled"));
	free(a);
	free(b);
	json_decref(before);
	json_decref(nw2);
	json_decref(nw);
	json_decref(old);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_fieldset);
	MU_RUN(&t, test_update_and_apply);
	MU_RUN(&t, test_shared);
	MU_RUN(&t, test_port_keys);
	MU_RUN(&t, test_mf_given);
	MU_RUN(&t, test_kubelet_before);
	return mu_t_done(&t);
}
