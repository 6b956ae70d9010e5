/*
 * test_fleet_dra.c - DRA claims in the fleet's model of each cluster
 * (issue 18, round 14), through the public API: a job whose pods claim a
 * device goes only to the cluster whose ResourceSlices have one its
 * DeviceClass selects; two pods of a gang never share one device; a device
 * a worker's ResourceClaim holds is not offered, and comes back once the
 * claim is gone; a job's devices are freed when it finishes; a claim with
 * CEL outside the subset is refused with the allocator's reason; the
 * explanation says why per cluster.
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

/* Only "b" has a device the class selects ("a" has none, "c" another
 * driver's): the job goes to b, and the explanation of a second job that
 * finds b's device taken names the allocator's reason on each. */
static void test_only_cluster_with_device(mu_t_t *t)
{
	mu_fleet_t *f = fleet();
	int32_t a = cluster(f, "a", 2), b = cluster(f, "b", 2), c = cluster(f, "c", 2);
	devices(f, b, json_pack("[o]", slice("b-n1", "gpu.example.com", 1)), NULL);
	devices(f, c, json_pack("[o]", slice("c-n0", "other.example.com", 4)), NULL);
	(void)a;
	djob_t j1, j2;
	djob(&j1, "one", 1, "gpu.example.com", NULL);
	djob(&j2, "two", 1, "gpu.example.com", NULL);
	mu_id_t i1, i2;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &j1.fs, 0, &i1), MU_OK);
	CHECK_EQ_INT(t, pass(f, 0), MU_OK);
	CHECK_EQ_INT(t, where(f, i1), b);
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &j2.fs, 1, &i2), MU_OK);
	CHECK_EQ_INT(t, pass(f, 1), MU_OK);
	CHECK_EQ_INT(t, where(f, i2), -1);
	mu_fleet_job_info_t ji;
	mu_fleet_job_info(f, i2, &ji);
	CHECK_EQ_INT(t, ji.why, MU_FW_NO_FIT);
	mu_fleet_explain_t x[3];
	CHECK_EQ_INT(t, mu_fleet_job_explain(f, i2, 1, x), MU_OK);
	char buf[2048];
	mu_fleet_explain_format(f, x, 1, buf, sizeof buf);
	printf("  explain: %s\n", buf);
	CHECK(t, strstr(buf, "a: no devices") != NULL);
	CHECK(t, strstr(buf, "b: no devices") != NULL);
	CHECK(t, strstr(buf, "gpu.example.com") != NULL);
	/* the first job ends: its device is free, the second gets it */
	CHECK_EQ_INT(t, mu_fleet_job_finish(f, i1, 2), MU_OK);
	CHECK_EQ_INT(t, pass(f, 2), MU_OK);
	CHECK_EQ_INT(t, where(f, i2), b);
	json_decref(j1.dra);
	json_decref(j2.dra);
	mu_fleet_free(f);
}

/* One node with one device: a gang of two pods, each claiming a device,
 * does not fit (the second pod cannot have the first's device); with two
 * devices it does. */
static void test_gang_pods_do_not_share(mu_t_t *t)
{
	mu_fleet_t *f = fleet();
	int32_t a = cluster(f, "a", 1);
	devices(f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), NULL);
	djob_t g;
	djob(&g, "gang", 2, "gpu.example.com", NULL);
	mu_id_t id;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &g.fs, 0, &id), MU_OK);
	CHECK_EQ_INT(t, pass(f, 0), MU_OK);
	CHECK_EQ_INT(t, where(f, id), -1);
	mu_fleet_job_info_t ji;
	mu_fleet_job_info(f, id, &ji);
	CHECK_EQ_INT(t, ji.why, MU_FW_NO_FIT);
	mu_fleet_queue_info_t qi;
	mu_fleet_queue_info(f, 0, &qi);
	CHECK_EQ_INT(t, qi.used.v[MU_RES_CPU], 0); /* waits holding no quota */
	devices(f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 2)), NULL);
	CHECK_EQ_INT(t, pass(f, 1), MU_OK);
	CHECK_EQ_INT(t, where(f, id), a);
	json_decref(g.dra);
	mu_fleet_free(f);
}

/* Two nodes with one device each: a gang of two pods that each claim one
 * device fits, one pod per node (the model packs them on one node by CPU;
 * the allocation of the second pod refuses that, and the second try
 * spreads them). */
static void test_gang_spreads(mu_t_t *t)
{
	mu_fleet_t *f = fleet();
	int32_t a = cluster(f, "a", 3);
	devices(f, a, json_pack("[o,o]", slice("a-n0", "gpu.example.com", 1),
				slice("a-n2", "gpu.example.com", 1)), NULL);
	djob_t g, h;
	djob(&g, "gang", 2, "gpu.example.com", NULL);
	djob(&h, "more", 1, "gpu.example.com", NULL);
	mu_id_t id, id2;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &g.fs, 0, &id), MU_OK);
	CHECK_EQ_INT(t, pass(f, 0), MU_OK);
	CHECK_EQ_INT(t, where(f, id), a);
	/* both devices are the gang's now */
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &h.fs, 1, &id2), MU_OK);
	CHECK_EQ_INT(t, pass(f, 1), MU_OK);
	CHECK_EQ_INT(t, where(f, id2), -1);
	json_decref(g.dra);
	json_decref(h.dra);
	mu_fleet_free(f);
}

