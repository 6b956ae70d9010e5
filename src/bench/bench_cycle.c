/*
 * bench_cycle.c - the state-size shapes of `muster bench`: cycle, scale and
 * scaling.
 *
 * All three build the same kind of cluster, sized by a parameter set: a
 * GPU pool (64 CPUs, 512 Gi, 8 GPUs per node) holding one fifth of the
 * running pods as 8-pod training gangs of one GPU each, and a CPU pool
 * whose nodes are sized so that 4-pod jobs of one CPU fill it exactly.
 * Both pools are full, so the pending pods (half 8-pod GPU gangs, half
 * one-pod CPU jobs, round-robin over the queues, every queue's deserved
 * quota a little above its equal share so that nobody reclaims) all wait.
 * Then it times: the build from scratch (nodes, queues, submits, and the
 * cycles that place the running pods), the first cycle (every pending job
 * tried), idle cycles (nothing changed) and "little changed" cycles (one
 * running CPU job finishes and one new one-pod CPU job arrives before each).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_int.h"

#define GI (1LL << 30)
#define FILL_BATCH 2000 /* running jobs submitted per placing cycle */

typedef struct cyc_params {
	int32_t nodes, queues;
	int64_t pods, pending;   /* pods in all; of those, pending */
	int32_t idles, changes;  /* timed idle and little-changed cycles */
} cyc_params_t;

/* The cluster's layout, derived from the parameters. */
typedef struct cyc_layout {
	int32_t gpu_nodes, cpu_nodes;
	int64_t cpu_per_node;        /* CPU pods (= cores) per CPU node */
	int32_t gpu_jobs, cpu_jobs;  /* running: 8-pod and 4-pod jobs */
	int32_t pend_gangs, pend_cpu;
	int64_t pods;                /* actual total */
} cyc_layout_t;

/* One run: its engine, the decisions buffer it reuses, and the running
 * CPU jobs that the little-changed cycles finish. */
typedef struct cyc {
	cyc_params_t p;
	cyc_layout_t l;
	mu_engine_t *e;
	mu_decisions_t d;
	mu_id_t *cpu_ids;  /* running CPU jobs, for the finishes */
	int32_t ncpu;
	uint64_t rng;
	char (*qnames)[16];
} cyc_t;

/* Derives the layout: one fifth of the running pods are one-GPU pods in
 * 8-pod gangs, one gang per GPU node; the rest are one-CPU pods in 4-pod
 * jobs that fill the CPU nodes exactly (cores per node rounded up to whole
 * jobs, so the actual pod count may be a little above p->pods).  Half the
 * pending pods are 8-pod GPU gangs, half one-pod CPU jobs.  O(1). */
static void cyc_layout(const cyc_params_t *p, cyc_layout_t *l)
{
	int64_t running = p->pods - p->pending;
	l->gpu_jobs = (int32_t)(running / 5 / 8);
	l->gpu_nodes = l->gpu_jobs;
	l->cpu_nodes = p->nodes - l->gpu_nodes;
	int64_t cpu_pods = running - 8LL * l->gpu_jobs;
	l->cpu_per_node = (cpu_pods + l->cpu_nodes - 1) / l->cpu_nodes;
	l->cpu_per_node = (l->cpu_per_node + 3) / 4 * 4; /* whole 4-pod jobs */
	l->cpu_jobs = (int32_t)(l->cpu_per_node * l->cpu_nodes / 4);
	l->pend_gangs = (int32_t)(p->pending / 2 / 8);
	l->pend_cpu = (int32_t)(p->pending - 8LL * l->pend_gangs);
	l->pods = 8LL * l->gpu_jobs + 4LL * l->cpu_jobs + 8LL * l->pend_gangs +
		  l->pend_cpu;
}

