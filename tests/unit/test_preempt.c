/*
 * test_preempt.c - fair share, preemption, reclaim, quota rules, rollback of
 * a failed victim search, elastic surplus first, stability over many cycles
 * and the starvation guard, through the engine's public API.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define MIN 60000 /* ms */

typedef struct fx {
	mu_engine_t *e;
	mu_decisions_t d;
	mu_podset_spec_t ps[64];
	char names[64][16];
	int n;
} fx_t;

/* An engine with `nodes` 8-GPU nodes and preemption and reclaim on, no
 * minimum runtime unless `minrt` is set. */
static void fx_init(fx_t *f, int nodes, mu_time_t minrt)
{
	memset(f, 0, sizeof *f);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.min_runtime = minrt;
	cfg.starvation_after = 0;
	mu_engine_new(&cfg, &f->e);
	mu_decisions_init(&f->d);
	for (int i = 0; i < nodes; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", i);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 1LL << 40;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(f->e, &n, NULL);
	}
}

static void fx_queue(fx_t *f, const char *name, const char *parent, int deserved,
		     double weight)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = name;
	q.parent = parent;
	q.deserved.v[MU_RES_GPU] = deserved * 1000LL;
	q.weight[MU_RES_GPU] = weight;
	mu_engine_queue_upsert(f->e, &q);
}

/* Submits a job of `pods` pods with `gpus` GPUs each. */
static mu_id_t fx_job(fx_t *f, const char *q, int pods, int gpus, int prio,
		      bool preemptible, int min_member, mu_time_t now)
{
	int i = f->n++;
	snprintf(f->names[i], sizeof f->names[i], "j%d", i);
	mu_podset_spec_t *ps = &f->ps[i];
	memset(ps, 0, sizeof *ps);
	ps->replicas = pods;
	ps->req.v[MU_RES_CPU] = 1000;
	ps->req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = f->names[i];
	j.queue = q;
	j.priority = prio;
	j.preemptible = preemptible;
	j.min_member = min_member;
	j.podsets = ps;
	j.npodsets = 1;
	j.submit = now;
	mu_id_t id = -1;
	mu_engine_job_submit(f->e, &j, now, &id);
	return id;
}

static void fx_cycle(fx_t *f, mu_time_t now)
{
	f->d.n = 0;
	mu_engine_cycle(f->e, now, &f->d);
}

static int fx_count(const fx_t *f, mu_dec_kind_t k, mu_id_t job)
{
	int n = 0;
	for (size_t i = 0; i < f->d.n; i++)
		n += f->d.v[i].kind == k && (job < 0 || f->d.v[i].job == job);
	return n;
}

static int fx_bound(const fx_t *f, mu_id_t job)
{
	mu_job_info_t info;
	mu_engine_job_info(f->e, job, &info);
	return info.bound;
}

static void fx_free(fx_t *f)
{
	mu_decisions_release(&f->d);
	mu_engine_free(f->e);
}

static void test_fair_share_weights(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 2, 0);
	fx_queue(&f, "a", NULL, 4, 1);
	fx_queue(&f, "b", NULL, 4, 3);
	for (int i = 0; i < 16; i++) {
		fx_job(&f, "a", 1, 1, 0, true, 0, 0);
		fx_job(&f, "b", 1, 1, 0, true, 0, 0);
	}
	fx_cycle(&f, 0);
	mu_queue_info_t a, b;
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "a"), &a);
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "b"), &b);
	/* 16 GPUs: 4 + 4 deserved, the 8 left split 1:3. */
	CHECK_EQ_INT(t, a.fair.v[MU_RES_GPU], 6000);
	CHECK_EQ_INT(t, b.fair.v[MU_RES_GPU], 10000);
	/* The cycle follows the shares. */
	CHECK_EQ_INT(t, a.used.v[MU_RES_GPU], 6000);
	CHECK_EQ_INT(t, b.used.v[MU_RES_GPU], 10000);
	fx_free(&f);
}

static void test_fair_share_demand_capped(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 2, 0);
	fx_queue(&f, "org", NULL, 16, 1);
	fx_queue(&f, "small", "org", 2, 1);
	fx_queue(&f, "big", "org", 2, 1);
	fx_job(&f, "small", 1, 3, 0, true, 0, 0); /* demand 3 */
	for (int i = 0; i < 4; i++)
		fx_job(&f, "big", 1, 8, 0, true, 0, 0); /* demand 32 */
	fx_cycle(&f, 0);
	mu_queue_info_t s, b;
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "small"), &s);
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "big"), &b);
	CHECK_EQ_INT(t, s.fair.v[MU_RES_GPU], 3000); /* no more than it wants */
	CHECK_EQ_INT(t, b.fair.v[MU_RES_GPU], 13000);
	fx_free(&f);
}