/* A device a worker's ResourceClaim holds is not offered: the job waits
 * until the claim is gone. */
static void test_worker_claim_in_use(mu_t_t *t)
{
	mu_fleet_t *f = fleet();
	int32_t a = cluster(f, "a", 1);
	json_t *held = json_loads(
		"[{\"metadata\":{\"name\":\"theirs\",\"namespace\":\"default\"},"
		"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.example.com\"}]}},"
		"\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
		"\"driver\":\"gpu.example.com\",\"pool\":\"a-n0\",\"device\":\"gpu-0\"}]}}}}]", 0, NULL);
	devices(f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), held);
	djob_t g;
	djob(&g, "mine", 1, "gpu.example.com", NULL);
	mu_id_t id;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &g.fs, 0, &id), MU_OK);
	CHECK_EQ_INT(t, pass(f, 0), MU_OK);
	CHECK_EQ_INT(t, where(f, id), -1);
	devices(f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), json_array());
	CHECK_EQ_INT(t, pass(f, 1), MU_OK);
	CHECK_EQ_INT(t, where(f, id), a);
	json_decref(g.dra);
	mu_fleet_free(f);
}

/* A selector outside the CEL subset: refused with the allocator's reason
 * (the job waits; explain says why). */
static void test_cel_outside_subset(mu_t_t *t)
{
	mu_fleet_t *f = fleet();
	djob_t bad;
	djob(&bad, "bad", 1, "gpu.example.com", NULL);
	json_t *two = json_pack("[[],[]]"); /* two entries for one pod set */
	bad.fs.dra = two;
	mu_id_t ib;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &bad.fs, 0, &ib), MU_EINVAL);
	json_decref(two);
	json_decref(bad.dra);
	int32_t a = cluster(f, "a", 1);
	devices(f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 2)), NULL);
	djob_t g;
	djob(&g, "fancy", 1, "gpu.example.com", "device.attributes.exists_one(x, true)");
	mu_id_t id;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &g.fs, 0, &id), MU_OK);
	CHECK_EQ_INT(t, pass(f, 0), MU_OK);
	CHECK_EQ_INT(t, where(f, id), -1);
	mu_fleet_explain_t x[1];
	CHECK_EQ_INT(t, mu_fleet_job_explain(f, id, 0, x), MU_OK);
	CHECK(t, x[0].devices != NULL);
	if (x[0].devices)
		printf("  cel refusal: %s\n", x[0].devices);
	json_decref(g.dra);
	mu_fleet_free(f);
}

/* A job with claims that fits nowhere takes no room back from another
 * queue's job: reclaim's what-if counts no devices, and the victim's
 * going would give it none here. */
static void test_no_reclaim_for_claims(mu_t_t *t)
{
	mu_fleet_t *f = fleet();
	int32_t a = cluster(f, "a", 1);
	devices(f, a, json_pack("[o]", slice("a-n0", "gpu.example.com", 1)), NULL);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "team";
	q.deserved.v[MU_RES_CPU] = 1000000;
	mu_fleet_queue_upsert(f, &q);
	mu_queue_spec_defaults(&q);
	q.name = "other";
	mu_fleet_queue_upsert(f, &q);
	/* other's job takes every CPU, no device */
	djob_t big, g;
	djob(&big, "big", 1, "gpu.example.com", NULL);
	big.ps.req.v[MU_RES_CPU] = 64000;
	big.job.queue = "other";
	big.fs.dra = NULL;
	djob(&g, "mine", 1, "gpu.example.com", NULL);
	mu_id_t ib, ig;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &big.fs, 0, &ib), MU_OK);
	CHECK_EQ_INT(t, pass(f, 0), MU_OK);
	CHECK_EQ_INT(t, where(f, ib), a);
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &g.fs, 1, &ig), MU_OK);
	mu_time_t later = 120 * MIN;
	CHECK_EQ_INT(t, pass(f, later), MU_OK);
	CHECK_EQ_INT(t, where(f, ig), -1);
	mu_fleet_reclaims_t r = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(f, later, &r), MU_OK);
	CHECK_EQ_INT(t, (int)r.n, 0);
	mu_fleet_reclaims_release(&r);
	json_decref(big.dra);
	json_decref(g.dra);
	mu_fleet_free(f);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_only_cluster_with_device);
	MU_RUN(&t, test_gang_pods_do_not_share);
	MU_RUN(&t, test_gang_spreads);
	MU_RUN(&t, test_worker_claim_in_use);
	MU_RUN(&t, test_cel_outside_subset);
	MU_RUN(&t, test_no_reclaim_for_claims);
	return mu_t_done(&t);
}
