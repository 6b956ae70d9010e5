/*
 * test_dispatch_shrink.c - a shrink's intent read back after a restart
 * (src/dispatch/reclaim.c mu__dreclaim_settle, issue 18, round 18).  The
 * dispatcher records an elastic victim's shrink on the hub (the records
 * muster.io/dispatch-shrunk and muster.io/dispatch-shrinking) before the
 * merge PATCH of its copy's parallelism on the worker, so a daemon killed
 * between the two finds the intent; against an in-process `muster up` on
 * loopback (standing for the worker, and for the hub the Event goes to),
 * the restart's reconciliation both ways: the copy still at its full size
 * is shrunk now (its parallelism 2, one Event Shrunk); the copy shrunk
 * already is left as it is (the same metadata.generation, no Event); a copy gone
 * or an intent of another dispatch or on a pull cluster is dropped; a
 * worker without a client keeps it for the next pass.  Each settled intent is
 * cleared from the job (its record written back by the pass).  Round
 * 19 (test_give_up): a worker whose account may read the copy but not
 * patch it refuses each PATCH (403); it is asked again only after its
 * wait and given up at the MU__D_SHRINK_TRIES-th refusal, the copy then
 * counted in the fleet at the size it runs.  Round 22 (test_pull): on a
 * pull cluster the agent's answer settles the intent (mu__dreclaim_settle).
 * Round 23 (test_pytorch): an elastic PyTorchJob's copy, settled on its
 * kind's size (the Worker's replicas).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "dispatch_fixture.h"
#include "fleet_fixture.h"
#include "dispatch/dispatch_int.h"
#include "muster/apiserver.h"
#include "muster/jpath.h"
#include "muster/kube.h"
#include "muster/load.h"
#include "muster/util.h"

static const char *JOB =
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
	"\"namespace\":\"default\"},\"spec\":{\"parallelism\":%d,\"suspend\":true,\"template\":"
	"{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}";

/* The integer at dotted path `field` of the object at `path` on the
 * server, and its metadata.generation (into rv); -1 when not there. */
static int field_of(mu_kube_client_t *c, const char *path, const char *field, char *rv,
		    size_t len)
{
	json_t *o = NULL;
	if (fx_req(c, "GET", path, NULL, &o) != 200) {
		json_decref(o);
		return -1;
	}
	snprintf(rv, len, "%lld", (long long)json_integer_value(mu__jget(o, "metadata.generation")));
	int n = (int)json_integer_value(mu__jget(o, field));
	json_decref(o);
	return n;
}

/* Job name's parallelism and metadata.generation (into rv) on the server. */
static int par_of(mu_kube_client_t *c, const char *name, char *rv, size_t len)
{
	char path[256];
	snprintf(path, sizeof path, "/apis/batch/v1/namespaces/default/jobs/%s", name);
	return field_of(c, path, "spec.parallelism", rv, len);
}

/* The Events with reason Shrunk on the server. */
static size_t shrunk_events(mu_kube_client_t *c)
{
	json_t *l = NULL, *e;
	size_t i, n = 0;
	fx_req(c, "GET", "/api/v1/namespaces/default/events", NULL, &l);
	json_array_foreach(json_object_get(l, "items"), i, e) {
		const char *r = json_string_value(json_object_get(e, "reason"));
		n += r && !strcmp(r, "Shrunk");
	}
	json_decref(l);
	return n;
}

/* A dispatched hub Job `name` of generation 1 on cluster 0 with the
 * intent intent (and its record: two pods off, of four). */
static mu__djob_t *victim(const char *name, const char *intent)
{
	mu__djob_t *j = calloc(1, sizeof *j);
	j->ns = strdup("default");
	j->name = strdup(name);
	j->key = strdup(name);
	j->uid = strdup("");
	j->kind = MU__DK_JOB;
	j->gen = 1;
	j->state = MU__DJ_DISPATCHED;
	j->cl = 0;
	j->fid = -1;
	j->shrunk = strdup("1\t2\tInCohortReclamation\tShrunk on cluster w from 4 to 2 pods");
	j->shrinking = strdup(intent);
	/* its hub object, as far as the shrink reads it (its kind's size) */
	j->obj = json_pack("{s:s,s:s,s:{s:i}}", "apiVersion", "batch/v1", "kind", "Job", "spec",
			   "parallelism", 4);
	return j;
}

/* A settle's test bed: an in-process `muster up` (the worker, and the
 * hub the Events go to), a dispatcher d of one push cluster c on it, and
 * its client kc.  bed_up: false when the server did not start. */
typedef struct bed {
	char dir[32], server[64];
	mu_apiserver_t *s;
	mu_kube_config_t cfg;
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	mu_kube_client_t *kc;
} bed_t;

static bool bed_up(mu_t_t *t, bed_t *b)
{
	memset(b, 0, sizeof *b);
	snprintf(b->dir, sizeof b->dir, "/tmp/mu-test-shrink-XXXXXX");
	b->s = fx_server(t, b->dir, b->server, sizeof b->server);
	if (!b->s)
		return false;
	fx_config(&b->cfg, b->server);
	fx_dd(&b->d, &b->o);
	fx_cluster(t, &b->d, &b->c, b->server);
	b->d.cls = &b->c;
	b->d.ncls = 1;
	CHECK_EQ_INT(t, mu_kube_client_new(&b->cfg, &b->kc), MU_OK);
	b->d.hub = b->kc;
	return true;
}

