/*
 * test_fleet_dra.c - DRA claims in the fleet's model of each cluster
 * (issue 18, round 14), through the public API: a job whose pods claim a
 * device goes only to the cluster whose ResourceSlices have one its
 * DeviceClass selects; two pods of a gang never share one device; a device
 * a worker's ResourceClaim holds is not offered, and comes back once the
 * claim is gone; a job's devices are freed when it finishes; a claim with
 * CEL outside the subset is refused with the allocator's reason; the
 * explanation says why per cluster.  The fleet, its clusters, their
 * devices and the jobs come from the fixture below (fx_*, round 16), which
 * frees them all at the end of each case.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/fleet.h"

#define GI (1024LL * 1024 * 1024)
#define MIN (60 * 1000LL)

static const char *CLASS =
	"[{\"metadata\":{\"name\":\"gpu.example.com\"},\"spec\":{\"selectors\":"
	"[{\"cel\":{\"expression\":\"device.driver == \\\"gpu.example.com\\\"\"}}]}}]";

/* A slice with ndev devices on node, of driver drv. */
static json_t *slice(const char *node, const char *drv, int ndev)
{
	json_t *devs = json_array();
	for (int i = 0; i < ndev; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "gpu-%d", i);
		json_array_append_new(devs, json_pack("{s:s,s:{s:{s:{s:s}}}}", "name", nm, "basic",
						      "attributes", "model", "string", "A100"));
	}
	return json_pack("{s:{s:s},s:{s:s,s:s,s:{s:s,s:i,s:i},s:o}}", "metadata", "name", node,
			 "spec", "driver", drv, "nodeName", node, "pool", "name", node,
			 "generation", 1, "resourceSliceCount", 1, "devices", devs);
}

static int32_t cluster(mu_fleet_t *f, const char *name, int nodes)
{
	mu_cluster_spec_t c = {.name = name, .tier = MU_TIER_PRIVATE};
	int32_t id = -1;
	if (mu_fleet_cluster_add(f, &c, &id))
		return -1;
	for (int i = 0; i < nodes; i++) {
		char nm[64];
		snprintf(nm, sizeof nm, "%s-n%d", name, i);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		mu_label_t host = {"kubernetes.io/hostname", nm}; /* as kubelet sets it */
		n.name = nm;
		n.labels = &host;
		n.nlabels = 1;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 512 * GI;
		n.alloc.v[MU_RES_PODS] = 110;
		if (mu_fleet_node_upsert(f, id, &n))
			return -1;
	}
	return id;
}

static mu_fleet_t *fleet(void)
{
	mu_fleet_t *f;
	if (mu_fleet_new(NULL, &f))
		return NULL;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "team";
	mu_fleet_queue_upsert(f, &q);
	return f;
}

/* Gives cluster c the slices in sl (taken) and the one class. */
static void devices(mu_fleet_t *f, int32_t c, json_t *sl, json_t *claims)
{
	json_t *cls = json_loads(CLASS, 0, NULL);
	mu_fleet_cluster_dra(f, c, sl, cls, claims, NULL);
	json_decref(sl);
	json_decref(cls);
	json_decref(claims);
}

typedef struct djob {
	mu_podset_spec_t ps;
	mu_job_spec_t job;
	mu_fleet_job_spec_t fs;
	json_t *dra;
} djob_t;

/* A gang of replicas pods of 1 CPU, each claiming one device of class cls
 * (with selector cel, or none) from a template. */
static void djob(djob_t *d, const char *name, int replicas, const char *cls, const char *cel)
{
	memset(d, 0, sizeof *d);
	d->ps.name = "main";
	d->ps.replicas = replicas;
	d->ps.req.v[MU_RES_CPU] = 1000;
	d->ps.dra_claims = "[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t\"}]";
	d->job.name = name;
	d->job.queue = "team";
	d->job.podsets = &d->ps;
	d->job.npodsets = 1;
	d->job.submit = MU_TIME_NONE;
	d->job.runtime_estimate = 60 * MIN;
	d->job.preemptible = true;
	json_t *req = json_pack("{s:s,s:s}", "name", "gpu", "deviceClassName", cls);
	if (cel)
		json_object_set_new(req, "selectors",
				    json_pack("[{s:{s:s}}]", "cel", "expression", cel));
	json_t *claim = json_pack("{s:{s:s},s:{s:{s:[o]}}}", "metadata", "name", "t", "spec",
				  "devices", "requests", req);
	d->dra = json_pack("[[{s:s,s:o}]]", "name", "gpu", "claim", claim);
	d->fs = (mu_fleet_job_spec_t){.job = &d->job, .dra = d->dra};
}

