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
 * a named ResourceClaim waits, is read as shared and copied likewise.
 * Round 16: a group's pods with claims are read and each pod sent names
 * the copies; at dispatch the hub's object is read again (a template
 * changed since is copied as it is now, one deleted since leaves the
 * copy unmade); the pull agent's copies (mu__dhdra_agent_copy: read from
 * the hub, same names and labels, the copy body renamed, a job without
 * claims costs no request, a user's object refuses) and its sweep
 * (mu__dhdra_agent_sweep: the current dispatch's kept, another
 * generation's deleted, a kind not listed left alone).
 * Round 17: at dispatch, before the record, the objects read again
 * (mu__dhdra_stale: one gone or changed is stale, the job read again and
 * its model's claims are the hub's now); a group's pod that came after
 * the group was read and names another template has it copied in push
 * mode (mu__dhdra_pod; not on the hub: not sent; a user's object of the
 * copy's name: refused); a pull agent's refusal read on the hub
 * (mu__dfailed_pull: j->refused for the current generation only).
 * Round 19: such a late pod refused is held, not the group
 * (worker.c's mu__dwork_group_send and mu__dwork_held_tell): Events on
 * the pod and the group, tried again when the pod or its template
 * changes (the watch), the group refused only below its minMember.
 * Round 20: a hold written on the hub group and read back by a restart,
 * not released by the watches' first list then; in push mode released
 * when the worker's object of its copy's name goes.
 * And run.c's read again after a create that found an object gone or
 * changed (mu__drun_created), and its deletion of a copy made then
 * refused, each with a test of its own.
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

/* The items of list l labelled with a hub uid (copies). */
static size_t labelled(const json_t *l)
{
	size_t i, n = 0;
	json_t *o;
	json_array_foreach(json_object_get(l, "items"), i, o)
		n += mu__dmeta(o, "labels", MU__D_HUBUID) != NULL;
	return n;
}

/* Polls the worker's copied templates (c's watch, of all its templates
 * since round 20) until it shows n of them and its claims watch has
 * listed too (the sweep reads both; under load the second may list
 * later: round 17) (10 s). */
static bool tpls_seen(mu__dcl_t *c, size_t n)
{
	for (int i = 0; i < 500; i++) {
		json_t *l = NULL;
		bool ok = c->wdtpl && mu_kube_watch_items(c->wdtpl, &l, NULL) &&
			  labelled(l) == n &&
			  c->wdra[MU__DDRA_CLAIMS] &&
			  mu_kube_watch_items(c->wdra[MU__DDRA_CLAIMS], NULL, NULL);
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
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_hub(t, &d, &o, &cfg, server);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu__dcl_t c;
	fx_cluster(t, &d, &c, server);
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
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
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
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-3", NULL, &cp), 200);
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
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
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
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-3", NULL, NULL), 200);
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
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-3", NULL, NULL), 404);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-4", NULL, NULL), 200);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t", NULL, NULL), 200);

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
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", "/apis/resource.k8s.io/v1beta1/namespaces/default/"
			    "resourceclaims", "{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":"
			    "\"ResourceClaim\",\"metadata\":{\"name\":\"shared-c\"},\"spec\":{\"devices\":"
			    "{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.example.com\"}]}}}",
			    NULL), 201);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	CHECK(t, json_is_true(json_object_get(json_array_get(json_array_get(j.dra, 0), 0), "shared")));
	j.gen = 6;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 201);
	cp = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/apis/resource.k8s.io/v1beta1/namespaces/default/"
			    "resourceclaims/shared-c-abcdef12-6", NULL, &cp), 200);
	CHECK_STR(t, mu__dmeta(cp, "labels", MU__D_HUBUID), "abcdef12-3456");
	json_decref(cp);
	jc = mu__dcopy(j.obj, j.kind, j.uid, j.key, j.gen);
	mu__dhdra_rename(&j, jc);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(jc, "spec.template.spec.resourceClaims"), 0),
			      "resourceClaimName"), "shared-c-abcdef12-6");
	json_decref(jc);

	/* a group's pods with claims (round 16): read as the others, and
	 * each pod sent names the copies */
	j.kind = MU__DK_PODGROUP;
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	CHECK(t, j.dra_src != NULL);
	json_t *pod = json_pack("{s:{s:[{s:s,s:s}]}}", "spec", "resourceClaims", "name", "gpu",
				"resourceClaimName", "shared-c");
	mu__dhdra_rename_pod(&j, pod);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(pod, "spec.resourceClaims"), 0),
			      "resourceClaimName"), "shared-c-abcdef12-6");
	json_decref(pod);
	/* round 17: a pod that came after the group was read names a template
	 * the others do not: read from the hub and copied, the pod renamed */
	pod = json_pack("{s:{s:s},s:{s:[{s:s,s:s},{s:s,s:s}]}}", "metadata", "name", "late", "spec",
			"resourceClaims", "name", "gpu", "resourceClaimName", "shared-c", "name", "t",
			"resourceClaimTemplateName", "gpu-t");
	CHECK_EQ_INT(t, mu__dhdra_pod(&d, c.kc, &j, pod, msg, sizeof msg, NULL), 0);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(pod, "spec.resourceClaims"), 0),
			      "resourceClaimName"), "shared-c-abcdef12-6");
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(pod, "spec.resourceClaims"), 1),
			      "resourceClaimTemplateName"), "gpu-t-abcdef12-6");
	json_decref(pod);
	cp = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-6", NULL, &cp), 200);
	CHECK_STR(t, mu__dmeta(cp, "labels", MU__D_HUBUID), "abcdef12-3456");
	json_decref(cp);
	/* one not on the hub: the pod is not sent (tried again) */
	pod = json_pack("{s:{s:s},s:{s:[{s:s,s:s}]}}", "metadata", "name", "late2", "spec",
			"resourceClaims", "name", "t", "resourceClaimTemplateName", "none-t");
	CHECK_EQ_INT(t, mu__dhdra_pod(&d, c.kc, &j, pod, msg, sizeof msg, NULL), 1);
	CHECK(t, strstr(msg, "pod late2: ResourceClaimTemplate default/none-t not read from the hub: "
			"HTTP 404") != NULL);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(pod, "spec.resourceClaims"), 0),
			      "resourceClaimTemplateName"), "none-t");
	json_decref(pod);
	/* a user's object of the copy's name: refused, not overwritten */
	snprintf(body, sizeof body, TPL, "mine-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	snprintf(body, sizeof body, TPL, "mine-t-abcdef12-6", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	pod = json_pack("{s:{s:s},s:{s:[{s:s,s:s}]}}", "metadata", "name", "late3", "spec",
			"resourceClaims", "name", "t", "resourceClaimTemplateName", "mine-t");
	CHECK_EQ_INT(t, mu__dhdra_pod(&d, c.kc, &j, pod, msg, sizeof msg, NULL), -1);
	CHECK(t, strstr(msg, "ResourceClaimTemplate default/mine-t-abcdef12-6 that the dispatcher "
			"did not make for this dispatch: not overwritten") != NULL);
	json_decref(pod);
	/* a pod without claims: nothing (no request) */
	pod = json_pack("{s:{s:s},s:{}}", "metadata", "name", "plain", "spec");
	CHECK_EQ_INT(t, mu__dhdra_pod(&d, c.kc, &j, pod, msg, sizeof msg, NULL), 0);
	json_decref(pod);
	j.kind = MU__DK_JOB;

	/* round 16: read again at dispatch.  The template changed on the hub
	 * after the job was read: its copy is the hub's object as it is now */
	json_decref(j.obj);
	j.obj = json_loads(JOB, 0, NULL);
	mu_specs_release(&j.specs);
	mu_specs_init(&j.specs);
	CHECK_EQ_INT(t, mu_load_json(j.key, j.obj, &j.specs, &dg), MU_OK);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	snprintf(body, sizeof body, TPL, "gpu-t", ",\"labels\":{\"v\":\"2\"}");
	char *b2 = strdup(body), *at = strstr(b2, "gpu.example.com");
	if (at)
		memcpy(at, "gpu.example.org", 15);
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, b2, NULL), 201);
	free(b2);
	/* round 18: a (retried) create that finds it changed makes no copy
	 * and marks the job stale (run.c's created reads it again at once),
	 * where round 16 copied it as it is now */
	j.gen = 7;
	j.dra_stale = false;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 409);
	CHECK(t, j.dra_stale);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-7", NULL, NULL), 404);
	/* deleted on the hub before dispatch: no copy, the job's copy not
	 * made, and (round 18) the job stale, not retried to --start-timeout */
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	j.gen = 8;
	j.dra_stale = false;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 404);
	CHECK(t, j.dra_stale);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-8", NULL, NULL), 404);
	CHECK(t, j.refused == NULL);

	/* round 17: read at dispatch, before the record (mu__dhdra_stale).
	 * The template gone: stale (the job is read again, not sent) */
	CHECK(t, mu__dhdra_stale(&d, d.hub, &j));
	CHECK(t, j.dra_stale && !j.dra_fresh);
	/* there again as the job read it: current, and the copy made from
	 * what was read, with no second read */
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	CHECK(t, !mu__dhdra_stale(&d, d.hub, &j));
	CHECK(t, !j.dra_stale && j.dra_fresh);
	j.gen = 9;
	CHECK_EQ_INT(t, mu__dhdra_create(&d, c.kc, &j), 201);
	CHECK(t, !j.dra_fresh);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/gpu-t-abcdef12-9", NULL, NULL), 200);
	/* changed on the hub (another class) since it was read: stale; read
	 * again, the model's claim is the one the hub has now */
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	b2 = strdup(body);
	at = strstr(b2, "gpu.example.com");
	if (at)
		memcpy(at, "gpu.example.org", 15);
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, b2, NULL), 201);
	free(b2);
	CHECK(t, mu__dhdra_stale(&d, d.hub, &j));
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(json_array_get(json_array_get(j.dra, 0), 0),
						    "claim.spec.devices.requests"), 0),
			      "deviceClassName"), "gpu.example.com");
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(json_array_get(json_array_get(j.dra, 0), 0),
						    "claim.spec.devices.requests"), 0),
			      "deviceClassName"), "gpu.example.org");
	CHECK(t, !mu__dhdra_stale(&d, d.hub, &j));

	mu__dhdra_forget(&d, &j);
	CHECK_EQ_INT(t, (int)json_object_size(d.dra_idx), 0);
	mu__dhdra_clear(&j);
	json_decref(j.obj);
	mu_specs_release(&j.specs);
	json_decref(d.by_uid);
	mu_kube_watch_stop(d.wdhub[0]);
	mu_kube_watch_stop(d.wdhub[1]);
	json_decref(d.dra_idx);
	mu__dcl_disconnect(&c);
	mu_kube_client_free(d.hub);
	mu_fleet_free(d.fleet);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* Round 17: a pull agent's refusal of a DRA object's copy
 * (muster.io/dispatch-copy-refused, "GEN message") read on the hub: the
 * current generation's gives j->refused (run.c ends it NotAdmitted in the
 * same pass), another generation's, a job not dispatched there or one
 * refused already do not.  No server. */
