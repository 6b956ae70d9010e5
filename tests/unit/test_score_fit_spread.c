/*
 * test_score_fit_spread.c - muster's spread rule under the fit gate
 * (src/engine/score_frag.c, mu_muster_params_t.fit_spread, the
 * twenty-first round): where pods of two or more GPUs carry at least
 * fit_multi of the mix's GPU demand, a share that breaks a whole device
 * of a node keeping at least fit_spread (26) cores per free GPU gains 100
 * points, however small the shares' part of the demand (spread_shares,
 * 0.19, is not read there); on a node with fewer cores per GPU, on a
 * mix under the gate, or with fit_spread 0, the share scores as before
 * (the rollouts' candidates turn the gate off: test_score_fit.c).
 * Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "score_fixture.h"

/* `quads` 4-GPU pods, 60 1-GPU pods and 40 500-milli shares.  With 20
 * quads the 4-GPU pods carry 80/160 = 0.5 of the GPU demand and the
 * shares 20/160 = 0.125, below spread_shares; with 2 quads the 4-GPU
 * pods carry 8/88 = 0.09, under fit_multi. */
static void spread_mix(mu_workload_mix_t *m, int64_t quads)
{
	mu_res_t four = score_req(32000, 0, 4, 0), one = score_req(8000, 0, 1, 0);
	mu_res_t half = score_req(4000, 0, 0, 500);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &four, NULL, 0, quads);
	mu_workload_mix_add(m, &one, NULL, 0, 60);
	mu_workload_mix_add(m, &half, NULL, 0, 40);
	mu_workload_mix_finish(m);
}

/* Nodes with two whole free devices (the rest full): a 500 breaks one
 * and leaves 1.5 free GPUs.  With 60 free cores the node keeps 56 / 1.5
 * = 37 cores a GPU (over 26: the rule's 100 points), with 39 free cores
 * 35 / 1.5 = 23 (over spread_cpu's 20, under 26: none). */
static void test_fit_spread(mu_t_t *t)
{
	vnode_t rich, mid;
	score_node(&rich, 2, 60000, 0, NULL);
	score_node(&mid, 2, 39000, 0, NULL);
	mu_res_t s = score_req(4000, 0, 0, 500);
	mu_workload_mix_t heavy, light;
	spread_mix(&heavy, 20);
	spread_mix(&light, 2);
	mu_muster_params_t def, off;
	mu_muster_params_defaults(&def);
	CHECK(t, def.fit_spread == 26 && def.spread_cpu == 20);
	off = def;
	off.fit_spread = 0; /* the rule off, the fit gate on */
	double on = score_muster_with(&heavy, NULL, &rich, &s);
	double no = score_muster_with(&heavy, &off, &rich, &s);
	CHECK(t, on - no > 99 && on - no < 101);
	CHECK(t, score_muster_with(&heavy, NULL, &mid, &s) ==
		 score_muster_with(&heavy, &off, &mid, &s));
	CHECK(t, score_muster_with(&light, NULL, &rich, &s) ==
		 score_muster_with(&light, &off, &rich, &s));
	mu_workload_mix_release(&heavy);
	mu_workload_mix_release(&light);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_fit_spread);
	return mu_t_done(&t);
}
