/*
 * test_dra.c - unit tests of the DRA device allocator (dra.h), translated
 * case by case from TestAllocator in Kubernetes'
 * staging/src/k8s.io/dynamic-resource-allocation/structured/allocator_test.go
 * (kubernetes/kubernetes): the same slices, classes and claims, written
 * as v1beta1 JSON, and the same expected results.  Each test names the
 * case it translates.  Cases of features muster refuses (prioritized
 * lists, slices with a node selector) check the refusal; admin access,
 * device taints and device config are translated from the 1.32 and 1.33
 * versions of the file.
 *
 * As in the source, a class selects its driver with the CEL expression
 * device.driver == "DRIVER", a claim's requests ask for one device of a
 * class unless a count is given, and the node is node-1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/dra.h"
#include "muster/error.h"

/* A slice of devices (a JSON array text) on node ("" = allNodes). */
static json_t *slice(const char *name, const char *node, const char *pool, const char *drv, int gen,
		     int count, const char *devices)
{
	json_t *s = json_pack("{s:s,s:{s:s},s:{s:s,s:{s:s,s:i,s:i},s:o}}", "kind", "ResourceSlice", "metadata",
			      "name", name, "spec", "driver", drv, "pool", "name", pool, "generation", gen,
			      "resourceSliceCount", count, "devices", json_loads(devices, 0, NULL));
	if (*node)
		json_object_set_new(json_object_get(s, "spec"), "nodeName", json_string(node));
	else
		json_object_set_new(json_object_get(s, "spec"), "allNodes", json_true());
	return s;
}

static json_t *one(const char *name, const char *node, const char *pool, const char *drv)
{
	return slice(name, node, pool, drv, 1, 1, "[{\"name\":\"device-1\",\"basic\":{}}]");
}

static json_t *class_(const char *name, const char *drv)
{
	char e[128];
	snprintf(e, sizeof e, "device.driver == \"%s\"", drv);
	return json_pack("{s:{s:s},s:{s:[{s:{s:s}}]}}", "metadata", "name", name, "spec", "selectors", "cel",
			 "expression", e);
}

/* A claim with requests and constraints given as JSON texts. */
static json_t *claim(const char *name, const char *requests, const char *constraints)
{
	json_t *c = json_pack("{s:{s:s,s:s},s:{s:{s:o}}}", "metadata", "name", name, "namespace", "default",
			      "spec", "devices", "requests", json_loads(requests, 0, NULL));
	if (constraints)
		json_object_set_new(json_object_get(json_object_get(c, "spec"), "devices"), "constraints",
				    json_loads(constraints, 0, NULL));
	return c;
}

/* A claim that holds devices (driver/pool/device triples "d p x;..."). */
static json_t *holder(const char *devs)
{
	json_t *res = json_array();
	char buf[256], *save = NULL;
	snprintf(buf, sizeof buf, "%s", devs);
	for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		char d[64], p[64], x[64];
		if (sscanf(t, "%63s %63s %63s", d, p, x) == 3)
			json_array_append_new(res, json_pack("{s:s,s:s,s:s,s:s}", "request", "r", "driver", d,
							     "pool", p, "device", x));
	}
	return json_pack("{s:{s:s,s:s},s:{},s:{s:{s:{s:o}}}}", "metadata", "name", "holder", "namespace",
			 "default", "spec", "status", "allocation", "devices", "results", res);
}

typedef struct tcase {
	json_t *slices, *classes, *claims;
	size_t nalloc;    /* the first nalloc claims are allocated */
	json_t *nodes;    /* node-1 (region-1, earth) and node-2 (region-2), as node() of the source */
	json_t *rules;    /* DeviceTaintRules */
	const char *node; /* where to allocate: node-1 unless set */
} tcase_t;

static void tc_init(tcase_t *c)
{
	*c = (tcase_t){json_array(), json_array(), json_array(), 0,
		       json_loads("[{\"metadata\":{\"name\":\"node-1\",\"labels\":{\"region\":\"region-1\","
				  "\"planet\":\"earth\"}}},{\"metadata\":{\"name\":\"node-2\",\"labels\":"
				  "{\"region\":\"region-2\",\"planet\":\"earth\"}}}]", 0, NULL),
		       json_array(), NULL};
}

static void tc_release(tcase_t *c)
{
	json_decref(c->slices);
	json_decref(c->classes);
	json_decref(c->claims);
	json_decref(c->nodes);
	json_decref(c->rules);
}

/* Runs the allocator on node-1; out gets "CLAIM:REQ/DRIVER/POOL/DEV,...
 * [local];..." or "ERR:<rc>:<msg>". */
