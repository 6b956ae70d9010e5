/*
 * test_score_rollout.c - muster's settings chosen by rollouts
 * (src/engine/score_rollout.c): the candidate list, the settings reaching
 * the score (a share placed differently under two settings), the choice's
 * determinism for a seed and its bounds, and the choice on a small
 * hand-made cluster where the better setting is known, in both candidate
 * orders; and the receding horizon's pieces: the checkpoints, rollouts
 * from a partly asked cluster with a second judgement, and a choice made
 * again from a changed cluster that differs from the empty one's, and
 * the engine's kept scores dropped when a setting changes mid-run; and
 * the fifteenth round's ties judged by worth (fragmentation, a longer
 * look-ahead) and late candidates (best fit, whole GPUs by FGD's points);
 * and the sixteenth round's memory, which decides a choice.  Nothing is
 * timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

static mu_res_t req(int64_t cpu_milli, int64_t gpus, int64_t share)
{
	mu_res_t r;
	memset(&r, 0, sizeof r);
	r.v[MU_RES_CPU] = cpu_milli;
	r.v[MU_RES_GPU] = gpus;
	r.v[MU_RES_GPU_MILLI] = share;
	r.v[MU_RES_PODS] = 1;
	return r;
}

/* A whole free node of ngpu devices and cpu millicores, over
 * caller-owned storage. */
typedef struct vnode {
	mu_res_t alloc, free;
	int16_t gpu[MU_MAX_GPUS];
	mu_node_view_t v;
} vnode_t;

static void vnode(vnode_t *n, int64_t cpu, int ngpu)
{
	memset(n, 0, sizeof *n);
	n->alloc.v[MU_RES_CPU] = cpu;
	n->alloc.v[MU_RES_GPU] = ngpu;
	n->alloc.v[MU_RES_GPU_MILLI] = 1000 * ngpu;
	n->free = n->alloc;
	for (int g = 0; g < ngpu; g++)
		n->gpu[g] = 1000;
	n->v = (mu_node_view_t){&n->alloc, &n->free, ngpu, n->gpu, NULL, NULL};
}

/* The known case.  Pods: one-GPU pods needing 4 cores and 800-milli
 * shares needing half a core, equally popular.  Nodes of two GPUs: two
 * with 16 cores first, then two with 5 cores, which feed one one-GPU pod
 * each; their second device can only ever hold a share.  With the
 * large-share rule on (mg_multi 0: a share >= 700 placed by the
 * CPU-aware growth) a share goes where the GPU is stranded by CPU anyway
 * (a 5-core node); with it off FGD's points see every node alike (the
 * one-GPU pod fits both) and the tie sends the share to the first,
 * CPU-rich node, where it takes a device that a one-GPU pod could use.
 * Filled to saturation (fill 20), the best end is 6 one-GPU pods and 2
 * shares (7,600 milli); the rule on gets there more often than off (16
 * rollouts of seed 7: 115,800 against 114,200). */
static void known_case(mu_workload_mix_t *m, vnode_t *n, mu_node_view_t *v)
{
	mu_res_t w = req(4000, 1, 0), s = req(500, 0, 800);
	mu_workload_mix_init(m);
	mu_workload_mix_add(m, &w, NULL, 0, 1);
	mu_workload_mix_add(m, &s, NULL, 0, 1);
	mu_workload_mix_finish(m);
	for (int i = 0; i < 4; i++) {
		vnode(&n[i], i < 2 ? 16000 : 5000, 2);
		v[i] = n[i].v;
	}
}

static mu_muster_params_t params(double mg_multi, double reserve)
{
	mu_muster_params_t p;
	mu_muster_params_defaults(&p);
	p.mg_multi = mg_multi;
	p.reserve = reserve;
	return p;
}

