/*
 * eval_openb.c - the FGD paper's openb experiment, run on muster's engine.
 *
 * mu_eval_run() follows the protocol of eval.h step by step: it orders the
 * arrivals for the seed (shuffle, then extend with replacement or cut at
 * tune x the cluster's GPUs), creates a fresh engine with the policy and
 * the pods' workload mix as its state (the paper's typical pods, or every
 * shape for muster; the paper's policies break ties in the order the
 * paper's kube-scheduler lists nodes, mu_engine_config_t.kube_ties),
 * adds the nodes and one queue, and
 * submits the pods one at a time as one-pod jobs, running one cycle per
 * arrival: the engine's own filters, scoring and device choice place them.
 * A pod the cycle leaves pending fits nowhere and is withdrawn (skipped).
 *
 * The harness uses the public engine API only.  To measure fragmentation
 * it keeps a mirror of every node's free CPU and per-device GPU share,
 * updated from the bind decisions (pods never leave), and the expected
 * fragmentation of each node (mu_gpu_frag), so one arrival costs one
 * node's measure.  At the end the mirror is checked against the engine's
 * totals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muster/eval.h"
#include "muster/sim.h"
#include "muster/util.h"

/* --- Input --------------------------------------------------------------- */

void mu_eval_input_release(mu_eval_input_t *in)
{
	if (!in)
		return;
	free(in->pods);
	mu_workload_mix_release(&in->mix);
	mu_workload_mix_release(&in->mix_all);
	mu_rollout_mem_release(&in->mem);
	memset(in, 0, sizeof *in);
}

/* Demand of one pod in milli-GPU: whole GPUs count 1000 each. */
static int64_t pod_demand(const mu_res_t *req)
{
	return req->v[MU_RES_GPU] > 0 ? 1000 * req->v[MU_RES_GPU]
				      : req->v[MU_RES_GPU_MILLI];
}

/* Appends every pod of jobs to in->pods and to the mix.  O(pods). */
static int input_add_pods(mu_eval_input_t *in, const mu_specs_t *pods)
{
	size_t n = 0;
	for (size_t j = 0; j < pods->njobs; j++)
		for (size_t p = 0; p < pods->jobs[j].npodsets; p++)
			n += (size_t)(pods->jobs[j].podsets[p].replicas > 0 ?
				      pods->jobs[j].podsets[p].replicas : 0);
	in->pods = malloc((n ? n : 1) * sizeof *in->pods);
	if (!in->pods)
		return MU_ENOMEM;
	for (size_t j = 0; j < pods->njobs; j++) {
		for (size_t p = 0; p < pods->jobs[j].npodsets; p++) {
			const mu_podset_spec_t *ps = &pods->jobs[j].podsets[p];
			for (int32_t r = 0; r < ps->replicas; r++) {
				mu_eval_pod_t *e = &in->pods[in->npods++];
				e->ps = ps;
				e->gpu_milli = pod_demand(&ps->req);
				in->pod_gpu_milli += e->gpu_milli;
			}
		}
	}
	int rc = mu_sim_workload_mix(pods, &in->mix);
	if (rc == MU_OK)
		rc = mu_sim_workload_mix(pods, &in->mix_all);
	/* muster's mix knows the cluster's devices per model (press_over)
	 * for the rollouts, which run without an engine: the engine counts
	 * its own (mu_gpu_models_t), the same sums here. */
	for (size_t i = 0; rc == MU_OK && i < in->nnodes; i++)
		rc = mu_workload_mix_supply(&in->mix_all, in->nodes[i].gpu_model,
					    in->nodes[i].alloc.v[MU_RES_GPU]);
	/* The pods' memory for the rollouts: the engine's fit holds it. */
	for (size_t j = 0; rc == MU_OK && j < pods->njobs; j++)
		for (size_t p = 0; rc == MU_OK && p < pods->jobs[j].npodsets; p++) {
			const mu_podset_spec_t *ps = &pods->jobs[j].podsets[p];
			if (ps->replicas > 0)
				rc = mu_rollout_mem_add(&in->mem, &in->mix_all, &ps->req,
							ps->gpu_models, ps->ngpu_models,
							ps->replicas);
		}
	return rc ? rc : mu_rollout_mem_finish(&in->mem, &in->mix_all);
}

