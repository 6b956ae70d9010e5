/*
 * score_rollout.c - muster's settings chosen by simulation instead of
 * constants fitted to a few traces.
 *
 * muster's share placement has settings (mu_muster_params_t: the rule for
 * large shares, the per-node reserve of whole devices, and which shares
 * pay it) whose best values depend on the workload mix: a setting that
 * wins on one openb variant loses on another (docs/evaluation.md,
 * "Thirteenth round: settings by rollouts").  mu_rollout_choose() tries
 * each candidate setting in short rollouts: pods drawn from the mix by
 * popularity (the distribution FGD's typical pods describe; the stream is
 * the caller's seed, never an evaluation's arrival list) arrive one at a
 * time on a copy of the nodes' free capacity and are placed by muster's
 * own score and device choice with that setting, until the GPU demand
 * asked reaches fill x the copy's capacity (the openb protocol's x = 130
 * by default).  The setting that leaves the most GPU capacity allocated
 * then, summed over the rollouts, wins; every candidate sees the same
 * draws and the same nodes, so the comparison is paired.  Candidates that
 * allocate the same are judged by worth, not by their index (the
 * fifteenth round): by what they allocate when the draws go on past the
 * end (mu_rollout_config_t.tie_fill), then by the fragmentation they
 * leave at the end against the mix (mu_gpu_frag()).
 *
 * The copy models what the mix models: free CPU, whole GPUs and per-device
 * shares, and GPU models; and, when the caller gives the memory requests
 * of the mix's pods (mu_rollout_mem_t, the sixteenth round), free memory
 * and pod slots.  A node fits a pod when its free CPU holds the pod's,
 * its model is one the pod allows, it has the whole free devices or a
 * device with the share free, and (with memory) its free memory holds
 * the pod's and it has a pod slot free: the engine's own fit
 * (mu__node_fit) but for extended resources and alignment, which the
 * rollouts' shapes do not carry.  A node's score for a pod
 * shape is kept and computed again only after the node changed, as the
 * engine's heaps do, so a rollout costs about arrivals x nodes compares
 * plus one measure per (shape, changed node).
 *
 * No I/O, no globals, no clock: the mix, the nodes and the seed are
 * inputs.
 */
#include <math.h>
#include <stdio.h>

#include "engine/engine_int.h"
#include "muster/util.h"

/* One node of a rollout's copy. */
typedef struct rnode {
	mu_res_t free;
	int16_t gpu[MU_MAX_GPUS];
	const mu_res_t *alloc; /* the caller's */
	const char *model;     /* the caller's */
	uint64_t model_bit;    /* the node's model in the mix; 0 none */
	int ngpu;
	uint32_t ver;          /* bumped on every placement */
} rnode_t;

/* One (type, memory, count) of a mu_rollout_mem_t being built. */
struct mu__rmem_add {
	int32_t type;
	int64_t mem, count;
};

/* The working memory of one choice, shared by its rollouts. */
typedef struct rollout {
	const mu_workload_mix_t *mix;
	size_t nnodes, ncopy;     /* the caller's nodes; the copy's */
	size_t *pick;             /* the copy's nodes: indices, ascending */
	rnode_t *node;            /* the copy */
	double *score;            /* [type x ncopy] cached scores */
	uint32_t *ver;            /* [type x ncopy] the node's ver then; 0 none */
	int32_t *arr;             /* the draw: type indices */
	int64_t *amem;            /* with memory: each arrival's memory */
	int32_t amem_cap;
	const mu_rollout_mem_t *mem; /* the caller's; NULL none */
	int32_t narr, cap;
	int32_t nmid;             /* arrivals before the second judgement;
	                           * -1 none */
	int32_t nend;             /* arrivals up to fill; the rest (up to
	                           * tie_fill) judge ties only */
	int64_t cap_milli;        /* the copy's GPU capacity */
} rollout_t;

