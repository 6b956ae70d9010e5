/*
 * test_mig.c - unit tests of the MIG layouts (mig.h): model names, the
 * placements NVIDIA documents (valid and invalid layouts), and the planner
 * for mixed demands: every layout it writes is valid, whole GPUs come
 * first, and instances go into as few GPUs as possible; the layout text
 * (mu_mig_parse, mu_mig_format); re-plans with running pods, which never
 * move a held device and change no GPU when the free devices serve.
 */
#include <string.h>

#include "check.h"
#include "muster/error.h"
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

/* Parses s for model m; a failed parse fails the test. */
static mu_mig_gpu_t lay(mu_t_t *t, const mu_mig_model_t *m, const char *s)
{
	mu_mig_gpu_t g;
	char why[128] = "";
	int rc = mu_mig_parse(m, s, &g, why, sizeof why);
	if (rc)
		fprintf(stderr, "parse '%s': %s\n", s, why);
	CHECK_EQ_INT(t, rc, 0);
	return g;
}

/* g formatted. */
static const char *fmt(const mu_mig_model_t *m, const mu_mig_gpu_t *g, char *buf)
{
	mu_mig_format(m, g, buf, 96);
	return buf;
}

static void test_parse(mu_t_t *t)
{
	const mu_mig_model_t *m = mu_mig_model("A100-80GB");
	char buf[96], why[128];
	mu_mig_gpu_t g = lay(t, m, "3g.40gb@4+2g.20gb@0+2g.20gb@2");
	CHECK(t, g.enabled && g.n == 3 && mu_mig_valid(m, &g));
	CHECK_STR(t, fmt(m, &g, buf), "2g.20gb@0+2g.20gb@2+3g.40gb@4");
	g = lay(t, m, "whole");
	CHECK(t, !g.enabled);
	CHECK_STR(t, fmt(m, &g, buf), "whole");
	g = lay(t, m, "empty");
	CHECK_STR(t, fmt(m, &g, buf), "empty");
	g = lay(t, m, "3g.40gb+3g.40gb"); /* no start: the highest free one */
	CHECK_STR(t, fmt(m, &g, buf), "3g.40gb@0+3g.40gb@4");
	g = lay(t, NULL, "1g.5gb@3"); /* any model: the A100-40GB has it */
	CHECK(t, g.n == 1);
	CHECK_EQ_INT(t, mu_mig_parse(m, "1g.5gb@3", &g, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "unknown MIG profile '1g.5gb'") != NULL);
	CHECK_EQ_INT(t, mu_mig_parse(m, "3g.40gb@2", &g, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "may not start at slice 2") != NULL);
	CHECK_EQ_INT(t, mu_mig_parse(m, "4g.40gb@0+3g.40gb@4+1g.10gb@6", &g, why,
				     sizeof why), MU_EINVAL);
	CHECK_EQ_INT(t, mu_mig_parse(m, "3g.40gb@9", &g, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "slice 0 to 7") != NULL);
	CHECK_EQ_INT(t, mu_mig_parse(m, "3g.40gb@4+", &g, why, sizeof why), MU_EINVAL);
	CHECK_EQ_INT(t, mu_mig_parse(m, "", &g, why, sizeof why), MU_EINVAL);
	CHECK_EQ_INT(t, mu_mig_parse(m, "7g.80gb+1g.10gb", &g, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "does not fit") != NULL);
	g = lay(t, m, "2g.20gb@0+2g.20gb@2+3g.40gb@4");
	char small[8];
	CHECK_EQ_INT(t, mu_mig_format(m, &g, small, sizeof small), 29);
	CHECK(t, strlen(small) < sizeof small);
}

