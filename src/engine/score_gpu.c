/*
 * score_gpu.c - the baseline GPU placement policies of the FGD paper
 * (Weng et al., USENIX ATC'23, section 6), written from its descriptions.
 *
 *   random      any node that fits, and any device that holds a share;
 *   dotprod     the node whose free (CPU, GPU) vector, normalized by its
 *               capacity, has the least dot product with the request's;
 *   packing     a share goes to a partly used device that holds it if one
 *               exists anywhere, else to a busy node (some GPU in use),
 *               else to an idle node; whole GPUs go to busy nodes first;
 *   clustering  packing that first keeps pods of one GPU request together:
 *               a share prefers a device that only shares of its size
 *               (as far as the free share tells) use, a whole-GPU pod a
 *               node with no shared device;
 *   bestfit     the node with the least CPU and GPU left after placing,
 *               each as a fraction of the node's capacity.
 * The policies see a node only through mu_node_view_t.  Equal scores are
 * broken at random (the engine's ctx->random), as kube-scheduler does
 * among its best nodes, except where a secondary criterion decides.  A
 * pod that asks for no GPU has no GPU preference under packing and
 * clustering; it goes to the node with the most GPU allocated, which keeps
 * the CPU of idle GPU nodes for GPU pods.  Devices for a share are chosen
 * by best fit (the engine's) except under random.
 */
#include "engine/engine_int.h"

/* A uniformly random value in [0, scale), to break ties. */
static double tie(const mu_score_ctx_t *ctx, double scale)
{
	return (double)(ctx->random >> 11) * 0x1p-53 * scale;
}

/* GPU demand of a request in milli-GPU. */
static double gpu_demand(const mu_res_t *req)
{
	return (double)(req->v[MU_RES_GPU] * 1000 + req->v[MU_RES_GPU_MILLI]);
}

/* Fraction of the node's GPU capacity in use (0 without GPUs). */
static double gpu_used(const mu_node_view_t *n)
{
	if (n->ngpu <= 0)
		return 0;
	double cap = 1000.0 * n->ngpu;
	return (cap - (double)n->free->v[MU_RES_GPU_MILLI]) / cap;
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
	double s = 0;
	if (n->ngpu > 0) {
		double cap = 1000.0 * n->ngpu;
		s += gpu_demand(req) / cap *
		     ((double)n->free->v[MU_RES_GPU_MILLI] / cap);
	}
	double cpu = (double)n->alloc->v[MU_RES_CPU];
	if (cpu > 0)
		s += (double)req->v[MU_RES_CPU] / cpu *
		     ((double)n->free->v[MU_RES_CPU] / cpu);
	return -s + tie(ctx, 1e-9);
}

static double score_bestfit(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			    const mu_res_t *req)
{
	double left = 0;
	if (n->ngpu > 0)
		left += ((double)n->free->v[MU_RES_GPU_MILLI] - gpu_demand(req)) /
			(1000.0 * n->ngpu);
	double cpu = (double)n->alloc->v[MU_RES_CPU];
	if (cpu > 0)
		left += (double)(n->free->v[MU_RES_CPU] - req->v[MU_RES_CPU]) / cpu;
	return -left + tie(ctx, 1e-9);
}

/* What packing and clustering look at: devices in use, partly used
 * devices, whether one of those holds the share, and whether one that
 * holds it is used by shares of exactly that size only (its used share a
 * multiple of it). */
typedef struct gpu_state {
	int used, partly;
	bool shared_fit, same_fit;
} gpu_state_t;

static gpu_state_t gpu_state(const mu_node_view_t *n, int64_t milli)
{
	gpu_state_t s = {0, 0, false, false};
	for (int g = 0; g < n->ngpu; g++) {
		int16_t f = n->gpu_free[g];
		s.used += f < 1000;
		s.partly += f > 0 && f < 1000;
		if (milli > 0 && f < 1000 && f >= milli) {
			s.shared_fit = true;
			s.same_fit |= (1000 - f) % milli == 0;
		}
	}
	return s;
}

/* A pod without GPUs under packing or clustering: the node with the most
 * GPU allocated, ties at random. */
static double score_no_gpu(const mu_score_ctx_t *ctx, const mu_node_view_t *n)
{
	return gpu_used(n) + tie(ctx, 1e-9);
}

static double score_packing(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			    const mu_res_t *req)
{
	int64_t milli = req->v[MU_RES_GPU_MILLI];
	if (req->v[MU_RES_GPU] == 0 && milli == 0)
		return score_no_gpu(ctx, n);
	gpu_state_t s = gpu_state(n, milli);
	double tier = s.shared_fit ? 3 : s.used ? 2 : 1;
	return tier + tie(ctx, 0.5);
}

static double score_clustering(const mu_score_ctx_t *ctx,
			       const mu_node_view_t *n, const mu_res_t *req)
{
	int64_t milli = req->v[MU_RES_GPU_MILLI];
	if (req->v[MU_RES_GPU] == 0 && milli == 0)
		return score_no_gpu(ctx, n);
	gpu_state_t s = gpu_state(n, milli);
	double tier;
	if (milli > 0)
		tier = s.same_fit ? 4 : s.shared_fit ? 3 : s.used ? 2 : 1;
	else
		tier = s.used && !s.partly ? 3 : s.used ? 2 : 1;
	return tier + tie(ctx, 0.5);
}

const mu_score_ops_t mu_score_random = {"random", score_random, pick_random, MU_SCORE_RANDOM};
const mu_score_ops_t mu_score_dotprod = {"dotprod", score_dotprod, NULL, MU_SCORE_RANDOM};
const mu_score_ops_t mu_score_clustering = {"clustering", score_clustering, NULL, MU_SCORE_RANDOM};
const mu_score_ops_t mu_score_packing = {"packing", score_packing, NULL, MU_SCORE_RANDOM};
const mu_score_ops_t mu_score_bestfit = {"bestfit", score_bestfit, NULL, MU_SCORE_RANDOM};
