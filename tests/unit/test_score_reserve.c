/*
 * test_score_reserve.c - muster's reserve on CPU-heavy mixes (src/engine/
 * score_frag.c, mu_muster_params_t.cpu_reserve and cpu_reserve_only, the
 * nineteenth round): where pods that take no GPU are at least
 * cpu_reserve_only of the mix's pods, a share that breaks a whole device
 * pays the reserve with cpu_reserve (1.0) in place of reserve (0.75), so
 * a node with four of its eight devices whole costs the share 100
 * points where with 0.75 it cost nothing; on a mix with few CPU-only
 * pods, with the gate off, or in the rollouts' candidates (which set the
 * reserve themselves) the share scores as before.  Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "score_fixture.h"

/* 60 1-GPU pods and 100 500-milli shares (whole GPUs 60/110 = 0.545 of
 * the GPU demand: the reserve keeps floor(0.75 x 8 x 0.545) = 3 whole
 * devices of eight, floor(1.0 x 8 x 0.545) = 4), and `cpu_only` pods of
 * 8 cores that take no GPU. */
static void reserve_mix(mu_workload_mix_t *m, int64_t cpu_only)
{
	mu_res_t one = score_req(8000, 0, 1, 0), half = score_req(4000, 0, 0, 500);
	mu_res_t cpu = score_req(8000, 0, 0, 0);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &one, NULL, 0, 60);
	mu_workload_mix_add(m, &half, NULL, 0, 100);
	mu_workload_mix_add(m, &cpu, NULL, 0, cpu_only);
	mu_workload_mix_finish(m);
}

/* A node with four whole free devices (the rest full) and 60 free cores:
 * a 500 breaks one of them (4 <= 4 whole devices: the reserve of 1.0
 * pays, 4 > 3: that of 0.75 does not).  Half the pods CPU-only: the
 * defaults cost it the reserve's 100 points against the rule off; a
 * tenth CPU-only: the same score either way. */
static void test_cpu_reserve(mu_t_t *t)
{
	vnode_t n;
	score_node(&n, 4, 60000, 0, NULL);
	mu_res_t s = score_req(4000, 0, 0, 500);
	mu_workload_mix_t heavy, light;
	reserve_mix(&heavy, 160);
	reserve_mix(&light, 16);
	mu_muster_params_t def, off;
	mu_muster_params_defaults(&def);
	CHECK(t, def.cpu_reserve == 1.0 && def.reserve == 0.75);
	CHECK(t, def.cpu_reserve_only > 0.2 && def.cpu_reserve_only <= 0.5);
	off = def;
	off.cpu_reserve_only = 2.0; /* never */
	double on_h = score_muster_with(&heavy, NULL, &n, &s);
	double off_h = score_muster_with(&heavy, &off, &n, &s);
	CHECK(t, off_h - on_h > 99 && off_h - on_h < 101);
	CHECK(t, score_muster_with(&light, NULL, &n, &s) ==
		 score_muster_with(&light, &off, &n, &s));
	/* A node with five whole devices pays neither reserve. */
	vnode_t five;
	score_node(&five, 5, 60000, 0, NULL);
	CHECK(t, score_muster_with(&heavy, NULL, &five, &s) ==
		 score_muster_with(&heavy, &off, &five, &s));
	/* The rollouts' candidates set the reserve themselves: the rule is
	 * off in every one of them. */
	mu_muster_params_t c[16];
	size_t nc = mu_muster_params_candidates(&heavy, c, 16);
	CHECK(t, nc >= 10 && nc <= 16);
	for (size_t i = 0; i < nc && i < 16; i++)
		CHECK(t, c[i].cpu_reserve_only > 1);
	mu_workload_mix_release(&heavy);
	mu_workload_mix_release(&light);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_cpu_reserve);
	return mu_t_done(&t);
}
