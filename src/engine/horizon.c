/*
 * horizon.c - muster-horizon outside `muster eval`: muster's settings
 * chosen again as a cluster fills, for the simulator and the live
 * scheduler.
 *
 * The eval (eval_openb.c) re-chooses at checkpoints of the GPU demand
 * asked, from a mix it knows in advance.  Here a harness that does not
 * know the workload to come keeps the demand seen so far (each arrived
 * pod's shape, counted: the paper's typical pods built from the workload
 * as it arrives; a shape is CPU, memory, GPUs or a share, and models,
 * found by a hash of them) and asks, after its cycles, whether a choice is due: the
 * cluster's GPU allocation passed a checkpoint (from, from + every, ...)
 * above the last choice's, and min_interval of the caller's clock went by
 * since it.  A choice is a snapshot of the engine's schedulable nodes and
 * of the seen demand with its memory requests, so that the rollouts fit
 * memory as the engine does (prepare), mu_rollout_choose() on the
 * snapshot alone
 * (job_run: a daemon runs it on a worker thread), and the winner recorded
 * (apply), after which the caller drops the engine's scores.
 *
 * No I/O, no globals, no clock: the time is the caller's argument.
 */
#include <math.h>
#include <stdio.h>

#include "engine/engine_int.h"
#include "muster/util.h"

#define HZ_MAX_CANDS 16
#define HZ_MAX_MODELS 8 /* model names kept per shape */

/* One shape of the demand seen. */
struct mu__hz_shape {
	mu_res_t req;
	char *models[HZ_MAX_MODELS]; /* owned, sorted */
	int32_t nmodels;
	int64_t count;
};

/* A choice's snapshot and result; everything owned. */
struct mu_horizon_job {
	mu_workload_mix_t mix;
	mu_rollout_mem_t mem; /* the mix's memory requests */
	mu_node_view_t *views;
	mu_res_t *alloc, *free;
	int16_t *gpu;      /* [node x MU_MAX_GPUS] */
	char **model;      /* per node, owned, NULL none */
	size_t nnodes;
	mu_muster_params_t cands[HZ_MAX_CANDS];
	size_t ncands, best;
	int64_t worth[HZ_MAX_CANDS];
	mu_rollout_config_t rc;
	int32_t checkpoint;
	double share;
	mu_time_t at;
	int result;        /* 1: not run yet */
};

/* A malloc'd copy of s (strdup is not C11). */
static char *hz_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = malloc(n);
	if (c)
		memcpy(c, s, n);
	return c;
}

static double hz_fill(const mu_horizon_config_t *c)
{
	return c->rollout.fill > 0 ? c->rollout.fill : 1.3;
}

int mu_horizon_init(mu_horizon_t *h, const mu_horizon_config_t *cfg,
		    char *why, size_t whylen)
{
	memset(h, 0, sizeof *h);
	const char *bad = NULL;
	const mu_rollout_horizon_t *a = &cfg->at;
	if (!(a->from >= 0 && a->from <= 1))
		bad = "from: expected a share of the GPUs from 0 to 1 (0: 0.5)";
	else if (!(a->every >= 0 && a->every <= 1))
		bad = "every: expected a share of the GPUs from 0 to 1 (0: 0.1)";
	else if (!(a->judge_at >= 0 && a->judge_at <= 100))
		bad = "judge_at: expected 0 to 100";
	else if (cfg->min_interval < 0)
		bad = "min-interval: expected a duration of 0 or more";
	else if (!(cfg->rollout.fill == 0 || (cfg->rollout.fill > 1 &&
					       cfg->rollout.fill <= 100)))
		bad = "fill: expected a share of the GPUs above 1";
	else if (cfg->rollout.rollouts < 0 || cfg->rollout.max_nodes < 0)
		bad = "rollouts and nodes: expected 0 or more";
	if (bad) {
		if (why && whylen)
			snprintf(why, whylen, "%s", bad);
		return MU_EINVAL;
	}
	h->cfg = *cfg;
	mu_muster_params_defaults(&h->params);
	mu_workload_mix_init(&h->mix);
	h->mix.muster = &h->params;
	h->checkpoint = -1;
	h->last_at = MU_TIME_NONE;
	return MU_OK;
}

static void hz_shape_release(struct mu__hz_shape *s)
{
	for (int32_t i = 0; i < s->nmodels; i++)
		free(s->models[i]);
}

