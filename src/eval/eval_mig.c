/*
 * eval_mig.c - the MIG evaluation (eval_mig.h): static against dynamic
 * layouts over snapshots of pending demand drawn from a seed, and over
 * steps of a pool where pods run and hold their devices.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muster/error.h"
#include "muster/eval_mig.h"
#include "muster/mig.h"
#include "muster/util.h"

static double unit(uint64_t *s)
{
	return (double)(mu__splitmix64(s) >> 11) * 0x1p-53;
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

/* --- With running pods (mu_mig_eval_running) ----------------------------- */

#define RUN_MEAN 20      /* mean run time, steps */
#define RUN_PHASE 100    /* steps per MIG share */
#define RUN_WARM 200     /* steps not counted */
#define RUN_PATIENCE 100 /* steps a pod waits before it leaves */
#define RUN_QUEUE 16     /* waiting pods per GPU at most */

/* A pod: the profile it asks for (-1: a whole GPU), where it runs (gpu
 * -1 while it waits) and on which instance (by its start). */
typedef struct run_pod {
	int8_t prof;
	int8_t start;
	int32_t gpu;
	int32_t arrived;  /* the step it came */
} run_pod_t;

/* One layout's run: the pool, its busy marks, the pods. */
typedef struct run_pool {
	mu_mig_gpu_t *g;
	uint8_t *held;      /* bit i: instance i held; MIG off: 1 = busy */
	int32_t *blocked;   /* the step until which the GPU takes no pod */
	run_pod_t *run;     /* running */
	int nrun, caprun;
	run_pod_t *wait;    /* waiting, in arrival order */
	int nwait;
	double alloc, started;
} run_pool_t;

/* Poisson draw of mean lambda (Knuth's, lambda is small here). */
static int poisson(uint64_t *rng, double lambda)
{
	double limit = exp(-lambda), t = unit(rng);
	int k = 0;
	while (t > limit && k < 10000) {
		t *= unit(rng);
		k++;
	}
	return k;
}

/* Frees the held mark of the device pod p runs on. */
static void run_release(run_pool_t *r, const run_pod_t *p)
{
	mu_mig_gpu_t *g = &r->g[p->gpu];
	if (!g->enabled) {
		r->held[p->gpu] = 0;
		return;
	}
	for (int i = 0; i < g->n; i++)
		if (g->prof[i] == p->prof && g->start[i] == p->start)
			r->held[p->gpu] &= (uint8_t)~(1u << i);
}

/* Starts waiting pods on free devices, in order.  O(wait x ngpu x 8). */
static void run_place(const mu_mig_model_t *m, run_pool_t *r, int ngpu, int now)
{
	int keep = 0;
	for (int w = 0; w < r->nwait; w++) {
		run_pod_t p = r->wait[w];
		for (int g = 0; g < ngpu && p.gpu < 0; g++) {
			mu_mig_gpu_t *x = &r->g[g];
			if (r->blocked[g] > now)
				continue;
			if (p.prof < 0) {
				if (!x->enabled && !r->held[g]) {
					r->held[g] = 1;
					p.gpu = g;
				}
				continue;
			}
			for (int i = 0; x->enabled && i < x->n && p.gpu < 0; i++)
				if (x->prof[i] == p.prof && !(r->held[g] >> i & 1)) {
					r->held[g] |= (uint8_t)(1u << i);
					p.gpu = g;
					p.start = x->start[i];
				}
		}
		if (p.gpu < 0) {
			if (now - p.arrived < RUN_PATIENCE)
				r->wait[keep++] = p;
		} else {
			r->run[r->nrun++] = p;
			r->started++;
		}
	}
	r->nwait = keep;
	(void)m;
}

/* Re-plans r's layout for its queue and re-marks what the running pods
 * hold on the new layouts.  Returns the GPUs changed or an error. */
static int run_replan(const mu_mig_model_t *m, run_pool_t *r, int ngpu, int now,
		      mu_mig_gpu_t *tmp)
{
	int32_t demand[MU_MIG_MAX_PROFILES] = {0};
	int whole = 0;
	for (int w = 0; w < r->nwait; w++) {
		if (r->wait[w].prof < 0)
			whole++;
		else
			demand[r->wait[w].prof]++;
	}
	int n = mu_mig_replan(m, ngpu, r->g, r->held, whole, demand, tmp, NULL, NULL);
	if (n <= 0)
		return n;
	for (int g = 0; g < ngpu; g++) {
		if (!mu_mig_same(&tmp[g], &r->g[g]))
			r->blocked[g] = now + 2; /* none in the next step */
		r->g[g] = tmp[g];
		r->held[g] = 0;
	}
	for (int i = 0; i < r->nrun; i++) {
		const run_pod_t *p = &r->run[i];
		mu_mig_gpu_t *g = &r->g[p->gpu];
		if (!g->enabled)
			r->held[p->gpu] = 1;
		for (int k = 0; g->enabled && k < g->n; k++)
			if (g->prof[k] == p->prof && g->start[k] == p->start)
				r->held[p->gpu] |= (uint8_t)(1u << k);
	}
	return n;
}