static void test_candidates(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t c[16], d;
	mu_muster_params_defaults(&d);
	size_t k = mu_muster_params_candidates(&m, c, 16);
	CHECK_EQ_INT(t, k, 10);
	CHECK(t, c[0].mg_multi == d.mg_multi && c[0].mg_large == d.mg_large &&
		 c[0].reserve == d.reserve &&
		 c[0].reserve_below == d.reserve_below); /* the defaults first */
	/* No pod of 2+ GPUs: the defaults' rule is off, so "on" is tried. */
	CHECK(t, c[5].mg_multi <= 0);
	CHECK_EQ_INT(t, mu_muster_params_candidates(&m, c, 2), 10);
	char buf[96];
	CHECK(t, strcmp(mu_muster_params_format(&c[1], buf, sizeof buf),
			"mg auto, reserve 0.75 below 700, demand auto, mem auto") == 0);
	CHECK(t, strcmp(mu_muster_params_format(&c[9], buf, sizeof buf),
			"mg on, reserve 0.00, demand auto, mem auto") == 0);
	mu_workload_mix_release(&m);
}

/* The settings reach muster's score: on the known case's empty cluster a
 * share scores the rich node 0 no lower than the poor node 2 with the rule
 * off, and strictly lower with it on. */
static void test_params_reach_score(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_res_t s = req(500, 0, 800);
	mu_muster_params_t off = params(2.0, 0), on = params(0, 0);
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = &off;
	CHECK(t, mu_score_muster.score(&ctx, &v[0], &s) >=
		 mu_score_muster.score(&ctx, &v[2], &s));
	view.muster = &on;
	CHECK(t, mu_score_muster.score(&ctx, &v[0], &s) <
		 mu_score_muster.score(&ctx, &v[2], &s));
	/* NULL settings are the defaults: here the rule is off. */
	view.muster = NULL;
	CHECK(t, mu_score_muster.score(&ctx, &v[0], &s) >=
		 mu_score_muster.score(&ctx, &v[2], &s));
	mu_workload_mix_release(&m);
}

static void test_known_choice(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t c[2] = {params(2.0, 0), params(0, 0)};
	mu_rollout_config_t cfg = {.seed = 7, .fill = 20, .rollouts = 16};
	int64_t worth[2];
	size_t best = 9;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, worth, &best), MU_OK);
	CHECK_EQ_INT(t, best, 1); /* the rule on */
	CHECK(t, worth[1] > worth[0]);
	/* Never more than 7,600 a rollout: at most 6 one-GPU pods fit (CPU),
	 * and a share takes a device of 1,000 for 800. */
	CHECK(t, worth[1] <= 16 * 7600 && worth[0] < worth[1]);
	/* The other order: the choice follows the setting, not the slot. */
	mu_muster_params_t r[2] = {c[1], c[0]};
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, r, 2, &cfg, worth, &best), MU_OK);
	CHECK_EQ_INT(t, best, 0);
	CHECK(t, worth[0] > worth[1]);
	mu_workload_mix_release(&m);
}

/* The same seed gives the same worth; the work is bounded: a copy of at
 * most max_nodes nodes, arrivals up to fill x its capacity. */
static void test_deterministic_bounded(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t c[10];
	size_t k = mu_muster_params_candidates(&m, c, 10);
	mu_rollout_config_t cfg = {.seed = 3, .fill = 1.3, .rollouts = 4};
	int64_t a[10], b[10];
	size_t ba, bb;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, k, &cfg, a, &ba), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, k, &cfg, b, &bb), MU_OK);
	CHECK(t, memcmp(a, b, sizeof a) == 0);
	CHECK_EQ_INT(t, ba, bb);
	for (size_t i = 0; i < k; i++)
		CHECK(t, a[i] >= 0 && a[i] <= 4 * 8000); /* the copy's GPUs */
	/* A copy of one node: at most its two GPUs a rollout. */
	cfg.max_nodes = 1;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, k, &cfg, a, &ba), MU_OK);
	for (size_t i = 0; i < k; i++)
		CHECK(t, a[i] <= 4 * 2000);
	/* Bad input. */
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 0, c, k, &cfg, a, &ba), MU_EINVAL);
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 0, &cfg, a, &ba), MU_EINVAL);
	mu_workload_mix_t raw;
	mu_workload_mix_init(&raw);
	CHECK_EQ_INT(t, mu_rollout_choose(&raw, v, 4, c, k, &cfg, a, &ba), MU_EINVAL);
	mu_workload_mix_release(&m);
}

