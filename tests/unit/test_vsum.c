/*
 * test_vsum.c - the victim search's per-node summaries change no decision.
 *
 * The victim search passes over a node on its summary (src/engine/vsum.c,
 * preempt.c summary_skip()) only in an uncapped search; with a cap on the
 * nodes examined (max_victim_nodes) larger than the cluster, the search
 * walks every node's pods as before and must still choose the same plans.
 * So each seed drives two engines, one uncapped and one capped at 10^6
 * nodes, through the same random life (3 to 8 nodes of 8 GPUs, three
 * queues with deserved quotas, jobs of 1 to 4 pods of 1, 2, 4 or 8 GPUs,
 * some elastic, four priorities, arrivals, ends and a priority escalation
 * by maximum wait) and asserts that every cycle's decisions are the same,
 * field by field.  A stale summary (a bind, release, start or priority
 * change not noted) or a bound that is not one makes them differ.
 * MUSTER_VSUM_SEEDS sets the number of seeds (default 200).
 *
 * And the summaries must do their work: a reclaim that the rules refuse
 * everywhere (every candidate's queue within its deserved GPUs) is decided
 * from the summaries alone, without walking one node's pods.  The merge
 * that made the claim's dominant resources a bit mask (f03f3c2) left
 * preempt.c comparing the mask with MU_RES_GPU, so every node was walked
 * (bench --shape preempt-varied 3x slower); that test fails on it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine/engine_int.h"
#include "muster/engine.h"

#define SEC 1000
#define NJ 40

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int rn(uint64_t *s, int n)
{
	return (int)(rnd(s) % (uint64_t)n);
}

typedef struct job {
	char name[16];
	int q, pods, min, gpu, prio;
	mu_time_t at, end, wait;
	mu_id_t id[2];
} job_t;

/* Builds one engine of the seed's cluster and queues; cap is its
 * max_victim_nodes. */
static mu_engine_t *make(uint64_t seed, int cap, int *nn)
{
	uint64_t s = seed * 31 + 7;
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.max_victim_nodes = cap;
	cfg.min_runtime = rn(&s, 2) ? 0 : 30 * SEC;
	cfg.order = rn(&s, 2) ? MU_ORDER_PRIORITY : MU_ORDER_JCT;
	mu_engine_t *e = NULL;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return NULL;
	*nn = 3 + rn(&s, 6);
	for (int n = 0; n < *nn; n++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", n);
		mu_node_spec_t ns;
		memset(&ns, 0, sizeof ns);
		ns.name = name;
		ns.alloc.v[MU_RES_CPU] = 64000;
		ns.alloc.v[MU_RES_MEM] = 1LL << 40;
		ns.alloc.v[MU_RES_GPU] = 8;
		ns.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(e, &ns, NULL);
	}
	for (int q = 0; q < 3; q++) {
		char name[16];
		snprintf(name, sizeof name, "q%d", q);
		mu_queue_spec_t qs;
		mu_queue_spec_defaults(&qs);
		qs.name = name;
		qs.deserved.v[MU_RES_GPU] = (int64_t)rn(&s, 3 * *nn) * 1000;
		mu_engine_queue_upsert(e, &qs);
	}
	return e;
}

static void submit(mu_engine_t *e, const job_t *j, mu_time_t now, mu_id_t *id)
{
	static const char *qn[] = {"q0", "q1", "q2"};
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = j->pods;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_GPU] = j->gpu;
	mu_job_spec_t js;
	memset(&js, 0, sizeof js);
	js.name = j->name;
	js.queue = qn[j->q];
	js.priority = j->prio;
	js.preemptible = true;
	js.min_member = j->min;
	js.max_wait = j->wait;
	js.podsets = &ps;
	js.npodsets = 1;
	js.submit = now;
	mu_engine_job_submit(e, &js, now, id);
}

/* Whether two cycles' decisions are the same; says the first difference. */
static bool same(mu_engine_t *const *e, const mu_decisions_t *a, const mu_decisions_t *b,
		 uint64_t seed, mu_time_t t)
{
	if (a->n != b->n) {
		fprintf(stderr, "vsum seed %llu t=%llds: %zu decisions vs %zu\n",
			(unsigned long long)seed, (long long)t / SEC, a->n, b->n);
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		const mu_decision_t *x = &a->v[i], *y = &b->v[i];
		char why[2][512] = {"", ""};
		if (x->kind == MU_DEC_PENDING && y->kind == MU_DEC_PENDING) {
			mu_reason_format(e[0], &x->reason, why[0], sizeof why[0]);
			mu_reason_format(e[1], &y->reason, why[1], sizeof why[1]);
		}
		if (x->kind != y->kind || x->job != y->job || x->pod != y->pod ||
		    x->node != y->node || x->by != y->by || x->gpus != y->gpus ||
		    strcmp(why[0], why[1])) {
			fprintf(stderr, "vsum seed %llu t=%llds: decision %zu differs (kind %d/%d job %d/%d node %d/%d)\n",
				(unsigned long long)seed, (long long)t / SEC, i, x->kind, y->kind,
				(int)x->job, (int)y->job, (int)x->node, (int)y->node);
			return false;
		}
	}
	return true;
}