static int32_t where(const mu_fleet_t *f, mu_id_t j)
{
	mu_fleet_job_info_t ji;
	if (mu_fleet_job_info(f, j, &ji))
		return -2;
	return ji.cluster;
}

static int pass(mu_fleet_t *f, mu_time_t now)
{
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	int rc = mu_fleet_dispatch(f, now, &d);
	mu_fleet_decisions_release(&d);
	return rc;
}

/* --- the fixture: one fleet with queue "team", its jobs, freed together --- */

#define FX_JOBS 4

typedef struct fx {
	mu_fleet_t *f;
	djob_t jobs[FX_JOBS];
	int njobs;
} fx_t;

/* A fleet of clusters nodes[0..n) nodes each, named "a", "b", ...; the
 * ids are 0, 1, ... in that order.  NULL nodes: none yet. */
static void fx_init(mu_t_t *t, fx_t *x, const int *nodes, int n)
{
	memset(x, 0, sizeof *x);
	x->f = fleet();
	CHECK(t, x->f != NULL);
	for (int i = 0; x->f && nodes && i < n; i++) {
		char nm[2] = {(char)('a' + i), 0};
		cluster(x->f, nm, nodes[i]);
	}
}

/* A job of the fixture (djob()), freed by fx_free. */
static djob_t *fx_job(fx_t *x, const char *name, int replicas, const char *cls, const char *cel)
{
	djob_t *d = &x->jobs[x->njobs++];
	djob(d, name, replicas, cls, cel);
	return d;
}

/* Submits d at now, checked, then one dispatch pass at pass_at (checked;
 * < 0: none); its id. */
static mu_id_t fx_submit(mu_t_t *t, fx_t *x, djob_t *d, mu_time_t now, mu_time_t pass_at)
{
	mu_id_t id = -1;
	CHECK_EQ_INT(t, mu_fleet_job_submit(x->f, &d->fs, now, &id), MU_OK);
	if (pass_at >= 0)
		CHECK_EQ_INT(t, pass(x->f, pass_at), MU_OK);
	return id;
}

/* Checks job id waits with reason why. */
static void fx_waits(mu_t_t *t, fx_t *x, mu_id_t id, mu_fleet_why_t why)
{
	mu_fleet_job_info_t ji;
	CHECK_EQ_INT(t, where(x->f, id), -1);
	mu_fleet_job_info(x->f, id, &ji);
	CHECK_EQ_INT(t, ji.why, why);
}

static void fx_free(fx_t *x)
{
	for (int i = 0; i < x->njobs; i++)
		json_decref(x->jobs[i].dra);
	mu_fleet_free(x->f);
}

/* Only "b" has a device the class selects ("a" has none, "c" another
 * driver's): the job goes to b, and the explanation of a second job that
 * finds b's device taken names the allocator's reason on each. */
static void test_only_cluster_with_device(mu_t_t *t)
{
	fx_t x;
	fx_init(t, &x, (const int[]){2, 2, 2}, 3);
	int32_t b = 1, c = 2;
	devices(x.f, b, json_pack("[o]", slice("b-n1", "gpu.example.com", 1)), NULL);
	devices(x.f, c, json_pack("[o]", slice("c-n0", "other.example.com", 4)), NULL);
	mu_id_t i1 = fx_submit(t, &x, fx_job(&x, "one", 1, "gpu.example.com", NULL), 0, 0);
	CHECK_EQ_INT(t, where(x.f, i1), b);
	mu_id_t i2 = fx_submit(t, &x, fx_job(&x, "two", 1, "gpu.example.com", NULL), 1, 1);
	fx_waits(t, &x, i2, MU_FW_NO_FIT);
	mu_fleet_explain_t e[3];
	CHECK_EQ_INT(t, mu_fleet_job_explain(x.f, i2, 1, e), MU_OK);
	char buf[2048];
	mu_fleet_explain_format(x.f, e, 1, buf, sizeof buf);
	printf("  explain: %s\n", buf);
	CHECK(t, strstr(buf, "a: no devices") != NULL);
	CHECK(t, strstr(buf, "b: no devices") != NULL);
	CHECK(t, strstr(buf, "gpu.example.com") != NULL);
	/* the first job ends: its device is free, the second gets it */
	CHECK_EQ_INT(t, mu_fleet_job_finish(x.f, i1, 2), MU_OK);
	CHECK_EQ_INT(t, pass(x.f, 2), MU_OK);
	CHECK_EQ_INT(t, where(x.f, i2), b);
	fx_free(&x);
}