static int run(tcase_t *c, char *out, size_t len)
{
	const json_t *cl[MU_DRA_MAX_CLAIMS];
	for (size_t i = 0; i < c->nalloc; i++)
		cl[i] = json_array_get(c->claims, i);
	mu_dra_view_t v = {c->slices, c->classes, c->claims, c->nodes, c->rules};
	json_t *plan = NULL;
	char msg[512] = "";
	const char *node = c->node ? c->node : "node-1";
	int rc = mu_dra_allocate(&v, cl, c->nalloc, node, &plan, msg, sizeof msg);
	size_t used = 0;
	out[0] = '\0';
	if (rc) {
		snprintf(out, len, "ERR:%d:%s", rc, msg);
		return rc;
	}
	size_t i, k;
	json_t *e, *r;
	json_array_foreach(plan, i, e) {
		used += (size_t)snprintf(out + used, len - used, "%s%s:", i ? ";" : "",
					 json_string_value(json_object_get(e, "claim")));
		json_t *al = json_object_get(e, "allocation");
		json_array_foreach(json_object_get(json_object_get(al, "devices"), "results"), k, r)
			used += (size_t)snprintf(out + used, len - used, "%s%s/%s/%s/%s", k ? "," : "",
				json_string_value(json_object_get(r, "request")),
				json_string_value(json_object_get(r, "driver")),
				json_string_value(json_object_get(r, "pool")),
				json_string_value(json_object_get(r, "device")));
		json_t *sel = json_object_get(al, "nodeSelector");
		char local[200];
		snprintf(local, sizeof local, "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
			 "\"operator\":\"In\",\"values\":[\"%s\"]}]}]}", node);
		char *txt = sel ? json_dumps(sel, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		if (txt)
			used += (size_t)snprintf(out + used, len - used, "%s%s", strcmp(txt, local) ? " sel=" : " local",
						 strcmp(txt, local) ? txt : "");
		free(txt);
	}
	json_decref(plan);
	return rc;
}

#define REQ(name, cls) "{\"name\":\"" name "\",\"deviceClassName\":\"" cls "\"}"
#define MEM_REQ(name, q) \
	"{\"name\":\"" name "\",\"deviceClassName\":\"class-a\",\"selectors\":[{\"cel\":{\"expression\":" \
	"\"device.capacity[\\\"driver-a\\\"].memory.compareTo(quantity(\\\"" q "\\\")) >= 0\"}}]}"
#define MEMDEV(name, q) "{\"name\":\"" name "\",\"basic\":{\"capacity\":{\"memory\":{\"value\":\"" q "\"}}}}"

/* "simple", "other-node", "several-different-drivers". */
static void test_simple(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	tc_release(&c);

	/* other-node: only node-1's slice of driver-b is on our node */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-b"));
	json_array_append_new(c.slices, one("slice-2", "node-2", "pool-2", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.classes, class_("class-b", "driver-b"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"device-1\"},{\"name\":\"device-2\"}]"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-b"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	json_array_append_new(c.claims, claim("claim-1", "[" REQ("req-0", "class-b") "]", NULL));
	c.nalloc = 2;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local;claim-1:req-0/driver-b/pool-1/device-1 local");
	tc_release(&c);
}

/* "small-and-large", "small-and-large-backtrack-requests",
 * "small-and-large-backtrack-claims": a first choice that starves a later
 * request is undone. */
static void test_backtrack(mu_t_t *t)
{
	static const char *const orders[2] = {"[" MEMDEV("device-1", "1Gi") "," MEMDEV("device-2", "2Gi") "]",
					      "[" MEMDEV("device-2", "2Gi") "," MEMDEV("device-1", "1Gi") "]"};
	char out[1024];
	for (int o = 0; o < 2; o++) {
		tcase_t c;
		tc_init(&c);
		json_array_append_new(c.classes, class_("class-a", "driver-a"));
		json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1, orders[o]));
		json_array_append_new(c.claims, claim("claim-0", "[" MEM_REQ("req-0", "1Gi") "," MEM_REQ("req-1", "2Gi") "]",
						      NULL));
		c.nalloc = 1;
		run(&c, out, sizeof out);
		CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-1/driver-a/pool-1/device-2 local");
		tc_release(&c);
	}
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1, orders[1]));
	json_array_append_new(c.claims, claim("claim-0", "[" MEM_REQ("req-0", "1Gi") "]", NULL));
	json_array_append_new(c.claims, claim("claim-1", "[" MEM_REQ("req-1", "2Gi") "]", NULL));
	c.nalloc = 2;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local;claim-1:req-1/driver-a/pool-1/device-2 local");
	tc_release(&c);
}

/* "devices-split-across-different-slices", "obsolete-slice",
 * "duplicate-slice", "no-slices", "not-enough-suitable-devices". */
static void test_pools(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.slices, one("slice-2", "node-1", "pool-2", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0",
		"[{\"name\":\"req-0\",\"count\":2,\"allocationMode\":\"ExactCount\",\"deviceClassName\":\"class-a\"}]",
		NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-0/driver-a/pool-2/device-1 local");
	tc_release(&c);

	/* obsolete-slice: the newer generation wins (its device differs here,
	 * so that the test sees which slice was read) */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1-obsolete", "node-1", "pool-1", "driver-a", 1, 1,
					      "[{\"name\":\"device-old\"}]"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 2, 1,
					      "[{\"name\":\"device-1\"}]"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 2, "[{\"name\":\"device-1\"}]"));
	json_array_append_new(c.slices, slice("slice-1-2", "node-1", "pool-1", "driver-a", 1, 2, "[{\"name\":\"device-1\"}]"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_EINVAL);
	CHECK(t, strstr(out, "pool pool-1 is invalid: duplicate device name device-1") != NULL);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "," REQ("req-1", "class-a") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "claim-0, request req-1: 1 of 1 matching devices free on node-1") != NULL);
	tc_release(&c);
}

/* "no-classes", "unknown-class", "empty-class",
 * "no-claims-to-allocate", "empty". */
static void test_classes(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "could not retrieve device class class-a") != NULL);
	tc_release(&c);

	tc_init(&c); /* unknown-class */
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "unknown-class") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "could not retrieve device class unknown-class") != NULL);
	tc_release(&c);

	tc_init(&c); /* empty: nothing at all */
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_OK);
	CHECK_STR(t, out, "");
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_EINVAL);
	CHECK(t, strstr(out, "claim claim-0, request req-0: missing device class name") != NULL);
	tc_release(&c);


	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_OK);
	CHECK_STR(t, out, "");
	tc_release(&c);
}

/* "all-devices-single", "all-devices-many", "all-devices-of-the-incomplete-pool",
 * "all-devices-many-plus-another" and its reverse (a two-device pool:
 * "all-devices-plus-another" is the same with one), "all-devices-no-solution"
 * and its reverse,
 * "all-devices-slice-without-devices", "all-devices-some-allocated". */
