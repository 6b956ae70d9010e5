/*
 * test_horizon.c - muster-horizon outside the eval (src/engine/horizon.c
 * and its use by the simulator, src/sim/sim.c): the demand a choice sees
 * is the pods that arrived before it, never a later one (a pod shape that
 * arrives only after the choices never appears in them); the checkpoint
 * rule (a choice per checkpoint passed, none before the first, again
 * after the allocation fell and rose, at most one per min_interval); and
 * bad settings refused with the setting named.  Round 16: the seen-shape
 * index (10,000 distinct shapes; memory makes a shape) and memory reaching
 * the rollouts through the snapshot.  Nothing is timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"
#include "muster/load.h"
#include "muster/sim.h"

/* Appends a one-pod Workload: at submit s, cpu cores and gpu text. */
static size_t add_job(char *b, size_t at, size_t len, int k, int s, int cpu,
		      const char *gpu)
{
	return at + (size_t)snprintf(b + at, len - at,
		"---\n{apiVersion: muster.io/v1alpha1, kind: Workload, metadata: {name: j%03d}, "
		"spec: {queue: default, submitTime: %ds, podSets: [{replicas: 1, requests: "
		"{cpu: \"%d\", nvidia.com/gpu: \"%s\"}}]}}\n", k, s, cpu, gpu);
}

/* Four nodes of 8 GPUs; 40 half-GPU pods (one per second: 20 GPUs, 62%
 * of 32), then at 100 s one 1-GPU pod with 7 CPUs (65.6%: no checkpoint
 * passed), a shape seen nowhere
 * before. */
static int load_case(mu_specs_t *sp)
{
	size_t len = 65536, at = 0;
	char *b = malloc(len);
	if (!b)
		return MU_ENOMEM;
	at += (size_t)snprintf(b, len, "apiVersion: muster.io/v1alpha1\nkind: Queue\n"
			       "metadata: {name: default}\nspec: {}\n");
	for (int i = 0; i < 4; i++)
		at += (size_t)snprintf(b + at, len - at, "---\n{apiVersion: v1, kind: Node, "
				       "metadata: {name: n%d}, status: {allocatable: {cpu: \"64\", "
				       "memory: 256Gi, nvidia.com/gpu: \"8\"}}}\n", i);
	int k = 0;
	for (; k < 40; k++)
		at = add_job(b, at, len, k, k, 1, "500m");
	at = add_job(b, at, len, k, 100, 7, "1");
	mu_diag_t d = {{0}};
	int rc = mu_load_yaml("case.yaml", b, at, sp, &d);
	if (rc == MU_OK)
		rc = mu_specs_validate(sp, &d);
	if (rc)
		fprintf(stderr, "load: %s\n", d.msg);
	free(b);
	return rc;
}

typedef struct seen_log {
	mu_horizon_t *h;
	int n;
	mu_time_t at[16];
	int64_t pods[16];      /* pods seen at the choice */
	int32_t shapes[16];    /* shapes of the choice's demand */
	int32_t nseen[16];
} seen_log_t;

static void on_choice(void *ctx, const mu_horizon_choice_t *c)
{
	seen_log_t *l = ctx;
	if (l->n >= 16)
		return;
	l->at[l->n] = c->at;
	l->pods[l->n] = c->pods;
	l->shapes[l->n] = c->shapes;
	l->nseen[l->n] = l->h->nseen;
	l->n++;
}

/* Choices at 50% and 60% of the GPUs: each sees exactly the pods that
 * arrived by then (one per second from 0 s), one shape, never the 1-GPU
 * pod still to come; the simulation's end has seen both shapes. */
