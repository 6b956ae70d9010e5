/*
 * bench_varied.c - the varied shapes of `muster bench`, which look like real
 * clusters rather than best cases: unique (every pod its own request),
 * backlog (a heterogeneous GPU cluster with a varied backlog, defaults on),
 * blocked-selectors (pods whose selector matches no node, among running
 * ones), gangs4 (a million pods in gangs of 4) and reclaim-queues (reclaim
 * refused across 8 queues).  bench_varied2.c holds gang-blocked, classes
 * and openb-replay.
 *
 * Every shape builds its state through the public engine API, then times
 * cycles with the thread's CPU clock: a cold cycle (everything tried), idle
 * cycles (nothing changed) and little-changed cycles (one running job
 * finishes and one new job arrives before each).  Decisions are counted
 * only when real (binds, evictions), never the still-pending records.
 * Full sizes scale with o->scale (the growth table), quick sizes are fixed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_int.h"
#include "bench/bench_varied.h"

#define GI (1LL << 30)
#define MI (1LL << 20)

/* --- the shared harness -------------------------------------------------- */

int mu__vb_init(mu__vb_t *v, const mu_bench_opts_t *o)
{
	memset(v, 0, sizeof *v);
	v->rng = o->seed * 0x2545f4914f6cdd1dULL + 7;
	v->cost = mu__bench_clock_cost_us();
	mu_decisions_init(&v->d);
	return mu__bench_engine(o->seed, &v->e);
}

void mu__vb_release(mu__vb_t *v)
{
	mu_decisions_release(&v->d);
	mu_engine_free(v->e);
	free(v->run);
	free(v->runq);
	memset(v, 0, sizeof *v);
}

int mu__vb_nodes(mu__vb_t *v, int32_t n, int64_t cpu, int64_t mem, int64_t pods,
		 const char *key, int32_t nvals)
{
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < n; i++) {
		char name[32], val[32];
		snprintf(name, sizeof name, "n%06d", i);
		snprintf(val, sizeof val, "%s%d", key ? "z" : "", key ? i % nvals : 0);
		mu_label_t labels[2] = {{"kubernetes.io/hostname", name}, {key, val}};
		mu_node_spec_t ns;
		memset(&ns, 0, sizeof ns);
		ns.name = name;
		ns.labels = labels;
		ns.nlabels = key ? 2 : 1;
		ns.alloc.v[MU_RES_CPU] = cpu;
		ns.alloc.v[MU_RES_MEM] = mem;
		ns.alloc.v[MU_RES_PODS] = pods;
		rc = mu_engine_node_upsert(v->e, &ns, NULL);
	}
	return rc;
}

/* Remembers running job id of queue q (-1: not tracked by queue). */
static int vb_track(mu__vb_t *v, mu_id_t id, int32_t q)
{
	if (v->nrun == v->caprun) {
		int32_t ncap = v->caprun ? v->caprun * 2 : 1024;
		mu_id_t *nr = realloc(v->run, (size_t)ncap * sizeof *nr);
		int32_t *nq = realloc(v->runq, (size_t)ncap * sizeof *nq);
		if (nr)
			v->run = nr;
		if (nq)
			v->runq = nq;
		if (!nr || !nq)
			return MU_ENOMEM;
		v->caprun = ncap;
	}
	v->run[v->nrun] = id;
	v->runq[v->nrun++] = q;
	return MU_OK;
}

int mu__vb_cycle(mu__vb_t *v, mu_time_t now, double *us)
{
	v->d.n = 0;
	double t0 = mu__bench_cpu_us();
	int rc = mu_engine_cycle(v->e, now, &v->d);
	double t = mu__bench_cpu_us() - t0 - v->cost;
	if (us)
		*us = t;
	v->engine_us += t;
	v->real += mu__bench_real(&v->d);
	/* Newly started jobs: their first bind (jobs start whole here). */
	mu_id_t last = -1;
	for (size_t i = 0; rc == MU_OK && i < v->d.n; i++) {
		const mu_decision_t *x = &v->d.v[i];
		if (x->kind != MU_DEC_BIND || x->move || x->job == last)
			continue;
		last = x->job;
		if (x->pod == 0 && x->podset == 0) {
			v->binds++;
			int32_t q = v->queue_of ? v->queue_of(v, x->job) : -1;
			rc = vb_track(v, x->job, q);
		}
	}
	return rc;
}