/* Frees bed b and jobs js[0..n). */
static void bed_down(mu_t_t *t, bed_t *b, mu__djob_t **js, int n)
{
	mu__djlist_clear(&b->d.dirty, MU__DM_DIRTY);
	mu__djlist_clear(&b->d.wdirty, MU__DM_WDIRTY);
	for (int i = 0; i < n; i++)
		mu__djob_free(js[i]);
	mu__dcl_disconnect(&b->c);
	mu_kube_client_free(b->kc);
	mu_kube_config_release(&b->cfg);
	fx_server_stop(t, b->s, b->dir);
}

static void test_settle(mu_t_t *t)
{
	char body[512], rv[64], rv2[64];
	bed_t bed;
	if (!bed_up(t, &bed))
		return;
	const char *jobs = "/apis/batch/v1/namespaces/default/jobs";

	/* killed before the PATCH: the copy at 4, shrunk to 2 now */
	snprintf(body, sizeof body, JOB, "full", 4);
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", jobs, body, NULL), 201);
	mu__djob_t *a = victim("full", "1\t2");
	CHECK(t, mu__dreclaim_settle(&bed.d, a));
	CHECK_EQ_INT(t, par_of(bed.kc, "full", rv, sizeof rv), 2);
	CHECK_STR(t, rv, "2"); /* its spec changed once */
	CHECK(t, a->shrinking == NULL);
	CHECK(t, a->shrunk != NULL); /* the record stays: two pods off */
	CHECK_EQ_INT(t, mu__dreclaim_shrunk(a), 2);
	CHECK_EQ_INT(t, (int)shrunk_events(bed.kc), 1);

	/* killed after the PATCH: the copy at 2 already, left as it is */
	snprintf(body, sizeof body, JOB, "done", 2);
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", jobs, body, NULL), 201);
	CHECK_EQ_INT(t, par_of(bed.kc, "done", rv, sizeof rv), 2);
	mu__djob_t *b = victim("done", "1\t2");
	CHECK(t, mu__dreclaim_settle(&bed.d, b));
	CHECK_EQ_INT(t, par_of(bed.kc, "done", rv2, sizeof rv2), 2);
	CHECK_STR(t, rv2, rv);
	CHECK(t, b->shrinking == NULL);
	CHECK_EQ_INT(t, (int)shrunk_events(bed.kc), 1);

	/* the copy gone: the intent dropped */
	nap_ms(1); /* (the fixture's) */
	mu__djob_t *g = victim("gone", "1\t2");
	CHECK(t, mu__dreclaim_settle(&bed.d, g));
	CHECK(t, g->shrinking == NULL);

	/* an intent of another dispatch (generation 0): dropped, not applied */
	snprintf(body, sizeof body, JOB, "other", 4);
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", jobs, body, NULL), 201);
	mu__djob_t *x = victim("other", "0\t2");
	CHECK(t, mu__dreclaim_settle(&bed.d, x));
	CHECK_EQ_INT(t, par_of(bed.kc, "other", rv, sizeof rv), 4);
	CHECK(t, x->shrinking == NULL);

	/* the worker does not answer: kept for the next pass */
	mu__djob_t *y = victim("full", "1\t1");
	mu__dcl_t off = bed.c;
	off.kc = NULL;
	bed.d.cls = &off;
	CHECK(t, !mu__dreclaim_settle(&bed.d, y));
	CHECK(t, y->shrinking != NULL);
	/* on a pull cluster (round 22): kept for its agent's answer
	 * (there is none here), nothing asked of the worker, looked at again
	 * next pass (its dispatch may end first) */
	off.pull = true;
	uint64_t r0 = bed.d.reqs;
	CHECK(t, !mu__dreclaim_settle(&bed.d, y));
	CHECK(t, y->shrinking != NULL);
	CHECK(t, bed.d.reqs == r0);
	y->state = MU__DJ_WITHDRAWING; /* its dispatch ended: dropped */
	CHECK(t, mu__dreclaim_settle(&bed.d, y));
	CHECK(t, y->shrinking == NULL);
	bed.d.cls = &bed.c;

	mu__djob_t *js[] = {a, b, g, x, y};
	bed_down(t, &bed, js, 5);
}

/* The Events with reason reason on the server. */
static size_t events_of(mu_kube_client_t *c, const char *reason)
{
	json_t *l = NULL, *e;
	size_t i, n = 0;
	fx_req(c, "GET", "/api/v1/namespaces/default/events", NULL, &l);
	json_array_foreach(json_object_get(l, "items"), i, e) {
		const char *r = json_string_value(json_object_get(e, "reason"));
		n += r && !strcmp(r, reason);
	}
	json_decref(l);
	return n;
}

