/*
 * test_dispatch_wdra.c - a push-mode worker's DRA objects reach the
 * fleet's model of it (src/dispatch/wdra.c, issue 18, round 15): against
 * an in-process `muster up` on loopback (which serves resource.k8s.io/
 * v1beta1), the discovery starts watches of its ResourceSlices,
 * DeviceClasses and ResourceClaims; once they list, the fleet is given
 * them (the cluster's dra_* arrays), a DeviceClass and a ResourceSlice
 * created later reach it, a poll in which nothing changed gives nothing,
 * a Node's labels changed give the set again, and a Node list with the
 * same names and labels does not.  Round 16, pull mode: the agent's
 * report (mu__ddra_report) is cut to what the allocator reads, leaves
 * out claims not allocated and is an error past its bound; the hub
 * (mu__ddra_pull) gives the fleet what it says, nothing again for the
 * same report and Nodes, again when a Node's labels change, and takes it
 * away on an error or on none.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "check.h"
#include "dispatch_fixture.h"
#include "dispatch/dispatch_int.h"
#include "fleet/fleet_int.h"
#include "muster/apiserver.h"
#include "muster/jpath.h"
#include "muster/kube.h"

static long req(mu_kube_client_t *c, const char *method, const char *path, const char *body)
{
	long st = 0;
	char *ans = NULL;
	mu_kube_client_do(c, method, path, body ? "application/json" : NULL, body, 5000, &st, &ans);
	free(ans);
	return st;
}

/* Polls until the fleet is given c's DRA objects (at most 10 s). */
static bool fed(mu__dd_t *d, mu__dcl_t *c, const json_t *nl)
{
	for (int i = 0; i < 500; i++) {
		if (mu__ddra_poll(d, c, nl))
			return true;
		nap_ms(20);
	}
	return false;
}

static const char *CLASS =
	"{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"DeviceClass\",\"metadata\":"
	"{\"name\":\"gpu.example.com\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":"
	"\"device.driver == \\\"gpu.example.com\\\"\"}}]}}";
static const char *SLICE =
	"{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceSlice\",\"metadata\":"
	"{\"name\":\"n1-gpus\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n1\","
	"\"pool\":{\"name\":\"n1\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":"
	"[{\"name\":\"gpu-0\",\"basic\":{}}]}}";
static const char *NODE =
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":"
	"{\"zone\":\"%s\"}},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\","
	"\"pods\":\"110\"}}}";

/* The Node list of c's watch once it shows n Nodes labelled zone (10 s). */
static json_t *nodes_with(mu__dcl_t *c, size_t n, const char *zone)
{
	for (int i = 0; i < 500; i++) {
		json_t *nl = NULL;
		if (mu_kube_watch_items(c->wnodes, &nl, NULL)) {
			json_t *items = json_object_get(nl, "items");
			const char *z = json_string_value(json_object_get(json_object_get(
				json_object_get(json_array_get(items, 0), "metadata"), "labels"), "zone"));
			if (json_array_size(items) == n && (!n || (z && !strcmp(z, zone))))
				return nl;
		}
		json_decref(nl);
		nap_ms(20);
	}
	return NULL;
}

