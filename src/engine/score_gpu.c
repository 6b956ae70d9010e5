/*
 * score_gpu.c - the baseline GPU placement policies of the FGD paper
 * (Weng et al., USENIX ATC'23, section 6), as its simulator computes them
 * (the repository hkust-adsl/kubernetes-scheduler-simulator, with the
 * artifact's scheduler configuration of scripts/generate_config_and_run.py):
 *
 *   random      any node that fits (RandomScore picks one node in PreScore),
 *               and a random device that holds a share (gpuSelMethod
 *               random);
 *   dotprod     100 x (1 - dot / 2) of the node's free (CPU, GPU) and the
 *               request, both divided by the largest node's capacity
 *               (128 cores, 8 GPUs; DotProductScore with dimExtMethod
 *               merge and normMethod max);
 *   packing     a share on a partly used device that holds it: 91..100 by
 *               the free share of that device; a pod that must open free
 *               devices of a used node: 50 minus the devices it opens; an
 *               idle node: 33 minus its devices (GpuPackingScore);
 *   clustering  by the GPU requests of the pods already on the node: only
 *               the pod's own kind 75..100, its kind among others 50..75,
 *               none 25..50, only other kinds 0..25; within a band, more
 *               GPU in use is better (GpuClusteringScore);
 *   bestfit     100 x (1 - (CPU left / 128 cores + GPU left / 8 GPUs) / 2)
 *               after placing (BestFitScore; its min-max normalization
 *               keeps the order of integer scores in 0..100, so it does not
 *               change the choice).
 * Every score is the artifact's integer (Go truncation).  Among nodes of
 * equal score the artifact's kube-scheduler (v1.20, the fork
 * mental2008/kubernetes v1.20.5-minor) takes the first in its list of
 * feasible nodes, which its parallel filter builds chunk by chunk; the
 * engine follows that order when mu_engine_config_t.kube_ties is set, as
 * `muster eval openb` sets it for these policies, and takes the lower
 * node id otherwise.  Pods without a GPU score 0 everywhere under packing
 * and clustering: the first node listed that fits.
 * Devices are the engine's: whole GPUs the lowest free indices, a share the
 * least free device that holds it, the first on ties (gpuSelMethod best),
 * except under random.
 */
#include "engine/engine_int.h"

#define MAX_SPEC_CPU 128000.0 /* the artifact's MaxSpecCpu (millicores) */
#define MAX_SPEC_GPU 8000     /* MaxSpecGpu (milli-GPU) */

/* A uniformly random value in [0, scale), to break ties. */
static double tie(const mu_score_ctx_t *ctx, double scale)
{
	return (double)(ctx->random >> 11) * 0x1p-53 * scale;
}

/* An integer score; equal ones go to the lower node id (see above). */
static double ranked(const mu_score_ctx_t *ctx, int64_t score)
{
	(void)ctx;
	return (double)score;
}

/* GPU demand of a request in milli-GPU. */
static int64_t gpu_demand(const mu_res_t *req)
{
	return req->v[MU_RES_GPU] * 1000 + req->v[MU_RES_GPU_MILLI];
}

/* The request's CPU as kube-scheduler's non-zero requests count it: a pod
 * asking for none counts 100 millicores. */
static int64_t cpu_nonzero(const mu_res_t *req)
{
	return req->v[MU_RES_CPU] > 0 ? req->v[MU_RES_CPU] : 100;
}

static double score_random(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			   const mu_res_t *req)
{
	(void)n;
	(void)req;
	return tie(ctx, 1);
}

/* A uniformly random device that holds the share. */
static int pick_random(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
		       const mu_res_t *req)
{
	int64_t milli = req->v[MU_RES_GPU_MILLI];
	int fits = 0;
	for (int g = 0; g < n->ngpu; g++)
		fits += n->gpu_free[g] >= milli;
	if (fits == 0)
		return -1;
	int k = (int)(tie(ctx, fits));
	for (int g = 0; g < n->ngpu; g++)
		if (n->gpu_free[g] >= milli && k-- == 0)
			return g;
	return -1;
}

