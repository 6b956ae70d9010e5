/*
 * test_dispatch_hdra.c - a hub job's DRA claims (src/dispatch/hdra.c,
 * issue 18, round 15), against an in-process `muster up` on loopback that
 * is both the hub and the push worker (the copies have names of their
 * own): a Job whose pod template names a missing ResourceClaimTemplate
 * waits with WaitingForResourceClaimTemplate naming it; once it is there
 * the fleet's claims are read from it; its copy is made on the worker
 * under NAME-UID8-GEN, labelled and annotated as job copies are, again
 * counts as made, and the job copy's pod template names it; another
 * object of that name is never taken over (the job refused, the object
 * kept); the sweep keeps the current dispatch's copy and deletes it once
 * the job's generation moved on, never an object without the hub label;
 * a named ResourceClaim waits, is read as shared and copied likewise; a
 * group's pods with claims are refused.
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
#include "muster/load.h"

#define RAPI "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaimtemplates"

static long req(mu_kube_client_t *c, const char *method, const char *path, const char *body,
		json_t **out)
{
	long st = 0;
	char *ans = NULL;
	mu_kube_client_do(c, method, path, body ? "application/json" : NULL, body, 5000, &st, &ans);
	if (out)
		*out = ans ? json_loads(ans, 0, NULL) : NULL;
	free(ans);
	return st;
}

static const char *TPL =
	"{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceClaimTemplate\","
	"\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"%s},\"spec\":{\"spec\":{\"devices\":"
	"{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.example.com\"}]}}}}";
static const char *JOB =
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"namespace\":"
	"\"default\",\"uid\":\"abcdef12-3456\",\"labels\":{\"muster.io/queue\":\"q\"}},\"spec\":"
	"{\"parallelism\":1,\"template\":{\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\","
	"\"resourceClaimTemplateName\":\"gpu-t\"}],\"containers\":[{\"name\":\"c\",\"image\":\"x\","
	"\"resources\":{\"requests\":{\"cpu\":\"1\"},\"claims\":[{\"name\":\"gpu\"}]}}]}}}}";

/* Polls the worker's copied templates (c's watch) until it shows n of
 * them (10 s). */
static bool tpls_seen(mu__dcl_t *c, size_t n)
{
	for (int i = 0; i < 500; i++) {
		json_t *l = NULL;
		bool ok = c->wdtpl && mu_kube_watch_items(c->wdtpl, &l, NULL) &&
			  json_array_size(json_object_get(l, "items")) == n;
		json_decref(l);
		if (ok)
			return true;
		nap_ms(20);
	}
	return false;
}