int mu_eval_input_build(const mu_specs_t *nodes, const mu_specs_t *pods,
			mu_eval_input_t *in, mu_diag_t *diag)
{
	memset(in, 0, sizeof *in);
	mu_workload_mix_init(&in->mix);
	mu_workload_mix_init(&in->mix_all);
	mu_rollout_mem_init(&in->mem);
	in->mix.top = MU_EVAL_TYPICAL;
	in->nodes = nodes->nodes;
	in->nnodes = nodes->nnodes;
	for (size_t i = 0; i < nodes->nnodes; i++)
		in->gpus += nodes->nodes[i].alloc.v[MU_RES_GPU];
	if (in->gpus <= 0)
		return mu__diag(diag, MU_EINVAL, "nodes", 0, 0,
				"the cluster has no GPUs to evaluate");
	int rc = input_add_pods(in, pods);
	if (rc == MU_ERANGE)
		return mu__diag(diag, rc, "pods", 0, 0, "more than %d GPU models",
				MU_MIX_MAX_MODELS);
	if (rc)
		return mu__diag(diag, rc, "pods", 0, 0, "%s", mu_strerror(rc));
	if (in->pod_gpu_milli <= 0)
		return mu__diag(diag, MU_EINVAL, "pods", 0, 0,
				"no pod asks for a GPU");
	return MU_OK;
}

int mu_eval_input_choose(mu_eval_input_t *in, const mu_rollout_config_t *cfg,
			 int force)
{
	in->have_chosen = false;
	in->ncands = mu_muster_params_candidates(&in->mix_all, in->cands,
						 MU_EVAL_MAX_CANDS);
	if (in->ncands <= MU_EVAL_MAX_CANDS && in->late_cands)
		in->ncands += mu_muster_params_late(&in->mix_all,
						    in->cands + in->ncands,
						    MU_EVAL_MAX_CANDS - in->ncands);
	if (in->ncands > MU_EVAL_MAX_CANDS)
		return MU_ERANGE;
	memset(in->worth, 0, sizeof in->worth);
	if (force >= 0) {
		if ((size_t)force >= in->ncands)
			return MU_EINVAL;
		in->chosen = (size_t)force;
		in->have_chosen = true;
		return MU_OK;
	}
	/* The empty cluster as views: every device whole. */
	size_t n = in->nnodes;
	mu_res_t *freev = malloc((n ? n : 1) * sizeof *freev);
	int16_t (*gpu)[MU_MAX_GPUS] = malloc((n ? n : 1) * sizeof *gpu);
	mu_node_view_t *v = malloc((n ? n : 1) * sizeof *v);
	int rc = freev && gpu && v ? MU_OK : MU_ENOMEM;
	for (size_t i = 0; rc == MU_OK && i < n; i++) {
		const mu_node_spec_t *ns = &in->nodes[i];
		int ngpu = (int)ns->alloc.v[MU_RES_GPU];
		ngpu = ngpu < MU_MAX_GPUS ? ngpu : MU_MAX_GPUS;
		freev[i] = ns->alloc;
		freev[i].v[MU_RES_GPU_MILLI] = 1000 * (int64_t)ngpu;
		for (int g = 0; g < ngpu; g++)
			gpu[i][g] = 1000;
		v[i] = (mu_node_view_t){&ns->alloc, &freev[i], ngpu, gpu[i],
					ns->gpu_model, NULL};
	}
	mu_rollout_config_t c = *cfg;
	c.mem = &in->mem;
	if (rc == MU_OK)
		rc = mu_rollout_choose(&in->mix_all, v, n, in->cands, in->ncands,
				       &c, in->worth, &in->chosen);
	in->have_chosen = rc == MU_OK;
	free(freev);
	free(gpu);
	free(v);
	return rc;
}

/* --- Arrivals ------------------------------------------------------------ */

int32_t mu_eval_npoints(double tune)
{
	return (int32_t)floor(100.0 * tune + 1e-9) + 1;
}

int64_t mu_eval_bin(int64_t arrived_milli, int64_t cap_milli)
{
	if (cap_milli <= 0 || arrived_milli < 0)
		return 0;
	return (200 * arrived_milli + cap_milli) / (2 * cap_milli);
}