static void test_all(mu_t_t *t)
{
	static const char *const all_a = "[{\"name\":\"req-0\",\"allocationMode\":\"All\",\"deviceClassName\":\"class-a\"}]";
	static const char *const one_b = "[{\"name\":\"req-0\",\"allocationMode\":\"ExactCount\",\"count\":1,"
					 "\"deviceClassName\":\"class-b\"}]";
	char out[1024];
	tcase_t c;
	tc_init(&c); /* all-devices-single */
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", all_a, NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	tc_release(&c);

	tc_init(&c); /* all-devices-many */
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-2", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", all_a, NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-0/driver-a/pool-2/device-1 local");
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 2, "[{\"name\":\"device-1\"}]"));
	json_array_append_new(c.claims, claim("claim-0", all_a, NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "claim claim-0, request req-0: asks for all devices, but resource pool "
			     "driver-a/pool-1 is currently being updated") != NULL);
	tc_release(&c);

	for (int rev = 0; rev < 2; rev++) {
		tc_init(&c);
		json_array_append_new(c.classes, class_("class-a", "driver-a"));
		json_array_append_new(c.classes, class_("class-b", "driver-b"));
		json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
						      "[{\"name\":\"device-1\"},{\"name\":\"device-2\"}]"));
		json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-b"));
		json_array_append_new(c.claims, rev ? claim("claim-1", one_b, NULL) : claim("claim-0", all_a, NULL));
		json_array_append_new(c.claims, rev ? claim("claim-0", all_a, NULL) : claim("claim-1", one_b, NULL));
		c.nalloc = 2;
		run(&c, out, sizeof out);
		CHECK_STR(t, out, rev ? "claim-1:req-0/driver-b/pool-1/device-1 local;claim-0:req-0/driver-a/pool-1/device-1,"
					"req-0/driver-a/pool-1/device-2 local"
				      : "claim-0:req-0/driver-a/pool-1/device-1,req-0/driver-a/pool-1/device-2 local;"
					"claim-1:req-0/driver-b/pool-1/device-1 local");
		tc_release(&c);
	}

	/* no solution: one device, an ExactCount and an All claim on it */
	for (int rev = 0; rev < 2; rev++) {
		tc_init(&c);
		json_array_append_new(c.classes, class_("class-a", "driver-a"));
		json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
		const char *exact = "[{\"name\":\"req-0\",\"count\":1,\"deviceClassName\":\"class-a\"}]";
		json_array_append_new(c.claims, claim(rev ? "claim-0" : "claim-1", rev ? all_a : exact, NULL));
		json_array_append_new(c.claims, claim(rev ? "claim-1" : "claim-0", rev ? exact : all_a, NULL));
		c.nalloc = 2;
		CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
		tc_release(&c);
	}

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1, "[]"));
	json_array_append_new(c.claims, claim("claim-0", all_a, NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	/* some allocated: device-1 is held by another claim */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
					      "[{\"name\":\"device-1\"},{\"name\":\"device-2\"}]"));
	json_array_append_new(c.claims, claim("claim-0", all_a, NULL));
	json_array_append_new(c.claims, holder("driver-a pool-1 device-1"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);
}

/* "already-allocated-devices", and a claim already allocated elsewhere. */
static void test_allocated(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	json_array_append_new(c.claims, holder("driver-a pool-1 device-1;driver-a pool-1 device-2"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "0 of 1 matching devices free on node-1") != NULL);
	tc_release(&c);

	/* a claim allocated on node-2 cannot be used on node-1 */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_t *cl = claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL);
	json_object_set_new(cl, "status", json_pack("{s:{s:{s:[]},s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}}", "allocation",
		"devices", "results", "nodeSelector", "nodeSelectorTerms", "matchFields", "key", "metadata.name",
		"operator", "In", "values", "node-2"));
	json_array_append_new(c.claims, cl);
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "claim claim-0 is allocated on node-2") != NULL);
	tc_release(&c);
}

/* "with-constraint", "with-constraint-non-existent-attribute",
 * "with-constraint-not-matching-int-attribute", and backtracking to meet a
 * constraint. */
static void test_constraints(mu_t_t *t)
{
	static const char *const attrs = "{\"driverVersion\":{\"version\":\"1.0.0\"},\"numa\":{\"int\":1},"
					 "\"stringAttribute\":{\"string\":\"stringAttributeValue\"},"
					 "\"boolAttribute\":{\"bool\":true}}";
	char devs[1024], out[1024];
	snprintf(devs, sizeof devs, "[{\"name\":\"device-1\",\"basic\":{\"attributes\":%s}},"
		 "{\"name\":\"device-2\",\"basic\":{\"attributes\":%s}}]", attrs, attrs);
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1, devs));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "," REQ("req-1", "class-a") "]",
		"[{\"matchAttribute\":\"driver-a/numa\"},{\"matchAttribute\":\"driver-a/driverVersion\"},"
		"{\"matchAttribute\":\"driver-a/stringAttribute\"},{\"matchAttribute\":\"driver-a/boolAttribute\"}]"));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-1/driver-a/pool-1/device-2 local");
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]",
					      "[{\"matchAttribute\":\"driver-a/NonExistentAttribute\"}]"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"device-1\",\"basic\":{\"attributes\":{\"numa\":{\"int\":1}}}},"
		"{\"name\":\"device-2\",\"basic\":{\"attributes\":{\"numa\":{\"int\":2}}}}]"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"count\":2,\"deviceClassName\":\"class-a\"}]",
					      "[{\"matchAttribute\":\"driver-a/numa\"}]"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	/* muster's own: the first device's NUMA has no partner, the search
	 * moves on to the pair on NUMA 2 */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"gpu-0\",\"basic\":{\"attributes\":{\"numa\":{\"int\":1}}}},"
		"{\"name\":\"gpu-1\",\"basic\":{\"attributes\":{\"numa\":{\"int\":2}}}},"
		"{\"name\":\"gpu-2\",\"basic\":{\"attributes\":{\"numa\":{\"int\":2}}}}]"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"count\":2,\"deviceClassName\":\"class-a\"}]",
					      "[{\"matchAttribute\":\"driver-a/numa\"}]"));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/gpu-1,req-0/driver-a/pool-1/gpu-2 local");
	tc_release(&c);
}

/* allNodes slices give an allocation without a node selector. */
static void test_all_nodes(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1");
	tc_release(&c);
}