static void test_preempt_lower_priority(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 1, 5 * MIN);
	fx_queue(&f, "q", NULL, 8, 1);
	mu_id_t low = fx_job(&f, "q", 1, 8, 0, true, 0, 0);
	fx_cycle(&f, 0);
	CHECK_EQ_INT(t, fx_bound(&f, low), 1);
	mu_id_t high = fx_job(&f, "q", 1, 8, 10, true, 0, MIN);
	mu_id_t same = fx_job(&f, "q", 1, 8, 0, true, 0, MIN);
	fx_cycle(&f, MIN); /* low has not run its minimum yet */
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, -1), 0);
	fx_cycle(&f, 6 * MIN);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, low), 1);
	CHECK_EQ_INT(t, fx_bound(&f, high), 1);
	mu_job_info_t info;
	mu_engine_job_info(f.e, low, &info);
	CHECK_EQ_INT(t, info.state, MU_JOB_PENDING);
	CHECK_EQ_INT(t, info.preemptions, 1);
	CHECK_EQ_INT(t, info.submit, 0); /* keeps its age */
	CHECK_EQ_INT(t, info.last.why, MU_WHY_PREEMPTED);
	/* An equal priority never preempts. */
	fx_cycle(&f, 20 * MIN);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, -1), 0);
	CHECK_EQ_INT(t, fx_bound(&f, same), 0);
	fx_free(&f);
}

static void test_reclaim_over_quota_only(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 2, 0);
	fx_queue(&f, "a", NULL, 8, 1);
	fx_queue(&f, "b", NULL, 8, 1);
	mu_id_t b1 = fx_job(&f, "b", 1, 8, 0, true, 0, 0);
	fx_cycle(&f, 0);
	mu_id_t b2 = fx_job(&f, "b", 1, 8, 0, true, 0, 1);
	fx_cycle(&f, 1);
	CHECK_EQ_INT(t, fx_bound(&f, b1) + fx_bound(&f, b2), 2);
	/* a was idle; now it wants its deserved 8 back. */
	mu_id_t a1 = fx_job(&f, "a", 1, 8, 0, true, 0, 10);
	fx_cycle(&f, 10);
	CHECK_EQ_INT(t, fx_bound(&f, a1), 1);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, b2), 1); /* the youngest */
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, b1), 0);
	/* b is at its deserved 8 now: a's next job reclaims nothing. */
	mu_id_t a2 = fx_job(&f, "a", 1, 8, 0, true, 0, 20);
	fx_cycle(&f, 20);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, -1), 0);
	CHECK_EQ_INT(t, fx_bound(&f, a2), 0);
	mu_job_info_t info;
	mu_engine_job_info(f.e, a2, &info);
	char msg[512];
	mu_reason_format(f.e, &info.last, msg, sizeof msg);
	CHECK(t, strstr(msg, "queue \"a\" is at its fair share of nvidia.com/gpu: 8 used + 8 requested > 8 fair share (8 deserved)") != NULL);
	fx_free(&f);
}

static void test_non_preemptible(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 2, 0);
	fx_queue(&f, "a", NULL, 8, 1);
	fx_queue(&f, "b", NULL, 8, 1);
	/* Non-preemptible: in quota fine, beyond it refused. */
	mu_id_t in = fx_job(&f, "b", 1, 8, 0, false, 0, 0);
	mu_id_t over = fx_job(&f, "b", 1, 8, 0, false, 0, 0);
	fx_cycle(&f, 0);
	CHECK_EQ_INT(t, fx_bound(&f, in), 1);
	CHECK_EQ_INT(t, fx_bound(&f, over), 0);
	mu_job_info_t info;
	mu_engine_job_info(f.e, over, &info);
	CHECK_EQ_INT(t, info.last.why, MU_WHY_OVER_QUOTA);
	/* A higher-priority job of the same queue cannot evict it. */
	mu_id_t vip = fx_job(&f, "b", 2, 8, 100, true, 0, 1);
	fx_cycle(&f, 1);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, in), 0);
	CHECK_EQ_INT(t, fx_bound(&f, vip), 0);
	fx_free(&f);
}