static void test_pull_refusal(mu_t_t *t)
{
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	mu__dcl_t cls[2];
	memset(cls, 0, sizeof cls);
	cls[0].name = "big";
	cls[1].name = "small";
	cls[1].pull = true;
	d.cls = cls;
	d.ncls = 2;
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	j.kind = MU__DK_JOB;
	j.key = "default/j";
	j.cl = 1;
	j.gen = 2;
	j.state = MU__DJ_DISPATCHED;
	const char *why = "cluster small has a ResourceClaimTemplate default/rt-abcdef12-2 that "
			  "the dispatcher did not make for this dispatch: not overwritten";
	char ann[400];
	snprintf(ann, sizeof ann, "1 %s", why); /* an earlier generation's */
	j.obj = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", MU__D_COPYREFUSED, ann);
	mu__dfailed_pull(&d, &cls[1], &j);
	CHECK(t, j.refused == NULL);
	snprintf(ann, sizeof ann, "2 %s", why);
	json_object_set_new(mu__jget(j.obj, "metadata.annotations"), MU__D_COPYREFUSED,
			    json_string(ann));
	mu__dfailed_pull(&d, &cls[0], &j); /* not the cluster it is on */
	CHECK(t, j.refused == NULL);
	j.state = MU__DJ_QUEUED;
	mu__dfailed_pull(&d, &cls[1], &j);
	CHECK(t, j.refused == NULL);
	j.state = MU__DJ_DISPATCHED;
	mu__dfailed_pull(&d, &cls[1], &j);
	CHECK_STR(t, j.refused ? j.refused : "", why);
	CHECK(t, j.failed_create == NULL); /* not the --start-timeout path */
	char *was = j.refused;
	mu__dfailed_pull(&d, &cls[1], &j);
	CHECK(t, j.refused == was);
	free(j.refused);
	json_decref(j.obj);
}

/* The pull agent's side (round 16): copies made from the hub's objects,
 * and the sweep.  One server is the hub and the worker. */
