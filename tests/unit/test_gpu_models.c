/*
 * test_gpu_models.c - the devices per GPU model that every engine keeps
 * (src/engine/gpumodels.c), muster's pressure read from them, and the
 * share a GPU-memory request stands for (mu_engine_gpu_memory_req).
 *
 *   - the counts: nodes of two models, one without a model and one without
 *     GPUs; a cordon takes a node's devices out and an uncordon puts them
 *     back, a new model moves them, a resize changes them, a removal takes
 *     them out and a re-add puts them back; binds change nothing;
 *   - the pressure: under muster with a mix that ties pods to a model, the
 *     engine's pressure per model after a cycle is press_over's from its
 *     devices, before and after a node of the tied model is removed, while
 *     another is cordoned, and once it is uncordoned;
 *   - GPU memory: the share mu_engine_gpu_memory_req gives is the one the
 *     engine binds a pod of that request with (the same conversion);
 *   - (round 21) the memory label's values the engine keeps for it follow
 *     relabels, removals, re-adds and nodes losing their GPUs; a cordoned
 *     node still counts.
 * Nothing is timed.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "engine_fixture.h"

/* The engine's devices of model (NULL: nodes without one); 0 when it has
 * no entry. */
static int64_t devices(const mu_engine_t *e, const char *model)
{
	const mu_gpu_models_t *g = mu_engine_gpu_models(e);
	int64_t d = 0;
	for (int32_t i = 0; i < g->n; i++)
		if ((!model && !g->model[i]) ||
		    (model && g->model[i] && strcmp(model, g->model[i]) == 0))
			d += g->devices[i];
	return d;
}

static void cycle(mu_engine_t *e)
{
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_decisions_release(&d);
}

static void test_counts(mu_t_t *t)
{
	mu_engine_t *e = fx_engine(&mu_score_binpack, NULL, 0);
	CHECK_EQ_INT(t, fx_node(e, "a0", 8, "A100", false, NULL), MU_OK);
	CHECK_EQ_INT(t, fx_node(e, "a1", 8, "A100", false, NULL), MU_OK);
	CHECK_EQ_INT(t, fx_node(e, "t0", 4, "T4", false, NULL), MU_OK);
	CHECK_EQ_INT(t, fx_node(e, "x0", 2, NULL, false, NULL), MU_OK);
	CHECK_EQ_INT(t, fx_node(e, "c0", 0, NULL, false, NULL), MU_OK);
	CHECK_EQ_INT(t, devices(e, "A100"), 16);
	CHECK_EQ_INT(t, devices(e, "T4"), 4);
	CHECK_EQ_INT(t, devices(e, NULL), 2);
	fx_node(e, "a1", 8, "A100", true, NULL); /* cordoned */
	CHECK_EQ_INT(t, devices(e, "A100"), 8);
	fx_node(e, "a1", 8, "A100", false, NULL); /* uncordoned */
	CHECK_EQ_INT(t, devices(e, "A100"), 16);
	fx_node(e, "t0", 4, "A100", false, NULL); /* relabelled */
	CHECK_EQ_INT(t, devices(e, "A100"), 20);
	CHECK_EQ_INT(t, devices(e, "T4"), 0);
	fx_node(e, "a1", 2, "A100", false, NULL); /* resized */
	CHECK_EQ_INT(t, devices(e, "A100"), 14);
	CHECK_EQ_INT(t, mu_engine_node_remove(e, "a0", 0), MU_OK);
	CHECK_EQ_INT(t, devices(e, "A100"), 6);
	CHECK_EQ_INT(t, mu_engine_node_remove(e, "x0", 0), MU_OK);
	CHECK_EQ_INT(t, devices(e, NULL), 0);
	fx_node(e, "a0", 8, "A100", false, NULL); /* back */
	CHECK_EQ_INT(t, devices(e, "A100"), 14);
	mu_res_t r = {{0}};
	r.v[MU_RES_CPU] = 1000;
	r.v[MU_RES_GPU] = 2;
	fx_submit(e, "j", 3, &r, NULL, 0, 0, 0);
	cycle(e);
	mu_job_info_t ji;
	mu_engine_job_info(e, mu_engine_job_find(e, "j"), &ji);
	CHECK_EQ_INT(t, ji.bound, 3); /* bound, and the counts stay */
	CHECK_EQ_INT(t, devices(e, "A100"), 14);
	mu_engine_free(e);
}

