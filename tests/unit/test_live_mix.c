/*
 * test_live_mix.c - the demand now as muster's mix (the twenty-first
 * round, src/engine/horizon.c): the live scheduler's plain `--policy
 * muster` counts each pod pending or running in (mu_horizon_seen_at) and
 * takes it out when it ends or goes (mu_horizon_unseen), and its engine
 * scores with the mix built from that (mu_horizon_live_mix); and the
 * horizon's rollouts read the engine's devices per model now.
 *
 *   - the demand: six one-GPU pods tied to model A and one free pod on a
 *     node of A and one of B (8 GPUs each) give the engine's pressure on A,
 *     6000/8 x 16/7000; the A pods gone, no pressure; every pod gone, the
 *     empty mix (no index: muster as without one); a pod more or less
 *     within 1/16 of the pods does not build the mix again, a new shape
 *     does; unknown indexes and too many pods refused;
 *   - drift at a steady count: pods of one shape replaced by another's
 *     count towards the 1/16 window one by one, not by the net change;
 *   - shapes reused: a shape whose pods all left gives its slot to the
 *     next new one (pods that all differ keep the table at the most
 *     shapes alive at once);
 *   - the rollouts' supply: a choice's snapshot taken after node b1 (B)
 *     was added and a0 (A) cordoned scores a free pod on an A node with
 *     the pressure of the devices then (A 8, B 16), not without one.
 * Nothing is timed.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "engine_fixture.h"

static void cycle(mu_engine_t *e)
{
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_decisions_release(&d);
}

static double press_of(const mu_engine_t *e, const char *model)
{
	const mu_gpu_models_t *g = mu_engine_gpu_models(e);
	for (int32_t i = 0; i < g->n; i++)
		if (g->model[i] && strcmp(g->model[i], model) == 0)
			return g->pressed ? g->press[i] : 0;
	return -1;
}

static mu_res_t one_gpu(void)
{
	mu_res_t r = {{0}};
	r.v[MU_RES_CPU] = 2000;
	r.v[MU_RES_GPU] = 1;
	return r;
}

/* h started with its own mix and an engine scoring muster with it, with
 * nodes a0 (model A) and b0 (B) of 8 GPUs. */
static mu_engine_t *start(mu_t_t *t, mu_horizon_t *h)
{
	mu_horizon_config_t hc = {.own_mix = true};
	CHECK_EQ_INT(t, mu_horizon_init(h, &hc, NULL, 0), MU_OK);
	mu_engine_t *e = fx_engine(&mu_score_muster, &h->mix, 0);
	fx_node(e, "a0", 8, "A", false, NULL);
	fx_node(e, "b0", 8, "B", false, NULL);
	return e;
}

static void test_demand(mu_t_t *t)
{
	mu_horizon_t h;
	mu_engine_t *e = start(t, &h);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 0); /* nothing seen */
	const char *a = "A";
	mu_res_t r = one_gpu();
	int32_t at_a = -1, at_f = -1;
	CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &r, &a, 1, 6, &at_a), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &r, NULL, 0, 1, &at_f), MU_OK);
	CHECK(t, at_a >= 0 && at_f >= 0 && at_a != at_f);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	mu_engine_rescore(e);
	CHECK_EQ_INT(t, h.mix.pods, 7);
	CHECK_EQ_INT(t, h.mix.ntypes, 2);
	cycle(e);
	double want = 6000.0 / 8 * (16.0 / 7000.0);
	CHECK(t, press_of(e, "A") == want);
	CHECK(t, press_of(e, "B") == 0);
	/* the A pods end: no shape names a model, no pressure */
	CHECK_EQ_INT(t, mu_horizon_unseen(&h, at_a, 7), MU_EINVAL);
	CHECK_EQ_INT(t, mu_horizon_unseen(&h, 99, 1), MU_EINVAL);
	CHECK_EQ_INT(t, mu_horizon_unseen(&h, at_a, 6), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	mu_engine_rescore(e);
	CHECK_EQ_INT(t, h.mix.ntypes, 1);
	cycle(e);
	CHECK(t, press_of(e, "A") == 0);
	/* every pod gone: the empty mix, as without one */
	CHECK_EQ_INT(t, mu_horizon_unseen(&h, at_f, 1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	CHECK(t, h.mix.index == NULL);
	CHECK_EQ_INT(t, h.mix.pods, 0);
	/* within 1/16 of the pods: not built again; a new shape: built */
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, NULL, 0, 32), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, NULL, 0, 2), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 0);
	CHECK_EQ_INT(t, h.mix.pods, 32);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1); /* 35 - 32 > 32 / 16 */
	CHECK_EQ_INT(t, h.mix.pods, 35);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, &a, 1, 1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1); /* the A shape is back */
	CHECK_EQ_INT(t, h.mix.ntypes, 2);
	mu_engine_free(e);
	mu_horizon_release(&h);
}