/* Round 19: a hub Job `name`, elastic (4 pods of one GPU, min-member
 * 2), dispatched to w, generation 1, recorded shrunk by 2 with the intent
 * "1\t2" (victim's), parsed for the fleet (shrinkable); its copy made on
 * the server kc with parallelism par.  Owned by the caller. */
static mu__djob_t *elastic(mu_t_t *t, mu_kube_client_t *kc, const char *name, int par)
{
	char body[512];
	snprintf(body, sizeof body, JOB, name, par);
	CHECK_EQ_INT(t, fx_req(kc, "POST", "/apis/batch/v1/namespaces/default/jobs", body, NULL),
		     201);
	mu__djob_t *j = victim(name, "1\t2");
	free(j->uid);
	j->uid = strdup(name);
	json_decref(j->obj);
	j->obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s},s:{s:s,s:s,s:s}},s:{s:i,s:{s:{s:s,s:[{s:s,s:s,s:{s:{s:s}}}]}}}}",
			   "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name,
			   "namespace", "default", "labels", "muster.io/queue", "q", "annotations",
			   "muster.io/min-member", "2", MU__D_CLUSTER, "w", MU__D_GEN, "1", "spec",
			   "parallelism", 4, "template", "spec", "restartPolicy", "Never",
			   "containers", "name", "c", "image", "x", "resources", "limits",
			   "nvidia.com/gpu", "1");
	mu_specs_init(&j->specs);
	mu_diag_t dg = {""};
	CHECK_EQ_INT(t, mu_load_json(j->key, j->obj, &j->specs, &dg), MU_OK);
	j->fs = (mu_fleet_job_spec_t){.job = &j->specs.jobs[0], .shrinkable = true};
	return j;
}

/* A dispatcher d (options o, hub client kc) with a fleet of queue q and
 * cluster c ("w" on server, its bearer token token, NULL: none) of one
 * node of gpus GPUs.  fleet_down frees what it made and jobs js[0..n). */
static void fleet_up(mu_t_t *t, mu__dd_t *d, mu_dispatch_opts_t *o, mu__dcl_t *c,
		     mu_kube_client_t *kc, const char *server, const char *token, int gpus)
{
	fx_dd(d, o);
	d->hub = kc;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &d->fleet), MU_OK);
	mu_queue_spec_t q;
	queue_of(&q, "q", gpus);
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(d->fleet, &q), MU_OK);
	fx_cluster_tok(t, d, c, server, token);
	mu_node_spec_t n = node_of("n1", gpus);
	CHECK_EQ_INT(t, mu_fleet_node_upsert(d->fleet, c->fid, &n), MU_OK);
	d->cls = c;
	d->ncls = 1;
}

static void fleet_down(mu__dd_t *d, mu__dcl_t *c, mu__djob_t **js, int n)
{
	mu__djlist_clear(&d->dirty, MU__DM_DIRTY);
	mu__djlist_clear(&d->wdirty, MU__DM_WDIRTY);
	for (int k = 0; k < n; k++)
		mu__djob_free(js[k]);
	json_decref(d->by_key);
	json_decref(d->by_uid);
	free(d->by_fid);
	mu__dcl_disconnect(c);
	mu_fleet_free(d->fleet);
}

/* A server (returned; NULL when it did not start) in dir whose admin's
 * token is "adm" (cfg, kc: its config and client, the caller's to
 * free) and whose "rdr" (user reader) may get, list and watch Jobs but
 * not patch them, as a worker whose account refuses a shrink (403). */
static mu_apiserver_t *reader_up(mu_t_t *t, char *dir, char *server, size_t len,
				 mu_kube_config_t *cfg, mu_kube_client_t **kc)
{
	char path[512];
	mu_apiserver_t *s = fx_server_tok(t, dir, server, len, "adm");
	if (!s)
		return NULL;
	snprintf(path, sizeof path, "%s/tokens.csv", dir);
	FILE *f = fopen(path, "w");
	CHECK(t, f != NULL);
	if (f) {
		fputs("rdr,reader,u-1,\n", f);
		fclose(f);
	}
	fx_config(cfg, server);
	cfg->token = strdup("adm");
	CHECK_EQ_INT(t, mu_kube_client_new(cfg, kc), MU_OK);
	CHECK_EQ_INT(t, fx_req(*kc, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
			    "{\"metadata\":{\"name\":\"jobs-reader\"},\"rules\":[{\"apiGroups\":"
			    "[\"batch\"],\"resources\":[\"jobs\"],\"verbs\":[\"get\",\"list\","
			    "\"watch\"]}]}", NULL), 201);
	CHECK_EQ_INT(t, fx_req(*kc, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
			    "{\"metadata\":{\"name\":\"reader\"},\"roleRef\":{\"apiGroup\":"
			    "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":"
			    "\"jobs-reader\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"reader\"}]}",
			    NULL), 201);
	return s;
}

/* Round 19: a restart's intent whose PATCH the worker keeps refusing
 * (its account may read Jobs, not patch them: 403) is asked again only
 * after its wait (no request before), and the MU__D_SHRINK_TRIES-th
 * refusal gives it up: the intent dropped, the record the pods the copy
 * really runs without (none: no record; 1 of 4 for a copy at 3), the
 * fleet counting it at that size again (re-adopted), a Warning Event
 * ShrinkFailed. */