/* One node with one device: a gang of two pods, each claiming a device,
 * does not fit (the second pod cannot have the first's device); with two
 * devices it does. */
static void test_gang_pods_do_not_share(mu_t_t *t)
{
	fx_t x;
	fx_init(t, &x, (const int[]){1}, 1);
	devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), NULL);
	mu_id_t id = fx_submit(t, &x, fx_job(&x, "gang", 2, "gpu.example.com", NULL), 0, 0);
	fx_waits(t, &x, id, MU_FW_NO_FIT);
	mu_fleet_queue_info_t qi;
	mu_fleet_queue_info(x.f, 0, &qi);
	CHECK_EQ_INT(t, qi.used.v[MU_RES_CPU], 0); /* waits holding no quota */
	devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 2)), NULL);
	CHECK_EQ_INT(t, pass(x.f, 1), MU_OK);
	CHECK_EQ_INT(t, where(x.f, id), 0);
	fx_free(&x);
}

/* Two nodes with one device each: a gang of two pods that each claim one
 * device fits, one pod per node (the model packs them on one node by CPU;
 * the allocation of the second pod refuses that, and the second try
 * spreads them). */
static void test_gang_spreads(mu_t_t *t)
{
	fx_t x;
	fx_init(t, &x, (const int[]){3}, 1);
	devices(x.f, 0, json_pack("[o,o]", slice("a-n0", "gpu.example.com", 1),
				  slice("a-n2", "gpu.example.com", 1)), NULL);
	mu_id_t id = fx_submit(t, &x, fx_job(&x, "gang", 2, "gpu.example.com", NULL), 0, 0);
	CHECK_EQ_INT(t, where(x.f, id), 0);
	/* both devices are the gang's now */
	mu_id_t id2 = fx_submit(t, &x, fx_job(&x, "more", 1, "gpu.example.com", NULL), 1, 1);
	CHECK_EQ_INT(t, where(x.f, id2), -1);
	fx_free(&x);
}

/* A device a worker's ResourceClaim holds is not offered: the job waits
 * until the claim is gone. */
static void test_worker_claim_in_use(mu_t_t *t)
{
	fx_t x;
	fx_init(t, &x, (const int[]){1}, 1);
	json_t *held = json_loads(
		"[{\"metadata\":{\"name\":\"theirs\",\"namespace\":\"default\"},"
		"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.example.com\"}]}},"
		"\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
		"\"driver\":\"gpu.example.com\",\"pool\":\"a-n0\",\"device\":\"gpu-0\"}]}}}}]", 0, NULL);
	devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), held);
	mu_id_t id = fx_submit(t, &x, fx_job(&x, "mine", 1, "gpu.example.com", NULL), 0, 0);
	CHECK_EQ_INT(t, where(x.f, id), -1);
	devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), json_array());
	CHECK_EQ_INT(t, pass(x.f, 1), MU_OK);
	CHECK_EQ_INT(t, where(x.f, id), 0);
	fx_free(&x);
}

/* The worker's allocation takes over from the fleet's (round 20): one
 * node with two devices; "one" is dispatched (the fleet allocates a device
 * for it), and the worker's scheduler allocates its copy's claim the other
 * device (as the worker's ResourceClaims then say).  Until its copy's pod
 * is bound both count, and "two" waits; once it is (mu_fleet_job_started)
 * only the worker's does, and "two" gets the other.  Also when the worker
 * took the same device as the fleet; and a third job still finds none. */