static void test_agent_claims(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdra-XXXXXX", server[64], body[1024];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0};
	fx_config(&cfg, server);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &d.hub), MU_OK);
	mu_kube_client_t *w = d.hub;
	snprintf(body, sizeof body, TPL, "pt", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	/* the hub object as the agent sees it: dispatched, generation 2 */
	json_t *hub = json_loads(JOB, 0, NULL);
	json_object_set_new(json_object_get(hub, "metadata"), "uid", json_string("abcdef99-0000"));
	json_object_set_new(json_object_get(hub, "metadata"), "annotations",
			    json_pack("{s:s}", MU__D_GEN, "2"));
	json_object_set_new(json_array_get(mu__jget(hub, "spec.template.spec.resourceClaims"), 0),
			    "resourceClaimTemplateName", json_string("pt"));
	json_t *b = mu__dcopy(hub, MU__DK_JOB, "abcdef99-0000", "default/j", 2);
	char msg[800] = "";
	CHECK_EQ_INT(t, mu__dhdra_agent_copy(&d, w, "edge", MU__DK_JOB, hub, b, false, msg, sizeof msg), 0);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(b, "spec.template.spec.resourceClaims"), 0),
			      "resourceClaimTemplateName"), "pt-abcdef99-2");
	json_decref(b);
	json_t *cp = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/pt-abcdef99-2", NULL, &cp), 200);
	CHECK_STR(t, mu__dmeta(cp, "labels", MU__D_HUBUID), "abcdef99-0000");
	CHECK_STR(t, mu__dmeta(cp, "annotations", MU__D_GEN), "2");
	CHECK_STR(t, mu__dmeta(cp, "annotations", MU__D_HUBJOB), "default/j");
	json_decref(cp);
	/* again (a pass that did not see the job's copy yet): counts as made */
	b = mu__dcopy(hub, MU__DK_JOB, "abcdef99-0000", "default/j", 2);
	CHECK_EQ_INT(t, mu__dhdra_agent_copy(&d, w, "edge", MU__DK_JOB, hub, b, false, msg, sizeof msg), 0);
	json_decref(b);
	/* a copy without claims: no request */
	json_t *plain = json_loads(JOB, 0, NULL);
	json_object_del(mu__jget(plain, "spec.template.spec"), "resourceClaims");
	b = mu__dcopy(plain, MU__DK_JOB, "abcdef99-0000", "default/j", 2);
	uint64_t before = d.reqs;
	CHECK_EQ_INT(t, mu__dhdra_agent_copy(&d, w, "edge", MU__DK_JOB, plain, b, false, msg, sizeof msg), 0);
	CHECK(t, d.reqs == before);
	json_decref(b);
	json_decref(plain);
	/* a group's pod names them as well */
	json_t *pod = json_pack("{s:{s:[{s:s,s:s}]}}", "spec", "resourceClaims", "name", "gpu",
				"resourceClaimTemplateName", "pt");
	CHECK_EQ_INT(t, mu__dhdra_agent_copy(&d, w, "edge", MU__DK_PODGROUP, hub, pod, true, msg,
					     sizeof msg), 0);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(pod, "spec.resourceClaims"), 0),
			      "resourceClaimTemplateName"), "pt-abcdef99-2");
	json_decref(pod);
	/* a user's object with generation 3's copy's name: refused */
	snprintf(body, sizeof body, TPL, "pt-abcdef99-3", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	json_object_set_new(mu__jget(hub, "metadata.annotations"), MU__D_GEN, json_string("3"));
	b = mu__dcopy(hub, MU__DK_JOB, "abcdef99-0000", "default/j", 3);
	CHECK_EQ_INT(t, mu__dhdra_agent_copy(&d, w, "edge", MU__DK_JOB, hub, b, false, msg, sizeof msg), -1);
	CHECK(t, strstr(msg, "cluster edge has a ResourceClaimTemplate default/pt-abcdef99-3 that the "
			 "dispatcher did not make for this dispatch") != NULL);
	json_decref(b);
	/* one not on the hub: not yet */
	json_object_set_new(json_array_get(mu__jget(hub, "spec.template.spec.resourceClaims"), 0),
			    "resourceClaimTemplateName", json_string("nope"));
	b = mu__dcopy(hub, MU__DK_JOB, "abcdef99-0000", "default/j", 3);
	CHECK_EQ_INT(t, mu__dhdra_agent_copy(&d, w, "edge", MU__DK_JOB, hub, b, false, msg, sizeof msg), 1);
	CHECK(t, strstr(msg, "ResourceClaimTemplate default/nope not read from the hub: HTTP 404") != NULL);
	json_decref(b);

	/* the sweep */
	json_t *l[2] = {NULL, json_pack("{s:[]}", "items")};
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "?labelSelector=muster.io%2Fhub-uid", NULL, &l[0]), 200);
	CHECK_EQ_INT(t, (int)json_array_size(json_object_get(l[0], "items")), 1);
	bool listed[MU__DK_COUNT] = {false};
	json_t *cur = json_pack("{s:s}", "abcdef99-0000", "2");
	/* Jobs not listed this pass: left alone */
	json_t *none = json_object();
	CHECK_EQ_INT(t, mu__dhdra_agent_sweep(&d, w, (const json_t *const *)l, none, listed), 0);
	json_decref(none);
	listed[MU__DK_JOB] = true;
	CHECK_EQ_INT(t, mu__dhdra_agent_sweep(&d, w, (const json_t *const *)l, cur, listed), 0);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/pt-abcdef99-2", NULL, NULL), 200);
	json_object_set_new(cur, "abcdef99-0000", json_string("3"));
	CHECK_EQ_INT(t, mu__dhdra_agent_sweep(&d, w, (const json_t *const *)l, cur, listed), 1);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/pt-abcdef99-2", NULL, NULL), 404);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/pt-abcdef99-3", NULL, NULL), 200);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", RAPI "/pt", NULL, NULL), 200);
	json_decref(cur);
	json_decref(l[0]);
	json_decref(l[1]);
	json_decref(hub);
	mu_kube_client_free(d.hub);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* The class of j's first claim in its model (j->dra), or "". */
static const char *model_class(const mu__djob_t *j)
{
	const char *c = mu__jstr(json_array_get(mu__jget(json_array_get(json_array_get(j->dra, 0), 0),
							 "claim.spec.devices.requests"), 0),
				 "deviceClassName");
	return c ? c : "";
}

/* The hub's pass over its DRA watches (hub.c's read): the jobs
 * mu__dhdra_watch gives read again. */
static void watch_pass(mu__dd_t *d)
{
	json_t *back = mu__dhdra_watch(d);
	const char *u;
	json_t *v;
	json_object_foreach(back, u, v)
		mu__dhub_claims_back(d, mu__dhub_job_by_uid(d, u));
	json_decref(back);
}

/* Runs the hub's DRA watches' pass (mu__dhdra_watch) until j's model's
 * class is want (10 s). */
static bool watch_until(mu__dd_t *d, const mu__djob_t *j, const char *want)
{
	for (int i = 0; i < 500; i++) {
		watch_pass(d);
		if (!strcmp(model_class(j), want))
			return true;
		nap_ms(20);
	}
	return false;
}

/* Round 18: the hub's templates and claims watched (mu__dhdra_watch).  A
 * job waiting for a missing template is read again when it is created,
 * without being chosen; a queued job whose template is made again with
 * another class is read again, its model's claims the hub's now; an
 * event of a template no job names reads nothing; the index (d->dra_idx)
 * holds the job under each object it names, and forgets it. */
