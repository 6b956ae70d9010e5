/*
 * test_score_press.c - the seventeenth round's two rules of muster
 * (src/engine/score_frag.c, mu_muster_params_t.cpu_fit and press_over):
 *   - cpu_fit: where pods that take no GPU are a quarter or more of the mix,
 *     a CPU-only pod that strands no GPU on either of two nodes goes to
 *     the one it leaves the least free CPU on; below that share, or with
 *     the setting above 1, the two tie;
 *   - press_over: given the cluster's devices per GPU model
 *     (mu_workload_mix_supply), a GPU pod that may use two models avoids
 *     the one that the mix's model-tied pods over-ask; without the
 *     devices, with the setting 0, or on a mix that names no model, the
 *     score is the rule's off score.
 * Nothing is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "score_fixture.h"

/* A mix of 1-GPU pods of 11 cores and `cpu_only` CPU-only pods of 8
 * cores for every 100 GPU pods. */
static void cpu_mix(mu_workload_mix_t *m, int64_t cpu_only)
{
	mu_res_t g = score_req(11000, 0, 1, 0), c = score_req(8000, 0, 0, 0);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &g, NULL, 0, 100);
	mu_workload_mix_add(m, &c, NULL, 0, cpu_only);
	mu_workload_mix_finish(m);
}

/* Two nodes whose GPUs are all taken: a CPU-only pod strands no GPU on
 * either (the CPU-aware growth is 0 on both).  Node a keeps 10 cores
 * free, node b 40: with half the pods CPU-only the pod goes to a (best
 * fit), with a tenth (below the default 0.25) or the setting off they
 * tie, and the lower node id would take it. */
static void test_cpu_fit(mu_t_t *t)
{
	vnode_t a, b;
	score_node(&a, 0, 10000, 0, NULL);
	score_node(&b, 0, 40000, 0, NULL);
	mu_res_t c = score_req(8000, 0, 0, 0);
	mu_workload_mix_t half, tenth;
	cpu_mix(&half, 100);
	cpu_mix(&tenth, 11);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&on);
	CHECK(t, on.cpu_fit > 0.1 && on.cpu_fit <= 0.5);
	off = on;
	off.cpu_fit = 2.0; /* never */
	mu_workload_mix_t view = half;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = NULL; /* the defaults */
	CHECK(t, mu_score_muster.score(&ctx, &a.v, &c) >
		 mu_score_muster.score(&ctx, &b.v, &c));
	view.muster = &off;
	CHECK(t, mu_score_muster.score(&ctx, &a.v, &c) ==
		 mu_score_muster.score(&ctx, &b.v, &c));
	view = tenth;
	view.muster = NULL;
	CHECK(t, mu_score_muster.score(&ctx, &a.v, &c) ==
		 mu_score_muster.score(&ctx, &b.v, &c));
	/* A GPU pod is not moved by it. */
	vnode_t ga, gb;
	score_node(&ga, 4, 44000, 0, NULL);
	score_node(&gb, 4, 88000, 0, NULL);
	mu_res_t g = score_req(11000, 0, 1, 0);
	view = half;
	view.muster = &on;
	double on_a = mu_score_muster.score(&ctx, &ga.v, &g);
	double on_b = mu_score_muster.score(&ctx, &gb.v, &g);
	view.muster = &off;
	CHECK(t, on_a == mu_score_muster.score(&ctx, &ga.v, &g));
	CHECK(t, on_b == mu_score_muster.score(&ctx, &gb.v, &g));
	mu_workload_mix_release(&half);
	mu_workload_mix_release(&tenth);
}

/* Model A has 8 devices, model B 64.  The mix: 40 1-GPU pods tied to A,
 * 10 that may use A or B, 50 that may use any model.  A's pressure: the
 * A-only demand (40) plus the flexible pods' spread over 72 devices
 * (10 x 8/72), per A device, over the cluster's demand per device
 * (100/72): (40 + 1.1) / 8 / 1.39 = 3.7; B's 10 x 64/72 / 64 / 1.39 =
 * 0.1 (the 50 free pods press on neither).  A pod that may use A or B, on two nodes alike but for the model,
 * goes to B by far; nothing changes without the devices, with the
 * setting 0, or when no shape names a model. */
static void press_mix(mu_workload_mix_t *m, bool models)
{
	const char *a[] = {"A"}, *ab[] = {"A", "B"};
	mu_res_t g = score_req(8000, 0, 1, 0);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &g, models ? a : NULL, models ? 1 : 0, 40);
	mu_workload_mix_add(m, &g, models ? ab : NULL, models ? 2 : 0, 10);
	mu_workload_mix_add(m, &g, NULL, 0, 50);
	mu_workload_mix_finish(m);
}

static void test_press(mu_t_t *t)
{
	vnode_t na, nb;
	score_node(&na, 8, 96000, 0, "A");
	score_node(&nb, 8, 96000, 0, "B");
	mu_res_t g = score_req(8000, 0, 1, 0), s = score_req(8000, 0, 0, 500);
	mu_workload_mix_t m, plain;
	press_mix(&m, true);
	mu_muster_params_t on, off;
	mu_muster_params_defaults(&on);
	CHECK(t, on.press_over > 0);
	off = on;
	off.press_over = 0;
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = &off;
	double off_a = mu_score_muster.score(&ctx, &na.v, &g);
	double off_b = mu_score_muster.score(&ctx, &nb.v, &g);
	double soff_a = mu_score_muster.score(&ctx, &na.v, &s);
	/* No devices given yet: the defaults score as off. */
	view.muster = NULL;
	CHECK(t, mu_score_muster.score(&ctx, &na.v, &g) == off_a);
	CHECK_EQ_INT(t, mu_workload_mix_supply(&m, "A", 8), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_supply(&m, "B", 64), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_supply(&m, "B", -1), MU_EINVAL);
	view = m;
	view.muster = NULL;
	double on_a = mu_score_muster.score(&ctx, &na.v, &g);
	double on_b = mu_score_muster.score(&ctx, &nb.v, &g);
	CHECK(t, on_b > on_a + 1e5);
	CHECK(t, on_b == off_b); /* B is not over-asked */
	CHECK(t, mu_score_muster.score(&ctx, &na.v, &s) < soff_a - 1e5);
	view.muster = &off;
	CHECK(t, mu_score_muster.score(&ctx, &na.v, &g) == off_a);
	/* No shape names a model: no pressure anywhere. */
	press_mix(&plain, false);
	CHECK_EQ_INT(t, mu_workload_mix_supply(&plain, "A", 8), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_supply(&plain, "B", 64), MU_OK);
	view = plain;
	view.muster = NULL;
	double p_a = mu_score_muster.score(&ctx, &na.v, &g);
	view.muster = &off;
	CHECK(t, p_a == mu_score_muster.score(&ctx, &na.v, &g));
	/* Before finish the call is refused. */
	mu_workload_mix_t raw;
	mu_workload_mix_init(&raw);
	CHECK_EQ_INT(t, mu_workload_mix_supply(&raw, "A", 8), MU_EINVAL);
	mu_workload_mix_release(&raw);
	mu_workload_mix_release(&m);
	mu_workload_mix_release(&plain);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_cpu_fit);
	MU_RUN(&t, test_press);
	return mu_t_done(&t);
}
