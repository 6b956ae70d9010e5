/*
 * eval_topo_run.c - one policy's run of `muster eval topology`: the
 * topology requests it sets, the simulator hooks that watch placements and
 * slow jobs down, and the reduction of a run to the metrics of
 * mu_etopo_result_t (include/muster/eval_topo.h).
 *
 * The decision observer keeps each job's current hosts, from its bind and
 * evict decisions, and each gang's first complete placement; the slowdown
 * hook, which the simulator calls right after the observer when a job's
 * pods changed, prices that placement with mu_etopo_slowdown().  The hooks
 * cannot return errors, so the first one is latched in the context and
 * reported after the run.  All their memory is allocated before the run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muster/eval_topo.h"
#include "muster/csv.h"
#include "muster/util.h"

/* The hooks' state for one run.  Current placements are indexed by
 * engine job id (the simulator submits each job of the specs once, so ids
 * stay below their number), first placements by the job's index in the
 * specs. */
typedef struct watch {
	const mu_etopo_net_t *net;
	mu__namemap_t host_of;  /* host name -> index into net */
	mu__namemap_t spec_of;  /* job name -> index into the specs */
	int32_t *node_host;     /* engine node id -> host, filled at first use */
	int32_t nnodes;
	bool mapped;
	int32_t njobs, stride;  /* jobs; most pods of one job */
	int32_t *hosts;         /* [job * stride + k]: host of a bound pod */
	int32_t *nbound;        /* pods in hosts per job */
	bool *seen;             /* by spec: first complete placement recorded */
	mu_etopo_span_t *first; /* by spec */
	int64_t *gpus;          /* by spec: GPUs, at the first placement */
	int32_t *pods;          /* by spec */
	int err;
} watch_t;

static void watch_release(watch_t *w)
{
	mu__namemap_release(&w->host_of);
	mu__namemap_release(&w->spec_of);
	free(w->node_host);
	free(w->hosts);
	free(w->nbound);
	free(w->seen);
	free(w->first);
	free(w->gpus);
	free(w->pods);
}

/* Allocates everything the hooks use for sp's jobs and nodes. */
static int watch_init(watch_t *w, const mu_specs_t *sp, const mu_etopo_net_t *net)
{
	memset(w, 0, sizeof *w);
	w->net = net;
	mu__namemap_init(&w->host_of);
	mu__namemap_init(&w->spec_of);
	w->njobs = (int32_t)sp->njobs;
	w->nnodes = (int32_t)sp->nnodes;
	for (size_t i = 0; i < sp->njobs; i++) {
		int32_t p = mu_job_spec_pods(&sp->jobs[i]);
		w->stride = p > w->stride ? p : w->stride;
	}
	size_t nj = sp->njobs ? sp->njobs : 1, stride = w->stride ? (size_t)w->stride : 1;
	w->node_host = malloc((sp->nnodes ? sp->nnodes : 1) * sizeof *w->node_host);
	w->hosts = malloc(nj * stride * sizeof *w->hosts);
	w->nbound = calloc(nj, sizeof *w->nbound);
	w->seen = calloc(nj, sizeof *w->seen);
	w->first = calloc(nj, sizeof *w->first);
	w->gpus = calloc(nj, sizeof *w->gpus);
	w->pods = calloc(nj, sizeof *w->pods);
	if (!w->node_host || !w->hosts || !w->nbound || !w->seen || !w->first ||
	    !w->gpus || !w->pods)
		return MU_ENOMEM;
	for (int32_t h = 0; h < net->nhosts; h++)
		if (mu__namemap_put(&w->host_of, net->hosts[h].name, (size_t)h, NULL) ==
		    MU_ENOMEM)
			return MU_ENOMEM;
	for (size_t i = 0; i < sp->njobs; i++)
		if (mu__namemap_put(&w->spec_of, sp->jobs[i].name, i, NULL) == MU_ENOMEM)
			return MU_ENOMEM;
	return MU_OK;
}

/* Maps the engine's node ids to hosts by name, once.  O(nodes). */
static void watch_map(watch_t *w, const mu_engine_t *e)
{
	int32_t n = mu_engine_nnodes(e);
	if (n > w->nnodes) {
		w->err = MU_ERANGE;
		return;
	}
	for (int32_t i = 0; i < n; i++) {
		size_t h;
		const char *name = mu_engine_node_name(e, i);
		if (!name || mu__namemap_get(&w->host_of, name, &h) != MU_OK) {
			w->err = MU_ENOENT;
			return;
		}
		w->node_host[i] = (int32_t)h;
	}
	w->mapped = true;
}

