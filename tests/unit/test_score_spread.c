/*
 * test_score_spread.c - muster's shares spread by CPU (src/engine/
 * score_frag.c, mu_muster_params_t.spread_cpu, the seventeenth round, on
 * by default since the eighteenth): on
 * a mix of CPU-light 810-milli shares and CPU-hungry 470-milli ones, a 470
 * on a CPU-rich node breaks a whole device rather than fill the 530 left
 * by another 470 (the rule on), where FGD's points (the rule off) fill the
 * 530; on a CPU-poor node, and for a large share, the rule changes
 * nothing, and where the mix is not share-heavy (its gate) neither.
 * Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "score_fixture.h"

/* A node of two devices, `cpu` millicores free, device g with free[g]
 * milli-GPU free, over caller-owned storage (vnode_t: score_fixture.h). */
static void vnode(vnode_t *n, int64_t cpu, int16_t f0, int16_t f1)
{
	memset(n, 0, sizeof *n);
	n->alloc.v[MU_RES_CPU] = cpu;
	n->alloc.v[MU_RES_GPU] = 2;
	n->alloc.v[MU_RES_GPU_MILLI] = 2000;
	n->free = n->alloc;
	n->gpu[0] = f0;
	n->gpu[1] = f1;
	n->free.v[MU_RES_GPU] = (f0 == 1000) + (f1 == 1000);
	n->free.v[MU_RES_GPU_MILLI] = f0 + f1;
	n->v = (mu_node_view_t){&n->alloc, &n->free, 2, n->gpu, NULL, NULL};
}

/* The mix: as many 810s (3 cores) as 470s (10 cores). */
static void mix(mu_workload_mix_t *m)
{
	mu_res_t big = score_req(3000, 0, 0, 810), small = score_req(10000, 0, 0, 470);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &big, NULL, 0, 100);
	mu_workload_mix_add(m, &small, NULL, 0, 100);
	mu_workload_mix_finish(m);
}

/* A CPU-rich node (100 cores for 1.53 free GPUs): with the rule, a 470
 * takes the whole device (device 1: 90 cores left for 1.06 free GPUs, 85
 * a GPU, above 20); without it, the 530 (device 0). */
static void test_spread_rich(mu_t_t *t)
{
	vnode_t r;
	vnode(&r, 100000, 530, 1000);
	mu_workload_mix_t m;
	mix(&m);
	mu_res_t s = score_req(10000, 0, 0, 470);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&on);
	off = on;
	CHECK(t, on.spread_cpu == 20); /* on by default (round 18) */
	off.spread_cpu = 0;
	/* the defaults (no settings on the mix) take the whole device */
	mu_score_ctx_t dctx = {&m, 0, NULL, NULL};
	CHECK_EQ_INT(t, mu_score_muster.pick_device(&dctx, &r.v, &s), 1);
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = &on;
	CHECK_EQ_INT(t, mu_score_muster.pick_device(&ctx, &r.v, &s), 1);
	double s_on = mu_score_muster.score(&ctx, &r.v, &s);
	view.muster = &off;
	CHECK_EQ_INT(t, mu_score_muster.pick_device(&ctx, &r.v, &s), 0);
	CHECK(t, s_on > mu_score_muster.score(&ctx, &r.v, &s));
	/* FGD fills the 530 too. */
	mu_score_ctx_t fctx = {&m, 0, NULL, NULL};
	CHECK_EQ_INT(t, mu_score_fgd.pick_device(&fctx, &r.v, &s), 0);
	mu_workload_mix_release(&m);
}

/* A CPU-poor node (24 cores: 14 left for 1.06 free GPUs, 13 a GPU) and a
 * large share: the rule on scores as the rule off. */
static void test_spread_poor_and_large(mu_t_t *t)
{
	vnode_t p, r;
	vnode(&p, 24000, 530, 1000);
	vnode(&r, 100000, 530, 1000);
	mu_workload_mix_t m;
	mix(&m);
	mu_res_t s = score_req(10000, 0, 0, 470), big = score_req(3000, 0, 0, 810);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&on);
	off = on;
	on.spread_cpu = 20;
	off.spread_cpu = 0;
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = &on;
	double sp = mu_score_muster.score(&ctx, &p.v, &s);
	int dp = mu_score_muster.pick_device(&ctx, &p.v, &s);
	double sb = mu_score_muster.score(&ctx, &r.v, &big);
	view.muster = &off;
	CHECK(t, sp == mu_score_muster.score(&ctx, &p.v, &s));
	CHECK_EQ_INT(t, dp, mu_score_muster.pick_device(&ctx, &p.v, &s));
	CHECK_EQ_INT(t, dp, 0);
	CHECK(t, sb == mu_score_muster.score(&ctx, &r.v, &big));
	mu_workload_mix_release(&m);
}

/* The rule's gate: with as many CPU-only pods as shares (half the pods,
 * above spread_cpu_only) or with whole-GPU pods carrying nine tenths of
 * the demand (shares below spread_shares), the defaults place as the
 * rule off does. */
static void test_spread_gate(mu_t_t *t)
{
	vnode_t r;
	vnode(&r, 100000, 530, 1000);
	mu_res_t big = score_req(3000, 0, 0, 810), small = score_req(10000, 0, 0, 470);
	mu_res_t cpu = score_req(8000, 0, 0, 0), one = score_req(8000, 0, 1, 0);
	mu_workload_mix_t a, b;
	mu_workload_mix_init(&a);
	mu_workload_mix_add(&a, &big, NULL, 0, 100);
	mu_workload_mix_add(&a, &small, NULL, 0, 100);
	mu_workload_mix_add(&a, &cpu, NULL, 0, 200);
	mu_workload_mix_finish(&a);
	mu_workload_mix_init(&b);
	mu_workload_mix_add(&b, &big, NULL, 0, 100);
	mu_workload_mix_add(&b, &small, NULL, 0, 100);
	mu_workload_mix_add(&b, &one, NULL, 0, 1300);
	mu_workload_mix_finish(&b);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&off);
	on = off;
	on.spread_cpu = 20;
	off.spread_cpu = 0;
	const mu_workload_mix_t *mixes[2] = {&a, &b};
	for (int i = 0; i < 2; i++) {
		mu_workload_mix_t view = *mixes[i];
		mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
		view.muster = &on;
		double s_def = mu_score_muster.score(&ctx, &r.v, &small);
		int d_def = mu_score_muster.pick_device(&ctx, &r.v, &small);
		view.muster = &off;
		CHECK(t, s_def == mu_score_muster.score(&ctx, &r.v, &small));
		CHECK_EQ_INT(t, d_def, mu_score_muster.pick_device(&ctx, &r.v, &small));
	}
	mu_workload_mix_release(&a);
	mu_workload_mix_release(&b);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_spread_rich);
	MU_RUN(&t, test_spread_poor_and_large);
	MU_RUN(&t, test_spread_gate);
	return mu_t_done(&t);
}