/* Receding horizon: the checkpoints of the defaults (from 0.5, every
 * 0.1, below fill 1.3) and of a given schedule; a checkpoint at the fill
 * itself does not count. */
static void test_checkpoints(mu_t_t *t)
{
	mu_rollout_horizon_t d = {0}, h = {.from = 0.2, .every = 0.25};
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 0), -1);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 0.49), -1);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 0.5), 0);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 0.79), 2);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 1.25), 7);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 1.3), 7);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&d, 1.3, 5.0), 7);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&h, 1.0, 0.7), 2);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&h, 1.0, 0.95), 3);
	CHECK_EQ_INT(t, mu_rollout_checkpoint(NULL, 1.3, 0.9), -1);
	mu_rollout_horizon_t bad = {.every = -1};
	CHECK_EQ_INT(t, mu_rollout_checkpoint(&bad, 1.3, 0.9), -1);
}

/* A rollout from a partly asked cluster draws only what is still to come
 * (nothing at the fill itself), and a second judgement adds the
 * allocation at judge_at to the end's. */
static void test_asked_and_judge(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t c[2] = {params(2.0, 0), params(0, 0)};
	mu_rollout_config_t cfg = {.seed = 7, .fill = 1.3, .rollouts = 8};
	int64_t end[2], both[2], late[2];
	size_t best;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, end, &best), MU_OK);
	cfg.judge_at = 1.0;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, both, &best), MU_OK);
	for (int i = 0; i < 2; i++)
		CHECK(t, both[i] > end[i] && both[i] <= 2 * end[i]);
	cfg.judge_at = 0;
	cfg.asked = 1.2; /* a tenth of the capacity still to come */
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, late, &best), MU_OK);
	for (int i = 0; i < 2; i++)
		CHECK(t, late[i] > 0 && late[i] < end[i] / 4);
	cfg.asked = 1.3; /* nothing left: a bad call */
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, late, &best), MU_EINVAL);
	cfg.asked = -0.1;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, late, &best), MU_EINVAL);
	mu_workload_mix_release(&m);
}

/* The choice from the cluster as it is, not as it was: on the known
 * case's empty cluster the rule on wins (candidate 1); once the CPU-poor
 * nodes are used up (their cores taken by earlier pods), the rule has
 * nothing left to steer, both settings place alike and the first
 * (candidate 0) keeps the tie.  A choice made once on the empty cluster
 * would keep candidate 1. */
static void test_rechoice_from_state(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t c[2] = {params(2.0, 0), params(0, 0)};
	mu_rollout_config_t cfg = {.seed = 7, .fill = 1.3, .rollouts = 16,
				   .judge_at = 1.0};
	int64_t w[2];
	size_t best = 9;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, w, &best), MU_OK);
	CHECK_EQ_INT(t, best, 1);
	for (int i = 2; i < 4; i++) /* their cores taken: 4 one-GPU pods' */
		n[i].free.v[MU_RES_CPU] = 0;
	cfg.asked = 0.5;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, w, &best), MU_OK);
	CHECK_EQ_INT(t, best, 0);
	CHECK(t, w[0] == w[1]);
	mu_workload_mix_release(&m);
}

/* The node of job id's bind in d, or -1. */
static int64_t bound_node(const mu_decisions_t *d, mu_id_t id)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].kind == MU_DEC_BIND && d->v[i].job == id)
			return d->v[i].node;
	return -1;
}

/* One 800-milli share (half a core) as job name, placed by one cycle;
 * returns the node it went to. */