static void test_give_up(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-shrinkg-XXXXXX", server[64], rv[64];
	mu_kube_config_t cfg = {0};
	mu_kube_client_t *kc = NULL;
	mu_apiserver_t *s = reader_up(t, dir, server, sizeof server, &cfg, &kc);
	if (!s)
		return;
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	fleet_up(t, &d, &o, &c, kc, server, "rdr", 8); /* the worker as the reader */
	mu__djob_t *js[2];
	for (int k = 0; k < 2; k++) {
		/* el-K's copy at 4 (K 0) or 3 (K 1) pods; its hub Job elastic
		 * (4 pods of one GPU, min-member 2), dispatched to w,
		 * generation 1, recorded shrunk by 2 with the intent "1\t2" */
		char name[16];
		snprintf(name, sizeof name, "el-%d", k);
		js[k] = elastic(t, kc, name, 4 - k);
	}
	d.jobs = js;
	d.njobs = 2;
	for (int k = 0; k < 2; k++) {
		mu__djob_t *j = js[k];
		/* the restart: adopted shrunk by the record's 2 */
		mu__dhub_readopt(&d, j);
		mu_fleet_job_info_t fi;
		CHECK_EQ_INT(t, (int)j->state, MU__DJ_DISPATCHED);
		CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, j->fid, &fi), MU_OK);
		CHECK_EQ_INT(t, fi.shrunk, 2);
		/* refused: asked again only after its wait */
		for (int i = 1; i < MU__D_SHRINK_TRIES; i++) {
			CHECK(t, !mu__dreclaim_settle(&d, j));
			CHECK_EQ_INT(t, j->shrink_tries, i);
			CHECK(t, j->shrinking != NULL);
			uint64_t r0 = d.reqs;
			CHECK(t, !mu__dreclaim_settle(&d, j)); /* within its wait: nothing */
			CHECK(t, d.reqs == r0);
			j->shrink_at = 0; /* (the wait over) */
		}
		CHECK_EQ_INT(t, (int)events_of(kc, "ShrinkFailed"), k);
		/* the last refusal: given up, counted at its real size */
		CHECK(t, mu__dreclaim_settle(&d, j));
		CHECK(t, j->shrinking == NULL);
		CHECK_EQ_INT(t, (int)events_of(kc, "ShrinkFailed"), k + 1);
		CHECK_EQ_INT(t, mu__dreclaim_shrunk(j), k);
		CHECK_EQ_INT(t, (int)j->state, MU__DJ_DISPATCHED);
		CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, j->fid, &fi), MU_OK);
		CHECK_EQ_INT(t, fi.shrunk, k);
		CHECK_EQ_INT(t, par_of(kc, js[k]->name, rv, sizeof rv), 4 - k); /* untouched */
	}
	CHECK(t, js[1]->shrunk && strstr(js[1]->shrunk, "\tInCohortReclamation\tits shrink to 2 "
					 "pods on cluster w, read back after a restart, was refused "
					 "5 times by the worker (last HTTP 403): given up"));

	fleet_down(&d, &c, js, 2);
	mu_kube_client_free(kc);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* Round 22 (mu__dreclaim_settle): shrinks on a pull cluster, settled from
 * its agent's answer (muster.io/agent-shrink on the hub Job, j->obj):
 * none yet, or one of another size: kept; after a restart (the job
 * adopted shrunk by its record's 2), "done" settles it with one Event
 * Shrunk, "was" with none, the fleet still counting 2 off; refused 4
 * times: kept; the fifth: given up at the size the agent read (4: no
 * record, the fleet 0 off, ShrinkFailed); a shrink this daemon chose
 * (shrink_live): "done" tells the fleet (2 off) and posts Shrunk,
 * refused 5 times withdraws it whole (Withdrawing, Preempted, its
 * record back as it was: none).  Round 23: an answer not of the form is
 * said (one InvalidShrinkAnswer) and counted as a refusal on the agent's
 * schedule, the fifth giving the shrink up whole. */
static void test_pull(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-shrinkp-XXXXXX", server[64];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0};
	fx_config(&cfg, server);
	mu_kube_client_t *kc = NULL;
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &kc), MU_OK);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	mu__dcl_t c;
	fleet_up(t, &d, &o, &c, kc, server, NULL, 16);
	c.pull = true;
	mu__djob_t *js[5];
	for (int k = 0; k < 5; k++) {
		char name[16];
		snprintf(name, sizeof name, "pl-%d", k);
		js[k] = elastic(t, kc, name, 4);
	}
	d.jobs = js;
	d.njobs = 5;
	for (int k = 0; k < 5; k++)
		mu__dhub_readopt(&d, js[k]); /* the restart: adopted shrunk by 2 */
	mu_fleet_job_info_t fi;
	json_t *ann = json_object_get(json_object_get(js[0]->obj, "metadata"), "annotations");
	/* no answer, then one of another size: kept, nothing posted */
	CHECK(t, !mu__dreclaim_settle(&d, js[0]));
	CHECK(t, js[0]->shrinking != NULL);
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 3 done 0 200 3"));
	CHECK(t, !mu__dreclaim_settle(&d, js[0]));
	CHECK(t, js[0]->shrinking != NULL);
	CHECK_EQ_INT(t, (int)shrunk_events(kc), 0);
	/* done by the agent after the restart: settled, one Event */
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 done 0 200 2"));
	CHECK(t, mu__dreclaim_settle(&d, js[0]));
	CHECK(t, js[0]->shrinking == NULL);
	CHECK_EQ_INT(t, (int)shrunk_events(kc), 1);
	CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, js[0]->fid, &fi), MU_OK);
	CHECK_EQ_INT(t, fi.shrunk, 2);
	/* done before the restart: settled, no Event */
	ann = json_object_get(json_object_get(js[1]->obj, "metadata"), "annotations");
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 was 0 200 2"));
	CHECK(t, mu__dreclaim_settle(&d, js[1]));
	CHECK(t, js[1]->shrinking == NULL);
	CHECK_EQ_INT(t, (int)shrunk_events(kc), 1);
	/* refused 4 times: kept; the fifth: given up at its real size */
	ann = json_object_get(json_object_get(js[2]->obj, "metadata"), "annotations");
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 refused 4 403 4"));
	CHECK(t, !mu__dreclaim_settle(&d, js[2]));
	CHECK(t, js[2]->shrinking != NULL);
	CHECK_EQ_INT(t, (int)events_of(kc, "ShrinkFailed"), 0);
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 refused 5 403 4"));
	CHECK(t, mu__dreclaim_settle(&d, js[2]));
	CHECK(t, js[2]->shrinking == NULL);
	CHECK_EQ_INT(t, (int)events_of(kc, "ShrinkFailed"), 1);
	CHECK_EQ_INT(t, mu__dreclaim_shrunk(js[2]), 0);
	CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, js[2]->fid, &fi), MU_OK);
	CHECK_EQ_INT(t, fi.shrunk, 0);
	/* chosen by this daemon (adopted whole, then shrink's state): done
	 * tells the fleet and posts Shrunk */
	mu__djob_t *j = js[3];
	free(j->shrunk);
	j->shrunk = NULL;
	mu__dhub_readopt(&d, j);
	CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, j->fid, &fi), MU_OK);
	CHECK_EQ_INT(t, fi.shrunk, 0);
	j->shrunk = strdup("1\t2\tInCohortReclamation\tShrunk on cluster w from 4 to 2 pods");
	j->shrink_live = true;
	j->shrink_x = (mu_fleet_reclaim_t){.victim = j->fid, .for_job = -1, .generation = 1,
					   .pods = 2};
	ann = json_object_get(json_object_get(j->obj, "metadata"), "annotations");
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 done 0 200 2"));
	CHECK(t, mu__dreclaim_settle(&d, j));
	CHECK(t, j->shrinking == NULL && !j->shrink_live);
	CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, j->fid, &fi), MU_OK);
	CHECK_EQ_INT(t, fi.shrunk, 2);
	CHECK_EQ_INT(t, (int)shrunk_events(kc), 2);
	/* a second one refused 5 times: withdrawn whole, its record back */
	free(j->shrunk);
	j->shrunk = strdup("1\t3\tInCohortReclamation\tShrunk on cluster w from 2 to 1 pods");
	j->shrinking = strdup("1\t1");
	j->shrink_was = strdup("1\t2\tInCohortReclamation\tShrunk on cluster w from 4 to 2 pods");
	j->shrink_live = true;
	j->shrink_x.pods = 1;
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 1 refused 5 403 2"));
	CHECK(t, mu__dreclaim_settle(&d, j));
	CHECK(t, j->shrinking == NULL && !j->shrink_live && j->shrink_was == NULL);
	CHECK_EQ_INT(t, (int)j->state, MU__DJ_WITHDRAWING);
	CHECK_EQ_INT(t, mu__dreclaim_shrunk(j), 2);
	CHECK_EQ_INT(t, (int)events_of(kc, "Preempted"), 1);

	/* round 23: an answer not of the form (another word for the outcome):
	 * said (one Event InvalidShrinkAnswer), counted as a refusal on the
	 * agent's schedule (none counted within the wait), the 5th given up
	 * whole (the copy's size not known: no record, the fleet 0 off) */
	j = js[4];
	ann = json_object_get(json_object_get(j->obj, "metadata"), "annotations");
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 finished 0 200 2"));
	CHECK(t, !mu__dreclaim_settle(&d, j));
	CHECK_EQ_INT(t, j->shrink_tries, 1);
	CHECK(t, !mu__dreclaim_settle(&d, j)); /* within its wait: not counted */
	CHECK_EQ_INT(t, j->shrink_tries, 1);
	CHECK_EQ_INT(t, (int)events_of(kc, "InvalidShrinkAnswer"), 1);
	json_object_set_new(ann, MU__D_SHRINKREP, json_string("1 2 refu")); /* cut */
	for (int i = 2; i < MU__D_SHRINK_TRIES; i++) {
		j->shrink_at = 0; /* (the wait over) */
		CHECK(t, !mu__dreclaim_settle(&d, j));
		CHECK_EQ_INT(t, j->shrink_tries, i);
	}
	CHECK_EQ_INT(t, (int)events_of(kc, "ShrinkFailed"), 1);
	j->shrink_at = 0;
	CHECK(t, mu__dreclaim_settle(&d, j));
	CHECK(t, j->shrinking == NULL);
	CHECK_EQ_INT(t, (int)events_of(kc, "InvalidShrinkAnswer"), 1);
	CHECK_EQ_INT(t, (int)events_of(kc, "ShrinkFailed"), 2);
	CHECK_EQ_INT(t, mu__dreclaim_shrunk(j), 0);
	CHECK_EQ_INT(t, mu_fleet_job_info(d.fleet, j->fid, &fi), MU_OK);
	CHECK_EQ_INT(t, fi.shrunk, 0);

	fleet_down(&d, &c, js, 5);
	mu_kube_client_free(kc);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* The hub Job name's answer (MU__D_SHRINKREP) on the server, parsed
 * into *r: mu__dshrinkrep_parse's result (0: none, or no Job). */
