/*
 * test_topo.c - gang placement over a topology: required and preferred
 * levels, the tightest domain first, slices, the explain message, domain
 * aggregates following binds, and preemption kept inside a domain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

typedef struct tfx {
	mu_engine_t *e;
	mu_decisions_t d;
	mu_podset_spec_t ps[32];
	char names[32][16];
	int n;
} tfx_t;

/* nodes in racks of `per_rack`, blocks of `per_block` nodes, 8 GPUs each. */
static void tfx_init(tfx_t *f, int nodes, int per_rack, int per_block, bool preempt)
{
	memset(f, 0, sizeof *f);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = preempt;
	cfg.min_runtime = 0;
	mu_engine_new(&cfg, &f->e);
	mu_decisions_init(&f->d);
	static const char *levels[] = {"block", "rack"};
	mu_topology_spec_t t = {"net", levels, 2};
	mu_engine_topology_upsert(f->e, &t);
	for (int i = 0; i < nodes; i++) {
		char name[16], rack[16], block[16];
		snprintf(name, sizeof name, "n%02d", i);
		snprintf(rack, sizeof rack, "r%d", i / per_rack);
		snprintf(block, sizeof block, "b%d", i / per_block);
		mu_label_t labels[] = {{"block", block}, {"rack", rack}};
		mu_node_spec_t n;
		memset(&n, 0, sizeof n);
		n.name = name;
		n.labels = labels;
		n.nlabels = 2;
		n.alloc.v[MU_RES_CPU] = 64000;
		n.alloc.v[MU_RES_GPU] = 8;
		n.alloc.v[MU_RES_PODS] = 110;
		mu_engine_node_upsert(f->e, &n, NULL);
	}
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(f->e, &q);
}

static mu_id_t tfx_job(tfx_t *f, int pods, int gpus, int prio, const char *req,
		       const char *pref, int slice, const char *slice_level)
{
	int i = f->n++;
	snprintf(f->names[i], sizeof f->names[i], "g%d", i);
	memset(&f->ps[i], 0, sizeof f->ps[i]);
	f->ps[i].replicas = pods;
	f->ps[i].req.v[MU_RES_CPU] = 1000;
	f->ps[i].req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = f->names[i];
	j.queue = "q";
	j.priority = prio;
	j.preemptible = true;
	j.podsets = &f->ps[i];
	j.npodsets = 1;
	j.topo.required = req;
	j.topo.preferred = pref;
	j.topo.slice_size = slice;
	j.topo.slice_level = slice_level;
	mu_id_t id = -1;
	mu_engine_job_submit(f->e, &j, 0, &id);
	return id;
}

static void tfx_cycle(tfx_t *f)
{
	f->d.n = 0;
	mu_engine_cycle(f->e, 0, &f->d);
}

/* The rack index ("rNN") of the node pod p of job is on, or -1. */
static int rack_of(const tfx_t *f, mu_id_t job, int p, int per_rack)
{
	mu_id_t n = mu_engine_pod_node(f->e, job, 0, p);
	return n < 0 ? -1 : atoi(mu_engine_node_name(f->e, n) + 1) / per_rack;
}

static void tfx_free(tfx_t *f)
{
	mu_decisions_release(&f->d);
	mu_engine_free(f->e);
}

static void test_required_rack(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 8, 4, 8, false);
	mu_id_t one = tfx_job(&f, 1, 8, 10, NULL, NULL, 0, NULL); /* lands in r0 */
	tfx_cycle(&f);
	mu_id_t g = tfx_job(&f, 4, 8, 0, "rack", NULL, 0, NULL);
	tfx_cycle(&f);
	int r0 = rack_of(&f, one, 0, 4);
	for (int p = 0; p < 4; p++)
		CHECK(t, rack_of(&f, g, p, 4) == 1 - r0);
	tfx_free(&f);
}

static void test_tightest_domain_first(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 12, 4, 12, false);
	/* Fill r1 and r2 partly so that r0 is emptiest: r0 8 free nodes? no:
	 * racks are 4 nodes.  Occupy 2 nodes of r1: r1 becomes the tightest
	 * rack that still holds a 2-pod gang. */
	mu_id_t a = tfx_job(&f, 2, 8, 0, "rack", NULL, 0, NULL);
	tfx_cycle(&f);
	int ra = rack_of(&f, a, 0, 4);
	CHECK(t, ra >= 0 && rack_of(&f, a, 1, 4) == ra);
	mu_id_t b = tfx_job(&f, 2, 8, 0, "rack", NULL, 0, NULL);
	tfx_cycle(&f);
	/* b goes into the rack a left half free, not into an empty one. */
	CHECK_EQ_INT(t, rack_of(&f, b, 0, 4), ra);
	CHECK_EQ_INT(t, rack_of(&f, b, 1, 4), ra);
	/* Two empty racks survive for a 4-node gang each. */
	mu_id_t c = tfx_job(&f, 4, 8, 0, "rack", NULL, 0, NULL);
	mu_id_t d = tfx_job(&f, 4, 8, 0, "rack", NULL, 0, NULL);
	tfx_cycle(&f);
	mu_job_info_t ic, id;
	mu_engine_job_info(f.e, c, &ic);
	mu_engine_job_info(f.e, d, &id);
	CHECK_EQ_INT(t, ic.bound, 4);
	CHECK_EQ_INT(t, id.bound, 4);
	tfx_free(&f);
}