static void test_hub_claims(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdra-XXXXXX", server[64], body[1024];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0}, *ccfg = calloc(1, sizeof *ccfg);
	fx_config(&cfg, server);
	fx_config(ccfg, server);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &d.hub), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu_cluster_spec_t cs = {.name = "w", .tier = MU_TIER_PRIVATE};
	mu__dcl_t c;
	memset(&c, 0, sizeof c);
	c.name = "w";
	c.cfg = ccfg;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(d.fleet, &cs, &c.fid), MU_OK);
	CHECK_EQ_INT(t, mu__dcl_connect(&c, false), MU_OK);
	d.cls = &c;
	d.ncls = 1;

	/* the job, as job_parse reads it */
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	j.kind = MU__DK_JOB;
	j.ns = "default";
	j.name = "j";
	j.key = "default/j";
	j.uid = "abcdef12-3456";
	j.obj = json_loads(JOB, 0, NULL);
	mu_specs_init(&j.specs);
	mu_diag_t dg = {""};
	CHECK_EQ_INT(t, mu_load_json(j.key, j.obj, &j.specs, &dg), MU_OK);
	CHECK(t, j.specs.jobs[0].podsets[0].dra_claims != NULL);
	d.jobs = (mu__djob_t *[]){&j};
	d.njobs = 1;
	d.by_uid = json_pack("{s:i}", j.uid, 0);

	/* its template missing on the hub: it waits, naming it */
	char why[40] = "", msg[800] = "";
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 1);
	CHECK_STR(t, why, "WaitingForResourceClaimTemplate");
	CHECK(t, strstr(msg, "ResourceClaimTemplate default/gpu-t not found on the hub") != NULL);
	CHECK(t, j.dra == NULL);
	/* there: the fleet's claims from it */
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	CHECK_EQ_INT(t, req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	json_t *e = json_array_get(json_array_get(j.dra, 0), 0);
	CHECK_STR(t, json_string_value(json_object_get(e, "name")), "gpu");
	CHECK(t, json_is_false(json_object_get(e, "shared")));
	CHECK_STR(t, mu__jstr(json_object_get(e, "claim"), "metadata.name"), "gpu-t");
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(json_object_get(e, "claim"),
		  "spec.devices.requests"), 0), "deviceClassName"), "gpu.example.com");

	/* dispatched to c, generation 3: copied under its own name */
	j.state = MU__DJ_DISPATCHED;
	j.cl = 0;
	j.gen = 3;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 201);
	json_t *cp = NULL;
	CHECK_EQ_INT(t, req(d.hub, "GET", RAPI "/gpu-t-abcdef12-3", NULL, &cp), 200);
	CHECK_STR(t, mu__dmeta(cp, "labels", MU__D_HUBUID), "abcdef12-3456");
	CHECK_STR(t, mu__dmeta(cp, "annotations", MU__D_GEN), "3");
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(cp, "spec.spec.devices.requests"), 0),
			      "name"), "gpu");
	json_decref(cp);
	/* again (a retry, a restart): counts as made */
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 201);
	CHECK(t, j.refused == NULL);
	/* the job's copy names it */
	json_t *jc = mu__dcopy(j.obj, j.kind, j.uid, j.key, j.gen);
	mu__dhdra_rename(&j, jc);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(jc, "spec.template.spec.resourceClaims"), 0),
			      "resourceClaimTemplateName"), "gpu-t-abcdef12-3");
	json_decref(jc);

	/* a user's object with the name generation 4's copy would have:
	 * never taken over, the job refused naming it */
	snprintf(body, sizeof body, TPL, "gpu-t-abcdef12-4", "");
	CHECK_EQ_INT(t, req(d.hub, "POST", RAPI, body, NULL), 201);
	j.gen = 4;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 409);
	CHECK(t, j.refused && strstr(j.refused, "gpu-t-abcdef12-4 that the dispatcher did not "
				     "make for this dispatch: not overwritten"));
	free(j.refused);
	j.refused = NULL;

	/* the sweep: generation 3 current, kept */
	j.gen = 3;
	d.kind_listed[MU__DK_JOB] = true;
	mu__ddra_discover(&d, &c);
	CHECK(t, c.wdtpl != NULL);
	CHECK(t, tpls_seen(&c, 1)); /* the copy (the user's has no hub label) */
	d.full = true;
	mu__dhdra_sweep(&d, &c);
	CHECK_EQ_INT(t, req(d.hub, "GET", RAPI "/gpu-t-abcdef12-3", NULL, NULL), 200);
	CHECK_EQ_INT(t, c.dcopies, 1);
	/* nothing moved: nothing read */
	d.full = false;
	mu__dhdra_sweep(&d, &c);
	CHECK_EQ_INT(t, c.dcopies, 1);
	/* requeued and sent again (generation 5): the old copy deleted, the
	 * user's object and the hub's template kept */
	j.gen = 5;
	d.full = true;
	mu__dhdra_sweep(&d, &c);
	CHECK_EQ_INT(t, req(d.hub, "GET", RAPI "/gpu-t-abcdef12-3", NULL, NULL), 404);
	CHECK_EQ_INT(t, req(d.hub, "GET", RAPI "/gpu-t-abcdef12-4", NULL, NULL), 200);
	CHECK_EQ_INT(t, req(d.hub, "GET", RAPI "/gpu-t", NULL, NULL), 200);

	/* a named claim: waits for it, then read as shared and copied */
	json_t *o2 = json_loads(JOB, 0, NULL);
	json_t *rc0 = json_array_get(mu__jget(o2, "spec.template.spec.resourceClaims"), 0);
	json_object_del(rc0, "resourceClaimTemplateName");
	json_object_set_new(rc0, "resourceClaimName", json_string("shared-c"));
	json_decref(j.obj);
	j.obj = o2;
	mu_specs_release(&j.specs);
	mu_specs_init(&j.specs);
	CHECK_EQ_INT(t, mu_load_json(j.key, j.obj, &j.specs, &dg), MU_OK);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 1);
	CHECK_STR(t, why, "WaitingForResourceClaim");
	CHECK(t, strstr(msg, "ResourceClaim default/shared-c not found on the hub") != NULL);
	CHECK_EQ_INT(t, req(d.hub, "POST", "/apis/resource.k8s.io/v1beta1/namespaces/default/"
			    "resourceclaims", "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":"
			    "\"ResourceClaim\",\"metadata\":{\"name\":\"shared-c\"},\"spec\":{\"devices\":"
			    "{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.example.com\"}]}}}",
			    NULL), 201);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	CHECK(t, json_is_true(json_object_get(json_array_get(json_array_get(j.dra, 0), 0), "shared")));
	j.gen = 6;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 201);
	cp = NULL;
	CHECK_EQ_INT(t, req(d.hub, "GET", "/apis/resource.k8s.io/v1beta1/namespaces/default/"
			    "resourceclaims/shared-c-abcdef12-6", NULL, &cp), 200);
	CHECK_STR(t, mu__dmeta(cp, "labels", MU__D_HUBUID), "abcdef12-3456");
	json_decref(cp);
	jc = mu__dcopy(j.obj, j.kind, j.uid, j.key, j.gen);
	mu__dhdra_rename(&j, jc);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(jc, "spec.template.spec.resourceClaims"), 0),
			      "resourceClaimName"), "shared-c-abcdef12-6");
	json_decref(jc);

	/* a group's pods with claims: refused */
	j.kind = MU__DK_PODGROUP;
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), -1);
	CHECK_STR(t, why, "InvalidJob");
	CHECK(t, strstr(msg, "DRA resource claims are not dispatched") != NULL);

	mu__dhdra_clear(&j);
	json_decref(j.obj);
	mu_specs_release(&j.specs);
	json_decref(d.by_uid);
	mu__dcl_disconnect(&c);
	mu_kube_client_free(d.hub);
	mu_fleet_free(d.fleet);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_hub_claims);
	return mu_t_done(&t);
}