static int answer_of(mu_kube_client_t *c, const char *name, mu__dshrinkrep_t *r)
{
	char path[256], why[200];
	json_t *o = NULL;
	snprintf(path, sizeof path, "/apis/batch/v1/namespaces/default/jobs/%s", name);
	fx_req(c, "GET", path, NULL, &o);
	int rc = mu__dshrinkrep_parse(mu__dmeta(o, "annotations", MU__D_SHRINKREP), r, why,
				      sizeof why);
	json_decref(o);
	return rc;
}

/* Round 23: an agent started again (memory mem emptied) whose hub Job
 * hub (its annotations ann) has the answer text, for copy w: its pass
 * (mu__dagent_shrink with worker client wk).  Whether it sent anything. */
static bool restart_asks(mu__dd_t *d, mu_kube_client_t *wk, json_t *mem, const json_t *hub,
			 json_t *ann, const json_t *w, const char *text)
{
	json_object_set_new(ann, MU__D_SHRINKREP, json_string(text));
	json_object_clear(mem);
	uint64_t r0 = d->reqs;
	mu__dagent_shrink(d, wk, mem, MU__DK_JOB, hub, w, "1");
	return d->reqs > r0;
}

/* Round 23: the pull agent's side (agent.c mu__dagent_shrink) against a
 * worker whose account may not patch Jobs (403): the refusal's answer
 * carries its time; an agent started again (its memory empty) reads it
 * back from the hub and waits out the refusal's 1 s (no request at all),
 * then asks again (refused twice); an answer whose time is an hour ahead
 * (a clock set back) or of round 22's form (no time) is asked again at
 * once; parse's cases. */
