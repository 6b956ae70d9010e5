/*
 * test_supply.c - the cluster's GPU supply per model (src/engine/supply.c)
 * and the policy that reads it, muster-supply (src/engine/score_frag.c).
 *
 * The engine keeps the supply incrementally at every bind, release and
 * node change; after every cycle of a random stream of events (nodes of
 * three GPU models and none, whole-GPU, share and CPU-only jobs, finishes,
 * unbinds, nodes resized, relabelled to another model, cordoned, removed
 * and re-added) it must equal a recount from the nodes as
 * mu_engine_node_info() shows them: a dropped or doubled update anywhere
 * shows up as a difference.  A policy that does not read the supply gets
 * none.  A hand-made cluster checks the rule: a share breaks a whole
 * device of the model whose whole devices nobody else asks for.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "engine_fixture.h"

#define S 1000 /* ms */

static const char *const MODELS[] = {"A100", "T4", "V100", NULL};

typedef struct run {
	mu_engine_t *e;
	mu_decisions_t d;
	uint64_t rng;
	int njobs;
} run_t;

static uint64_t rnd(run_t *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Upserts node i with gpus devices of model (NULL none). */
static void put_node(mu_engine_t *e, int i, int gpus, const char *model,
		     bool cordon)
{
	char name[16];
	snprintf(name, sizeof name, "n%03d", i);
	fx_node(e, name, gpus, model, cordon, NULL);
}

static void random_job(run_t *r, mu_time_t now)
{
	char name[16];
	snprintf(name, sizeof name, "j%05d", r->njobs++);
	mu_res_t req = {{0}};
	req.v[MU_RES_CPU] = 500 * (1 + (int64_t)(rnd(r) % 8));
	req.v[MU_RES_MEM] = 1LL << 30;
	switch (rnd(r) % 3) {
	case 0: req.v[MU_RES_GPU] = 1 + (int64_t)(rnd(r) % 4); break;
	case 1: req.v[MU_RES_GPU_MILLI] = 100 * (1 + (int64_t)(rnd(r) % 9)); break;
	default: break;
	}
	const char *model = MODELS[rnd(r) % 4];
	fx_submit(r->e, name, rnd(r) % 5 == 0 ? 2 : 1, &req, &model,
		  model && rnd(r) % 2 ? 1 : 0, 0, now);
}

/* Adds node info n's devices to s, as supply.c counts them. */
static void recount_add(mu_supply_model_t *s, const mu_node_info_t *n)
{
	int whole = 0;
	for (int g = 0; g < n->ngpu; g++) {
		int16_t f = n->gpu_free[g];
		if (f >= 1000) {
			whole++;
		} else if (f > 0) {
			s->part[f / 100]++;
			s->part_milli[f / 100] += f;
		}
	}
	s->nodes++;
	s->devices += n->ngpu;
	s->whole += whole;
	for (int k = 0; k <= whole; k++)
		s->nodes_whole[k]++;
}

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_counts(const mu_supply_model_t *a, const mu_supply_model_t *b)
{
	return a->nodes == b->nodes && a->devices == b->devices &&
	       a->whole == b->whole &&
	       memcmp(a->nodes_whole, b->nodes_whole, sizeof a->nodes_whole) == 0 &&
	       memcmp(a->part, b->part, sizeof a->part) == 0 &&
	       memcmp(a->part_milli, b->part_milli, sizeof a->part_milli) == 0;
}

/* Whether e's supply equals a recount from its nodes: every model entry
 * and the sum, and an entry for every schedulable node's model.
 * O(nodes x models x devices). */
static bool supply_matches(const mu_engine_t *e)
{
	const mu_supply_t *sp = mu_engine_supply(e);
	if (!sp)
		return false;
	mu_supply_model_t all;
	memset(&all, 0, sizeof all);
	for (int32_t i = 0; i < sp->nmodels; i++) {
		mu_supply_model_t m;
		memset(&m, 0, sizeof m);
		for (mu_id_t id = 0; id < mu_engine_nnodes(e); id++) {
			mu_node_info_t n;
			if (mu_engine_node_info(e, id, &n) != MU_OK || n.unschedulable)
				continue;
			if (same_name(n.gpu_model, sp->models[i].model))
				recount_add(&m, &n);
		}
		if (!same_counts(&m, &sp->models[i]))
			return false;
	}
	for (mu_id_t id = 0; id < mu_engine_nnodes(e); id++) {
		mu_node_info_t n;
		if (mu_engine_node_info(e, id, &n) != MU_OK || n.unschedulable)
			continue;
		recount_add(&all, &n);
		bool found = false;
		for (int32_t i = 0; i < sp->nmodels && !found; i++)
			found = same_name(n.gpu_model, sp->models[i].model);
		if (!found)
			return false;
	}
	return same_counts(&all, &sp->all);
}

/* A mix of the shapes random_job draws, unconstrained. */
static void random_mix(mu_workload_mix_t *mix)
{
	mu_workload_mix_init(mix);
	for (int c = 1; c <= 8; c++) {
		mu_res_t r = {{0}};
		r.v[MU_RES_CPU] = 500 * c;
		r.v[MU_RES_GPU] = c % 4 + 1;
		mu_workload_mix_add(mix, &r, NULL, 0, 3);
		memset(&r, 0, sizeof r);
		r.v[MU_RES_CPU] = 500 * c;
		r.v[MU_RES_GPU_MILLI] = 100 * (c + 1);
		mu_workload_mix_add(mix, &r, NULL, 0, 2);
	}
	mu_workload_mix_finish(mix);
}

/* Random binds, finishes, unbinds and node changes; the supply is checked
 * against a recount after every cycle. */
static void test_supply_equals_recount(mu_t_t *t)
{
	mu_workload_mix_t mix;
	random_mix(&mix);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		run_t r = {fx_engine(&mu_score_muster_supply, &mix, seed), {0}, seed, 0};
		mu_decisions_init(&r.d);
		for (int i = 0; i < 40; i++)
			put_node(r.e, i, (int)(rnd(&r) % 3) * 4, MODELS[rnd(&r) % 4], false);
		CHECK(t, supply_matches(r.e));
		long binds = 0, unbinds = 0;
		int bad = -1;
		for (int s = 0; s < 300 && bad < 0; s++) {
			mu_time_t now = (mu_time_t)s * 30 * S;
			for (int a = (int)(rnd(&r) % 4); a > 0; a--)
				random_job(&r, now);
			if (r.njobs > 0 && rnd(&r) % 2)
				mu_engine_job_finish(r.e, (mu_id_t)(rnd(&r) % (uint64_t)r.njobs), now);
			switch (s % 41) {
			case 10: /* resized or moved to another model */
				put_node(r.e, (int)(rnd(&r) % 40), 8, MODELS[rnd(&r) % 4], false);
				break;
			case 20: /* cordoned, later uncordoned by a resize */
				put_node(r.e, (int)(rnd(&r) % 40), 8, "T4", true);
				break;
			case 30: {
				char name[16];
				int i = (int)(rnd(&r) % 40);
				snprintf(name, sizeof name, "n%03d", i);
				mu_engine_node_remove(r.e, name, now);
				break;
			}
			case 35: /* a removed node comes back */
				put_node(r.e, (int)(rnd(&r) % 40), 4, "V100", false);
				break;
			default: break;
			}
			r.d.n = 0;
			mu_engine_cycle(r.e, now, &r.d);
			for (size_t i = 0; i < r.d.n; i++) {
				const mu_decision_t *d = &r.d.v[i];
				if (d->kind != MU_DEC_BIND)
					continue;
				binds++;
				if (rnd(&r) % 8 == 0 && /* the bind did not go through */
				    mu_engine_pod_unbind(r.e, d->job, d->podset, d->pod, now) == MU_OK)
					unbinds++;
			}
			if (!supply_matches(r.e))
				bad = s;
		}
		CHECK_EQ_INT(t, bad, -1);
		CHECK(t, binds > 200);
		CHECK(t, unbinds > 10);
		mu_decisions_release(&r.d);
		mu_engine_free(r.e);
	}
	/* A policy that does not read it gets none, and pays nothing. */
	mu_engine_t *e = fx_engine(&mu_score_muster, &mix, 1);
	put_node(e, 0, 8, "T4", false);
	CHECK(t, mu_engine_supply(e) == NULL);
	CHECK(t, (mu_score_muster.flags & MU_SCORE_SUPPLY) == 0);
	CHECK(t, (mu_score_muster_supply.flags & MU_SCORE_SUPPLY) != 0);
	mu_engine_free(e);
	mu_workload_mix_release(&mix);
}