static void test_worker_dra(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-wdra-XXXXXX", server[64], body[512];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0};
	fx_config(&cfg, server);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu__dcl_t c;
	fx_cluster(t, &d, &c, server);
	const mu__cluster_t *k = &d.fleet->clusters[c.fid];

	/* not asked yet: no watch, nothing given */
	CHECK(t, !mu__ddra_poll(&d, &c, NULL));
	CHECK(t, c.wdra[MU__DDRA_SLICES] == NULL);
	/* asked: muster up serves all three, watched; listed, given (empty) */
	mu__ddra_discover(&d, &c);
	CHECK_EQ_INT(t, c.dra_on, 1);
	CHECK(t, c.wdra[0] && c.wdra[1] && c.wdra[2]);
	CHECK(t, fed(&d, &c, NULL));
	CHECK_EQ_INT(t, c.dra_fed, 1);
	CHECK_EQ_INT(t, json_array_size(k->dra_slices), 0);
	/* nothing changed: nothing given */
	CHECK(t, !mu__ddra_poll(&d, &c, NULL));
	CHECK_EQ_INT(t, c.dra_fed, 1);
	/* a class and a slice appear: given again, with them */
	mu_kube_client_t *kc = NULL;
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &kc), MU_OK);
	CHECK_EQ_INT(t, req(kc, "POST", "/apis/resource.k8s.io/v1beta1/deviceclasses", CLASS), 201);
	CHECK_EQ_INT(t, req(kc, "POST", "/apis/resource.k8s.io/v1beta1/resourceslices", SLICE), 201);
	for (int i = 0; i < 20 && json_array_size(k->dra_slices) == 0; i++)
		CHECK(t, fed(&d, &c, NULL));
	CHECK_EQ_INT(t, json_array_size(k->dra_slices), 1);
	CHECK_EQ_INT(t, json_array_size(k->dra_classes), 1);
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(json_array_get(
			  k->dra_slices, 0), "spec"), "nodeName")), "n1");
	/* a Node appears: given again with its name and labels */
	snprintf(body, sizeof body, NODE, "a");
	CHECK_EQ_INT(t, req(kc, "POST", "/api/v1/nodes", body), 201);
	json_t *nl = nodes_with(&c, 1, "a");
	CHECK(t, nl != NULL);
	uint32_t n0 = c.dra_fed;
	CHECK(t, mu__ddra_poll(&d, &c, nl));
	CHECK_EQ_INT(t, c.dra_fed, n0 + 1);
	CHECK_EQ_INT(t, json_array_size(k->dra_nodes), 1);
	/* the same names and labels (as a Node's status changing gives): not */
	CHECK(t, !mu__ddra_poll(&d, &c, nl));
	CHECK_EQ_INT(t, c.dra_fed, n0 + 1);
	json_decref(nl);
	/* its labels changed: given again */
	snprintf(body, sizeof body, NODE, "b");
	CHECK_EQ_INT(t, req(kc, "PUT", "/api/v1/nodes/n1", body), 200);
	nl = nodes_with(&c, 1, "b");
	CHECK(t, nl != NULL);
	CHECK(t, mu__ddra_poll(&d, &c, nl));
	CHECK_EQ_INT(t, c.dra_fed, n0 + 2);
	CHECK_STR(t, json_string_value(json_object_get(json_object_get(json_object_get(
			  json_array_get(k->dra_nodes, 0), "metadata"), "labels"), "zone")), "b");
	json_decref(nl);

	mu__dcl_disconnect(&c);
	CHECK(t, c.wdra[0] == NULL && c.dra_nodes == NULL && c.cfg == NULL);
	mu_kube_client_free(kc);
	mu_fleet_free(d.fleet);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* Pull mode (round 16): the agent's report and the hub's model of it. */