void mu_horizon_release(mu_horizon_t *h)
{
	if (!h)
		return;
	for (int32_t i = 0; i < h->nseen; i++)
		hz_shape_release(&h->seen[i]);
	free(h->seen);
	free(h->seen_free);
	if (h->seen_ix) {
		mu__strmap_release(h->seen_ix);
		free(h->seen_ix);
	}
	mu_workload_mix_release(&h->mix);
	memset(h, 0, sizeof *h);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shape of req on models: the resources the rollouts model (CPU,
 * memory, GPUs, a share), the models sorted.  Returns false past
 * HZ_MAX_MODELS. */
static bool hz_key(const mu_res_t *req, const char *const *models,
		   size_t nmodels, struct mu__hz_shape *k)
{
	memset(k, 0, sizeof *k);
	if (nmodels > HZ_MAX_MODELS)
		return false;
	k->req.v[MU_RES_CPU] = req->v[MU_RES_CPU];
	k->req.v[MU_RES_MEM] = req->v[MU_RES_MEM] > 0 ? req->v[MU_RES_MEM] : 0;
	k->req.v[MU_RES_GPU] = req->v[MU_RES_GPU];
	k->req.v[MU_RES_GPU_MILLI] = req->v[MU_RES_GPU] ? 0 : req->v[MU_RES_GPU_MILLI];
	k->req.v[MU_RES_PODS] = 1;
	for (size_t i = 0; i < nmodels; i++)
		k->models[i] = (char *)models[i]; /* borrowed until kept */
	k->nmodels = (int32_t)nmodels;
	qsort(k->models, nmodels, sizeof *k->models, cmp_str);
	return true;
}

/* k's key in the seen index: its four numbers and its models, each
 * model after a unit separator (names are label values, which never hold
 * one).  Writes into buf when it holds the key, else into a malloc'd
 * string the caller frees; NULL on OOM.  O(models). */
static char *hz_index_key(const struct mu__hz_shape *k, char *buf, size_t len)
{
	size_t need = 4 * 21 + 1;
	for (int32_t i = 0; i < k->nmodels; i++)
		need += strlen(k->models[i]) + 1;
	char *s = need <= len ? buf : malloc(need);
	if (!s)
		return NULL;
	int n = snprintf(s, need, "%lld/%lld/%lld/%lld",
			 (long long)k->req.v[MU_RES_CPU], (long long)k->req.v[MU_RES_MEM],
			 (long long)k->req.v[MU_RES_GPU],
			 (long long)k->req.v[MU_RES_GPU_MILLI]);
	size_t at = n > 0 ? (size_t)n : 0;
	for (int32_t i = 0; i < k->nmodels; i++) {
		size_t l = strlen(k->models[i]);
		s[at++] = '\x1f';
		memcpy(s + at, k->models[i], l);
		at += l;
	}
	s[at] = 0;
	return s;
}

/* Adds the new shape k (its models borrowed) to h->seen and the index,
 * in a slot left by a shape whose pods all left (h->seen_free) or a new
 * one, *at: the models copied.  O(models) expected. */
static int hz_seen_new(mu_horizon_t *h, struct mu__hz_shape *k,
		       const char *key, int32_t *at)
{
	if (!h->seen_ix && !(h->seen_ix = calloc(1, sizeof *h->seen_ix)))
		return MU_ENOMEM;
	int rc = h->nfree ? MU_OK : mu__grow((void **)&h->seen, &h->seen_cap,
					      h->nseen + 1, sizeof *h->seen);
	if (rc)
		return rc;
	for (int32_t i = 0; i < k->nmodels; i++)
		if (!(k->models[i] = hz_dup(k->models[i]))) {
			k->nmodels = i;
			hz_shape_release(k);
			return MU_ENOMEM;
		}
	int32_t slot = h->nfree ? h->seen_free[h->nfree - 1] : h->nseen;
	if (!mu__strmap_put(h->seen_ix, key, slot)) {
		hz_shape_release(k);
		return MU_ENOMEM;
	}
	if (h->nfree)
		h->nfree--;
	else
		h->nseen++;
	h->seen[slot] = *k;
	*at = slot;
	return MU_OK;
}

/* The shape at slot `at`, its pods all gone: out of the index, its
 * models freed, its slot kept for the next new shape (left as it was,
 * count 0, when there is no memory for that).  O(models). */
static void hz_seen_drop(mu_horizon_t *h, int32_t at)
{
	struct mu__hz_shape *s = &h->seen[at];
	char buf[256], *key = hz_index_key(s, buf, sizeof buf);
	if (!key || mu__grow((void **)&h->seen_free, &h->free_cap, h->nfree + 1,
			     sizeof *h->seen_free) != MU_OK) {
		if (key != buf)
			free(key);
		return;
	}
	mu__strmap_del(h->seen_ix, key);
	if (key != buf)
		free(key);
	hz_shape_release(s);
	s->nmodels = 0;
	h->seen_free[h->nfree++] = at;
}

int mu_horizon_seen_at(mu_horizon_t *h, const mu_res_t *req,
		       const char *const *models, size_t nmodels, int64_t count,
		       int32_t *at)
{
	if (at)
		*at = -1;
	if (!h || !req || count < 0)
		return MU_EINVAL;
	if (count == 0)
		return MU_OK;
	int64_t gpus = req->v[MU_RES_GPU], milli = req->v[MU_RES_GPU_MILLI];
	if (req->v[MU_RES_CPU] < 0 || gpus < 0 || gpus > MU_MAX_GPUS ||
	    (gpus == 0 && (milli < 0 || milli > 1000)))
		return MU_OK; /* fits no node of the rollouts' model: not kept */
	struct mu__hz_shape k;
	if (!hz_key(req, models, nmodels, &k))
		hz_key(req, NULL, 0, &k); /* too many models: any model */
	char buf[256], *key = hz_index_key(&k, buf, sizeof buf);
	if (!key)
		return MU_ENOMEM;
	int32_t i = h->seen_ix ? mu__strmap_get(h->seen_ix, key) : -1;
	int rc = MU_OK;
	if (i < 0)
		rc = hz_seen_new(h, &k, key, &i);
	if (key != buf)
		free(key);
	if (rc)
		return rc;
	h->mix_reshaped |= h->seen[i].count == 0; /* a shape (back) in the mix */
	h->seen[i].count += count;
	h->seen_pods += count;
	h->mix_moves += count;
	if (at)
		*at = i;
	return MU_OK;
}

int mu_horizon_seen(mu_horizon_t *h, const mu_res_t *req,
		    const char *const *models, size_t nmodels, int64_t count)
{
	return mu_horizon_seen_at(h, req, models, nmodels, count, NULL);
}

int mu_horizon_unseen(mu_horizon_t *h, int32_t at, int64_t count)
{
	if (!h || at < 0 || at >= h->nseen || count < 0 || count > h->seen[at].count)
		return MU_EINVAL;
	h->seen[at].count -= count;
	h->seen_pods -= count;
	h->mix_moves += count;
	if (count > 0 && h->seen[at].count == 0) { /* a shape gone */
		h->mix_reshaped = true;
		hz_seen_drop(h, at);
	}
	return MU_OK;
}

bool mu_horizon_due(mu_horizon_t *h, const mu_engine_t *e, mu_time_t now,
		    int32_t *cp, double *share)
{
	mu_res_t alloc, used;
	mu_engine_totals(e, &alloc, &used);
	*share = alloc.v[MU_RES_GPU] > 0 ?
		 (double)used.v[MU_RES_GPU] / (double)alloc.v[MU_RES_GPU] : 0;
	*cp = mu_rollout_checkpoint(&h->cfg.at, hz_fill(&h->cfg), *share);
	if (h->busy || h->seen_pods == 0)
		return false;
	if (*cp < h->checkpoint)
		h->checkpoint = *cp; /* fell below: passing it again counts */
	if (*cp <= h->checkpoint)
		return false;
	return h->last_at == MU_TIME_NONE ||
	       now - h->last_at >= h->cfg.min_interval;
}

void mu_horizon_job_free(mu_horizon_job_t *j)
{
	if (!j)
		return;
	mu_workload_mix_release(&j->mix);
	mu_rollout_mem_release(&j->mem);
	for (size_t i = 0; j->model && i < j->nnodes; i++)
		free(j->model[i]);
	free(j->model);
	free(j->views);
	free(j->alloc);
	free(j->free);
	free(j->gpu);
	free(j);
}

/* Copies e's schedulable nodes into j.  O(nodes x devices). */
static int hz_snapshot(mu_horizon_job_t *j, const mu_engine_t *e)
{
	int32_t n = mu_engine_nnodes(e);
	size_t cap = n > 0 ? (size_t)n : 1;
	j->views = calloc(cap, sizeof *j->views);
	j->alloc = calloc(cap, sizeof *j->alloc);
	j->free = calloc(cap, sizeof *j->free);
	j->gpu = calloc(cap * MU_MAX_GPUS, sizeof *j->gpu);
	j->model = calloc(cap, sizeof *j->model);
	if (!j->views || !j->alloc || !j->free || !j->gpu || !j->model)
		return MU_ENOMEM;
	bool gpus = false;
	for (mu_id_t id = 0; id < n; id++) {
		mu_node_info_t ni;
		if (mu_engine_node_info(e, id, &ni) != MU_OK || ni.unschedulable)
			continue;
		size_t k = j->nnodes;
		j->alloc[k] = ni.alloc;
		j->free[k] = ni.free;
		int16_t *g = j->gpu + k * MU_MAX_GPUS;
		memcpy(g, ni.gpu_free, sizeof ni.gpu_free);
		if (ni.gpu_model && !(j->model[k] = hz_dup(ni.gpu_model)))
			return MU_ENOMEM;
		j->nnodes++;
		j->views[k] = (mu_node_view_t){&j->alloc[k], &j->free[k], ni.ngpu,
					       g, j->model[k], NULL};
		gpus |= ni.ngpu > 0;
	}
	return gpus ? MU_OK : MU_ENOENT;
}

/* Adds the demand seen (the shapes with pods) to mix and finishes it;
 * any[i], when any is not NULL, says that shape i went in as any model
 * (past the mix's models).  O(shapes log shapes). */
static int hz_mix_build(mu_workload_mix_t *mix, const mu_horizon_t *h, bool *any)
{
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < h->nseen; i++) {
		const struct mu__hz_shape *s = &h->seen[i];
		if (s->count <= 0)
			continue; /* all its pods gone (mu_horizon_unseen) */
		rc = mu_workload_mix_add(mix, &s->req, (const char *const *)s->models,
					 (size_t)s->nmodels, s->count);
		if (rc == MU_ERANGE) { /* past the mix's models: any model */
			if (any)
				any[i] = true;
			rc = mu_workload_mix_add(mix, &s->req, NULL, 0, s->count);
		}
	}
	return rc == MU_OK ? mu_workload_mix_finish(mix) : rc;
}