static int64_t place_share(mu_engine_t *e, const char *name, mu_time_t now)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.name = "main";
	ps.replicas = 1;
	ps.req = req(500, 0, 800);
	mu_job_spec_t j = {.name = name, .queue = "q", .podsets = &ps,
			   .npodsets = 1, .preemptible = true, .submit = now};
	mu_id_t id;
	if (mu_engine_job_submit(e, &j, now, &id) != MU_OK)
		return -2;
	mu_decisions_t d;
	mu_decisions_init(&d);
	int64_t node = mu_engine_cycle(e, now, &d) == MU_OK ? bound_node(&d, id) : -2;
	mu_decisions_release(&d);
	return node;
}

/* mu_engine_rescore: the engine keeps scores (a heap per request shape
 * once a class has more than 32 nodes), so a setting changed mid-run
 * reaches its placements only after it.  The known case's mix on 40
 * nodes (20 CPU-rich, then 20 CPU-poor, two GPUs each): with the
 * large-share rule off a share goes to the first rich node; switched on
 * and rescored, the next share goes to a poor node.  Without the rescore
 * the heap still holds the old scores and sends it to a rich one. */
static void test_rescore(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t off = params(2.0, 0), on = params(0, 0);
	mu_workload_mix_t view = m;
	view.muster = &off;
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.score = &mu_score_muster;
	cfg.score_state = &view;
	mu_engine_t *e;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &e), MU_OK);
	char names[40][16];
	for (int i = 0; i < 40; i++) {
		mu_node_spec_t ns;
		memset(&ns, 0, sizeof ns);
		snprintf(names[i], sizeof names[i], "n%d", i);
		ns.name = names[i];
		ns.alloc.v[MU_RES_CPU] = i < 20 ? 16000 : 5000;
		ns.alloc.v[MU_RES_MEM] = 1LL << 40;
		ns.alloc.v[MU_RES_GPU] = 2;
		ns.alloc.v[MU_RES_PODS] = 110;
		CHECK_EQ_INT(t, mu_engine_node_upsert(e, &ns, NULL), MU_OK);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	CHECK(t, place_share(e, "a", 1) < 20); /* the rule off: a rich node */
	view.muster = &on;
	mu_engine_rescore(e);
	CHECK(t, place_share(e, "b", 2) >= 20); /* on: a poor node */
	mu_engine_free(e);
	mu_workload_mix_release(&m);
}

/* Ties judged by worth (the fifteenth round).  The known case filled to
 * half its GPUs: every pod fits under either setting, so the two allocate
 * the same in every rollout; but with the large-share rule off the shares
 * go to the CPU-rich nodes and leave the CPU-poor nodes' second devices,
 * which no one-GPU pod can use (one core left after the first), free: more
 * fragmentation at the end against the mix.  The tie goes to the rule on
 * by fragmentation (tie_fill 0) and by the look-ahead (tie_fill 20: the
 * rule on allocates more at saturation), whichever slot it is in; by
 * index (tie_fill -1, round 14's rule) to the first. */
static void test_tie_by_worth(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_muster_params_t c[2] = {params(2.0, 0), params(0, 0)};
	mu_muster_params_t r[2] = {c[1], c[0]};
	mu_rollout_config_t cfg = {.seed = 7, .fill = 0.5, .rollouts = 4};
	int64_t w[2];
	size_t best = 9;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, w, &best), MU_OK);
	CHECK(t, w[0] == w[1] && w[0] > 0);
	CHECK_EQ_INT(t, best, 1);
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, r, 2, &cfg, w, &best), MU_OK);
	CHECK_EQ_INT(t, best, 0);
	cfg.tie_fill = 20;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, w, &best), MU_OK);
	CHECK(t, w[0] == w[1]); /* the worth is still judged at fill */
	CHECK_EQ_INT(t, best, 1);
	cfg.tie_fill = -1;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, w, &best), MU_OK);
	CHECK_EQ_INT(t, best, 0);
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, r, 2, &cfg, w, &best), MU_OK);
	CHECK_EQ_INT(t, best, 0);
	cfg.tie_fill = 101;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, w, &best), MU_EINVAL);
	mu_workload_mix_release(&m);
}