static void test_hub_watch(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdraw-XXXXXX", server[64], body[1024];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_hub(t, &d, &o, &cfg, server);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	j.kind = MU__DK_JOB;
	j.ns = "default";
	j.name = "j";
	j.key = "default/j";
	j.uid = "abcdef12-3456";
	j.fid = -1;
	j.cl = -1;
	j.obj = json_loads(JOB, 0, NULL);
	mu_specs_init(&j.specs);
	mu_diag_t dg = {""};
	CHECK_EQ_INT(t, mu_load_json(j.key, j.obj, &j.specs, &dg), MU_OK);
	d.jobs = (mu__djob_t *[]){&j};
	d.njobs = 1;
	d.by_uid = json_pack("{s:i}", j.uid, 0);

	/* waiting for gpu-t: indexed under it, the watches started */
	char why[40] = "", msg[800] = "";
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 1);
	j.state = MU__DJ_NEW;
	j.reason = strdup(why);
	CHECK(t, d.wdhub[0] != NULL && d.wdhub[1] != NULL);
	CHECK(t, json_object_get(json_object_get(d.dra_idx, "0/default/gpu-t"), j.uid) != NULL);
	bool up = false;
	for (int i = 0; i < 500 && !(up = mu__dhdra_watched(&d)); i++)
		nap_ms(20);
	CHECK(t, up);
	watch_pass(&d); /* the first list: gpu-t not there, nothing */
	CHECK(t, j.dra == NULL);
	/* created on the hub: j read again on its event, not chosen */
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK(t, watch_until(&d, &j, "gpu.example.com"));
	/* (no queue q in this fleet: it waits UnknownQueue; queued, as it
	 * would be with its queue) */
	j.state = MU__DJ_QUEUED;
	j.fid = -1;
	/* a template no job names: its event reads nothing */
	snprintf(body, sizeof body, TPL, "other-t", "");
	uint64_t r0 = d.reqs;
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	for (int i = 0; i < 50; i++) {
		watch_pass(&d);
		nap_ms(20);
	}
	CHECK(t, d.reqs == r0);
	CHECK_STR(t, model_class(&j), "gpu.example.com");
	/* gpu-t made again with another class: j read again with it */
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	char *at = strstr(body, "gpu.example.com");
	if (at)
		memcpy(at, "gpu.example.org", 15);
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	j.state = MU__DJ_QUEUED; /* (UnknownQueue again after each read) */
	CHECK(t, watch_until(&d, &j, "gpu.example.org"));
	CHECK(t, json_object_get(json_object_get(d.dra_idx, "0/default/gpu-t"), j.uid) != NULL);
	/* round 19: dispatched, its template made again (a spec is
	 * immutable): the job keeps the claims it was sent with, as a pod
	 * keeps the claim made from a template later replaced; nothing is
	 * read again (why a change between the create's read and the
	 * worker's create is safe: docs/dispatch.md, round 19) */
	j.state = MU__DJ_DISPATCHED;
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	bool moved = false, seen = false;
	for (int i = 0; i < 500 && !moved && !seen; i++) {
		/* (until the watch's cache has the new one, then a last pass) */
		json_t *now = mu_kube_watch_get(d.wdhub[0], "default/gpu-t");
		const char *cls = mu__jstr(json_array_get(mu__jget(now, "spec.spec.devices.requests"),
							  0), "deviceClassName");
		seen = cls && !strcmp(cls, "gpu.example.com");
		json_decref(now);
		json_t *back = mu__dhdra_watch(&d);
		moved = json_object_get(back, j.uid) != NULL;
		json_decref(back);
		nap_ms(20);
	}
	CHECK(t, seen && !moved);
	CHECK_STR(t, model_class(&j), "gpu.example.org");

	mu__dhdra_forget(&d, &j);
	CHECK_EQ_INT(t, (int)json_object_size(d.dra_idx), 0);
	mu__dhdra_clear(&j);
	free(j.reason);
	free(j.msg);
	json_decref(j.obj);
	mu_specs_release(&j.specs);
	json_decref(d.by_uid);
	mu__djlist_clear(&d.dirty, MU__DM_DIRTY);
	mu_kube_watch_stop(d.wdhub[0]);
	mu_kube_watch_stop(d.wdhub[1]);
	json_decref(d.dra_idx);
	json_decref(d.pcls);
	json_decref(d.pcls_default);
	mu_kube_client_free(d.hub);
	mu_fleet_free(d.fleet);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* Events on the server with reason reason about object name (NULL: any). */
static int events_of(mu_kube_client_t *c, const char *reason, const char *name)
{
	json_t *l = NULL, *e;
	size_t i;
	int n = 0;
	fx_req(c, "GET", "/api/v1/namespaces/default/events", NULL, &l);
	json_array_foreach(json_object_get(l, "items"), i, e) {
		const char *r = mu__jstr(e, "reason"), *o = mu__jstr(e, "involvedObject.name");
		n += r && !strcmp(r, reason) && (!name || (o && !strcmp(o, name)));
	}
	json_decref(l);
	return n;
}

/* Round 23: runs mu__dhdra_watch until group j's hold of pod holds
 * want as its record's version of the hub template mine-t ("": deleted
 * on the hub), or, want NULL, until the pod is held no more (10 s).
 * Whether it came to that. */
static bool held_until(mu__dd_t *d, mu__djob_t *j, const char *pod, const char *want)
{
	for (int i = 0; i < 500; i++) {
		json_decref(mu__dhdra_watch(d));
		json_t *h = json_object_get(j->held, pod);
		const char *v = mu__jstr(json_object_get(h, "orv"), "0/mine-t");
		if (want ? v && !strcmp(v, want) : !h)
			return true;
		nap_ms(20);
	}
	return false;
}

/* A group's pod named name on the hub (resourceVersion rv) naming
 * template tpl (NULL: no claim). */
static json_t *gpod(const char *name, const char *rv, const char *tpl)
{
	json_t *p = json_pack("{s:{s:s,s:s,s:s,s:s},s:{s:[{s:s,s:s}]}}", "metadata", "name", name,
			      "namespace", "default", "uid", name, "resourceVersion", rv, "spec",
			      "containers", "name", "c", "image", "x");
	if (tpl)
		json_object_set_new(json_object_get(p, "spec"), "resourceClaims",
				    json_pack("[{s:s,s:s}]", "name", "t", "resourceClaimTemplateName", tpl));
	return p;
}

/* The held-pod tests' ground: an in-process `muster up` as hub and push
 * worker (returned; NULL when it did not start), d's hub and its cluster
 * c on it, group j (PodGroup default/g, uid abcdef12-3456, generation 2,
 * object obj, taken) dispatched to c with pods gpods (taken; both freed
 * when the server does not start) and in
 * d->by_uid (d->jobs is the caller's), the hub's template mine-t and a
 * user's object of its copy's name, mine-t-abcdef12-2. */
static mu_apiserver_t *held_up(mu_t_t *t, char *dir, mu__dd_t *d, mu_dispatch_opts_t *o,
			       mu_kube_config_t *cfg, mu__dcl_t *c, mu__djob_t *j, json_t *obj,
			       json_t *gpods)
{
	char server[64], body[1024];
	memset(j, 0, sizeof *j);
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s) {
		json_decref(obj);
		json_decref(gpods);
		return NULL;
	}
	j->obj = obj;
	j->gpods = gpods;
	fx_hub(t, d, o, cfg, server);
	fx_cluster(t, d, c, server);
	d->cls = c;
	d->ncls = 1;
	j->kind = MU__DK_PODGROUP;
	j->ns = "default";
	j->name = "g";
	j->key = "PodGroup:default/g";
	j->uid = "abcdef12-3456";
	j->state = MU__DJ_DISPATCHED;
	j->gen = 2;
	d->by_uid = json_pack("{s:i}", j->uid, 0);
	snprintf(body, sizeof body, TPL, "mine-t", "");
	CHECK_EQ_INT(t, fx_req(d->hub, "POST", RAPI, body, NULL), 201);
	snprintf(body, sizeof body, TPL, "mine-t-abcdef12-2", "");
	CHECK_EQ_INT(t, fx_req(d->hub, "POST", RAPI, body, NULL), 201);
	return s;
}