static void test_pull_dra(mu_t_t *t)
{
	json_t *l[MU__DDRA_N];
	l[MU__DDRA_SLICES] = json_loads(
		"{\"items\":[{\"metadata\":{\"name\":\"s1\",\"uid\":\"u\",\"managedFields\":[1,2]},"
		"\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n1\",\"pool\":{\"name\":"
		"\"n1\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"g0\"}]}}]}",
		0, NULL);
	l[MU__DDRA_CLASSES] = json_loads(
		"{\"items\":[{\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{}}]}", 0, NULL);
	l[MU__DDRA_CLAIMS] = json_loads(
		"{\"items\":[{\"metadata\":{\"name\":\"free\",\"namespace\":\"default\"},\"spec\":{}},"
		"{\"metadata\":{\"name\":\"held\",\"namespace\":\"ns1\",\"labels\":{\"a\":\"b\"}},"
		"\"spec\":{},\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":"
		"\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"g0\"}]}}}}]}",
		0, NULL);
	char *text = mu__ddra_report((const json_t *const *)l, MU__DDRA_REPORT_MAX);
	json_t *r = text ? json_loads(text, 0, NULL) : NULL;
	CHECK(t, r != NULL);
	/* cut to what the allocator reads; the claim not allocated left out */
	CHECK(t, mu__jget(json_array_get(json_object_get(r, "slices"), 0), "metadata.uid") == NULL);
	CHECK(t, mu__jget(json_array_get(json_object_get(r, "slices"), 0), "metadata.managedFields") == NULL);
	CHECK_STR(t, mu__jstr(json_array_get(json_object_get(r, "slices"), 0), "spec.nodeName"), "n1");
	CHECK_EQ_INT(t, (int)json_array_size(json_object_get(r, "classes")), 1);
	CHECK_EQ_INT(t, (int)json_array_size(json_object_get(r, "claims")), 1);
	json_t *held = json_array_get(json_object_get(r, "claims"), 0);
	CHECK_STR(t, mu__jstr(held, "metadata.namespace"), "ns1");
	CHECK(t, mu__jget(held, "metadata.labels") == NULL && mu__jget(held, "spec") == NULL);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(held, "status.allocation.devices.results"), 0),
			      "device"), "g0");
	json_decref(r);
	/* past its bound: an error, not a report */
	char *big = mu__ddra_report((const json_t *const *)l, 100);
	r = big ? json_loads(big, 0, NULL) : NULL;
	CHECK(t, json_object_get(r, "slices") == NULL);
	CHECK(t, strstr(json_string_value(json_object_get(r, "error")) ?
			json_string_value(json_object_get(r, "error")) : "", "more than its bound of 100") != NULL);
	json_decref(r);

	/* the hub: the fleet is given what the report says */
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu_cluster_spec_t cs = {.name = "edge", .tier = MU_TIER_PRIVATE};
	mu__dcl_t c;
	memset(&c, 0, sizeof c);
	c.name = "edge";
	c.pull = true;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(d.fleet, &cs, &c.fid), MU_OK);
	const mu__cluster_t *k = &d.fleet->clusters[c.fid];
	json_t *nl = json_loads("{\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":{\"z\":\"1\"}},"
				"\"spec\":{}}]}", 0, NULL);
	CHECK(t, mu__ddra_pull(&d, &c, text, nl));
	CHECK_EQ_INT(t, c.dra_on, 1);
	CHECK_EQ_INT(t, (int)json_array_size(k->dra_slices), 1);
	CHECK_EQ_INT(t, (int)json_array_size(k->dra_claims), 1);
	CHECK_EQ_INT(t, (int)json_array_size(k->dra_nodes), 1);
	CHECK_STR(t, mu__jstr(json_array_get(k->dra_nodes, 0), "metadata.labels.z"), "1");
	/* the same heartbeat again: nothing given */
	uint32_t n0 = c.dra_fed;
	CHECK(t, !mu__ddra_pull(&d, &c, text, NULL));
	CHECK(t, !mu__ddra_pull(&d, &c, text, nl));
	CHECK_EQ_INT(t, c.dra_fed, n0);
	/* a Node's labels changed: given again */
	json_decref(nl); /* a new heartbeat's (the fleet's copy shares the old one's labels) */
	nl = json_loads("{\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":{\"z\":\"2\"}},"
			"\"spec\":{}}]}", 0, NULL);
	CHECK(t, mu__ddra_pull(&d, &c, text, nl));
	CHECK_EQ_INT(t, c.dra_fed, n0 + 1);
	/* a report of an error: no DRA there */
	CHECK(t, !mu__ddra_pull(&d, &c, big, NULL));
	CHECK_EQ_INT(t, c.dra_on, 0);
	CHECK(t, k->dra_slices == NULL);
	/* back, then none reported (the worker no longer serves DRA) */
	CHECK(t, mu__ddra_pull(&d, &c, text, NULL));
	CHECK(t, k->dra_slices != NULL);
	CHECK(t, !mu__ddra_pull(&d, &c, NULL, NULL));
	CHECK(t, k->dra_slices == NULL && c.dra_on == 0);
	json_decref(nl);
	json_decref(c.dra_nodes);
	mu_fleet_free(d.fleet);
	free(text);
	free(big);
	for (int i = 0; i < MU__DDRA_N; i++)
		json_decref(l[i]);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_worker_dra);
	MU_RUN(&t, test_pull_dra);
	return mu_t_done(&t);
}