static void test_replan(mu_t_t *t)
{
	const mu_mig_model_t *m = mu_mig_model("A100-80GB");
	char buf[96];
	int i3 = mu_mig_profile_index(m, "3g.40gb"), i1 = mu_mig_profile_index(m, "1g.10gb");
	int i2 = mu_mig_profile_index(m, "2g.20gb"), i7 = mu_mig_profile_index(m, "7g.80gb");
	mu_mig_gpu_t cur[3], out[3];
	int32_t served[MU_MIG_MAX_PROFILES];
	int ws = -1;
	/* GPU 0 whole and busy, GPU 1 3g@4 busy + 2g@0 free, GPU 2 whole idle */
	cur[0] = lay(t, m, "whole");
	cur[1] = lay(t, m, "3g.40gb@4+2g.20gb@0");
	cur[2] = lay(t, m, "whole");
	uint8_t held[3] = {1, 1, 0};
	/* 1. what is free serves it: nothing changes */
	int32_t d1[MU_MIG_MAX_PROFILES] = {0};
	d1[i2] = 1;
	CHECK_EQ_INT(t, mu_mig_replan(m, 3, cur, held, 1, d1, out, served, &ws), 0);
	CHECK(t, mu_mig_same(&out[1], &cur[1]) && !out[2].enabled);
	CHECK_EQ_INT(t, served[i2], 1);
	CHECK_EQ_INT(t, ws, 1);
	/* no demand at all: nothing changes either */
	int32_t d0[MU_MIG_MAX_PROFILES] = {0};
	CHECK_EQ_INT(t, mu_mig_replan(m, 3, cur, held, 0, d0, out, NULL, NULL), 0);
	/* 2. four 1g: the free 2g on GPU 1 goes, its slices 0-3 take four 1g;
	 * the held 3g stays at 4, the busy whole GPU stays whole, the idle
	 * one stays whole for nothing asks for it */
	int32_t d2[MU_MIG_MAX_PROFILES] = {0};
	d2[i1] = 4;
	CHECK_EQ_INT(t, mu_mig_replan(m, 3, cur, held, 0, d2, out, served, &ws), 1);
	CHECK_STR(t, fmt(m, &out[0], buf), "whole");
	CHECK_STR(t, fmt(m, &out[1], buf), "1g.10gb@0+1g.10gb@1+1g.10gb@2+1g.10gb@3+3g.40gb@4");
	CHECK_STR(t, fmt(m, &out[2], buf), "whole");
	CHECK_EQ_INT(t, served[i1], 4);
	/* held instances never move, whatever the demand */
	int32_t d3[MU_MIG_MAX_PROFILES] = {0};
	d3[i7] = 3;
	d3[i3] = 2;
	int n = mu_mig_replan(m, 3, cur, held, 2, d3, out, served, &ws);
	CHECK(t, n >= 1);
	CHECK(t, !out[0].enabled);
	bool kept = false;
	for (int k = 0; k < out[1].n; k++)
		kept = kept || (out[1].prof[k] == i3 && out[1].start[k] == 4);
	CHECK(t, kept && out[1].enabled);
	for (int g = 0; g < 3; g++)
		CHECK(t, mu_mig_valid(m, &out[g]));
	/* GPU 1's free slices 0-3 cannot hold a 3g at 0 beside... they can:
	 * 3g.40gb@0 takes 0-3, so one pending 3g is served there */
	CHECK(t, served[i3] >= 1);
	CHECK(t, served[i7] + ws <= 1); /* one idle GPU: a 7g or a whole pod */
	/* an idle GPU already in the wanted layout keeps it, another changes */
	mu_mig_gpu_t c2[2] = {lay(t, m, "whole"), lay(t, m, "7g.80gb@0")};
	uint8_t h2[2] = {0, 0};
	int32_t d4[MU_MIG_MAX_PROFILES] = {0};
	d4[i7] = 1;
	CHECK_EQ_INT(t, mu_mig_replan(m, 2, c2, h2, 1, d4, out, served, &ws), 0);
	d4[i7] = 2;
	CHECK_EQ_INT(t, mu_mig_replan(m, 2, c2, h2, 0, d4, out, served, &ws), 1);
	CHECK_STR(t, fmt(m, &out[1], buf), "7g.80gb@0");
	CHECK_STR(t, fmt(m, &out[0], buf), "7g.80gb@0");
	/* bad input */
	uint8_t hb[1] = {0x4};
	mu_mig_gpu_t cb[1] = {lay(t, m, "3g.40gb@4")}; /* instance 2 does not exist */
	CHECK_EQ_INT(t, mu_mig_replan(m, 1, cb, hb, 0, d0, out, NULL, NULL), MU_EINVAL);
	cb[0].start[0] = 3;
	hb[0] = 0;
	CHECK_EQ_INT(t, mu_mig_replan(m, 1, cb, hb, 0, d0, out, NULL, NULL), MU_EINVAL);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_models);
	MU_RUN(&t, test_valid);
	MU_RUN(&t, test_plan);
	MU_RUN(&t, test_parse);
	MU_RUN(&t, test_replan);
	return mu_t_done(&t);
}
