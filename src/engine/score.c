/*
 * score.c - scoring policies as typed ops tables.
 *
 * A score function sees one candidate node (which fits) and the pod's
 * request, and returns a number: higher wins.  Policies must depend only on
 * that node's state, so that the engine may cache and re-score a single
 * node after a bind.
 */
#include "engine/engine_int.h"

/* Fraction of a node's capacity in use after placing req, per resource
 * kind: GPU (devices, milli-accurate), CPU and memory. */
static void score_fracs(const mu_node_view_t *n, const mu_res_t *req,
			double *gpu, double *cpu, double *mem)
{
	*gpu = *cpu = *mem = 0;
	if (n->ngpu > 0) {
		double cap = (double)n->ngpu * 1000;
		double used = cap - (double)n->free->v[MU_RES_GPU_MILLI];
		used += (double)req->v[MU_RES_GPU] * 1000 + (double)req->v[MU_RES_GPU_MILLI];
		*gpu = used / cap;
	}
	if (n->alloc->v[MU_RES_CPU] > 0)
		*cpu = (double)(n->alloc->v[MU_RES_CPU] - n->free->v[MU_RES_CPU] +
				req->v[MU_RES_CPU]) / (double)n->alloc->v[MU_RES_CPU];
	if (n->alloc->v[MU_RES_MEM] > 0)
		*mem = (double)(n->alloc->v[MU_RES_MEM] - n->free->v[MU_RES_MEM] +
				req->v[MU_RES_MEM]) / (double)n->alloc->v[MU_RES_MEM];
}

/* Most-allocated, GPU first: GPUs weigh ten times CPU and memory together,
 * so GPU pods fill GPU nodes before spilling; CPU-only pods avoid GPU nodes
 * when they can, keeping GPUs reachable for GPU pods. */
static double score_binpack(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			    const mu_res_t *req)
{
	(void)ctx;
	double gpu, cpu, mem;
	score_fracs(n, req, &gpu, &cpu, &mem);
	double s = 10.0 * gpu + 0.5 * (cpu + mem);
	bool wants_gpu = req->v[MU_RES_GPU] > 0 || req->v[MU_RES_GPU_MILLI] > 0;
	if (!wants_gpu && n->ngpu > 0)
		s -= 20.0;
	return s;
}

/* Least-allocated: the mirror image of binpack. */
static double score_spread(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			   const mu_res_t *req)
{
	(void)ctx;
	double gpu, cpu, mem;
	score_fracs(n, req, &gpu, &cpu, &mem);
	return -(10.0 * gpu + 0.5 * (cpu + mem));
}

const mu_score_ops_t mu_score_binpack = {"binpack", score_binpack, NULL,
					  MU_SCORE_PACKS};
const mu_score_ops_t mu_score_spread = {"spread", score_spread, NULL,
					 MU_SCORE_SPREADS};

const mu_score_ops_t *mu_score_find(const char *name)
{
	static const mu_score_ops_t *const all[] = {&mu_score_binpack,
						    &mu_score_spread,
						    &mu_score_random,
						    &mu_score_dotprod,
						    &mu_score_clustering,
						    &mu_score_packing,
						    &mu_score_bestfit,
						    &mu_score_fgd,
						    &mu_score_muster,
						    &mu_score_muster_mg,
						    &mu_score_muster_supply,
						    &mu_score_muster_rollout,
						    &mu_score_muster_horizon};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