/* The demand drifts at a steady count (the twenty-second round): pods of
 * one shape replaced by pods of another that stays in the mix move the
 * net count by nothing, yet each one counts towards the 1/16 window, so
 * the mix is built again once more than 1/16 of its pods came or went
 * (with the net change, as before, it never was, until a shape left). */
static void test_drift(mu_t_t *t)
{
	mu_horizon_t h;
	mu_horizon_config_t hc = {.own_mix = true};
	CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, NULL, 0), MU_OK);
	mu_res_t a = one_gpu(), b = one_gpu();
	b.v[MU_RES_GPU] = 2;
	int32_t at_a = -1, at_b = -1;
	CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &a, NULL, 0, 63, &at_a), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &b, NULL, 0, 1, &at_b), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	CHECK_EQ_INT(t, h.mix.pods, 64);
	/* two A pods end, two B pods come: 4 moves of 64, within 1/16 */
	CHECK_EQ_INT(t, mu_horizon_unseen(&h, at_a, 2), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &b, NULL, 0, 2), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 0);
	/* one more each way: 6 moves, past 64 / 16; the net count is 64 */
	CHECK_EQ_INT(t, mu_horizon_unseen(&h, at_a, 1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &b, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, h.seen_pods, 64);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	int64_t nb = 0;
	for (int32_t i = 0; i < h.mix.ntypes; i++)
		if (h.mix.types[i].gpus == 2)
			nb = h.mix.types[i].count;
	CHECK_EQ_INT(t, nb, 4);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 0); /* nothing since */
	mu_horizon_release(&h);
}

/* Pods that all differ come and go: a shape whose pods all left gives
 * its slot to the next new shape, so the table holds the most shapes
 * alive at once (here 4), not every shape seen (400); the mix is the
 * live shapes', and a slot reused is counted and taken out by its new
 * index. */
static void test_shapes_reused(mu_t_t *t)
{
	mu_horizon_t h;
	mu_horizon_config_t hc = {.own_mix = true};
	CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, NULL, 0), MU_OK);
	int32_t at[4];
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 4; i++) {
			mu_res_t r = one_gpu();
			r.v[MU_RES_CPU] = 1000 + 4 * round + i; /* a shape never seen */
			CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &r, NULL, 0, 2, &at[i]), MU_OK);
		}
		CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
		CHECK_EQ_INT(t, h.mix.ntypes, 4);
		CHECK_EQ_INT(t, h.mix.pods, 8);
		for (int i = 0; i < 4; i++)
			CHECK_EQ_INT(t, mu_horizon_unseen(&h, at[i], 2), MU_OK);
		CHECK_EQ_INT(t, mu_horizon_unseen(&h, at[0], 1), MU_EINVAL); /* emptied */
	}
	CHECK_EQ_INT(t, h.nseen, 4);
	CHECK_EQ_INT(t, h.seen_pods, 0);
	/* a shape seen again after it emptied is a new entry, counted once */
	mu_res_t r = one_gpu();
	int32_t a1 = -1, a2 = -1;
	CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &r, NULL, 0, 1, &a1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen_at(&h, &r, NULL, 0, 1, &a2), MU_OK);
	CHECK_EQ_INT(t, a1, a2);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&h), 1);
	CHECK_EQ_INT(t, h.mix.ntypes, 1);
	CHECK_EQ_INT(t, h.mix.pods, 2);
	mu_horizon_release(&h);
}