static void test_victim_search_rolls_back(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 2, 0);
	fx_queue(&f, "q", NULL, 16, 1);
	mu_id_t keep = fx_job(&f, "q", 1, 8, 0, false, 0, 0); /* immovable */
	mu_id_t low = fx_job(&f, "q", 1, 4, 0, true, 0, 0);
	mu_id_t low2 = fx_job(&f, "q", 1, 4, 0, true, 0, 0);
	fx_cycle(&f, 0);
	mu_id_t n_low = mu_engine_pod_node(f.e, low, 0, 0);
	mu_id_t n_low2 = mu_engine_pod_node(f.e, low2, 0, 0);
	/* A gang of two 8-GPU pods: only one node can be cleared. */
	mu_id_t gang = fx_job(&f, "q", 2, 8, 50, true, 0, 1);
	mu_res_t before, after;
	mu_engine_totals(f.e, NULL, &before);
	fx_cycle(&f, 1);
	mu_engine_totals(f.e, NULL, &after);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, -1), 0);
	CHECK_EQ_INT(t, fx_bound(&f, gang), 0);
	CHECK_EQ_INT(t, fx_bound(&f, low) + fx_bound(&f, low2) + fx_bound(&f, keep), 3);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, low, 0, 0), n_low);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, low2, 0, 0), n_low2);
	CHECK(t, memcmp(&before, &after, sizeof before) == 0);
	fx_free(&f);
}

static void test_elastic_surplus_first(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 2, 0);
	fx_queue(&f, "q", NULL, 16, 1);
	mu_id_t gang = fx_job(&f, "q", 1, 8, 0, true, 0, 0);    /* node 0 */
	mu_id_t elastic = fx_job(&f, "q", 2, 4, 0, true, 1, 0); /* node 1 */
	fx_cycle(&f, 0);
	CHECK_EQ_INT(t, fx_bound(&f, gang), 1);
	CHECK_EQ_INT(t, fx_bound(&f, elastic), 2);
	mu_id_t high = fx_job(&f, "q", 1, 4, 10, true, 0, 1);
	fx_cycle(&f, 1);
	/* One surplus replica goes; the gang and the elastic job keep running. */
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, elastic), 1);
	CHECK_EQ_INT(t, fx_count(&f, MU_DEC_EVICT, gang), 0);
	CHECK_EQ_INT(t, fx_bound(&f, high), 1);
	mu_job_info_t info;
	mu_engine_job_info(f.e, elastic, &info);
	CHECK_EQ_INT(t, info.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, info.bound, 1);
	CHECK_EQ_INT(t, info.preemptions, 0);
	fx_free(&f);
}

static void test_no_oscillation(mu_t_t *t)
{
	fx_t f;
	fx_init(&f, 4, 0);
	fx_queue(&f, "a", NULL, 16, 1);
	fx_queue(&f, "b", NULL, 16, 1);
	for (int i = 0; i < 6; i++)
		fx_job(&f, "b", 1, 8, 0, true, 0, 0);
	fx_cycle(&f, 0);
	for (int i = 0; i < 6; i++)
		fx_job(&f, "a", 1, 8, i % 3, true, 0, 1);
	int evictions = 0, later = 0;
	for (int c = 0; c < 25; c++) {
		fx_cycle(&f, 1 + c);
		int n = fx_count(&f, MU_DEC_EVICT, -1);
		evictions += n;
		if (c > 0)
			later += n;
	}
	mu_queue_info_t a, b;
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "a"), &a);
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "b"), &b);
	CHECK_EQ_INT(t, a.used.v[MU_RES_GPU], 16000);
	CHECK_EQ_INT(t, b.used.v[MU_RES_GPU], 16000);
	CHECK_EQ_INT(t, evictions, 2);
	CHECK_EQ_INT(t, later, 0);
	fx_free(&f);
}