/* The compute held by r's running pods. */
static double run_held(const mu_mig_model_t *m, const run_pool_t *r)
{
	double c = 0;
	for (int i = 0; i < r->nrun; i++)
		c += r->run[i].prof < 0 ? MU_MIG_COMPUTE : m->profiles[r->run[i].prof].compute;
	return c;
}

static void run_free(run_pool_t *r)
{
	free(r->g);
	free(r->held);
	free(r->blocked);
	free(r->run);
	free(r->wait);
}

static int run_init(run_pool_t *r, int ngpu)
{
	memset(r, 0, sizeof *r);
	r->caprun = ngpu * MU_MIG_MAX_INST;
	r->g = calloc((size_t)ngpu, sizeof *r->g);
	r->held = calloc((size_t)ngpu, 1);
	r->blocked = calloc((size_t)ngpu, sizeof *r->blocked);
	r->run = calloc((size_t)r->caprun, sizeof *r->run);
	r->wait = calloc((size_t)ngpu * RUN_QUEUE, sizeof *r->wait);
	return r->g && r->held && r->blocked && r->run && r->wait ? MU_OK : MU_ENOMEM;
}

int mu_mig_eval_running(int ngpu, int steps, double load, uint64_t seed,
			mu_mig_run_result_t *out)
{
	if (ngpu < 1 || ngpu > 4096 || steps <= RUN_WARM || steps > 1000000 ||
	    !(load > 0 && load <= 10))
		return MU_EINVAL;
	const mu_mig_model_t *m = mu_mig_model("A100-80GB");
	static const char *const names[5] = {"1g.10gb", "2g.20gb", "3g.40gb",
					     "4g.40gb", "7g.80gb"};
	static const int weight[5] = {40, 25, 25, 5, 5};
	run_pool_t pool[2]; /* 0 static, 1 dynamic */
	mu_mig_gpu_t *tmp = calloc((size_t)ngpu, sizeof *tmp);
	int rc = tmp ? MU_OK : MU_ENOMEM;
	for (int k = 0; k < 2; k++)
		if (run_init(&pool[k], ngpu) && !rc)
			rc = MU_ENOMEM;
	const char *const bal[4] = {"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"};
	const int bstart[4] = {0, 1, 2, 4};
	for (int k = 0; !rc && k < 2; k++)
		for (int i = ngpu / 2; i < ngpu; i++) {
			pool[k].g[i] = (mu_mig_gpu_t){.enabled = true, .n = 4};
			for (int j = 0; j < 4; j++) {
				pool[k].g[i].prof[j] = (int8_t)mu_mig_profile_index(m, bal[j]);
				pool[k].g[i].start[j] = (int8_t)bstart[j];
			}
		}
	memset(out, 0, sizeof *out);
	uint64_t rng = seed;
	double share = 0, changes = 0;
	for (int t = 0; !rc && t < steps; t++) {
		if (t % RUN_PHASE == 0)
			share = unit(&rng);
		/* ends: each running pod ends with chance 1 / RUN_MEAN; the
		 * pools run different pods, so each draws its own */
		for (int k = 0; k < 2; k++) {
			run_pool_t *r = &pool[k];
			int keep = 0;
			for (int i = 0; i < r->nrun; i++) {
				if (unit(&rng) < 1.0 / RUN_MEAN)
					run_release(r, &r->run[i]);
				else
					r->run[keep++] = r->run[i];
			}
			r->nrun = keep;
		}
		/* arrivals, the same pods for both pools */
		double per_pod = share * 2.2 + (1 - share) * MU_MIG_COMPUTE;
		int n = poisson(&rng, load * MU_MIG_COMPUTE * ngpu / (RUN_MEAN * per_pod));
		for (int a = 0; a < n; a++) {
			run_pod_t p = {.prof = -1, .gpu = -1, .arrived = t};
			if (unit(&rng) < share) {
				int x = (int)(unit(&rng) * 100), j = 0;
				while (j < 4 && x >= weight[j])
					x -= weight[j++];
				p.prof = (int8_t)mu_mig_profile_index(m, names[j]);
			}
			for (int k = 0; k < 2; k++)
				if (pool[k].nwait < ngpu * RUN_QUEUE)
					pool[k].wait[pool[k].nwait++] = p;
		}
		for (int k = 0; k < 2 && !rc; k++) {
			run_place(m, &pool[k], ngpu, t);
			if (k == 1) {
				int c = run_replan(m, &pool[k], ngpu, t, tmp);
				if (c < 0)
					rc = c;
				else if (t >= RUN_WARM)
					changes += c;
			}
			if (t >= RUN_WARM)
				pool[k].alloc += run_held(m, &pool[k]) / (MU_MIG_COMPUTE * (double)ngpu);
		}
	}
	int counted = steps - RUN_WARM;
	if (!rc) {
		out->alloc_static = pool[0].alloc / counted;
		out->alloc_dynamic = pool[1].alloc / counted;
		out->started_static = pool[0].started / steps;
		out->started_dynamic = pool[1].started / steps;
		out->changes = changes / counted;
		out->steps = steps;
	}
	for (int k = 0; k < 2; k++)
		run_free(&pool[k]);
	free(tmp);
	return rc;
}