/* muster's score of a free one-GPU pod on an idle 8-GPU node of model,
 * outside an engine (the rollouts' way: the mix's own pressure). */
static double free_score(const mu_workload_mix_t *m, const char *model)
{
	mu_res_t alloc = {{0}}, fr;
	alloc.v[MU_RES_CPU] = 64000;
	alloc.v[MU_RES_MEM] = 256LL << 30;
	alloc.v[MU_RES_GPU] = 8;
	alloc.v[MU_RES_PODS] = 110;
	fr = alloc;
	fr.v[MU_RES_GPU_MILLI] = 8000;
	int16_t gpu[MU_MAX_GPUS] = {0};
	for (int g = 0; g < 8; g++)
		gpu[g] = 1000;
	mu_node_view_t v = {&alloc, &fr, 8, gpu, model, NULL};
	mu_score_ctx_t ctx = {m, 0, NULL, NULL};
	mu_res_t r = one_gpu();
	return mu_score_muster.score(&ctx, &v, &r);
}

static void test_rollout_supply(mu_t_t *t)
{
	mu_horizon_t h;
	mu_engine_t *e = start(t, &h);
	fx_node(e, "a1", 8, "A", false, NULL);
	const char *a = "A";
	mu_res_t r = one_gpu();
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, &a, 1, 6), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, NULL, 0, 1), MU_OK);
	/* after the start: b1 added, a0 cordoned (A 8, B 16) */
	fx_node(e, "b1", 8, "B", false, NULL);
	fx_node(e, "a0", 8, "A", true, NULL);
	mu_horizon_job_t *j = NULL;
	CHECK_EQ_INT(t, mu_horizon_prepare(&h, e, 0, 0, 0, &j), MU_OK);
	const mu_workload_mix_t *m = mu_horizon_job_mix(j);
	CHECK(t, m != NULL && m->pods == 7);
	/* A's pressure 6000/8 x 24/7000 = 2.57, above press_over (1.5): the
	 * rollouts' free pod on an A node scores as in the same mix told the
	 * devices now (A 8, B 16), not as without them, nor as with the
	 * devices at the start (A 16, B 8: 6000/16 x 24/7000 = 1.29, below) */
	mu_workload_mix_t now, none, start;
	mu_workload_mix_t *mk[3] = {&now, &none, &start};
	for (int i = 0; i < 3; i++) {
		mu_workload_mix_init(mk[i]);
		mu_workload_mix_add(mk[i], &r, &a, 1, 6);
		mu_workload_mix_add(mk[i], &r, NULL, 0, 1);
		mu_workload_mix_finish(mk[i]);
	}
	mu_workload_mix_supply(&now, "A", 8);
	mu_workload_mix_supply(&now, "B", 16);
	mu_workload_mix_supply(&start, "A", 16);
	mu_workload_mix_supply(&start, "B", 8);
	double s = free_score(m, "A");
	CHECK(t, s == free_score(&now, "A"));
	CHECK(t, s < free_score(&none, "A"));
	CHECK(t, s < free_score(&start, "A"));
	CHECK(t, free_score(&start, "A") == free_score(&none, "A"));
	for (int i = 0; i < 3; i++)
		mu_workload_mix_release(mk[i]);
	mu_horizon_cancel(&h);
	mu_horizon_job_free(j);
	mu_engine_free(e);
	mu_horizon_release(&h);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_demand);
	MU_RUN(&t, test_shapes_reused);
	MU_RUN(&t, test_drift);
	MU_RUN(&t, test_rollout_supply);
	return mu_t_done(&t);
}