static void test_sim_demand_seen_only(mu_t_t *t)
{
	mu_specs_t sp;
	mu_specs_init(&sp);
	CHECK_EQ_INT(t, load_case(&sp), MU_OK);
	mu_workload_mix_t mix;
	mu_workload_mix_init(&mix);
	CHECK_EQ_INT(t, mu_sim_workload_mix(&sp, &mix), MU_OK);
	mu_horizon_t h;
	mu_horizon_config_t hc = {0};
	char why[160];
	CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, why, sizeof why), MU_OK);
	mix.muster = &h.params;
	mu_sim_config_t sc;
	mu_sim_config_defaults(&sc);
	sc.engine.score = &mu_score_muster_horizon;
	sc.engine.score_state = &mix;
	seen_log_t l = {.h = &h};
	sc.muster_horizon = &h;
	sc.on_choice = on_choice;
	sc.on_choice_ctx = &l;
	mu_sim_result_t r;
	mu_diag_t d = {{0}};
	CHECK_EQ_INT(t, mu_sim_run(&sp, &sc, &r, &d), MU_OK);
	CHECK_EQ_INT(t, l.n, 2);
	for (int i = 0; i < l.n && i < 2; i++) {
		int64_t arrived = l.at[i] / 1000 + 1; /* one per second from 0 s */
		CHECK_EQ_INT(t, l.pods[i], arrived);
		CHECK_EQ_INT(t, l.shapes[i], 1); /* the half-GPU pods only */
		CHECK_EQ_INT(t, l.nseen[i], 1);
	}
	CHECK_EQ_INT(t, l.at[0], 31000);  /* 32 halves: 16 GPUs, 50% */
	CHECK_EQ_INT(t, l.at[1], 38000);  /* 39 halves: 19.5 GPUs, 60.9% */
	CHECK_EQ_INT(t, h.nseen, 2);      /* at the end: the 1-GPU pod too */
	CHECK_EQ_INT(t, h.seen_pods, 41);
	CHECK_EQ_INT(t, h.choices, 2);
	mu_sim_result_release(&r);
	mu_horizon_release(&h);
	mu_workload_mix_release(&mix);
	mu_specs_release(&sp);
}

/* Submits one one-GPU job named j<k> at now s, counts it as seen, runs a
 * cycle; returns its id. */
static mu_id_t submit_one(mu_t_t *t, mu_engine_t *e, mu_horizon_t *h,
			  mu_decisions_t *dec, int k, mu_time_t now)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.name = "main";
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_GPU] = 1;
	ps.req.v[MU_RES_PODS] = 1;
	char name[16];
	snprintf(name, sizeof name, "j%d", k);
	mu_job_spec_t j = {.name = name, .queue = "default", .type = MU_JOB_BATCH,
			   .min_member = 1, .podsets = &ps, .npodsets = 1,
			   .preemptible = true, .submit = now};
	mu_id_t id = -1;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, now, &id), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(h, &ps.req, NULL, 0, 1), MU_OK);
	dec->n = 0;
	CHECK_EQ_INT(t, mu_engine_cycle(e, now, dec), MU_OK);
	return id;
}

/* One 8-GPU node driven by hand, one-GPU jobs, min_interval 1.5 s: no
 * choice before 50%; one at 50%; none at 62.5% 1 s later (min_interval);
 * one at 62.5% once 2 s went by; none at 75% at the same instant; one at
 * 87.5%; none when two jobs leave (62.5%), and one when the allocation
 * passes 75% again. */
static void test_checkpoint_rule(mu_t_t *t)
{
	mu_engine_config_t ec;
	mu_engine_config_defaults(&ec);
	mu_engine_t *e;
	CHECK_EQ_INT(t, mu_engine_new(&ec, &e), MU_OK);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "default";
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n0";
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 256000;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, NULL), MU_OK);
	mu_horizon_t h;
	mu_horizon_config_t hc = {.min_interval = 1500};
	CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, NULL, 0), MU_OK);
	mu_id_t ids[9];
	mu_decisions_t dec;
	mu_decisions_init(&dec);
	static const int at[8] = {0, 1, 2, 3, 4, 5, 5, 9};
	static const int want[8] = {0, 0, 0, 1, 0, 1, 0, 1};
	for (int i = 0; i < 8; i++) {
		mu_time_t now = at[i] * 1000;
		ids[i] = submit_one(t, e, &h, &dec, i, now);
		if (i == 5) /* 6 of 8, then one leaves: 62.5% */
			CHECK_EQ_INT(t, mu_engine_job_finish(e, ids[4], now), MU_OK);
		int got = mu_horizon_step(&h, e, now, NULL);
		if (got != want[i])
			fprintf(stderr, "job %d: step %d, expected %d\n", i, got, want[i]);
		CHECK_EQ_INT(t, got, want[i]);
	}
	CHECK_EQ_INT(t, h.choices, 3);
	CHECK_EQ_INT(t, h.checkpoint, 3);
	CHECK_EQ_INT(t, mu_engine_job_finish(e, ids[0], 10000), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_finish(e, ids[1], 10000), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_step(&h, e, 10000, NULL), 0); /* 5 of 8 */
	CHECK_EQ_INT(t, h.checkpoint, 1);
	ids[8] = submit_one(t, e, &h, &dec, 8, 12000);           /* 6 of 8 */
	CHECK_EQ_INT(t, mu_horizon_step(&h, e, 12000, NULL), 1);
	CHECK_EQ_INT(t, h.choices, 4);
	CHECK_EQ_INT(t, h.last.checkpoint, 2);
	CHECK_EQ_INT(t, h.seen_pods, 9);
	mu_decisions_release(&dec);
	mu_horizon_release(&h);
	mu_engine_free(e);
}

