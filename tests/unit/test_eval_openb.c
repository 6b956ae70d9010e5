/*
 * test_eval_openb.c - the openb evaluation's mechanics: the workload mix,
 * the fragmentation measure on hand-made nodes, each GPU policy's choice on
 * small crafted nodes, the pick_device hook, the arrival order (shuffle,
 * resampling with replacement, the cut at tune x capacity), the x grid and
 * its means, whole runs on tiny clusters whose answer is known, the paper
 * CSV reader and the writers.  Then, when ../shared/data is there, one
 * policy and one seed on the real default trace.  Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "muster/eval.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-6)

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

/* A node view over caller-owned storage. */
typedef struct vnode {
	mu_res_t alloc, free;
	int16_t gpu[MU_MAX_GPUS];
	mu_node_view_t v;
} vnode_t;

/* A node with cpu cores (total = free + used) and the given free share
 * per device. */
static void vnode(vnode_t *n, int64_t cpu_total, int64_t cpu_free, int ngpu,
		  const int16_t *free_milli, const char *model)
{
	memset(n, 0, sizeof *n);
	n->alloc.v[MU_RES_CPU] = cpu_total;
	n->alloc.v[MU_RES_GPU] = ngpu;
	n->alloc.v[MU_RES_GPU_MILLI] = 1000 * ngpu;
	n->free.v[MU_RES_CPU] = cpu_free;
	for (int g = 0; g < ngpu; g++) {
		n->gpu[g] = free_milli[g];
		n->free.v[MU_RES_GPU_MILLI] += free_milli[g];
		n->free.v[MU_RES_GPU] += free_milli[g] == 1000;
	}
	n->v = (mu_node_view_t){&n->alloc, &n->free, ngpu, n->gpu, model, NULL};
}

/* A finished mix of one whole-GPU shape and one 500-milli share, equally
 * popular, each needing 4 cores. */
static void mix_half_half(mu_workload_mix_t *m)
{
	mu_res_t a = req(4000, 1, 0), b = req(4000, 0, 500);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &a, NULL, 0, 1);
	mu_workload_mix_add(m, &b, NULL, 0, 1);
	mu_workload_mix_finish(m);
}

static void test_mix(mu_t_t *t)
{
	mu_workload_mix_t m;
	mu_workload_mix_init(&m);
	mu_res_t a = req(4000, 1, 0), b = req(2000, 0, 500), c = req(8000, 0, 0);
	mu_res_t full = req(1000, 0, 1000), bad = req(1000, 0, 1200);
	const char *t4[] = {"T4"}, *two[] = {"T4", "G2", "T4"};
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &a, NULL, 0, 3), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &a, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &b, t4, 1, 2), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &b, two, 3, 1), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &c, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &full, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &bad, NULL, 0, 1), MU_ERANGE);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &a, NULL, 0, -1), MU_EINVAL);
	CHECK_EQ_INT(t, m.nmodels, 2);
	CHECK_EQ_INT(t, mu_workload_mix_finish(&m), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&m, &a, NULL, 0, 1), MU_EINVAL);
	/* cpu-only, 500 on T4, 500 on T4|G2, 1 GPU x 1 core, 1 GPU x 4 cores */
	CHECK_EQ_INT(t, m.ntypes, 5);
	CHECK_EQ_INT(t, m.pods, 9);
	double sum = 0;
	for (int32_t i = 0; i < m.ntypes; i++)
		sum += m.types[i].weight;
	CHECK(t, NEAR(sum, 1));
	CHECK_EQ_INT(t, m.types[m.ntypes - 1].count, 4); /* merged */
	CHECK(t, NEAR(m.types[m.ntypes - 1].weight, 4.0 / 9));
	CHECK_EQ_INT(t, m.types[m.ntypes - 2].gpus, 1);  /* the full share */
	mu_workload_mix_release(&m);
}

/* The FGD artifact's typical pods: the most popular shapes covering a
 * share of the pods (it stops at the first shape that reaches it), the
 * weights then shares of the kept pods. */
static void test_mix_top(mu_t_t *t)
{
	mu_workload_mix_t m;
	mu_workload_mix_init(&m);
	m.top = 0.95;
	mu_res_t a = req(4000, 1, 0), b = req(2000, 0, 500), c = req(8000, 0, 0);
	mu_res_t d = req(1000, 0, 100);
	mu_workload_mix_add(&m, &a, NULL, 0, 50);
	mu_workload_mix_add(&m, &b, NULL, 0, 30);
	mu_workload_mix_add(&m, &c, NULL, 0, 15);
	mu_workload_mix_add(&m, &d, NULL, 0, 5);
	CHECK_EQ_INT(t, mu_workload_mix_finish(&m), MU_OK);
	CHECK_EQ_INT(t, m.ntypes, 3); /* 50 + 30 + 15 reach 95 of 100 */
	CHECK_EQ_INT(t, m.pods, 95);
	for (int32_t i = 0; i < m.ntypes; i++) {
		CHECK(t, m.types[i].gpu_milli != 100);
		if (m.types[i].gpus == 1)
			CHECK(t, NEAR(m.types[i].weight, 50.0 / 95));
	}
	mu_workload_mix_release(&m);
	/* ties in popularity: the larger CPU first */
	mu_workload_mix_init(&m);
	m.top = 0.5;
	mu_workload_mix_add(&m, &b, NULL, 0, 10);
	mu_workload_mix_add(&m, &c, NULL, 0, 10);
	CHECK_EQ_INT(t, mu_workload_mix_finish(&m), MU_OK);
	CHECK_EQ_INT(t, m.ntypes, 1);
	CHECK_EQ_INT(t, m.types[0].cpu, 8000);
	mu_workload_mix_release(&m);
}

