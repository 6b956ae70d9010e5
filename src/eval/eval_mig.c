/*
 * eval_mig.c - the MIG evaluation (eval_mig.h): static against dynamic
 * layouts over snapshots of pending demand drawn from a seed.
 */
#include <stdlib.h>
#include <string.h>

#include "muster/error.h"
#include "muster/eval_mig.h"
#include "muster/mig.h"

/* splitmix64: the snapshot draws. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
	return (double)(next(s) >> 11) * 0x1p-53;
}

/* One snapshot: *whole pods and demand[] instances (A100-80GB profiles). */
static void draw(const mu_mig_model_t *m, int ngpu, double load, uint64_t *rng,
		 int *whole, int32_t *demand)
{
	static const char *const names[5] = {"1g.10gb", "2g.20gb", "3g.40gb",
					     "4g.40gb", "7g.80gb"};
	static const int weight[5] = {40, 25, 25, 5, 5};
	double total = load * MU_MIG_COMPUTE * ngpu, f = unit(rng);
	double mig = 0;
	memset(demand, 0, (size_t)m->nprofiles * sizeof *demand);
	while (mig < f * total) {
		int r = (int)(unit(rng) * 100), k = 0;
		while (k < 4 && r >= weight[k])
			r -= weight[k++];
		int p = mu_mig_profile_index(m, names[k]);
		demand[p]++;
		mig += m->profiles[p].compute;
	}
	*whole = (int)((total - mig) / MU_MIG_COMPUTE + 0.5);
	if (*whole < 0)
		*whole = 0;
}

/* Serves the snapshot from layout g (ngpu GPUs): the compute served, the
 * whole pods and the instances served into *w and *inst. */
static double serve(const mu_mig_model_t *m, const mu_mig_gpu_t *g, int ngpu,
		    int whole, const int32_t *demand, int *w, int32_t *inst)
{
	int32_t have[MU_MIG_MAX_PROFILES] = {0};
	int free_whole = 0;
	for (int i = 0; i < ngpu; i++) {
		if (g[i].enabled)
			mu_mig_count(m, &g[i], have);
		else
			free_whole++;
	}
	*w = whole < free_whole ? whole : free_whole;
	double c = (double)*w * MU_MIG_COMPUTE;
	*inst = 0;
	for (int p = 0; p < m->nprofiles; p++) {
		int32_t got = demand[p] < have[p] ? demand[p] : have[p];
		*inst += got;
		c += (double)got * m->profiles[p].compute;
	}
	return c;
}

int mu_mig_eval(int ngpu, int rounds, double load, uint64_t seed,
		mu_mig_eval_result_t *out)
{
	if (ngpu < 1 || ngpu > 100000 || rounds < 1 || rounds > 1000000 ||
	    !(load > 0 && load <= 10))
		return MU_EINVAL;
	const mu_mig_model_t *m = mu_mig_model("A100-80GB");
	mu_mig_gpu_t *st = calloc((size_t)ngpu, sizeof *st);
	mu_mig_gpu_t *dy = calloc((size_t)ngpu, sizeof *dy);
	if (!st || !dy) {
		free(st);
		free(dy);
		return MU_ENOMEM;
	}
	const char *const bal[4] = {"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"};
	const int start[4] = {0, 1, 2, 4};
	for (int i = ngpu / 2; i < ngpu; i++) {
		st[i] = (mu_mig_gpu_t){.enabled = true, .n = 4};
		for (int k = 0; k < 4; k++) {
			st[i].prof[k] = (int8_t)mu_mig_profile_index(m, bal[k]);
			st[i].start[k] = (int8_t)start[k];
		}
	}
	memset(out, 0, sizeof *out);
	uint64_t rng = seed;
	for (int r = 0; r < rounds; r++) {
		int32_t demand[MU_MIG_MAX_PROFILES];
		int whole, ws, wd;
		int32_t is, id, ninst = 0;
		draw(m, ngpu, load, &rng, &whole, demand);
		mu_mig_plan(m, ngpu, whole, demand, dy, NULL, NULL);
		double want = (double)whole * MU_MIG_COMPUTE;
		for (int p = 0; p < m->nprofiles; p++) {
			want += (double)demand[p] * m->profiles[p].compute;
			ninst += demand[p];
		}
		double cap = (double)ngpu * MU_MIG_COMPUTE;
		double can = want < cap ? want : cap;
		out->served_static += serve(m, st, ngpu, whole, demand, &ws, &is) / can;
		out->served_dynamic += serve(m, dy, ngpu, whole, demand, &wd, &id) / can;
		out->whole_static += whole ? (double)ws / whole : 1;
		out->whole_dynamic += whole ? (double)wd / whole : 1;
		out->inst_static += ninst ? (double)is / ninst : 1;
		out->inst_dynamic += ninst ? (double)id / ninst : 1;
	}
	out->rounds = rounds;
	double *v[6] = {&out->served_static, &out->served_dynamic, &out->whole_static,
			&out->whole_dynamic, &out->inst_static, &out->inst_dynamic};
	for (int k = 0; k < 6; k++)
		*v[k] /= rounds;
	free(st);
	free(dy);
	return MU_OK;
}