/* A slice of one device (device-1) whose spec.nodeSelector is sel (JSON). */
static json_t *sel_slice(const char *name, const char *sel, const char *pool, const char *drv)
{
	json_t *s = slice(name, "", pool, drv, 1, 1, "[{\"name\":\"device-1\",\"basic\":{}}]");
	json_object_del(json_object_get(s, "spec"), "allNodes");
	json_object_set_new(json_object_get(s, "spec"), "nodeSelector", json_loads(sel, 0, NULL));
	return s;
}

#define LABEL_SEL(k, v) "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":" \
	"\"In\",\"values\":[\"" v "\"]}]}]}"
#define NAME_SEL(n) "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":" \
	"\"In\",\"values\":[\"" n "\"]}]}]}"

/* Slices with a nodeSelector (network-attached devices), from
 * allocator_test.go (1.32): "network-attached-device",
 * "unsuccessful-allocation-network-attached-device",
 * "many-network-attached-devices" (the allocation's selector is one term
 * joining the slices' requirements; an allNodes slice adds none) and
 * "local-and-network-attached-devices" (a node-local device makes it the
 * node).  As node() there, node-1 has region-1 and planet earth. */
static void test_network(mu_t_t *t)
{
	char out[2048];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", LABEL_SEL("region", "region-1"), "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 sel=" LABEL_SEL("region", "region-1"));
	c.node = "node-2"; /* "unsuccessful-allocation-network-attached-device": wrong region */
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "0 of 1 matching devices free on node-2") != NULL);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", LABEL_SEL("region", "region-1"), "pool-1", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "", "pool-2", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", LABEL_SEL("planet", "earth"), "pool-3", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", NAME_SEL("node-1"), "pool-4", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"count\":4,\"deviceClassName\":\"class-a\"}]",
					      NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-0/driver-a/pool-2/device-1,"
		  "req-0/driver-a/pool-3/device-1,req-0/driver-a/pool-4/device-1 sel={\"nodeSelectorTerms\":[{"
		  "\"matchExpressions\":[{\"key\":\"region\",\"operator\":\"In\",\"values\":[\"region-1\"]},"
		  "{\"key\":\"planet\",\"operator\":\"In\",\"values\":[\"earth\"]}],\"matchFields\":[{\"key\":"
		  "\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-1\"]}]}]}");
	c.node = "node-2"; /* region-1 and node-1's own slice do not serve it */
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", LABEL_SEL("region", "region-1"), "pool-1", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-2", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"count\":2,\"deviceClassName\":\"class-a\"}]",
					      NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-0/driver-a/pool-2/device-1 local");
	tc_release(&c);

	/* muster's own: a claim allocated from a network-attached device
	 * stays usable on every node its selector selects, and only there;
	 * the device is taken for other claims on every node */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", LABEL_SEL("planet", "earth"), "pool-1", "driver-a"));
	json_t *held = holder("driver-a pool-1 device-1");
	json_object_set_new(json_object_get(json_object_get(held, "status"), "allocation"), "nodeSelector",
			    json_loads(LABEL_SEL("planet", "earth"), 0, NULL));
	json_array_append_new(c.claims, held);
	json_array_append_new(c.claims, claim("claim-1", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	c.node = "node-2";
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_OK);
	json_object_set_new(json_object_get(json_object_get(held, "status"), "allocation"), "nodeSelector",
			    json_loads(LABEL_SEL("planet", "mars"), 0, NULL));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	CHECK(t, strstr(out, "its nodeSelector selects, and it does not select node-2") != NULL);
	json_array_remove(c.claims, 0);
	json_array_append_new(c.claims, holder("driver-a pool-1 device-1"));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT); /* claim-1 now: the device is held */
	tc_release(&c);

	/* what a node has of a class (muster's own: the scenario runner's
	 * device counts): node-local and the shared slices that serve it;
	 * with no node, the shared slices' devices */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, sel_slice("slice-1", LABEL_SEL("region", "region-1"), "pool-1", "driver-a"));
	json_array_append_new(c.slices, slice("slice-2", "node-2", "pool-2", "driver-a", 1, 1,
		"[{\"name\":\"d1\",\"basic\":{}},{\"name\":\"d2\",\"basic\":{}}]"));
	json_array_append_new(c.slices, one("slice-3", "node-2", "pool-3", "driver-b"));
	{
		mu_dra_view_t v = {c.slices, c.classes, c.claims, c.nodes, c.rules};
		char m[200];
		CHECK_EQ_INT(t, (int)mu_dra_class_devices(&v, "class-a", "node-1", m, sizeof m), 1);
		CHECK_EQ_INT(t, (int)mu_dra_class_devices(&v, "class-a", "node-2", m, sizeof m), 2);
		CHECK_EQ_INT(t, (int)mu_dra_class_devices(&v, "class-a", NULL, m, sizeof m), 1);
		CHECK_EQ_INT(t, (int)mu_dra_class_devices(&v, "class-x", "node-2", m, sizeof m), 0);
	}
	tc_release(&c);

	/* node selector operators (core/v1): NotIn, Exists, DoesNotExist, Gt,
	 * Lt, and terms ORed; a term without requirements selects nothing */
	json_t *lab = json_pack("{s:s,s:s}", "region", "region-1", "gpus", "8");
	CHECK(t, mu_dra_node_selects(NULL, "n", lab));
	const char *yes[] = {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"region\",\"operator\":\"NotIn\",\"values\":[\"x\"]}]}]}",
			     "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpus\",\"operator\":\"Gt\",\"values\":[\"4\"]},{\"key\":\"zone\",\"operator\":\"DoesNotExist\"}]}]}",
			     "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"m\"]}]},{\"matchExpressions\":[{\"key\":\"region\",\"operator\":\"Exists\"}]}]}"};
	const char *no[] = {"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpus\",\"operator\":\"Lt\",\"values\":[\"4\"]}]}]}",
			    "{\"nodeSelectorTerms\":[{}]}",
			    "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\",\"values\":[\"n\"]}]}]}"};
	for (int i = 0; i < 3; i++) {
		json_t *y = json_loads(yes[i], 0, NULL), *n = json_loads(no[i], 0, NULL);
		CHECK(t, mu_dra_node_selects(y, "n", lab));
		CHECK(t, !mu_dra_node_selects(n, "n", lab));
		json_decref(y);
		json_decref(n);
	}
	json_decref(lab);
}


