/*
 * test_apiserver_ssa.c - field ownership and server-side apply (ssa.c):
 * FieldsV1 sets of built-in objects (maps with ".", keyed lists, set
 * lists, atomic lists), Update recording (changed fields move to the
 * writer, gone fields leave every set), apply conflicts with kube's
 * message and causes, force, sharing and removal; a status write recorded
 * against mu__mf_before's copy of the old object gives the entries a copy
 * of the whole object gives, for keys printed directly and through JSON;
 * a keyed list of 1,000 elements owned element by element; an update's
 * record the same when the members old and new hold equal are left out.
 */
#include <stdlib.h>
#include <string.h>

#include "apiserver/ssa.h"
#include "apiserver/api_int.h"
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

/* A pending pod of the given names and times, created by `creator` at
 * `ctime`, with the condition PodScheduled of status sched. */
static json_t *memo_pod(const char *name, const char *uid, const char *creator, const char *ctime,
			const char *sched, const char *stime)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:s, s:{s:{s:{}}}}]},"
			 " s:{s:s, s:[{s:s, s:s}]}, s:{s:s, s:[{s:s, s:s, s:s}]}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "d", "uid", uid,
			 "managedFields", "manager", creator, "operation", "Update", "apiVersion", "v1", "time",
			 ctime, "fieldsType", "FieldsV1", "fieldsV1", "f:spec", "f:containers", "spec",
			 "nodeName", "n1", "containers", "name", "c1", "image", "img", "status", "phase", "Pending",
			 "conditions", "type", "PodScheduled", "status", sched, "lastTransitionTime", stime);
}

/* The kubelet's start of pod p: phase, start time, conditions, statuses
 * of its containers (and of a second container when two). */
static void memo_start(json_t *p, const char *uid, const char *now, bool two)
{
	json_t *st = json_object_get(p, "status");
	json_object_set_new(st, "phase", json_string("Running"));
	json_object_set_new(st, "startTime", json_string(now));
	json_t *conds = json_object_get(st, "conditions");
	json_t *c0 = json_array_get(conds, 0);
	if (strcmp(json_string_value(json_object_get(c0, "status")), "True")) {
		json_object_set_new(c0, "status", json_string("True"));
		json_object_set_new(c0, "lastTransitionTime", json_string(now));
	}
	json_array_append_new(conds, json_pack("{s:s, s:s, s:s}", "type", "Ready", "status", "True",
					       "lastTransitionTime", now));
	const char *cn = json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0), "name"));
	char cid[80];
	snprintf(cid, sizeof cid, "muster://%s-%s", uid, cn);
	json_t *cs = json_pack("[{s:s, s:s, s:s, s:b, s:i, s:{s:{s:s}}}]", "name", cn, "image", "img",
			       "containerID", cid, "ready", 1, "restartCount", 0, "state", "running", "startedAt",
			       now);
	if (two)
		json_array_append_new(cs, json_pack("{s:s, s:s, s:b}", "name", "c2", "image", "img", "ready", 1));
	json_object_set_new(st, "containerStatuses", cs);
}

/* One start through the memo and the same start recorded in full: the
 * same entries but for the kubelet's time, and the creator's time is the
 * pod's own.  Returns whether they agree. */