static void test_frag_measure(mu_t_t *t)
{
	mu_workload_mix_t m;
	mix_half_half(&m);
	vnode_t n;
	int16_t f1[] = {1000, 300};
	vnode(&n, 16000, 16000, 2, f1, NULL);
	/* whole: the 300 left on the shared device; share 500: the same */
	CHECK(t, NEAR(mu_gpu_frag(&m, &n.v), 300));
	vnode(&n, 16000, 1000, 2, f1, NULL); /* neither fits: all 1300 */
	CHECK(t, NEAR(mu_gpu_frag(&m, &n.v), 1300));
	int16_t f2[] = {600, 300};
	vnode(&n, 16000, 16000, 2, f2, NULL);
	/* whole: no free GPU, all 900; share: the 300 device */
	CHECK(t, NEAR(mu_gpu_frag(&m, &n.v), 0.5 * 900 + 0.5 * 300));
	CHECK(t, NEAR(mu_gpu_frag(NULL, &n.v), 900)); /* one whole shape */
	mu_workload_mix_release(&m);

	/* CPU-only shapes count every free GPU; model constraints too. */
	mu_res_t cpu = req(1000, 0, 0), t4 = req(1000, 1, 0);
	const char *models[] = {"T4"};
	mu_workload_mix_init(&m);
	mu_workload_mix_add(&m, &cpu, NULL, 0, 1);
	mu_workload_mix_add(&m, &t4, models, 1, 1);
	mu_workload_mix_finish(&m);
	int16_t f3[] = {1000, 1000};
	vnode(&n, 8000, 8000, 2, f3, "G2");
	CHECK(t, NEAR(mu_gpu_frag(&m, &n.v), 2000));
	vnode(&n, 8000, 8000, 2, f3, "T4");
	CHECK(t, NEAR(mu_gpu_frag(&m, &n.v), 1000));
	vnode(&n, 8000, 8000, 2, f3, NULL);
	CHECK(t, NEAR(mu_gpu_frag(&m, &n.v), 2000));
	mu_workload_mix_release(&m);
}

static double score(const mu_score_ops_t *ops, const void *state,
		    uint64_t rnd, const vnode_t *n, const mu_res_t *r)
{
	mu_score_ctx_t ctx = {state, rnd, NULL, NULL};
	return ops->score(&ctx, &n->v, r);
}

static int pick(const mu_score_ops_t *ops, const void *state,
		const vnode_t *n, const mu_res_t *r)
{
	mu_score_ctx_t ctx = {state, 12345, NULL, NULL};
	return ops->pick_device ? ops->pick_device(&ctx, &n->v, r) : -1;
}

/* fgd scores as the artifact's FGDScore: 100 x sigmoid(-growth / 1000),
 * truncated; a share goes to the first device of the best score. */
static void test_fgd_points(mu_t_t *t)
{
	mu_workload_mix_t m;
	mix_half_half(&m);
	vnode_t n;
	int16_t f[] = {1000, 1000, 1000};
	vnode(&n, 16000, 16000, 3, f, NULL);
	/* a whole GPU of three idle ones: F stays 0, growth 0: 50 */
	mu_res_t one = req(1000, 1, 0);
	CHECK(t, NEAR(score(&mu_score_fgd, &m, 0, &n, &one), 50));
	/* 300 on idle devices: the 700 left holds the 500 share but not a
	 * whole GPU: growth 0.5 x 700 = 350, 100 / (1 + e^0.35) = 41.3 */
	mu_res_t s3 = req(1000, 0, 300);
	CHECK(t, NEAR(score(&mu_score_fgd, &m, 0, &n, &s3), 41));
	CHECK_EQ_INT(t, pick(&mu_score_fgd, &m, &n, &s3), 0);
	/* 500 on {1000, 500, 500}: both 500s score alike; the first */
	int16_t g[] = {1000, 500, 500};
	vnode(&n, 16000, 16000, 3, g, NULL);
	mu_res_t s5 = req(1000, 0, 500);
	CHECK_EQ_INT(t, pick(&mu_score_fgd, &m, &n, &s5), 1);
	double sc = score(&mu_score_fgd, &m, 0, &n, &s5);
	CHECK(t, NEAR(sc, floor(sc)));
	mu_workload_mix_release(&m);
}

/* fgd and muster keep a usable whole GPU and fill the device a share
 * leaves least useful; muster keeps CPU away from idle GPUs. */
static void test_fgd_muster_choice(mu_t_t *t)
{
	mu_workload_mix_t m;
	mix_half_half(&m);
	vnode_t a, b, c;
	int16_t whole[] = {1000, 1000}, part[] = {1000, 700};
	vnode(&a, 16000, 16000, 2, whole, NULL);
	vnode(&b, 16000, 16000, 2, part, NULL);
	mu_res_t s = req(1000, 0, 200);
	const mu_score_ops_t *pol[] = {&mu_score_fgd, &mu_score_muster};
	for (int i = 0; i < 2; i++) {
		/* 200 on the 700 device leaves 500 (usable by the share) */
		CHECK(t, score(pol[i], &m, 0, &b, &s) > score(pol[i], &m, 0, &a, &s));
		CHECK_EQ_INT(t, pick(pol[i], &m, &b, &s), 1);
	}
	/* a device choice best fit gets wrong: 250 on {550, 800} */
	int16_t two[] = {550, 800};
	vnode(&c, 16000, 16000, 2, two, NULL);
	mu_res_t q = req(1000, 0, 250);
	CHECK_EQ_INT(t, pick(&mu_score_fgd, &m, &c, &q), 1);
	/* A CPU-only pod: fgd sees no difference while both nodes keep the
	 * 4 cores one pod of each shape needs; muster sees that the cores
	 * left on the idle node feed only one of its two GPUs. */
	mu_res_t cpu = req(8000, 0, 0);
	int16_t used[] = {0, 0};
	vnode(&a, 16000, 12000, 2, whole, NULL);
	vnode(&b, 16000, 12000, 2, used, NULL);
	CHECK(t, NEAR(score(&mu_score_fgd, &m, 0, &a, &cpu),
		      score(&mu_score_fgd, &m, 0, &b, &cpu)));
	CHECK(t, score(&mu_score_muster, &m, 0, &b, &cpu) >
		 score(&mu_score_muster, &m, 0, &a, &cpu));
	mu_workload_mix_release(&m);
}

