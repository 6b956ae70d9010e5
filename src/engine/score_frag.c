/*
 * score_frag.c - GPU fragmentation: the workload mix, the FGD paper's
 * measure of a node's fragmentation, and the two policies built on it.
 *
 * The measure (Weng et al., "Beware of Fragmentation", USENIX ATC'23) asks,
 * for every pod shape m of the target workload, how much of a node's free
 * GPU capacity m could not use there:
 *   - all of it when m asks for no GPU, or cannot run on the node at all
 *     (too little free CPU, a GPU model m may not use, fewer whole free
 *     GPUs than m asks for, no device with m's share free);
 *   - otherwise the free capacity of the devices that hold less than
 *     min(m's request, one GPU): partly used devices for whole-GPU shapes,
 *     devices with less than the share free for share shapes.
 * A node's fragmentation F is the popularity-weighted sum over the shapes.
 * With shapes grouped by GPU request and models and sorted by CPU,
 *   F = free - sum over groups that can run of W(free CPU) x U(request)
 * where W is the weight of the group's shapes needing at most the node's
 * free CPU (a binary search) and U the capacity of the devices that hold
 * the request.  That is O(groups x (log shapes + devices)) per node.
 *
 * `fgd` scores a node by the growth of F that placing the pod causes,
 * trying every device for a share (as points, below).  `muster` places pods that take whole
 * GPUs or only CPU by a refined measure in which free CPU is a capacity
 * rather than a threshold (see group_used): FGD counts all of a node's
 * free GPUs as usable by a shape as soon as one pod of it fits, so it does
 * not see GPUs stranded because the CPU left can feed only some of them.
 * Shares are placed as the artifact's FGD places them (see
 * muster_cpu_aware).  `muster-supply`, an option, is muster with the
 * shares' rules read off the cluster's GPU supply per model as well
 * (mu_supply_t, which the engine keeps for it; see muster_supply_share).
 *
 * `fgd` is the paper's FGD as its simulator (hkust-adsl/kubernetes-
 * scheduler-simulator, fgd_score.go) computes it: integer points
 * 100 x sigmoid(-growth / 1000) truncated, the first node and device on
 * ties, against the mix's typical pods (mu_workload_mix_t.top).
 */
#include <math.h>

#include "engine/engine_int.h"

/* Shapes with one GPU request and model set; their types are sorted by CPU
 * (see mu__mix_index for the cumulative sums). */
typedef struct mix_group {
	int32_t gpus, milli;
	uint64_t models;
	int32_t first, n;
} mix_group_t;

struct mu__mix_index {
	mix_group_t *groups;
	int32_t ngroups;
	double *cum;      /* by type: weight of its group's types up to it */
	double *cum_inv;  /* the same sums of weight / cpu (cpu > 0) */
	double *dcum;     /* cum and cum_inv with weights by GPU demand */
	double *dcum_inv; /* (count x milli-GPU over the mix's; see
	                   * FRAG_DEMAND) */
	double multi;     /* share of the GPU demand in pods of 2+ GPUs */
	double whole;     /* share of the GPU demand in pods of whole GPUs */
	double cpu_only;  /* share of the pods that take no GPU */
	double shares;    /* share of the GPU demand in shares (1..999) */
	double bound;     /* share of the GPU demand tied to GPU models */
	int32_t keep;     /* the type of 2+ GPUs that asks the most CPU (then
	                   * memory; the first in type order), or -1: the
	                   * keep rule's (keep_type) */
	/* dead[r]: r less the largest sum <= r of the mix's common share
	 * sizes, repeats allowed (see mix_dead) */
	int16_t dead[1001];
	/* The cluster's devices per model (mu_workload_mix_supply; the last
	 * entry: nodes of a model no shape names, or of none) and each
	 * model's pressure from them (mix_press); npress 0: none given. */
	int64_t devices[MU_MIX_MAX_MODELS + 1];
	double press[MU_MIX_MAX_MODELS + 1];
	int32_t npress;
};

/* A node as the measure sees it: free CPU, whole free devices, and the
 * free share of partly used devices, largest first. */
typedef struct fnode {
	int64_t cpu;
	int64_t mem;      /* free bytes (FRAG_MEM reads it) */
	int32_t nfull, npart;
	int16_t part[MU_MAX_GPUS];
	int64_t total;    /* free milli-GPU */
	uint64_t model;   /* the node's model bit in the mix; 0 none */
} fnode_t;

/* --- The workload mix ---------------------------------------------------- */

void mu_workload_mix_init(mu_workload_mix_t *m)
{
	memset(m, 0, sizeof *m);
}

void mu_workload_mix_release(mu_workload_mix_t *m)
{
	if (!m)
		return;
	free(m->types);
	for (int32_t i = 0; i < m->nmodels; i++)
		free(m->models[i]);
	if (m->index) {
		free(m->index->groups);
		free(m->index->cum);
		free(m->index->cum_inv);
		free(m->index->dcum);
		free(m->index->dcum_inv);
		free(m->index);
	}
	memset(m, 0, sizeof *m);
}

/* The bit of model name in m, adding the name when new; 0 with *rc set
 * to MU_ERANGE or MU_ENOMEM on failure.  O(models). */
static uint64_t mix_model_bit(mu_workload_mix_t *m, const char *name, int *rc)
{
	for (int32_t i = 0; i < m->nmodels; i++)
		if (strcmp(m->models[i], name) == 0)
			return (uint64_t)1 << i;
	if (m->nmodels == MU_MIX_MAX_MODELS) {
		*rc = MU_ERANGE;
		return 0;
	}
	size_t len = strlen(name) + 1;
	char *copy = malloc(len);
	if (!copy) {
		*rc = MU_ENOMEM;
		return 0;
	}
	memcpy(copy, name, len);
	m->models[m->nmodels] = copy;
	return (uint64_t)1 << m->nmodels++;
}

int mu_workload_mix_add(mu_workload_mix_t *m, const mu_res_t *req,
			const char *const *models, size_t nmodels,
			int64_t count)
{
	if (!m || !req || count < 0 || m->index)
		return MU_EINVAL;
	int64_t gpus = req->v[MU_RES_GPU], milli = req->v[MU_RES_GPU_MILLI];
	if (req->v[MU_RES_CPU] < 0 || gpus < 0 || gpus > MU_MAX_GPUS ||
	    (gpus == 0 && (milli < 0 || milli > 1000)))
		return MU_ERANGE;
	mu_pod_type_t t = {.cpu = req->v[MU_RES_CPU],
			   .mem = req->v[MU_RES_MEM] > 0 ? req->v[MU_RES_MEM] : 0,
			   .count = count};
	if (gpus > 0)
		t.gpus = (int32_t)gpus;
	else
		t.gpu_milli = (int32_t)milli;
	if (t.gpu_milli == 1000) { /* a full share is one whole GPU */
		t.gpus = 1;
		t.gpu_milli = 0;
	}
	for (size_t i = 0; i < nmodels; i++) {
		int rc = MU_OK;
		if (!models[i])
			return MU_EINVAL;
		t.models |= mix_model_bit(m, models[i], &rc);
		if (rc)
			return rc;
	}
	int rc = mu__grow((void **)&m->types, &m->cap, m->ntypes + 1,
			  sizeof *m->types);
	if (rc)
		return rc;
	m->types[m->ntypes++] = t;
	m->pods += count;
	return MU_OK;
}