/* What held_up made, and group j's parts, freed. */
static void held_down(mu_t_t *t, mu_apiserver_t *s, const char *dir, mu__dd_t *d,
		      mu_kube_config_t *cfg, mu__dcl_t *c, mu__djob_t *j)
{
	mu__dhdra_forget(d, j);
	free(j->refused);
	free(j->ann_sig);
	json_decref(j->held);
	json_decref(j->sent);
	json_decref(j->gpods);
	json_decref(j->obj);
	json_decref(d->by_uid);
	mu__djlist_clear(&d->dirty, MU__DM_DIRTY);
	mu_kube_watch_stop(d->wdhub[0]);
	mu_kube_watch_stop(d->wdhub[1]);
	json_decref(d->dra_idx);
	mu__dcl_disconnect(c);
	mu_kube_client_free(d->hub);
	mu_kube_config_release(cfg);
	fx_server_stop(t, s, dir);
}

/* Round 19: a group's late pod whose claim's copy the worker refuses is
 * held (not sent), not the group: the others are sent, j->refused stays
 * NULL, the pod and the group get a Warning Event (ClaimCopyRefused,
 * FailedCreate) once; a held pod is not tried again (no request) until
 * it changes on the hub (its resourceVersion) or the object its claim
 * names changes (the watch releases it); sent once the worker takes the
 * copy.  A refusal that leaves the group's hub pods below its minMember
 * ends it (j->refused naming the minimum). */
static void test_late_pod_held(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdrah-XXXXXX", body[1024];
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	mu__djob_t j;
	mu_apiserver_t *s = held_up(t, dir, &d, &o, &cfg, &c, &j,
				    json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", "g",
					      "namespace", "default", "spec", "minMember", 2),
				    json_pack("[o,o,o]", gpod("a", "1", NULL), gpod("b", "1", NULL),
					      gpod("late", "1", "mine-t")));
	if (!s)
		return;
	d.jobs = (mu__djob_t *[]){&j};
	d.njobs = 1;

	/* a and b sent; late held, the group goes on */
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 0);
	CHECK(t, j.refused == NULL);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/api/v1/namespaces/default/pods/a", NULL, NULL), 200);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/api/v1/namespaces/default/pods/b", NULL, NULL), 200);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/api/v1/namespaces/default/pods/late", NULL, NULL), 404);
	json_t *h = json_object_get(j.held, "late");
	CHECK(t, h != NULL && strstr(mu__jstr(h, "msg") ? mu__jstr(h, "msg") : "",
				     "mine-t-abcdef12-2 that the dispatcher did not make"));
	/* told once: the pod's Event, the group's, the watch index */
	mu__dwork_held_tell(&d, &j);
	mu__dwork_held_tell(&d, &j);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);
	CHECK_EQ_INT(t, events_of(d.hub, "FailedCreate", "g"), 1);
	CHECK(t, json_object_get(json_object_get(d.dra_idx, "0/default/mine-t"), j.uid) != NULL);
	/* not tried again while nothing changed: no request */
	uint64_t r0 = d.reqs;
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 201);
	CHECK(t, d.reqs == r0);
	/* the pod changed on the hub: tried again (refused again, held) */
	json_object_set_new(json_object_get(json_array_get(j.gpods, 2), "metadata"),
			    "resourceVersion", json_string("2"));
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 0);
	CHECK(t, d.reqs > r0);
	CHECK(t, json_object_get(j.held, "late") != NULL && j.refused == NULL);
	mu__dwork_held_tell(&d, &j);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 2);
	/* its template made again on the hub: released by the watch, and
	 * sent once the user's object is gone */
	bool up = false;
	for (int i = 0; i < 500 && !(up = mu__dhdra_watched(&d)); i++)
		nap_ms(20);
	CHECK(t, up);
	/* the first list: round 20, the template as it was when held (its
	 * resourceVersion) releases nothing */
	json_decref(mu__dhdra_watch(&d));
	r0 = d.reqs;
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 201);
	CHECK(t, d.reqs == r0);
	CHECK(t, json_object_get(j.held, "late") != NULL);
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/mine-t-abcdef12-2", NULL, NULL), 200);
	/* round 23: the template deleted: still held (nothing to copy), not
	 * tried (no request), its record's version of it "" */
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/mine-t", NULL, NULL), 200);
	CHECK(t, held_until(&d, &j, "late", ""));
	r0 = d.reqs;
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 201);
	CHECK(t, d.reqs == r0);
	/* made again: a new version, released */
	snprintf(body, sizeof body, TPL, "mine-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK(t, held_until(&d, &j, "late", NULL));
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 201);
	json_t *lp = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/api/v1/namespaces/default/pods/late", NULL, &lp), 200);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(lp, "spec.resourceClaims"), 0),
			      "resourceClaimTemplateName"), "mine-t-abcdef12-2");
	json_decref(lp);
	CHECK(t, j.refused == NULL);

	/* minMember 4 with a, b, late on the hub: a refused late2 leaves 3
	 * that can be sent, below it: the group is refused, naming why */
	json_object_set_new(json_object_get(j.obj, "spec"), "minMember", json_integer(4));
	json_array_append_new(j.gpods, gpod("late2", "1", "mine2-t"));
	snprintf(body, sizeof body, TPL, "mine2-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	snprintf(body, sizeof body, TPL, "mine2-t-abcdef12-2", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 0);
	CHECK(t, j.refused && strstr(j.refused, "pod late2: ") &&
	      strstr(j.refused, "the group can no longer meet its minimum: 3 of the 4 pods"));

	held_down(t, s, dir, &d, &cfg, &c, &j);
}

/* Round 20: a hold kept across a restart.  Held, the hub group gets the
 * annotation MU__D_HELD (the pod, its resourceVersion, the template's);
 * a job read again from that object after a restart (mu__dhub_held_read,
 * as hub.c's job_new reads it) keeps the pod held, told: no request, no
 * second Event; the hub watches' first list after the restart releases
 * nothing (the template is as it was when held); a change of the
 * template does, and the annotation then goes. */
