/*
 * gpumodels.c - the cluster's GPU devices per model, which every engine
 * keeps, and muster's pressure per model from them.
 *
 * muster's press_over (score_frag.c) needs the cluster's devices per GPU
 * model beside the mix's demand per model.  The full supply (supply.c)
 * would give it but costs O(devices) at every bind and turns the node
 * index off (MU_SCORE_SUPPLY); the devices per model only move when a
 * node does (added, removed, cordoned, uncordoned, a new model or device
 * count), so every engine keeps them: a node remembers its slot and the
 * devices it added, and a change takes those out and adds the new ones,
 * O(models) for the slot's look-up, and mark the pressure stale.  The
 * pressure is computed again from the counts and the mix (O(shapes x
 * models)) only when the counts or the mix changed, the first time the
 * engine scores after (a cycle, a what-if, an explanation), and since
 * every node's score of a model-tied demand may move with it, the cached
 * scores are dropped then: mu__gpu_models_sync, in score_frag.c beside
 * the mix it reads, so that this file calls nothing of the engine's core
 * (scripts/check-loops.sh).  The engine frees the arrays
 * (mu_engine_free).
 *
 * Beside the counts (the twenty-first round), the values of the GPU memory
 * label (nvidia.com/gpu.memory) that live GPU nodes carry, each with its
 * node count, kept the same way at every node change: a GPU-memory
 * request (KAI's gpu-memory annotation) resolves against them in
 * O(values) instead of walking every node (queue.c), which the live
 * scheduler does for each pod counted in its demand (rechoose.c).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

const mu_gpu_models_t *mu_engine_gpu_models(const mu_engine_t *e)
{
	return e ? &e->gmodels : NULL;
}

/* The slot of model m (interned, or NULL) in g, added when new.  Returns
 * the slot or MU_ENOMEM.  O(models). */
static int32_t gm_slot(mu_gpu_models_t *g, const char *m)
{
	for (int32_t i = 0; i < g->n; i++)
		if (g->model[i] == m || (g->model[i] && m && strcmp(g->model[i], m) == 0))
			return i;
	if (g->n == g->cap) {
		int32_t cap = g->cap ? 2 * g->cap : 8;
		const char **mo = realloc(g->model, (size_t)cap * sizeof *mo);
		if (mo)
			g->model = mo;
		int64_t *dv = mo ? realloc(g->devices, (size_t)cap * sizeof *dv) : NULL;
		if (dv)
			g->devices = dv;
		double *pr = dv ? realloc(g->press, (size_t)cap * sizeof *pr) : NULL;
		if (!pr)
			return MU_ENOMEM;
		g->press = pr;
		g->cap = cap;
	}
	g->model[g->n] = m; /* interned: lives as long as the engine */
	g->devices[g->n] = 0;
	g->press[g->n] = 0;
	return g->n++;
}

int mu__gpu_models_node(mu_engine_t *e, mu__node_t *n, int sign)
{
	mu_gpu_models_t *g = &e->gmodels;
	if (sign < 0) {
		if (n->gdevices && n->gslot >= 0 && n->gslot < g->n) {
			g->devices[n->gslot] -= n->gdevices;
			e->gm_stale = true;
		}
		n->gdevices = 0;
		return MU_OK;
	}
	if (n->removed || n->unschedulable || n->ngpu <= 0)
		return MU_OK;
	int32_t k = gm_slot(g, n->model_name);
	if (k < 0)
		return k;
	n->gslot = k;
	n->gdevices = n->ngpu;
	g->devices[k] += n->gdevices;
	e->gm_stale = true;
	return MU_OK;
}

/* A label value as MiB: digits only, 1..2^40; 0 when it is not one.
 * O(length). */
static int64_t mib_of(const char *s)
{
	int64_t v = 0;
	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_C(1) << 40))
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v;
}

int mu__gpu_mem_node(mu_engine_t *e, mu__node_t *n, const char *label, int sign)
{
	if (sign < 0) {
		if (n->gmem > 0 && n->gmem <= e->ngmem)
			e->gmem[n->gmem - 1].nodes--;
		n->gmem = 0;
		return MU_OK;
	}
	int64_t mib = mib_of(label);
	if (n->removed || n->ngpu <= 0 || mib <= 0)
		return MU_OK;
	int32_t k = 0;
	while (k < e->ngmem && e->gmem[k].label != label) /* interned */
		k++;
	if (k == e->ngmem) {
		int rc = mu__grow((void **)&e->gmem, &e->gmem_cap, e->ngmem + 1,
				  sizeof *e->gmem);
		if (rc)
			return rc;
		e->gmem[e->ngmem++] = (mu__gpumem_t){label, mib, 0};
	}
	e->gmem[k].nodes++;
	n->gmem = k + 1;
	return MU_OK;
}

int64_t mu__gpu_mem_best(const mu_engine_t *e, int64_t mib, const char **label)
{
	int64_t best = 0;
	for (int32_t k = 0; k < e->ngmem; k++) {
		const mu__gpumem_t *g = &e->gmem[k];
		if (g->nodes > 0 && g->mib >= mib && (!best || g->mib < best)) {
			best = g->mib;
			*label = g->label;
		}
	}
	return best;
}