/* muster places a share of 700 milli-GPU or more by the CPU-aware growth
 * when multi-GPU pods carry 15% or more of the mix's GPU demand, and by
 * FGD's points otherwise (the tenth round's muster-mg, muster's own
 * behaviour since the eleventh; the name muster-mg is kept and means
 * muster).  Two idle 8-GPU nodes, one with 64 cores free and one with 10:
 * FGD's points cannot tell them apart for an 810 (both keep the CPU one
 * pod of each shape needs), the CPU-aware growth prefers the CPU-poor
 * node, whose GPUs its CPU strands anyway. */
static void test_muster_mg_choice(mu_t_t *t)
{
	mu_res_t big = req(8000, 8, 0), one = req(4000, 1, 0),
		 s810 = req(2000, 0, 810), s300 = req(2000, 0, 300);
	mu_workload_mix_t heavy, light;
	mu_workload_mix_init(&heavy);
	mu_workload_mix_add(&heavy, &big, NULL, 0, 1);  /* 8000 of 11620 */
	mu_workload_mix_add(&heavy, &one, NULL, 0, 2);
	mu_workload_mix_add(&heavy, &s810, NULL, 0, 2);
	mu_workload_mix_finish(&heavy);
	mu_workload_mix_init(&light);
	mu_workload_mix_add(&light, &big, NULL, 0, 1);  /* 8000 of 109620 */
	mu_workload_mix_add(&light, &one, NULL, 0, 100);
	mu_workload_mix_add(&light, &s810, NULL, 0, 2);
	mu_workload_mix_finish(&light);
	int16_t idle[] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
	vnode_t rich, poor;
	vnode(&rich, 64000, 64000, 8, idle, NULL);
	vnode(&poor, 64000, 10000, 8, idle, NULL);
	const mu_score_ops_t *mu = &mu_score_muster;
	/* on the multi-GPU-heavy mix: the CPU-poor node */
	CHECK(t, score(mu, &heavy, 0, &poor, &s810) >
		 score(mu, &heavy, 0, &rich, &s810) + 1e-6);
	CHECK_EQ_INT(t, pick(mu, &heavy, &poor, &s810), 0);
	/* ... where FGD's points see no difference */
	CHECK(t, NEAR(score(&mu_score_fgd, &heavy, 0, &rich, &s810),
		      score(&mu_score_fgd, &heavy, 0, &poor, &s810)));
	/* a smaller share still by FGD's points: both alike */
	CHECK(t, NEAR(score(mu, &heavy, 0, &poor, &s300),
		      score(mu, &heavy, 0, &rich, &s300)));
	/* on the light mix an 810 scores alike on both too */
	CHECK(t, NEAR(score(mu, &light, 0, &rich, &s810),
		      score(mu, &light, 0, &poor, &s810)));
	/* the old name is muster */
	const mu_score_ops_t *mg = mu_score_find("muster-mg");
	CHECK(t, mg == &mu_score_muster_mg);
	const vnode_t *both[] = {&rich, &poor};
	for (int i = 0; i < 2; i++) {
		CHECK(t, NEAR(score(mg, &heavy, 0, both[i], &s810),
			      score(mu, &heavy, 0, both[i], &s810)));
		CHECK(t, NEAR(score(mg, &light, 0, both[i], &one),
			      score(mu, &light, 0, both[i], &one)));
	}
	mu_workload_mix_release(&heavy);
	mu_workload_mix_release(&light);
}

/* muster's two corrections to FGD's points for a share (score_frag.c,
 * muster_share).  Mix: whole GPUs, 470s and 320s, ten pods each.
 * Remainder fit: a 470 on a device with 790 free leaves 320, a common
 * size; on one with 640 free it leaves 170, which no common size fits.
 * FGD's points are the same (51) and it takes the first.  Reserve: the
 * mix's whole-GPU share of the demand is 10000 / 17900, so a 4-GPU node
 * keeps floor(0.75 x 4 x 0.56) = 1 whole device for whole-GPU pods; a
 * share breaks that one only when no node has another.  The reserve is
 * shown on nodes of 10 free cores: on a CPU-rich node (32 free cores, 30
 * left for the 0.53 free GPU after a 470) the spread rule (shares carry
 * 0.44 of the demand, above spread_shares) gives the 100 points back,
 * as test_score_spread.c shows on its own. */