/* Adds or removes (one occurrence of) host h in job j's placement. */
static void watch_move(watch_t *w, mu_id_t j, int32_t h, bool bind)
{
	int32_t *v = &w->hosts[(size_t)j * (size_t)w->stride];
	if (bind) {
		if (w->nbound[j] >= w->stride)
			w->err = MU_ERANGE;
		else
			v[w->nbound[j]++] = h;
		return;
	}
	for (int32_t k = 0; k < w->nbound[j]; k++)
		if (v[k] == h) {
			v[k] = v[--w->nbound[j]];
			return;
		}
	w->err = MU_ESTATE;
}

/* Records job j's first complete placement, once its pods are all
 * bound. */
static void watch_first(watch_t *w, const mu_engine_t *e, mu_id_t j)
{
	mu_job_info_t info;
	size_t i;
	if (mu_engine_job_info(e, j, &info) != MU_OK ||
	    mu__namemap_get(&w->spec_of, info.name, &i) != MU_OK) {
		w->err = MU_ENOENT;
		return;
	}
	if (w->seen[i] || info.bound < info.pods || w->nbound[j] != info.pods)
		return;
	w->seen[i] = true;
	w->pods[i] = info.pods;
	w->gpus[i] = info.gpu_milli / 1000;
	int rc = mu_etopo_span(w->net, &w->hosts[(size_t)j * (size_t)w->stride],
			       w->nbound[j], &w->first[i]);
	if (rc)
		w->err = rc;
}

/* The decision observer: follows binds and evictions, then records the
 * first complete placement of each job bound in this cycle.
 * O(decisions x stride). */
static void on_decisions(void *ctx, const mu_engine_t *e, const mu_decisions_t *d,
			 mu_time_t now)
{
	watch_t *w = ctx;
	(void)now;
	if (!w->mapped && !w->err)
		watch_map(w, e);
	for (size_t i = 0; i < d->n && !w->err; i++) {
		const mu_decision_t *x = &d->v[i];
		if (x->kind == MU_DEC_PENDING)
			continue;
		if (x->job < 0 || x->job >= w->njobs || x->node < 0 || x->node >= w->nnodes) {
			w->err = MU_ERANGE;
			break;
		}
		watch_move(w, x->job, w->node_host[x->node], x->kind == MU_DEC_BIND);
	}
	for (size_t i = 0; i < d->n && !w->err; i++)
		if (d->v[i].kind == MU_DEC_BIND)
			watch_first(w, e, d->v[i].job);
}

/* The slowdown hook: the JCT model on job's current placement. */
static double slowdown(void *ctx, const mu_engine_t *e, mu_id_t job)
{
	watch_t *w = ctx;
	mu_etopo_span_t sp;
	(void)e;
	if (w->err || job < 0 || job >= w->njobs)
		return 1;
	int rc = mu_etopo_span(w->net, &w->hosts[(size_t)job * (size_t)w->stride],
			       w->nbound[job], &sp);
	if (rc) {
		w->err = rc;
		return 1;
	}
	return mu_etopo_slowdown(sp.tier);
}

/* --- Policies -------------------------------------------------------------------- */

const char *mu_etopo_policy_name(mu_etopo_policy_t p)
{
	static const char *const n[MU_ETOPO_NPOLICIES] = {
		"blind-binpack", "blind-spread", "muster-preferred", "muster-required",
	};
	return p >= 0 && p < MU_ETOPO_NPOLICIES ? n[p] : "?";
}

/* Sets each job's topology request for policy p.  Strings are static. */
static void set_requests(mu_specs_t *sp, const mu_etopo_net_t *net,
			 mu_etopo_policy_t p)
{
	/* The level label that keeps a gang within tier t, by tier. */
	static const char *const req[MU_ETOPO_NTIERS] = {
		NULL, "lingjun/asw", "lingjun/psw", "lingjun/dsw", NULL,
	};
	for (size_t i = 0; i < sp->njobs; i++) {
		mu_job_spec_t *j = &sp->jobs[i];
		j->topo = (mu_topo_req_t){0};
		if (p == MU_ETOPO_BLIND_BINPACK || p == MU_ETOPO_BLIND_SPREAD)
			continue;
		j->topo.topology = "lingjun";
		j->topo.preferred = mu_etopo_label_keys[MU_ETOPO_LEVELS - 1];
		if (p != MU_ETOPO_REQUIRED || mu_job_spec_pods(j) < 2)
			continue;
		int64_t g = 0;
		for (size_t k = 0; k < j->npodsets; k++)
			g += j->podsets[k].req.v[MU_RES_GPU] * j->podsets[k].replicas;
		j->topo.required = req[mu_etopo_tightest(net, g)];
	}
}

