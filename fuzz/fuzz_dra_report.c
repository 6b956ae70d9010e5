/*
 * fuzz_dra_report.c - the hub's read of a pull agent's DRA report (issue
 * 18, round 17): the heartbeat ConfigMap's data.dra, which an edge cluster
 * writes and the hub trusts no more than any other input.  Input: the
 * report's text, then "\n===\n" and the heartbeat's data.nodes (a Node
 * list), then "\n===\n" and a ResourceClaim a job's pods claim from a
 * template (a fixed one asking a device of class gpu.example.com when the
 * part is empty).  The report is given to a cluster of a fleet as
 * worker.c's pull poll gives it (mu__ddra_pull), then the job is submitted
 * and placed by one dispatch pass, so the fleet's allocator reads every
 * device, class and claim the report holds.
 *
 * Invariants checked beyond "no crash, leak or hang" (abort() when one
 * fails):
 *  - a report longer than MU__DDRA_REPORT_MAX is never used;
 *  - a report the hub takes is what the fleet holds, member for member
 *    (json_equal of each of slices, classes, claims);
 *  - cut again by the agent's own code (mu__ddra_report) the model's
 *    objects give a report R1 that is a fixed point (cut once more, the
 *    same text), that the hub takes, and that a second heartbeat with the
 *    same R1 gives nothing new (the hash's "nothing changed");
 *  - the job, when placed, is on the one cluster there is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_int.h"
#include "fleet/fleet_int.h"

/* The next part of [*p, end) up to the separator; advances *p.  Owned. */
static char *part(const char **p, const char *end)
{
	const char *q = *p, *hit = NULL;
	for (const char *s = q; s + 5 <= end; s++)
		if (!memcmp(s, "\n===\n", 5)) {
			hit = s;
			break;
		}
	const char *stop = hit ? hit : end;
	char *out = malloc((size_t)(stop - q) + 1);
	if (!out)
		abort();
	memcpy(out, q, (size_t)(stop - q));
	out[stop - q] = '\0';
	*p = hit ? hit + 5 : end;
	return out;
}

/* A cluster "edge" with nodes node-1 and node-2 (hostname-labelled, as
 * kubelet does) in fleet f with queue "team"; its id. */
static int32_t edge(mu_fleet_t *f)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "team";
	mu_fleet_queue_upsert(f, &q);
	mu_cluster_spec_t cs = {.name = "edge", .tier = MU_TIER_PRIVATE};
	int32_t id = -1;
	if (mu_fleet_cluster_add(f, &cs, &id))
		abort();
	for (int i = 1; i <= 2; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "node-%d", i);
		mu_label_t host = {"kubernetes.io/hostname", nm};
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = nm;
		n.labels = &host;
		n.nlabels = 1;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 512LL << 30;
		n.alloc.v[MU_RES_PODS] = 110;
		if (mu_fleet_node_upsert(f, id, &n))
			abort();
	}
	return id;
}

/* The model's objects of cluster k as the agent's three lists, cut by its
 * own code: a report's text (owned), or NULL. */
static char *recut(const json_t *sl, const json_t *cl, const json_t *rc)
{
	json_t *l[MU__DDRA_N] = {
		json_pack("{s:O}", "items", sl ? (json_t *)sl : json_null()),
		json_pack("{s:O}", "items", cl ? (json_t *)cl : json_null()),
		json_pack("{s:O}", "items", rc ? (json_t *)rc : json_null()),
	};
	char *t = mu__ddra_report((const json_t *const *)l, MU__DDRA_REPORT_MAX);
	for (int k = 0; k < MU__DDRA_N; k++)
		json_decref(l[k]);
	return t;
}

/* Submits a job of two pods claiming from template claim, runs one pass;
 * aborts if it is placed anywhere but on cluster id. */
static void place(mu_fleet_t *f, int32_t id, const char *claim)
{
	json_t *c = json_loads(claim, 0, NULL);
	if (!json_is_object(c)) {
		json_decref(c);
		c = json_loads("{\"metadata\":{\"name\":\"t\"},\"spec\":{\"devices\":{\"requests\":"
			       "[{\"name\":\"gpu\",\"deviceClassName\":\"gpu.example.com\"}]}}}",
			       0, NULL);
	}
	json_t *dra = json_pack("[[{s:s,s:o}]]", "name", "gpu", "claim", c);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.name = "main";
	ps.replicas = 2;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.dra_claims = "[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"t\"}]";
	mu_job_spec_t job;
	memset(&job, 0, sizeof job);
	job.name = "j";
	job.queue = "team";
	job.podsets = &ps;
	job.npodsets = 1;
	job.submit = MU_TIME_NONE;
	job.runtime_estimate = 3600000;
	mu_fleet_job_spec_t fs = {.job = &job, .dra = dra};
	mu_id_t j = -1;
	if (dra && mu_fleet_job_submit(f, &fs, 0, &j) == MU_OK) {
		mu_fleet_decisions_t dd;
		mu_fleet_decisions_init(&dd);
		(void)mu_fleet_dispatch(f, 1000, &dd);
		mu_fleet_decisions_release(&dd);
		mu_fleet_job_info_t ji;
		if (mu_fleet_job_info(f, j, &ji) == MU_OK && ji.cluster != -1 && ji.cluster != id)
			abort();
	}
	json_decref(dra);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *text = part(&p, end), *nodes = part(&p, end), *claim = part(&p, end);
	mu_dispatch_opts_t o;
	mu_dispatch_opts_defaults(&o);
	o.quiet = true;
	mu__dd_t d;
	memset(&d, 0, sizeof d);
	d.o = &o;
	d.nreq = &d.reqs;
	if (mu_fleet_new(NULL, &d.fleet))
		abort();
	mu__dcl_t c;
	memset(&c, 0, sizeof c);
	c.name = "edge";
	c.pull = true;
	c.fid = edge(d.fleet);
	json_t *nl = json_loads(nodes, 0, NULL);
	const mu__cluster_t *k = &d.fleet->clusters[c.fid];
	bool took = mu__ddra_pull(&d, &c, text, nl);
	if (took && strlen(text) > MU__DDRA_REPORT_MAX)
		abort(); /* over the bound, yet used */
	if (took) {
		json_t *r = json_loads(text, 0, NULL);
		if (!json_equal(json_object_get(r, "slices"), k->dra_slices) ||
		    !json_equal(json_object_get(r, "classes"), k->dra_classes) ||
		    !json_equal(json_object_get(r, "claims"), k->dra_claims))
			abort(); /* the model is not what the report says */
		json_decref(r);
		char *r1 = recut(k->dra_slices, k->dra_classes, k->dra_claims);
		json_t *j1 = r1 ? json_loads(r1, 0, NULL) : NULL;
		char *r2 = j1 ? recut(json_object_get(j1, "slices"), json_object_get(j1, "classes"),
				      json_object_get(j1, "claims")) : NULL;
		if (r1 && (!r2 || strcmp(r1, r2)))
			abort(); /* the agent's cut is not a fixed point */
		if (r1 && !json_object_get(j1, "error")) {
			bool same = !strcmp(r1, text); /* then the hub has it: nothing new */
			if (mu__ddra_pull(&d, &c, r1, NULL) != !same || mu__ddra_pull(&d, &c, r1, NULL))
				abort(); /* a cut report not taken, or taken twice */
		}
		json_decref(j1);
		free(r1);
		free(r2);
	}
	place(d.fleet, c.fid, claim);
	json_decref(nl);
	json_decref(c.dra_nodes);
	mu_fleet_free(d.fleet);
	free(text);
	free(nodes);
	free(claim);
	return 0;
}