static void test_muster_share_choice(mu_t_t *t)
{
	mu_res_t w = req(4000, 1, 0), a = req(2000, 0, 470), b = req(2000, 0, 320);
	mu_workload_mix_t m;
	mu_workload_mix_init(&m);
	mu_workload_mix_add(&m, &w, NULL, 0, 10);
	mu_workload_mix_add(&m, &a, NULL, 0, 10);
	mu_workload_mix_add(&m, &b, NULL, 0, 10);
	mu_workload_mix_finish(&m);
	const mu_score_ops_t *mu = &mu_score_muster, *fgd = &mu_score_fgd;
	vnode_t n, p, q;
	int16_t mixed[] = {640, 790}, low[] = {640, 640}, high[] = {790, 790};
	vnode(&n, 32000, 32000, 2, mixed, NULL);
	CHECK_EQ_INT(t, pick(fgd, &m, &n, &a), 0);
	CHECK_EQ_INT(t, pick(mu, &m, &n, &a), 1);
	vnode(&p, 32000, 32000, 2, low, NULL);
	vnode(&q, 32000, 32000, 2, high, NULL);
	CHECK(t, NEAR(score(fgd, &m, 0, &p, &a), score(fgd, &m, 0, &q, &a)));
	CHECK(t, score(mu, &m, 0, &q, &a) > score(mu, &m, 0, &p, &a) + 0.1);
	/* within a point of FGD's: 170 / 1001 less */
	CHECK(t, NEAR(score(mu, &m, 0, &p, &a), 51 - 170 / 1001.0));
	/* the reserve */
	int16_t idle[] = {1000, 1000, 1000, 1000}, last[] = {1000, 0, 0, 0};
	vnode(&p, 32000, 10000, 4, idle, NULL);
	vnode(&q, 32000, 10000, 4, last, NULL);
	CHECK(t, NEAR(score(fgd, &m, 0, &p, &a), score(fgd, &m, 0, &q, &a)));
	CHECK(t, score(mu, &m, 0, &p, &a) > score(mu, &m, 0, &q, &a) + 99);
	CHECK_EQ_INT(t, pick(mu, &m, &q, &a), 0); /* still placeable */
	/* a 2-GPU node keeps none: floor(0.75 x 2 x 0.56) = 0 */
	int16_t two[] = {1000, 0};
	vnode(&q, 32000, 10000, 2, two, NULL);
	CHECK(t, NEAR(score(mu, &m, 0, &q, &a), score(mu, &m, 0, &p, &a)));
	/* CPU-rich: the spread rule's 100 points offset the reserve's */
	vnode(&p, 32000, 32000, 4, idle, NULL);
	vnode(&q, 32000, 32000, 4, last, NULL);
	CHECK(t, NEAR(score(mu, &m, 0, &q, &a), score(mu, &m, 0, &p, &a)));
	mu_workload_mix_release(&m);
}

/* The baselines on crafted nodes. */
static void test_baselines_choice(mu_t_t *t)
{
	vnode_t idle, busy, shared, same;
	int16_t f_idle[] = {1000, 1000}, f_busy[] = {0, 1000};
	int16_t f_shared[] = {700, 1000}, f_same[] = {500, 1000};
	vnode(&idle, 32000, 32000, 2, f_idle, NULL);
	vnode(&busy, 32000, 16000, 2, f_busy, NULL);
	vnode(&shared, 32000, 28000, 2, f_shared, NULL);
	vnode(&same, 32000, 28000, 2, f_same, NULL);
	mu_res_t one = req(4000, 1, 0), s250 = req(2000, 0, 250);
	mu_res_t cpu = req(4000, 0, 0);
	/* random: the score is the engine's random bits */
	CHECK(t, score(&mu_score_random, NULL, 1ULL << 40, &idle, &one) <
		 score(&mu_score_random, NULL, 1ULL << 60, &idle, &one));
	/* The FGD artifact's integer scores (score_gpu.c names its plugins). */
	/* dotprod: 100 (1 - (16/128 x 4/128 + 1/8 x 1/8) / 2) = 99.02 */
	CHECK(t, NEAR(score(&mu_score_dotprod, NULL, 0, &busy, &one), 99));
	CHECK(t, NEAR(score(&mu_score_dotprod, NULL, 0, &idle, &one), 98));
	/* bestfit: 100 (1 - (12/128 / 2 + 0)) = 95.3; idle 82.8 */
	CHECK(t, NEAR(score(&mu_score_bestfit, NULL, 0, &busy, &one), 95));
	CHECK(t, NEAR(score(&mu_score_bestfit, NULL, 0, &idle, &one), 82));
	/* packing: a used share of 700 free: 100 - 70/10; opening a device
	 * of a used node: 50 - 1; an idle node of 2 GPUs: 33 - 2; no GPU: 0 */
	CHECK(t, NEAR(score(&mu_score_packing, NULL, 0, &shared, &s250), 93));
	CHECK(t, NEAR(score(&mu_score_packing, NULL, 0, &busy, &s250), 49));
	CHECK(t, NEAR(score(&mu_score_packing, NULL, 0, &busy, &one), 49));
	CHECK(t, NEAR(score(&mu_score_packing, NULL, 0, &idle, &one), 31));
	CHECK(t, NEAR(score(&mu_score_packing, NULL, 0, &busy, &cpu), 0));
	CHECK(t, NEAR(score(&mu_score_packing, NULL, 0, &idle, &cpu), 0));
	/* clustering: a band of 25 by the kinds of pods on the node, plus
	 * 25 x (8000 - free milli) / 8000: shares only 75 + 20; shares and
	 * 1-GPU pods 50 + 19; no pod 25 + 18; only 1-GPU pods 0 + 21 */
	int32_t k_share[MU_MAX_GPUS + 1] = {2}, k_mixed[MU_MAX_GPUS + 1] = {1, 1};
	int32_t k_one[MU_MAX_GPUS + 1] = {0, 1};
	same.v.gpu_kinds = k_share;
	shared.v.gpu_kinds = k_mixed;
	busy.v.gpu_kinds = k_one;
	CHECK(t, NEAR(score(&mu_score_clustering, NULL, 0, &same, &s250), 95));
	CHECK(t, NEAR(score(&mu_score_clustering, NULL, 0, &shared, &s250), 69));
	CHECK(t, NEAR(score(&mu_score_clustering, NULL, 0, &idle, &s250), 43));
	CHECK(t, NEAR(score(&mu_score_clustering, NULL, 0, &busy, &s250), 21));
	CHECK(t, NEAR(score(&mu_score_clustering, NULL, 0, &busy, &one), 96));
	CHECK(t, NEAR(score(&mu_score_clustering, NULL, 0, &busy, &cpu), 0));
	/* random picks any device that holds the share */
	int16_t f3[] = {100, 1000, 300};
	vnode_t r3;
	vnode(&r3, 32000, 32000, 3, f3, NULL);
	bool seen[3] = {false, false, false};
	for (uint64_t k = 0; k < 64; k++) {
		mu_score_ctx_t ctx = {NULL, k * 0x9e3779b97f4a7c15ULL, NULL, NULL};
		int g = mu_score_random.pick_device(&ctx, &r3.v, &s250);
		CHECK(t, g == 1 || g == 2);
		if (g >= 0 && g < 3)
			seen[g] = true;
	}
	CHECK(t, seen[1] && seen[2]);
	CHECK(t, mu_score_find("fgd") == &mu_score_fgd);
	CHECK(t, mu_score_find("muster") == &mu_score_muster);
	CHECK(t, mu_score_find("clustering") == &mu_score_clustering);
}

