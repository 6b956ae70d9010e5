/*
 * test_nodeindex.c - the score heaps (src/engine/nodeindex.c) and the kept
 * list of expected ends (src/engine/ends.c) must not change any decision.
 *
 * Two engines get the same random stream of events - heterogeneous nodes,
 * jobs of many shapes (whole GPUs, GPU shares, CPU only, gangs), finishes
 * and node changes - one with cfg.scan_all (score every node for every
 * pod) and one without (heaps).  Every cycle's decisions must be equal, in
 * order, field by field.  Run for the deterministic binpack, spread, fgd,
 * muster and the FGD paper's bestfit, dotprod, packing and clustering
 * (indexed) and for random, which reads ctx->random and so must never be
 * indexed: the same seed must draw the same bits either way.  With unique requests (every pod its own CPU and memory)
 * binpack and spread answer from the fit trees (src/engine/fittree.c)
 * instead of the heaps, and must still choose as the scan does.  The
 * pending jobs' explanations (per-filter node counts), which the indexed
 * engine carries forward from the change log instead of recounting
 * (cycle.c), must be equal too.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define S 1000 /* ms */

typedef struct twin {
	mu_engine_t *e[2];
	mu_decisions_t d[2];
	uint64_t rng;
	int njobs;
	bool unique;   /* every job its own CPU and memory request */
} twin_t;