static void test_held_restart(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdrar-XXXXXX", body[1024], path[512];
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	mu__djob_t j[2]; /* before the restart and after */
	mu_apiserver_t *s = held_up(t, dir, &d, &o, &cfg, &c, &j[0],
				    json_pack("{s:{s:s,s:s}}", "metadata", "name", "g", "namespace",
					      "default"),
				    json_pack("[o,o]", gpod("a", "1", NULL), gpod("late", "1", "mine-t")));
	if (!s)
		return;
	j[1] = j[0];
	j[1].obj = NULL;
	j[1].gpods = json_deep_copy(j[0].gpods);
	j[1].sent = json_pack("{s:i}", "a", 2); /* its copy there: only late is looked at */
	d.jobs = (mu__djob_t *[]){&j[0]};
	d.njobs = 1;
	mu__dkind_path(MU__DK_PODGROUP, "default", NULL, "", path, sizeof path);
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", path, "{\"apiVersion\":\"muster.io/v1alpha1\",\"kind\":"
			    "\"PodGroup\",\"metadata\":{\"name\":\"g\",\"namespace\":\"default\"},"
			    "\"spec\":{\"minMember\":1}}", NULL), 201);
	mu__dkind_path(MU__DK_PODGROUP, "default", "g", "", path, sizeof path);
	/* the hub's watches running, so that the hold keeps the template's
	 * version */
	json_t *k0 = json_pack("[s]", "0/mine-t");
	mu__dhdra_held_watch(&d, &j[0], k0);
	bool up = false;
	for (int i = 0; i < 500 && !(up = mu__dhdra_watched(&d)); i++)
		nap_ms(20);
	CHECK(t, up);
	json_decref(mu__dhdra_watch(&d));

	/* held, told, written on the group */
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j[0]), 0);
	mu__dwork_held_tell(&d, &j[0]);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);
	CHECK(t, mu__jstr(json_object_get(json_object_get(j[0].held, "late"), "orv"), "0/mine-t"));
	CHECK_EQ_INT(t, (int)mu__dhub_annotate(&d, &j[0]), 200);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", path, NULL, &j[1].obj), 200);
	const char *rec = mu__dmeta(j[1].obj, "annotations", MU__D_HELD);
	CHECK(t, rec && strstr(rec, "\"late\"") && strstr(rec, "did not make") &&
	      !strstr(rec, "told"));

	/* the restart: the index and the watches gone, the job read again */
	mu__dhdra_forget(&d, &j[0]);
	mu_kube_watch_stop(d.wdhub[0]);
	mu_kube_watch_stop(d.wdhub[1]);
	d.wdhub[0] = d.wdhub[1] = NULL;
	d.dhub_seq[0] = d.dhub_seq[1] = 0;
	d.jobs = (mu__djob_t *[]){&j[1]};
	mu__dhub_held_read(&d, &j[1]);
	json_t *h = json_object_get(j[1].held, "late");
	CHECK(t, h && json_is_true(json_object_get(h, "told")) &&
	      strstr(mu__jstr(h, "msg") ? mu__jstr(h, "msg") : "", "mine-t-abcdef12-2"));
	CHECK(t, json_object_get(json_object_get(d.dra_idx, "0/default/mine-t"), j[1].uid) != NULL);
	uint64_t r0 = d.reqs;
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j[1]), 201);
	mu__dwork_held_tell(&d, &j[1]);
	CHECK(t, d.reqs == r0);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);
	CHECK_EQ_INT(t, events_of(d.hub, "FailedCreate", "g"), 1);
	/* the watches' first list: the template as it was, nothing released */
	up = false;
	for (int i = 0; i < 500 && !(up = mu__dhdra_watched(&d)); i++)
		nap_ms(20);
	CHECK(t, up);
	json_t *back = mu__dhdra_watch(&d);
	CHECK(t, json_object_get(back, j[1].uid) == NULL);
	json_decref(back);
	CHECK(t, json_object_get(j[1].held, "late") != NULL);
	/* round 23: the template deleted: still held, not tried, told no
	 * more; made again: released, and the record goes */
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/mine-t", NULL, NULL), 200);
	CHECK(t, held_until(&d, &j[1], "late", ""));
	r0 = d.reqs;
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j[1]), 201);
	mu__dwork_held_tell(&d, &j[1]);
	CHECK(t, d.reqs == r0);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);
	snprintf(body, sizeof body, TPL, "mine-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK(t, held_until(&d, &j[1], "late", NULL));
	CHECK(t, mu__dhub_annotate_due(&d, &j[1]));
	CHECK_EQ_INT(t, (int)mu__dhub_annotate(&d, &j[1]), 200);
	json_t *g = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", path, NULL, &g), 200);
	CHECK(t, mu__dmeta(g, "annotations", MU__D_HELD) == NULL);
	json_decref(g);

	json_decref(k0);
	free(j[0].ann_sig);
	json_decref(j[0].held);
	json_decref(j[0].sent);
	json_decref(j[0].gpods);
	json_decref(j[0].obj);
	held_down(t, s, dir, &d, &cfg, &c, &j[1]);
}

/* Round 20, push: a held pod released when the worker's object that held
 * its copy's name goes (mu__dhdra_held_worker, from the worker's watches
 * of templates and claims): seen there first (kept held, "wseen"), then
 * deleted: released, the group given back, and the pod sent naming its copy.
 * A hold whose refusal was not such an object (never seen) is not
 * released by the watches' moving. */
static void test_held_worker(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdraw-XXXXXX", body[1024];
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	mu__djob_t j;
	mu_apiserver_t *s = held_up(t, dir, &d, &o, &cfg, &c, &j,
				    json_pack("{s:{s:s,s:s}}", "metadata", "name", "g", "namespace",
					      "default"),
				    json_pack("[o,o]", gpod("a", "1", NULL), gpod("late", "1", "mine-t")));
	if (!s)
		return;
	d.jobs = (mu__djob_t *[]){&j};
	d.njobs = 1;
	/* the worker's watches (wdra.c starts them at discovery) */
	CHECK_EQ_INT(t, mu_kube_watch_start(c.cfg, RAPI, NULL, &c.wdtpl), MU_OK);
	CHECK_EQ_INT(t, mu_kube_watch_start(c.cfg, "/apis/resource.k8s.io/v1beta1/resourceclaims",
					 NULL, &c.wdra[MU__DDRA_CLAIMS]), MU_OK);
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 0);
	CHECK(t, json_object_get(j.held, "late") != NULL);
	mu__dwork_held_tell(&d, &j);
	mu__djlist_clear(&d.dirty, MU__DM_DIRTY);
	/* the user's object seen: kept held */
	json_t *h = NULL;
	for (int i = 0; i < 500; i++) {
		json_decref(mu__dhdra_held_worker(&d, &c));
		h = json_object_get(j.held, "late");
		if (!h || json_is_true(json_object_get(h, "wseen")))
			break;
		nap_ms(20);
	}
	CHECK(t, h && json_is_true(json_object_get(h, "wseen")));
	/* a hold refused otherwise: never seen, never released so */
	json_object_set_new(j.held, "other", json_pack("{s:i,s:[s],s:s,s:b}", "gen", 2, "keys",
						       "0/none", "msg", "HTTP 403", "told", 1));
	/* deleted on the worker: released, the group marked, sent */
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/mine-t-abcdef12-2", NULL, NULL), 200);
	bool back = false;
	for (int i = 0; i < 500 && json_object_get(j.held, "late"); i++) {
		json_t *rel = mu__dhdra_held_worker(&d, &c);
		back |= json_is_false(json_object_get(rel, j.uid));
		json_decref(rel);
		nap_ms(20);
	}
	CHECK(t, json_object_get(j.held, "late") == NULL);
	CHECK(t, json_object_get(j.held, "other") != NULL);
	CHECK(t, back); /* given to the caller, which marks it */
	CHECK_EQ_INT(t, (int)mu__dwork_group_send(&d, c.kc, &j), 201);
	json_t *lp = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/api/v1/namespaces/default/pods/late", NULL, &lp), 200);
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(lp, "spec.resourceClaims"), 0),
			      "resourceClaimTemplateName"), "mine-t-abcdef12-2");
	json_decref(lp);
	/* the watches move again (a template of its own): "other" stays */
	snprintf(body, sizeof body, TPL, "unrelated", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	uint64_t s0 = c.dheld_seq[0];
	for (int i = 0; i < 500 && c.dheld_seq[0] == s0; i++) {
		json_decref(mu__dhdra_held_worker(&d, &c));
		nap_ms(20);
	}
	CHECK(t, c.dheld_seq[0] != s0);
	CHECK(t, json_object_get(j.held, "other") != NULL);
	held_down(t, s, dir, &d, &cfg, &c, &j);
}

/* Group j's MU__D_PODSREFUSED (the pull agent's entries) set to text
 * (NULL: none), as the agent's PATCH leaves it on the hub object. */