/* A policy whose pick_device takes the highest device that holds the
 * share, to see the engine honour the hook. */
static double score_zero(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
			 const mu_res_t *r)
{
	(void)ctx;
	(void)n;
	(void)r;
	return 0;
}

static int pick_last(const mu_score_ctx_t *ctx, const mu_node_view_t *n,
		     const mu_res_t *r)
{
	(void)ctx;
	for (int g = n->ngpu - 1; g >= 0; g--)
		if (n->gpu_free[g] >= r->v[MU_RES_GPU_MILLI])
			return g;
	return -1;
}

/* Adds queue "q", submits one preemptible one-pod job "j" asking r, and
 * runs a cycle into d (initialised here; the caller releases it). */
static void submit_one(mu_t_t *t, mu_engine_t *e, mu_res_t r, mu_decisions_t *d)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	mu_podset_spec_t ps = {.name = "main", .replicas = 1, .req = r};
	mu_job_spec_t j = {.name = "j", .queue = "q", .preemptible = true,
			   .podsets = &ps, .npodsets = 1};
	mu_id_t jid;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, &jid), MU_OK);
	mu_decisions_init(d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, d), MU_OK);
}

static void test_pick_device_hook(mu_t_t *t)
{
	static const mu_score_ops_t last = {"last", score_zero, pick_last, 0};
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.score = &last;
	mu_engine_t *e;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &e), MU_OK);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n0";
	n.alloc.v[MU_RES_CPU] = 8000;
	n.alloc.v[MU_RES_MEM] = 1LL << 30;
	n.alloc.v[MU_RES_GPU] = 4;
	n.alloc.v[MU_RES_PODS] = 10;
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, NULL), MU_OK);
	mu_decisions_t d;
	submit_one(t, e, req(1000, 0, 300), &d);
	bool bound = false;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].kind == MU_DEC_BIND) {
			bound = true;
			CHECK_EQ_INT(t, d.v[i].gpus, 1ULL << 3);
			CHECK_EQ_INT(t, d.v[i].gpu_milli, 300);
		}
	CHECK(t, bound);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

/* The node a one-pod job binds to among 40 nodes of equal score, node 0
 * too small for it, with kube_ties as given. */
static int32_t tie_pick(mu_t_t *t, bool kube_ties)
{
	static const mu_score_ops_t flat = {"flat", score_zero, NULL, 0};
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.score = &flat;
	cfg.kube_ties = kube_ties;
	mu_engine_t *e;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &e), MU_OK);
	for (int i = 0; i < 40; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%02d", i);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.alloc.v[MU_RES_CPU] = i == 0 ? 500 : 8000;
		n.alloc.v[MU_RES_MEM] = 1LL << 30;
		n.alloc.v[MU_RES_PODS] = 10;
		CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, NULL), MU_OK);
	}
	mu_decisions_t d;
	submit_one(t, e, req(1000, 0, 0), &d);
	int32_t node = -1;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].kind == MU_DEC_BIND)
			node = d.v[i].node;
	mu_decisions_release(&d);
	mu_engine_free(e);
	return node;
}

/* Ties: the lower node id by default; with kube_ties the node that
 * kube-scheduler v1.20's parallel filter lists first.  40 nodes make
 * chunks of min(sqrt 40, 40/16 + 1) = 3 on 16 workers, so node 3 (offset
 * 0 of chunk 1) is found before node 1 (offset 1 of chunk 0). */
static void test_kube_ties(mu_t_t *t)
{
	CHECK_EQ_INT(t, tie_pick(t, false), 1);
	CHECK_EQ_INT(t, tie_pick(t, true), 3);
}

/* --- Specs for tiny evaluations ------------------------------------------ */

typedef struct tiny {
	mu_specs_t nodes, pods;
} tiny_t;

static void tiny_init(tiny_t *s)
{
	mu_specs_init(&s->nodes);
	mu_specs_init(&s->pods);
}

static void tiny_release(tiny_t *s)
{
	mu_specs_release(&s->nodes);
	mu_specs_release(&s->pods);
}

static void tiny_node(tiny_t *s, const char *name, int gpus, int cpus)
{
	mu_node_spec_t *n = mu_specs_add_node(&s->nodes);
	n->name = mu_arena_strdup(&s->nodes.arena, name);
	n->alloc.v[MU_RES_CPU] = cpus * 1000LL;
	n->alloc.v[MU_RES_MEM] = 64LL << 30;
	n->alloc.v[MU_RES_GPU] = gpus;
	n->alloc.v[MU_RES_PODS] = 100;
}

