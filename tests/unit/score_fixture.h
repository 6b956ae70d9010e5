/*
 * score_fixture.h - the pod requests and node views that the GPU score
 * policies' unit tests (test_score_press.c, test_score_memory.c,
 * test_score_spread.c, test_score_reserve.c, test_score_fit.c) score:
 * a request of CPU, memory, whole GPUs and a share, and a node of eight
 * devices, 96 cores and given memory, some devices whole and free and the
 * rest full.  Header-only (static inline functions), included after check.h.
 */
#ifndef MUSTER_TEST_SCORE_FIXTURE_H
#define MUSTER_TEST_SCORE_FIXTURE_H

#include <string.h>

#include "muster/engine.h"

/* One pod's request: cpu_milli millicores, mem bytes, gpus whole GPUs
 * and a share of share milli-GPU. */
static inline mu_res_t score_req(int64_t cpu_milli, int64_t mem, int64_t gpus, int64_t share)
{
	mu_res_t r;
	memset(&r, 0, sizeof r);
	r.v[MU_RES_CPU] = cpu_milli;
	r.v[MU_RES_MEM] = mem;
	r.v[MU_RES_GPU] = gpus;
	r.v[MU_RES_GPU_MILLI] = share;
	r.v[MU_RES_PODS] = 1;
	return r;
}

/* A node view over caller-owned storage (n->v points into n). */
typedef struct vnode {
	mu_res_t alloc, free;
	int16_t gpu[MU_MAX_GPUS];
	mu_node_view_t v;
} vnode_t;

/* Node n: eight devices, free_gpus of them whole and free and the rest
 * full; 96 cores of which cpu_free millicores are free; mem bytes, all
 * free; 110 pods; GPU model model (NULL: none, not copied). */
static inline void score_node(vnode_t *n, int free_gpus, int64_t cpu_free, int64_t mem,
		       const char *model)
{
	memset(n, 0, sizeof *n);
	n->alloc.v[MU_RES_CPU] = 96000;
	n->alloc.v[MU_RES_MEM] = mem;
	n->alloc.v[MU_RES_GPU] = 8;
	n->alloc.v[MU_RES_GPU_MILLI] = 8000;
	n->alloc.v[MU_RES_PODS] = 110;
	n->free = n->alloc;
	n->free.v[MU_RES_CPU] = cpu_free;
	n->free.v[MU_RES_GPU] = 0;
	n->free.v[MU_RES_GPU_MILLI] = 0;
	for (int g = 0; g < 8; g++) {
		n->gpu[g] = g < free_gpus ? 1000 : 0;
		n->free.v[MU_RES_GPU] += g < free_gpus;
		n->free.v[MU_RES_GPU_MILLI] += n->gpu[g];
	}
	n->v = (mu_node_view_t){&n->alloc, &n->free, 8, n->gpu, model, NULL};
}

/* muster's score of req on node n under the finished mix m with settings
 * p (NULL: the defaults), through a shallow copy of the mix. */
static inline double score_muster_with(const mu_workload_mix_t *m,
				       const mu_muster_params_t *p,
				       const vnode_t *n, const mu_res_t *req)
{
	mu_workload_mix_t view = *m;
	view.muster = p;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	return mu_score_muster.score(&ctx, &n->v, req);
}

#endif