/* The late candidates (the fifteenth round): three, and their settings
 * reach the score.  Best fit sends a 300-milli share to the device it
 * leaves least free (the 400 of 700 and 400, leaving 100) where FGD's
 * points keep the 400 for another 300 and take the 700; whole-GPU pods
 * by FGD's points score as fgd scores them. */
static void test_late_candidates(mu_t_t *t)
{
	mu_workload_mix_t m;
	mu_res_t w = req(4000, 1, 0), s = req(500, 0, 800), s3 = req(500, 0, 300);
	mu_workload_mix_init(&m);
	mu_workload_mix_add(&m, &w, NULL, 0, 1);
	mu_workload_mix_add(&m, &s, NULL, 0, 1);
	mu_workload_mix_add(&m, &s3, NULL, 0, 1);
	mu_workload_mix_finish(&m);
	mu_muster_params_t c[4];
	CHECK_EQ_INT(t, mu_muster_params_late(&m, c, 4), 3);
	CHECK_EQ_INT(t, mu_muster_params_late(&m, c, 1), 3);
	CHECK(t, c[0].best_fit && !c[0].whole_fgd);
	char buf[96];
	CHECK(t, strcmp(mu_muster_params_format(&c[0], buf, sizeof buf),
			"mg auto, reserve 0.75, best fit, demand auto, mem auto") == 0);
	mu_muster_params_late(&m, c, 4);
	CHECK(t, c[1].best_fit && c[1].mg_multi <= 0);
	CHECK(t, !c[2].best_fit && c[2].whole_fgd);
	CHECK(t, strcmp(mu_muster_params_format(&c[2], buf, sizeof buf),
			"mg auto, reserve 0.75, whole by fgd, demand auto, mem auto") == 0);
	vnode_t n;
	vnode(&n, 16000, 2);
	n.gpu[0] = 700;
	n.gpu[1] = 400;
	n.free.v[MU_RES_GPU] = 0;
	n.free.v[MU_RES_GPU_MILLI] = 1100;
	mu_workload_mix_t view = m;
	mu_score_ctx_t ctx = {&view, 0, NULL, NULL};
	view.muster = NULL;
	CHECK_EQ_INT(t, mu_score_muster.pick_device(&ctx, &n.v, &s3), 0);
	view.muster = &c[0];
	CHECK_EQ_INT(t, mu_score_muster.pick_device(&ctx, &n.v, &s3), 1);
	vnode(&n, 5000, 2);
	view.muster = &c[2];
	double by_fgd = mu_score_muster.score(&ctx, &n.v, &w);
	view.muster = NULL;
	mu_score_ctx_t fctx = {&m, 0, NULL, NULL};
	CHECK(t, by_fgd == mu_score_fgd.score(&fctx, &n.v, &w));
	CHECK(t, by_fgd != mu_score_muster.score(&ctx, &n.v, &w));
	mu_workload_mix_release(&m);
}

/* Memory in the rollouts (the sixteenth round).  The known case, with
 * memory: the one-GPU pods and the shares ask 8 GiB each, the CPU-rich
 * nodes hold 64 GiB and the CPU-poor ones 6 GiB, so nothing fits a poor
 * node.  Without memory the rollouts see the rule on's use of the poor
 * nodes' stranded devices and choose it (candidate 1); with it they see
 * that no pod fits there, the two settings place alike and tie, and the
 * first stays.  A memory table with ample memory changes nothing (no
 * extra draw when each type asks one memory), and a pod's memory is
 * drawn by count when its type asks several. */
static mu_res_t req_mem(int64_t cpu, int64_t gpus, int64_t share, int64_t gib)
{
	mu_res_t r = req(cpu, gpus, share);
	r.v[MU_RES_MEM] = gib << 30;
	return r;
}