/* Builds j's mix from the demand seen, with the cluster's devices per
 * model as e counts them now (mu_engine_gpu_models: the rollouts' press_over
 * sees nodes added, removed or cordoned since the start), and the mix's
 * memory requests for the rollouts.  O(shapes log shapes + models). */
static int hz_mix(mu_horizon_job_t *j, const mu_horizon_t *h,
		  const mu_engine_t *e)
{
	mu_workload_mix_init(&j->mix);
	mu_rollout_mem_init(&j->mem);
	bool *any = calloc(h->nseen > 0 ? (size_t)h->nseen : 1, sizeof *any);
	int rc = any ? hz_mix_build(&j->mix, h, any) : MU_ENOMEM;
	const mu_gpu_models_t *g = mu_engine_gpu_models(e);
	for (int32_t i = 0; rc == MU_OK && g && i < g->n; i++)
		if (g->devices[i] > 0)
			rc = mu_workload_mix_supply(&j->mix, g->model[i], g->devices[i]);
	for (int32_t i = 0; rc == MU_OK && i < h->nseen; i++) {
		const struct mu__hz_shape *s = &h->seen[i];
		if (s->count > 0)
			rc = mu_rollout_mem_add(&j->mem, &j->mix, &s->req,
						(const char *const *)s->models,
						any[i] ? 0 : (size_t)s->nmodels, s->count);
	}
	if (rc == MU_OK)
		rc = mu_rollout_mem_finish(&j->mem, &j->mix);
	free(any);
	return rc;
}

