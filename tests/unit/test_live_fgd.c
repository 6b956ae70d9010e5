/*
 * test_live_fgd.c - `muster scheduler --policy fgd` and `--policy
 * muster-supply` score with the demand now as their mix (the
 * twenty-second round, src/kube/rechoose.c): FGD's typical pods are, live,
 * the pods of ours pending and running.
 *
 *   - the daemon's start (mu__kd_hz_init) gives fgd, muster-supply,
 *     muster and muster-mg the live demand as their score state; binpack
 *     none; a state of the caller's is kept (fails without this round's
 *     change: fgd and muster-supply got none);
 *   - fgd's live mix is the typical pods (MU_MIX_TYPICAL: the shapes
 *     covering 95% of the pods, as the paper's simulator and `muster eval
 *     openb` give fgd), kept across rebuilds; muster-supply's every shape;
 *   - the engine places as the e2e test tests/e2e/fgd_live.sh does on
 *     three nodes: n0 (6 GPUs, 6 CPUs) full of six 800m shares, n1 (one
 *     GPU, 8 CPUs) holding a 200m share, n2 (one GPU, 8 CPUs) empty.  A
 *     100m share goes on n2 with the demand (6 x 800m, 200m, 100m) as the
 *     mix: on n1 it would leave 700m, which the 800m shares cannot use;
 *     on n1 with no mix and with the empty live mix (no pods counted),
 *     which must place as no mix does; for fgd and muster-supply alike.
 * Nothing is timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kube/daemon_int.h"
#include "engine_fixture.h"

/* A daemon's view (d->o = o, filled here) after its start for policy ops
 * with the caller's state (mu__kd_hz_init on *cfg); the caller stops it
 * (mu__kd_hz_stop) and frees it.  NULL without memory. */
static mu__kd_t *started(mu_t_t *t, mu_kube_opts_t *o, const mu_score_ops_t *ops,
			 const void *state, mu_engine_config_t *cfg)
{
	mu_kube_opts_defaults(o);
	o->engine.score = ops;
	o->engine.score_state = state;
	mu__kd_t *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->o = o;
	*cfg = o->engine;
	CHECK_EQ_INT(t, mu__kd_hz_init(d, cfg), MU_OK);
	return d;
}

/* The daemon's start for policy ops with the caller's state: whether it
 * made the live demand the engine's mix (and if not, kept state). */
static bool live_for(mu_t_t *t, const mu_score_ops_t *ops, const void *state)
{
	mu_kube_opts_t o;
	mu_engine_config_t cfg;
	mu__kd_t *d = started(t, &o, ops, state, &cfg);
	if (!d)
		return false;
	bool live = d->mix_live && cfg.score_state == &d->hz.mix && !d->hz_on;
	if (!live)
		CHECK(t, cfg.score_state == state);
	mu__kd_hz_stop(d);
	free(d);
	return live;
}

static void test_live_policies(mu_t_t *t)
{
	CHECK(t, live_for(t, &mu_score_fgd, NULL));
	CHECK(t, live_for(t, &mu_score_muster_supply, NULL));
	CHECK(t, live_for(t, &mu_score_muster, NULL));
	CHECK(t, live_for(t, &mu_score_muster_mg, NULL));
	CHECK(t, !live_for(t, &mu_score_binpack, NULL));
	CHECK(t, !live_for(t, &mu_score_bestfit, NULL));
	mu_workload_mix_t mine;
	mu_workload_mix_init(&mine);
	CHECK(t, !live_for(t, &mu_score_fgd, &mine)); /* the caller's mix stays */
}

/* The live mix's shapes x 1000 + its pods under ops after 100 pods of
 * one shape and 2 of another came, then 8 more of the first: fgd keeps
 * the typical pods (the shapes covering 95% of the pods: the first alone,
 * 108 of 110), muster-supply every shape, and each build keeps the cut
 * (mu_horizon_live_mix). */
