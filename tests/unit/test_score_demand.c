/*
 * test_score_demand.c - muster's shares scored against the mix weighted
 * by GPU demand (src/engine/score_frag.c, mu_muster_params_t.demand_multi,
 * the sixteenth round): on a mix where one 8-GPU shape is a sixty-first
 * of the pods but a fifth of the GPU demand, a 500-milli share goes to the
 * device whose rest no share can use rather than break the last node that
 * still holds an 8-GPU pod; weighted by pods (FGD's view, or the setting
 * off) it breaks that node.  Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

static mu_res_t req(int64_t cpu_milli, int64_t gpus, int64_t share)
{
	mu_res_t r;
	memset(&r, 0, sizeof r);
	r.v[MU_RES_CPU] = cpu_milli;
	r.v[MU_RES_GPU] = gpus;
	r.v[MU_RES_GPU_MILLI] = share;
	r.v[MU_RES_PODS] = 1;
	return r;
}

/* A node of eight devices and 64 cores, each device with free[g]
 * milli-GPU free, over caller-owned storage. */
typedef struct vnode {
	mu_res_t alloc, free;
	int16_t gpu[MU_MAX_GPUS];
	mu_node_view_t v;
} vnode_t;

static void vnode(vnode_t *n, const int16_t *free)
{
	memset(n, 0, sizeof *n);
	n->alloc.v[MU_RES_CPU] = 64000;
	n->alloc.v[MU_RES_GPU] = 8;
	n->alloc.v[MU_RES_GPU_MILLI] = 8000;
	n->free = n->alloc;
	n->free.v[MU_RES_GPU] = 0;
	n->free.v[MU_RES_GPU_MILLI] = 0;
	for (int g = 0; g < 8; g++) {
		n->gpu[g] = free[g];
		n->free.v[MU_RES_GPU] += free[g] == 1000;
		n->free.v[MU_RES_GPU_MILLI] += free[g];
	}
	n->v = (mu_node_view_t){&n->alloc, &n->free, 8, n->gpu, NULL, NULL};
}

/* The mix: one 8-GPU pod (8 cores) for every `shares` 500-milli shares
 * (one core each). */
static void mix(mu_workload_mix_t *m, int64_t shares)
{
	mu_res_t big = req(8000, 8, 0), s = req(1000, 0, 500);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &big, NULL, 0, 1);
	mu_workload_mix_add(m, &s, NULL, 0, shares);
	mu_workload_mix_finish(m);
}

/* Node a: eight whole devices (the 8-GPU pod fits); node c: one device
 * with 900 free, the rest full (a share there leaves 400, which no share
 * of the mix uses).  60 shares to one 8-GPU pod: the 8-GPU shape is 1/61
 * of the pods and 8,000 of 38,000 milli-GPU of demand (0.21, above the
 * default demand_multi 0.15).  By pods, breaking a whole device of a
 * costs F 7,500 / 61 = 123 milli, the share on c 900 x 60/61 - 500 = 385:
 * FGD's points 46 against 40, a wins.  By demand, a costs 7,500 x 0.21 =
 * 1,579, c 900 x 0.79 - 500 = 210: 17 against 44, c wins. */
static void test_demand_keeps_big_node(mu_t_t *t)
{
	static const int16_t whole[8] = {1000, 1000, 1000, 1000,
					 1000, 1000, 1000, 1000};
	static const int16_t one[8] = {0, 0, 0, 900, 0, 0, 0, 0};
	vnode_t a, c;
	vnode(&a, whole);
	vnode(&c, one);
	mu_workload_mix_t m;
	mix(&m, 60);
	mu_res_t s = req(1000, 0, 500);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&on);
	CHECK(t, on.demand_multi > 0 && on.demand_multi <= 1);
	off = on;
	off.demand_multi = 2.0; /* never */
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = NULL; /* the defaults: weighted by demand here */
	CHECK(t, mu_score_muster.score(&ctx, &c.v, &s) >
		 mu_score_muster.score(&ctx, &a.v, &s));
	view.muster = &on;
	CHECK(t, mu_score_muster.score(&ctx, &c.v, &s) >
		 mu_score_muster.score(&ctx, &a.v, &s));
	CHECK_EQ_INT(t, mu_score_muster.pick_device(&ctx, &c.v, &s), 3);
	view.muster = &off;
	CHECK(t, mu_score_muster.score(&ctx, &a.v, &s) >
		 mu_score_muster.score(&ctx, &c.v, &s));
	/* FGD weighs by pods: it breaks the big node too. */
	mu_score_ctx_t fctx = {&m, 0, NULL, NULL};
	CHECK(t, mu_score_fgd.score(&fctx, &a.v, &s) >
		 mu_score_fgd.score(&fctx, &c.v, &s));
	mu_workload_mix_release(&m);
}

/* Below the threshold the defaults weigh by pods: with 400 shares to one
 * 8-GPU pod (8,000 of 208,000 milli-GPU, 0.04) the defaults score as the
 * setting off does, and `demand_multi` 0 (always) weighs by demand. */
static void test_threshold(mu_t_t *t)
{
	static const int16_t whole[8] = {1000, 1000, 1000, 1000,
					 1000, 1000, 1000, 1000};
	static const int16_t one[8] = {0, 0, 0, 900, 0, 0, 0, 0};
	vnode_t a, c;
	vnode(&a, whole);
	vnode(&c, one);
	mu_workload_mix_t m;
	mix(&m, 400);
	mu_res_t s = req(1000, 0, 500);
	mu_muster_params_t off, always;
	mu_muster_params_defaults(&off);
	always = off;
	off.demand_multi = 2.0;
	always.demand_multi = 0;
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = NULL;
	double da = mu_score_muster.score(&ctx, &a.v, &s);
	double dc = mu_score_muster.score(&ctx, &c.v, &s);
	view.muster = &off;
	CHECK(t, da == mu_score_muster.score(&ctx, &a.v, &s));
	CHECK(t, dc == mu_score_muster.score(&ctx, &c.v, &s));
	view.muster = &always;
	CHECK(t, da != mu_score_muster.score(&ctx, &a.v, &s));
	mu_workload_mix_release(&m);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_demand_keeps_big_node);
	MU_RUN(&t, test_threshold);
	return mu_t_done(&t);
}