static void pods_refused(mu__djob_t *j, const char *text)
{
	json_t *m = json_object_get(j->obj, "metadata");
	if (!json_object_get(m, "annotations"))
		json_object_set_new(m, "annotations", json_object());
	json_object_set_new(json_object_get(m, "annotations"), MU__D_PODSREFUSED,
			    text ? json_string(text) : json_null());
	if (!text)
		json_object_del(json_object_get(m, "annotations"), MU__D_PODSREFUSED);
}

/* Round 21, pull: a pull agent's entry for a group's pod (worker.c's
 * mu__dwork_pull_held) holds that pod, not the group: held, told once
 * (ClaimCopyRefused on the pod, FailedCreate on the group), not told again
 * on the next passes; not released by a change of the hub template (the
 * agent's entry decides; round 22: the change moves the record's "orv",
 * which the agent reads); an entry of another generation or of the pod as
 * it was before a change holds nothing; the entry dropped by the agent
 * releases the hold and marks the group (its record written again); an
 * entry leaving the group below its minMember refuses it. */
static void test_pull_held(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdrap-XXXXXX", body[1024];
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	mu__djob_t j;
	mu_apiserver_t *s = held_up(t, dir, &d, &o, &cfg, &c, &j,
				    json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", "g",
					      "namespace", "default", "spec", "minMember", 1),
				    json_pack("[o,o]", gpod("a", "1", NULL), gpod("late", "1", "mine-t")));
	if (!s)
		return;
	c.pull = true;
	d.jobs = (mu__djob_t *[]){&j};
	d.njobs = 1;
	/* the hub's watches running (a change of mine-t must not release) */
	json_t *k0 = json_pack("[s]", "0/mine-t");
	mu__dhdra_held_watch(&d, &j, k0);
	json_decref(k0);
	bool up = false;
	for (int i = 0; i < 500 && !(up = mu__dhdra_watched(&d)); i++)
		nap_ms(20);
	CHECK(t, up);
	json_decref(mu__dhdra_watch(&d));

	/* an entry of generation 1, and one of the pod before a change:
	 * nothing held */
	pods_refused(&j, "{\"late\":{\"gen\":1,\"rv\":\"1\",\"msg\":\"old\"}}");
	mu__dwork_pull_held(&d, &c, &j);
	CHECK(t, json_object_get(j.held, "late") == NULL);
	pods_refused(&j, "{\"late\":{\"gen\":2,\"rv\":\"0\",\"msg\":\"before\"}}");
	mu__dwork_pull_held(&d, &c, &j);
	CHECK(t, json_object_get(j.held, "late") == NULL);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 0);

	/* the agent's entry: held and told once, the group goes on */
	pods_refused(&j, "{\"late\":{\"gen\":2,\"rv\":\"1\",\"msg\":\"cluster c has a "
		     "ResourceClaimTemplate default/mine-t-abcdef12-2 that the dispatcher did "
		     "not make for this dispatch: not overwritten\"}}");
	mu__dwork_pull_held(&d, &c, &j);
	mu__dwork_pull_held(&d, &c, &j);
	json_t *h = json_object_get(j.held, "late");
	CHECK(t, h && json_is_true(json_object_get(h, "told")) &&
	      strstr(mu__jstr(h, "msg") ? mu__jstr(h, "msg") : "", "mine-t-abcdef12-2"));
	CHECK(t, j.refused == NULL);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);
	CHECK_EQ_INT(t, events_of(d.hub, "FailedCreate", "g"), 1);
	/* the hub template made again: the pull hold stays (no second tell);
	 * round 22: its record's version of mine-t moves to the new one's
	 * and the group is given back to be touched (its record written),
	 * which the agent reads to try the pod again (agent.c's pod_held) */
	char orv0[32] = "";
	const char *o0 = json_string_value(json_object_get(json_object_get(h, "orv"), "0/mine-t"));
	snprintf(orv0, sizeof orv0, "%s", o0 ? o0 : "");
	CHECK(t, *orv0 != '\0');
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/mine-t", NULL, NULL), 200);
	/* round 23: deleted: the hold stays, its record's version "" (gone),
	 * which the agent reads as "held until it is made again", not as a
	 * change (mu__dhdra_orv_moved); no second tell */
	CHECK(t, held_until(&d, &j, "late", ""));
	mu__dwork_pull_held(&d, &c, &j);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);
	json_t *seen = json_pack("{s:s}", "0/mine-t", orv0);
	json_t *gone = json_pack("{s:s}", "0/mine-t", ""), *moved = json_pack("{s:s}", "0/mine-t", "x");
	CHECK_EQ_INT(t, mu__dhdra_orv_moved(seen, seen), 0);
	CHECK_EQ_INT(t, mu__dhdra_orv_moved(seen, gone), -1);
	CHECK_EQ_INT(t, mu__dhdra_orv_moved(seen, moved), 1);
	CHECK_EQ_INT(t, mu__dhdra_orv_moved(gone, moved), 1);
	json_decref(seen);
	json_decref(gone);
	json_decref(moved);
	snprintf(body, sizeof body, TPL, "mine-t", "");
	json_t *made = NULL;
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, &made), 201);
	bool touched = false; /* the group given back as {uid: false} */
	for (int i = 0; i < 50; i++) {
		json_t *back = mu__dhdra_watch(&d);
		touched |= json_is_false(json_object_get(back, j.uid));
		json_decref(back);
		nap_ms(20);
	}
	h = json_object_get(j.held, "late");
	CHECK(t, h != NULL);
	const char *orv1 = json_string_value(json_object_get(json_object_get(h, "orv"), "0/mine-t"));
	CHECK(t, orv1 && mu__jstr(made, "metadata.resourceVersion") &&
	      !strcmp(orv1, mu__jstr(made, "metadata.resourceVersion")) && strcmp(orv1, orv0));
	CHECK(t, touched);
	json_decref(made);
	mu__dwork_pull_held(&d, &c, &j);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimCopyRefused", "late"), 1);

	/* a hold recorded before the hub's watch had mine-t (no version of
	 * it in its record): the first sight of mine-t is the version held,
	 * not a change (the agent would try the pod again); the next one is */
	json_object_del(json_object_get(h, "orv"), "0/mine-t");
	const char *lbl = "{\"metadata\":{\"labels\":{\"seen\":\"1\"}}}";
	long st = 0;
	char *ans = NULL;
	mu_kube_client_do(d.hub, "PATCH", RAPI "/mine-t", "application/merge-patch+json", lbl, 5000,
			  &st, &ans);
	CHECK_EQ_INT(t, st, 200);
	json_t *lab = ans ? json_loads(ans, 0, NULL) : NULL;
	free(ans);
	touched = false;
	for (int i = 0; i < 50; i++) {
		json_t *back = mu__dhdra_watch(&d);
		touched |= json_is_false(json_object_get(back, j.uid));
		json_decref(back);
		nap_ms(20);
	}
	const char *orv2 = json_string_value(json_object_get(json_object_get(h, "orv"), "0/mine-t"));
	CHECK(t, !touched);
	CHECK(t, orv2 && mu__jstr(lab, "metadata.resourceVersion") &&
	      !strcmp(orv2, mu__jstr(lab, "metadata.resourceVersion")));
	json_decref(lab);
	lbl = "{\"metadata\":{\"labels\":{\"seen\":\"2\"}}}";
	ans = NULL;
	mu_kube_client_do(d.hub, "PATCH", RAPI "/mine-t", "application/merge-patch+json", lbl, 5000,
			  &st, &ans);
	free(ans);
	CHECK_EQ_INT(t, st, 200);
	for (int i = 0; i < 50 && !touched; i++) {
		json_t *back = mu__dhdra_watch(&d);
		touched |= json_is_false(json_object_get(back, j.uid));
		json_decref(back);
		nap_ms(20);
	}
	CHECK(t, touched);

	/* the agent dropped its entry: released, the group marked */
	mu__djlist_clear(&d.dirty, MU__DM_DIRTY);
	pods_refused(&j, NULL);
	mu__dwork_pull_held(&d, &c, &j);
	CHECK(t, json_object_get(j.held, "late") == NULL);
	CHECK_EQ_INT(t, d.dirty.n, 1);
	CHECK(t, j.refused == NULL);

	/* minMember 2 of a and late: late's entry leaves one, the group is
	 * refused, naming why */
	json_object_set_new(json_object_get(j.obj, "spec"), "minMember", json_integer(2));
	pods_refused(&j, "{\"late\":{\"gen\":2,\"rv\":\"1\",\"msg\":\"refused\"}}");
	mu__dwork_pull_held(&d, &c, &j);
	CHECK(t, j.refused && strstr(j.refused, "pod late: refused") &&
	      strstr(j.refused, "the group can no longer meet its minimum"));
	held_down(t, s, dir, &d, &cfg, &c, &j);
}

