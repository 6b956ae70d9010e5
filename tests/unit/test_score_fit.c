/*
 * test_score_fit.c - muster's share rule on multi-GPU-heavy mixes
 * (src/engine/score_frag.c, mu_muster_params_t.fit_reserve and fit_multi,
 * the twentieth round): where pods of two or more GPUs carry at least
 * fit_multi of the mix's GPU demand, a share placed by points goes by
 * best fit and pays the reserve with fit_reserve (1.1) in place of
 * reserve (0.75), so a node with five of its eight devices whole costs a
 * share that breaks one 100 points where with 0.75 it cost nothing; on a
 * mix with few multi-GPU pods, with the gate off, or in the rollouts'
 * candidates (which set the reserve and the points themselves) the share
 * scores as before.  Under the same gate (fit_spread, the twenty-first
 * round) a share that breaks a whole device of a node keeping at least
 * fit_spread (26) cores per free GPU gains 100 points however small the
 * shares' part of the demand (spread_shares, 0.19, is not read there);
 * on a node with fewer cores per GPU, on a mix under the gate, or with
 * fit_spread 0, the share scores as before.  Under the same gate
 * (fit_keep, fit_keep_share, the twenty-second round) a GPU pod that
 * leaves a node unable to hold the mix's most CPU-hungry type of two or
 * more GPUs, which it held, costs 400 (growth) or 100 (a share's points);
 * on a node that never held it, or on a mix under the gate, it scores as
 * with the rule off.  Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "score_fixture.h"

/* `quads` 4-GPU pods, 60 1-GPU pods and `halves` 500-milli shares.
 * With 20 quads and 100 halves the 4-GPU pods carry 80/190 = 0.42 of the
 * GPU demand and whole GPUs 140/190 = 0.737: the reserve keeps
 * floor(0.75 x 8 x 0.737) = 4 whole devices of eight, floor(1.1 x 8 x
 * 0.737) = 6; with 2 quads they carry 8/118 = 0.07.  With 20 quads and
 * 40 halves the quads carry 0.5 and the shares 20/160 = 0.125, below
 * spread_shares; with 2 quads and 40 halves the quads carry 0.09. */
static void fit_mix(mu_workload_mix_t *m, int64_t quads, int64_t halves)
{
	mu_res_t four = score_req(32000, 0, 4, 0), one = score_req(8000, 0, 1, 0);
	mu_res_t half = score_req(4000, 0, 0, 500);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &four, NULL, 0, quads);
	mu_workload_mix_add(m, &one, NULL, 0, 60);
	mu_workload_mix_add(m, &half, NULL, 0, halves);
	mu_workload_mix_finish(m);
}

/* A node with five whole free devices (the rest full) and 60 free cores:
 * a 500 breaks one of them (5 <= 6 whole devices: the reserve of 1.1
 * pays, 5 > 4: that of 0.75 does not).  On the heavy mix the defaults
 * score it as best fit with the reserve of 1.1 does, 100 points below the
 * gate off plus best fit; on the light mix as the gate off. */