/* A mix with 24 pods of 8 GPUs tied to A100 and 16 of any model. */
static void tied_mix(mu_workload_mix_t *m)
{
	const char *a = "A100";
	mu_res_t r = {{0}};
	r.v[MU_RES_CPU] = 1000;
	r.v[MU_RES_GPU] = 8;
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &r, &a, 1, 24);
	mu_workload_mix_add(m, &r, NULL, 0, 16);
	mu_workload_mix_finish(m);
}

/* The A100 pressure of tied_mix with `a` A100 and `h` H100 devices, as
 * press_over defines it: 24 x 8000 milli-GPU over a devices, per device
 * of the 40 x 8000 over a + h (the H100's is 0: no pod is tied to it). */
static double want_press(int64_t a, int64_t h)
{
	return 192000.0 / (double)a * ((double)(a + h) / 320000.0);
}

static double press_of(const mu_engine_t *e, const char *model)
{
	const mu_gpu_models_t *g = mu_engine_gpu_models(e);
	for (int32_t i = 0; i < g->n; i++)
		if (g->model[i] && strcmp(g->model[i], model) == 0)
			return g->press[i];
	return -1;
}

static void test_pressure(mu_t_t *t)
{
	mu_workload_mix_t m;
	tied_mix(&m);
	mu_engine_t *e = fx_engine(&mu_score_muster, &m, 0);
	char name[16];
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "a%d", i);
		fx_node(e, name, 8, "A100", false, NULL);
		snprintf(name, sizeof name, "h%d", i);
		fx_node(e, name, 8, "H100", false, NULL);
	}
	cycle(e); /* nothing to place: the pressure is brought up to date */
	CHECK(t, mu_engine_gpu_models(e)->pressed);
	CHECK(t, press_of(e, "A100") == want_press(32, 32)); /* 1.2 */
	CHECK(t, press_of(e, "H100") == 0);
	mu_engine_node_remove(e, "a3", 0);
	fx_node(e, "a2", 8, "A100", true, NULL);
	cycle(e);
	CHECK(t, press_of(e, "A100") == want_press(16, 32)); /* 1.8 */
	CHECK(t, press_of(e, "A100") > 1.79 && press_of(e, "A100") < 1.81);
	fx_node(e, "a2", 8, "A100", false, NULL);
	cycle(e);
	CHECK(t, press_of(e, "A100") == want_press(24, 32));
	mu_engine_free(e);
	/* a policy without a mix: no pressure */
	e = fx_engine(&mu_score_binpack, NULL, 0);
	fx_node(e, "a0", 8, "A100", false, NULL);
	cycle(e);
	CHECK(t, !mu_engine_gpu_models(e)->pressed);
	mu_engine_free(e);
	mu_workload_mix_release(&m);
}