/* run.c's read again after a create (mu__drun_created, rounds 17 and
 * 18): the create of a dispatched job whose template was deleted on the
 * hub since it was read makes nothing and marks it stale; created then
 * says so (an Event ClaimsChanged), counts it requeued and reads it
 * again at once: out of the fleet, waiting
 * WaitingForResourceClaimTemplate, no cluster; with the template made
 * again with another class, the same path gives the model that class.
 * And a copy made and then refused (a group below its minimum) is
 * deleted on the worker, the job ended NotAdmitted. */
static void test_created(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-hdrac-XXXXXX", server[64], body[1024];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0};
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_hub(t, &d, &o, &cfg, server);
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d.fleet), MU_OK);
	mu__dcl_t c;
	fx_cluster(t, &d, &c, server);
	d.cls = &c;
	d.ncls = 1;
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	j.kind = MU__DK_JOB;
	j.ns = "default";
	j.name = "j";
	j.key = "default/j";
	j.uid = "abcdef12-3456";
	j.fid = -1;
	j.obj = json_loads(JOB, 0, NULL);
	mu_specs_init(&j.specs);
	mu_diag_t dg = {""};
	CHECK_EQ_INT(t, mu_load_json(j.key, j.obj, &j.specs, &dg), MU_OK);
	d.jobs = (mu__djob_t *[]){&j};
	d.njobs = 1;
	d.by_uid = json_pack("{s:i}", j.uid, 0);
	char why[40] = "", msg[800] = "";
	snprintf(body, sizeof body, TPL, "gpu-t", "");
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	/* dispatched (generation 3, pending), its template deleted since */
	j.state = MU__DJ_DISPATCHED;
	j.cl = 0;
	j.gen = 3;
	mu__djlist_add(&d.pend, &j, MU__DM_PEND);
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	long st = mu__dwork_create(&d, &j);
	CHECK_EQ_INT(t, (int)st, 404);
	CHECK(t, j.dra_stale);
	mu__drun_created(&d, &j, st);
	CHECK(t, !j.dra_stale);
	CHECK_EQ_INT(t, (int)j.state, MU__DJ_NEW);
	CHECK_EQ_INT(t, j.cl, -1);
	CHECK_STR(t, j.reason ? j.reason : "", "WaitingForResourceClaimTemplate");
	CHECK(t, j.msg && strstr(j.msg, "ResourceClaimTemplate default/gpu-t not found on the hub"));
	CHECK_EQ_INT(t, (int)d.requeued, 1);
	CHECK(t, !(j.marks & (1u << MU__DM_PEND)));
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimsChanged", "j"), 1);
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/apis/batch/v1/namespaces/default/jobs/j", NULL, NULL),
		     404);
	/* made again with another class, then changed before a retried
	 * create: read again with the class the hub has now */
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	CHECK_EQ_INT(t, mu__dhdra_read(&d, &j, why, sizeof why, msg, sizeof msg), 0);
	j.state = MU__DJ_DISPATCHED;
	j.cl = 0;
	j.gen = 4;
	CHECK_EQ_INT(t, fx_req(d.hub, "DELETE", RAPI "/gpu-t", NULL, NULL), 200);
	char *at = strstr(body, "gpu.example.com");
	if (at)
		memcpy(at, "gpu.example.org", 15);
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", RAPI, body, NULL), 201);
	st = mu__dwork_create(&d, &j);
	CHECK_EQ_INT(t, (int)st, 409);
	mu__drun_created(&d, &j, st);
	CHECK_STR(t, model_class(&j), "gpu.example.org");
	CHECK_EQ_INT(t, (int)d.requeued, 2);
	CHECK_EQ_INT(t, events_of(d.hub, "ClaimsChanged", "j"), 2);
	/* made, then refused: the copy deleted, the job NotAdmitted */
	CHECK_EQ_INT(t, fx_req(d.hub, "POST", "/apis/batch/v1/namespaces/default/jobs",
			    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
			    "\"j\"},\"spec\":{\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":"
			    "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}", NULL), 201);
	j.state = MU__DJ_DISPATCHED;
	j.cl = 0;
	j.gen = 5;
	j.refused = strdup("pod p: refused; the group can no longer meet its minimum");
	mu__drun_created(&d, &j, 201);
	CHECK_EQ_INT(t, (int)j.state, MU__DJ_DONE);
	CHECK_STR(t, j.phase, "NotAdmitted");
	CHECK(t, j.refused == NULL && j.msg && strstr(j.msg, "minimum"));
	CHECK_EQ_INT(t, fx_req(d.hub, "GET", "/apis/batch/v1/namespaces/default/jobs/j", NULL, NULL),
		     404);
	CHECK_EQ_INT(t, events_of(d.hub, "NotAdmitted", "j"), 1);

	mu__dhdra_forget(&d, &j);
	mu__dhdra_clear(&j);
	free(j.reason);
	free(j.msg);
	json_decref(j.obj);
	mu_specs_release(&j.specs);
	json_decref(d.by_uid);
	mu__djlist_clear(&d.dirty, MU__DM_DIRTY);
	mu__djlist_clear(&d.wdirty, MU__DM_WDIRTY);
	mu__djlist_clear(&d.pend, MU__DM_PEND);
	mu_kube_watch_stop(d.wdhub[0]);
	mu_kube_watch_stop(d.wdhub[1]);
	json_decref(d.dra_idx);
	json_decref(d.pcls);
	json_decref(d.pcls_default);
	mu__dcl_disconnect(&c);
	mu_kube_client_free(d.hub);
	mu_fleet_free(d.fleet);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_pull_refusal);
	MU_RUN(&t, test_hub_claims);
	MU_RUN(&t, test_agent_claims);
	MU_RUN(&t, test_hub_watch);
	MU_RUN(&t, test_late_pod_held);
	MU_RUN(&t, test_held_restart);
	MU_RUN(&t, test_held_worker);
	MU_RUN(&t, test_pull_held);
	MU_RUN(&t, test_created);
	return mu_t_done(&t);
}