int mu_eval_arrivals(const mu_eval_input_t *in, uint64_t seed, double tune,
		     size_t **order, size_t *n)
{
	*order = NULL;
	*n = 0;
	if (!(tune > 0 && tune <= 100) || in->npods == 0)
		return MU_EINVAL;
	int64_t target = (int64_t)ceil(tune * (double)in->gpus * 1000.0 - 1e-6);
	size_t cap = in->npods, len = 0;
	size_t *v = malloc(cap * sizeof *v);
	if (!v)
		return MU_ENOMEM;
	uint64_t rng = seed;
	for (size_t i = 0; i < in->npods; i++)
		v[i] = i;
	for (size_t i = in->npods - 1; i > 0; i--) { /* Fisher-Yates */
		size_t j = (size_t)mu__rand_below(&rng, i + 1), t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
	int64_t sum = 0;
	while (sum < target) {
		if (len == in->npods && in->pod_gpu_milli <= 0)
			break; /* nothing could ever reach the target */
		if (len == cap) {
			size_t *nv = realloc(v, 2 * cap * sizeof *v);
			if (!nv) {
				free(v);
				return MU_ENOMEM;
			}
			v = nv;
			cap *= 2;
		}
		if (len >= in->npods) /* past the list: draw with replacement */
			v[len] = (size_t)mu__rand_below(&rng, in->npods);
		sum += in->pods[v[len++]].gpu_milli;
	}
	*order = v;
	*n = len;
	return MU_OK;
}

/* --- The x grid ---------------------------------------------------------- */

int mu_eval_grid_init(mu_eval_grid_t *g, int32_t npoints)
{
	memset(g, 0, sizeof *g);
	if (npoints < 1)
		return MU_EINVAL;
	g->sum_alloc = calloc((size_t)npoints, sizeof *g->sum_alloc);
	g->sum_frag = calloc((size_t)npoints, sizeof *g->sum_frag);
	g->count = calloc((size_t)npoints, sizeof *g->count);
	if (!g->sum_alloc || !g->sum_frag || !g->count) {
		mu_eval_grid_release(g);
		return MU_ENOMEM;
	}
	g->npoints = npoints;
	return MU_OK;
}

void mu_eval_grid_release(mu_eval_grid_t *g)
{
	free(g->sum_alloc);
	free(g->sum_frag);
	free(g->count);
	memset(g, 0, sizeof *g);
}

void mu_eval_grid_add(mu_eval_grid_t *g, int64_t x, double alloc_pct,
		      double frag_pct)
{
	if (x < 0 || x >= g->npoints)
		return;
	g->sum_alloc[x] += alloc_pct;
	g->sum_frag[x] += frag_pct;
	g->count[x]++;
}

void mu_eval_grid_means(const mu_eval_grid_t *g, double alloc0, double frag0,
			double *alloc, double *frag)
{
	double a = alloc0, f = frag0;
	for (int32_t x = 0; x < g->npoints; x++) {
		if (g->count[x]) {
			a = g->sum_alloc[x] / (double)g->count[x];
			f = g->sum_frag[x] / (double)g->count[x];
		}
		alloc[x] = a;
		frag[x] = f;
	}
}

double mu_eval_frag_ratio(double frag_milli, int64_t free_milli)
{
	return free_milli > 0 ? 100.0 * frag_milli / (double)free_milli : 0;
}

/* --- One run ------------------------------------------------------------- */

/* What the harness knows of one node: its free resources and per-device
 * free share (mirrored from binds), and its expected fragmentation. */
typedef struct mirror_node {
	mu_res_t alloc, free;
	int16_t gpu_free[MU_MAX_GPUS];
	int ngpu;
	const char *model;
	double frag;
} mirror_node_t;

/* The state of one run. */
typedef struct run_state {
	const mu_eval_input_t *in;
	mu_engine_t *e;
	mirror_node_t *nodes;   /* by engine node id */
	int32_t nnodes;
	double frag_sum;        /* sum of nodes' frag, milli-GPU */
	int64_t free_milli, cap_milli, alloc_milli, arrived_milli;
	mu_decisions_t dec;
	mu_workload_mix_t mix_rollout; /* muster-rollout's state: a shallow
	                                * copy of in->mix_all */
	bool horizon;                  /* muster-horizon: choose again */
	int32_t checkpoint;            /* the last passed; -1 none */
	mu_node_view_t *views;         /* the mirror as views, for rollouts */
} run_state_t;

static void mirror_view(const mirror_node_t *m, mu_node_view_t *v)
{
	v->alloc = &m->alloc;
	v->free = &m->free;
	v->ngpu = m->ngpu;
	v->gpu_free = m->gpu_free;
	v->gpu_model = m->model;
	v->gpu_kinds = NULL;
}

/* Recomputes node id's fragmentation and the cluster's sum.  O(one
 * node's measure). */
static void mirror_refrag(run_state_t *s, int32_t id)
{
	mu_node_view_t v;
	mirror_view(&s->nodes[id], &v);
	double f = mu_gpu_frag(&s->in->mix, &v);
	s->frag_sum += f - s->nodes[id].frag;
	s->nodes[id].frag = f;
}

/* Applies one bind decision of pod p to the mirror. */
static int mirror_bind(run_state_t *s, const mu_decision_t *d,
		       const mu_eval_pod_t *p)
{
	if (d->node < 0 || d->node >= s->nnodes)
		return MU_ESTATE;
	mirror_node_t *m = &s->nodes[d->node];
	const mu_res_t *req = &p->ps->req;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (r != MU_RES_GPU && r != MU_RES_GPU_MILLI)
			m->free.v[r] -= req->v[r];
	for (int g = 0; g < m->ngpu; g++) {
		if (!(d->gpus & ((uint64_t)1 << g)))
			continue;
		if (m->gpu_free[g] == 1000)
			m->free.v[MU_RES_GPU]--;
		m->gpu_free[g] = (int16_t)(d->gpu_milli > 0 ?
					   m->gpu_free[g] - d->gpu_milli : 0);
	}
	m->free.v[MU_RES_GPU_MILLI] -= p->gpu_milli;
	s->free_milli -= p->gpu_milli;
	s->alloc_milli += p->gpu_milli;
	mirror_refrag(s, d->node);
	return MU_OK;
}

/* Creates the engine, adds the nodes and the queue, fills the mirror. */
static int run_setup(run_state_t *s, const mu_eval_config_t *cfg)
{
	mu_engine_config_t ec;
	mu_engine_config_defaults(&ec);
	ec.score = cfg->score ? cfg->score : &mu_score_muster;
	s->horizon = ec.score == &mu_score_muster_horizon;
	s->checkpoint = -1;
	bool rollout = ec.score == &mu_score_muster_rollout || s->horizon;
	bool own = ec.score == &mu_score_muster || ec.score == &mu_score_muster_mg ||
		   ec.score == &mu_score_muster_supply || rollout;
	/* The paper's policies measure against its typical pods; muster's
	 * own measure against every shape of the workload. */
	ec.score_state = own ? &s->in->mix_all : &s->in->mix;
	if (rollout) {
		if (!s->in->have_chosen)
			return MU_EINVAL;
		s->mix_rollout = s->in->mix_all;
		s->mix_rollout.muster = &s->in->cands[s->in->chosen];
		ec.score_state = &s->mix_rollout;
	}
	/* The paper's policies break ties as its kube-scheduler lists nodes;
	 * muster keeps the engine's own rule, the lower node id. */
	ec.kube_ties = !own;
	ec.seed = cfg->seed;
	ec.preemption = ec.reclaim = false;
	ec.starvation_after = 0;
	int rc = mu_engine_new(&ec, &s->e);
	if (rc)
		return rc;
	s->nodes = calloc(s->in->nnodes ? s->in->nnodes : 1, sizeof *s->nodes);
	if (!s->nodes)
		return MU_ENOMEM;
	for (size_t i = 0; i < s->in->nnodes; i++) {
		const mu_node_spec_t *n = &s->in->nodes[i];
		mu_id_t id;
		if ((rc = mu_engine_node_upsert(s->e, n, &id)) != MU_OK)
			return rc;
		if (id != s->nnodes)
			return MU_EEXIST; /* a name given twice */
		mirror_node_t *m = &s->nodes[s->nnodes++];
		m->alloc = n->alloc;
		m->free = n->alloc;
		m->ngpu = (int)n->alloc.v[MU_RES_GPU];
		m->model = n->gpu_model;
		for (int g = 0; g < m->ngpu; g++)
			m->gpu_free[g] = 1000;
		m->free.v[MU_RES_GPU_MILLI] = 1000 * (int64_t)m->ngpu;
		s->cap_milli += 1000 * (int64_t)m->ngpu;
		mirror_refrag(s, id);
	}
	s->free_milli = s->cap_milli;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "eval";
	return mu_engine_queue_upsert(s->e, &q);
}

/* Submits pod p as one-pod job k and runs one cycle; *placed tells
 * whether it was bound.  An unplaced job is withdrawn. */
static int run_arrival(run_state_t *s, size_t k, const mu_eval_pod_t *p,
		       bool *placed)
{
	char name[32];
	snprintf(name, sizeof name, "pod-%zu", k);
	mu_podset_spec_t ps = *p->ps;
	ps.replicas = 1;
	mu_job_spec_t j = {.name = name, .queue = "eval", .type = MU_JOB_BATCH,
			   .preemptible = true, .min_member = 1,
			   .podsets = &ps, .npodsets = 1,
			   .submit = (mu_time_t)k};
	mu_id_t jid;
	int rc = mu_engine_job_submit(s->e, &j, (mu_time_t)k, &jid);
	if (rc)
		return rc;
	s->dec.n = 0;
	if ((rc = mu_engine_cycle(s->e, (mu_time_t)k, &s->dec)) != MU_OK)
		return rc;
	*placed = false;
	for (size_t i = 0; i < s->dec.n && rc == MU_OK; i++)
		if (s->dec.v[i].kind == MU_DEC_BIND && s->dec.v[i].job == jid) {
			rc = mirror_bind(s, &s->dec.v[i], p);
			*placed = true;
		}
	if (rc == MU_OK && !*placed)
		rc = mu_engine_job_finish(s->e, jid, (mu_time_t)k);
	return rc;
}

const char *mu_eval_waste_name(int i)
{
	static const char *const names[MU_EVAL_WASTE_BINS] = {
		"holes_lt100", "holes_100_189", "holes_190_199",
		"holes_200_499", "holes_500_999", "whole"};
	return i >= 0 && i < MU_EVAL_WASTE_BINS ? names[i] : NULL;
}

/* Sums the mirror's free GPU capacity into out->waste_milli by device
 * (see mu_eval_waste_name).  O(devices). */
static void run_waste(const run_state_t *s, mu_eval_run_t *out)
{
	static const int16_t upto[] = {100, 190, 200, 500, 1000};
	for (int32_t i = 0; i < s->nnodes; i++) {
		const mirror_node_t *m = &s->nodes[i];
		for (int g = 0; g < m->ngpu; g++) {
			int16_t f = m->gpu_free[g];
			int b = 0;
			while (b < MU_EVAL_WASTE_WHOLE && f >= upto[b])
				b++;
			if (f > 0)
				out->waste_milli[b] += f;
		}
	}
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* muster-horizon at a checkpoint: chooses the setting again by rollouts
 * from the mirror's free capacity and the demand asked so far (the
 * rollouts' seed moved by the checkpoint's index, never the eval's), and
 * when it changes, puts it in the engine's mix and drops the engine's
 * kept scores; notes in out how decisive the choice was (flat, last_top,
 * last_lead).  O(one mu_rollout_choose). */
static int run_rechoose(run_state_t *s, const mu_eval_config_t *cfg,
			mu_eval_run_t *out)
{
	const mu_eval_input_t *in = s->in;
	if (!s->views) {
		s->views = malloc((size_t)(s->nnodes ? s->nnodes : 1) * sizeof *s->views);
		if (!s->views)
			return MU_ENOMEM;
	}
	for (int32_t i = 0; i < s->nnodes; i++)
		mirror_view(&s->nodes[i], &s->views[i]);
	mu_rollout_config_t rc_cfg = {.seed = 1};
	if (cfg->rollout)
		rc_cfg = *cfg->rollout;
	rc_cfg.seed += 0x9E3779B97F4A7C15ull * (uint64_t)(s->checkpoint + 1);
	rc_cfg.mem = &in->mem;
	rc_cfg.asked = (double)s->arrived_milli / (double)s->cap_milli;
	rc_cfg.judge_at = cfg->horizon && cfg->horizon->judge_at > 0 ?
			  cfg->horizon->judge_at : 1.0;
	size_t best;
	int64_t worth[MU_EVAL_MAX_CANDS];
	if (in->ncands > MU_EVAL_MAX_CANDS)
		return MU_EINVAL;
	int rc = mu_rollout_choose(&in->mix_all, s->views, (size_t)s->nnodes,
				   in->cands, in->ncands, &rc_cfg, worth, &best);
	if (rc)
		return rc;
	int64_t below = INT64_MIN;
	out->last_top = 0;
	size_t first = in->ncands;
	for (size_t c = 0; c < in->ncands; c++) {
		if (worth[c] == worth[best] && first == in->ncands)
			first = c;
		out->last_top += worth[c] == worth[best];
		if (worth[c] < worth[best] && worth[c] > below)
			below = worth[c];
	}
	out->last_lead = below == INT64_MIN ? 0 : worth[best] - below;
	out->flat += out->last_top == (int32_t)in->ncands;
	out->broken += first != best;
	out->rechoices++;
	if (&in->cands[best] != s->mix_rollout.muster) {
		s->mix_rollout.muster = &in->cands[best];
		mu_engine_rescore(s->e);
		out->changes++;
	}
	out->last_choice = best;
	return MU_OK;
}

/* Arrives every pod of order, recording each into the grid. */
static int run_arrivals(run_state_t *s, const mu_eval_config_t *cfg,
			const size_t *order, size_t n, mu_eval_grid_t *g,
			mu_eval_run_t *out)
{
	for (size_t k = 0; k < n; k++) {
		const mu_eval_pod_t *p = &s->in->pods[order[k]];
		bool placed;
		int rc = run_arrival(s, k, p, &placed);
		if (rc)
			return rc;
		out->arrivals++;
		out->placed += placed;
		out->skipped += !placed;
		s->arrived_milli += p->gpu_milli;
		if (s->horizon) {
			double fill = cfg->rollout && cfg->rollout->fill > 0 ?
				      cfg->rollout->fill : 1.3;
			int32_t cp = mu_rollout_checkpoint(
				cfg->horizon, fill,
				(double)s->arrived_milli / (double)s->cap_milli);
			if (cp > s->checkpoint) {
				s->checkpoint = cp;
				if ((rc = run_rechoose(s, cfg, out)) != MU_OK)
					return rc;
			}
		}
		mu_eval_grid_add(g, mu_eval_bin(s->arrived_milli, s->cap_milli),
				 pct(s->alloc_milli, s->cap_milli),
				 mu_eval_frag_ratio(s->frag_sum, s->free_milli));
		if (cfg->progress && (k % 512 == 0 || k + 1 == n))
			cfg->progress(cfg->progress_ctx, (double)(k + 1) / (double)n);
	}
	mu_res_t alloc, used;
	mu_engine_totals(s->e, &alloc, &used);
	if (used.v[MU_RES_GPU] != s->alloc_milli || alloc.v[MU_RES_GPU] != s->cap_milli)
		return MU_ESTATE; /* the mirror lost track of the engine */
	run_waste(s, out);
	return MU_OK;
}

void mu_eval_run_release(mu_eval_run_t *r)
{
	if (!r)
		return;
	free(r->alloc);
	free(r->frag);
	memset(r, 0, sizeof *r);
}

int mu_eval_run(const mu_eval_input_t *in, const mu_eval_config_t *cfg,
		mu_eval_run_t *out, mu_diag_t *diag)
{
	memset(out, 0, sizeof *out);
	double tune = cfg->tune > 0 ? cfg->tune : 1.3;
	run_state_t s = {.in = in};
	mu_eval_grid_t g = {0};
	size_t *order = NULL, n = 0;
	mu_decisions_init(&s.dec);
	out->policy = cfg->score ? cfg->score->name : mu_score_muster.name;
	out->seed = cfg->seed;
	out->npoints = mu_eval_npoints(tune);
	out->alloc = calloc((size_t)out->npoints, sizeof *out->alloc);
	out->frag = calloc((size_t)out->npoints, sizeof *out->frag);
	int rc = out->alloc && out->frag ? MU_OK : MU_ENOMEM;
	if (rc == MU_OK)
		rc = mu_eval_arrivals(in, cfg->seed, tune, &order, &n);
	if (rc == MU_OK)
		rc = mu_eval_grid_init(&g, out->npoints);
	if (rc == MU_OK)
		rc = run_setup(&s, cfg);
	if (rc == MU_OK && s.horizon)
		out->last_choice = in->chosen;
	double frag0 = mu_eval_frag_ratio(s.frag_sum, s.free_milli);
	if (rc == MU_OK)
		rc = run_arrivals(&s, cfg, order, n, &g, out);
	if (rc == MU_OK) {
		mu_eval_grid_means(&g, 0, frag0, out->alloc, out->frag);
		out->arrived_milli = s.arrived_milli;
		out->alloc_milli = s.alloc_milli;
		out->frag_milli = s.frag_sum;
	} else {
		mu__diag(diag, rc, "eval", 0, 0, "policy %s, seed %llu: %s",
			 out->policy, (unsigned long long)cfg->seed,
			 rc == MU_ESTATE ? "the harness's node mirror disagrees "
					   "with the engine" : mu_strerror(rc));
	}
	mu_eval_grid_release(&g);
	free(order);
	free(s.nodes);
	free(s.views);
	mu_decisions_release(&s.dec);
	mu_engine_free(s.e);
	return rc;
}