static void test_impossible_explained(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 8, 4, 8, false);
	mu_id_t g = tfx_job(&f, 5, 8, 0, "rack", NULL, 0, NULL);
	tfx_cycle(&f);
	mu_job_info_t info;
	mu_engine_job_info(f.e, g, &info);
	CHECK_EQ_INT(t, info.bound, 0);
	CHECK_EQ_INT(t, info.last.why, MU_WHY_TOPOLOGY);
	char msg[512];
	mu_reason_format(f.e, &info.last, msg, sizeof msg);
	CHECK(t, strstr(msg, "no rack domain can hold the gang: 0 of 2 have the free capacity in total") != NULL);
	tfx_free(&f);
}

static void test_preferred_falls_back(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 16, 4, 8, false);
	/* 6 pods: no rack of 4 holds them; one block of 8 does. */
	mu_id_t g = tfx_job(&f, 6, 8, 0, NULL, "rack", 0, NULL);
	tfx_cycle(&f);
	mu_job_info_t info;
	mu_engine_job_info(f.e, g, &info);
	CHECK_EQ_INT(t, info.bound, 6);
	int block = rack_of(&f, g, 0, 8);
	for (int p = 1; p < 6; p++)
		CHECK_EQ_INT(t, rack_of(&f, g, p, 8), block);
	/* 20 pods: larger than any block; preferred only, so anywhere. */
	mu_id_t big = tfx_job(&f, 10, 8, 0, NULL, "rack", 0, NULL);
	tfx_cycle(&f);
	mu_engine_job_info(f.e, big, &info);
	CHECK_EQ_INT(t, info.bound, 10);
	tfx_free(&f);
}

static void test_slices(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 16, 4, 16, false);
	/* Break every rack a little with 4-GPU pods so that a slice of 4
	 * 4-GPU pods needs a rack's worth of half nodes. */
	mu_id_t g = tfx_job(&f, 8, 8, 0, "block", NULL, 4, "rack");
	tfx_cycle(&f);
	mu_job_info_t info;
	mu_engine_job_info(f.e, g, &info);
	CHECK_EQ_INT(t, info.bound, 8);
	int s0 = rack_of(&f, g, 0, 4), s1 = rack_of(&f, g, 4, 4);
	for (int p = 0; p < 4; p++) {
		CHECK_EQ_INT(t, rack_of(&f, g, p, 4), s0);
		CHECK_EQ_INT(t, rack_of(&f, g, 4 + p, 4), s1);
	}
	CHECK(t, s0 != s1);
	/* A slice of 5 cannot fit any rack of 4: nothing is bound. */
	mu_id_t bad = tfx_job(&f, 5, 8, 0, "block", NULL, 5, "rack");
	tfx_cycle(&f);
	mu_engine_job_info(f.e, bad, &info);
	CHECK_EQ_INT(t, info.bound, 0);
	tfx_free(&f);
}

static void test_preemption_inside_domain(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 8, 4, 8, true);
	/* Low-priority single pods fill every node. */
	mu_id_t low[8];
	for (int i = 0; i < 8; i++)
		low[i] = tfx_job(&f, 1, 8, 0, NULL, NULL, 0, NULL);
	tfx_cycle(&f);
	mu_id_t g = tfx_job(&f, 4, 8, 10, "rack", NULL, 0, NULL);
	tfx_cycle(&f);
	mu_job_info_t info;
	mu_engine_job_info(f.e, g, &info);
	CHECK_EQ_INT(t, info.bound, 4);
	int r = rack_of(&f, g, 0, 4);
	for (int p = 1; p < 4; p++)
		CHECK_EQ_INT(t, rack_of(&f, g, p, 4), r);
	int evicted = 0;
	for (size_t i = 0; i < f.d.n; i++)
		evicted += f.d.v[i].kind == MU_DEC_EVICT;
	CHECK_EQ_INT(t, evicted, 4); /* exactly one rack's worth */
	int still = 0;
	for (int i = 0; i < 8; i++) {
		mu_engine_job_info(f.e, low[i], &info);
		still += info.bound;
	}
	CHECK_EQ_INT(t, still, 4);
	tfx_free(&f);
}

static void test_bad_constraint(mu_t_t *t)
{
	tfx_t f;
	tfx_init(&f, 2, 2, 2, false);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = "x";
	j.queue = "q";
	j.podsets = &ps;
	j.npodsets = 1;
	j.topo.required = "no-such-level";
	CHECK_EQ_INT(t, mu_engine_job_submit(f.e, &j, 0, NULL), MU_EINVAL);
	j.topo.required = "rack";
	j.topo.topology = "other";
	CHECK_EQ_INT(t, mu_engine_job_submit(f.e, &j, 0, NULL), MU_ENOENT);
	CHECK(t, mu_engine_topology_level(f.e, 0, 1) && !strcmp(mu_engine_topology_level(f.e, 0, 1), "rack"));
	tfx_free(&f);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_required_rack);
	MU_RUN(&t, test_tightest_domain_first);
	MU_RUN(&t, test_impossible_explained);
	MU_RUN(&t, test_preferred_falls_back);
	MU_RUN(&t, test_slices);
	MU_RUN(&t, test_preemption_inside_domain);
	MU_RUN(&t, test_bad_constraint);
	return mu_t_done(&t);
}