int mu_horizon_live_mix(mu_horizon_t *h)
{
	if (!h)
		return MU_EINVAL;
	if (!h->mix_reshaped && 16 * h->mix_moves <= h->mix_pods)
		return 0; /* the same shapes, 1/16 of the pods moved at most */
	mu_workload_mix_t m;
	mu_workload_mix_init(&m);
	m.top = h->mix.top; /* the caller's typical pods (fgd's) */
	int rc = h->seen_pods > 0 ? hz_mix_build(&m, h, NULL) : MU_OK;
	if (rc) {
		mu_workload_mix_release(&m);
		return rc;
	}
	mu_workload_mix_release(&h->mix); /* m's index was made first: a new address */
	h->mix = m;
	h->mix.muster = &h->params;
	h->mix_pods = h->seen_pods;
	h->mix_moves = 0;
	h->mix_reshaped = false;
	return 1;
}

int mu_horizon_prepare(mu_horizon_t *h, const mu_engine_t *e, mu_time_t now,
		       int32_t cp, double share, mu_horizon_job_t **out)
{
	*out = NULL;
	if (h->busy || h->seen_pods == 0)
		return MU_ESTATE;
	mu_horizon_job_t *j = calloc(1, sizeof *j);
	if (!j)
		return MU_ENOMEM;
	int rc = hz_snapshot(j, e);
	if (rc == MU_OK)
		rc = hz_mix(j, h, e);
	if (rc) {
		mu_horizon_job_free(j);
		return rc;
	}
	j->ncands = mu_muster_params_candidates(&j->mix, j->cands, HZ_MAX_CANDS);
	if (j->ncands > HZ_MAX_CANDS)
		j->ncands = HZ_MAX_CANDS;
	j->rc = h->cfg.rollout;
	if (j->rc.seed == 0)
		j->rc.seed = 1;
	/* Each choice its own draws, never the harness's stream. */
	j->rc.seed += 0x9E3779B97F4A7C15ull * (uint64_t)(h->choices + 1);
	j->rc.fill = hz_fill(&h->cfg);
	j->rc.asked = share < j->rc.fill ? share : 0;
	j->rc.judge_at = h->cfg.at.judge_at > 0 ? h->cfg.at.judge_at : 1.0;
	j->rc.mem = &j->mem; /* the engine's fit holds memory: so do the rollouts */
	j->checkpoint = cp;
	j->share = share;
	j->at = now;
	j->result = 1;
	h->busy = true;
	h->checkpoint = cp;
	h->last_at = now;
	*out = j;
	return MU_OK;
}