/* Runs one seed on both engines; returns whether they agreed. */
static bool run_seed(uint64_t seed)
{
	int nn = 0, nn2 = 0;
	mu_engine_t *e[2] = {make(seed, 0, &nn), make(seed, 1000000, &nn2)};
	bool ok = e[0] && e[1];
	uint64_t s = seed * 977 + 3;
	static const int sizes[] = {1, 2, 4, 8};
	job_t jobs[NJ];
	for (int i = 0; i < NJ; i++) {
		job_t *j = &jobs[i];
		snprintf(j->name, sizeof j->name, "j%d", i);
		j->q = rn(&s, 3);
		j->pods = 1 + (rn(&s, 3) ? 0 : rn(&s, 4));
		j->min = j->pods > 1 && !rn(&s, 3) ? 1 + rn(&s, j->pods) : 0;
		j->gpu = sizes[rn(&s, 4)];
		j->prio = rn(&s, 4);
		j->at = (mu_time_t)rn(&s, 30) * 10 * SEC;
		j->end = rn(&s, 2) ? 0 : j->at + (mu_time_t)(3 + rn(&s, 30)) * 10 * SEC;
		j->wait = rn(&s, 8) ? 0 : (mu_time_t)(5 + rn(&s, 10)) * 10 * SEC;
		j->id[0] = j->id[1] = -1;
	}
	mu_decisions_t d[2];
	mu_decisions_init(&d[0]);
	mu_decisions_init(&d[1]);
	for (mu_time_t t = 0; ok && t <= 400 * SEC; t += 10 * SEC) {
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < NJ; i++) {
				if (jobs[i].at == t)
					submit(e[k], &jobs[i], t, &jobs[i].id[k]);
				if (jobs[i].end == t && jobs[i].id[k] >= 0)
					mu_engine_job_finish(e[k], jobs[i].id[k], t);
			}
			d[k].n = 0;
			if (mu_engine_cycle(e[k], t, &d[k]) != MU_OK)
				ok = false;
		}
		ok = ok && same(e, &d[0], &d[1], seed, t);
	}
	mu_decisions_release(&d[0]);
	mu_decisions_release(&d[1]);
	mu_engine_free(e[0]);
	mu_engine_free(e[1]);
	return ok;
}

static void test_vsum_same_decisions(mu_t_t *t)
{
	const char *env = getenv("MUSTER_VSUM_SEEDS");
	long n = env ? strtol(env, NULL, 10) : 200;
	int failed = 0;
	for (long s = 1; s <= n; s++)
		failed += !run_seed((uint64_t)s);
	printf("vsum: %ld seeds, %d differed\n", n, failed);
	CHECK_EQ_INT(t, failed, 0);
}

/* Submits a preemptible one-pod job of gpus GPUs to queue q at now. */
static void submit1(mu_t_t *t, mu_engine_t *e, const char *name, const char *q, int gpus,
		    int prio, mu_time_t now)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t js;
	memset(&js, 0, sizeof js);
	js.name = name;
	js.queue = q;
	js.priority = prio;
	js.preemptible = true;
	js.podsets = &ps;
	js.npodsets = 1;
	mu_id_t id;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &js, now, &id), MU_OK);
}

/* 200 nodes of 8 GPUs: 199 held by queue "own" within its deserved 1,592
 * GPUs, one by a priority-0 job of queue "other" (deserved 8).  A
 * priority-100 8-GPU job of "other" must evict its own queue's job; the
 * other 199 nodes hold only reclaim candidates the rules refuse, and the
 * search must pass them over on their summaries: at most two walks (the
 * node of the plan, and again to evict). */
static void test_vsum_refused_reclaim_walks_nothing(mu_t_t *t)
{
	enum { N = 200 };
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	mu_engine_t *e = NULL;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &e), MU_OK);
	if (!e)
		return;
	for (int n = 0; n < N; n++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", n);
		mu_node_spec_t ns;
		memset(&ns, 0, sizeof ns);
		ns.name = name;
		ns.alloc.v[MU_RES_CPU] = 64000;
		ns.alloc.v[MU_RES_MEM] = 1LL << 40;
		ns.alloc.v[MU_RES_GPU] = 8;
		ns.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(e, &ns, NULL);
	}
	static const char *qn[] = {"own", "other"};
	for (int q = 0; q < 2; q++) {
		mu_queue_spec_t qs;
		mu_queue_spec_defaults(&qs);
		qs.name = qn[q];
		qs.deserved.v[MU_RES_GPU] = q ? 8000 : (N - 1) * 8000;
		mu_engine_queue_upsert(e, &qs);
	}
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof name, "j%d", i);
		submit1(t, e, name, qn[i == N - 1], 8, 0, 0);
	}
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, &d), MU_OK);
	CHECK_EQ_INT(t, (int)d.n, N); /* the cluster is full */
	submit1(t, e, "high", "other", 8, 100, 3600 * SEC);
	e->victim_walks = 0;
	d.n = 0;
	CHECK_EQ_INT(t, mu_engine_cycle(e, 3600 * SEC, &d), MU_OK);
	int evicted = 0, bound = 0;
	for (size_t i = 0; i < d.n; i++) {
		evicted += d.v[i].kind == MU_DEC_EVICT;
		bound += d.v[i].kind == MU_DEC_BIND;
	}
	CHECK_EQ_INT(t, evicted, 1);
	CHECK_EQ_INT(t, bound, 1);
	if (e->victim_walks > 2)
		fprintf(stderr, "vsum: the victim search walked %llu nodes\n",
			(unsigned long long)e->victim_walks);
	CHECK(t, e->victim_walks <= 2);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_vsum_same_decisions);
	MU_RUN(&t, test_vsum_refused_reclaim_walks_nothing);
	return mu_t_done(&t);
}