static void test_agent_wait(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-shrinka-XXXXXX", server[64], body[512];
	mu_kube_config_t cfg = {0}, wcfg = {0};
	mu_kube_client_t *kc = NULL, *wk = NULL;
	mu_apiserver_t *s = reader_up(t, dir, server, sizeof server, &cfg, &kc);
	if (!s)
		return;
	fx_config(&wcfg, server);
	wcfg.token = strdup("rdr");
	CHECK_EQ_INT(t, mu_kube_client_new(&wcfg, &wk), MU_OK);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	d.hub = kc;
	/* the hub Job ag (its intent: generation 1, to 2 pods) and its copy
	 * ag-copy at 4 on the worker (the same server) */
	snprintf(body, sizeof body, JOB, "ag", 4);
	CHECK_EQ_INT(t, fx_req(kc, "POST", "/apis/batch/v1/namespaces/default/jobs", body, NULL),
		     201);
	snprintf(body, sizeof body, JOB, "ag-copy", 4);
	json_t *w = NULL;
	CHECK_EQ_INT(t, fx_req(kc, "POST", "/apis/batch/v1/namespaces/default/jobs", body, &w), 201);
	json_t *hub = json_pack("{s:{s:s,s:s,s:s,s:{s:s,s:s}}}", "metadata", "name", "ag",
				"namespace", "default", "uid", "ag-uid", "annotations",
				MU__D_SHRINKING, "1\t2", MU__D_GEN, "1");
	json_t *ann = json_object_get(json_object_get(hub, "metadata"), "annotations");
	json_t *mem = json_object();
	mu__dshrinkrep_t r;
	char rv[64];
	/* refused once: the answer has its time */
	mu__dagent_shrink(&d, wk, mem, MU__DK_JOB, hub, w, "1");
	CHECK_EQ_INT(t, answer_of(kc, "ag", &r), 1);
	int64_t now = mu__d_wall_ms();
	CHECK(t, !strcmp(r.res, "refused") && r.tries == 1 && r.st == 403 && r.par == 4);
	CHECK(t, r.at_ms > now - 5000 && r.at_ms <= now);
	/* started again: memory empty, the hub's answer read back: waits */
	json_t *mem2 = json_object();
	char text[200];
	snprintf(text, sizeof text, "%s", json_string_value(json_object_get(mem, "ag-uid")));
	uint64_t r0 = d.reqs;
	CHECK(t, !restart_asks(&d, wk, mem2, hub, ann, w, text));
	CHECK_EQ_INT(t, par_of(kc, "ag-copy", rv, sizeof rv), 4);
	/* the wait over: asked again, refused a second time */
	nap_ms(1100);
	mu__dagent_shrink(&d, wk, mem2, MU__DK_JOB, hub, w, "1");
	CHECK(t, d.reqs > r0);
	CHECK_EQ_INT(t, answer_of(kc, "ag", &r), 1);
	CHECK_EQ_INT(t, r.tries, 2);
	/* a time an hour ahead (the clock set back since): asked at once,
	 * not an hour later */
	char at[48];
	mu__rfc3339_format((mu__d_wall_ms() + 3600000) * 1000, true, at, sizeof at);
	snprintf(text, sizeof text, "1 2 refused 1 403 4 %s", at);
	CHECK(t, restart_asks(&d, wk, mem2, hub, ann, w, text));
	/* round 22's form (no time): asked at once */
	CHECK(t, restart_asks(&d, wk, mem2, hub, ann, w, "1 2 refused 1 403 4"));
	CHECK_EQ_INT(t, answer_of(kc, "ag", &r), 1);
	CHECK_EQ_INT(t, r.tries, 2);
	/* round 23: an answer not of the form on the hub (hand-edited): said,
	 * and answered over (asked now: no count to go on) */
	CHECK(t, restart_asks(&d, wk, mem2, hub, ann, w, "1 2 refused 4"));
	CHECK_EQ_INT(t, answer_of(kc, "ag", &r), 1);
	CHECK(t, !strcmp(r.res, "refused") && r.tries == 1 && r.at_ms > 0);
	/* the parser: both forms, and what it refuses */
	char why[200];
	CHECK_EQ_INT(t, mu__dshrinkrep_parse(NULL, &r, why, sizeof why), 0);
	CHECK_EQ_INT(t, mu__dshrinkrep_parse("3 2 done 0 200 2", &r, why, sizeof why), 1);
	CHECK(t, r.gen == 3 && r.to == 2 && !strcmp(r.res, "done") && r.at_ms == 0);
	CHECK_EQ_INT(t, mu__dshrinkrep_parse("3 2 was 0 200 2 2026-11-29T14:00:00.5Z", &r, why,
					     sizeof why), 1);
	CHECK(t, r.at_ms == 1795960800500LL);
	CHECK(t, !mu__dshrinkrep_waits(&r, r.at_ms)); /* not a refusal */
	/* round 23: what is not of the form, and the field it names */
	static const char *const bad[][2] = {
		{"", "GEN missing"}, {"1 2 refu", "OUTCOME \"refu\""},
		{"1 2 done", "TRIES missing"}, {"0 2 done 0 200 2", "GEN \"0\""},
		{"1 x done 0 200 2", "TO \"x\""}, {"1 2 done 0 200 2 yesterday", "TIME \"yesterday\""},
		{"1 2 done 0 200 2 2026-11-29T14:00:00Z more", "a word after TIME \"more\""},
		{"1 2 done 0 2000 2", "HTTP \"2000\""}, {"1 2 done -1 200 2", "TRIES \"-1\""}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		CHECK_EQ_INT(t, mu__dshrinkrep_parse(bad[i][0], &r, why, sizeof why), -1);
		if (!strstr(why, bad[i][1]))
			fprintf(stderr, "%s: %s\n", bad[i][0], why);
		CHECK(t, strstr(why, bad[i][1]) != NULL);
	}

	json_decref(hub);
	json_decref(w);
	json_decref(mem);
	json_decref(mem2);
	mu_kube_client_free(wk);
	mu_kube_config_release(&wcfg);
	mu_kube_client_free(kc);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

/* Round 23: PyTorchJob's CRD (kubeflow.org/v1), its schema open. */
static const char *PYTORCH_CRD =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"pytorchjobs.kubeflow.org\"},\"spec\":{\"group\":\"kubeflow.org\","
	"\"names\":{\"kind\":\"PyTorchJob\",\"listKind\":\"PyTorchJobList\",\"plural\":\"pytorchjobs\","
	"\"singular\":\"pytorchjob\"},\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1\","
	"\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
	"\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* An elastic PyTorchJob `name` (only a Worker replica type, `workers` of
 * them, elasticPolicy minReplicas 2), as JSON text into buf. */