/* Shape order: GPU request, models, then CPU. */
static int cmp_type(const void *a, const void *b)
{
	const mu_pod_type_t *x = a, *y = b;
	if (x->gpus != y->gpus)
		return x->gpus < y->gpus ? -1 : 1;
	if (x->gpu_milli != y->gpu_milli)
		return x->gpu_milli < y->gpu_milli ? -1 : 1;
	if (x->models != y->models)
		return x->models < y->models ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static bool same_group(const mu_pod_type_t *x, const mu_pod_type_t *y)
{
	return x->gpus == y->gpus && x->gpu_milli == y->gpu_milli &&
	       x->models == y->models;
}

/* The dead remainder of every free share r (0..1000) of a device: r less
 * the largest sum <= r of the mix's common share sizes, each size used any
 * number of times (an unbounded knapsack).  A size is common when at least
 * DEAD_COMMON of the mix's share pods ask for it: a remainder that only a
 * rare size fits is as good as dead (openb: the 190 an 810 leaves is
 * filled by 160s, 110s and 50s, 1.3% of the pods).  O(types + 1000 x
 * sizes), once per mix. */
#define DEAD_COMMON 0.01

static void mix_dead(const mu_workload_mix_t *m, struct mu__mix_index *ix)
{
	int64_t count[1000] = {0}, shares = 0;
	for (int32_t i = 0; i < m->ntypes; i++) {
		const mu_pod_type_t *t = &m->types[i];
		if (!t->gpus && t->gpu_milli > 0 && t->gpu_milli < 1000) {
			count[t->gpu_milli] += t->count;
			shares += t->count;
		}
	}
	int16_t size[1000];
	int32_t nsize = 0;
	for (int z = 1; z < 1000; z++)
		if (count[z] > 0 && (double)count[z] >= DEAD_COMMON * (double)shares)
			size[nsize++] = (int16_t)z;
	int16_t fill[1001];
	for (int r = 0; r <= 1000; r++) {
		fill[r] = 0;
		for (int32_t k = 0; k < nsize && size[k] <= r; k++)
			if (fill[r - size[k]] + size[k] > fill[r])
				fill[r] = (int16_t)(fill[r - size[k]] + size[k]);
		ix->dead[r] = (int16_t)(r - fill[r]);
	}
}

/* Sets the weights and builds the groups and cumulative sums of a sorted,
 * merged mix.  O(types). */
static int mix_index(mu_workload_mix_t *m)
{
	size_t n = (size_t)(m->ntypes ? m->ntypes : 1);
	struct mu__mix_index *ix = calloc(1, sizeof *ix);
	if (!ix)
		return MU_ENOMEM;
	ix->groups = malloc(n * sizeof *ix->groups);
	ix->cum = malloc(n * sizeof *ix->cum);
	ix->cum_inv = malloc(n * sizeof *ix->cum_inv);
	ix->dcum = malloc(n * sizeof *ix->dcum);
	ix->dcum_inv = malloc(n * sizeof *ix->dcum_inv);
	if (!ix->groups || !ix->cum || !ix->cum_inv || !ix->dcum ||
	    !ix->dcum_inv) {
		free(ix->groups);
		free(ix->cum);
		free(ix->cum_inv);
		free(ix->dcum);
		free(ix->dcum_inv);
		free(ix);
		return MU_ENOMEM;
	}
	for (int32_t i = 0; i < m->ntypes; i++) {
		mu_pod_type_t *t = &m->types[i];
		t->weight = m->pods ? (double)t->count / (double)m->pods : 0;
		bool first = i == 0 || !same_group(t, &m->types[i - 1]);
		if (first)
			ix->groups[ix->ngroups++] = (mix_group_t){
				t->gpus, t->gpu_milli, t->models, i, 0};
		ix->groups[ix->ngroups - 1].n++;
		ix->cum[i] = (first ? 0 : ix->cum[i - 1]) + t->weight;
		ix->cum_inv[i] = (first ? 0 : ix->cum_inv[i - 1]) +
				 (t->cpu > 0 ? t->weight / (double)t->cpu : 0);
	}
	double demand = 0, multi = 0, whole = 0, bound = 0;
	ix->keep = -1;
	for (int32_t i = 0; i < m->ntypes; i++) {
		const mu_pod_type_t *t = &m->types[i];
		const mu_pod_type_t *big = ix->keep >= 0 ? &m->types[ix->keep] : NULL;
		if (t->gpus >= 2 && (!big || t->cpu > big->cpu ||
				     (t->cpu == big->cpu && t->mem > big->mem)))
			ix->keep = i;
		double d = (double)t->count *
			   (t->gpus ? 1000.0 * t->gpus : t->gpu_milli);
		demand += d;
		multi += t->gpus > 1 ? d : 0;
		whole += t->gpus > 0 ? d : 0;
		bound += t->models ? d : 0;
	}
	ix->multi = demand > 0 ? multi / demand : 0;
	double none = 0;
	for (int32_t i = 0; i < m->ntypes; i++)
		none += !m->types[i].gpus && !m->types[i].gpu_milli ? m->types[i].weight : 0;
	ix->cpu_only = none;
	ix->whole = demand > 0 ? whole / demand : 0;
	ix->shares = demand > 0 ? 1 - ix->whole : 0;
	ix->bound = demand > 0 ? bound / demand : 0;
	for (int32_t i = 0; i < m->ntypes; i++) {
		const mu_pod_type_t *t = &m->types[i];
		bool first = i == 0 || !same_group(t, &m->types[i - 1]);
		double w = demand > 0 ? (double)t->count *
			   (t->gpus ? 1000.0 * t->gpus : t->gpu_milli) / demand : 0;
		ix->dcum[i] = (first ? 0 : ix->dcum[i - 1]) + w;
		ix->dcum_inv[i] = (first ? 0 : ix->dcum_inv[i - 1]) +
				  (t->cpu > 0 ? w / (double)t->cpu : 0);
	}
	mix_dead(m, ix);
	m->index = ix;
	return MU_OK;
}

/* Popularity order of the FGD artifact's SortTargetPodInDecreasingCount:
 * more pods first, then larger CPU, per-device share, GPU count, models. */
static int cmp_popular(const void *a, const void *b)
{
	const mu_pod_type_t *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	int32_t xm = x->gpus ? 1000 : x->gpu_milli, ym = y->gpus ? 1000 : y->gpu_milli;
	if (xm != ym)
		return xm > ym ? -1 : 1;
	if (x->gpus != y->gpus)
		return x->gpus > y->gpus ? -1 : 1;
	return (x->models < y->models) - (x->models > y->models);
}

/* Keeps the most popular merged types until they cover m->top of the pods
 * (the artifact's GetTypicalPods with podIncreaseStep 1: it stops at the
 * first type that reaches the threshold).  O(types log types). */
static void mix_trim(mu_workload_mix_t *m)
{
	if (!(m->top > 0 && m->top < 1) || m->ntypes < 2)
		return;
	qsort(m->types, (size_t)m->ntypes, sizeof *m->types, cmp_popular);
	double want = m->top * (double)m->pods, cum = 0;
	int32_t k = 0;
	while (k < m->ntypes && cum < want)
		cum += (double)m->types[k++].count;
	m->ntypes = k;
	m->pods = (int64_t)cum;
	qsort(m->types, (size_t)m->ntypes, sizeof *m->types, cmp_type);
}

int mu_workload_mix_finish(mu_workload_mix_t *m)
{
	if (!m || m->index)
		return MU_EINVAL;
	if (m->ntypes > 1)
		qsort(m->types, (size_t)m->ntypes, sizeof *m->types, cmp_type);
	int32_t k = 0;
	for (int32_t i = 0; i < m->ntypes; i++) {
		mu_pod_type_t *t = &m->types[i], *prev = &m->types[k - (k > 0)];
		if (k > 0 && same_group(prev, t) && prev->cpu == t->cpu) {
			int64_t c = prev->count + t->count; /* mean memory */
			if (c > 0)
				prev->mem = (int64_t)(((double)prev->mem * (double)prev->count +
						       (double)t->mem * (double)t->count) /
						      (double)c);
			prev->count = c;
		} else
			m->types[k++] = m->types[i];
	}
	m->ntypes = k;
	mix_trim(m);
	return mix_index(m);
}

/* Each model's pressure from the devices per model (see
 * mu_muster_params_t's press_over; devices[MU_MIX_MAX_MODELS]: those of
 * models no shape names) into press: the demand of the GPU shapes that
 * name models, each spread evenly over the devices of the models it may
 * use, summed per device of a model, over the cluster's demand per device
 * (every shape's).  A shape that names no model may go anywhere and
 * presses on none: 0 everywhere when no shape names a model.  Returns 1
 * when the pressure was computed, 0 without devices or GPU demand.
 * O(types x models). */
static int32_t mix_press(const mu_workload_mix_t *m, const int64_t *devices,
			 double *press)
{
	const int32_t other = MU_MIX_MAX_MODELS;
	int64_t all = devices[other];
	double demand = 0;
	for (int32_t k = 0; k < m->nmodels; k++)
		all += devices[k];
	for (int32_t k = 0; k <= other; k++)
		press[k] = 0;
	for (int32_t i = 0; i < m->ntypes && all > 0; i++) {
		const mu_pod_type_t *t = &m->types[i];
		double d = (double)t->count * (t->gpus ? 1000.0 * t->gpus : t->gpu_milli);
		int64_t on = 0;
		for (int32_t k = 0; k < m->nmodels; k++)
			on += (t->models >> k) & 1 ? devices[k] : 0;
		demand += d;
		if (!t->models || on <= 0)
			continue; /* free to go anywhere: no model's pressure */
		for (int32_t k = 0; k < m->nmodels; k++)
			if ((t->models >> k) & 1)
				press[k] += d / (double)on;
	}
	if (demand <= 0)
		return 0;
	for (int32_t k = 0; k <= other; k++)
		press[k] *= (double)all / demand;
	return 1;
}

/* The mix's slot of model name (NULL, or one no shape names: the last,
 * MU_MIX_MAX_MODELS).  O(models). */
static int32_t mix_model(const mu_workload_mix_t *m, const char *model)
{
	for (int32_t i = 0; model && i < m->nmodels; i++)
		if (strcmp(m->models[i], model) == 0)
			return i;
	return MU_MIX_MAX_MODELS;
}

int mu_workload_mix_supply(mu_workload_mix_t *m, const char *model,
			   int64_t devices)
{
	if (!m || !m->index || devices < 0)
		return MU_EINVAL;
	m->index->devices[mix_model(m, model)] += devices;
	m->index->npress = mix_press(m, m->index->devices, m->index->press);
	return MU_OK;
}

void mu__mix_press_models(const mu_workload_mix_t *m, mu_gpu_models_t *g)
{
	int64_t dev[MU_MIX_MAX_MODELS + 1] = {0};
	double press[MU_MIX_MAX_MODELS + 1];
	for (int32_t i = 0; i < g->n; i++)
		dev[mix_model(m, g->model[i])] += g->devices[i];
	bool any = false, ok = m && m->index && mix_press(m, dev, press);
	for (int32_t i = 0; i < g->n; i++) {
		g->press[i] = ok ? press[mix_model(m, g->model[i])] : 0;
		any |= g->press[i] > 0;
	}
	g->pressed = any; /* no pressure anywhere (no shape names a model):
	                   * nothing for a score to look up */
}

/* (here, not in gpumodels.c, which stays a leaf of the engine: the sync
 * reads the mix and drops the score heaps, both of the engine's core) */
void mu__gpu_models_sync(mu_engine_t *e)
{
	const mu_workload_mix_t *m = e->score && (e->score->flags & MU_SCORE_MIX) ?
				     e->cfg.score_state : NULL;
	const void *ix = m ? (const void *)m->index : NULL;
	if (!e->gm_stale && ix == e->gm_index)
		return;
	mu_gpu_models_t *g = &e->gmodels;
	bool was = g->pressed, moved = false;
	double old[MU_MIX_MAX_MODELS + 1];
	for (int32_t i = 0; i < g->n && i <= MU_MIX_MAX_MODELS; i++)
		old[i] = g->press[i];
	if (ix)
		mu__mix_press_models(m, g);
	else
		g->pressed = false;
	for (int32_t i = 0; g->pressed && i < g->n; i++)
		moved |= i > MU_MIX_MAX_MODELS || !was || old[i] != g->press[i];
	e->gm_stale = false;
	e->gm_index = ix;
	if (moved || was != g->pressed)
		mu_engine_rescore(e);
	e->gm_stale = false; /* mu_engine_rescore marks it */
}

/* --- The measure ------------------------------------------------------- */

/* Types of g needing at most x millicores.  O(log n). */
static int32_t group_upto(const mu_workload_mix_t *m, const mix_group_t *g,
			  double x)
{
	int32_t lo = 0, hi = g->n;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if ((double)m->types[g->first + mid].cpu <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* GPU capacity (milli) the shapes of g could use on s by GPUs alone: the
 * whole free devices, if there are enough of them, for a whole-GPU shape;
 * every device holding the share for a share shape.  O(devices). */
static int64_t group_gpu(const mix_group_t *g, const fnode_t *s)
{
	if (g->gpus)
		return s->nfull < g->gpus ? 0 : 1000 * (int64_t)s->nfull;
	int64_t u = 1000 * (int64_t)s->nfull;
	for (int32_t i = 0; i < s->npart && s->part[i] >= g->milli; i++)
		u += s->part[i];
	return u;
}

/* How a measure weighs and counts (flags of frag_of's `how`):
 * FRAG_CPU, free CPU as a capacity (group_used); FRAG_DEMAND, the shapes
 * weighted by their share of the mix's GPU demand (count x milli-GPU)
 * instead of their share of its pods: an 8-GPU shape that is 3% of the
 * pods and a quarter of the demand weighs a quarter (the sixteenth
 * round's `demand_multi`). */
#define FRAG_CPU 1
#define FRAG_DEMAND 2
/* FRAG_MEM (with FRAG_CPU): free memory a capacity too, as CPU is
 * (group_used_mem; the seventeenth round's `mem_multi`). */
#define FRAG_MEM 4

/* group_used with FRAG_MEM: each shape of g that fits the node's free CPU
 * and memory uses min(u, cpu / cpu_m x per, mem / mem_m x per), the
 * bounds of a resource the shape does not ask left out.  O(shapes of g). */
static double group_used_mem(const mu_workload_mix_t *m, const mix_group_t *g,
			     const fnode_t *s, int64_t u, int how)
{
	const double *cum = ((how & FRAG_DEMAND) ? m->index->dcum : m->index->cum) +
			    g->first;
	double per = g->gpus ? 1000.0 * g->gpus : g->milli, used = 0;
	for (int32_t i = 0; i < g->n; i++) {
		const mu_pod_type_t *t = &m->types[g->first + i];
		if (t->cpu > s->cpu || t->mem > s->mem)
			continue;
		double x = (double)u;
		if (t->cpu > 0 && (double)s->cpu * per / (double)t->cpu < x)
			x = (double)s->cpu * per / (double)t->cpu;
		if (t->mem > 0 && (double)s->mem * per / (double)t->mem < x)
			x = (double)s->mem * per / (double)t->mem;
		used += x * (cum[i] - (i ? cum[i - 1] : 0));
	}
	return used;
}

/* Weighted GPU capacity the shapes of g could use on s, given u by GPUs.
 * FGD (no FRAG_CPU): u for each shape whose CPU fits.  With FRAG_CPU, a
 * shape needing cpu_m takes at most free CPU / cpu_m pods
 * of `per` milli-GPU each, so it uses min(u, cpu / cpu_m x per): shapes
 * needing up to t = cpu x per / u use u, those between t and the free CPU
 * are CPU-bound.  Two binary searches and the cumulative sums. */
static double group_used(const mu_workload_mix_t *m, const mix_group_t *g,
			 const fnode_t *s, int64_t u, int how)
{
	if ((how & (FRAG_CPU | FRAG_MEM)) == (FRAG_CPU | FRAG_MEM))
		return group_used_mem(m, g, s, u, how);
	bool dem = (how & FRAG_DEMAND) != 0;
	const double *cum = (dem ? m->index->dcum : m->index->cum) + g->first;
	const double *inv = (dem ? m->index->dcum_inv : m->index->cum_inv) +
			    g->first;
	double c = (double)s->cpu;
	int32_t nc = group_upto(m, g, c);
	if (!(how & FRAG_CPU))
		return nc ? (double)u * cum[nc - 1] : 0;
	double per = g->gpus ? 1000.0 * g->gpus : g->milli;
	double t = c * per / (double)u;
	int32_t nt = t < c ? group_upto(m, g, t) : nc;
	double used = nt ? (double)u * cum[nt - 1] : 0;
	if (nc > nt)
		used += c * per * (inv[nc - 1] - (nt ? inv[nt - 1] : 0));
	return used;
}

/* F(s) in milli-GPU for mix m (a NULL or empty mix is one whole-GPU shape:
 * F is then the free share of partly used devices).  O(groups x (log
 * types + partly used devices)). */
static double frag_of(const mu_workload_mix_t *m, const fnode_t *s,
		      int how)
{
	if (!m || !m->index || m->index->ngroups == 0)
		return (double)(s->total - 1000 * (int64_t)s->nfull);
	const struct mu__mix_index *ix = m->index;
	double used = 0;
	for (int32_t i = 0; i < ix->ngroups; i++) {
		const mix_group_t *g = &ix->groups[i];
		if (!g->gpus && !g->milli)
			continue; /* CPU-only shapes use no GPU */
		if (g->models && !(g->models & s->model))
			continue;
		int64_t u = group_gpu(g, s);
		if (u > 0)
			used += group_used(m, g, s, u, how);
	}
	return (double)s->total - used;
}

/* Inserts a partly free device (1..999) into s, keeping the order. */
static void fnode_add_part(fnode_t *s, int16_t f)
{
	int32_t i = s->npart++;
	while (i > 0 && s->part[i - 1] < f) {
		s->part[i] = s->part[i - 1];
		i--;
	}
	s->part[i] = f;
}

/* The node of view v as the measure sees it.  O(devices x partly used
 * devices). */
static void fnode_from_view(const mu_workload_mix_t *m, const mu_node_view_t *v,
			    fnode_t *s)
{
	s->cpu = v->free->v[MU_RES_CPU];
	s->mem = v->free->v[MU_RES_MEM];
	s->nfull = s->npart = 0;
	s->total = 0;
	s->model = 0;
	int n = v->ngpu < MU_MAX_GPUS ? v->ngpu : MU_MAX_GPUS;
	for (int g = 0; g < n; g++) {
		int16_t f = v->gpu_free[g];
		s->total += f > 0 ? f : 0;
		if (f >= 1000)
			s->nfull++;
		else if (f > 0)
			fnode_add_part(s, f);
	}
	if (m && v->gpu_model)
		for (int32_t i = 0; i < m->nmodels; i++)
			if (strcmp(m->models[i], v->gpu_model) == 0)
				s->model = (uint64_t)1 << i;
}

/* s after taking milli from a device with f free (f >= milli). */
static void fnode_take_share(fnode_t *s, int16_t f, int16_t milli)
{
	if (f >= 1000) {
		s->nfull--;
	} else {
		int32_t i = 0;
		while (i < s->npart - 1 && s->part[i] != f)
			i++;
		memmove(&s->part[i], &s->part[i + 1],
			(size_t)(s->npart - i - 1) * sizeof *s->part);
		s->npart--;
	}
	if (f - milli > 0)
		fnode_add_part(s, (int16_t)(f - milli));
	s->total -= milli;
}

double mu_gpu_frag(const mu_workload_mix_t *m, const mu_node_view_t *node)
{
	fnode_t s;
	fnode_from_view(m, node, &s);
	return frag_of(m, &s, 0);
}

/* --- Descent policies ---------------------------------------------------- */

/* The best way to place req on a node for a measure: the growth of the
 * node's F, and the device for a share (-1 otherwise). */
typedef struct placement {
	double cost;
	int dev;
} placement_t;

/* Tries every distinct way to place req on the node of view v (one per
 * distinct free share that holds a share pod; the one whole-GPU or
 * CPU-only placement otherwise) and keeps the least growth of F.  Ties go
 * to the device with less free, then the lower index.  O(devices) measures
 * of the node. */
static placement_t best_placement(const mu_workload_mix_t *m,
				  const mu_node_view_t *v, const mu_res_t *req,
				  int how)
{
	fnode_t before, after;
	fnode_from_view(m, v, &before);
	double f0 = frag_of(m, &before, how);
	after = before;
	after.cpu -= req->v[MU_RES_CPU];
	after.mem -= req->v[MU_RES_MEM];
	int16_t milli = (int16_t)req->v[MU_RES_GPU_MILLI];
	placement_t best = {INFINITY, -1};
	if (req->v[MU_RES_GPU] > 0 || milli <= 0) {
		after.nfull -= (int32_t)req->v[MU_RES_GPU];
		after.total -= 1000 * req->v[MU_RES_GPU];
		best.cost = frag_of(m, &after, how) - f0;
		return best;
	}
	for (int g = 0; g < v->ngpu && g < MU_MAX_GPUS; g++) {
		int16_t f = v->gpu_free[g];
		bool seen = f < milli;
		for (int h = 0; h < g && !seen; h++)
			seen = v->gpu_free[h] == f;
		if (seen)
			continue;
		fnode_t s = after;
		fnode_take_share(&s, f, milli);
		double c = frag_of(m, &s, how) - f0;
		if (c < best.cost ||
		    (c == best.cost && f < v->gpu_free[best.dev])) {
			best.cost = c;
			best.dev = g;
		}
	}
	return best;
}

/* FGDScore's integer score of a growth of F: 100 x sigmoid(-growth in
 * GPUs), truncated. */
static int64_t fgd_points(double growth)
{
	return (int64_t)(100.0 / (1.0 + exp(growth / 1000.0)));
}

/* What muster adds to FGD's integer points when it places a share (see
 * muster below); FGD's own placement has none (share_placement's NULL). */
typedef struct share_terms {
	const int16_t *dead; /* the mix's dead remainders (mix_dead) */
	int32_t reserve;     /* whole devices a node keeps before breaking one costs */
	bool best_fit;       /* points by what the device keeps free, not FGD's */
	int how;             /* the measure's flags (FRAG_DEMAND or 0) */
	double spread;       /* millicores per milli-GPU free a node keeps for
	                      * a whole device to gain 100 points (0: off) */
} share_terms_t;

/* The FGD artifact's share placement (calculateGpuShareFragExtendScore):
 * the best integer score of the growth of F over the devices of v that
 * hold the share, the first such device on ties; with terms, muster's
 * corrections to each device's points.  after is the node less the pod's
 * CPU, f0 its F before.  O(devices) measures of the node. */
static placement_t share_placement(const mu_workload_mix_t *m,
				   const mu_node_view_t *v, int16_t milli,
				   const fnode_t *after, double f0,
				   const share_terms_t *terms)
{
	placement_t best = {-1, -1};
	for (int g = 0; g < v->ngpu && g < MU_MAX_GPUS; g++) {
		int16_t f = v->gpu_free[g];
		if (f < milli)
			continue;
		double p;
		if (terms && terms->best_fit) {
			p = 100 - (f - milli) / 10.0;
		} else {
			fnode_t s = *after;
			fnode_take_share(&s, f, milli);
			p = (double)fgd_points(frag_of(m, &s, terms ? terms->how : 0) - f0);
		}
		if (terms) {
			int dead = terms->dead[f - milli] -
				   (f >= 1000 ? 0 : terms->dead[f]);
			p -= dead / 1001.0;
			if (f >= 1000 && after->nfull <= terms->reserve)
				p -= 100;
			if (f >= 1000 && terms->spread > 0 &&
			    (double)after->cpu >=
			    terms->spread * (double)(after->total - milli))
				p += 100;
		}
		if (best.dev < 0 || p > best.cost)
			best = (placement_t){p, g};
	}
	return best;
}

/* The FGD artifact's placement (calculateGpuShareFragExtendScore): the
 * integer score of the one placement of a whole-GPU or CPU-only pod; for
 * a share, share_placement with no terms (or with muster's).  The pod's
 * CPU counts as kube-scheduler's non-zero request (100 millicores when it
 * asks for none).  O(devices) measures of the node. */
static placement_t fgd_placement(const mu_workload_mix_t *m,
				 const mu_node_view_t *v, const mu_res_t *req,
				 const share_terms_t *terms)
{
	fnode_t before, after;
	fnode_from_view(m, v, &before);
	int how = terms ? terms->how : 0;
	double f0 = frag_of(m, &before, how);
	after = before;
	after.cpu -= req->v[MU_RES_CPU] > 0 ? req->v[MU_RES_CPU] : 100;
	int16_t milli = (int16_t)req->v[MU_RES_GPU_MILLI];
	if (req->v[MU_RES_GPU] > 0 || milli <= 0) {
		after.nfull -= (int32_t)req->v[MU_RES_GPU];
		after.total -= 1000 * req->v[MU_RES_GPU];
		return (placement_t){(double)fgd_points(frag_of(m, &after, how) - f0), -1};
	}
	return share_placement(m, v, milli, &after, f0, terms);
}

static double score_fgd(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			const mu_res_t *req)
{
	return fgd_placement(ctx->state, n, req, NULL).cost;
}

static int pick_fgd(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
		    const mu_res_t *req)
{
	return fgd_placement(ctx->state, n, req, NULL).dev;
}

/* muster.  A pod that takes whole GPUs or only CPU is placed by the
 * growth of the CPU-aware measure: CPU is what such pods take in bulk, and
 * that measure is the one that sees GPUs stranded by it.
 *
 * A share is placed by FGD's integer points on muster's mix (the first
 * node on ties, which gathers shares on the same nodes: on a workload of
 * shares only that is worth about a point over the real-valued growth),
 * with two corrections read off the mix (docs/evaluation.md, "Eleventh
 * round"):
 *   - remainder fit: less the growth of the device's dead remainder in
 *     GPUs (mix_dead; at most one point either way), so of two devices
 *     the share goes where what it leaves is a sum of common share sizes;
 *   - per-node reserve: breaking a whole device of a node that keeps no
 *     more than `reserve` x devices x the mix's whole-GPU share of the GPU
 *     demand whole devices costs 100 points (for shares below
 *     `reserve_below`), so shares break whole
 *     devices where whole-GPU pods are expected least, and still go there
 *     when no other node holds them.  It is per node because a score may
 *     read only the node (the engine keeps scores by node);
 *   - weights by demand (the sixteenth round): when pods of two or more
 *     GPUs carry at least `demand_multi` of the mix's GPU demand, the
 *     measure behind the points weighs each shape by its share of the
 *     GPU demand, not of the pods (FRAG_DEMAND), so that a shape few in
 *     number and large in GPUs (openb multigpu30's 8-GPU pods: 2.8% of
 *     the pods, 23% of the demand) counts for what it asks.  Shares then
 *     break the whole devices of nodes that could still hold such a pod
 *     less readily;
 *   - spread by CPU (the seventeenth round; on by default since the
 *     eighteenth, spread_cpu 20): a share below `mg_large` gains 100
 *     points on a whole device of a node that keeps at least
 *     `spread_cpu` cores per free GPU once it is placed.  Small shares
 *     then break the whole devices of CPU-rich nodes, whose CPU they need
 *     (openb's 470s ask 21 cores a GPU, a T4 node has 52), and leave the
 *     whole devices of CPU-poor nodes to the large shares, which ask
 *     little CPU (the 810s: 3.9 cores a GPU; docs/evaluation.md,
 *     "Eighteenth round: small shares spread to CPU-rich nodes").  Only
 *     where shares carry at least `spread_shares` of the mix's GPU
 *     demand and pods without GPUs are at most `spread_cpu_only` of its
 *     pods and pods tied to GPU models carry at most `spread_models` of
 *     its GPU demand: ungated it cost openb's multigpu40 (shares 0.18 of
 *     the demand), cpu500 (half the pods CPU-only) and gpuspec20 to 50
 *     (at x = 100, and gpuspec50 at x = 130) more than the seeds' spread.
 *   - fit (the twentieth round): where pods of two or more GPUs carry
 *     at least `fit_multi` of the mix's GPU demand, shares go by best fit
 *     and pay the reserve with `fit_reserve`, and the CPU-aware growth
 *     counts free memory (openb's multigpu40 and multigpu50: + 0.495 and
 *     + 0.477 over fgd at x = 130, from + 0.433 and + 0.394;
 *     docs/evaluation.md, "Twentieth round"), and the spread rule holds
 *     with `fit_spread` cores a GPU whatever the shares' part of the
 *     demand (the twenty-first round); and keep (the twenty-second):
 *     a GPU pod that leaves a node unable to hold the mix's most
 *     CPU-hungry type of two or more GPUs (keep_type), which it held,
 *     costs `fit_keep` (growth) or `fit_keep_share` (points).  On openb's
 *     multigpu50 that type, 8 GPUs with 120 cores and 720 GiB, fits only
 *     the 39 G3 nodes (128 cores, 768 GiB), and the CPU-aware growth sent
 *     4-GPU 60-core pods there first (a G2 node left with 36 cores and
 *     71 GiB for 4 GPUs holds fewer shapes), so from x = 0.6 every such
 *     pod was skipped (docs/evaluation.md, "Twenty-second round:
 *     multigpu50").
 * A large share (`mg_large` and more) is placed as a whole-GPU pod is, by
 * the CPU-aware growth, when pods of two or more GPUs carry at least
 * `mg_multi` of the mix's GPU demand (the settings: mu_muster_params_t,
 * the mix's or the defaults below; score_rollout.c chooses them): it is
 * alone on its device, and where it goes decides which nodes keep whole
 * GPUs; FGD's points make the
 * CPU-rich two-GPU nodes equal to the eight-GPU ones, the CPU-aware growth
 * puts it where the CPU left is as short as the GPUs, which pays when many
 * multi-GPU pods follow (openb's multigpu30) and costs where few do
 * (default).  Two more settings, off by default, are the fifteenth
 * round's late candidates: best_fit (a share's points by what its device
 * keeps free instead of FGD's) and whole_fgd (whole-GPU pods by FGD's
 * points).  O(devices) measures of the node. */
/* The defaults of MG_MULTI, MG_LARGE and RESERVE, now settings of
 * mu_muster_params_t that a caller may choose (score_rollout.c):
 * mg_multi 0.15, between openb default's 0.07 and multigpu30's 0.30;
 * mg_large 700, openb's 810s (its next share down is 650); reserve 0.75
 * of the whole-GPU demand share (0.5 and 1.0 tried); demand_multi 0.15,
 * mg_multi's threshold (docs/evaluation.md, "Sixteenth round");
 * mem_multi 0.45, on where pods of 2+ GPUs carry about half the demand or
 * more (openb's multigpu50 and multigpu100; always on, it costs the
 * synthetic cpu250 0.11 and multigpu30 0.05: docs/evaluation.md,
 * "Seventeenth round");
 * spread_cpu 20 cores a GPU (12, 16, 24, 30 tried), spread_shares 0.19
 * (between multigpu40's 0.18 and gpushare20's 0.20: fitted to the
 * synthetic variants), spread_cpu_only 0.15 (default's 0.13 in, cpu200 to
 * cpu500 out), spread_models 0.15 (gpuspec10 in, gpuspec20 to 100 out;
 * "Seventeenth round" and "Eighteenth round"); cpu_reserve 1.0 where
 * CPU-only pods are cpu_reserve_only 0.25 of the pods or more (cpu250's
 * 0.25 and cpu500's 0.50 in, cpu200's 0.20 out, where 1.0 cost 0.02;
 * "Nineteenth round: CPU-heavy variants"); fit_reserve 1.1 (1.0, 1.2,
 * 1.3, 1.5 tried) where pods of 2+ GPUs carry fit_multi 0.35 of the
 * demand or more (multigpu40's 0.40 in, multigpu30's 0.30 out, where the
 * rule cost about 0.1; "Twentieth round"); fit_spread 26 cores a GPU
 * under that gate (12, 16, 20, 22, 24, 28 tried; "Twenty-first round:
 * multi-GPU-heavy variants"); fit_keep 400 milli-GPU and fit_keep_share
 * 100 points under that gate (fit_keep 100, 200, 300, 500, 700, 1,000
 * and more tried: 300 to 500 a plateau) where pods of 2+ GPUs carry at
 * most fit_keep_multi 0.75 of the demand (multigpu40's 0.40 and
 * multigpu50's 0.50 in, multigpu100's 1.0 out, where the rule cost 0.12;
 * "Twenty-second round: multigpu50"). */
void mu_muster_params_defaults(mu_muster_params_t *p)
{
	*p = (mu_muster_params_t){0.15, 700, 0.75, 1001, 0, 0, 0.15, 0.45, 0.25,
				  1.5, 20, 0.19, 0.15, 0.15, 1.0, 0.25, 1.1,
				  0.35, 26, 400, 100, 0.75};
}

/* Every field below: a new field of mu_muster_params_t changes the size
 * and stops the build here until it is compared too. */
_Static_assert(sizeof(mu_muster_params_t) == 168,
	       "a new field of mu_muster_params_t: compare it in mu_muster_params_equal");

bool mu_muster_params_equal(const mu_muster_params_t *a, const mu_muster_params_t *b)
{
	return a->mg_multi == b->mg_multi && a->mg_large == b->mg_large &&
	       a->reserve == b->reserve && a->reserve_below == b->reserve_below &&
	       a->best_fit == b->best_fit && a->whole_fgd == b->whole_fgd &&
	       a->demand_multi == b->demand_multi && a->mem_multi == b->mem_multi &&
	       a->cpu_fit == b->cpu_fit && a->press_over == b->press_over &&
	       a->spread_cpu == b->spread_cpu && a->spread_shares == b->spread_shares &&
	       a->spread_cpu_only == b->spread_cpu_only && a->spread_models == b->spread_models &&
	       a->cpu_reserve == b->cpu_reserve && a->cpu_reserve_only == b->cpu_reserve_only &&
	       a->fit_reserve == b->fit_reserve && a->fit_multi == b->fit_multi &&
	       a->fit_spread == b->fit_spread && a->fit_keep == b->fit_keep &&
	       a->fit_keep_share == b->fit_keep_share && a->fit_keep_multi == b->fit_keep_multi;
}

/* The mix's settings, or the defaults in *tmp. */
static const mu_muster_params_t *muster_params(const mu_workload_mix_t *m,
					       mu_muster_params_t *tmp)
{
	if (m && m->muster)
		return m->muster;
	mu_muster_params_defaults(tmp);
	return tmp;
}

double mu__mix_multi(const mu_workload_mix_t *m)
{
	return m && m->index ? m->index->multi : 0;
}

/* Whether the twentieth round's rule holds for settings p on mix m (see
 * mu_muster_params_t): pods of two or more GPUs carry at least
 * p->fit_multi of the mix's GPU demand.  O(1). */
static bool share_fit(const mu_workload_mix_t *m, const mu_muster_params_t *p)
{
	return m && m->index && m->index->multi >= p->fit_multi;
}

/* The flags of the CPU-aware growth under the mix's settings: FRAG_MEM too
 * when the mix's multi-GPU share of the demand reaches mem_multi, or
 * under the fit rule (share_fit: on multigpu40, 0.40 of the demand in
 * pods of 2+ GPUs, it gained 0.018 at x = 130; docs/evaluation.md,
 * "Twentieth round"). */
static int cpu_how(const mu_workload_mix_t *m)
{
	mu_muster_params_t tmp;
	const mu_muster_params_t *p = muster_params(m, &tmp);
	return FRAG_CPU | (m && m->index && (m->index->multi >= p->mem_multi ||
					     share_fit(m, p)) ? FRAG_MEM : 0);
}

static bool muster_cpu_aware(const mu_workload_mix_t *m, const mu_res_t *req)
{
	mu_muster_params_t tmp;
	const mu_muster_params_t *p = muster_params(m, &tmp);
	if (req->v[MU_RES_GPU] > 0 && p->whole_fgd)
		return false; /* by FGD's points (muster_share: no share) */
	return req->v[MU_RES_GPU] > 0 || req->v[MU_RES_GPU_MILLI] <= 0 ||
	       (req->v[MU_RES_GPU_MILLI] >= p->mg_large && m && m->index &&
		m->index->multi >= p->mg_multi);
}

/* The measure's flags for shares placed by points under settings p:
 * weights by demand when the mix's multi-GPU share of the demand reaches
 * p->demand_multi (see muster above). */
static int share_how(const mu_workload_mix_t *m, const mu_muster_params_t *p)
{
	return m && m->index && m->index->multi >= p->demand_multi ?
	       FRAG_DEMAND : 0;
}

/* The spread rule's cores per free GPU, cpu, for share req under
 * settings p when shares_in (the shares' gate) holds: for a share below
 * p->mg_large where pods without GPUs are at most p->spread_cpu_only of
 * the mix's pods and pods tied to GPU models carry at most
 * p->spread_models of its GPU demand; else 0, off.  O(1). */
static double share_spread_at(const mu_workload_mix_t *m,
			      const mu_muster_params_t *p, const mu_res_t *req,
			      bool shares_in, double cpu)
{
	return m && m->index && shares_in &&
	       req->v[MU_RES_GPU_MILLI] < p->mg_large &&
	       m->index->cpu_only <= p->spread_cpu_only &&
	       m->index->bound <= p->spread_models ? cpu : 0;
}

/* The spread rule's cores per free GPU for share req under settings p
 * (see muster above): p->spread_cpu for a share below p->mg_large when
 * shares carry at least p->spread_shares of the mix's GPU demand and
 * pods without GPUs are at most p->spread_cpu_only of its pods and
 * pods tied to GPU models carry at most p->spread_models of its GPU
 * demand; else 0, off. */
static double share_spread(const mu_workload_mix_t *m,
			   const mu_muster_params_t *p, const mu_res_t *req)
{
	return share_spread_at(m, p, req, m && m->index &&
			       m->index->shares >= p->spread_shares,
			       p->spread_cpu);
}

/* muster's spread rule (muster_share): share_spread, and under the fit
 * rule (share_fit, with fit_spread > 0) p->fit_spread whatever the
 * shares' part of the demand (twenty-first round: openb's multigpu40,
 * shares 0.18 of the demand, gained about 0.04 at x = 130;
 * docs/evaluation.md, "Twenty-first round: multi-GPU-heavy variants").
 * muster-supply keeps share_spread.  O(1). */
static double share_spread_fit(const mu_workload_mix_t *m,
			       const mu_muster_params_t *p, const mu_res_t *req)
{
	if (share_fit(m, p) && p->fit_spread > 0)
		return share_spread_at(m, p, req, true, p->fit_spread);
	return share_spread(m, p, req);
}

/* The reserve of settings p on mix m (nineteenth round; see
 * mu_muster_params_t): p->cpu_reserve where pods without GPUs are at
 * least p->cpu_reserve_only of the mix's pods, else p->reserve.  On
 * openb's cpu500 (half the pods CPU-only, the CPU gone by x = 0.33) the
 * reserve of 1.0 allocated 58.65 at x = 1.3 against 0.75's 58.47 and 0's
 * 56.41, on cpu250 94.70 against 94.56 (seeds 42-46, `--rollout-pick`;
 * docs/evaluation.md, "Nineteenth round: CPU-heavy variants").  O(1). */
static double share_reserve(const mu_workload_mix_t *m,
			    const mu_muster_params_t *p)
{
	if (share_fit(m, p))
		return p->fit_reserve;
	return m && m->index && m->index->cpu_only >= p->cpu_reserve_only ?
	       p->cpu_reserve : p->reserve;
}

/* The share req's placement on the node of view v (see muster above):
 * FGD's with muster's terms.  Without a finished mix, FGD's placement.
 * O(devices) measures. */
static placement_t muster_share(const mu_workload_mix_t *m,
				const mu_node_view_t *v, const mu_res_t *req)
{
	if (!m || !m->index)
		return fgd_placement(m, v, req, NULL);
	mu_muster_params_t tmp;
	const mu_muster_params_t *p = muster_params(m, &tmp);
	share_terms_t terms = {
		m->index->dead,
		req->v[MU_RES_GPU_MILLI] < p->reserve_below ?
			(int32_t)floor(share_reserve(m, p) * v->ngpu *
				       m->index->whole) : -1,
		p->best_fit != 0 || share_fit(m, p), share_how(m, p),
		share_spread_fit(m, p, req)};
	return fgd_placement(m, v, req, &terms);
}

/* What a GPU pod's score loses on node v of a model the mix over-asks
 * (press_over, see mu_muster_params_t): PRESS_COST per unit of pressure
 * above the setting, far above the points and growths it is added to.
 * The pressure is the engine's, from its own devices per model
 * (ctx->models), or outside an engine the mix's from the devices given
 * to mu_workload_mix_supply.  0 without devices known, for CPU-only pods
 * and with the rule off.  O(models). */
#define PRESS_COST 1e6

static double press_cost(const mu_score_ctx_t *ctx,
			 const mu_muster_params_t *p, const mu_node_view_t *v,
			 const mu_res_t *req)
{
	const mu_workload_mix_t *m = ctx->state;
	if (!m || !m->index || p->press_over <= 0 ||
	    (req->v[MU_RES_GPU] <= 0 && req->v[MU_RES_GPU_MILLI] <= 0))
		return 0;
	double press = 0;
	const mu_gpu_models_t *g = ctx->models;
	if (g) { /* the engine's count */
		if (!g->pressed)
			return 0;
		int32_t k = -1;
		for (int32_t i = 0; i < g->n && k < 0; i++)
			if (g->model[i] == v->gpu_model)
				k = i; /* the engine's views: the same interned name */
		for (int32_t i = 0; i < g->n && k < 0 && v->gpu_model; i++)
			if (g->model[i] && strcmp(g->model[i], v->gpu_model) == 0)
				k = i;
		press = k >= 0 ? g->press[k] : 0;
	} else if (m->index->npress)
		press = m->index->press[mix_model(m, v->gpu_model)];
	else
		return 0;
	double over = press - p->press_over;
	return over > 1e-9 ? PRESS_COST * over : 0;
}

/* Whole free devices of v. */
static int32_t view_whole(const mu_node_view_t *v)
{
	int32_t w = 0;
	for (int g = 0; g < v->ngpu && g < MU_MAX_GPUS; g++)
		w += v->gpu_free[g] >= 1000;
	return w;
}

/* The mix's pod type of two or more GPUs that asks the most CPU (then
 * memory), NULL if none: found once when the mix is indexed (mix_index),
 * not at each of the score's calls (nodes x pods).  m is indexed.  O(1). */
static const mu_pod_type_t *keep_type(const mu_workload_mix_t *m)
{
	return m->index->keep >= 0 ? &m->types[m->index->keep] : NULL;
}

/* Whether a node with whole free devices `whole`, free cpu and mem, of
 * model bit `model`, holds pod type t. */
static bool keep_holds(const mu_pod_type_t *t, int32_t whole, int64_t cpu,
		       int64_t mem, uint64_t model)
{
	return whole >= t->gpus && cpu >= t->cpu && mem >= t->mem &&
	       (!t->models || (t->models & model));
}

/* Whether GPU pod req, placed on node v so that it takes `took` of v's
 * whole free devices, breaks the keep rule (see mu_muster_params_t:
 * fit_keep): the fit gate holds, pods of 2+ GPUs carry at most
 * p->fit_keep_multi of the mix's GPU demand, and v holds the mix's
 * keep_type now and not once req is placed.  O(devices). */
static bool keep_breaks(const mu_workload_mix_t *m,
			const mu_muster_params_t *p, const mu_node_view_t *v,
			const mu_res_t *req, int32_t took)
{
	if (!share_fit(m, p) || m->index->multi > p->fit_keep_multi ||
	    (req->v[MU_RES_GPU] <= 0 && req->v[MU_RES_GPU_MILLI] <= 0))
		return false;
	const mu_pod_type_t *t = keep_type(m);
	if (!t)
		return false;
	int32_t whole = view_whole(v);
	int32_t k = mix_model(m, v->gpu_model);
	uint64_t bit = k < MU_MIX_MAX_MODELS ? (uint64_t)1 << k : 0;
	int64_t cpu = v->free->v[MU_RES_CPU], mem = v->free->v[MU_RES_MEM];
	return keep_holds(t, whole, cpu, mem, bit) &&
	       !keep_holds(t, whole - took, cpu - req->v[MU_RES_CPU],
			   mem - req->v[MU_RES_MEM], bit);
}

/* Whole free devices of v that placement pl of req takes: req's GPUs
 * for a whole-GPU pod, 1 for a share on a whole device, else 0. */
static int32_t keep_took(const mu_node_view_t *v, const mu_res_t *req,
			 placement_t pl)
{
	if (req->v[MU_RES_GPU] > 0)
		return (int32_t)req->v[MU_RES_GPU];
	return pl.dev >= 0 && pl.dev < v->ngpu && v->gpu_free[pl.dev] >= 1000;
}

/* A CPU-only pod's tie-break under cpu_fit (see mu_muster_params_t): less
 * by the free CPU it leaves, 0.001 milli-GPU a core (0.128 on openb's
 * largest nodes), so it decides among growths equal but for rounding
 * (1e-9 a millicore, below the sums' rounding noise, changed nothing
 * on cpu500; docs/evaluation.md, "Seventeenth round"). */
#define CPU_FIT_SCALE 1e-6

static double score_muster(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			   const mu_res_t *req)
{
	mu_muster_params_t tmp;
	const mu_muster_params_t *p = muster_params(ctx->state, &tmp);
	double press = press_cost(ctx, p, n, req);
	const mu_workload_mix_t *m = ctx->state;
	if (!muster_cpu_aware(m, req)) {
		placement_t sh = muster_share(m, n, req);
		return sh.cost - press -
		       (keep_breaks(m, p, n, req, keep_took(n, req, sh)) ?
			p->fit_keep_share : 0);
	}
	placement_t pl = best_placement(m, n, req, cpu_how(m));
	double sc = -pl.cost - press -
		    (keep_breaks(m, p, n, req, keep_took(n, req, pl)) ?
		     p->fit_keep : 0);
	if (m && m->index && m->index->cpu_only >= p->cpu_fit &&
	    ((req->v[MU_RES_GPU] <= 0 && req->v[MU_RES_GPU_MILLI] <= 0)))
		sc -= CPU_FIT_SCALE *
		      (double)(n->free->v[MU_RES_CPU] - req->v[MU_RES_CPU]);
	return sc;
}

static int pick_muster(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
		       const mu_res_t *req)
{
	if (!muster_cpu_aware(ctx->state, req))
		return muster_share(ctx->state, n, req).dev;
	return best_placement(ctx->state, n, req, cpu_how(ctx->state)).dev;
}

/* --- muster-supply: shares placed by the cluster's supply ------------------
 *
 * muster with its two share rules read off the cluster's whole free devices
 * per GPU model (mu_supply_t, which the engine keeps) as well as the mix:
 *   - the reserve is scaled by the node's model's scarcity: rho, the
 *     whole-GPU demand still to come on the model (the mix's whole-GPU
 *     share of the cluster's free GPUs, each whole-GPU shape's share spread
 *     over the models it may use in proportion to their whole free
 *     devices) per whole free device of the model.  Breaking a whole device
 *     costs 100 points on a node that keeps no more than
 *     floor(reserve x devices x min(1, rho)) whole devices: nothing where
 *     whole devices are plentiful, muster's reserve where they are as
 *     scarce as the mix's share of them (rho = W on an empty cluster
 *     without model constraints);
 *   - a large share (mg_large and more) that breaks a whole device of a
 *     node with w whole free devices costs what it takes from the pods
 *     that need them: the 1-GPU pods' share of the mix per whole free
 *     device of the model, plus, for w >= 2, the w-GPU pods' share per
 *     node of the model with w or more whole free devices (the node no
 *     longer holds one of those).  The least cost wins (SUPPLY_LARGE x
 *     the cost, far above the points), muster's placement among equals.
 * The supply's models are matched to the mix's by name.  O(models^2 +
 * groups x models) per node on top of muster's measures. */
#define SUPPLY_LARGE 1e7

/* The mix bit of supply model i (0: the mix does not name it). */
static uint64_t supply_bit(const mu_workload_mix_t *m, const mu_supply_t *sp,
			   int32_t i)
{
	const char *name = sp->models[i].model;
	for (int32_t k = 0; name && k < m->nmodels; k++)
		if (strcmp(m->models[k], name) == 0)
			return (uint64_t)1 << k;
	return 0;
}

/* The entry of sp for the node's model, NULL if none. */
static const mu_supply_model_t *supply_of(const mu_supply_t *sp,
					  const mu_node_view_t *v)
{
	for (int32_t i = 0; i < sp->nmodels; i++) {
		const char *x = sp->models[i].model;
		if (x == v->gpu_model ||
		    (x && v->gpu_model && strcmp(x, v->gpu_model) == 0))
			return &sp->models[i];
	}
	return NULL;
}

/* What muster-supply reads of the cluster for one node: the scarcity of
 * whole devices on its model and the large-share cost of breaking one
 * when the node keeps `whole` of them (see above). */
typedef struct supply_view {
	double rho;
	double large;
} supply_view_t;

static supply_view_t supply_view(const mu_workload_mix_t *m,
				 const mu_supply_t *sp, const mu_node_view_t *v,
				 int32_t whole)
{
	supply_view_t out = {0, 0};
	const mu_supply_model_t *own = supply_of(sp, v);
	if (!own || own->whole <= 0)
		return out;
	uint64_t bits[64] = {0}, nodebit = 0;
	int32_t nm = sp->nmodels < 64 ? sp->nmodels : 64;
	for (int32_t i = 0; i < nm; i++) {
		bits[i] = supply_bit(m, sp, i);
		if (&sp->models[i] == own)
			nodebit = bits[i];
	}
	const struct mu__mix_index *ix = m->index;
	double mean = 0, per_whole = 0, d1 = 0, dw = 0;
	for (int32_t i = 0; i < ix->ngroups; i++) {
		const mix_group_t *g = &ix->groups[i];
		double w = ix->cum[g->first + g->n - 1];
		mean += w * (g->gpus ? 1000.0 * g->gpus : g->milli);
	}
	for (int32_t i = 0; i < ix->ngroups && mean > 0; i++) {
		const mix_group_t *g = &ix->groups[i];
		if (!g->gpus || (g->models && !(g->models & nodebit)))
			continue;
		double w = ix->cum[g->first + g->n - 1];
		int64_t supply = 0;
		for (int32_t k = 0; k < nm; k++)
			if (!g->models || (g->models & bits[k]))
				supply += sp->models[k].whole;
		if (supply > 0)
			per_whole += w * 1000.0 * g->gpus / mean / (double)supply;
		if (g->gpus == 1)
			d1 += w;
		else if (g->gpus == whole)
			dw += w;
	}
	int64_t free_milli = 1000 * (int64_t)sp->all.whole;
	for (int c = 0; c < MU_SUPPLY_CLASSES; c++)
		free_milli += sp->all.part_milli[c];
	out.rho = (double)free_milli / 1000.0 * per_whole;
	out.large = d1 / own->whole;
	if (whole >= 2 && whole <= MU_MAX_GPUS && own->nodes_whole[whole] > 0)
		out.large += dw / own->nodes_whole[whole];
	return out;
}

/* The share req's placement on v by muster-supply (see above): muster's,
 * with the reserve scaled by the model's scarcity, less the large share's
 * cost.  Without a mix or a supply, muster's.  O(devices) measures. */
static placement_t muster_supply_share(const mu_workload_mix_t *m,
				       const mu_supply_t *sp,
				       const mu_node_view_t *v,
				       const mu_res_t *req)
{
	if (!m || !m->index || !sp)
		return muster_share(m, v, req);
	int32_t whole = view_whole(v);
	supply_view_t sv = supply_view(m, sp, v, whole);
	mu_muster_params_t tmp;
	const mu_muster_params_t *mp = muster_params(m, &tmp);
	placement_t p;
	if (muster_cpu_aware(m, req)) {
		p = best_placement(m, v, req, cpu_how(m));
		p.cost = -p.cost;
	} else {
		double scale = sv.rho < 1 ? sv.rho : 1;
		share_terms_t terms = {
			m->index->dead,
			(int32_t)floor(mp->reserve * v->ngpu * scale),
			mp->best_fit != 0,
			share_how(m, mp), share_spread(m, mp, req)};
		p = fgd_placement(m, v, req, &terms);
	}
	if (req->v[MU_RES_GPU_MILLI] >= mp->mg_large && p.dev >= 0 &&
	    v->gpu_free[p.dev] >= 1000)
		p.cost -= SUPPLY_LARGE * sv.large;
	return p;
}

static double score_muster_supply(const mu_score_ctx_t *ctx,
				  const mu_node_view_t *n, const mu_res_t *req)
{
	if (req->v[MU_RES_GPU] > 0 || req->v[MU_RES_GPU_MILLI] <= 0)
		return score_muster(ctx, n, req);
	return muster_supply_share(ctx->state, ctx->supply, n, req).cost;
}

static int pick_muster_supply(const mu_score_ctx_t *ctx,
			      const mu_node_view_t *n, const mu_res_t *req)
{
	if (req->v[MU_RES_GPU] > 0 || req->v[MU_RES_GPU_MILLI] <= 0)
		return pick_muster(ctx, n, req);
	return muster_supply_share(ctx->state, ctx->supply, n, req).dev;
}

const mu_score_ops_t mu_score_fgd = {"fgd", score_fgd, pick_fgd, MU_SCORE_MIX};
const mu_score_ops_t mu_score_muster = {"muster", score_muster, pick_muster, MU_SCORE_MIX};
/* The tenth round's option, now muster's own behaviour; the name is kept
 * so that its commands still run. */
const mu_score_ops_t mu_score_muster_mg = {"muster-mg", score_muster, pick_muster,
					   MU_SCORE_MIX};
const mu_score_ops_t mu_score_muster_supply = {
	"muster-supply", score_muster_supply, pick_muster_supply,
	MU_SCORE_MIX | MU_SCORE_SUPPLY};
/* muster with the settings its harness chose by rollouts (score_rollout.c)
 * in the mix's `muster`: the same functions under its own name. */
const mu_score_ops_t mu_score_muster_rollout = {"muster-rollout", score_muster,
						pick_muster, MU_SCORE_MIX};
/* muster with the settings its harness chooses again as the cluster fills
 * (mu_rollout_horizon_t): the same functions under its own name. */
const mu_score_ops_t mu_score_muster_horizon = {"muster-horizon", score_muster,
						pick_muster, MU_SCORE_MIX};