static double score_dotprod(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			    const mu_res_t *req)
{
	double cpu = (double)n->free->v[MU_RES_CPU] / MAX_SPEC_CPU *
		     ((double)cpu_nonzero(req) / MAX_SPEC_CPU);
	double gpu = (double)n->free->v[MU_RES_GPU_MILLI] / MAX_SPEC_GPU *
		     ((double)gpu_demand(req) / MAX_SPEC_GPU);
	return ranked(ctx, (int64_t)(100.0 * (1.0 - (cpu + gpu) / 2.0)));
}

static double score_bestfit(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			    const mu_res_t *req)
{
	double left = (double)(n->free->v[MU_RES_CPU] - cpu_nonzero(req)) /
		      MAX_SPEC_CPU * 0.5 +
		      (double)(n->free->v[MU_RES_GPU_MILLI] - gpu_demand(req)) /
		      MAX_SPEC_GPU * 0.5;
	return ranked(ctx, (int64_t)((1.0 - left) * 100.0));
}

/* GpuPackingScore of a GPU pod on n (which fits).  The devices a pod
 * would take are the least free that hold its per-device share, in index
 * order among equals.  O(devices^2) at most 64 x 64, in practice 8 x 8. */
static int64_t packing(const mu_node_view_t *n, const mu_res_t *req)
{
	int full = 0;
	for (int g = 0; g < n->ngpu; g++)
		full += n->gpu_free[g] == 1000;
	if (full == n->ngpu)
		return 100 / 3 - full > full ? 100 / 3 - full : full;
	int64_t per = req->v[MU_RES_GPU] > 0 ? 1000 : req->v[MU_RES_GPU_MILLI];
	int64_t want = req->v[MU_RES_GPU] > 0 ? req->v[MU_RES_GPU] : 1;
	int64_t opened = 0, freepct = 0;
	uint64_t used = 0;
	while (want > 0) {
		int best = -1;
		for (int g = 0; g < n->ngpu; g++)
			if (!(used & ((uint64_t)1 << g)) && n->gpu_free[g] >= per &&
			    (best < 0 || n->gpu_free[g] < n->gpu_free[best]))
				best = g;
		if (best < 0)
			return 0; /* the artifact's error path: MinNodeScore */
		used |= (uint64_t)1 << best;
		opened += n->gpu_free[best] == 1000;
		freepct += n->gpu_free[best] * 100 / 1000;
		want--;
	}
	if (opened > 0)
		return 50 - opened > 100 / 3 ? 50 - opened : 100 / 3;
	return 100 - freepct / 10 > 50 ? 100 - freepct / 10 : 50;
}

static double score_packing(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			    const mu_res_t *req)
{
	if (gpu_demand(req) <= 0)
		return ranked(ctx, 0);
	return ranked(ctx, packing(n, req));
}

/* GpuClusteringScore: the band from the kinds of GPU pods on the node (the
 * pod's own kind alone, with others, none at all, only others), then the
 * GPU in use.  A node view without kinds counts as holding none. */
static double score_clustering(const mu_score_ctx_t *ctx,
			       const mu_node_view_t *n, const mu_res_t *req)
{
	if (gpu_demand(req) <= 0)
		return ranked(ctx, 0);
	int own = req->v[MU_RES_GPU] > 0 ? (int)req->v[MU_RES_GPU] : 0;
	int kinds = 0;
	bool mine = false;
	for (int k = 0; n->gpu_kinds && k <= MU_MAX_GPUS; k++)
		if (n->gpu_kinds[k] > 0) {
			kinds++;
			mine |= k == own;
		}
	int64_t band = mine ? (kinds == 1 ? 3 : 2) : (kinds == 0 ? 1 : 0);
	int64_t left = n->free->v[MU_RES_GPU_MILLI];
	return ranked(ctx, 25 * (MAX_SPEC_GPU - left) / MAX_SPEC_GPU + 25 * band);
}

const mu_score_ops_t mu_score_random = {"random", score_random, pick_random, MU_SCORE_RANDOM};
const mu_score_ops_t mu_score_dotprod = {"dotprod", score_dotprod, NULL, 0};
const mu_score_ops_t mu_score_clustering = {"clustering", score_clustering, NULL, 0};
const mu_score_ops_t mu_score_packing = {"packing", score_packing, NULL, 0};
const mu_score_ops_t mu_score_bestfit = {"bestfit", score_bestfit, NULL, 0};