static const char *ptjob(char *buf, size_t len, const char *name, int workers)
{
	snprintf(buf, len, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":"
		 "{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"elasticPolicy\":{\"minReplicas\":2,"
		 "\"maxReplicas\":4},\"runPolicy\":{\"suspend\":false},\"pytorchReplicaSpecs\":{\"Worker\":"
		 "{\"replicas\":%d,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}}}",
		 name, workers);
	return buf;
}

/* PyTorchJob name's Worker replicas and metadata.generation (into rv). */
static int workers_of(mu_kube_client_t *c, const char *name, char *rv, size_t len)
{
	char path[256];
	snprintf(path, sizeof path, "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/%s", name);
	return field_of(c, path, "spec.pytorchReplicaSpecs.Worker.replicas", rv, len);
}

/* Round 23: a restart's intent on an elastic PyTorchJob's copy, settled
 * as a Job's is but on its own size (the Worker's replicas): the copy at
 * 4 PATCHed to 2 (nothing else of it changed, one Event Shrunk); at 2
 * already, left as it is (the same generation, no Event); no copy on the
 * worker, or a hub object without elasticPolicy now: dropped. */
static void test_pytorch(mu_t_t *t)
{
	char body[900], rv[64], rv2[64];
	bed_t bed;
	if (!bed_up(t, &bed))
		return;
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			       PYTORCH_CRD, NULL), 201);
	const char *pts = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
	long st = 0;
	for (int i = 0; i < 200 && st != 201; i++) { /* once the CRD is served */
		st = fx_req(bed.kc, "POST", pts, ptjob(body, sizeof body, "full", 4), NULL);
		if (st != 201)
			nap_ms(10);
	}
	CHECK_EQ_INT(t, (int)st, 201);
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", pts, ptjob(body, sizeof body, "done", 2), NULL), 201);

	mu__djob_t *js[3];
	const char *names[3] = {"full", "done", "gone"};
	for (int i = 0; i < 3; i++) {
		js[i] = victim(names[i], "1\t2");
		js[i]->kind = MU__DK_PYTORCH;
		json_decref(js[i]->obj);
		js[i]->obj = json_loads(ptjob(body, sizeof body, names[i], 4), 0, NULL);
		CHECK(t, mu__dkind_shrinks(js[i]->obj, MU__DK_PYTORCH));
	}
	/* the copy at 4: its Worker's replicas PATCHed to 2, once */
	CHECK(t, mu__dreclaim_settle(&bed.d, js[0]));
	CHECK_EQ_INT(t, workers_of(bed.kc, "full", rv, sizeof rv), 2);
	CHECK_STR(t, rv, "2");
	CHECK(t, js[0]->shrinking == NULL);
	CHECK_EQ_INT(t, mu__dreclaim_shrunk(js[0]), 2);
	CHECK_EQ_INT(t, (int)shrunk_events(bed.kc), 1);
	/* at 2 already: read back from the same field, left as it is */
	workers_of(bed.kc, "done", rv, sizeof rv);
	CHECK(t, mu__dreclaim_settle(&bed.d, js[1]));
	CHECK_EQ_INT(t, workers_of(bed.kc, "done", rv2, sizeof rv2), 2);
	CHECK_STR(t, rv2, rv);
	CHECK(t, js[1]->shrinking == NULL);
	CHECK_EQ_INT(t, (int)shrunk_events(bed.kc), 1);
	/* none on the worker: dropped */
	CHECK(t, mu__dreclaim_settle(&bed.d, js[2]));
	CHECK(t, js[2]->shrinking == NULL);
	/* its hub object without elasticPolicy now: dropped, nothing asked
	 * (its copy, at 2, is left) */
	free(js[0]->shrinking);
	js[0]->shrinking = strdup("1\t1");
	json_object_del(json_object_get(js[0]->obj, "spec"), "elasticPolicy");
	uint64_t r0 = bed.d.reqs;
	CHECK(t, mu__dreclaim_settle(&bed.d, js[0]));
	CHECK(t, js[0]->shrinking == NULL);
	CHECK(t, bed.d.reqs == r0);
	CHECK_EQ_INT(t, workers_of(bed.kc, "full", rv, sizeof rv), 2);
	/* the pull agent's shrink of the same kind (s24-kinds' size by kind
	 * in s24-pull's mu__dagent_shrink): the copy pl-copy at 4 PATCHed to
	 * the intent's 2, answered done (PAR: its size now) */
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", pts, ptjob(body, sizeof body, "pl", 4), NULL), 201);
	json_t *w = NULL;
	CHECK_EQ_INT(t, fx_req(bed.kc, "POST", pts, ptjob(body, sizeof body, "pl-copy", 4), &w), 201);
	json_t *hub = json_loads(ptjob(body, sizeof body, "pl", 4), 0, NULL);
	json_t *md = json_object_get(hub, "metadata");
	json_object_set_new(md, "uid", json_string("pl-uid"));
	json_object_set_new(md, "annotations", json_pack("{s:s,s:s}", MU__D_SHRINKING, "1\t2",
							  MU__D_GEN, "1"));
	json_t *mem = json_object();
	mu__dagent_shrink(&bed.d, bed.kc, mem, MU__DK_PYTORCH, hub, w, "1");
	CHECK_EQ_INT(t, workers_of(bed.kc, "pl-copy", rv, sizeof rv), 2);
	const char *ans = json_string_value(json_object_get(mem, "pl-uid"));
	CHECK(t, ans && !strncmp(ans, "1 2 done 0 200 2 ", 17));
	json_decref(mem);
	json_decref(hub);
	json_decref(w);

	bed_down(t, &bed, js, 3);
}


int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_settle);
	MU_RUN(&t, test_give_up);
	MU_RUN(&t, test_pull);
	MU_RUN(&t, test_pytorch);
	MU_RUN(&t, test_agent_wait);
	return mu_t_done(&t);
}