size_t mu_muster_params_candidates(const mu_workload_mix_t *mix,
				   mu_muster_params_t *out, size_t cap)
{
	static const double reserve[] = {0.75, 1.0, 0};
	mu_muster_params_t d;
	mu_muster_params_defaults(&d);
	/* The large-share rule as the defaults give it for this mix, then
	 * the other way: never when it is on, always when it is off. */
	bool on = mu__mix_multi(mix) >= d.mg_multi;
	size_t n = 0;
	for (int flip = 0; flip < 2; flip++) {
		for (size_t r = 0; r < 3; r++) {
			for (int below = 0; below < (r < 2 ? 2 : 1); below++) {
				mu_muster_params_t p = d;
				if (flip)
					p.mg_multi = on ? 2.0 : 0.0;
				p.reserve = reserve[r];
				p.cpu_reserve_only = 2.0; /* its own reserve */
				p.fit_multi = 2.0;        /* and points */
				p.reserve_below = below ? p.mg_large : 1001;
				if (n < cap)
					out[n] = p;
				n++;
			}
		}
	}
	return n;
}

size_t mu_muster_params_late(const mu_workload_mix_t *mix,
			     mu_muster_params_t *out, size_t cap)
{
	mu_muster_params_t d;
	mu_muster_params_defaults(&d);
	bool on = mu__mix_multi(mix) >= d.mg_multi;
	size_t n = 0;
	/* Shares by best fit, with the large-share rule both ways. */
	for (int flip = 0; flip < 2; flip++) {
		mu_muster_params_t p = d;
		if (flip)
			p.mg_multi = on ? 2.0 : 0.0;
		p.best_fit = 1;
		if (n < cap)
			out[n] = p;
		n++;
	}
	/* And whole-GPU pods by FGD's points, shares as the defaults. */
	mu_muster_params_t w = d;
	w.whole_fgd = 1;
	if (n < cap)
		out[n] = w;
	n++;
	return n;
}

/* A threshold on the mix's multi-GPU share of the demand as a word: "on"
 * (<= 0: always), "off" (above 1: never), "auto" between. */
static const char *threshold_word(double x)
{
	return x <= 0 ? "on" : x > 1 ? "off" : "auto";
}

const char *mu_muster_params_format(const mu_muster_params_t *p, char *buf,
				    size_t len)
{
	const char *fit = p->best_fit && p->whole_fgd ? ", best fit, whole by fgd" :
			  p->best_fit ? ", best fit" :
			  p->whole_fgd ? ", whole by fgd" : "";
	char below[32] = "";
	if (p->reserve > 0 && p->reserve_below <= 1000)
		snprintf(below, sizeof below, " below %d", (int)p->reserve_below);
	snprintf(buf, len, "mg %s, reserve %.2f%s%s, demand %s, mem %s",
		 threshold_word(p->mg_multi), p->reserve, below, fit,
		 threshold_word(p->demand_multi), threshold_word(p->mem_multi));
	return buf;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* Picks the copy's nodes for rollout k (all of them, in order, when they
 * are no more than the copy holds; else a uniform sample kept in order)
 * and sets its capacity.  O(nodes + copy log copy). */