/* A slice's nodeSelector with two terms, read as kube's allocator reads it
 * (structured allocator, 1.32: nodeMatches ORs the terms when slices are
 * gathered for a node; createNodeSelector then fails for a device of such
 * a slice with "unsupported ResourceSlice.NodeSelector with 2 terms",
 * unless a node-local device of the claim came first; kube-apiserver's
 * validation allows one term only, so such slices come from scenario files
 * or another server).  Before, muster refused the slice whenever it served
 * the node, even for claims that took none of its devices. */
#define TWO_TERMS "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"region\",\"operator\":" \
	"\"In\",\"values\":[\"nowhere\"]}]},{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":" \
	"\"In\",\"values\":[\"node-1\"]}]}]}"
static void test_two_terms(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.classes, class_("class-b", "driver-b"));
	json_array_append_new(c.slices, sel_slice("slice-1", TWO_TERMS, "pool-1", "driver-a"));
	json_array_append_new(c.slices, one("slice-2", "node-1", "pool-2", "driver-b"));
	/* the second term selects node-1: the device is found, but its
	 * selector cannot be merged into the allocation's */
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_EINVAL);
	CHECK(t, strstr(out, "unsupported ResourceSlice.NodeSelector with 2 terms") != NULL);
	c.node = "node-2"; /* neither term selects node-2 */
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	c.node = NULL;
	/* a claim that takes none of its devices is not refused */
	json_array_clear(c.claims);
	json_array_append_new(c.claims, claim("claim-1", "[" REQ("req-0", "class-b") "]", NULL));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_OK);
	CHECK_STR(t, out, "claim-1:req-0/driver-b/pool-2/device-1 local");
	/* a node-local device first settles the selector */
	json_array_clear(c.claims);
	json_array_append_new(c.claims, claim("claim-2", "[" REQ("req-0", "class-b") "," REQ("req-1", "class-a") "]", NULL));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_OK);
	CHECK_STR(t, out, "claim-2:req-0/driver-b/pool-2/device-1,req-1/driver-a/pool-1/device-1 local");
	/* and after it, the failure comes first */
	json_array_clear(c.claims);
	json_array_append_new(c.claims, claim("claim-3", "[" REQ("req-0", "class-a") "," REQ("req-1", "class-b") "]", NULL));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_EINVAL);
	tc_release(&c);
}

#define NUMA_DEV(name, n) "{\"name\":\"" name "\",\"basic\":{\"attributes\":{\"numa\":{\"int\":" #n "}}}}"

/* distinctAttribute (DRAConsumableCapacity, resource.k8s.io v1 in 1.34):
 * every device under the constraint needs the attribute, and no two of
 * them may share its value.  "with-distinct-constraints" and
 * "with-distinct-constraints-attribute-not-set" of the shared allocator
 * cases (staging/src/k8s.io/dynamic-resource-allocation/structured/
 * internal/allocatortesting/allocator_testing.go; there the devices also
 * allow multiple allocations, which changes nothing here), then muster's
 * own; an empty constraint is refused, as "unknown-constraint". */
static void test_distinct(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"device-1\",\"basic\":{\"attributes\":{\"driverVersion\":{\"version\":\"1.0.0\"},\"numa\":{\"int\":0},\"boolAttribute\":{\"bool\":true}}}},"
		"{\"name\":\"device-2\",\"basic\":{\"attributes\":{\"driverVersion\":{\"version\":\"1.0.1\"},\"numa\":{\"int\":1},\"boolAttribute\":{\"bool\":false}}}},"
		"{\"name\":\"device-3\",\"basic\":{\"attributes\":{\"driverVersion\":{\"version\":\"1.0.2\"},\"numa\":{\"int\":2},\"boolAttribute\":{\"bool\":true}}}},"
		"{\"name\":\"device-4\",\"basic\":{\"attributes\":{\"driverVersion\":{\"version\":\"1.0.0\"},\"numa\":{\"int\":3},\"boolAttribute\":{\"bool\":true}}}}]"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "," REQ("req-1", "class-a") ","
		REQ("req-2", "class-a") "," REQ("req-3", "class-a") "]",
		"[{\"distinctAttribute\":\"driver-a/boolAttribute\",\"requests\":[\"req-0\",\"req-1\"]},"
		"{\"distinctAttribute\":\"driver-a/driverVersion\",\"requests\":[\"req-0\",\"req-1\",\"req-2\"]},"
		"{\"distinctAttribute\":\"driver-a/numa\",\"requests\":[\"req-0\",\"req-1\",\"req-2\",\"req-3\"]}]"));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1,req-1/driver-a/pool-1/device-2,"
		  "req-2/driver-a/pool-1/device-3,req-3/driver-a/pool-1/device-4 local");
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]",
		"[{\"distinctAttribute\":\"driver-a/boolAttribute\",\"requests\":[\"req-0\"]}]"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[" NUMA_DEV("gpu-0", 0) "," NUMA_DEV("gpu-1", 0) "," NUMA_DEV("gpu-2", 1) "," NUMA_DEV("gpu-3", 1) "]"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"count\":2,\"deviceClassName\":\"class-a\"}]",
					      "[{\"distinctAttribute\":\"driver-a/numa\"}]"));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/gpu-0,req-0/driver-a/pool-1/gpu-2 local");
	tc_release(&c);

	/* three devices on two values: no allocation */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[" NUMA_DEV("gpu-0", 0) "," NUMA_DEV("gpu-1", 0) "," NUMA_DEV("gpu-2", 1) "," NUMA_DEV("gpu-3", 1) "]"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"count\":3,\"deviceClassName\":\"class-a\"}]",
					      "[{\"distinctAttribute\":\"driver-a/numa\"}]"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	tc_release(&c);

	/* across requests, only those named; a device without the attribute
	 * does not fit; match and distinct together */
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"bare\",\"basic\":{}}," NUMA_DEV("gpu-0", 0) "," NUMA_DEV("gpu-1", 0) "," NUMA_DEV("gpu-2", 1) "]"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "," REQ("req-1", "class-a") ","
					      REQ("req-2", "class-a") "]",
					      "[{\"requests\":[\"req-0\",\"req-1\"],\"distinctAttribute\":\"driver-a/numa\"}]"));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/gpu-0,req-1/driver-a/pool-1/gpu-2,req-2/driver-a/pool-1/bare local");
	tc_release(&c);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", "[{}]"));
	c.nalloc = 1;
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_EINVAL);
	CHECK(t, strstr(out, "empty constraint") != NULL);
	tc_release(&c);
}