int mu__vb_submit(mu__vb_t *v, const mu__bench_job_t *b, mu_time_t now)
{
	char name[32];
	mu__bench_job_t c = *b;
	if (!c.name) {
		snprintf(name, sizeof name, "j%08lld", (long long)v->njobs);
		c.name = name;
	}
	v->njobs++;
	mu_id_t id;
	double t0 = mu__bench_cpu_us();
	int rc = mu__bench_submit(v->e, &c, now, &id);
	v->engine_us += mu__bench_cpu_us() - t0 - v->cost;
	return rc;
}

/* Finishes a random tracked running job; *q gets its queue tag. */
static int vb_finish_one(mu__vb_t *v, mu_time_t now, int32_t *q)
{
	if (!v->nrun)
		return MU_ESTATE;
	int32_t k = (int32_t)(mu__bench_rand(&v->rng) % (uint64_t)v->nrun);
	mu_id_t id = v->run[k];
	*q = v->runq[k];
	v->run[k] = v->run[--v->nrun];
	v->runq[k] = v->runq[v->nrun];
	return mu_engine_job_finish(v->e, id, now);
}

int mu__vb_measure(mu__vb_t *v, mu_time_t *now, int32_t idles, int32_t changes,
		   mu__vb_arrive_fn arrive, void *ctx, mu_bench_result_t *r)
{
	mu__bench_samples_t idle = {0}, chg = {0};
	double us;
	int64_t real0;
	*now += 1000;
	int rc = mu__vb_cycle(v, *now, &us);
	r->cold_cycle_ms = us / 1e3;
	for (int32_t i = 0; rc == MU_OK && i < idles; i++) {
		*now += 1000;
		rc = mu__vb_cycle(v, *now, &us);
		rc = rc ? rc : mu__bench_sample(&idle, us);
	}
	real0 = v->real;
	for (int32_t i = 0; rc == MU_OK && i < changes; i++) {
		int32_t q = -1;
		*now += 1000;
		rc = vb_finish_one(v, *now, &q);
		rc = rc ? rc : arrive(v, ctx, q, *now);
		rc = rc ? rc : mu__vb_cycle(v, *now, &us);
		rc = rc ? rc : mu__bench_sample(&chg, us);
	}
	if (rc == MU_OK) {
		r->idle_cycle_ms = mu__bench_quantile(&idle, 0.5) / 1e3;
		r->p50_us = mu__bench_quantile(&chg, 0.5);
		r->p99_us = mu__bench_quantile(&chg, 0.99);
		r->cycle_ms = r->p50_us / 1e3;
		r->cycle_p99_ms = r->p99_us / 1e3;
		r->decisions = v->real - real0;
		r->decisions_per_s = chg.sum > 0 ? (double)r->decisions / (chg.sum / 1e6) : NAN;
		r->peak_rss_mb = mu__bench_rss_mb();
		r->running = v->nrun;
	}
	mu__bench_samples_release(&idle);
	mu__bench_samples_release(&chg);
	return rc;
}

/* --- unique --------------------------------------------------------------- */