/* Adds the two pools and the queues.  Work: O(nodes + queues). */
static int cyc_cluster(cyc_t *c)
{
	const cyc_layout_t *l = &c->l;
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < c->p.nodes; i++) {
		bool gpu = i < l->gpu_nodes;
		char name[32];
		snprintf(name, sizeof name, "%s%05d", gpu ? "gpu" : "cpu", i);
		mu_label_t label = {"pool", gpu ? "gpu" : "cpu"};
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.labels = &label;
		n.nlabels = 1;
		n.alloc.v[MU_RES_CPU] = gpu ? 64000 : 1000 * l->cpu_per_node;
		n.alloc.v[MU_RES_MEM] = gpu ? 512 * GI : 4 * GI * l->cpu_per_node;
		n.alloc.v[MU_RES_GPU] = gpu ? 8 : 0;
		n.alloc.v[MU_RES_PODS] = l->cpu_per_node + 110;
		rc = mu_engine_node_upsert(c->e, &n, NULL);
	}
	mu_res_t total, deserved = {{0}};
	mu_engine_totals(c->e, &total, NULL);
	for (int r = 0; r < MU_RES_MAX; r++) /* 2% above an equal share */
		deserved.v[r] = total.v[r] / c->p.queues * 102 / 100;
	for (int32_t q = 0; rc == MU_OK && q < c->p.queues; q++) {
		snprintf(c->qnames[q], sizeof c->qnames[q], "team%02d", q);
		rc = mu__bench_queue(c->e, c->qnames[q], &deserved);
	}
	return rc;
}

/* Submits job k of a kind: "gpu" gangs of 8 x 1 GPU, "cpu" jobs of
 * `pods` x 1 CPU; round-robin over the queues. */
static int cyc_submit(cyc_t *c, bool gpu, int32_t pods, int64_t k, mu_time_t now,
		      mu_id_t *id)
{
	char name[32];
	snprintf(name, sizeof name, "%s%d-%07lld", gpu ? "g" : "c", pods, (long long)k);
	mu__bench_job_t b = {.name = name, .queue = c->qnames[k % c->p.queues],
			     .replicas = pods, .sel_key = "pool",
			     .sel_value = gpu ? "gpu" : "cpu"};
	b.req.v[MU_RES_CPU] = gpu ? 4000 : 1000;
	b.req.v[MU_RES_MEM] = gpu ? 32 * GI : 2 * GI;
	b.req.v[MU_RES_GPU] = gpu ? 1 : 0;
	return mu__bench_submit(c->e, &b, now, id);
}

/* Submits the running jobs in batches and places each batch with one
 * cycle; *submit_us and *place_us get the CPU time of each part. */
static int cyc_fill(cyc_t *c, double *submit_us, double *place_us)
{
	const cyc_layout_t *l = &c->l;
	int64_t total = (int64_t)l->gpu_jobs + l->cpu_jobs, placed = 0;
	int rc = MU_OK;
	*submit_us = *place_us = 0;
	for (int64_t k = 0; rc == MU_OK && k < total;) {
		double t0 = mu__bench_cpu_us();
		for (int64_t end = k + FILL_BATCH; rc == MU_OK && k < total && k < end; k++) {
			/* GPU jobs spread evenly among the CPU ones */
			bool gpu = (k + 1) * l->gpu_jobs / total != k * l->gpu_jobs / total;
			mu_id_t id;
			rc = cyc_submit(c, gpu, gpu ? 8 : 4, k, 0, &id);
			if (rc == MU_OK && !gpu)
				c->cpu_ids[c->ncpu++] = id;
		}
		double t1 = mu__bench_cpu_us();
		c->d.n = 0;
		if (rc == MU_OK)
			rc = mu_engine_cycle(c->e, 0, &c->d);
		*submit_us += t1 - t0;
		*place_us += mu__bench_cpu_us() - t1;
		placed += mu__bench_binds(&c->d);
	}
	int64_t want = 8LL * l->gpu_jobs + 4LL * l->cpu_jobs;
	return rc == MU_OK && placed != want ? MU_ESTATE : rc;
}