static void tiny_pod(tiny_t *s, const char *name, int64_t gpus, int64_t share)
{
	mu_job_spec_t *j = mu_specs_add_job(&s->pods);
	mu_podset_spec_t *ps = mu_arena_alloc(&s->pods.arena, sizeof *ps);
	j->name = mu_arena_strdup(&s->pods.arena, name);
	j->queue = "default";
	j->podsets = ps;
	j->npodsets = 1;
	ps->name = "main";
	ps->replicas = 1;
	ps->req = req(1000, gpus, share);
}

static void test_arrivals(mu_t_t *t)
{
	tiny_t s;
	tiny_init(&s);
	tiny_node(&s, "n0", 10, 64);
	tiny_pod(&s, "a", 1, 0);
	tiny_pod(&s, "b", 0, 500);
	tiny_pod(&s, "c", 0, 0); /* no GPU demand */
	mu_eval_input_t in;
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_eval_input_build(&s.nodes, &s.pods, &in, &d), MU_OK);
	CHECK_EQ_INT(t, in.gpus, 10);
	CHECK_EQ_INT(t, in.pod_gpu_milli, 1500);
	size_t *o1, *o2, *o3, n1, n2, n3;
	CHECK_EQ_INT(t, mu_eval_arrivals(&in, 7, 1.3, &o1, &n1), MU_OK);
	CHECK_EQ_INT(t, mu_eval_arrivals(&in, 7, 1.3, &o2, &n2), MU_OK);
	CHECK_EQ_INT(t, mu_eval_arrivals(&in, 8, 1.3, &o3, &n3), MU_OK);
	/* deterministic per seed */
	CHECK_EQ_INT(t, n1, n2);
	CHECK(t, o1 && o2 && memcmp(o1, o2, n1 * sizeof *o1) == 0);
	/* the whole list first, as a permutation */
	int seen = 0;
	for (size_t i = 0; i < 3 && i < n1; i++)
		seen |= 1 << o1[i];
	CHECK_EQ_INT(t, seen, 7);
	/* then draws with replacement until 13000 milli arrived, cut at
	 * the first arrival that gets there */
	int64_t sum = 0, last = 0;
	int counts[3] = {0, 0, 0};
	for (size_t i = 0; i < n1; i++) {
		CHECK(t, o1[i] < 3);
		last = in.pods[o1[i]].gpu_milli;
		sum += last;
		counts[o1[i] % 3]++;
	}
	CHECK(t, sum >= 13000 && sum - last < 13000);
	CHECK(t, counts[0] > 1 && counts[1] > 1); /* with replacement */
	/* another seed, another order (the chance of equal ones is tiny) */
	CHECK(t, n1 != n3 || memcmp(o1, o3, n1 * sizeof *o1) != 0);
	free(o1);
	free(o2);
	free(o3);
	/* a list that is more than enough is cut, not extended */
	CHECK_EQ_INT(t, mu_eval_arrivals(&in, 7, 0.1, &o1, &n1), MU_OK);
	CHECK(t, n1 >= 1 && n1 <= 3);
	free(o1);
	CHECK_EQ_INT(t, mu_eval_arrivals(&in, 7, 0, &o1, &n1), MU_EINVAL);
	mu_eval_input_release(&in);
	tiny_release(&s);
}

static void test_grid(mu_t_t *t)
{
	CHECK_EQ_INT(t, mu_eval_npoints(1.3), 131);
	CHECK_EQ_INT(t, mu_eval_npoints(1.0), 101);
	CHECK_EQ_INT(t, mu_eval_bin(0, 1000), 0);
	CHECK_EQ_INT(t, mu_eval_bin(4, 1000), 0);    /* 0.4% */
	CHECK_EQ_INT(t, mu_eval_bin(5, 1000), 1);    /* 0.5% rounds up */
	CHECK_EQ_INT(t, mu_eval_bin(1000, 1000), 100);
	CHECK_EQ_INT(t, mu_eval_bin(6212 * 1300, 6212 * 1000), 130);
	CHECK_EQ_INT(t, mu_eval_bin(6212 * 1305, 6212 * 1000), 131);
	mu_eval_grid_t g;
	CHECK_EQ_INT(t, mu_eval_grid_init(&g, 5), MU_OK);
	mu_eval_grid_add(&g, 1, 10, 50);
	mu_eval_grid_add(&g, 1, 20, 70);
	mu_eval_grid_add(&g, 3, 40, 90);
	mu_eval_grid_add(&g, 7, 99, 99); /* past the grid: dropped */
	double a[5], f[5];
	mu_eval_grid_means(&g, 0, 12, a, f);
	CHECK(t, NEAR(a[0], 0) && NEAR(f[0], 12));  /* nothing yet */
	CHECK(t, NEAR(a[1], 15) && NEAR(f[1], 60)); /* the mean */
	CHECK(t, NEAR(a[2], 15) && NEAR(f[2], 60)); /* carried */
	CHECK(t, NEAR(a[3], 40) && NEAR(a[4], 40));
	mu_eval_grid_release(&g);
	CHECK(t, NEAR(mu_eval_frag_ratio(250, 1000), 25));
	CHECK(t, NEAR(mu_eval_frag_ratio(0, 0), 0));
}

/* One node, one GPU, two 600-milli shares: the first is placed (60%),
 * the second fits nowhere; the 400 left is a fragment for that shape. */