int mu__bench_unique(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 200);
	int64_t pods = mu__bench_size(o, 50000, 2000);
	mu__vb_t v;
	int rc = mu__vb_init(&v, o);
	if (rc == MU_OK)
		rc = mu__vb_nodes(&v, nodes, 32000, 128 * GI, 110, NULL, 0);
	if (rc == MU_OK)
		rc = mu__bench_queue(v.e, "q", NULL);
	mu__bench_samples_t s = {0};
	double us;
	for (int64_t i = 0; rc == MU_OK && i < pods; i++) {
		/* every request its own: 100m-2 CPU, 64 Mi-4 Gi in KiB steps */
		mu__bench_job_t b = {.queue = "q", .replicas = 1};
		b.req.v[MU_RES_CPU] = 100 + (int64_t)(mu__bench_rand(&v.rng) % 1900);
		b.req.v[MU_RES_MEM] = 64 * MI + (int64_t)(mu__bench_rand(&v.rng) % (4 * 1024 * 1024)) * 1024;
		rc = mu__vb_submit(&v, &b, i);
		rc = rc ? rc : mu__vb_cycle(&v, i, &us);
		rc = rc ? rc : mu__bench_sample(&s, us);
	}
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "unique");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		r->nodes = nodes;
		r->pods = pods;
		r->placed = v.binds;
		r->decisions = (int64_t)s.n;
		r->decisions_per_s = s.sum > 0 ? (double)s.n / (s.sum / 1e6) : NAN;
		r->p50_us = mu__bench_quantile(&s, 0.5);
		r->p99_us = mu__bench_quantile(&s, 0.99);
		r->peak_rss_mb = mu__bench_rss_mb();
	}
	mu__bench_samples_release(&s);
	mu__vb_release(&v);
	return rc;
}

/* --- backlog -------------------------------------------------------------- */

/* One openb-like pod, its CPU and memory jittered by up to +-10%. */
static void backlog_pod(mu__vb_t *v, mu__bench_job_t *b)
{
	memset(b, 0, sizeof *b);
	b->queue = "q";
	b->replicas = 1;
	mu__bench_builtin_pod(&v->rng, &b->req);
	for (int r = MU_RES_CPU; r <= MU_RES_MEM; r++) {
		int64_t x = b->req.v[r];
		int64_t j = (int64_t)(mu__bench_rand(&v->rng) % 2001) - 1000; /* per mille */
		b->req.v[r] = x + x / 10 * j / 1000;
	}
}

static int backlog_arrive(mu__vb_t *v, void *ctx, int32_t q, mu_time_t now)
{
	(void)ctx;
	(void)q;
	mu__bench_job_t b;
	backlog_pod(v, &b);
	return mu__vb_submit(v, &b, now);
}

int mu__bench_backlog(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 200);
	int64_t target = mu__bench_size(o, 6000, 240);
	int32_t batch = nodes > 200 ? nodes : 200;
	mu__vb_t v;
	int64_t gpu_milli;
	uint64_t nrng = o->seed;
	int rc = mu__vb_init(&v, o);
	if (rc == MU_OK)
		rc = mu__bench_mixed_nodes(v.e, NULL, nodes, &nrng, &gpu_milli);
	if (rc == MU_OK)
		rc = mu__bench_queue(v.e, "q", NULL);
	/* Fill: batches of varied pods, one cycle each, until the backlog is
	 * reached (a batch that places nothing ends it too). */
	mu_time_t now = 0;
	for (int32_t round = 0; rc == MU_OK && round < 1000; round++) {
		if (v.njobs - v.binds >= target)
			break;
		for (int32_t i = 0; rc == MU_OK && i < batch; i++) {
			mu__bench_job_t b;
			backlog_pod(&v, &b);
			rc = mu__vb_submit(&v, &b, now);
		}
		rc = rc ? rc : mu__vb_cycle(&v, now, NULL);
	}
	double build = v.engine_us;
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "backlog");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		now = 3600 * 1000; /* every running pod old enough to move */
		rc = mu__vb_measure(&v, &now, 3, 5, backlog_arrive, NULL, r);
	}
	if (rc == MU_OK) {
		r->nodes = nodes;
		r->pods = v.njobs;
		r->pending = v.njobs - v.binds;
		r->build_ms = build / 1e3;
	}
	mu__vb_release(&v);
	return rc;
}

/* --- blocked-selectors ---------------------------------------------------- */

static int sel_arrive(mu__vb_t *v, void *ctx, int32_t q, mu_time_t now)
{
	(void)ctx;
	(void)q;
	mu__bench_job_t b = {.queue = "q", .replicas = 1};
	b.req.v[MU_RES_CPU] = 1000 + (int64_t)(mu__bench_rand(&v->rng) % 500);
	b.req.v[MU_RES_MEM] = 2 * GI;
	return mu__vb_submit(v, &b, now);
}