static bool memo_same(mu_t_t *t, mu__mf_memo_t *mm, json_t *pod, const char *uid, const char *now, bool two,
		      const char *ctime)
{
	int n;
	const mu__rtype_t *pods = &mu__rtypes(&n)[MU__RT_PODS];
	json_t *before = mu__mf_before(pods, pod, true);
	json_t *a = json_deep_copy(pod), *b = json_deep_copy(pod);
	memo_start(a, uid, now, two);
	memo_start(b, uid, now, two);
	char now0[40], now1[40];
	mu__timestamp(now0, sizeof now0, false);
	mu__mf_memo_record(mm, pods, before, a, "kubelet", true);
	mu__mf_controller(pods, before, b, "kubelet", true);
	mu__timestamp(now1, sizeof now1, false);
	json_t *mf = json_object_get(json_object_get(a, "metadata"), "managedFields");
	const char *ct = json_string_value(json_object_get(json_array_get(mf, 0), "time"));
	const char *kt = json_string_value(json_object_get(json_array_get(mf, 1), "time"));
	bool times = ct && !strcmp(ct, ctime) && kt && strcmp(kt, now0) >= 0 && strcmp(kt, now1) <= 0;
	char *x = entries_no_time(a), *y = entries_no_time(b);
	bool same = x && y && !strcmp(x, y);
	CHECK(t, times);
	CHECK(t, same);
	free(x);
	free(y);
	json_decref(a);
	json_decref(b);
	json_decref(before);
	return same && times;
}

/* managedFields of nw after m's update from old, times left out. */
static char *recorded(const json_t *old, const json_t *nw, mu__mgr_t m, bool whole)
{
	json_t *c = json_deep_copy(nw);
	m.whole = whole;
	mu__mf_record(old, c, &m);
	size_t i;
	json_t *e;
	json_array_foreach(mf_of(c), i, e)
		json_object_del(e, "time");
	char *out = dump(mf_of(c));
	json_decref(c);
	return out;
}

/* An update records the same entries whether the members old and nw hold
 * equal are walked or left out (ssa.c same_dropped): annotations alone (a
 * dispatcher's record), with a label gone that another manager owned,
 * with the spec, a Job's /status with its annotations, a status write, a
 * kind without a status subresource, members added and removed, and no
 * change at all.  An equivalence check: it fails only if leaving equal
 * members out changes a record. */
static void test_record_views(mu_t_t *t)
{
	int jm = mu__schema_model("batch", "Job");
	json_t *v0 = json_loads("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
				"\"namespace\":\"d\",\"labels\":{\"q\":\"a\",\"x\":\"1\"},\"annotations\":{\"a\":\"1\"}},"
				"\"spec\":{\"suspend\":true,\"parallelism\":1,\"template\":{\"spec\":{\"containers\":[{"
				"\"name\":\"c\",\"image\":\"i\",\"env\":[{\"name\":\"E\",\"value\":\"1\"}]}],"
				"\"restartPolicy\":\"Never\"}}},\"status\":{\"active\":0,\"conditions\":[{\"type\":"
				"\"Suspended\",\"status\":\"True\"}]}}", 0, NULL);
	mu__mgr_t cr = mgr("kubectl-create", false), hub = mgr("hub", false), ctl = mgr("ctl", false);
	cr.model = hub.model = ctl.model = jm;
	mu__mf_record(NULL, v0, &cr);
	json_t *v1 = json_deep_copy(v0);
	json_object_set_new(json_object_get(json_object_get(v1, "metadata"), "labels"), "x", json_string("2"));
	json_object_set_new(json_object_get(json_object_get(v1, "metadata"), "annotations"), "h", json_string("1"));
	mu__mf_record(v0, v1, &ctl); /* ctl owns labels.x and annotations.h */
	const char *edits[] = {
		"{\"metadata\":{\"annotations\":{\"d\":\"w1\",\"g\":\"1\"}}}",
		"{\"metadata\":{\"annotations\":{\"h\":null},\"labels\":{\"x\":null}}}",
		"{\"metadata\":{\"annotations\":{\"d\":\"w2\"}},\"spec\":{\"suspend\":false,\"parallelism\":2}}",
		"{\"metadata\":{\"annotations\":{\"d\":\"w3\"}},\"status\":{\"active\":1}}",
		"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"j\"}]}}}}",
		"{\"status\":null,\"extra\":{\"k\":\"v\"}}",
		"{}",
	};
	for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
		json_t *p = json_loads(edits[i], 0, NULL), *nw = json_deep_copy(v1);
		CHECK_EQ_INT(t, mu__merge_patch(nw, p), MU_OK);
		mu__mgr_t ms[4] = {hub, hub, hub, hub};
		ms[1].reset_status = false; /* a kind without a status subresource */
		ms[2].status_sub = ms[2].status_meta = true; /* a Job's /status */
		snprintf(ms[2].sub, sizeof ms[2].sub, "status");
		ms[3].status_sub = true; /* a status write */
		snprintf(ms[3].sub, sizeof ms[3].sub, "status");
		for (int k = 0; k < 4; k++) {
			char *a = recorded(v1, nw, ms[k], false), *b = recorded(v1, nw, ms[k], true);
			CHECK_STR(t, a, b);
			if (strcmp(a, b))
				fprintf(stderr, "edit %zu, manager %d\n", i, k);
			free(a);
			free(b);
		}
		json_decref(p);
		json_decref(nw);
	}
	/* and the record is the one expected: the annotations written are
	 * the writer's, ctl keeps annotations.h */
	json_t *p = json_loads(edits[0], 0, NULL), *nw = json_deep_copy(v1);
	mu__merge_patch(nw, p);
	char *a = recorded(v1, nw, hub, false);
	CHECK(t, strstr(a, "\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\"f:d\":{},\"f:g\":{}}}},"
			   "\"manager\":\"hub\"") != NULL);
	CHECK(t, strstr(a, "\"f:annotations\":{\"f:h\":{}}") != NULL);
	free(a);
	json_decref(p);
	json_decref(nw);
	json_decref(v1);
	json_decref(v0);
}