/* DeviceTaintRule (resource.k8s.io/v1alpha3, DRADeviceTaints): the rule's
 * taint is added to every device its deviceSelector selects (driver, pool,
 * device, a class's and its own CEL selectors), and counts as the
 * device's own taints do: "tainted-two-devices"-like, through a rule.  A
 * rule with an unsupported selector is refused, naming it. */
static void test_taint_rules(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"device-1\",\"basic\":{}},{\"name\":\"device-2\",\"basic\":{}}]"));
	json_array_append_new(c.claims, claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL));
	json_array_append_new(c.rules, json_loads("{\"metadata\":{\"name\":\"r1\"},\"spec\":{\"deviceSelector\":"
		"{\"driver\":\"driver-a\",\"pool\":\"pool-1\",\"device\":\"device-1\"},\"taint\":{\"key\":\"k\","
		"\"value\":\"v\",\"effect\":\"NoSchedule\"}}}", 0, NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-2 local");
	/* a rule for the whole class: nothing left, unless tolerated */
	json_array_append_new(c.rules, json_loads("{\"metadata\":{\"name\":\"r2\"},\"spec\":{\"deviceSelector\":"
		"{\"deviceClassName\":\"class-a\"},\"taint\":{\"key\":\"k\",\"effect\":\"NoExecute\"}}}", 0, NULL));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_ENOENT);
	json_array_clear(c.claims);
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"deviceClassName\":\"class-a\","
		"\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}]", NULL));
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	/* a CEL selector that is not understood: refused with the rule's name */
	json_array_append_new(c.rules, json_loads("{\"metadata\":{\"name\":\"r3\"},\"spec\":{\"deviceSelector\":"
		"{\"selectors\":[{\"cel\":{\"expression\":\"noSuchVar\"}}]},\"taint\":{\"key\":\"k\","
		"\"effect\":\"NoSchedule\"}}}", 0, NULL));
	CHECK_EQ_INT(t, run(&c, out, sizeof out), MU_EINVAL);
	CHECK(t, strstr(out, "DeviceTaintRule r3") != NULL);
	tc_release(&c);
}

/* An allocated claim holding driver-a/pool-1/device-1, its result with
 * tolerations tols (JSON array, or NULL). */
static json_t *held_with(const char *tols)
{
	json_t *c = holder("driver-a pool-1 device-1");
	json_t *r = json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(c, "status"),
		"allocation"), "devices"), "results"), 0);
	if (tols)
		json_object_set_new(r, "tolerations", json_loads(tols, 0, NULL));
	return c;
}

/* When NoExecute taints evict the pods of an allocated claim
 * (mu_dra_eviction_ms), as pkg/controller/devicetainteviction computes a
 * claim's eviction time; the cases of its device_taint_eviction_test.go:
 * "untainted-claim", "tainted-claim-through-resourceslice",
 * "tainted-claim-through-rule" (both at the taint's time) and
 * "evict-pod-rule-later" (a toleration of an hour: an hour later).  Then
 * muster's own: a toleration without seconds keeps the pod, NoSchedule
 * evicts no one, the smallest tolerationSeconds wins, an older generation
 * of the pool is not read, and an allocation without tolerations in its
 * results takes its request's. */