int mu__bench_selectors(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 200);
	int64_t blocked = mu__bench_size(o, 10000, 400);
	int64_t running = mu__bench_size(o, 40000, 1600);
	mu__vb_t v;
	int rc = mu__vb_init(&v, o);
	if (rc == MU_OK)
		rc = mu__vb_nodes(&v, nodes, 16000, 64 * GI, 110, "zone", 4);
	if (rc == MU_OK)
		rc = mu__bench_queue(v.e, "q", NULL);
	for (int64_t i = 0; rc == MU_OK && i < blocked; i++) {
		mu__bench_job_t b = {.queue = "q", .replicas = 1, .sel_key = "zone",
				     .sel_value = "nowhere"};
		b.req.v[MU_RES_CPU] = 500 + (int64_t)(mu__bench_rand(&v.rng) % 1000);
		b.req.v[MU_RES_MEM] = GI;
		rc = mu__vb_submit(&v, &b, 0);
	}
	/* Two stops: half the running pods, then all; the blocked pods'
	 * cycle cost must not grow with them. */
	mu_time_t now = 3600 * 1000;
	int64_t placed = 0;
	for (int stop = 1; rc == MU_OK && stop <= 2; stop++) {
		int64_t want = running * stop / 2;
		while (rc == MU_OK && placed < want) {
			for (int32_t i = 0; rc == MU_OK && i < 2000 && placed < want; i++, placed++)
				rc = sel_arrive(&v, NULL, -1, now);
			now += 1000;
			rc = rc ? rc : mu__vb_cycle(&v, now, NULL);
		}
		mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "blocked-selectors");
		if (rc == MU_OK && !r)
			rc = MU_ENOMEM;
		if (rc == MU_OK)
			rc = mu__vb_measure(&v, &now, 3, 5, sel_arrive, NULL, r);
		if (rc == MU_OK) {
			r->nodes = nodes;
			r->pods = v.njobs;
			r->pending = v.njobs - v.binds;
		}
	}
	mu__vb_release(&v);
	return rc;
}

/* --- gangs4 --------------------------------------------------------------- */

int mu__bench_gangs4(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 200);
	int64_t gangs = mu__bench_size(o, 250000, 2000);
	int64_t batch = o->quick ? 500 : 10000;
	mu__vb_t v;
	int rc = mu__vb_init(&v, o);
	if (rc == MU_OK) /* room for 1.25M pods of 1.25 CPU on average */
		rc = mu__vb_nodes(&v, nodes, 320000, 1024 * GI, 250, NULL, 0);
	if (rc == MU_OK)
		rc = mu__bench_queue(v.e, "q", NULL);
	mu__bench_samples_t s = {0};
	double us;
	for (int64_t g = 0; rc == MU_OK && g < gangs;) {
		for (int64_t end = g + batch; rc == MU_OK && g < gangs && g < end; g++) {
			mu__bench_job_t b = {.queue = "q", .replicas = 4};
			b.req.v[MU_RES_CPU] = 500 + (int64_t)(mu__bench_rand(&v.rng) % 1000);
			b.req.v[MU_RES_MEM] = GI + (int64_t)(mu__bench_rand(&v.rng) % 1024) * MI;
			rc = mu__vb_submit(&v, &b, g);
		}
		rc = rc ? rc : mu__vb_cycle(&v, g, &us);
		rc = rc ? rc : mu__bench_sample(&s, us);
	}
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "gangs4");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	if (rc == MU_OK) {
		r->nodes = nodes;
		r->pods = 4 * gangs;
		r->gang_pods = 4;
		r->placed = v.real;
		r->engine_ms = v.engine_us / 1e3;
		r->decisions = v.real;
		r->decisions_per_s = v.engine_us > 0 ? (double)v.real / (v.engine_us / 1e6) : NAN;
		r->cycle_ms = mu__bench_quantile(&s, 0.5) / 1e3;
		r->cycle_p99_ms = mu__bench_quantile(&s, 0.99) / 1e3;
		r->peak_rss_mb = mu__bench_rss_mb();
	}
	mu__bench_samples_release(&s);
	mu__vb_release(&v);
	return rc;
}