static void test_fit_rule(mu_t_t *t)
{
	vnode_t n;
	score_node(&n, 5, 60000, 0, NULL);
	mu_res_t s = score_req(4000, 0, 0, 500);
	mu_workload_mix_t heavy, light;
	fit_mix(&heavy, 20, 100);
	fit_mix(&light, 2, 100);
	mu_muster_params_t def, off, fit;
	mu_muster_params_defaults(&def);
	CHECK(t, def.fit_reserve == 1.1 && def.reserve == 0.75);
	CHECK(t, def.fit_multi > 0.3 && def.fit_multi <= 0.4);
	off = def;
	off.fit_multi = 2.0; /* never */
	fit = off;           /* the rule by hand: best fit, reserve 1.1 */
	fit.best_fit = 1;
	fit.reserve = 1.1;
	double on_h = score_muster_with(&heavy, NULL, &n, &s);
	CHECK(t, on_h == score_muster_with(&heavy, &fit, &n, &s));
	fit.reserve = 0.75;
	double nores = score_muster_with(&heavy, &fit, &n, &s);
	CHECK(t, nores - on_h > 99 && nores - on_h < 101);
	CHECK(t, score_muster_with(&heavy, &off, &n, &s) != on_h);
	CHECK(t, score_muster_with(&light, NULL, &n, &s) ==
		 score_muster_with(&light, &off, &n, &s));
	/* The rollouts' candidates set the reserve themselves: the rule is
	 * off in every one of them. */
	mu_muster_params_t c[16];
	size_t nc = mu_muster_params_candidates(&heavy, c, 16);
	CHECK(t, nc >= 10 && nc <= 16);
	for (size_t i = 0; i < nc && i < 16; i++)
		CHECK(t, c[i].fit_multi > 1);
	mu_workload_mix_release(&heavy);
	mu_workload_mix_release(&light);
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
	fit_mix(&heavy, 20, 40);
	fit_mix(&light, 2, 40);
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

/* `eights` 8-GPU pods of 80 cores, `quads` 4-GPU pods of 32 cores,
 * `ones` 1-GPU pods and `halves` 500-milli shares.  With 20, 10, 60 and
 * 40 the pods of 2+ GPUs carry 200/280 = 0.71 of the GPU demand (over
 * fit_multi, under fit_keep_multi 0.75); with 1, 0, 60 and 40, 8/88 =
 * 0.09 (under fit_multi); with 20, 20, 0 and 0, all of it (over
 * fit_keep_multi). */
static void keep_mix(mu_workload_mix_t *m, int64_t eights, int64_t quads,
		     int64_t ones, int64_t halves)
{
	mu_res_t eight = score_req(80000, 0, 8, 0);
	mu_res_t four = score_req(32000, 0, 4, 0), one = score_req(8000, 0, 1, 0);
	mu_res_t half = score_req(4000, 0, 0, 500);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &eight, NULL, 0, eights);
	mu_workload_mix_add(m, &four, NULL, 0, quads);
	mu_workload_mix_add(m, &one, NULL, 0, ones);
	mu_workload_mix_add(m, &half, NULL, 0, halves);
	mu_workload_mix_finish(m);
}

/* Nodes of eight whole free devices: with 96 free cores the node holds
 * an 8-GPU 80-core pod, and a 1-GPU pod, a 4-GPU pod or a 500 that
 * breaks a device leaves it unable to (the rule's cost); with 60 free
 * cores it never held one (no cost). */
static void test_fit_keep(mu_t_t *t)
{
	vnode_t rich, poor;
	score_node(&rich, 8, 96000, 0, NULL);
	score_node(&poor, 8, 60000, 0, NULL);
	mu_res_t one = score_req(8000, 0, 1, 0), s = score_req(4000, 0, 0, 500);
	mu_res_t four = score_req(32000, 0, 4, 0);
	mu_workload_mix_t heavy, light, all;
	keep_mix(&heavy, 20, 10, 60, 40);
	keep_mix(&light, 1, 0, 60, 40);
	keep_mix(&all, 20, 20, 0, 0);
	mu_muster_params_t def, off;
	mu_muster_params_defaults(&def);
	CHECK(t, def.fit_keep == 400 && def.fit_keep_share == 100);
	CHECK(t, def.fit_keep_multi == 0.75);
	off = def;
	off.fit_keep = 0; /* the rule off, the fit gate on */
	off.fit_keep_share = 0;
	double d = score_muster_with(&heavy, &off, &rich, &one) -
		   score_muster_with(&heavy, NULL, &rich, &one);
	CHECK(t, d > 399.999 && d < 400.001);
	d = score_muster_with(&heavy, &off, &rich, &four) -
	    score_muster_with(&heavy, NULL, &rich, &four);
	CHECK(t, d > 399.999 && d < 400.001);
	d = score_muster_with(&heavy, &off, &rich, &s) -
	    score_muster_with(&heavy, NULL, &rich, &s);
	CHECK(t, d > 99.999 && d < 100.001);
	CHECK(t, score_muster_with(&heavy, NULL, &poor, &one) ==
		 score_muster_with(&heavy, &off, &poor, &one));
	CHECK(t, score_muster_with(&heavy, NULL, &poor, &s) ==
		 score_muster_with(&heavy, &off, &poor, &s));
	CHECK(t, score_muster_with(&light, NULL, &rich, &one) ==
		 score_muster_with(&light, &off, &rich, &one));
	CHECK(t, score_muster_with(&all, NULL, &rich, &four) ==
		 score_muster_with(&all, &off, &rich, &four));
	mu_workload_mix_release(&heavy);
	mu_workload_mix_release(&light);
	mu_workload_mix_release(&all);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_fit_rule);
	MU_RUN(&t, test_fit_spread);
	MU_RUN(&t, test_fit_keep);
	return mu_t_done(&t);
}
