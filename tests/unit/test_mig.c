/*
 * test_mig.c - unit tests of the MIG layouts (mig.h): model names, the
 * placements NVIDIA documents (valid and invalid layouts), and the planner
 * for mixed demands: every layout it writes is valid, whole GPUs come
 * first, and instances go into as few GPUs as possible.
 */
#include <string.h>

#include "check.h"
#include "muster/mig.h"

static void test_models(mu_t_t *t)
{
	CHECK(t, mu_mig_model("A100-SXM4-40GB") == mu_mig_model("A100-40GB"));
	CHECK(t, mu_mig_model("NVIDIA-A100-SXM4-80GB") == mu_mig_model("a100-80gb"));
	CHECK(t, mu_mig_model("NVIDIA-H100-80GB-HBM3") != NULL);
	CHECK(t, mu_mig_model("Tesla-T4") == NULL);
	CHECK(t, mu_mig_model("V100M32") == NULL);
	CHECK(t, mu_mig_model(NULL) == NULL);
	const mu_mig_model_t *m = mu_mig_model("A100-80GB");
	CHECK_EQ_INT(t, mu_mig_profile_index(m, "mig-3g.40gb"), 3);
	CHECK_EQ_INT(t, mu_mig_profile_index(m, "1g.10gb"), 0);
	CHECK_EQ_INT(t, mu_mig_profile_index(m, "1g.5gb"), -1);
	CHECK_EQ_INT(t, mu_mig_profile_index(m, "1g.10gb+me"), -1);
}

/* A GPU of model m with the given (profile, start) pairs. */
static mu_mig_gpu_t gpu(const mu_mig_model_t *m, const char *const *names,
			const int *starts, int n)
{
	mu_mig_gpu_t g = {.enabled = true, .n = n};
	for (int i = 0; i < n; i++) {
		g.prof[i] = (int8_t)mu_mig_profile_index(m, names[i]);
		g.start[i] = (int8_t)starts[i];
	}
	return g;
}

/* Whether that GPU's layout is valid. */
static bool ok(const mu_mig_model_t *m, const char *const *names,
	       const int *starts, int n)
{
	mu_mig_gpu_t g = gpu(m, names, starts, n);
	return mu_mig_valid(m, &g);
}

static void test_valid(mu_t_t *t)
{
	const mu_mig_model_t *m = mu_mig_model("A100-40GB");
	const char *const a[] = {"4g.20gb", "3g.20gb"};
	const char *const b[] = {"3g.20gb", "3g.20gb"};
	const char *const c[] = {"2g.10gb", "2g.10gb", "3g.20gb"};
	const char *const d[] = {"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb",
				 "1g.5gb", "1g.5gb", "1g.5gb"};
	const char *const e[] = {"2g.10gb", "2g.10gb", "2g.10gb", "1g.5gb"};
	CHECK(t, ok(m, a, (int[]){0, 4}, 2));
	CHECK(t, ok(m, b, (int[]){0, 4}, 2));
	CHECK(t, ok(m, c, (int[]){0, 2, 4}, 3));
	CHECK(t, ok(m, d, (int[]){0, 1, 2, 3, 4, 5, 6}, 7));
	CHECK(t, ok(m, e, (int[]){0, 2, 4, 6}, 4));
	/* 3g may start only at 0 or 4; 4g only at 0; overlap; 8 compute */
	CHECK(t, !ok(m, b, (int[]){0, 2}, 2));
	CHECK(t, !ok(m, a, (int[]){4, 0}, 2));
	CHECK(t, !ok(m, c, (int[]){0, 0, 4}, 3));
	const char *const f[] = {"4g.20gb", "2g.10gb", "2g.10gb"};
	CHECK(t, !ok(m, f, (int[]){0, 4, 6}, 3));
	const char *const g8[] = {"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb",
				  "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"};
	CHECK(t, !ok(m, g8, (int[]){0, 1, 2, 3, 4, 5, 6, 7}, 8));
	mu_mig_gpu_t off = {.enabled = false, .n = 1};
	CHECK(t, !mu_mig_valid(m, &off));
}

static void test_plan(mu_t_t *t)
{
	const mu_mig_model_t *m = mu_mig_model("A100-80GB");
	mu_mig_gpu_t out[4];
	int32_t demand[6] = {0}, served[6], count[6] = {0};
	int ws;
	/* 1 whole GPU, 3 x 3g.40gb, 2 x 2g.20gb, 3 x 1g.10gb: the 3g pair on
	 * one GPU, then 3g@4 + 2g@2 + 2g@0 (7 compute) on the next, the 1g
	 * instances on a fourth. */
	demand[0] = 3;
	demand[2] = 2;
	demand[3] = 3;
	mu_mig_plan(m, 4, 1, demand, out, served, &ws);
	CHECK_EQ_INT(t, ws, 1);
	CHECK(t, !out[0].enabled);
	for (int g = 0; g < 4; g++) {
		CHECK(t, out[g].enabled ? mu_mig_valid(m, &out[g]) : out[g].n == 0);
		mu_mig_count(m, &out[g], count);
	}
	CHECK_EQ_INT(t, served[0], 3);
	CHECK_EQ_INT(t, served[2], 2);
	CHECK_EQ_INT(t, served[3], 3);
	CHECK_EQ_INT(t, count[3], 3);
	CHECK_EQ_INT(t, out[1].n, 2);
	CHECK_EQ_INT(t, out[2].n, 3);
	CHECK_EQ_INT(t, out[3].n, 3);
	int32_t second[6] = {0};
	mu_mig_count(m, &out[2], second);
	CHECK_EQ_INT(t, second[2], 2); /* both 2g.20gb beside 3g.40gb@4 */
	CHECK_EQ_INT(t, second[3], 1);
	/* more than fits: 5 x 7g on 2 GPUs, one kept whole */
	memset(demand, 0, sizeof demand);
	demand[5] = 5;
	mu_mig_plan(m, 2, 1, demand, out, served, &ws);
	CHECK_EQ_INT(t, served[5], 1);
	CHECK_EQ_INT(t, ws, 1);
	/* whole demand beyond the GPUs */
	mu_mig_plan(m, 2, 9, demand, out, served, &ws);
	CHECK_EQ_INT(t, ws, 2);
	CHECK_EQ_INT(t, served[5], 0);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_models);
	MU_RUN(&t, test_valid);
	MU_RUN(&t, test_plan);
	return mu_t_done(&t);
}
