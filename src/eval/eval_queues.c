/*
 * eval_queues.c - synthetic workloads and the queueing-policy experiments
 * behind `muster eval queues` (protocol in docs/evaluation.md).
 *
 * The generator draws, from a seeded splitmix64 stream, Poisson arrivals
 * whose mean load (GPUs x duration per unit of time) matches a target, with
 * a mix of job sizes and lognormal durations, plus an optional backlog
 * submitted at time 0.  The experiments build a cluster and queues in a
 * mu_specs_t, run mu_sim_run() with preemption and reclaim on, and reduce
 * the result to shares of GPU time, Jain's index and reclaim latency.
 * Shares per time window come from runs cut at each window's end (the
 * simulator is deterministic, so a shorter run is a prefix of the longer).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/eval_queues.h"
#include "muster/util.h"

#define SEC 1000LL
#define GIB (1LL << 30)
#define EVQ_REPEAT 3 /* runs per engine-time measurement */
#define EVQ_MAX_JOBS 10000000 /* per generator call */
#define EVQ_RECLAIM_WAIT (600 * SEC) /* reclaim: how long past min_runtime A
                                     * may wait before it counts as never */

double mu__jain(const double *x, size_t n)
{
	double s = 0, s2 = 0;
	for (size_t i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 > 0 ? s * s / ((double)n * s2) : 0;
}

/* --- Random numbers: splitmix64, caller-owned state ------------------------ */

/* Uniform in (0, 1): never 0, so logs are finite. */
static double rng_unif(uint64_t *s)
{
	return ((double)(mu__splitmix64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal (Box-Muller, one of the pair). */
static double rng_normal(uint64_t *s)
{
	double u = rng_unif(s), v = rng_unif(s);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* --- The generator ------------------------------------------------------------ */

/* Job shapes: GPUs per pod, pods, probability (gangs last). */
typedef struct evq_shape {
	int32_t gpus, pods;
	double p;
} evq_shape_t;

static const evq_shape_t evq_shapes[] = {
	{1, 1, 0.30}, {2, 1, 0.25}, {4, 1, 0.20}, {8, 1, 0.15},
	{8, 2, 0.06}, {8, 4, 0.04},
};
#define EVQ_NSHAPES (sizeof evq_shapes / sizeof *evq_shapes)
#define EVQ_NSINGLE 4 /* shapes without gangs */

static size_t shape_count(bool gangs)
{
	return gangs ? EVQ_NSHAPES : EVQ_NSINGLE;
}

/* Mean GPUs of a job over the shape mix. */
static double shape_mean_gpus(bool gangs)
{
	double m = 0, p = 0;
	for (size_t i = 0; i < shape_count(gangs); i++) {
		m += evq_shapes[i].p * evq_shapes[i].gpus * evq_shapes[i].pods;
		p += evq_shapes[i].p;
	}
	return m / p;
}

static size_t shape_draw(uint64_t *s, bool gangs)
{
	double p = 0;
	for (size_t i = 0; i < shape_count(gangs); i++)
		p += evq_shapes[i].p;
	double u = rng_unif(s) * p;
	for (size_t i = 0; i < shape_count(gangs); i++) {
		if (u < evq_shapes[i].p)
			return i;
		u -= evq_shapes[i].p;
	}
	return shape_count(gangs) - 1;
}

static double norm_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

/* Mean of the lognormal (median m, sigma s) clamped to [a, b]. */
static double dur_mean(const mu__evq_gen_t *g)
{
	double mu = log(g->median_s), s = g->sigma;
	double la = log(g->min_s), lb = log(g->max_s);
	double mid = g->median_s * exp(s * s / 2) *
		     (norm_cdf((lb - mu - s * s) / s) - norm_cdf((la - mu - s * s) / s));
	return mid + g->min_s * norm_cdf((la - mu) / s) +
	       g->max_s * (1 - norm_cdf((lb - mu) / s));
}

static mu_time_t dur_draw(uint64_t *s, const mu__evq_gen_t *g)
{
	double d = g->median_s * exp(g->sigma * rng_normal(s));
	d = d < g->min_s ? g->min_s : d > g->max_s ? g->max_s : d;
	return (mu_time_t)(d * SEC);
}

void mu__evq_gen_defaults(mu__evq_gen_t *g, const char *queue, uint64_t seed)
{
	*g = (mu__evq_gen_t){.queue = queue, .seed = seed, .until = 86400 * SEC,
			     .median_s = 1800, .sigma = 1.0, .min_s = 120,
			     .max_s = 6 * 3600, .gangs = true, .preemptible = true};
}

/* Appends one job of shape sh to sp; names it QUEUE-SEQ.  The queue name
 * is already in sp's arena. */
static int gen_job(mu_specs_t *sp, const mu__evq_gen_t *g, const char *queue,
		   int32_t seq, const evq_shape_t *sh, mu_time_t submit,
		   mu_time_t dur)
{
	char name[64];
	snprintf(name, sizeof name, "%s-%05d", g->queue, (int)seq);
	mu_podset_spec_t *ps = mu_arena_alloc(&sp->arena, sizeof *ps);
	char *nm = mu_arena_strdup(&sp->arena, name);
	mu_job_spec_t *j = ps && nm ? mu_specs_add_job(sp) : NULL;
	if (!j)
		return MU_ENOMEM;
	ps->replicas = sh->pods;
	ps->req.v[MU_RES_CPU] = 4000LL * sh->gpus;
	ps->req.v[MU_RES_MEM] = 32 * GIB * sh->gpus;
	ps->req.v[MU_RES_GPU] = sh->gpus;
	j->name = nm;
	j->queue = queue;
	j->priority = g->priority;
	j->type = MU_JOB_TRAIN;
	j->preemptible = g->preemptible;
	j->podsets = ps;
	j->npodsets = 1;
	j->submit = submit;
	j->duration = dur;
	return MU_OK;
}

/* Scales the durations of jobs [first, njobs) so that their load is
 * exactly g's target (the draw is within a few percent of it); returns the
 * realised load after rounding to milliseconds. */
static double gen_rescale(mu_specs_t *sp, size_t first, const mu__evq_gen_t *g,
			  double work)
{
	double span = (double)(g->until - g->start) / SEC;
	double f = g->offered_gpus * span / work, done = 0;
	for (size_t i = first; i < sp->njobs; i++) {
		mu_job_spec_t *j = &sp->jobs[i];
		j->duration = (mu_time_t)llround((double)j->duration * f);
		j->duration = j->duration < 1 ? 1 : j->duration;
		done += (double)(j->podsets[0].req.v[MU_RES_GPU] * j->podsets[0].replicas) *
			(double)j->duration / SEC;
	}
	return done / span;
}

int mu__evq_gen_jobs(mu_specs_t *sp, const mu__evq_gen_t *g, double *offered)
{
	uint64_t s = g->seed;
	const char *queue = mu_arena_strdup(&sp->arena, g->queue);
	double rate = g->offered_gpus / (shape_mean_gpus(g->gangs) * dur_mean(g));
	double backlog = 0, work = 0, t = (double)g->start / SEC;
	int32_t seq = 0;
	int rc = queue ? MU_OK : MU_ENOMEM;
	*offered = 0;
	while (rc == MU_OK && backlog < g->backlog_gpus && seq < EVQ_MAX_JOBS) {
		const evq_shape_t *sh = &evq_shapes[shape_draw(&s, g->gangs)];
		rc = gen_job(sp, g, queue, seq++, sh, g->start, dur_draw(&s, g));
		backlog += sh->gpus * sh->pods;
	}
	size_t first = sp->njobs;
	while (rc == MU_OK && rate > 0) {
		t += -log(rng_unif(&s)) / rate;
		mu_time_t at = (mu_time_t)(t * SEC);
		if (at >= g->until)
			break;
		if (seq >= EVQ_MAX_JOBS) {
			rc = MU_ELIMIT;
			break;
		}
		const evq_shape_t *sh = &evq_shapes[shape_draw(&s, g->gangs)];
		mu_time_t dur = dur_draw(&s, g);
		rc = gen_job(sp, g, queue, seq++, sh, at, dur);
		work += (double)(sh->gpus * sh->pods) * (double)dur / SEC;
	}
	if (rc == MU_OK && work > 0)
		*offered = gen_rescale(sp, first, g, work);
	return rc;
}

int mu__evq_add_nodes(mu_specs_t *sp, int32_t n)
{
	for (int32_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "node-%04d", (int)i);
		char *nm = mu_arena_strdup(&sp->arena, name);
		mu_node_spec_t *node = nm ? mu_specs_add_node(sp) : NULL;
		if (!node)
			return MU_ENOMEM;
		node->name = nm;
		node->alloc.v[MU_RES_CPU] = 64000;
		node->alloc.v[MU_RES_MEM] = 512 * GIB;
		node->alloc.v[MU_RES_GPU] = 8;
		node->alloc.v[MU_RES_PODS] = 110;
	}
	return MU_OK;
}

/* Adds a top-level queue with `deserved` GPUs and GPU weight w. */
static int add_queue(mu_specs_t *sp, const char *name, double deserved, double w)
{
	char *nm = mu_arena_strdup(&sp->arena, name);
	mu_queue_spec_t *q = nm ? mu_specs_add_queue(sp) : NULL;
	if (!q)
		return MU_ENOMEM;
	q->name = nm;
	q->deserved.v[MU_RES_GPU] = (int64_t)(deserved * 1000);
	q->weight[MU_RES_GPU] = w;
	return MU_OK;
}

void mu__evq_opts_defaults(mu__evq_opts_t *o)
{
	*o = (mu__evq_opts_t){.seed = 1, .nodes = 64, .span = 86400 * SEC,
			      .load = 1.5, .windows = 6, .cycle_interval = SEC,
			      .reclaim_at = 30 * SEC, .skew = 1};
}

/* The seed of queue i's generator, decorrelated from the others. */
static uint64_t queue_seed(uint64_t seed, size_t i)
{
	uint64_t s = seed ^ (0x632be59bd9b4e019ULL * (i + 1));
	return mu__splitmix64(&s);
}

/* --- Shares of GPU time ------------------------------------------------------ */

/* A queue of a shares experiment. */
typedef struct evq_qdef {
	const char *name;
	double deserved;  /* GPUs */
	double weight;    /* over-quota GPU weight */
	double target;    /* entitled share of GPU time */
} evq_qdef_t;

/* Builds the cluster, the queues and their workloads: each queue is
 * offered o->load times its target share of the GPUs, plus a backlog of
 * twice its share at time 0, so that it never runs dry. */
static int shares_specs(const mu__evq_opts_t *o, const evq_qdef_t *qd, size_t nq,
			mu_specs_t *sp, mu__evq_fair_t *out)
{
	double gpus = 8.0 * o->nodes;
	int rc = mu__evq_add_nodes(sp, o->nodes);
	for (size_t i = 0; rc == MU_OK && i < nq; i++)
		rc = add_queue(sp, qd[i].name, qd[i].deserved, qd[i].weight);
	for (size_t i = 0; rc == MU_OK && i < nq; i++) {
		mu__evq_gen_t g;
		mu__evq_gen_defaults(&g, qd[i].name, queue_seed(o->seed, i));
		g.until = o->span;
		double x = i == 0 && o->skew > 0 ? o->skew : 1; /* q1: skewed */
		g.start = i == 0 ? 0 : o->late;
		g.offered_gpus = x * o->load * qd[i].target * gpus;
		g.backlog_gpus = 2 * x * qd[i].target * gpus;
		snprintf(out->q[i].name, sizeof out->q[i].name, "%s", qd[i].name);
		out->q[i].target = qd[i].target;
		rc = mu__evq_gen_jobs(sp, &g, &out->q[i].offered_gpus);
	}
	out->nqueues = (int32_t)nq;
	return rc;
}

typedef struct evq_ev {
	double t;
	int32_t d;
} evq_ev_t;

static int cmp_ev(const void *a, const void *b)
{
	const evq_ev_t *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

/* The fewest jobs of queue `name` submitted and not yet started at any
 * moment before end_s (a lower bound of its backlog: suspended jobs are
 * not counted).  A sweep over submit and first-start times; O(n log n). */
static int min_backlog(const mu_sim_result_t *r, const char *name, double end_s,
		       int32_t *out)
{
	evq_ev_t *ev = malloc((2 * r->njobs + 1) * sizeof *ev);
	if (!ev)
		return MU_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		if (strcmp(r->jobs[i].queue, name) != 0)
			continue;
		ev[n++] = (evq_ev_t){r->jobs[i].submit_s, +1};
		if (r->jobs[i].start_s >= 0)
			ev[n++] = (evq_ev_t){r->jobs[i].start_s, -1};
	}
	qsort(ev, n, sizeof *ev, cmp_ev);
	int32_t cur = 0, best = INT32_MAX;
	for (size_t i = 0; i < n;) {
		double t = ev[i].t;
		while (i < n && ev[i].t == t)
			cur += ev[i++].d;
		if (t < end_s && cur < best)
			best = cur;
	}
	*out = best == INT32_MAX ? 0 : best;
	free(ev);
	return MU_OK;
}

/* Runs sp up to horizon h; gs[i] gets queue i's GPU-seconds (queues in
 * spec order), *sum the summary when sum is not NULL, and each queue of
 * f (when not NULL) its smallest backlog. */
static int run_gpu_s(const mu_specs_t *sp, const mu_sim_config_t *base,
		     mu_time_t h, double *gs, mu_sim_summary_t *sum,
		     mu__evq_fair_t *f, mu_diag_t *diag)
{
	mu_sim_config_t cfg = *base;
	mu_sim_result_t r;
	cfg.horizon = h;
	int rc = mu_sim_run(sp, &cfg, &r, diag);
	for (size_t i = 0; rc == MU_OK && i < r.nqueues && i < MU__EVQ_MAXQ; i++)
		gs[i] = r.queues[i].gpu_seconds;
	if (rc == MU_OK && sum)
		*sum = r.summary;
	for (int32_t i = 0; rc == MU_OK && f && i < f->nqueues; i++)
		rc = min_backlog(&r, f->q[i].name, (double)h / SEC, &f->q[i].min_backlog);
	mu_sim_result_release(&r);
	return rc;
}

/* Jain's index of got[i] / target[i]. */
static double jain_norm(const mu__evq_fair_t *f, const double *got)
{
	double x[MU__EVQ_MAXQ];
	for (int32_t i = 0; i < f->nqueues; i++)
		x[i] = f->q[i].target > 0 ? got[i] / f->q[i].target : 0;
	return mu__jain(x, (size_t)f->nqueues);
}

/* Runs a shares experiment: opts->windows runs cut at each window's end,
 * the last one being the whole span; fills the shares and indices. */
static int shares_run(const mu__evq_opts_t *o, const evq_qdef_t *qd, size_t nq,
		      mu__evq_fair_t *out, mu_diag_t *diag)
{
	mu_specs_t sp;
	mu_specs_init(&sp);
	memset(out, 0, sizeof *out);
	int rc = nq <= MU__EVQ_MAXQ ? shares_specs(o, qd, nq, &sp, out) : MU_ELIMIT;
	mu_sim_config_t cfg;
	mu_sim_config_defaults(&cfg);
	cfg.seed = o->seed;
	cfg.engine.preemption = cfg.engine.reclaim = !o->control;
	cfg.evict_grace = o->grace;
	double prev[MU__EVQ_MAXQ] = {0}, gs[MU__EVQ_MAXQ] = {0}, win[MU__EVQ_MAXQ];
	double base[MU__EVQ_MAXQ] = {0}; /* GPU-seconds before o->late */
	mu_sim_summary_t sum = {0};
	int32_t nw = o->windows > 0 ? o->windows : 1, counted = 0;
	if (rc == MU_OK && o->late > 0)
		rc = run_gpu_s(&sp, &cfg, o->late, base, NULL, NULL, diag);
	out->jain_win_min = 1;
	for (int32_t k = 1; rc == MU_OK && k <= nw; k++) {
		rc = run_gpu_s(&sp, &cfg, o->span * k / nw, gs, &sum,
			       k == nw ? out : NULL, diag);
		for (size_t i = 0; i < nq; i++) {
			win[i] = gs[i] - prev[i];
			prev[i] = gs[i];
		}
		if (o->span * (k - 1) / nw < o->late)
			continue; /* before every queue had arrived */
		double j = jain_norm(out, win);
		out->jain_win_min = j < out->jain_win_min ? j : out->jain_win_min;
		out->jain_win_mean += j;
		counted++;
	}
	out->jain_win_mean /= counted > 0 ? counted : 1;
	double total = 0;
	for (size_t i = 0; i < nq; i++) {
		gs[i] -= base[i];
		total += gs[i];
	}
	for (size_t i = 0; rc == MU_OK && i < nq; i++) {
		out->q[i].gpu_hours = gs[i] / 3600;
		out->q[i].share = total > 0 ? gs[i] / total : 0;
		double dev = fabs(out->q[i].share / out->q[i].target - 1);
		out->max_dev = dev > out->max_dev ? dev : out->max_dev;
		win[i] = out->q[i].share;
	}
	out->jain = jain_norm(out, win);
	out->utilization = sum.gpu_utilization;
	out->jobs = sum.jobs;
	out->completed = sum.completed;
	out->preemptions = sum.preemptions;
	out->cycles = sum.cycles;
	out->engine_s = sum.engine_s;
	mu_specs_release(&sp);
	return rc;
}

int mu__evq_fairness(const mu__evq_opts_t *o, mu__evq_fair_t *out, mu_diag_t *diag)
{
	double q = 8.0 * o->nodes / 4;
	const evq_qdef_t qd[4] = {{"q1", q, 1, 0.25}, {"q2", q, 1, 0.25},
				  {"q3", q, 1, 0.25}, {"q4", q, 1, 0.25}};
	return shares_run(o, qd, 4, out, diag);
}

int mu__evq_weighted(const mu__evq_opts_t *o, mu__evq_fair_t *out, mu_diag_t *diag)
{
	const evq_qdef_t qd[3] = {{"w1", 0, 1, 1.0 / 6}, {"w2", 0, 2, 2.0 / 6},
				  {"w3", 0, 3, 3.0 / 6}};
	return shares_run(o, qd, 3, out, diag);
}

/* --- Reclaim latency ------------------------------------------------------------ */

/* Builds the reclaim experiment on n nodes: queues "a" and "b" deserve
 * half the GPUs each.  B submits at time 0 a backlog of twice the cluster
 * (hours long, so nothing ends during the experiment); A submits at o->
 * reclaim_at exactly its quota: n/32 gangs of 4 x 8 GPUs and 8-GPU pods
 * for the rest, running 10 hours. */
static int reclaim_specs(const mu__evq_opts_t *o, int32_t n, mu_specs_t *sp)
{
	double half = 4.0 * n;
	int rc = mu__evq_add_nodes(sp, n);
	if (rc == MU_OK)
		rc = add_queue(sp, "a", half, 1);
	if (rc == MU_OK)
		rc = add_queue(sp, "b", half, 1);
	mu__evq_gen_t g;
	double offered;
	mu__evq_gen_defaults(&g, "b", queue_seed(o->seed, 1));
	g.until = 0;
	g.backlog_gpus = 4 * half;
	g.median_s = 4 * 3600;
	g.sigma = 0.5;
	g.min_s = 3600;
	g.max_s = 12 * 3600;
	if (rc == MU_OK)
		rc = mu__evq_gen_jobs(sp, &g, &offered);
	mu__evq_gen_defaults(&g, "a", 0);
	const char *qa = mu_arena_strdup(&sp->arena, "a");
	const evq_shape_t gang = {8, 4, 0}, pod = {8, 1, 0};
	int32_t ngang = n / 32, npod = (int32_t)(half - 32 * ngang) / 8;
	rc = rc == MU_OK && !qa ? MU_ENOMEM : rc;
	if (o->odd) { /* pods of 3, 5, 6 and 7 GPUs, the last one the rest */
		static const int32_t sz[] = {3, 5, 6, 7};
		int32_t left = (int32_t)half;
		for (int32_t i = 0; rc == MU_OK && left > 0; i++) {
			evq_shape_t sh = {sz[i % 4] < left ? sz[i % 4] : left, 1, 0};
			rc = gen_job(sp, &g, qa, i, &sh, o->reclaim_at, 10 * 3600 * SEC);
			left -= sh.gpus;
		}
		return rc;
	}
	for (int32_t i = 0; rc == MU_OK && i < ngang + npod; i++)
		rc = gen_job(sp, &g, qa, i, i < ngang ? &gang : &pod,
			     o->reclaim_at, 10 * 3600 * SEC);
	return rc;
}

/* When A's jobs all held their GPUs (all started, none preempted): the
 * latest start, seconds; -1 if some never started or were preempted. */
static double reclaim_done_s(const mu_sim_result_t *r)
{
	double last = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		const mu_sim_job_t *j = &r->jobs[i];
		if (strcmp(j->queue, "a") != 0)
			continue;
		if (j->start_s < 0 || j->preemptions > 0)
			return -1;
		last = j->start_s > last ? j->start_s : last;
	}
	return last;
}

/* Cycles and engine time up to horizon h: the least engine time of
 * EVQ_REPEAT runs, as wall-clock noise only ever adds.  O(3 runs). */
static int reclaim_cycles(const mu_specs_t *sp, const mu_sim_config_t *base,
			  mu_time_t h, mu_sim_summary_t *sum, mu_diag_t *diag)
{
	double gs[MU__EVQ_MAXQ], best = 0;
	int rc = MU_OK;
	for (int i = 0; rc == MU_OK && i < EVQ_REPEAT; i++) {
		rc = run_gpu_s(sp, base, h, gs, sum, NULL, diag);
		best = i == 0 || sum->engine_s < best ? sum->engine_s : best;
	}
	sum->engine_s = best;
	return rc;
}

int mu__evq_reclaim(const mu__evq_opts_t *o, int32_t nodes, mu_time_t min_runtime,
		    mu__evq_reclaim_t *out, mu_diag_t *diag)
{
	mu_specs_t sp;
	mu_specs_init(&sp);
	*out = (mu__evq_reclaim_t){.nodes = nodes, .min_runtime = min_runtime,
				   .cycle_interval = o->cycle_interval,
				   .at = o->reclaim_at, .deserved_gpus = 4.0 * nodes,
				   .bound_s = (double)(min_runtime + o->cycle_interval +
						       o->grace) / SEC,
				   .grace = o->grace, .odd = o->odd, .control = o->control};
	int rc = o->reclaim_at >= SEC ? reclaim_specs(o, nodes, &sp) : MU_EINVAL;
	mu_sim_config_t cfg;
	mu_sim_config_defaults(&cfg);
	cfg.seed = o->seed;
	cfg.cycle_interval = o->cycle_interval;
	cfg.engine.min_runtime = min_runtime;
	cfg.engine.preemption = cfg.engine.reclaim = !o->control;
	cfg.evict_grace = o->grace;
	cfg.horizon = o->reclaim_at + min_runtime + o->grace + EVQ_RECLAIM_WAIT;
	if (rc == MU_OK) {
		mu_sim_result_t r;
		if ((rc = mu_sim_run(&sp, &cfg, &r, diag)) == MU_OK) {
			double done = reclaim_done_s(&r);
			out->held = done >= 0;
			out->latency_s = out->held ? done - (double)o->reclaim_at / SEC : -1;
			out->preemptions = r.summary.preemptions;
		}
		mu_sim_result_release(&r);
	}
	mu_sim_summary_t before, after;
	if (rc == MU_OK && out->held &&
	    (rc = reclaim_cycles(&sp, &cfg, o->reclaim_at - 1, &before, diag)) == MU_OK &&
	    (rc = reclaim_cycles(&sp, &cfg, o->reclaim_at +
				 (mu_time_t)llround(out->latency_s * SEC), &after,
				 diag)) == MU_OK) {
		out->cycles = after.cycles - before.cycles;
		out->engine_ms = (after.engine_s - before.engine_s) * 1000;
		out->engine_ms = out->engine_ms > 0 ? out->engine_ms : 0;
	}
	mu_specs_release(&sp);
	return rc;
}