static int32_t live_shapes(mu_t_t *t, const mu_score_ops_t *ops)
{
	mu_kube_opts_t o;
	mu_engine_config_t cfg;
	mu__kd_t *d = started(t, &o, ops, NULL, &cfg);
	if (!d)
		return -1;
	mu_res_t a = {{0}}, b = {{0}};
	a.v[MU_RES_CPU] = b.v[MU_RES_CPU] = 1000;
	a.v[MU_RES_GPU] = 1;
	b.v[MU_RES_GPU_MILLI] = 500;
	CHECK_EQ_INT(t, mu_horizon_seen(&d->hz, &a, NULL, 0, 100), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_seen(&d->hz, &b, NULL, 0, 2), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&d->hz), 1);
	CHECK_EQ_INT(t, mu_horizon_seen(&d->hz, &a, NULL, 0, 8), MU_OK);
	CHECK_EQ_INT(t, mu_horizon_live_mix(&d->hz), 1); /* 8 of 102 moved */
	int32_t n = d->hz.mix.ntypes * 1000 + (int32_t)d->hz.mix.pods;
	mu__kd_hz_stop(d);
	free(d);
	return n;
}

static void test_typical(mu_t_t *t)
{
	CHECK_EQ_INT(t, live_shapes(t, &mu_score_fgd), 1108);
	CHECK_EQ_INT(t, live_shapes(t, &mu_score_muster_supply), 2110);
}

static void node(mu_engine_t *e, const char *name, int gpus, int64_t cpu)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = cpu;
	n.alloc.v[MU_RES_MEM] = 64LL << 30;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	mu_engine_node_upsert(e, &n, NULL);
}

static mu_res_t share(int64_t milli)
{
	mu_res_t r = {{0}};
	r.v[MU_RES_CPU] = 1000;
	r.v[MU_RES_GPU_MILLI] = milli;
	return r;
}

/* Submits replicas pods of a milli share and runs a cycle. */
static void submit(mu_engine_t *e, const char *name, int32_t replicas, int64_t milli)
{
	mu_res_t r = share(milli);
	fx_submit(e, name, replicas, &r, NULL, 0, 0, 0);
	mu_decisions_t dec;
	mu_decisions_init(&dec);
	mu_engine_cycle(e, 0, &dec);
	mu_decisions_release(&dec);
}

/* The node (0, 1, 2) the probe 100m share goes on under ops with the mix
 * of h, after the cluster above was filled (nodes added one at a time, so
 * that the pinned pods have one node to go to); counted: whether h counts
 * the demand.  -1 if it went nowhere. */
static int probe_node(const mu_score_ops_t *ops, mu_horizon_t *h, bool with_mix,
		      bool counted)
{
	mu_engine_t *e = fx_engine(ops, with_mix ? &h->mix : NULL, 0);
	if (!e)
		return -1;
	if (counted) {
		mu_res_t r8 = share(800), r2 = share(200), r1 = share(100);
		mu_horizon_seen(h, &r8, NULL, 0, 6);
		mu_horizon_seen(h, &r2, NULL, 0, 1);
		mu_horizon_seen(h, &r1, NULL, 0, 1);
	}
	mu_horizon_live_mix(h);
	mu_engine_rescore(e);
	node(e, "n0", 6, 6000);
	submit(e, "z", 6, 800);
	node(e, "n1", 1, 8000);
	submit(e, "x", 1, 200);
	node(e, "n2", 1, 8000);
	submit(e, "probe", 1, 100);
	int at = -1;
	for (mu_id_t id = 0; id < 3; id++) {
		mu_node_info_t ni;
		if (mu_engine_node_info(e, id, &ni) == MU_OK &&
		    ni.gpu_free[0] == (id == 1 ? 700 : 900))
			at = (int)id;
	}
	mu_engine_free(e);
	return at;
}

static void test_placement(mu_t_t *t)
{
	const mu_score_ops_t *ops[2] = {&mu_score_fgd, &mu_score_muster_supply};
	for (int i = 0; i < 2; i++) {
		mu_horizon_t h;
		mu_horizon_config_t hc = {.own_mix = true};
		CHECK_EQ_INT(t, mu_horizon_init(&h, &hc, NULL, 0), MU_OK);
		CHECK_EQ_INT(t, probe_node(ops[i], &h, false, false), 1); /* no mix */
		CHECK_EQ_INT(t, probe_node(ops[i], &h, true, false), 1);  /* no pods */
		CHECK(t, h.mix.index == NULL);
		CHECK_EQ_INT(t, probe_node(ops[i], &h, true, true), 2);   /* the demand */
		CHECK_EQ_INT(t, h.mix.pods, 8);
		CHECK_EQ_INT(t, h.mix.ntypes, 3);
		mu_horizon_release(&h);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_live_policies);
	MU_RUN(&t, test_typical);
	MU_RUN(&t, test_placement);
	return mu_t_done(&t);
}