static void test_gpu_memory(mu_t_t *t)
{
	mu_engine_t *e = fx_engine(&mu_score_binpack, NULL, 0);
	mu_label_t l40 = {"nvidia.com/gpu.memory", "40960"};
	mu_label_t l80 = {"nvidia.com/gpu.memory", "81920"};
	fx_node(e, "big", 8, "H100", false, &l80);
	fx_node(e, "small", 8, "A100", false, &l40);
	mu_res_t r = {{0}};
	r.v[MU_RES_CPU] = 1000;
	CHECK_EQ_INT(t, mu_engine_gpu_memory_req(e, 10000, &r), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU_MILLI], 245); /* of the smallest: 40960 */
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 0);
	mu_res_t w = {{0}};
	CHECK_EQ_INT(t, mu_engine_gpu_memory_req(e, 81920, &w), MU_OK);
	CHECK_EQ_INT(t, w.v[MU_RES_GPU], 1); /* all of big's */
	CHECK_EQ_INT(t, mu_engine_gpu_memory_req(e, 90000, &w), MU_EINVAL);
	mu_res_t n = {{0}};
	CHECK_EQ_INT(t, mu_engine_gpu_memory_req(e, 90000, &n), MU_ENOENT);
	CHECK_EQ_INT(t, n.v[MU_RES_GPU] + n.v[MU_RES_GPU_MILLI], 0);
	/* the engine binds the same share */
	mu_res_t c = {{0}};
	c.v[MU_RES_CPU] = 1000;
	fx_submit(e, "m", 1, &c, NULL, 0, 10000, 0);
	cycle(e);
	mu_node_info_t ni;
	mu_engine_node_info(e, mu_engine_node_find(e, "small"), &ni);
	CHECK_EQ_INT(t, 8000 - ni.free.v[MU_RES_GPU_MILLI], r.v[MU_RES_GPU_MILLI]);
	mu_engine_free(e);
}

/* What mib MiB resolves to in e: the share's milli-GPU, 1000 for a whole
 * GPU, -1 when no node holds it. */
static int64_t mem_share(const mu_engine_t *e, int64_t mib)
{
	mu_res_t r = {{0}};
	if (mu_engine_gpu_memory_req(e, mib, &r) != MU_OK)
		return -1;
	return r.v[MU_RES_GPU] ? 1000 * r.v[MU_RES_GPU] : r.v[MU_RES_GPU_MILLI];
}

/* The twenty-first round: the engine keeps the memory label's values at
 * node changes (gpumodels.c) instead of walking the nodes per request;
 * the answers follow every change: a relabel, a removal and a re-add, a
 * node losing its GPUs; a cordoned node still counts (as the walk had
 * it: the pod set is pinned to the label, and a cordon may be lifted). */
static void test_gpu_memory_kept(mu_t_t *t)
{
	mu_engine_t *e = fx_engine(&mu_score_binpack, NULL, 0);
	mu_label_t l40 = {"nvidia.com/gpu.memory", "40960"};
	mu_label_t l80 = {"nvidia.com/gpu.memory", "81920"};
	mu_label_t l24 = {"nvidia.com/gpu.memory", "24576"};
	fx_node(e, "big", 8, "H100", false, &l80);
	fx_node(e, "small", 8, "A100", false, &l40);
	fx_node(e, "cpu", 0, NULL, false, &l24); /* no GPUs: not counted */
	CHECK_EQ_INT(t, mem_share(e, 20480), 500);
	fx_node(e, "small", 8, "A100", true, &l40); /* cordoned: still holds */
	CHECK_EQ_INT(t, mem_share(e, 20480), 500);
	fx_node(e, "small", 8, "L4", false, &l24); /* relabelled */
	CHECK_EQ_INT(t, mem_share(e, 20480), 834);  /* of 24576 */
	CHECK_EQ_INT(t, mem_share(e, 30000), 367);  /* of 81920 */
	mu_engine_node_remove(e, "small", 0);
	CHECK_EQ_INT(t, mem_share(e, 20480), 250);  /* of 81920 */
	fx_node(e, "small", 8, "A100", false, &l40); /* back */
	CHECK_EQ_INT(t, mem_share(e, 20480), 500);
	fx_node(e, "small", 0, "A100", false, &l40); /* its GPUs gone */
	CHECK_EQ_INT(t, mem_share(e, 20480), 250);
	mu_engine_node_remove(e, "big", 0);
	CHECK_EQ_INT(t, mem_share(e, 20480), -1);
	fx_node(e, "big", 8, "H100", false, NULL); /* back without a label */
	CHECK_EQ_INT(t, mem_share(e, 20480), -1);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_counts);
	MU_RUN(&t, test_pressure);
	MU_RUN(&t, test_gpu_memory);
	MU_RUN(&t, test_gpu_memory_kept);
	return mu_t_done(&t);
}