static uint64_t rnd(twin_t *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void twin_node(twin_t *w, int i, int gpus, int64_t cpu)
{
	char name[16];
	snprintf(name, sizeof name, "n%03d", i);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = cpu;
	n.alloc.v[MU_RES_MEM] = 256LL << 30;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	for (int k = 0; k < 2; k++)
		mu_engine_node_upsert(w->e[k], &n, NULL);
}

static void twin_init_state(twin_t *w, const mu_score_ops_t *ops, uint64_t seed,
			    const void *state)
{
	memset(w, 0, sizeof *w);
	w->rng = seed;
	for (int k = 0; k < 2; k++) {
		mu_engine_config_t cfg;
		mu_engine_config_defaults(&cfg);
		cfg.score = ops;
		cfg.score_state = state;
		cfg.seed = seed;
		cfg.min_runtime = 0;
		cfg.scan_all = k == 0;
		mu_engine_new(&cfg, &w->e[k]);
		mu_decisions_init(&w->d[k]);
		mu_queue_spec_t q;
		mu_queue_spec_defaults(&q);
		q.name = "q";
		mu_engine_queue_upsert(w->e[k], &q);
	}
	for (int i = 0; i < 60; i++)
		twin_node(w, i, (int)(rnd(w) % 3) * 4, 16000 + (int64_t)(rnd(w) % 4) * 16000);
}

/* Submits one random job to both engines. */
static void twin_submit(twin_t *w, mu_time_t now)
{
	char name[16];
	snprintf(name, sizeof name, "j%05d", w->njobs++);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	uint64_t r = rnd(w);
	ps.replicas = r % 5 == 0 ? 1 + (int32_t)(rnd(w) % 6) : 1;
	ps.req.v[MU_RES_CPU] = 500 * (1 + (int64_t)(rnd(w) % 8));
	ps.req.v[MU_RES_MEM] = (1LL << 30) * (1 + (int64_t)(rnd(w) % 4));
	if (w->unique) {
		ps.req.v[MU_RES_CPU] = 100 + (int64_t)(rnd(w) % 4000);
		ps.req.v[MU_RES_MEM] = (1LL << 30) + (int64_t)(rnd(w) % (3LL << 30));
	}
	switch (r % 3) {
	case 0: ps.req.v[MU_RES_GPU] = 1 + (int64_t)(rnd(w) % 4); break;
	case 1: ps.req.v[MU_RES_GPU_MILLI] = 250 * (1 + (int64_t)(rnd(w) % 3)); break;
	default: break;
	}
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.preemptible = true;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	j.runtime_estimate = (1 + (mu_time_t)(rnd(w) % 20)) * 60 * S;
	for (int k = 0; k < 2; k++)
		mu_engine_job_submit(w->e[k], &j, now, NULL);
}

static bool dec_equal(const mu_decision_t *a, const mu_decision_t *b)
{
	return a->kind == b->kind && a->job == b->job && a->podset == b->podset &&
	       a->pod == b->pod && a->node == b->node && a->gpus == b->gpus &&
	       a->gpu_milli == b->gpu_milli && a->reason.why == b->reason.why &&
	       a->reason.podset == b->reason.podset &&
	       memcmp(a->reason.fail, b->reason.fail, sizeof a->reason.fail) == 0;
}

/* Runs `steps` cycles of random events; returns the first step whose
 * decisions differ, or -1.  *binds counts binds (so the test knows the
 * run did something). */
static int twin_run(twin_t *w, int steps, long *binds)
{
	*binds = 0;
	for (int s = 0; s < steps; s++) {
		mu_time_t now = (mu_time_t)s * 30 * S;
		int arrivals = (int)(rnd(w) % 4);
		for (int a = 0; a < arrivals; a++)
			twin_submit(w, now);
		if (w->njobs > 0 && rnd(w) % 2) { /* a job finishes */
			mu_id_t id = (mu_id_t)(rnd(w) % (uint64_t)w->njobs);
			for (int k = 0; k < 2; k++)
				mu_engine_job_finish(w->e[k], id, now);
		}
		if (s % 37 == 36) /* a node changes size */
			twin_node(w, (int)(rnd(w) % 60), 8, 64000);
		for (int k = 0; k < 2; k++) {
			w->d[k].n = 0;
			mu_engine_cycle(w->e[k], now, &w->d[k]);
		}
		if (w->d[0].n != w->d[1].n)
			return s;
		for (size_t i = 0; i < w->d[0].n; i++) {
			if (!dec_equal(&w->d[0].v[i], &w->d[1].v[i]))
				return s;
			*binds += w->d[0].v[i].kind == MU_DEC_BIND;
		}
	}
	return -1;
}

static void twin_free(twin_t *w)
{
	for (int k = 0; k < 2; k++) {
		mu_decisions_release(&w->d[k]);
		mu_engine_free(w->e[k]);
	}
}

static void check_policy_state(mu_t_t *t, const mu_score_ops_t *ops, uint64_t seed,
			       const void *state)
{
	twin_t w;
	twin_init_state(&w, ops, seed, state);
	long binds;
	int diff = twin_run(&w, 400, &binds);
	if (diff >= 0)
		fprintf(stderr, "policy %s seed %llu: decisions differ at step %d\n",
			ops->name, (unsigned long long)seed, diff);
	CHECK_EQ_INT(t, diff, -1);
	CHECK(t, binds > 200);
	twin_free(&w);
}

static void check_policy(mu_t_t *t, const mu_score_ops_t *ops, uint64_t seed)
{
	check_policy_state(t, ops, seed, NULL);
}

/* Unique requests: the fit trees answer (binpack, spread). */
static void test_unique_requests_same(mu_t_t *t)
{
	const mu_score_ops_t *ops[] = {&mu_score_binpack, &mu_score_spread};
	CHECK(t, (mu_score_binpack.flags & MU_SCORE_PACKS) != 0);
	CHECK(t, (mu_score_spread.flags & MU_SCORE_SPREADS) != 0);
	for (int k = 0; k < 2; k++)
		for (uint64_t seed = 11; seed <= 13; seed++) {
			twin_t w;
			twin_init_state(&w, ops[k], seed, NULL);
			w.unique = true;
			long binds;
			int diff = twin_run(&w, 400, &binds);
			if (diff >= 0)
				fprintf(stderr, "unique %s seed %llu: decisions differ at "
					"step %d\n", ops[k]->name, (unsigned long long)seed, diff);
			CHECK_EQ_INT(t, diff, -1);
			CHECK(t, binds > 200);
			twin_free(&w);
		}
}

/* fgd and muster are indexed too; their score reads the workload mix
 * (here the shapes twin_submit draws) besides the node. */
static void test_fragmentation_policies_same(mu_t_t *t)
{
	mu_workload_mix_t mix;
	mu_workload_mix_init(&mix);
	for (int c = 1; c <= 8; c++) {
		mu_res_t r = {{0}};
		r.v[MU_RES_CPU] = 500 * c;
		r.v[MU_RES_GPU] = c % 4 + 1;
		mu_workload_mix_add(&mix, &r, NULL, 0, 3);
		memset(&r, 0, sizeof r);
		r.v[MU_RES_CPU] = 500 * c;
		r.v[MU_RES_GPU_MILLI] = 250 * (c % 3 + 1);
		mu_workload_mix_add(&mix, &r, NULL, 0, 2);
	}
	CHECK_EQ_INT(t, mu_workload_mix_finish(&mix), MU_OK);
	CHECK(t, (mu_score_fgd.flags & MU_SCORE_RANDOM) == 0);
	check_policy_state(t, &mu_score_fgd, 5, &mix);
	check_policy_state(t, &mu_score_muster, 6, &mix);
	mu_workload_mix_release(&mix);
}

static void test_binpack_same(mu_t_t *t)
{
	for (uint64_t seed = 1; seed <= 3; seed++)
		check_policy(t, &mu_score_binpack, seed);
}

static void test_spread_same(mu_t_t *t)
{
	check_policy(t, &mu_score_spread, 7);
}

static void test_random_policy_same(mu_t_t *t)
{
	CHECK(t, (mu_score_random.flags & MU_SCORE_RANDOM) != 0);
	CHECK(t, (mu_score_binpack.flags & MU_SCORE_RANDOM) == 0);
	check_policy(t, &mu_score_random, 11);
}

/* The FGD paper's baselines score integers and leave ties to the lower
 * node id, so the heaps serve them; clustering reads the bound pods'
 * kinds, which change only with the node's version. */
static void test_paper_baselines_same(mu_t_t *t)
{
	CHECK(t, (mu_score_bestfit.flags & MU_SCORE_RANDOM) == 0);
	check_policy(t, &mu_score_bestfit, 12);
	check_policy(t, &mu_score_dotprod, 13);
	check_policy(t, &mu_score_packing, 14);
	check_policy(t, &mu_score_clustering, 15);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_binpack_same);
	MU_RUN(&t, test_spread_same);
	MU_RUN(&t, test_unique_requests_same);
	MU_RUN(&t, test_random_policy_same);
	MU_RUN(&t, test_paper_baselines_same);
	MU_RUN(&t, test_fragmentation_policies_same);
	return mu_t_done(&t);
}