/* The controllers' memo (mu__mf_memo_record): a start of the shape seen
 * before is answered from the memo, with the entries a full record makes
 * and the times of this pod's entries; a start of another shape (a second
 * container, a condition that changes, another creator) is recorded in
 * full; and a write whose times cannot be told apart is not kept. */
static void test_memo(mu_t_t *t)
{
	mu__mf_memo_t *mm = mu__mf_memo_new();
	size_t hits, misses;
	CHECK(t, mm != NULL);
	json_t *p1 = memo_pod("p1", "u1", "bench", "2026-01-01T00:00:01Z", "True", "2026-01-01T00:00:02Z");
	json_t *p2 = memo_pod("p2", "u2", "bench", "2026-01-02T00:00:01Z", "True", "2026-01-02T00:00:03Z");
	CHECK(t, memo_same(t, mm, p1, "u1", "2026-02-01T00:00:00Z", false, "2026-01-01T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 0 && misses == 1);
	/* other names, uids and times: the same shape */
	CHECK(t, memo_same(t, mm, p2, "u2", "2026-02-02T00:00:00Z", false, "2026-01-02T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 1);
	/* a second container: another shape */
	CHECK(t, memo_same(t, mm, p2, "u2", "2026-02-02T00:00:00Z", true, "2026-01-02T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 2);
	/* PodScheduled False before: it changes, and is the kubelet's now */
	json_t *p3 = memo_pod("p3", "u3", "bench", "2026-01-03T00:00:01Z", "False", "2026-01-03T00:00:02Z");
	CHECK(t, memo_same(t, mm, p3, "u3", "2026-02-03T00:00:00Z", false, "2026-01-03T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 3);
	/* the same time before and after (an unchanged string that equals
	 * another one): another equality, another shape */
	json_t *p4 = memo_pod("p4", "u4", "bench", "2026-01-04T00:00:01Z", "True", "2026-02-04T00:00:00Z");
	CHECK(t, memo_same(t, mm, p4, "u4", "2026-02-04T00:00:00Z", false, "2026-01-04T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 4);
	/* another creator: the entries are in the key */
	json_t *p5 = memo_pod("p5", "u5", "kubectl", "2026-01-05T00:00:01Z", "True", "2026-01-05T00:00:02Z");
	CHECK(t, memo_same(t, mm, p5, "u5", "2026-02-05T00:00:00Z", false, "2026-01-05T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 5);
	/* every shape seen is answered again */
	CHECK(t, memo_same(t, mm, p1, "u9", "2026-02-09T00:00:00Z", true, "2026-01-01T00:00:01Z"));
	CHECK(t, memo_same(t, mm, p3, "u8", "2026-02-08T00:00:00Z", false, "2026-01-03T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 3 && misses == 5);
	/* a creator's time of this second: the kubelet's could be the same
	 * string, so it is not kept and the next such start records again */
	json_t *p6 = memo_pod("p6", "u6", "x", "2099-01-01T00:00:00Z", "True", "2026-01-06T00:00:02Z");
	CHECK(t, memo_same(t, mm, p6, "u6", "2026-02-06T00:00:00Z", false, "2099-01-01T00:00:00Z"));
	CHECK(t, memo_same(t, mm, p6, "u6", "2026-02-06T00:00:00Z", false, "2099-01-01T00:00:00Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 3 && misses == 7);
	/* another container name: list keys are in the key as they are */
	json_t *p7 = memo_pod("p7", "u7", "bench", "2026-01-07T00:00:01Z", "True", "2026-01-07T00:00:02Z");
	json_object_set_new(json_array_get(json_object_get(json_object_get(p7, "spec"), "containers"), 0), "name",
			    json_string("c9"));
	CHECK(t, memo_same(t, mm, p7, "u7", "2026-02-07T00:00:00Z", false, "2026-01-07T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 3 && misses == 8);
	json_decref(p7);
	json_decref(p1);
	json_decref(p2);
	json_decref(p3);
	json_decref(p4);
	json_decref(p5);
	json_decref(p6);
	mu__mf_memo_free(mm);
}

/* memo_pod with the creator's set naming the volume kube-api-access-SFX
 * (as ServiceAccount admission names it, a list key in the spec part),
 * and, when phase, also owning status.phase. */
static json_t *memo_pod_vol(const char *name, const char *uid, const char *sfx, bool phase)
{
	json_t *p = memo_pod(name, uid, "bench", "2026-01-01T00:00:01Z", "True", "2026-01-01T00:00:02Z");
	char key[80];
	snprintf(key, sizeof key, "k:{\"name\":\"kube-api-access-%s\"}", sfx);
	json_t *set = json_pack("{s:{s:{}, s:{s:{s:{}, s:{}}}}}", "f:spec", "f:containers", "f:volumes", key, ".",
				"f:name");
	if (phase)
		json_object_set_new(set, "f:status", json_pack("{s:{}}", "f:phase"));
	json_t *e0 = json_array_get(json_object_get(json_object_get(p, "metadata"), "managedFields"), 0);
	json_object_set_new(e0, "fieldsV1", set);
	return p;
}

/* Of the creator's set only the status part is in the memo's key: pods
 * whose creator's sets differ in the spec part (each pod's own
 * kube-api-access volume) share a shape, and each gets its own set back
 * (memo_same compares with the full record).  A creator's set that the
 * write changes (it owned status.phase) is not kept: the next pod would
 * get the first one's volume. */
static void test_memo_named(mu_t_t *t)
{
	mu__mf_memo_t *mm = mu__mf_memo_new();
	size_t hits, misses;
	CHECK(t, mm != NULL);
	json_t *a = memo_pod_vol("a", "ua", "aaaaa", false), *b = memo_pod_vol("b", "ub", "bbbbb", false);
	CHECK(t, memo_same(t, mm, a, "ua", "2026-02-01T00:00:00Z", false, "2026-01-01T00:00:01Z"));
	CHECK(t, memo_same(t, mm, b, "ub", "2026-02-01T00:00:00Z", false, "2026-01-01T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 1);
	json_t *c = memo_pod_vol("c", "uc", "ccccc", true), *d = memo_pod_vol("d", "ud", "ddddd", true);
	CHECK(t, memo_same(t, mm, c, "uc", "2026-02-01T00:00:00Z", false, "2026-01-01T00:00:01Z"));
	CHECK(t, memo_same(t, mm, d, "ud", "2026-02-01T00:00:00Z", false, "2026-01-01T00:00:01Z"));
	mu__mf_memo_stats(mm, &hits, &misses);
	CHECK(t, hits == 1 && misses == 3);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
	mu__mf_memo_free(mm);
}

/* A Pod whose container has n env vars V0..Vn-1 (value "v", or val for
 * index odd_one), all of them but skip (-1: none). */
static json_t *env_pod(int n, int odd_one, const char *val, int skip)
{
	json_t *env = json_array();
	for (int i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof name, "V%d", i);
		if (i != skip)
			json_array_append_new(env, json_pack("{s:s, s:s}", "name", name, "value", i == odd_one ? val : "v"));
	}
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s, s:o}]}}", "apiVersion", "v1", "kind", "Pod", "metadata",
			 "name", "p", "spec", "containers", "name", "c", "image", "i", "env", env);
}

/* A keyed list of 1,000 elements is owned element by element (it was
 * owned whole above 256): a second manager's apply of one element with
 * another value conflicts on that element's value only, takes it when
 * forced, and the first manager's next apply without another element
 * removes that one and keeps the forced one. */
static void test_long_keyed(mu_t_t *t)
{
	mu__mgr_t a = mgr("alice", false), b = mgr("bob", false);
	json_t *live = json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
				 "metadata", "name", "p", "spec", "containers", "name", "c", "image", "i");
	json_t *all = env_pod(1000, -1, NULL, -1), *out = NULL;
	char msg[1500];
	mu__verr_t e = {0};
	CHECK_EQ_INT(t, mu__ssa_apply(live, all, &a, &out, msg, sizeof msg, &e), MU_OK);
	json_t *set = json_object_get(json_array_get(mf_of(out), 0), "fieldsV1");
	json_t *envset = json_object_get(json_object_get(json_object_get(json_object_get(set, "f:spec"), "f:containers"),
							 "k:{\"name\":\"c\"}"), "f:env");
	CHECK_EQ_INT(t, (long)json_object_size(envset), 1000);
	CHECK(t, json_object_get(envset, "k:{\"name\":\"V999\"}") != NULL);

	json_t *one = env_pod(1, -1, NULL, -1);
	json_t *e0 = json_array_get(mu__jget(json_array_get(mu__jget(one, "spec.containers"), 0), "env"), 0);
	json_object_set_new(e0, "name", json_string("V500"));
	json_object_set_new(e0, "value", json_string("w"));
	json_t *out2 = NULL;
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(t, mu__ssa_apply(out, one, &b, &out2, msg, sizeof msg, &e), MU_ESTATE);
	CHECK_EQ_INT(t, e.n, 1);
	CHECK_STR(t, e.c[0].field, ".spec.containers[name=\"c\"].env[name=\"V500\"].value");
	b.force = true;
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(t, mu__ssa_apply(out, one, &b, &out2, msg, sizeof msg, &e), MU_OK);
	json_t *env = json_object_get(json_array_get(mu__jget(out2, "spec.containers"), 0), "env");
	CHECK_EQ_INT(t, (long)json_array_size(env), 1000);
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(env, 500), "value")), "w");

	/* alice applies all but V7 (V500 as she had it, now bob's) */
	json_t *less = env_pod(1000, -1, NULL, 7), *out3 = NULL;
	json_t *l500 = json_array_get(mu__jget(json_array_get(mu__jget(less, "spec.containers"), 0), "env"), 499);
	CHECK_STR(t, json_string_value(json_object_get(l500, "name")), "V500");
	json_array_remove(mu__jget(json_array_get(mu__jget(less, "spec.containers"), 0), "env"), 499);
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(t, mu__ssa_apply(out2, less, &a, &out3, msg, sizeof msg, &e), MU_OK);
	env = json_object_get(json_array_get(mu__jget(out3, "spec.containers"), 0), "env");
	CHECK_EQ_INT(t, (long)json_array_size(env), 999);
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(env, 7), "name")), "V8");
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(env, 499), "value")), "w");
	/* a set list (finalizers) past the index's threshold: one dropped goes */
	json_t *fin = json_array();
	for (int i = 0; i < 12; i++) {
		char f[16];
		snprintf(f, sizeof f, "x/f%d", i);
		json_array_append_new(fin, json_string(f));
	}
	json_t *fa = json_pack("{s:s, s:s, s:{s:s, s:o}}", "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p",
			       "finalizers", fin);
	json_t *fb = json_deep_copy(fa), *o4 = NULL, *o5 = NULL;
	json_array_remove(mu__jget(fb, "metadata.finalizers"), 5);
	CHECK_EQ_INT(t, mu__ssa_apply(out3, fa, &a, &o4, msg, sizeof msg, &e), MU_OK);
	CHECK_EQ_INT(t, mu__ssa_apply(o4, fb, &a, &o5, msg, sizeof msg, &e), MU_OK);
	CHECK_EQ_INT(t, (long)json_array_size(mu__jget(o5, "metadata.finalizers")), 11);
	CHECK_STR(t, json_string_value(json_array_get(mu__jget(o5, "metadata.finalizers"), 5)), "x/f6");
	json_decref(o5);
	json_decref(o4);
	json_decref(fb);
	json_decref(fa);
	json_decref(out3);
	json_decref(less);
	json_decref(out2);
	json_decref(one);
	json_decref(out);
	json_decref(all);
	json_decref(live);
}

/* A converter between ex/v1 (spec.n) and ex/v2 (spec.m, twice n), for
 * mu__ssa_apply_conv; ex/v9 is no version. */
static int conv_n_m(void *ctx, json_t *objs, const char *av, char *msg, size_t msglen)
{
	(void)msg;
	(void)msglen;
	int *calls = ctx;
	if (strcmp(av, "ex/v1") && strcmp(av, "ex/v2"))
		return MU_ENOENT;
	(*calls)++;
	size_t i;
	json_t *o;
	json_array_foreach(objs, i, o) {
		json_t *spec = json_object_get(o, "spec");
		const char *have = json_string_value(json_object_get(o, "apiVersion"));
		if (!have || !strcmp(have, av) || !spec)
			continue;
		const char *from = !strcmp(av, "ex/v1") ? "m" : "n", *to = !strcmp(av, "ex/v1") ? "n" : "m";
		json_t *v = json_object_get(spec, from);
		if (v) {
			json_int_t x = json_integer_value(v);
			json_object_set_new(spec, to, json_integer(!strcmp(to, "m") ? x * 2 : x / 2));
			json_object_del(spec, from);
		}
		json_object_set_new(o, "apiVersion", json_string(av));
	}
	return MU_OK;
}

/* Apply at another version than a manager's: its fields are compared on
 * the objects converted to its version (a field with another name
 * there), as kube's Updater.update does. */
static void test_apply_versions(mu_t_t *t)
{
	mu__mgr_t bob = mgr("bob", false), alice = mgr("alice", false);
	bob.builtin = alice.builtin = false;
	bob.model = alice.model = -1;
	bob.reset_status = alice.reset_status = false;
	snprintf(bob.api_version, sizeof bob.api_version, "ex/v1");
	snprintf(alice.api_version, sizeof alice.api_version, "ex/v2");
	/* bob applied n=3 at v1 (a label too); the object is read at v2 */
	json_t *v1 = json_loads("{\"apiVersion\":\"ex/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\",\"labels\":"
				"{\"b\":\"x\"}},\"spec\":{\"n\":3}}", 0, NULL);
	mu__mf_apply_create(v1, v1, &bob);
	json_t *live = json_deep_copy(v1);
	int calls = 0;
	json_t *one = json_array();
	json_array_append(one, live);
	conv_n_m(&calls, one, "ex/v2", NULL, 0);
	json_decref(one);
	json_t *ap = json_loads("{\"apiVersion\":\"ex/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\"},\"spec\":"
				"{\"m\":8}}", 0, NULL);
	json_t *out = NULL;
	char msg[1500];
	mu__verr_t e = {0};
	calls = 0;
	CHECK_EQ_INT(t, mu__ssa_apply_conv(live, ap, &alice, conv_n_m, &calls, &out, msg, sizeof msg, &e), MU_ESTATE);
	CHECK_STR(t, msg, "Apply failed with 1 conflict: conflict with \"bob\": .spec.n");
	CHECK_EQ_INT(t, calls, 1);
	/* the same value (m 6, n 3) is no conflict */
	json_object_set_new(json_object_get(ap, "spec"), "m", json_integer(6));
	CHECK_EQ_INT(t, mu__ssa_apply_conv(live, ap, &alice, conv_n_m, &calls, &out, msg, sizeof msg, &e), MU_OK);
	json_decref(out);
	/* forced: bob loses n, keeps his label; alice's entry is at v2 */
	json_object_set_new(json_object_get(ap, "spec"), "m", json_integer(8));
	alice.force = true;
	CHECK_EQ_INT(t, mu__ssa_apply_conv(live, ap, &alice, conv_n_m, &calls, &out, msg, sizeof msg, &e), MU_OK);
	CHECK_EQ_INT(t, (int)json_integer_value(mu__jget(out, "spec.m")), 8);
	char *got = dump(mf_of(out));
	CHECK(t, strstr(got, "{\"apiVersion\":\"ex/v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
			     "{\"f:labels\":{\"f:b\":{}}}},\"manager\":\"bob\"") != NULL);
	CHECK(t, strstr(got, "{\"apiVersion\":\"ex/v2\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":"
			     "{\"f:m\":{}}},\"manager\":\"alice\"") != NULL);
	free(got);
	json_decref(out);
	/* bob applies at v2 without his label, after applying it at v1: it
	 * goes (pruned at v1), and what he applies now stays */
	json_t *bv2 = json_loads("{\"apiVersion\":\"ex/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\"},\"spec\":"
				 "{\"m\":6}}", 0, NULL);
	mu__mgr_t bob2 = bob;
	snprintf(bob2.api_version, sizeof bob2.api_version, "ex/v2");
	CHECK_EQ_INT(t, mu__ssa_apply_conv(live, bv2, &bob2, conv_n_m, &calls, &out, msg, sizeof msg, &e), MU_OK);
	CHECK(t, mu__jget(out, "metadata.labels.b") == NULL);
	CHECK_EQ_INT(t, (int)json_integer_value(mu__jget(out, "spec.m")), 6);
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(mf_of(out), 0), "apiVersion")), "ex/v2");
	json_decref(out);
	json_decref(bv2);
	/* a manager at a version that is gone is dropped */
	json_object_set_new(json_array_get(mf_of(live), 0), "apiVersion", json_string("ex/v9"));
	alice.force = false;
	CHECK_EQ_INT(t, mu__ssa_apply_conv(live, ap, &alice, conv_n_m, &calls, &out, msg, sizeof msg, &e), MU_OK);
	CHECK_EQ_INT(t, (long)json_array_size(mf_of(out)), 1);
	json_decref(out);
	json_decref(ap);
	json_decref(live);
	json_decref(v1);
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
	MU_RUN(&t, test_memo);
	MU_RUN(&t, test_memo_named);
	MU_RUN(&t, test_long_keyed);
	MU_RUN(&t, test_apply_versions);
	MU_RUN(&t, test_record_views);
	return mu_t_done(&t);
}