/* Submits the pending jobs (they fit nowhere); returns their CPU time. */
static int cyc_pending(cyc_t *c, double *us)
{
	const cyc_layout_t *l = &c->l;
	int rc = MU_OK;
	double t0 = mu__bench_cpu_us();
	for (int32_t k = 0; rc == MU_OK && k < l->pend_gangs; k++)
		rc = cyc_submit(c, true, 8, 10000000 + k, 0, NULL);
	for (int32_t k = 0; rc == MU_OK && k < l->pend_cpu; k++)
		rc = cyc_submit(c, false, 1, 20000000 + k, 0, NULL);
	*us = mu__bench_cpu_us() - t0;
	return rc;
}

/* One timed cycle at time now: *us gets its CPU time, *decided the real
 * decisions it made (binds, evictions; not the still-pending records). */
static int cyc_timed(cyc_t *c, mu_time_t now, double cost, double *us,
		     int64_t *decided)
{
	c->d.n = 0;
	double t0 = mu__bench_cpu_us();
	int rc = mu_engine_cycle(c->e, now, &c->d);
	*us = mu__bench_cpu_us() - t0 - cost;
	*decided = mu__bench_real(&c->d);
	return rc;
}

/* Before little-changed cycle i: a random running CPU job finishes and a
 * new one-pod CPU job arrives. */
static int cyc_change(cyc_t *c, int32_t i, mu_time_t now)
{
	if (c->ncpu == 0)
		return MU_ESTATE;
	int32_t k = (int32_t)(mu__bench_rand(&c->rng) % (uint64_t)c->ncpu);
	int rc = mu_engine_job_finish(c->e, c->cpu_ids[k], now);
	c->cpu_ids[k] = c->cpu_ids[--c->ncpu];
	return rc == MU_OK ? cyc_submit(c, false, 1, 30000000 + i, now, NULL) : rc;
}

/* Times the cold, idle and little-changed cycles into r.  Never inlined,
 * so that `valgrind --tool=callgrind --toggle-collect=cyc_measure` counts
 * the timed cycles alone (docs/evaluation.md). */
__attribute__((noinline)) static int cyc_measure(cyc_t *c, mu_bench_result_t *r)
{
	mu__bench_samples_t idle = {0}, chg = {0};
	double cost = mu__bench_clock_cost_us(), us;
	int64_t n, decided = 0;
	/* An hour after the build: every running job is past the minimum
	 * runtime, so each may be a victim or be moved, as in a cluster that
	 * has been up a while. */
	mu_time_t now = 3600 * 1000;
	int rc = cyc_timed(c, now, cost, &us, &n);
	r->cold_cycle_ms = us / 1e3;
	for (int32_t i = 0; rc == MU_OK && i < c->p.idles; i++) {
		now += 1000;
		rc = cyc_timed(c, now, cost, &us, &n);
		rc = rc ? rc : mu__bench_sample(&idle, us);
	}
	for (int32_t i = 0; rc == MU_OK && i < c->p.changes; i++) {
		now += 1000;
		rc = cyc_change(c, i, now);
		rc = rc ? rc : cyc_timed(c, now, cost, &us, &n);
		rc = rc ? rc : mu__bench_sample(&chg, us);
		decided += n;
	}
	if (rc == MU_OK) {
		r->idle_cycle_ms = mu__bench_quantile(&idle, 0.5) / 1e3;
		r->p50_us = mu__bench_quantile(&chg, 0.5);
		r->p99_us = mu__bench_quantile(&chg, 0.99);
		r->cycle_ms = r->p50_us / 1e3;
		r->cycle_p99_ms = r->p99_us / 1e3;
		r->decisions = decided;
		r->decisions_per_s = chg.sum > 0 ? (double)decided / (chg.sum / 1e6) : NAN;
	}
	mu__bench_samples_release(&idle);
	mu__bench_samples_release(&chg);
	return rc;
}