static void rollout_pick(rollout_t *r, uint64_t *rng, size_t *perm)
{
	if (r->ncopy == r->nnodes) {
		for (size_t i = 0; i < r->nnodes; i++)
			r->pick[i] = i;
		return;
	}
	for (size_t i = 0; i < r->nnodes; i++)
		perm[i] = i;
	for (size_t i = 0; i < r->ncopy; i++) { /* partial Fisher-Yates */
		size_t j = i + (size_t)mu__rand_below(rng, r->nnodes - i), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	memcpy(r->pick, perm, r->ncopy * sizeof *perm);
	qsort(r->pick, r->ncopy, sizeof *r->pick, cmp_size);
}

/* GPU demand of type t in milli-GPU. */
static int64_t type_milli(const mu_pod_type_t *t)
{
	return t->gpus ? 1000 * (int64_t)t->gpus : t->gpu_milli;
}

/* The memory of an arrival of type t: its type's one request, or one
 * drawn by count when it has several (the only draw memory adds, so
 * that a mix whose types each ask one memory draws as without it); 0
 * without memory or when the table has none for t.  O(log requests). */
static int64_t rollout_mem_draw(const mu_rollout_mem_t *mem, int32_t t,
				uint64_t *rng)
{
	if (!mem || t >= mem->ntypes)
		return 0;
	int32_t lo = mem->first[t], hi = mem->first[t + 1] - 1;
	if (hi < lo)
		return 0;
	if (hi > lo) { /* cum counts from the type's first request */
		int64_t u = (int64_t)mu__rand_below(rng, (uint64_t)mem->cum[hi]);
		while (lo < hi) { /* the first request with cum > u */
			int32_t mid = (lo + hi) / 2;
			if (mem->cum[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	return mem->mem[lo];
}

/* Draws the arrivals of one rollout: types by popularity until the GPU
 * demand asked, counting the asked share already asked, reaches fill x
 * the copy's capacity (at most 64 x the copy's capacity in pods when the
 * mix asks for little GPU); r->nmid is the count of arrivals after which
 * it reaches judge_at (-1 when judge_at is not ahead).  With tie_fill
 * above fill the draw goes on to tie_fill and r->nend counts the
 * arrivals up to fill.  O(arrivals x log types). */
static int rollout_draw(rollout_t *r, uint64_t *rng, double fill,
			double asked, double judge_at, double tie_fill,
			const int64_t *cum)
{
	const mu_workload_mix_t *m = r->mix;
	double cap = (double)r->cap_milli;
	int64_t end = (int64_t)ceil((fill - asked) * cap - 1e-6), sum = 0;
	int64_t target = tie_fill > fill ?
			 (int64_t)ceil((tie_fill - asked) * cap - 1e-6) : end;
	int64_t at = judge_at > asked && judge_at < fill ?
		      (int64_t)ceil((judge_at - asked) * cap - 1e-6) : -1;
	int64_t limit = 64 * (r->cap_milli / 1000 + 1);
	if (limit > INT32_MAX / 2)
		limit = INT32_MAX / 2;
	r->narr = 0;
	r->nmid = -1;
	r->nend = -1;
	while (sum < target && r->narr < limit) {
		if (r->nend < 0 && sum >= end)
			r->nend = r->narr;
		uint64_t u = mu__rand_below(rng, (uint64_t)cum[m->ntypes - 1]);
		int32_t lo = 0, hi = m->ntypes - 1;
		while (lo < hi) { /* the first type with cum > u */
			int32_t mid = (lo + hi) / 2;
			if (cum[mid] > (int64_t)u)
				hi = mid;
			else
				lo = mid + 1;
		}
		int rc = mu__grow((void **)&r->arr, &r->cap, r->narr + 1,
				  sizeof *r->arr);
		if (rc)
			return rc;
		if (r->mem) {
			rc = mu__grow((void **)&r->amem, &r->amem_cap, r->narr + 1,
				      sizeof *r->amem);
			if (rc)
				return rc;
			r->amem[r->narr] = rollout_mem_draw(r->mem, lo, rng);
		}
		r->arr[r->narr++] = lo;
		sum += type_milli(&m->types[lo]);
		if (at >= 0 && r->nmid < 0 && sum >= at)
			r->nmid = r->narr;
	}
	if (r->nend < 0)
		r->nend = r->narr;
	return MU_OK;
}

/* Resets the copy from the caller's views.  O(copy x devices x models). */
static void rollout_reset(rollout_t *r, const mu_node_view_t *nodes)
{
	const mu_workload_mix_t *m = r->mix;
	for (size_t i = 0; i < r->ncopy; i++) {
		const mu_node_view_t *v = &nodes[r->pick[i]];
		rnode_t *n = &r->node[i];
		n->free = *v->free;
		n->alloc = v->alloc;
		n->model = v->gpu_model;
		n->ngpu = v->ngpu < MU_MAX_GPUS ? v->ngpu : MU_MAX_GPUS;
		for (int g = 0; g < n->ngpu; g++)
			n->gpu[g] = v->gpu_free[g];
		n->model_bit = 0;
		if (v->gpu_model)
			for (int32_t k = 0; k < m->nmodels; k++)
				if (strcmp(m->models[k], v->gpu_model) == 0)
					n->model_bit = (uint64_t)1 << k;
		n->ver = 1;
	}
	memset(r->ver, 0, (size_t)m->ntypes * r->ncopy * sizeof *r->ver);
}

static void rnode_view(const rnode_t *n, mu_node_view_t *v)
{
	*v = (mu_node_view_t){n->alloc, &n->free, n->ngpu, n->gpu, n->model,
			      NULL};
}

/* Whether type t fits node n (see the file's comment).  O(devices). */
static bool rnode_fits(const rnode_t *n, const mu_pod_type_t *t)
{
	if (n->free.v[MU_RES_CPU] < t->cpu)
		return false;
	if (t->models && !(t->models & n->model_bit))
		return false;
	if (t->gpus)
		return n->free.v[MU_RES_GPU] >= t->gpus;
	if (!t->gpu_milli)
		return true;
	for (int g = 0; g < n->ngpu; g++)
		if (n->gpu[g] >= t->gpu_milli)
			return true;
	return false;
}

static mu_res_t type_req(const mu_pod_type_t *t)
{
	mu_res_t q;
	memset(&q, 0, sizeof q);
	q.v[MU_RES_CPU] = t->cpu;
	q.v[MU_RES_GPU] = t->gpus;
	q.v[MU_RES_GPU_MILLI] = t->gpus ? 0 : t->gpu_milli;
	q.v[MU_RES_PODS] = 1;
	return q;
}

/* Places type t on node n, on device dev for a share (the least free
 * device that holds it when dev is not one), on the first whole free
 * devices otherwise.  Returns the milli-GPU placed. */
static int64_t rnode_place(rnode_t *n, const mu_pod_type_t *t, int dev,
			   const int64_t *mem)
{
	n->free.v[MU_RES_CPU] -= t->cpu;
	if (mem) { /* with memory: it and a pod slot */
		n->free.v[MU_RES_MEM] -= *mem;
		n->free.v[MU_RES_PODS]--;
	}
	n->ver++;
	if (t->gpus) {
		int32_t left = t->gpus;
		for (int g = 0; g < n->ngpu && left > 0; g++)
			if (n->gpu[g] == 1000) {
				n->gpu[g] = 0;
				left--;
			}
		n->free.v[MU_RES_GPU] -= t->gpus;
		n->free.v[MU_RES_GPU_MILLI] -= 1000 * (int64_t)t->gpus;
		return 1000 * (int64_t)t->gpus;
	}
	if (!t->gpu_milli)
		return 0;
	if (dev < 0 || dev >= n->ngpu || n->gpu[dev] < t->gpu_milli) {
		dev = -1;
		for (int g = 0; g < n->ngpu; g++)
			if (n->gpu[g] >= t->gpu_milli &&
			    (dev < 0 || n->gpu[g] < n->gpu[dev]))
				dev = g;
	}
	if (n->gpu[dev] == 1000)
		n->free.v[MU_RES_GPU]--;
	n->gpu[dev] = (int16_t)(n->gpu[dev] - t->gpu_milli);
	n->free.v[MU_RES_GPU_MILLI] -= t->gpu_milli;
	return t->gpu_milli;
}

/* The copy's fragmentation against the mix: the sum over its nodes of
 * mu_gpu_frag(), in milli-GPU.  O(copy x (shapes + devices)). */
static double rollout_frag(const rollout_t *r)
{
	double f = 0;
	for (size_t i = 0; i < r->ncopy; i++) {
		mu_node_view_t v;
		rnode_view(&r->node[i], &v);
		f += mu_gpu_frag(r->mix, &v);
	}
	return f;
}

/* The tie's measures of one rollout (see mu_rollout_config_t.tie_fill). */
typedef struct tie {
	int64_t later; /* milli-GPU allocated at tie_fill (at fill without) */
	double frag;   /* the copy's fragmentation at fill */
} tie_t;

/* One rollout of the drawn arrivals with the settings in ctx's mix:
 * returns the milli-GPU it allocated after r->nend arrivals (at fill),
 * plus what it had allocated after r->nmid arrivals when there is that
 * second judgement; *tie (may be NULL) gets the tie's measures.
 * O(arrivals x copy) plus a measure per (type, node changed since its
 * last score), and O(copy x shapes) for the fragmentation. */
static int64_t rollout_run(rollout_t *r, const mu_node_view_t *nodes,
			   const mu_score_ctx_t *ctx, tie_t *tie)
{
	const mu_workload_mix_t *m = r->mix;
	rollout_reset(r, nodes);
	int64_t alloc = 0, at_mid = 0, at_end = 0;
	for (int32_t k = 0; k < r->narr; k++) {
		if (k == r->nmid)
			at_mid = alloc;
		if (k == r->nend) {
			at_end = alloc;
			if (tie)
				tie->frag = rollout_frag(r);
		}
		size_t ti = (size_t)r->arr[k];
		const mu_pod_type_t *t = &m->types[ti];
		/* The score is the type's (muster's score reads no memory);
		 * the arrival's memory is checked apart, per node. */
		mu_res_t q = type_req(t);
		double *sc = r->score + ti * r->ncopy;
		uint32_t *sv = r->ver + ti * r->ncopy;
		size_t best = r->ncopy;
		const int64_t *mem = r->mem ? &r->amem[k] : NULL;
		for (size_t i = 0; i < r->ncopy; i++) {
			rnode_t *n = &r->node[i];
			if (sv[i] != n->ver) {
				mu_node_view_t v;
				rnode_view(n, &v);
				sc[i] = rnode_fits(n, t) ?
					mu_score_muster.score(ctx, &v, &q) : -INFINITY;
				sv[i] = n->ver;
			}
			if (sc[i] > -INFINITY && (best == r->ncopy || sc[i] > sc[best]) &&
			    (!mem || (n->free.v[MU_RES_MEM] >= *mem &&
				      n->free.v[MU_RES_PODS] >= 1)))
				best = i;
		}
		if (best == r->ncopy)
			continue; /* fits nowhere: skipped, as the eval does */
		rnode_t *n = &r->node[best];
		int dev = -1;
		if (!t->gpus && t->gpu_milli) {
			mu_node_view_t v;
			rnode_view(n, &v);
			dev = mu_score_muster.pick_device(ctx, &v, &q);
		}
		alloc += rnode_place(n, t, dev, mem);
	}
	if (r->nmid == r->narr)
		at_mid = alloc;
	if (r->nend == r->narr) {
		at_end = alloc;
		if (tie)
			tie->frag = rollout_frag(r);
	}
	if (tie)
		tie->later = alloc;
	return at_end + at_mid;
}

static void rollout_free(rollout_t *r)
{
	free(r->pick);
	free(r->node);
	free(r->score);
	free(r->ver);
	free(r->arr);
	free(r->amem);
}

int mu_rollout_choose(const mu_workload_mix_t *mix,
		      const mu_node_view_t *nodes, size_t nnodes,
		      const mu_muster_params_t *cands, size_t ncands,
		      const mu_rollout_config_t *cfg, int64_t *worth,
		      size_t *best)
{
	if (!mix || !mix->index || mix->ntypes < 1 || mix->pods < 1 ||
	    !nodes || nnodes == 0 || !cands || ncands == 0 || !cfg || !best)
		return MU_EINVAL;
	double fill = cfg->fill > 0 ? cfg->fill : 1.3;
	size_t maxn = cfg->max_nodes > 0 ? (size_t)cfg->max_nodes : 2048;
	int32_t nroll = cfg->rollouts > 0 ? cfg->rollouts : 8;
	if (!(fill <= 100) || !(cfg->asked >= 0 && cfg->asked < fill) ||
	    !(cfg->judge_at >= 0 && cfg->judge_at <= 100) ||
	    !(cfg->tie_fill <= 100))
		return MU_EINVAL;
	if (cfg->mem && (!cfg->mem->finished || cfg->mem->ntypes != mix->ntypes))
		return MU_EINVAL;
	rollout_t r = {.mix = mix, .nnodes = nnodes,
		       .ncopy = nnodes < maxn ? nnodes : maxn, .mem = cfg->mem};
	size_t cells = (size_t)mix->ntypes * r.ncopy;
	int64_t *cum = malloc((size_t)mix->ntypes * sizeof *cum);
	int64_t *sum = calloc(ncands, sizeof *sum);
	int64_t *later = calloc(ncands, sizeof *later);
	double *frag = calloc(ncands, sizeof *frag);
	size_t *perm = malloc(nnodes * sizeof *perm);
	r.pick = malloc(r.ncopy * sizeof *r.pick);
	r.node = malloc(r.ncopy * sizeof *r.node);
	r.score = malloc(cells * sizeof *r.score);
	r.ver = malloc(cells * sizeof *r.ver);
	int rc = cum && sum && later && frag && perm && r.pick && r.node &&
		 r.score && r.ver ?
		 MU_OK : MU_ENOMEM;
	for (int32_t i = 0; rc == MU_OK && i < mix->ntypes; i++)
		cum[i] = (i ? cum[i - 1] : 0) + mix->types[i].count;
	if (rc == MU_OK && cum[mix->ntypes - 1] <= 0)
		rc = MU_EINVAL;
	uint64_t rng = cfg->seed;
	for (int32_t k = 0; rc == MU_OK && k < nroll; k++) {
		rollout_pick(&r, &rng, perm);
		r.cap_milli = 0;
		for (size_t i = 0; i < r.ncopy; i++)
			r.cap_milli += 1000 * (int64_t)nodes[r.pick[i]].ngpu;
		rc = rollout_draw(&r, &rng, fill, cfg->asked, cfg->judge_at,
				  cfg->tie_fill, cum);
		for (size_t c = 0; rc == MU_OK && c < ncands; c++) {
			mu_workload_mix_t view = *mix; /* shallow: read only */
			view.muster = &cands[c];
			mu_score_ctx_t ctx = {&view, 0, NULL, NULL}; /* no engine: the mix's own pressure */
			tie_t t = {0, 0};
			sum[c] += rollout_run(&r, nodes, &ctx,
					      cfg->tie_fill < 0 ? NULL : &t);
			later[c] += t.later;
			frag[c] += t.frag;
		}
	}
	if (rc == MU_OK) {
		*best = 0;
		for (size_t c = 0; c < ncands; c++) {
			size_t b = *best;
			if (sum[c] > sum[b] ||
			    (sum[c] == sum[b] && cfg->tie_fill >= 0 &&
			     (later[c] > later[b] ||
			      (later[c] == later[b] && frag[c] < frag[b]))))
				*best = c;
			if (worth)
				worth[c] = sum[c];
		}
	}
	free(cum);
	free(sum);
	free(later);
	free(frag);
	free(perm);
	rollout_free(&r);
	return rc;
}

int32_t mu_rollout_checkpoint(const mu_rollout_horizon_t *h, double fill,
			      double asked)
{
	double from = h && h->from > 0 ? h->from : 0.5;
	double every = h && h->every > 0 ? h->every : 0.1;
	if (!h || h->from < 0 || h->every < 0 || !(asked >= from))
		return -1;
	if (fill <= 0)
		fill = 1.3;
	double last = asked < fill ? asked : fill;
	int32_t k = (int32_t)floor((last - from) / every + 1e-9);
	while (k >= 0 && from + k * every >= fill - 1e-9)
		k--; /* a checkpoint at the end has nothing left to choose */
	return k;
}

/* --- Memory requests per type (the sixteenth round) ---------------------- */

void mu_rollout_mem_init(mu_rollout_mem_t *m)
{
	memset(m, 0, sizeof *m);
}

void mu_rollout_mem_release(mu_rollout_mem_t *m)
{
	if (!m)
		return;
	free(m->first);
	free(m->mem);
	free(m->cum);
	free(m->adds);
	memset(m, 0, sizeof *m);
}

/* The index of the type of mix (finished) that mu_workload_mix_add would
 * have merged req on models into, or -1 when the mix does not keep it.
 * Binary search in the mix's shape order (GPUs, share, models, CPU).
 * O(log types + models x mix models). */
static int32_t mem_type_of(const mu_workload_mix_t *mix, const mu_res_t *req,
			   const char *const *models, size_t nmodels)
{
	int64_t gpus = req->v[MU_RES_GPU], milli = gpus ? 0 : req->v[MU_RES_GPU_MILLI];
	if (milli == 1000) {
		gpus = 1;
		milli = 0;
	}
	uint64_t bits = 0;
	for (size_t i = 0; i < nmodels; i++) {
		int32_t k = 0;
		while (k < mix->nmodels && strcmp(mix->models[k], models[i]))
			k++;
		if (k == mix->nmodels)
			return -1;
		bits |= (uint64_t)1 << k;
	}
	int64_t key[4] = {gpus, milli, (int64_t)bits, req->v[MU_RES_CPU]};
	int32_t lo = 0, hi = mix->ntypes - 1;
	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		const mu_pod_type_t *t = &mix->types[mid];
		int64_t tk[4] = {t->gpus, t->gpu_milli, (int64_t)t->models, t->cpu};
		int c = 0;
		for (int f = 0; f < 4 && !c; f++) {
			if (f == 2) /* models compare unsigned, as the mix sorts */
				c = ((uint64_t)tk[f] > bits) - ((uint64_t)tk[f] < bits);
			else
				c = (tk[f] > key[f]) - (tk[f] < key[f]);
		}
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int mu_rollout_mem_add(mu_rollout_mem_t *m, const mu_workload_mix_t *mix,
		       const mu_res_t *req, const char *const *models,
		       size_t nmodels, int64_t count)
{
	if (!m || !mix || !mix->index || !req || count < 0 || m->finished ||
	    (nmodels && !models))
		return MU_EINVAL;
	for (size_t i = 0; i < nmodels; i++)
		if (!models[i])
			return MU_EINVAL;
	int32_t t = count ? mem_type_of(mix, req, models, nmodels) : -1;
	if (t < 0)
		return MU_OK;
	int rc = mu__grow((void **)&m->adds, &m->adds_cap, m->nadds + 1,
			  sizeof *m->adds);
	if (rc)
		return rc;
	int64_t mem = req->v[MU_RES_MEM] > 0 ? req->v[MU_RES_MEM] : 0;
	m->adds[m->nadds++] = (struct mu__rmem_add){t, mem, count};
	return MU_OK;
}

static int cmp_rmem(const void *a, const void *b)
{
	const struct mu__rmem_add *x = a, *y = b;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return (x->mem > y->mem) - (x->mem < y->mem);
}

int mu_rollout_mem_finish(mu_rollout_mem_t *m, const mu_workload_mix_t *mix)
{
	if (!m || !mix || !mix->index || m->finished)
		return MU_EINVAL;
	qsort(m->adds, (size_t)m->nadds, sizeof *m->adds, cmp_rmem);
	size_t cap = m->nadds > 0 ? (size_t)m->nadds : 1;
	m->first = calloc((size_t)mix->ntypes + 1, sizeof *m->first);
	m->mem = malloc(cap * sizeof *m->mem);
	m->cum = malloc(cap * sizeof *m->cum);
	if (!m->first || !m->mem || !m->cum)
		return MU_ENOMEM;
	int32_t k = 0;
	for (int32_t t = 0; t < mix->ntypes; t++) {
		m->first[t] = m->n;
		int64_t sum = 0;
		for (; k < m->nadds && m->adds[k].type == t; k++) {
			sum += m->adds[k].count;
			if (m->n > m->first[t] && m->mem[m->n - 1] == m->adds[k].mem) {
				m->cum[m->n - 1] = sum;
				continue;
			}
			m->mem[m->n] = m->adds[k].mem;
			m->cum[m->n++] = sum;
		}
	}
	m->first[mix->ntypes] = m->n;
	m->ntypes = mix->ntypes;
	free(m->adds);
	m->adds = NULL;
	m->nadds = m->adds_cap = 0;
	m->finished = true;
	return MU_OK;
}