static void test_worker_allocation_takes_over(mu_t_t *t)
{
	for (int same = 0; same < 2; same++) {
		fx_t x;
		fx_init(t, &x, (const int[]){1}, 1);
		devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 2)), NULL);
		mu_id_t one = fx_submit(t, &x, fx_job(&x, "one", 1, "gpu.example.com", NULL), 0, 0);
		CHECK_EQ_INT(t, where(x.f, one), 0);
		json_t *theirs = json_pack(
			"[{s:{s:s,s:s},s:{s:{s:[{s:s,s:s}]}},s:{s:{s:{s:[{s:s,s:s,s:s,s:s}]}}}}]",
			"metadata", "name", "one-pod-gpu", "namespace", "default", "spec", "devices",
			"requests", "name", "gpu", "deviceClassName", "gpu.example.com", "status",
			"allocation", "devices", "results", "request", "gpu", "driver",
			"gpu.example.com", "pool", "a-n0", "device", same ? "gpu-0" : "gpu-1");
		devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 2)), theirs);
		mu_id_t two = fx_submit(t, &x, fx_job(&x, "two", 1, "gpu.example.com", NULL), 1, 1);
		if (!same)
			CHECK_EQ_INT(t, where(x.f, two), -1); /* gpu-0 the fleet's, gpu-1 theirs */
		CHECK_EQ_INT(t, mu_fleet_job_started(x.f, one), MU_OK);
		CHECK_EQ_INT(t, mu_fleet_job_started(x.f, one), MU_OK); /* again: harmless */
		CHECK_EQ_INT(t, pass(x.f, 2), MU_OK);
		CHECK_EQ_INT(t, where(x.f, two), 0);
		mu_id_t three = fx_submit(t, &x, fx_job(&x, "three", 1, "gpu.example.com", NULL), 3, 3);
		CHECK_EQ_INT(t, where(x.f, three), -1); /* both devices in use, each once */
		CHECK_EQ_INT(t, mu_fleet_job_started(x.f, three), MU_ESTATE); /* not dispatched */
		CHECK_EQ_INT(t, mu_fleet_job_started(x.f, 99), MU_ENOENT);
		fx_free(&x);
	}
}

/* A selector outside the CEL subset: refused with the allocator's reason
 * (the job waits; explain says why). */
static void test_cel_outside_subset(mu_t_t *t)
{
	fx_t x;
	fx_init(t, &x, NULL, 0);
	djob_t *bad = fx_job(&x, "bad", 1, "gpu.example.com", NULL);
	json_t *two = json_pack("[[],[]]"); /* two entries for one pod set */
	bad->fs.dra = two;
	mu_id_t ib;
	CHECK_EQ_INT(t, mu_fleet_job_submit(x.f, &bad->fs, 0, &ib), MU_EINVAL);
	json_decref(two);
	int32_t a = cluster(x.f, "a", 1);
	devices(x.f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 2)), NULL);
	djob_t *g = fx_job(&x, "fancy", 1, "gpu.example.com", "device.attributes.exists_one(x, true)");
	mu_id_t id = fx_submit(t, &x, g, 0, 0);
	CHECK_EQ_INT(t, where(x.f, id), -1);
	mu_fleet_explain_t e[1];
	CHECK_EQ_INT(t, mu_fleet_job_explain(x.f, id, 0, e), MU_OK);
	CHECK(t, e[0].devices != NULL);
	if (e[0].devices)
		printf("  cel refusal: %s\n", e[0].devices);
	fx_free(&x);
}

/* A job with claims that fits nowhere takes no room back from another
 * queue's job: reclaim's what-if counts no devices, and the victim's
 * going would give it none here. */
static void test_no_reclaim_for_claims(mu_t_t *t)
{
	fx_t x;
	fx_init(t, &x, (const int[]){1}, 1);
	devices(x.f, 0, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), NULL);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "team";
	q.deserved.v[MU_RES_CPU] = 1000000;
	mu_fleet_queue_upsert(x.f, &q);
	mu_queue_spec_defaults(&q);
	q.name = "other";
	mu_fleet_queue_upsert(x.f, &q);
	/* other's job takes every CPU, no device */
	djob_t *big = fx_job(&x, "big", 1, "gpu.example.com", NULL);
	big->ps.req.v[MU_RES_CPU] = 64000;
	big->job.queue = "other";
	big->fs.dra = NULL;
	mu_id_t ib = fx_submit(t, &x, big, 0, 0);
	CHECK_EQ_INT(t, where(x.f, ib), 0);
	mu_id_t ig = fx_submit(t, &x, fx_job(&x, "mine", 1, "gpu.example.com", NULL), 1, -1);
	mu_time_t later = 120 * MIN;
	CHECK_EQ_INT(t, pass(x.f, later), MU_OK);
	CHECK_EQ_INT(t, where(x.f, ig), -1);
	mu_fleet_reclaims_t r = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(x.f, later, &r), MU_OK);
	CHECK_EQ_INT(t, (int)r.n, 0);
	mu_fleet_reclaims_release(&r);
	fx_free(&x);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_only_cluster_with_device);
	MU_RUN(&t, test_gang_pods_do_not_share);
	MU_RUN(&t, test_gang_spreads);
	MU_RUN(&t, test_worker_claim_in_use);
	MU_RUN(&t, test_worker_allocation_takes_over);
	MU_RUN(&t, test_cel_outside_subset);
	MU_RUN(&t, test_no_reclaim_for_claims);
	return mu_t_done(&t);
}