/* --- reclaim-queues ------------------------------------------------------- */

#define RQ 8 /* queues */

static int32_t rq_queue_of(const mu__vb_t *v, mu_id_t job)
{
	mu_job_info_t ji;
	if (mu_engine_job_info(v->e, job, &ji) != MU_OK || !ji.queue)
		return -1;
	return ji.queue[1] - '0';
}

/* Job of queue q: 4 CPUs and 16 Gi, or 1 CPU and 4 Gi when small. */
static int rq_submit(mu__vb_t *v, int32_t q, bool small, mu_time_t now)
{
	char qn[16];
	snprintf(qn, sizeof qn, "q%d", q);
	mu__bench_job_t b = {.queue = qn, .replicas = 1};
	b.req.v[MU_RES_CPU] = small ? 1000 : 4000;
	b.req.v[MU_RES_MEM] = small ? 4 * GI : 16 * GI;
	return mu__vb_submit(v, &b, now);
}

static int rq_arrive(mu__vb_t *v, void *ctx, int32_t q, mu_time_t now)
{
	(void)ctx;
	return rq_submit(v, q >= 0 ? q : 0, false, now);
}

int mu__bench_reclaim(const mu_bench_opts_t *o, mu_bench_results_t *out)
{
	int32_t nodes = (int32_t)mu__bench_size(o, 5000, 200);
	int32_t per_queue = (int32_t)mu__bench_size(o, 20, 3);
	nodes = nodes / 2 * 2;
	mu__vb_t v;
	int rc = mu__vb_init(&v, o);
	v.queue_of = rq_queue_of;
	if (rc == MU_OK)
		rc = mu__vb_nodes(&v, nodes, 16000, 64 * GI, 110, NULL, 0);
	/* Eight queues of an equal deserved share.  Queues 0-6 run it plus
	 * one CPU (over quota by less than any victim job), queue 7 seven
	 * CPUs less: reclaim looks for victims and every one is refused,
	 * since taking it would push its queue under its quota. */
	mu_res_t total, des = {{0}};
	mu_engine_totals(v.e, &total, NULL);
	des.v[MU_RES_CPU] = total.v[MU_RES_CPU] / RQ;
	des.v[MU_RES_MEM] = total.v[MU_RES_MEM] / RQ;
	for (int32_t q = 0; rc == MU_OK && q < RQ; q++) {
		char qn[16];
		snprintf(qn, sizeof qn, "q%d", q);
		rc = mu__bench_queue(v.e, qn, &des);
	}
	int32_t big = nodes / 2; /* 4-CPU jobs per queue at its deserved */
	for (int32_t q = 0; rc == MU_OK && q < RQ; q++)
		for (int32_t i = 0; rc == MU_OK && i < big - (q == RQ - 1 ? 2 : 0); i++)
			rc = rq_submit(&v, q, false, 0);
	rc = rc ? rc : mu__vb_cycle(&v, 0, NULL);
	for (int32_t q = 0; rc == MU_OK && q < RQ; q++)
		rc = rq_submit(&v, q, true, 0);
	rc = rc ? rc : mu__vb_cycle(&v, 0, NULL);
	for (int32_t q = 0; rc == MU_OK && q < RQ; q++)
		for (int32_t i = 0; rc == MU_OK && i < per_queue; i++)
			rc = rq_submit(&v, q, false, 0);
	mu_bench_result_t *r = rc ? NULL : mu_bench_results_add(out, "reclaim-queues");
	if (rc == MU_OK && !r)
		rc = MU_ENOMEM;
	mu_time_t now = 3600 * 1000;
	if (rc == MU_OK)
		rc = mu__vb_measure(&v, &now, 3, 5, rq_arrive, NULL, r);
	if (rc == MU_OK) {
		r->nodes = nodes;
		r->queues = RQ;
		r->pods = v.njobs;
		r->pending = v.njobs - v.binds;
	}
	mu__vb_release(&v);
	return rc;
}