static void test_starvation_guard(mu_t_t *t)
{
	fx_t f;
	memset(&f, 0, sizeof f);
	fx_init(&f, 2, 0);
	mu_engine_free(f.e);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.starvation_after = 10 * MIN;
	cfg.preemption = cfg.reclaim = false;
	cfg.backfill = MU_BACKFILL_GREEDY; /* the guard alone, no reservations */
	mu_engine_new(&cfg, &f.e);
	for (int i = 0; i < 2; i++) {
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = i ? "n1" : "n0";
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(f.e, &n, NULL);
	}
	fx_queue(&f, "q", NULL, 16, 1);
	mu_id_t s1 = fx_job(&f, "q", 1, 4, 0, true, 0, 0);
	fx_cycle(&f, 0);
	mu_id_t big = fx_job(&f, "q", 2, 8, 5, true, 0, 1);
	mu_id_t s2 = fx_job(&f, "q", 1, 4, 0, true, 0, 1);
	fx_cycle(&f, 1); /* not starving yet: s2 backfills */
	CHECK_EQ_INT(t, fx_bound(&f, s2), 1);
	mu_engine_job_finish(f.e, s1, 2);
	mu_id_t s3 = fx_job(&f, "q", 1, 4, 0, true, 0, 2);
	fx_cycle(&f, 2);
	CHECK_EQ_INT(t, fx_bound(&f, s3), 1);
	mu_engine_job_finish(f.e, s2, 20 * MIN);
	mu_id_t s4 = fx_job(&f, "q", 1, 4, 0, true, 0, 20 * MIN);
	fx_cycle(&f, 20 * MIN); /* big starves now: s4 must wait behind it */
	CHECK_EQ_INT(t, fx_bound(&f, s4), 0);
	mu_job_info_t info;
	mu_engine_job_info(f.e, s4, &info);
	CHECK_EQ_INT(t, info.last.why, MU_WHY_BLOCKED);
	mu_engine_job_finish(f.e, s3, 21 * MIN);
	fx_cycle(&f, 21 * MIN);
	CHECK_EQ_INT(t, fx_bound(&f, big), 2);
	fx_free(&f);
}

/* Time-decayed fairness: a queue that held the whole cluster for two hours
 * gets less of the surplus than one that was idle, with a half-life of an
 * hour; with decay off, the two split it evenly, as before.  Returns b's
 * GPUs after b claims. */
static int64_t decay_run(mu_t_t *t, mu_time_t half_life, mu_queue_info_t *qa,
			 mu_queue_info_t *qb)
{
	fx_t f;
	memset(&f, 0, sizeof f);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.usage_half_life = half_life;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &f.e), MU_OK);
	mu_decisions_init(&f.d);
	for (int i = 0; i < 2; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", i);
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_MEM] = 1LL << 40;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(f.e, &n, NULL);
	}
	fx_queue(&f, "a", NULL, 0, 1);
	fx_queue(&f, "b", NULL, 0, 1);
	for (int i = 0; i < 16; i++)
		fx_job(&f, "a", 1, 1, 0, true, 0, 0);
	for (int h = 0; h <= 2; h++)
		fx_cycle(&f, (mu_time_t)h * 3600 * 1000);
	for (int i = 0; i < 16; i++)
		fx_job(&f, "b", 1, 1, 0, true, 0, 2 * 3600 * 1000);
	for (int k = 0; k < 3; k++)
		fx_cycle(&f, 2 * 3600 * 1000 + k * 1000);
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "a"), qa);
	mu_engine_queue_info(f.e, mu_engine_queue_find(f.e, "b"), qb);
	int64_t used = qb->used.v[MU_RES_GPU];
	fx_free(&f);
	return used;
}

static void test_usage_decay(mu_t_t *t)
{
	mu_queue_info_t a, b;
	/* Off: 8 and 8, and b reclaims up to its fair share. */
	CHECK_EQ_INT(t, decay_run(t, 0, &a, &b), 8000);
	CHECK_EQ_INT(t, a.fair.v[MU_RES_GPU], 8000);
	CHECK(t, a.decay_factor == 1.0);
	/* Half-life 1 h: a's decayed usage is 16 x (1 - 2^-2) = 12 GPUs, all
	 * of the decayed usage, against half the weight: factor 2^-2.  The
	 * surplus splits 0.25 : 1, so a's fair share is 3.2 GPUs and b's 12.8,
	 * and b reclaims 12 GPUs (whole ones up to its share). */
	CHECK_EQ_INT(t, decay_run(t, 3600 * 1000, &a, &b), 12000);
	CHECK(t, a.decayed_gpu > 11900 && a.decayed_gpu < 12100);
	CHECK(t, a.decay_factor > 0.24 && a.decay_factor < 0.26);
	CHECK(t, a.fair.v[MU_RES_GPU] > 3180 && a.fair.v[MU_RES_GPU] < 3220);
	CHECK(t, b.fair.v[MU_RES_GPU] > 12780 && b.fair.v[MU_RES_GPU] < 12820);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_fair_share_weights);
	MU_RUN(&t, test_fair_share_demand_capped);
	MU_RUN(&t, test_preempt_lower_priority);
	MU_RUN(&t, test_reclaim_over_quota_only);
	MU_RUN(&t, test_non_preemptible);
	MU_RUN(&t, test_victim_search_rolls_back);
	MU_RUN(&t, test_elastic_surplus_first);
	MU_RUN(&t, test_no_oscillation);
	MU_RUN(&t, test_starvation_guard);
	MU_RUN(&t, test_usage_decay);
	return mu_t_done(&t);
}