/* The simulator's configuration for policy p: the engine's defaults with
 * p's scoring policy, and no consolidation (moves would change placements
 * after the fact).  Preemption stays on: the trace's jobs are preemptible,
 * and only the eviction of backfilled jobs when a reservation falls due
 * keeps reservations from being overrun (one queue, one priority: nothing
 * else evicts). */
static void run_config(mu_sim_config_t *c, mu_etopo_policy_t p, uint64_t seed,
		       watch_t *w)
{
	mu_sim_config_defaults(c);
	c->seed = seed;
	c->engine.seed = seed;
	c->engine.score = p == MU_ETOPO_BLIND_SPREAD ? &mu_score_spread : &mu_score_binpack;
	c->engine.consolidate = false;
	c->on_decisions = on_decisions;
	c->on_decisions_ctx = w;
	c->slowdown = slowdown;
	c->slowdown_ctx = w;
	c->keep_jobs = true; /* w keeps placements by engine job id */
}

/* --- Reduction ------------------------------------------------------------------ */

int mu_etopo_size_class(int64_t gpus)
{
	return gpus <= 16 ? 0 : gpus <= 32 ? 1 : gpus <= 64 ? 2 : 3;
}

const char *mu_etopo_size_name(int c)
{
	static const char *const n[MU_ETOPO_NSIZES] = {"<=16", "17-32", "33-64", ">64"};
	return c >= 0 && c < MU_ETOPO_NSIZES ? n[c] : "?";
}

/* The gang metrics of out, also per size class, from the first
 * placements the hooks recorded.  O(jobs). */
static void reduce_gangs(const watch_t *w, mu_etopo_result_t *out)
{
	double tors = 0, slow = 0, ctors[MU_ETOPO_NSIZES] = {0};
	for (int32_t j = 0; j < w->njobs; j++) {
		if (!w->seen[j] || w->pods[j] < 2)
			continue;
		const mu_etopo_span_t *s = &w->first[j];
		mu_etopo_size_t *c = &out->sizes[mu_etopo_size_class(w->gpus[j])];
		bool in = s->tier <= mu_etopo_tightest(w->net, w->gpus[j]);
		out->gangs++;
		out->within += in;
		out->tors_hist[s->tors < MU_ETOPO_HIST ? s->tors : MU_ETOPO_HIST - 1]++;
		out->tier_gangs[s->tier]++;
		tors += s->tors;
		slow += mu_etopo_slowdown(s->tier);
		c->gangs++;
		c->within += in;
		ctors[c - out->sizes] += s->tors;
	}
	double n = (double)out->gangs;
	out->within_share = out->gangs ? (double)out->within / n : NAN;
	out->mean_tors = out->gangs ? tors / n : NAN;
	out->mean_slowdown = out->gangs ? slow / n : NAN;
	for (int c = 0; c < MU_ETOPO_NSIZES; c++)
		out->sizes[c].mean_tors = out->sizes[c].gangs ?
			ctors[c] / (double)out->sizes[c].gangs : NAN;
}

/* Mean wait and JCT of the gangs of each size class.  O(jobs). */
static void reduce_sizes(const mu_sim_result_t *r, mu_etopo_result_t *out)
{
	double w[MU_ETOPO_NSIZES] = {0}, j[MU_ETOPO_NSIZES] = {0};
	int64_t nw[MU_ETOPO_NSIZES] = {0}, nj[MU_ETOPO_NSIZES] = {0};
	for (size_t i = 0; i < r->njobs; i++) {
		const mu_sim_job_t *x = &r->jobs[i];
		int c = mu_etopo_size_class(x->gpu_milli / 1000);
		if (x->pods < 2 || x->start_s < 0)
			continue;
		w[c] += x->start_s - x->submit_s;
		nw[c]++;
		if (x->end_s >= 0) {
			j[c] += x->end_s - x->submit_s;
			nj[c]++;
		}
	}
	for (int c = 0; c < MU_ETOPO_NSIZES; c++) {
		out->sizes[c].mean_wait_s = nw[c] ? w[c] / (double)nw[c] : NAN;
		out->sizes[c].mean_jct_s = nj[c] ? j[c] / (double)nj[c] : NAN;
	}
}

/* Mean of v[0..n), NAN when empty. */
static double mean(const double *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : NAN;
}

/* The slowdown of a result job's first placement; 1 when unknown. */
static double job_slowdown(const watch_t *w, const char *name)
{
	size_t i;
	if (mu__namemap_get(&w->spec_of, name, &i) != MU_OK || !w->seen[i])
		return 1;
	return mu_etopo_slowdown(w->first[i].tier);
}

/* GPU-time the jobs held inside [0, window] (the window of submits, where
 * the offered load applies) over all GPUs x the window, into out->util;
 * the same with each job's time divided by its slowdown (the work it got
 * done) into out->util_useful.  O(jobs). */