/* Bad settings: refused with the setting named. */
static void test_bad_config(mu_t_t *t)
{
	mu_horizon_t h;
	char why[160];
	mu_horizon_config_t c = {0};
	c.at.from = 1.5;
	CHECK_EQ_INT(t, mu_horizon_init(&h, &c, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "from") != NULL);
	c.at.from = 0;
	c.at.every = -0.1;
	CHECK_EQ_INT(t, mu_horizon_init(&h, &c, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "every") != NULL);
	c.at.every = 0;
	c.min_interval = -1;
	CHECK_EQ_INT(t, mu_horizon_init(&h, &c, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "min-interval") != NULL);
	c.min_interval = 0;
	c.rollout.fill = 0.9;
	CHECK_EQ_INT(t, mu_horizon_init(&h, &c, why, sizeof why), MU_EINVAL);
	CHECK(t, strstr(why, "fill") != NULL);
}

/* The seen-shape index (the sixteenth round: a hash, a linear search
 * before): 10,000 distinct shapes, each seen twice, are 10,000 shapes;
 * memory alone makes a shape; models count in any order; a shape past
 * the rollouts' model is not kept. */
static void test_seen_index(mu_t_t *t)
{
	mu_horizon_t h;
	mu_horizon_config_t hc = {0};
	CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, NULL, 0), MU_OK);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 10000; i++) {
			mu_res_t r;
			memset(&r, 0, sizeof r);
			r.v[MU_RES_CPU] = 100 + i % 100;
			r.v[MU_RES_MEM] = (int64_t)(i / 100) << 20;
			r.v[MU_RES_GPU_MILLI] = 500;
			CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, NULL, 0, 1 + pass), MU_OK);
		}
	CHECK_EQ_INT(t, h.nseen, 10000);
	CHECK_EQ_INT(t, h.seen_pods, 30000);
	mu_res_t r;
	memset(&r, 0, sizeof r);
	r.v[MU_RES_CPU] = 1000;
	r.v[MU_RES_GPU] = 1;
	const char *ab[] = {"A100", "H100"}, *ba[] = {"H100", "A100"};
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, ab, 2, 1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, ba, 2, 1), MU_OK);
	CHECK_EQ_INT(t, h.nseen, 10001);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, ab, 1, 1), MU_OK);
	CHECK_EQ_INT(t, h.nseen, 10002);
	r.v[MU_RES_MEM] = 1;
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, ab, 1, 1), MU_OK);
	CHECK_EQ_INT(t, h.nseen, 10003);
	r.v[MU_RES_GPU] = MU_MAX_GPUS + 1;
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &r, ab, 1, 1), MU_OK);
	CHECK_EQ_INT(t, h.nseen, 10003);
	CHECK_EQ_INT(t, h.seen_pods, 30004);
	mu_horizon_release(&h);
}

/* The snapshot carries memory to the rollouts (the sixteenth round):
 * test_score_rollout.c's known case as an engine (two CPU-rich nodes of
 * 64 GiB, two CPU-poor ones), one-GPU pods and 800m shares of 8 GiB seen.
 * With 64 GiB on the poor nodes the rollouts choose as without memory;
 * with 6 GiB nothing fits there and the choice differs.  Returns the
 * winner's index, or -1. */