static void test_run_shares(mu_t_t *t)
{
	tiny_t s;
	tiny_init(&s);
	tiny_node(&s, "n0", 1, 8);
	tiny_pod(&s, "a", 0, 600);
	mu_eval_input_t in;
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_eval_input_build(&s.nodes, &s.pods, &in, &d), MU_OK);
	mu_eval_config_t cfg = {.score = &mu_score_fgd, .seed = 1, .tune = 1.0};
	mu_eval_run_t r;
	CHECK_EQ_INT(t, mu_eval_run(&in, &cfg, &r, &d), MU_OK);
	CHECK_EQ_INT(t, r.npoints, 101);
	CHECK_EQ_INT(t, r.arrivals, 2);
	CHECK_EQ_INT(t, r.placed, 1);
	CHECK_EQ_INT(t, r.skipped, 1);
	CHECK_EQ_INT(t, r.alloc_milli, 600);
	CHECK_EQ_INT(t, r.arrived_milli, 1200);
	CHECK(t, NEAR(r.alloc[0], 0) && NEAR(r.frag[0], 0));
	CHECK(t, NEAR(r.alloc[59], 0));
	CHECK(t, NEAR(r.alloc[60], 60) && NEAR(r.frag[60], 100));
	CHECK(t, NEAR(r.alloc[100], 60) && NEAR(r.frag[100], 100));
	/* The 400 left sit on a partly used device. */
	CHECK_EQ_INT(t, r.waste_milli[MU_EVAL_WASTE_LT500], 400);
	int64_t free_sum = 0;
	for (int b = 0; b < MU_EVAL_WASTE_BINS; b++)
		free_sum += r.waste_milli[b];
	CHECK_EQ_INT(t, free_sum, 400);
	CHECK_STR(t, mu_eval_waste_name(MU_EVAL_WASTE_LT200), "holes_190_199");
	CHECK(t, mu_eval_waste_name(MU_EVAL_WASTE_BINS) == NULL);
	mu_eval_run_release(&r);
	mu_eval_input_release(&in);
	tiny_release(&s);
}

/* Two 1-GPU nodes, whole-GPU pods: everything fits, alloc follows the
 * arrived demand, and free whole GPUs are no fragment. */
static void test_run_whole(mu_t_t *t)
{
	tiny_t s;
	tiny_init(&s);
	tiny_node(&s, "n0", 1, 8);
	tiny_node(&s, "n1", 1, 8);
	tiny_pod(&s, "a", 1, 0);
	mu_eval_input_t in;
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_eval_input_build(&s.nodes, &s.pods, &in, &d), MU_OK);
	const char *names[] = {"random", "dotprod", "clustering", "packing",
			       "bestfit", "fgd", "muster"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		mu_eval_config_t cfg = {.score = mu_score_find(names[i]),
					.seed = 3, .tune = 1.3};
		mu_eval_run_t r;
		CHECK_EQ_INT(t, mu_eval_run(&in, &cfg, &r, &d), MU_OK);
		CHECK_EQ_INT(t, r.npoints, 131);
		CHECK_EQ_INT(t, r.arrivals, 3);
		CHECK_EQ_INT(t, r.placed, 2);
		CHECK(t, NEAR(r.alloc[50], 50) && NEAR(r.frag[50], 0));
		CHECK(t, NEAR(r.alloc[100], 100) && NEAR(r.alloc[130], 100));
		CHECK(t, NEAR(r.frag[130], 0));
		CHECK_EQ_INT(t, r.waste_milli[MU_EVAL_WASTE_WHOLE], 0);
		CHECK_STR(t, r.policy, names[i]);
		mu_eval_run_release(&r);
	}
	mu_eval_input_release(&in);
	tiny_release(&s);
}

static void test_input_errors(mu_t_t *t)
{
	tiny_t s;
	tiny_init(&s);
	tiny_node(&s, "n0", 0, 8);
	tiny_pod(&s, "a", 1, 0);
	mu_eval_input_t in;
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_eval_input_build(&s.nodes, &s.pods, &in, &d), MU_EINVAL);
	CHECK(t, strstr(d.msg, "no GPUs") != NULL);
	mu_eval_input_release(&in);
	tiny_release(&s);
}

/* Writes text to a temporary file; returns its path in buf. */
static bool temp_file(char *buf, const char *text)
{
	strcpy(buf, "/tmp/muster-eval-XXXXXX");
	int fd = mkstemp(buf);
	if (fd < 0)
		return false;
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	return ok;
}

static void test_paper_csv(mu_t_t *t)
{
	char path[64];
	CHECK(t, temp_file(path,
		"workload,sc_policy,tune,seed,total_gpus,0,1,2\n"
		"w,06-FGD,1.3,42,10,1,2,3\n"
		"w,06-FGD,1.3,43,10,3,4,\n"
		"w,01-Random,1.3,42,10,0,0,1\n"));
	mu_eval_paper_t p;
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_eval_paper_load(path, &p, &d), MU_OK);
	CHECK_EQ_INT(t, p.ncurves, 2);
	const mu_eval_paper_curve_t *c = mu_eval_paper_find(&p, "w", "fgd");
	CHECK(t, c != NULL);
	if (c) {
		CHECK_EQ_INT(t, c->npoints, 3);
		CHECK_EQ_INT(t, c->seeds, 2);
		CHECK(t, NEAR(c->mean[0], 2) && NEAR(c->mean[1], 3));
		CHECK(t, NEAR(c->mean[2], 3)); /* the one row with a value */
	}
	CHECK(t, mu_eval_paper_find(&p, "w", "muster") == NULL);
	CHECK(t, mu_eval_paper_find(&p, "x", "fgd") == NULL);
	CHECK_STR(t, mu_eval_paper_policy("clustering"), "03-GpuClustering");
	mu_eval_paper_release(&p);
	unlink(path);
	CHECK(t, temp_file(path, "workload,sc_policy,0\n\"w\",a,1\n"));
	CHECK_EQ_INT(t, mu_eval_paper_load(path, &p, &d), MU_EPARSE);
	mu_eval_paper_release(&p);
	unlink(path);
	CHECK(t, temp_file(path, "a,b,c\n"));
	CHECK_EQ_INT(t, mu_eval_paper_load(path, &p, &d), MU_EPARSE);
	mu_eval_paper_release(&p);
	unlink(path);
}