int mu_horizon_job_run(mu_horizon_job_t *j)
{
	j->result = mu_rollout_choose(&j->mix, j->views, j->nnodes, j->cands,
				      j->ncands, &j->rc, j->worth, &j->best);
	return j->result;
}

const mu_workload_mix_t *mu_horizon_job_mix(const mu_horizon_job_t *j)
{
	return j ? &j->mix : NULL;
}

void mu_horizon_cancel(mu_horizon_t *h)
{
	h->busy = false;
}

int mu_horizon_apply(mu_horizon_t *h, mu_horizon_job_t *j,
		     mu_horizon_choice_t *choice)
{
	h->busy = false;
	if (!j || j->result != MU_OK)
		return MU_EINVAL;
	mu_horizon_choice_t c = {.at = j->at, .checkpoint = j->checkpoint,
				 .share = j->share, .winner = (int32_t)j->best,
				 .ncands = (int32_t)j->ncands,
				 .params = j->cands[j->best],
				 .shapes = j->mix.ntypes,
				 .nodes = (int32_t)j->nnodes,
				 .pods = j->mix.pods};
	int64_t below = INT64_MIN;
	for (size_t i = 0; i < j->ncands; i++) {
		c.top += j->worth[i] == j->worth[j->best];
		if (j->worth[i] < j->worth[j->best] && j->worth[i] > below)
			below = j->worth[i];
	}
	c.lead = below == INT64_MIN ? 0 : j->worth[j->best] - below;
	c.changed = !mu_muster_params_equal(&c.params, &h->params);
	h->params = c.params;
	if (h->cfg.own_mix) { /* the engine's mix: this snapshot's demand */
		mu_workload_mix_t old = h->mix;
		h->mix = j->mix;
		j->mix = old;
		h->mix.muster = &h->params;
	}
	h->choices++;
	h->changes += c.changed;
	h->last = c;
	if (choice)
		*choice = c;
	return MU_OK;
}

const char *mu_horizon_format(const mu_horizon_choice_t *c, char *buf,
			      size_t len)
{
	char p[96];
	snprintf(buf, len, "checkpoint %d (%.0f%% of GPUs allocated): %s "
		 "(candidate %d of %d, lead %lld milli-GPU%s%s)", (int)c->checkpoint,
		 100 * c->share, mu_muster_params_format(&c->params, p, sizeof p),
		 (int)c->winner + 1, (int)c->ncands, (long long)c->lead,
		 c->top > 1 ? ", tied" : "", c->changed ? ", changed" : "");
	return buf;
}

int mu_horizon_step(mu_horizon_t *h, mu_engine_t *e, mu_time_t now,
		    mu_horizon_choice_t *choice)
{
	int32_t cp;
	double share;
	if (!h || !mu_horizon_due(h, e, now, &cp, &share))
		return 0;
	mu_horizon_job_t *j;
	int rc = mu_horizon_prepare(h, e, now, cp, share, &j);
	if (rc == MU_ENOENT)
		return 0; /* no GPUs to choose for */
	if (rc == MU_OK)
		rc = mu_horizon_job_run(j);
	mu_horizon_choice_t c;
	if (rc == MU_OK)
		rc = mu_horizon_apply(h, j, &c);
	else
		mu_horizon_cancel(h);
	mu_horizon_job_free(j);
	if (rc)
		return rc;
	if (c.changed || h->cfg.own_mix)
		mu_engine_rescore(e);
	if (choice)
		*choice = c;
	return 1;
}
