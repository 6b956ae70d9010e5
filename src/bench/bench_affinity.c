/*
 * bench_affinity.c - the `affinity` shape of `muster bench`: every pod has
 * a required pod anti-affinity term or a DoNotSchedule topology spread
 * constraint, so every decision goes through the engine's affinity counts
 * (src/engine/affinity.c) instead of the score heaps.
 *
 * 5,000 nodes in 10 zones (kube-scheduler's scheduler_perf affinity cases
 * use 5,000 nodes too).  Pods arrive one at a time, one cycle each, as in
 * `basic`: even pods carry the label group=gK (K = pod index mod 16) and
 * a required anti-affinity to their group per host, as scheduler_perf's
 * SchedulingPodAntiAffinity template does; odd pods carry app=spread and a
 * maxSkew 1 zone spread over app=spread.  First `init` pods are placed
 * untimed, then `measure` pods are timed with the thread's CPU clock.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_int.h"

#define GI (1LL << 30)
#define MI (1LL << 20)

static const char *const groups[16] = {"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7",
	"g8", "g9", "g10", "g11", "g12", "g13", "g14", "g15"};

/* Submits pod i's one-pod job. */
static int submit_pod(mu_engine_t *e, int64_t i, mu_time_t now)
{
	char name[32];
	snprintf(name, sizeof name, "a%07lld", (long long)i);
	const char *v = i % 2 ? "spread" : groups[(i / 2) % 16];
	mu_label_t label = {i % 2 ? "app" : "group", v};
	mu_sel_req_t req = {.key = label.key, .op = MU_SEL_IN, .values = &v, .nvalues = 1};
	mu_pod_term_t anti = {.anti = true, .sel = {.reqs = &req, .nreqs = 1},
			      .topology_key = "kubernetes.io/hostname"};
	mu_spread_spec_t sp = {.max_skew = 1, .topology_key = "zone",
			       .sel = {.reqs = &req, .nreqs = 1}};
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 100;
	ps.req.v[MU_RES_MEM] = 500 * MI;
	ps.labels = &label;
	ps.nlabels = 1;
	if (i % 2) {
		ps.spread = &sp;
		ps.nspread = 1;
	} else {
		ps.pod_terms = &anti;
		ps.npod_terms = 1;
	}
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.preemptible = true;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	mu_id_t id;
	return mu_engine_job_submit(e, &j, now, &id);
}

int mu__bench_affinity(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = o->quick ? 200 : 5000;
	int64_t init = o->quick ? 200 : 1000, measure = o->quick ? 400 : 20000;
	mu_engine_t *e;
	int rc = mu__bench_engine(o->seed, &e);
	if (rc)
		return rc;
	for (int32_t i = 0; rc == MU_OK && i < nodes; i++) {
		char name[32], zone[16];
		snprintf(name, sizeof name, "n%05d", i);
		snprintf(zone, sizeof zone, "zone%d", i % 10);
		mu_label_t l = {"zone", zone};
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.labels = &l;
		n.nlabels = 1;
		n.alloc.v[MU_RES_CPU] = 4000;
		n.alloc.v[MU_RES_MEM] = 32 * GI;
		n.alloc.v[MU_RES_PODS] = 110;
		rc = mu_engine_node_upsert(e, &n, NULL);
	}
	if (rc == MU_OK)
		rc = mu__bench_queue(e, "q", NULL);
	mu__bench_samples_t s = {0};
	mu_decisions_t d;
	mu_decisions_init(&d);
	double cost = mu__bench_clock_cost_us();
	int64_t placed = 0, i;
	for (i = 0; rc == MU_OK && i < init + measure; i++) {
		rc = submit_pod(e, i, i);
		d.n = 0;
		double t0 = mu__bench_cpu_us();
		if (rc == MU_OK)
			rc = mu_engine_cycle(e, i, &d);
		double t1 = mu__bench_cpu_us();
		if (i >= init) {
			placed += mu__bench_binds(&d);
			if (rc == MU_OK)
				rc = mu__bench_sample(&s, t1 - t0 - cost);
		}
	}
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "affinity");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		r->nodes = nodes;
		r->pods = measure;
		r->placed = placed;
		r->decisions = (int64_t)s.n;
		r->decisions_per_s = s.sum > 0 ? (double)s.n / (s.sum / 1e6) : NAN;
		r->p50_us = mu__bench_quantile(&s, 0.50);
		r->p99_us = mu__bench_quantile(&s, 0.99);
		r->peak_rss_mb = mu__bench_rss_mb();
	}
	mu__bench_samples_release(&s);
	mu_decisions_release(&d);
	mu_engine_free(e);
	return rc;
}