/* JSON and HTML of a tiny run: the fields and grid size are there. */
static void test_writers(mu_t_t *t)
{
	tiny_t s;
	tiny_init(&s);
	tiny_node(&s, "n0", 2, 8);
	tiny_pod(&s, "a", 1, 0);
	mu_eval_input_t in;
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_eval_input_build(&s.nodes, &s.pods, &in, &d), MU_OK);
	mu_eval_run_t runs[2];
	for (int k = 0; k < 2; k++) {
		mu_eval_config_t cfg = {.score = &mu_score_muster,
					.seed = (uint64_t)(42 + k)};
		CHECK_EQ_INT(t, mu_eval_run(&in, &cfg, &runs[k], &d), MU_OK);
	}
	mu_eval_series_t se = {.policy = "muster", .runs = runs, .nruns = 2};
	CHECK_EQ_INT(t, mu_eval_series_mean(&se), MU_OK);
	mu_eval_report_t r = {.workload = "w<x>", .tune = 1.3, .gpus = 2,
			      .nodes = 1, .pods = 1, .series = &se, .nseries = 1};
	size_t cap = 1 << 20;
	char *buf = calloc(1, cap);
	if (!buf)
		return;
	FILE *f = fmemopen(buf, cap, "w");
	CHECK_EQ_INT(t, mu_eval_write_json(&r, f), MU_OK);
	fclose(f);
	CHECK(t, strstr(buf, "\"policy\":\"muster\"") != NULL);
	CHECK(t, strstr(buf, "\"seed\":[42,43]") != NULL);
	CHECK(t, strstr(buf, "\"alloc_mean\":[") != NULL);
	CHECK(t, strstr(buf, "\"frag_ratio_mean\":[") != NULL);
	CHECK(t, strstr(buf, "\"free_milli\":[{\"holes_lt100\":0,") != NULL);
	const char *am = strstr(buf, "\"alloc_mean\":[");
	int commas = 0;
	for (const char *p = am ? am : buf; am && *p && *p != ']'; p++)
		commas += *p == ',';
	CHECK_EQ_INT(t, commas, 130);
	memset(buf, 0, cap);
	f = fmemopen(buf, cap, "w");
	CHECK_EQ_INT(t, mu_eval_write_html(&r, f), MU_OK);
	fclose(f);
	CHECK(t, strstr(buf, "<svg") != NULL);
	CHECK(t, strstr(buf, "Free GPUs at the end") != NULL);
	CHECK(t, strstr(buf, "w&lt;x&gt;") != NULL);
	CHECK(t, strstr(buf, "w<x>") == NULL);
	free(buf);
	free(se.alloc_mean);
	free(se.frag_mean);
	for (int k = 0; k < 2; k++)
		mu_eval_run_release(&runs[k]);
	mu_eval_input_release(&in);
	tiny_release(&s);
}

/* One policy, one seed on the real default trace: a sane end. */
static void test_openb_default(mu_t_t *t)
{
	const char *dir = "../shared/data/openb";
	char nodes[256], pods[256];
	snprintf(nodes, sizeof nodes, "%s/openb_node_list_gpu_node.csv", dir);
	snprintf(pods, sizeof pods, "%s/openb_pod_list_default.csv", dir);
	if (access(nodes, R_OK) || access(pods, R_OK)) {
		printf("skipped: ../shared/data not found\n");
		return;
	}
	mu_specs_t ns, ps;
	mu_specs_init(&ns);
	mu_specs_init(&ps);
	mu_diag_t d;
	CHECK_EQ_INT(t, mu_load_file(nodes, NULL, &ns, &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_file(pods, NULL, &ps, &d), MU_OK);
	mu_eval_input_t in;
	CHECK_EQ_INT(t, mu_eval_input_build(&ns, &ps, &in, &d), MU_OK);
	CHECK_EQ_INT(t, in.gpus, 6212);
	CHECK_EQ_INT(t, in.nnodes, 1213);
	mu_eval_config_t cfg = {.score = &mu_score_random, .seed = 42};
	mu_eval_run_t r;
	CHECK_EQ_INT(t, mu_eval_run(&in, &cfg, &r, &d), MU_OK);
	CHECK(t, r.alloc[130] > 80 && r.alloc[130] < 100);
	CHECK(t, r.alloc[50] > 49 && r.alloc[50] < 51);
	CHECK(t, r.frag[0] > 10 && r.frag[0] < 20); /* the paper: ~14 */
	mu_eval_run_release(&r);
	mu_eval_input_release(&in);
	mu_specs_release(&ns);
	mu_specs_release(&ps);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_mix);
	MU_RUN(&t, test_mix_top);
	MU_RUN(&t, test_fgd_points);
	MU_RUN(&t, test_frag_measure);
	MU_RUN(&t, test_fgd_muster_choice);
	MU_RUN(&t, test_muster_mg_choice);
	MU_RUN(&t, test_muster_share_choice);
	MU_RUN(&t, test_baselines_choice);
	MU_RUN(&t, test_pick_device_hook);
	MU_RUN(&t, test_kube_ties);
	MU_RUN(&t, test_arrivals);
	MU_RUN(&t, test_grid);
	MU_RUN(&t, test_run_shares);
	MU_RUN(&t, test_run_whole);
	MU_RUN(&t, test_input_errors);
	MU_RUN(&t, test_paper_csv);
	MU_RUN(&t, test_writers);
	MU_RUN(&t, test_openb_default);
	return mu_t_done(&t);
}