static void window_util(const mu_sim_result_t *r, const watch_t *w,
			mu_etopo_result_t *out)
{
	double win = 0, held = 0, useful = 0;
	for (size_t i = 0; i < r->njobs; i++)
		win = fmax(win, r->jobs[i].submit_s);
	for (size_t i = 0; i < r->njobs; i++) {
		const mu_sim_job_t *j = &r->jobs[i];
		if (j->start_s < 0)
			continue;
		double end = j->end_s >= 0 ? j->end_s : r->summary.makespan_s;
		double a = fmin(j->start_s, win), b = fmin(end, win);
		double gs = (double)j->gpu_milli / 1000.0 * (b - a);
		held += gs;
		useful += gs / job_slowdown(w, j->name);
	}
	double cap = (double)r->summary.total_gpus * win;
	out->util = cap > 0 ? held / cap : NAN;
	out->util_useful = cap > 0 ? useful / cap : NAN;
}

/* Waits and JCTs of all jobs and of the gangs.  O(jobs log jobs). */
static int reduce_times(const mu_sim_result_t *r, mu_etopo_result_t *out)
{
	size_t n = r->njobs ? r->njobs : 1, nw = 0, nj = 0, gw = 0, gj = 0;
	double *wait = malloc(n * sizeof *wait), *jct = malloc(n * sizeof *jct);
	double *gwait = malloc(n * sizeof *gwait), *gjct = malloc(n * sizeof *gjct);
	int rc = wait && jct && gwait && gjct ? MU_OK : MU_ENOMEM;
	for (size_t i = 0; rc == MU_OK && i < r->njobs; i++) {
		const mu_sim_job_t *j = &r->jobs[i];
		bool gang = j->pods >= 2;
		if (j->start_s >= 0) {
			wait[nw++] = j->start_s - j->submit_s;
			if (gang)
				gwait[gw++] = j->start_s - j->submit_s;
		}
		if (j->end_s >= 0) {
			jct[nj++] = j->end_s - j->submit_s;
			if (gang)
				gjct[gj++] = j->end_s - j->submit_s;
		}
	}
	if (rc == MU_OK) {
		out->started = (int64_t)nw;
		out->mean_wait_s = mean(wait, nw);
		out->p99_wait_s = nw ? mu_percentile(wait, nw, 99) : NAN;
		out->mean_jct_s = mean(jct, nj);
		out->p99_jct_s = nj ? mu_percentile(jct, nj, 99) : NAN;
		out->gang_wait_s = mean(gwait, gw);
		out->gang_jct_s = mean(gjct, gj);
		out->gang_p99_jct_s = gj ? mu_percentile(gjct, gj, 99) : NAN;
	}
	free(wait);
	free(jct);
	free(gwait);
	free(gjct);
	return rc;
}

int mu_etopo_run(mu_specs_t *sp, const mu_etopo_net_t *net, mu_etopo_policy_t p,
		 uint64_t seed, mu_etopo_result_t *out, mu_diag_t *diag)
{
	memset(out, 0, sizeof *out);
	out->policy = p;
	if (p < 0 || p >= MU_ETOPO_NPOLICIES)
		return mu__diag(diag, MU_EINVAL, "eval topology", 0, 0, "unknown policy");
	watch_t w;
	int rc = watch_init(&w, sp, net);
	mu_sim_result_t r;
	memset(&r, 0, sizeof r);
	if (rc == MU_OK) {
		mu_sim_config_t cfg;
		set_requests(sp, net, p);
		run_config(&cfg, p, seed, &w);
		rc = mu_sim_run(sp, &cfg, &r, diag);
	}
	if (rc == MU_OK && w.err)
		rc = mu__diag(diag, w.err, "eval topology", 0, 0, "%s: placements "
			      "could not be followed: %s", mu_etopo_policy_name(p),
			      mu_strerror(w.err));
	if (rc == MU_OK) {
		reduce_gangs(&w, out);
		out->jobs = r.summary.jobs;
		out->completed = r.summary.completed;
		window_util(&r, &w, out);
		reduce_sizes(&r, out);
		out->util_run = r.summary.gpu_utilization;
		out->cycles = r.summary.cycles;
		out->preemptions = r.summary.preemptions;
		out->engine_s = r.summary.engine_s;
		out->makespan_s = r.summary.makespan_s;
		rc = reduce_times(&r, out);
	}
	if (rc == MU_ENOMEM)
		mu__diag(diag, rc, "eval topology", 0, 0, "out of memory");
	mu_sim_result_release(&r);
	watch_release(&w);
	return rc;
}
