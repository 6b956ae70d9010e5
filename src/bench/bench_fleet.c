/*
 * bench_fleet.c - the fleet shape of `muster bench`: the hub's dispatch
 * decisions per second and its memory with a million jobs queued.
 *
 * 100 clusters of 1,000 nodes (64 CPUs, 512 Gi, 8 GPUs) in one fleet
 * (src/fleet), 100 hub queues, and 1,000,000 jobs submitted to the hub:
 * one pod of 1, 2, 4 or 8 GPUs, or gangs of 2 and 4 pods of 8 GPUs
 * (40/15/15/15/10/5%), far more than the fleet holds.  Timed with the
 * thread's CPU clock: the first dispatch pass (it fills the fleet and
 * leaves the rest queued: decisions per second = jobs dispatched / its
 * CPU time), then passes after 1% of the running jobs end (their median
 * is the "refill" pass).  Peak RSS is the hub's whole memory, the jobs'
 * specs included.  --quick: 4 clusters of 50 nodes, 20,000 jobs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_int.h"
#include "muster/fleet.h"

#define GI (1LL << 30)
#define NSHAPES 6

typedef struct fb_params {
	int32_t clusters, nodes, queues;
	int64_t jobs;
	int32_t refills;
} fb_params_t;

typedef struct fb {
	fb_params_t p;
	mu_fleet_t *f;
	mu_podset_spec_t shapes[NSHAPES];
	mu_job_spec_t *specs;
	mu_fleet_job_spec_t *fspecs;
	char *names;           /* 12 bytes per job */
	char (*qnames)[16];
	mu_id_t *running;      /* dispatched jobs, for the ends */
	int64_t nrunning;
	mu_fleet_decisions_t d;
	uint64_t rng;
} fb_t;

/* The clusters, their nodes and the hub queues.  O(clusters x nodes). */
static int fb_build(fb_t *b)
{
	int rc = MU_OK;
	char name[48];
	for (int32_t c = 0; rc == MU_OK && c < b->p.clusters; c++) {
		snprintf(name, sizeof name, "cluster-%03d", c);
		mu_cluster_spec_t cs = {.name = name,
			.tier = c % 10 == 9 ? MU_TIER_PUBLIC : MU_TIER_PRIVATE,
			.cost_gpu_hour = c % 10 == 9 ? 2.5 : 0};
		int32_t id;
		rc = mu_fleet_cluster_add(b->f, &cs, &id);
		for (int32_t i = 0; rc == MU_OK && i < b->p.nodes; i++) {
			snprintf(name, sizeof name, "c%03d-n%04d", c, i);
			mu_node_spec_t n;
			memset(&n, 0, sizeof n);
			n.name = name;
			n.alloc.v[MU_RES_CPU] = 64000;
			n.alloc.v[MU_RES_MEM] = 512 * GI;
			n.alloc.v[MU_RES_GPU] = 8;
			n.alloc.v[MU_RES_PODS] = 110;
			n.gpu_model = "H100";
			rc = mu_fleet_node_upsert(b->f, id, &n);
		}
	}
	for (int32_t q = 0; rc == MU_OK && q < b->p.queues; q++) {
		mu_queue_spec_t qs;
		mu_queue_spec_defaults(&qs);
		snprintf(b->qnames[q], sizeof b->qnames[q], "team%03d", q);
		qs.name = b->qnames[q];
		qs.deserved.v[MU_RES_GPU] = 8000LL * b->p.nodes * b->p.clusters / b->p.queues;
		rc = mu_fleet_queue_upsert(b->f, &qs);
	}
	return rc;
}

/* The job specs (pod sets shared by shape) and their submission.
 * *us gets the CPU time of the submits. */
static int fb_jobs(fb_t *b, double *us)
{
	static const int32_t gpus[NSHAPES] = {1, 2, 4, 8, 8, 8};
	static const int32_t reps[NSHAPES] = {1, 1, 1, 1, 2, 4};
	static const int32_t pct[NSHAPES] = {40, 15, 15, 15, 10, 5};
	for (int s = 0; s < NSHAPES; s++) {
		mu_podset_spec_t *p = &b->shapes[s];
		memset(p, 0, sizeof *p);
		p->name = "main";
		p->replicas = reps[s];
		p->req.v[MU_RES_GPU] = gpus[s];
		p->req.v[MU_RES_CPU] = 4000LL * gpus[s];
		p->req.v[MU_RES_MEM] = 32 * GI * gpus[s];
	}
	int rc = MU_OK;
	double t0 = mu__bench_cpu_us();
	for (int64_t k = 0; rc == MU_OK && k < b->p.jobs; k++) {
		uint64_t r = mu__bench_rand(&b->rng) % 100;
		int s = 0;
		for (int32_t acc = pct[0]; s < NSHAPES - 1 && (int32_t)r >= acc; acc += pct[++s])
			;
		char *nm = b->names + 12 * k;
		snprintf(nm, 12, "j%09d", (int)(k % 1000000000));
		mu_job_spec_t *j = &b->specs[k];
		memset(j, 0, sizeof *j);
		j->name = nm;
		j->queue = b->qnames[k % b->p.queues];
		j->podsets = &b->shapes[s];
		j->npodsets = 1;
		j->preemptible = true;
		j->submit = k / 1000; /* a thousand a millisecond */
		j->runtime_estimate = 3600 * 1000;
		b->fspecs[k] = (mu_fleet_job_spec_t){.job = j};
		rc = mu_fleet_job_submit(b->f, &b->fspecs[k], j->submit, NULL);
	}
	*us = mu__bench_cpu_us() - t0;
	return rc;
}