static void test_eviction(mu_t_t *t)
{
	const int64_t at = 1700000000000; /* 2023-11-14T22:13:20Z */
	char why[300];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_t *held = held_with(NULL);
	json_array_append_new(c.claims, held);
	mu_dra_view_t v = {c.slices, c.classes, c.claims, c.nodes, c.rules};
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == -1);

	json_array_clear(c.slices);
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[{\"name\":\"device-1\",\"basic\":{\"taints\":[{\"key\":\"k\",\"value\":\"v\","
		"\"effect\":\"NoExecute\",\"timeAdded\":\"2023-11-14T22:13:20Z\"}]}}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at + 5000, why, sizeof why) == at);
	CHECK(t, strstr(why, "driver-a/pool-1/device-1: taint k=v:NoExecute (the slice's)") != NULL);
	/* a newer generation of the pool without the taint replaces it */
	json_array_append_new(c.slices, slice("slice-1b", "node-1", "pool-1", "driver-a", 2, 1,
		"[{\"name\":\"device-1\",\"basic\":{}}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == -1);
	json_array_remove(c.slices, 1);

	/* tolerations: forever, an hour (and 10 s: the smallest wins) */
	json_array_set_new(c.claims, 0, held = held_with("[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == -1);
	json_array_set_new(c.claims, 0, held = held_with("[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\","
		"\"effect\":\"NoExecute\",\"tolerationSeconds\":3600}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == at + 3600000);
	json_array_set_new(c.claims, 0, held = held_with("[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
		"\"tolerationSeconds\":3600},{\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":10}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == at + 10000);
	/* a NoSchedule toleration does not count against NoExecute */
	json_array_set_new(c.claims, 0, held = held_with("[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == at);
	/* a toleration of every effect does not count: the controller takes
	 * only those that name NoExecute */
	json_array_set_new(c.claims, 0, held = held_with("[{\"key\":\"k\",\"operator\":\"Exists\"}]"));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == at);
	/* no tolerations in the result: the request's */
	json_array_set_new(c.claims, 0, held = held_with(NULL));
	json_object_set_new(json_object_get(held, "spec"), "devices", json_loads("{\"requests\":[{\"name\":\"r\","
		"\"deviceClassName\":\"class-a\",\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\","
		"\"effect\":\"NoExecute\"}]}]}", 0, NULL));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == -1);

	/* through a rule, NoSchedule first (no one goes), then NoExecute
	 * without timeAdded (counts from now) */
	json_array_clear(c.slices);
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_set_new(c.claims, 0, held = held_with(NULL));
	json_array_append_new(c.rules, json_loads("{\"metadata\":{\"name\":\"r1\"},\"spec\":{\"deviceSelector\":"
		"{\"driver\":\"driver-a\"},\"taint\":{\"key\":\"k\",\"effect\":\"NoSchedule\"}}}", 0, NULL));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == -1);
	json_array_append_new(c.rules, json_loads("{\"metadata\":{\"name\":\"r2\"},\"spec\":{\"deviceSelector\":"
		"{\"deviceClassName\":\"class-a\"},\"taint\":{\"key\":\"k\",\"effect\":\"NoExecute\"}}}", 0, NULL));
	CHECK(t, mu_dra_eviction_ms(&v, held, at, why, sizeof why) == at);
	CHECK(t, strstr(why, "a DeviceTaintRule's") != NULL);
	tc_release(&c);
}

#define TAINT_NS "{\"key\":\"taint-key\",\"value\":\"taint-value\",\"effect\":\"NoSchedule\"}"
#define TAINT_NE "{\"key\":\"taint-key\",\"value\":\"taint-value\",\"effect\":\"NoExecute\"}"
#define TOL_NS "{\"key\":\"taint-key\",\"operator\":\"Equal\",\"value\":\"taint-value\",\"effect\":\"NoSchedule\"}"
#define TOL_NE "{\"key\":\"taint-key\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}"
#define TDEV(name, taints) "{\"name\":\"" name "\",\"basic\":{\"taints\":[" taints "]}}"
#define TREQ(tols) "[{\"name\":\"req-0\",\"deviceClassName\":\"class-a\",\"tolerations\":[" tols "]}]"

/* One claim of TREQ(tols) on a slice of devices; the result in out. */
static int taint_case(const char *devs, const char *req, char *out, size_t len)
{
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1, devs));
	json_array_append_new(c.claims, claim("claim-0", req, NULL));
	c.nalloc = 1;
	int rc = run(&c, out, len);
	tc_release(&c);
	return rc;
}

/* DRADeviceTaints (allocator_test.go of 1.33): "tainted-two-devices",
 * "tainted-one-device-two-taints", "tainted-two-devices-tolerated",
 * "tainted-one-device-two-taints-both-tolerated",
 * "tainted-no-effect" (1.35: the effect None keeps nothing away),
 * "tainted-all-devices-single" (a tainted device fails All, it is not left
 * out). */
static void test_taints(mu_t_t *t)
{
	char out[1024];
	CHECK_EQ_INT(t, taint_case("[" TDEV("device-1", TAINT_NS) "," TDEV("device-2", TAINT_NE) "]",
				   TREQ(""), out, sizeof out), MU_ENOENT);
	CHECK_EQ_INT(t, taint_case("[" TDEV("device-1", TAINT_NS "," TAINT_NE) "]", TREQ(""), out, sizeof out),
		     MU_ENOENT);
	taint_case("[" TDEV("device-1", TAINT_NS) "," TDEV("device-2", TAINT_NE) "]", TREQ(TOL_NE), out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-2 local");
	taint_case("[" TDEV("device-1", TAINT_NS "," TAINT_NE) "]", TREQ(TOL_NS "," TOL_NE), out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	/* "tainted-no-effect" (1.35): a taint with the effect None keeps nothing away */
	taint_case("[" TDEV("device-1", "{\"key\":\"taint-key\",\"effect\":\"None\"}") "]", TREQ(""), out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	/* a toleration with Exists and no key tolerates every taint */
	taint_case("[" TDEV("device-1", TAINT_NS "," TAINT_NE) "]", TREQ("{\"operator\":\"Exists\"}"), out,
		   sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	/* Equal with another value does not */
	CHECK_EQ_INT(t, taint_case("[" TDEV("device-1", TAINT_NS) "]", TREQ("{\"key\":\"taint-key\","
		     "\"value\":\"other\"}"), out, sizeof out), MU_ENOENT);
	CHECK_EQ_INT(t, taint_case("[" TDEV("device-1", TAINT_NS) "]",
		     "[{\"name\":\"req-0\",\"deviceClassName\":\"class-a\",\"allocationMode\":\"All\"}]",
		     out, sizeof out), MU_ENOENT);
}

/* DRAAdminAccess: "admin-access-enabled" (the device is in use, admin
 * access gets it, marked), "tainted-admin-access" (admin access does not
 * pass a taint), and a later claim is not kept from a device that an
 * admin-access allocation holds. */
static void test_admin(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0",
		"[{\"name\":\"req-0\",\"deviceClassName\":\"class-a\",\"adminAccess\":true}]", NULL));
	json_array_append_new(c.claims, holder("driver-a pool-1 device-1;driver-a pool-1 device-2"));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/driver-a/pool-1/device-1 local");
	const json_t *cl[1] = {json_array_get(c.claims, 0)};
	mu_dra_view_t v = {c.slices, c.classes, c.claims, NULL, NULL};
	json_t *plan = NULL;
	char msg[256];
	CHECK_EQ_INT(t, mu_dra_allocate(&v, cl, 1, "node-1", &plan, msg, sizeof msg), MU_OK);
	const json_t *r0 = json_array_get(json_object_get(json_object_get(json_object_get(
		json_array_get(plan, 0), "allocation"), "devices"), "results"), 0);
	CHECK(t, json_is_true(json_object_get(r0, "adminAccess")));
	/* the admin allocation, recorded, leaves the device to a plain claim */
	json_t *held = json_pack("{s:{s:s,s:s},s:{},s:{s:O}}", "metadata", "name", "admin", "namespace", "default",
				 "spec", "status", "allocation", json_object_get(json_array_get(plan, 0), "allocation"));
	json_decref(plan);
	json_array_remove(c.claims, 1);
	json_array_append_new(c.claims, held);
	json_array_set_new(c.claims, 0, claim("claim-1", "[" REQ("req-0", "class-a") "]", NULL));
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-1:req-0/driver-a/pool-1/device-1 local");
	tc_release(&c);

	CHECK_EQ_INT(t, taint_case("[" TDEV("device-1", TAINT_NS) "]",
		     "[{\"name\":\"req-0\",\"deviceClassName\":\"class-a\",\"adminAccess\":true}]",
		     out, sizeof out), MU_ENOENT);
}

/* "with-class-device-config", "claim-with-device-config": the class's
 * config (source FromClass) and the claim's (FromClaim) are copied into the
 * allocation. */
static void test_config(mu_t_t *t)
{
	tcase_t c;
	tc_init(&c);
	json_t *cls = class_("class-a", "driver-a");
	json_object_set_new(json_object_get(cls, "spec"), "config", json_loads(
		"[{\"opaque\":{\"driver\":\"driver-a\",\"parameters\":{\"classAttribute\":\"classAttributeValue\"}}}]",
		0, NULL));
	json_array_append_new(c.classes, cls);
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_t *cl = claim("claim-0", "[" REQ("req-0", "class-a") "]", NULL);
	json_object_set_new(json_object_get(json_object_get(cl, "spec"), "devices"), "config", json_loads(
		"[{\"requests\":[\"req-0\"],\"opaque\":{\"driver\":\"driver-a\",\"parameters\":"
		"{\"deviceAttribute\":\"deviceAttributeValue\"}}}]", 0, NULL));
	json_array_append_new(c.claims, cl);
	const json_t *claims[1] = {cl};
	mu_dra_view_t v = {c.slices, c.classes, c.claims, NULL, NULL};
	json_t *plan = NULL;
	char msg[256];
	CHECK_EQ_INT(t, mu_dra_allocate(&v, claims, 1, "node-1", &plan, msg, sizeof msg), MU_OK);
	char *got = json_dumps(json_object_get(json_object_get(json_object_get(json_array_get(plan, 0),
		"allocation"), "devices"), "config"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(t, got ? got : "", "[{\"opaque\":{\"driver\":\"driver-a\",\"parameters\":{\"classAttribute\":"
		  "\"classAttributeValue\"}},\"source\":\"FromClass\"},{\"opaque\":{\"driver\":\"driver-a\","
		  "\"parameters\":{\"deviceAttribute\":\"deviceAttributeValue\"}},\"requests\":[\"req-0\"],"
		  "\"source\":\"FromClaim\"}]");
	free(got);
	json_decref(plan);
	tc_release(&c);
}

#define SUB(name, cls, n) "{\"name\":\"" name "\",\"deviceClassName\":\"" cls "\",\"count\":" #n "}"
#define SUBMEM(name, q) "{\"name\":\"" name "\",\"deviceClassName\":\"class-a\",\"selectors\":[{\"cel\":" \
	"{\"expression\":\"device.capacity[\\\"driver-a\\\"].memory.compareTo(quantity(\\\"" q "\\\")) >= 0\"}}]}"

/* DRAPrioritizedList (allocator_test.go of 1.33):
 * "prioritized-list-too-many-in-first-subrequest" (the first subrequest
 * cannot be met, the second is taken, its result named REQ/SUB),
 * "tainted-prioritized-list" (the only device left is tainted: nothing),
 * and muster's own: a first subrequest that starves a later request is
 * undone, as the real allocator backtracks. */
static void test_first_available(mu_t_t *t)
{
	char out[1024];
	tcase_t c;
	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.classes, class_("class-b", "driver-b"));
	json_array_append_new(c.slices, one("slice-1", "node-1", "pool-1", "driver-a"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"firstAvailable\":["
		SUB("subreq-0", "class-b", 500) "," SUB("subreq-1", "class-a", 1) "]}]", NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/subreq-1/driver-a/pool-1/device-1 local");
	tc_release(&c);

	CHECK_EQ_INT(t, taint_case("[" TDEV("device-1", TAINT_NS) "]", "[{\"name\":\"req-0\",\"firstAvailable\":["
		SUB("subreq-0", "class-b", 1) "," SUB("subreq-1", "class-a", 1) "]}]", out, sizeof out), MU_ENOENT);

	tc_init(&c);
	json_array_append_new(c.classes, class_("class-a", "driver-a"));
	json_array_append_new(c.slices, slice("slice-1", "node-1", "pool-1", "driver-a", 1, 1,
		"[" MEMDEV("device-1", "8Gi") "," MEMDEV("device-2", "4Gi") "]"));
	json_array_append_new(c.claims, claim("claim-0", "[{\"name\":\"req-0\",\"firstAvailable\":["
		SUBMEM("subreq-0", "8Gi") "," SUBMEM("subreq-1", "4Gi") "]}," MEM_REQ("req-1", "8Gi") "]", NULL));
	c.nalloc = 1;
	run(&c, out, sizeof out);
	CHECK_STR(t, out, "claim-0:req-0/subreq-1/driver-a/pool-1/device-2,req-1/driver-a/pool-1/device-1 local");
	tc_release(&c);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_simple);
	MU_RUN(&t, test_backtrack);
	MU_RUN(&t, test_pools);
	MU_RUN(&t, test_classes);
	MU_RUN(&t, test_all);
	MU_RUN(&t, test_allocated);
	MU_RUN(&t, test_constraints);
	MU_RUN(&t, test_all_nodes);
	MU_RUN(&t, test_network);
	MU_RUN(&t, test_two_terms);
	MU_RUN(&t, test_taints);
	MU_RUN(&t, test_distinct);
	MU_RUN(&t, test_taint_rules);
	MU_RUN(&t, test_eviction);
	MU_RUN(&t, test_admin);
	MU_RUN(&t, test_config);
	MU_RUN(&t, test_first_available);
	return mu_t_done(&t);
}
