/*
 * test_score_memory.c - muster's CPU-aware growth with free memory as a
 * capacity too (src/engine/score_frag.c, mu_muster_params_t.mem_multi,
 * the seventeenth round), on the case that multigpu100 (openb, every GPU
 * pod of 2+ whole GPUs) turns on: a 4-GPU pod of 60 cores and 313 GiB on
 * an 8-GPU node of 96 cores and 384 GiB leaves four GPUs that the mix's
 * 4-GPU pods of 32 cores and 129 GiB could use by CPU but not by memory.
 * With memory in the measure the pod goes to a node of the same GPUs and
 * CPU with 768 GiB, where a second 4-GPU pod still fits; without it the
 * two nodes are equal.  Also: a shape keeps its pods' mean memory, and
 * the settings print every threshold.  Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "score_fixture.h"

#define GIB ((int64_t)1 << 30)

/* multigpu100's GPU shapes, in its proportions: 4-GPU pods of 60 cores
 * and 313 GiB (40), of 32 cores and 129 GiB (164), 8-GPU pods of 64
 * cores and 257 GiB (276).  Pods of 2+ GPUs carry all the GPU demand. */
static void mix(mu_workload_mix_t *m)
{
	mu_res_t a = score_req(60200, 313 * GIB, 4, 0), b = score_req(32200, 129 * GIB, 4, 0),
		 c = score_req(64200, 257 * GIB, 8, 0);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &a, NULL, 0, 40);
	mu_workload_mix_add(m, &b, NULL, 0, 164);
	mu_workload_mix_add(m, &c, NULL, 0, 276);
	mu_workload_mix_finish(m);
}

static void test_memory_keeps_pair(mu_t_t *t)
{
	vnode_t small, big;
	score_node(&small, 8, 96000, 384 * GIB, NULL);
	score_node(&big, 8, 96000, 768 * GIB, NULL);
	mu_workload_mix_t m;
	mix(&m);
	mu_res_t p = score_req(60200, 313 * GIB, 4, 0);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&on);
	CHECK(t, on.mem_multi > 0 && on.mem_multi <= 1); /* on here: 1.0 */
	off = on;
	off.mem_multi = 2.0; /* never */
	off.fit_multi = 2.0; /* nor through the fit rule (twentieth round) */
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = NULL; /* the defaults */
	CHECK(t, mu_score_muster.score(&ctx, &big.v, &p) >
		 mu_score_muster.score(&ctx, &small.v, &p));
	view.muster = &on;
	CHECK(t, mu_score_muster.score(&ctx, &big.v, &p) >
		 mu_score_muster.score(&ctx, &small.v, &p));
	/* Without memory the measure sees two equal nodes. */
	view.muster = &off;
	CHECK(t, mu_score_muster.score(&ctx, &big.v, &p) ==
		 mu_score_muster.score(&ctx, &small.v, &p));
	/* The fit rule (every GPU in 4-GPU pods: over fit_multi) turns
	 * memory on by itself. */
	mu_muster_params_t fit = off;
	fit.fit_multi = on.fit_multi;
	view.muster = &fit;
	CHECK(t, mu_score_muster.score(&ctx, &big.v, &p) >
		 mu_score_muster.score(&ctx, &small.v, &p));
	/* FGD's measure does not read memory either. */
	mu_score_ctx_t fctx = {&m, 0, NULL, NULL};
	CHECK(t, mu_score_fgd.score(&fctx, &big.v, &p) ==
		 mu_score_fgd.score(&fctx, &small.v, &p));
	mu_workload_mix_release(&m);
}

/* Below the threshold the defaults leave memory out: a mix of one-GPU
 * pods only scores the two nodes equal, and mem_multi 0 (always) does
 * not. */
static void test_threshold(mu_t_t *t)
{
	vnode_t small, big;
	score_node(&small, 8, 96000, 384 * GIB, NULL);
	score_node(&big, 8, 96000, 768 * GIB, NULL);
	mu_workload_mix_t m;
	mu_res_t a = score_req(30000, 200 * GIB, 1, 0);
	mu_workload_mix_init(&m);
	mu_workload_mix_add(&m, &a, NULL, 0, 10);
	mu_workload_mix_finish(&m);
	mu_muster_params_t always;
	mu_muster_params_defaults(&always);
	always.mem_multi = 0;
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	CHECK(t, mu_score_muster.score(&ctx, &big.v, &a) ==
		 mu_score_muster.score(&ctx, &small.v, &a));
	view.muster = &always;
	CHECK(t, mu_score_muster.score(&ctx, &big.v, &a) >
		 mu_score_muster.score(&ctx, &small.v, &a));
	mu_workload_mix_release(&m);
}

/* Pods of one shape that ask different memory merge into one shape with
 * their mean memory; the shapes are FGD's (memory does not split them). */
static void test_mean_memory(mu_t_t *t)
{
	mu_workload_mix_t m;
	mu_res_t a = score_req(32000, 100 * GIB, 4, 0), b = score_req(32000, 200 * GIB, 4, 0);
	mu_workload_mix_init(&m);
	mu_workload_mix_add(&m, &a, NULL, 0, 1);
	mu_workload_mix_add(&m, &b, NULL, 0, 3);
	mu_workload_mix_finish(&m);
	CHECK_EQ_INT(t, m.ntypes, 1);
	CHECK_EQ_INT(t, m.types[0].count, 4);
	CHECK(t, m.types[0].mem == 175 * GIB);
	mu_workload_mix_release(&m);
}

/* The settings' text names each threshold: mg, demand and mem. */
static void test_format(mu_t_t *t)
{
	mu_muster_params_t p;
	mu_muster_params_defaults(&p);
	char buf[128];
	CHECK(t, strcmp(mu_muster_params_format(&p, buf, sizeof buf),
			"mg auto, reserve 0.75, demand auto, mem auto") == 0);
	p.demand_multi = 2.0;
	p.mem_multi = 0;
	p.mg_multi = 0;
	CHECK(t, strcmp(mu_muster_params_format(&p, buf, sizeof buf),
			"mg on, reserve 0.75, demand off, mem on") == 0);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_memory_keeps_pair);
	MU_RUN(&t, test_threshold);
	MU_RUN(&t, test_mean_memory);
	MU_RUN(&t, test_format);
	return mu_t_done(&t);
}
