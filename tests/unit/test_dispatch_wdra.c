/*
 * test_dispatch_wdra.c - a push-mode worker's DRA objects reach the
 * fleet's model of it (src/dispatch/wdra.c, issue 18, round 15): against
 * an in-process `muster up` on loopback (which serves resource.k8s.io/
 * v1beta1), the discovery starts watches of its ResourceSlices,
 * DeviceClasses and ResourceClaims; once they list, the fleet is given
 * them (the cluster's dra_* arrays), a DeviceClass and a ResourceSlice
 * created later reach it, a poll in which nothing changed gives nothing,
 * a Node's labels changed give the set again, and a Node list with the
 * same names and labels does not.
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
	mu_kube_config_t cfg = {0}, *ccfg = calloc(1, sizeof *ccfg); /* c's: freed with it */
	fx_config(&cfg, server);
	fx_config(ccfg, server);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu_cluster_spec_t cs = {.name = "w", .tier = MU_TIER_PRIVATE};
	mu__dcl_t c;
	memset(&c, 0, sizeof c);
	c.name = "w";
	c.cfg = ccfg;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(d.fleet, &cs, &c.fid), MU_OK);
	CHECK_EQ_INT(t, mu__dcl_connect(&c, false), MU_OK);
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

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_worker_dra);
	return mu_t_done(&t);
}