/* One timed pass at now; running jobs are added to b->running. */
static int fb_pass(fb_t *b, mu_time_t now, double *us, int64_t *sent)
{
	b->d.n = 0;
	double t0 = mu__bench_cpu_us();
	int rc = mu_fleet_dispatch(b->f, now, &b->d);
	*us = mu__bench_cpu_us() - t0;
	*sent = (int64_t)b->d.n;
	for (size_t i = 0; rc == MU_OK && i < b->d.n; i++)
		b->running[b->nrunning++] = b->d.v[i].job;
	return rc;
}

/* Ends 1% of the running jobs, chosen at random. */
static int fb_ends(fb_t *b, mu_time_t now)
{
	int64_t n = b->nrunning / 100 + 1;
	int rc = MU_OK;
	for (int64_t i = 0; rc == MU_OK && i < n && b->nrunning > 0; i++) {
		int64_t k = (int64_t)(mu__bench_rand(&b->rng) % (uint64_t)b->nrunning);
		rc = mu_fleet_job_finish(b->f, b->running[k], now);
		b->running[k] = b->running[--b->nrunning];
	}
	return rc;
}

static int fb_run(fb_t *b, mu_bench_result_t *r)
{
	double t0 = mu__bench_cpu_us(), submit_us, us;
	int rc = fb_build(b);
	r->build_ms = (mu__bench_cpu_us() - t0) / 1000;
	if (rc == MU_OK)
		rc = fb_jobs(b, &submit_us);
	if (rc)
		return rc;
	r->submit_us = submit_us / (double)b->p.jobs;
	int64_t sent;
	mu_time_t now = b->p.jobs / 1000 + 1;
	if ((rc = fb_pass(b, now, &us, &sent)) != MU_OK)
		return rc;
	r->cold_cycle_ms = us / 1000;
	r->decisions = sent;
	r->placed = sent;
	r->decisions_per_s = us > 0 ? (double)sent / (us / 1e6) : 0;
	r->pending = b->p.jobs - sent;
	mu__bench_samples_t refill = {0};
	for (int32_t i = 0; rc == MU_OK && i < b->p.refills; i++) {
		now += 60 * 1000;
		rc = fb_ends(b, now);
		if (rc == MU_OK)
			rc = fb_pass(b, now, &us, &sent);
		if (rc == MU_OK)
			rc = mu__bench_sample(&refill, us / 1000);
	}
	r->cycle_ms = mu__bench_quantile(&refill, 0.5);
	r->cycle_p99_ms = mu__bench_quantile(&refill, 0.99);
	mu__bench_samples_release(&refill);
	r->peak_rss_mb = mu__bench_rss_mb();
	return rc;
}

int mu__bench_fleet(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	fb_t b;
	memset(&b, 0, sizeof b);
	b.p = o->quick ? (fb_params_t){4, 50, 8, 20000, 3} :
		(fb_params_t){100, 1000, 100, 1000000, 5};
	b.rng = o->seed;
	mu_bench_result_t *r = mu_bench_results_add(out, "fleet");
	if (!r)
		return MU_ENOMEM;
	r->nodes = b.p.clusters * b.p.nodes;
	r->pods = b.p.jobs;
	r->queues = b.p.queues;
	mu_fleet_config_t cfg;
	mu_fleet_config_defaults(&cfg);
	int rc = mu_fleet_new(&cfg, &b.f);
	b.specs = malloc((size_t)b.p.jobs * sizeof *b.specs);
	b.fspecs = malloc((size_t)b.p.jobs * sizeof *b.fspecs);
	b.names = malloc((size_t)b.p.jobs * 12);
	b.running = malloc((size_t)b.p.jobs * sizeof *b.running);
	b.qnames = calloc((size_t)b.p.queues, sizeof *b.qnames);
	mu_fleet_decisions_init(&b.d);
	if (rc == MU_OK && (!b.specs || !b.fspecs || !b.names || !b.running || !b.qnames))
		rc = MU_ENOMEM;
	if (rc == MU_OK)
		rc = fb_run(&b, r);
	mu_fleet_decisions_release(&b.d);
	mu_fleet_free(b.f);
	free(b.specs);
	free(b.fspecs);
	free(b.names);
	free(b.running);
	free(b.qnames);
	return rc;
}