static int32_t choose_with_poor_memory(mu_t_t *t, int64_t gib)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	mu_engine_t *e;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return -1;
	for (int i = 0; i < 4; i++) {
		mu_node_spec_t ns;
		char name[16];
		memset(&ns, 0, sizeof ns);
		snprintf(name, sizeof name, "n%d", i);
		ns.name = name;
		ns.alloc.v[MU_RES_CPU] = i < 2 ? 16000 : 5000;
		ns.alloc.v[MU_RES_MEM] = (i < 2 ? 64 : gib) << 30;
		ns.alloc.v[MU_RES_GPU] = 2;
		ns.alloc.v[MU_RES_PODS] = 110;
		CHECK_EQ_INT(t, mu_engine_node_upsert(e, &ns, NULL), MU_OK);
	}
	mu_horizon_t h;
	mu_horizon_config_t hc = {0};
	hc.rollout.rollouts = 16;
	CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, NULL, 0), MU_OK);
	mu_res_t w, s;
	memset(&w, 0, sizeof w);
	w.v[MU_RES_CPU] = 4000;
	w.v[MU_RES_GPU] = 1;
	w.v[MU_RES_MEM] = (int64_t)8 << 30;
	s = w;
	s.v[MU_RES_CPU] = 500;
	s.v[MU_RES_GPU] = 0;
	s.v[MU_RES_GPU_MILLI] = 800;
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &w, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(&h, &s, NULL, 0, 1), MU_OK);
	mu_horizon_job_t *j = NULL;
	mu_horizon_choice_t c = {0};
	c.winner = -1;
	CHECK_EQ_INT(t, mu_horizon_prepare(&h, e, 0, 0, 0, &j), MU_OK);
	if (j && mu_horizon_job_run(j) == MU_OK)
		CHECK_EQ_INT(t, mu_horizon_apply(&h, j, &c), MU_OK);
	mu_horizon_job_free(j);
	mu_horizon_release(&h);
	mu_engine_free(e);
	return c.winner;
}

static void test_snapshot_memory(mu_t_t *t)
{
	int32_t ample = choose_with_poor_memory(t, 64), short_ = choose_with_poor_memory(t, 6);
	CHECK(t, ample >= 0 && short_ >= 0);
	CHECK(t, ample != short_); /* 2 and 0 (seed 1, 16 rollouts) */
}

/* A choice's change is told field by field: settings equal in every field
 * but not in their padding bytes are equal (horizon.c's memcmp read the
 * padding, so a choice could count as a change that changed nothing), and
 * a change of any one field is a change. */
static void test_params_equal(mu_t_t *t)
{
	mu_muster_params_t a, b;
	memset(&a, 0x00, sizeof a);
	memset(&b, 0xa5, sizeof b);
	mu_muster_params_defaults(&a);
	mu_muster_params_t d;
	mu_muster_params_defaults(&d);
	/* field by field, so that b's padding keeps its 0xa5 bytes */
	b.mg_multi = d.mg_multi, b.mg_large = d.mg_large, b.reserve = d.reserve;
	b.reserve_below = d.reserve_below, b.best_fit = d.best_fit, b.whole_fgd = d.whole_fgd;
	b.demand_multi = d.demand_multi, b.mem_multi = d.mem_multi, b.cpu_fit = d.cpu_fit;
	b.press_over = d.press_over, b.spread_cpu = d.spread_cpu;
	b.spread_shares = d.spread_shares, b.spread_cpu_only = d.spread_cpu_only;
	b.spread_models = d.spread_models, b.cpu_reserve = d.cpu_reserve;
	b.cpu_reserve_only = d.cpu_reserve_only, b.fit_reserve = d.fit_reserve;
	b.fit_multi = d.fit_multi, b.fit_spread = d.fit_spread, b.fit_keep = d.fit_keep;
	b.fit_keep_share = d.fit_keep_share, b.fit_keep_multi = d.fit_keep_multi;
	CHECK(t, mu_muster_params_equal(&a, &b));
	CHECK(t, memcmp(&a, &b, sizeof a) != 0); /* the padding differs */
	/* each field alone: a change (by its offset, as a double or an int) */
	mu_muster_params_t c = b;
	c.mg_large++;
	CHECK(t, !mu_muster_params_equal(&a, &c));
	c = b;
	c.whole_fgd = 1;
	CHECK(t, !mu_muster_params_equal(&a, &c));
	c = b;
	c.fit_keep_multi += 0.01;
	CHECK(t, !mu_muster_params_equal(&a, &c));
	c = b;
	c.reserve = 0;
	CHECK(t, !mu_muster_params_equal(&a, &c));
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_sim_demand_seen_only);
	MU_RUN(&t, test_checkpoint_rule);
	MU_RUN(&t, test_bad_config);
	MU_RUN(&t, test_seen_index);
	MU_RUN(&t, test_snapshot_memory);
	MU_RUN(&t, test_params_equal);
	return mu_t_done(&t);
}