static void test_memory_decides(mu_t_t *t)
{
	mu_workload_mix_t m;
	vnode_t n[4];
	mu_node_view_t v[4];
	known_case(&m, n, v);
	mu_res_t w = req_mem(4000, 1, 0, 8), s = req_mem(500, 0, 800, 8);
	mu_rollout_mem_t mem;
	mu_rollout_mem_init(&mem);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &w, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &s, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_mem_finish(&mem, &m), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &s, NULL, 0, 1), MU_EINVAL);
	for (int i = 0; i < 4; i++) {
		n[i].alloc.v[MU_RES_MEM] = (int64_t)(i < 2 ? 64 : 6) << 30;
		n[i].alloc.v[MU_RES_PODS] = 110;
		n[i].free = n[i].alloc;
	}
	mu_muster_params_t c[2] = {params(2.0, 0), params(0, 0)};
	mu_rollout_config_t cfg = {.seed = 7, .fill = 1.3, .rollouts = 16};
	int64_t a[2], b[2];
	size_t best = 9;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, a, &best), MU_OK);
	CHECK_EQ_INT(t, best, 1);
	CHECK(t, a[1] > a[0]);
	cfg.mem = &mem;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, b, &best), MU_OK);
	CHECK_EQ_INT(t, best, 0);
	CHECK(t, b[0] == b[1] && b[1] < a[1]);
	/* Two rich nodes of two GPUs hold all there is: never above 4,000
	 * milli-GPU at either judgement. */
	CHECK(t, b[0] <= 16 * 2 * 4000);
	/* Ample memory: exactly the worths without memory. */
	for (int i = 0; i < 4; i++)
		n[i].free.v[MU_RES_MEM] = n[i].alloc.v[MU_RES_MEM] = (int64_t)64 << 30;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, b, &best), MU_OK);
	CHECK(t, b[0] == a[0] && b[1] == a[1]);
	/* No pod slot left: nothing is placed. */
	for (int i = 0; i < 4; i++)
		n[i].free.v[MU_RES_PODS] = 0;
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2, &cfg, b, &best), MU_OK);
	CHECK(t, b[0] == 0 && b[1] == 0);
	/* A table for another mix is refused. */
	mu_rollout_mem_t other;
	mu_rollout_mem_init(&other);
	CHECK_EQ_INT(t, mu_rollout_choose(&m, v, 4, c, 2,
		&(mu_rollout_config_t){.seed = 7, .mem = &other}, b, &best), MU_EINVAL);
	mu_rollout_mem_release(&mem);
	/* Several memories for one type: merged by value, counted. */
	mu_rollout_mem_init(&mem);
	mu_res_t w2 = req_mem(4000, 1, 0, 2), x = req_mem(900, 0, 300, 1);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &w, NULL, 0, 3), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &w2, NULL, 0, 1), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &w, NULL, 0, 2), MU_OK);
	CHECK_EQ_INT(t, mu_rollout_mem_add(&mem, &m, &x, NULL, 0, 1), MU_OK); /* not in the mix */
	CHECK_EQ_INT(t, mu_rollout_mem_finish(&mem, &m), MU_OK);
	int32_t ti = m.types[0].gpus == 1 ? 0 : 1;
	CHECK_EQ_INT(t, mem.first[ti + 1] - mem.first[ti], 2);
	CHECK(t, mem.mem[mem.first[ti]] == (int64_t)2 << 30);
	CHECK_EQ_INT(t, mem.cum[mem.first[ti]], 1);
	CHECK_EQ_INT(t, mem.cum[mem.first[ti] + 1], 6);
	CHECK_EQ_INT(t, mem.first[2], mem.n);
	mu_rollout_mem_release(&mem);
	mu_workload_mix_release(&m);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_candidates);
	MU_RUN(&t, test_params_reach_score);
	MU_RUN(&t, test_known_choice);
	MU_RUN(&t, test_deterministic_bounded);
	MU_RUN(&t, test_checkpoints);
	MU_RUN(&t, test_asked_and_judge);
	MU_RUN(&t, test_rechoice_from_state);
	MU_RUN(&t, test_rescore);
	MU_RUN(&t, test_tie_by_worth);
	MU_RUN(&t, test_late_candidates);
	MU_RUN(&t, test_memory_decides);
	return mu_t_done(&t);
}