/* Builds the state of p from scratch and measures it into r (named
 * shape).  Work: the build places every running pod with a scan of its
 * pool, O(running pods x pool nodes) as the engine stands. */
static int cyc_run(const mu_bench_opts_t *o, const cyc_params_t *p,
		   mu_bench_result_t *r)
{
	cyc_t c = {.p = *p, .rng = o->seed};
	cyc_layout(p, &c.l);
	c.cpu_ids = calloc((size_t)c.l.cpu_jobs + 1, sizeof *c.cpu_ids);
	c.qnames = calloc((size_t)p->queues, sizeof *c.qnames);
	int rc = c.cpu_ids && c.qnames ? MU_OK : MU_ENOMEM;
	double t0 = mu__bench_cpu_us(), submit = 0, place = 0, pend = 0;
	if (rc == MU_OK)
		rc = mu__bench_engine(o->seed, &c.e);
	if (rc == MU_OK)
		rc = cyc_cluster(&c);
	double t1 = mu__bench_cpu_us();
	if (rc == MU_OK)
		rc = cyc_fill(&c, &submit, &place);
	if (rc == MU_OK)
		rc = cyc_pending(&c, &pend);
	if (rc == MU_OK) {
		r->build_ms = (t1 - t0 + submit + place + pend) / 1e3;
		r->build_place_ms = place / 1e3;
		r->submit_us = (submit + pend) / ((double)c.l.gpu_jobs + c.l.cpu_jobs +
						  c.l.pend_gangs + c.l.pend_cpu);
		rc = cyc_measure(&c, r);
	}
	if (rc == MU_OK) {
		r->nodes = p->nodes;
		r->pods = c.l.pods;
		r->queues = p->queues;
		r->pending = 8LL * c.l.pend_gangs + c.l.pend_cpu;
		r->peak_rss_mb = mu__bench_rss_mb();
	}
	mu_decisions_release(&c.d);
	mu_engine_free(c.e);
	free(c.cpu_ids);
	free(c.qnames);
	return rc;
}

int mu__bench_cycle(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	cyc_params_t p = {4000, 50, 140000, 20000, 5, 5};
	if (o->quick)
		p = (cyc_params_t){200, 10, 7000, 1000, 3, 5};
	mu_bench_result_t *r = mu_bench_results_add(out, "cycle");
	return r ? cyc_run(o, &p, r) : MU_ENOMEM;
}

int mu__bench_scale(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	cyc_params_t p = {10000, 50, 150000, 20000, 1, 1};
	if (o->quick)
		p = (cyc_params_t){400, 10, 6000, 1000, 1, 1};
	mu_bench_result_t *r = mu_bench_results_add(out, "scale");
	return r ? cyc_run(o, &p, r) : MU_ENOMEM;
}

int mu__bench_scaling(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	static const int32_t full[] = {1000, 2000, 5000, 10000, 20000};
	static const int32_t quick[] = {100, 200, 400};
	const int32_t *sizes = o->quick ? quick : full;
	size_t n = o->quick ? sizeof quick / sizeof *quick : sizeof full / sizeof *full;
	int rc = MU_OK;
	for (size_t i = 0; rc == MU_OK && i < n; i++) {
		/* 10 running pods per node and a queue of 2,000 pending pods
		 * whatever the size: the cluster grows, the backlog does not */
		cyc_params_t p = {sizes[i], 50, 10LL * sizes[i] + 2000, 2000, 3, 2};
		if (o->quick)
			p = (cyc_params_t){sizes[i], 10, 10LL * sizes[i] + 200, 200, 2, 2};
		mu_bench_result_t *r = mu_bench_results_add(out, "scaling");
		rc = r ? cyc_run(o, &p, r) : MU_ENOMEM;
	}
	return rc;
}