/* Node a0 of model A with 8 devices, b0 of model B with 4, two of them
 * taken by a job that asked for B.  The mix's whole-GPU pods may use only
 * A; its shares any model.  muster's per-node reserve (floor(0.75 x
 * devices x 0.75), W being 0.75 here) keeps b0's last two whole devices
 * (2 <= 2) but not a0's eight (8 > 4), so the share breaks one of a0's;
 * muster-supply sees that nobody asks for B's whole devices and leaves A's
 * for the pods that need them. */
static void test_share_goes_to_plentiful_model(mu_t_t *t)
{
	const char *a = "A", *b = "B";
	mu_workload_mix_t mix;
	mu_workload_mix_init(&mix);
	mu_res_t whole = {{0}}, share = {{0}};
	whole.v[MU_RES_CPU] = 4000;
	whole.v[MU_RES_GPU] = 1;
	share.v[MU_RES_CPU] = 2000;
	share.v[MU_RES_GPU_MILLI] = 500;
	CHECK_EQ_INT(t, mu_workload_mix_add(&mix, &whole, &a, 1, 60), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_add(&mix, &share, NULL, 0, 40), MU_OK);
	CHECK_EQ_INT(t, mu_workload_mix_finish(&mix), MU_OK);
	const mu_score_ops_t *ops[2] = {&mu_score_muster, &mu_score_muster_supply};
	const char *want[2] = {"a0", "b0"};
	for (int k = 0; k < 2; k++) {
		mu_engine_t *e = fx_engine(ops[k], &mix, 1);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 256LL << 30;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		n.name = "a0";
		n.gpu_model = "A";
		mu_engine_node_upsert(e, &n, NULL);
		n.name = "b0";
		n.gpu_model = "B";
		n.alloc.v[MU_RES_GPU] = 4;
		mu_engine_node_upsert(e, &n, NULL);
		mu_res_t two = {{0}};
		two.v[MU_RES_CPU] = 1000;
		two.v[MU_RES_MEM] = 1LL << 30;
		two.v[MU_RES_GPU] = 2;
		fx_submit(e, "w", 1, &two, &b, 1, 0, 0);
		share.v[MU_RES_MEM] = 1LL << 30;
		fx_submit(e, "s", 1, &share, NULL, 0, 0, 0);
		mu_decisions_t d;
		mu_decisions_init(&d);
		mu_engine_cycle(e, 0, &d);
		mu_id_t node = mu_engine_pod_node(e, mu_engine_job_find(e, "s"), 0, 0);
		CHECK(t, mu_engine_pod_node(e, mu_engine_job_find(e, "w"), 0, 0) ==
			 mu_engine_node_find(e, "b0"));
		CHECK(t, node >= 0 && strcmp(mu_engine_node_name(e, node), want[k]) == 0);
		mu_decisions_release(&d);
		mu_engine_free(e);
	}
	mu_workload_mix_release(&mix);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_supply_equals_recount);
	MU_RUN(&t, test_share_goes_to_plentiful_model);
	return mu_t_done(&t);
}
