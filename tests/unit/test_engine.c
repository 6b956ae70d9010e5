/*
 * test_engine.c - unit tests of the engine through its public API: nodes,
 * queues, jobs, gang placement with rollback, scoring, quotas, fractional
 * GPUs, node removal and the explain text.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define GI (1024LL * 1024 * 1024)

static mu_node_spec_t node(const char *name, int cpus, int gpus)
{
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = cpus * 1000LL;
	n.alloc.v[MU_RES_MEM] = 256 * GI;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	return n;
}

static mu_queue_spec_t queue(const char *name, const char *parent, int gpus)
{
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = name;
	q.parent = parent;
	q.deserved.v[MU_RES_GPU] = gpus * 1000LL;
	return q;
}

/* A one-podset job: replicas pods of `gpus` GPUs and 1 CPU each. */
static mu_job_spec_t job(const char *name, const char *q, mu_podset_spec_t *ps,
			 int replicas, int gpus)
{
	memset(ps, 0, sizeof *ps);
	ps->name = "main";
	ps->replicas = replicas;
	ps->req.v[MU_RES_CPU] = 1000;
	ps->req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = q;
	j.podsets = ps;
	j.npodsets = 1;
	j.preemptible = true;
	return j;
}

static mu_engine_t *engine_with(int nodes, int gpus, const mu_score_ops_t *ops)
{
	mu_engine_t *e;
	mu_engine_config_t cfg = {.score = ops};
	if (mu_engine_new(&cfg, &e))
		return NULL;
	char name[32];
	for (int i = 0; i < nodes; i++) {
		snprintf(name, sizeof name, "n%d", i);
		mu_node_spec_t n = node(name, 64, gpus);
		mu_engine_node_upsert(e, &n, NULL);
	}
	mu_queue_spec_t q = queue("q", NULL, 0);
	mu_engine_queue_upsert(e, &q);
	return e;
}

static int count_kind(const mu_decisions_t *d, mu_dec_kind_t k, mu_id_t job)
{
	int n = 0;
	for (size_t i = 0; i < d->n; i++)
		n += d->v[i].kind == k && (job < 0 || d->v[i].job == job);
	return n;
}

static void test_gang_fits(mu_t_t *t)
{
	mu_engine_t *e = engine_with(4, 8, NULL);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("a", "q", &ps, 4, 8);
	mu_id_t id;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, &id), MU_OK);
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, &d), MU_OK);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, id), 4);
	mu_job_info_t info;
	mu_engine_job_info(e, id, &info);
	CHECK_EQ_INT(t, info.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, info.bound, 4);
	/* All four nodes used, each pod with all eight devices. */
	for (size_t i = 0; i < d.n; i++)
		CHECK_EQ_INT(t, d.v[i].gpus, 0xff);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_gang_rollback(mu_t_t *t)
{
	mu_engine_t *e = engine_with(3, 8, NULL);
	mu_podset_spec_t ps1, ps2;
	mu_job_spec_t small = job("small", "q", &ps1, 1, 4);
	mu_job_spec_t gang = job("gang", "q", &ps2, 3, 8);
	gang.priority = 10; /* tried first */
	mu_id_t sid, gid;
	mu_engine_job_submit(e, &small, 0, &sid);
	mu_engine_job_submit(e, &gang, 0, &gid);
	/* Occupy half a node first so that the gang of 3 full nodes fails. */
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	/* The gang went first and took all 3 nodes; small waits. */
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, gid), 3);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, sid), 0);
	mu_engine_job_finish(e, gid, 10);
	d.n = 0;
	mu_engine_cycle(e, 10, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, sid), 1);
	/* Now a new 3-node gang cannot fit: nothing may stay bound. */
	mu_podset_spec_t ps3;
	mu_job_spec_t gang2 = job("gang2", "q", &ps3, 3, 8);
	mu_engine_job_submit(e, &gang2, 10, &gid);
	mu_res_t used_before;
	mu_engine_totals(e, NULL, &used_before);
	d.n = 0;
	mu_engine_cycle(e, 10, &d);
	mu_res_t used_after;
	mu_engine_totals(e, NULL, &used_after);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, gid), 0);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_PENDING, gid), 1);
	CHECK(t, memcmp(&used_before, &used_after, sizeof used_before) == 0);
	mu_job_info_t info;
	mu_engine_job_info(e, gid, &info);
	CHECK_EQ_INT(t, info.bound, 0);
	CHECK_EQ_INT(t, info.last.why, MU_WHY_GANG);
	CHECK_EQ_INT(t, info.last.pods_fit, 2);
	char msg[256];
	mu_reason_format(e, &info.last, msg, sizeof msg);
	CHECK(t, strstr(msg, "0/3 nodes are available: 3 insufficient nvidia.com/gpu") != NULL);
	CHECK(t, strstr(msg, "gang needs 3 pods, at most 2 fit") != NULL);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_binpack_vs_spread(mu_t_t *t)
{
	for (int pass = 0; pass < 2; pass++) {
		mu_engine_t *e = engine_with(2, 8, pass ? &mu_score_spread : NULL);
		mu_podset_spec_t ps;
		mu_job_spec_t j = job("a", "q", &ps, 2, 2);
		mu_id_t id;
		mu_engine_job_submit(e, &j, 0, &id);
		mu_decisions_t d;
		mu_decisions_init(&d);
		mu_engine_cycle(e, 0, &d);
		CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, id), 2);
		mu_id_t n0 = mu_engine_pod_node(e, id, 0, 0);
		mu_id_t n1 = mu_engine_pod_node(e, id, 0, 1);
		if (pass == 0)
			CHECK_EQ_INT(t, n0, n1); /* packed */
		else
			CHECK(t, n0 != n1);      /* spread */
		mu_decisions_release(&d);
		mu_engine_free(e);
	}
}

static void test_fractional_gpu(mu_t_t *t)
{
	mu_engine_t *e = engine_with(1, 2, NULL);
	mu_podset_spec_t ps[3];
	const char *names[3] = {"a", "b", "c"};
	int milli[3] = {600, 300, 500};
	mu_id_t ids[3];
	for (int i = 0; i < 3; i++) {
		mu_job_spec_t j = job(names[i], "q", &ps[i], 1, 0);
		ps[i].req.v[MU_RES_GPU_MILLI] = milli[i];
		j.submit = i;
		mu_engine_job_submit(e, &j, 0, &ids[i]);
	}
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, -1), 3);
	uint64_t dev[3] = {0};
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].kind == MU_DEC_BIND) {
			dev[d.v[i].job] = d.v[i].gpus;
			CHECK_EQ_INT(t, d.v[i].gpu_milli, milli[d.v[i].job]);
		}
	/* 600 on device 0, 300 best-fits beside it, 500 needs device 1. */
	CHECK_EQ_INT(t, dev[0], 1);
	CHECK_EQ_INT(t, dev[1], 1);
	CHECK_EQ_INT(t, dev[2], 2);
	/* A whole-GPU pod no longer fits: no device is fully free. */
	mu_podset_spec_t ps4;
	mu_job_spec_t whole = job("whole", "q", &ps4, 1, 1);
	mu_id_t wid;
	mu_engine_job_submit(e, &whole, 0, &wid);
	d.n = 0;
	mu_engine_cycle(e, 0, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, wid), 0);
	mu_engine_job_finish(e, ids[2], 5);
	d.n = 0;
	mu_engine_cycle(e, 5, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, wid), 1);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_queue_share_order(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	mu_node_spec_t n = node("n0", 64, 8);
	mu_engine_node_upsert(e, &n, NULL);
	mu_queue_spec_t qa = queue("a", NULL, 4), qb = queue("b", NULL, 4);
	mu_engine_queue_upsert(e, &qa);
	mu_engine_queue_upsert(e, &qb);
	/* Queue a submits 8 one-GPU jobs first; b submits 8 later.  They
	 * must interleave so that each queue gets its 4 deserved GPUs. */
	mu_podset_spec_t ps[16];
	char names[16][16];
	for (int i = 0; i < 16; i++) {
		snprintf(names[i], sizeof names[i], "%c%d", i < 8 ? 'a' : 'b', i);
		mu_job_spec_t j = job(names[i], i < 8 ? "a" : "b", &ps[i], 1, 1);
		j.submit = i;
		mu_engine_job_submit(e, &j, 0, NULL);
	}
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 100, &d);
	mu_queue_info_t ia, ib;
	mu_engine_queue_info(e, mu_engine_queue_find(e, "a"), &ia);
	mu_engine_queue_info(e, mu_engine_queue_find(e, "b"), &ib);
	CHECK_EQ_INT(t, ia.used.v[MU_RES_GPU], 4000);
	CHECK_EQ_INT(t, ib.used.v[MU_RES_GPU], 4000);
	CHECK_EQ_INT(t, ia.pending_jobs, 4);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_priority_and_age(mu_t_t *t)
{
	mu_engine_t *e = engine_with(1, 8, NULL);
	mu_podset_spec_t p1, p2, p3;
	mu_job_spec_t old = job("old", "q", &p1, 1, 8);
	mu_job_spec_t young = job("young", "q", &p2, 1, 8);
	mu_job_spec_t vip = job("vip", "q", &p3, 1, 8);
	old.submit = 0;
	young.submit = 5;
	vip.submit = 9;
	vip.priority = 100;
	mu_id_t io, iy, iv;
	mu_engine_job_submit(e, &young, 10, &iy);
	mu_engine_job_submit(e, &old, 10, &io);
	mu_engine_job_submit(e, &vip, 10, &iv);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 10, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, iv), 1);
	mu_engine_job_finish(e, iv, 20);
	d.n = 0;
	mu_engine_cycle(e, 20, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, io), 1);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, iy), 0);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_queue_limit(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	mu_node_spec_t n = node("n0", 64, 8);
	mu_engine_node_upsert(e, &n, NULL);
	mu_queue_spec_t parent = queue("org", NULL, 0);
	parent.limit.v[MU_RES_GPU] = 3000;
	mu_queue_spec_t child = queue("team", "org", 0);
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &parent), MU_OK);
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &child), MU_OK);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("big", "team", &ps, 2, 2);
	mu_id_t id;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, &id), MU_OK);
	/* Jobs go to leaves only. */
	mu_podset_spec_t ps2;
	mu_job_spec_t bad = job("bad", "org", &ps2, 1, 1);
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &bad, 0, NULL), MU_EINVAL);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_job_info_t info;
	mu_engine_job_info(e, id, &info);
	CHECK_EQ_INT(t, info.bound, 0);
	CHECK_EQ_INT(t, info.last.why, MU_WHY_QUEUE_LIMIT);
	char msg[256];
	mu_reason_format(e, &info.last, msg, sizeof msg);
	CHECK(t, strstr(msg, "queue \"org\" is at its limit of nvidia.com/gpu: 0 used + 4 requested > 3") != NULL);
	/* Raising the limit lets it in on the next cycle. */
	parent.limit.v[MU_RES_GPU] = 4000;
	mu_engine_queue_upsert(e, &parent);
	d.n = 0;
	mu_engine_cycle(e, 1, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, id), 2);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_filters_explained(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	mu_label_t rack0[] = {{"rack", "r0"}}, rack1[] = {{"rack", "r1"}};
	mu_taint_t taint[] = {{"gpu", "reserved", MU_TAINT_NO_SCHEDULE}};
	mu_node_spec_t a = node("a", 8, 8), b = node("b", 8, 8), c = node("c", 8, 8);
	a.labels = rack0;
	a.nlabels = 1;
	b.labels = rack1;
	b.nlabels = 1;
	c.labels = rack0;
	c.nlabels = 1;
	c.taints = taint;
	c.ntaints = 1;
	mu_engine_node_upsert(e, &a, NULL);
	mu_engine_node_upsert(e, &b, NULL);
	mu_engine_node_upsert(e, &c, NULL);
	mu_queue_spec_t q = queue("q", NULL, 0);
	mu_engine_queue_upsert(e, &q);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("j", "q", &ps, 1, 1);
	ps.node_selector = rack0;
	ps.nnode_selector = 1;
	ps.req.v[MU_RES_CPU] = 16000; /* more than any node has */
	mu_id_t id;
	mu_engine_job_submit(e, &j, 0, &id);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_job_info_t info;
	mu_engine_job_info(e, id, &info);
	CHECK_EQ_INT(t, info.last.why, MU_WHY_UNSCHEDULABLE);
	CHECK_EQ_INT(t, info.last.fail[MU_F_SELECTOR], 1);
	CHECK_EQ_INT(t, info.last.fail[MU_F_TAINT], 1);
	CHECK_EQ_INT(t, info.last.fail[MU_F_CPU], 1);
	/* Tolerating the taint and asking for less CPU: it lands on a or c. */
	mu_toleration_t tol = {"gpu", "reserved", MU_TOL_EQUAL, -1};
	mu_podset_spec_t ps2;
	mu_job_spec_t j2 = job("j2", "q", &ps2, 2, 8);
	ps2.node_selector = rack0;
	ps2.nnode_selector = 1;
	ps2.tolerations = &tol;
	ps2.ntolerations = 1;
	mu_engine_job_submit(e, &j2, 0, &id);
	d.n = 0;
	mu_engine_cycle(e, 0, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, id), 2);
	CHECK(t, mu_engine_pod_node(e, id, 0, 0) != mu_engine_node_find(e, "b"));
	CHECK(t, mu_engine_pod_node(e, id, 0, 1) != mu_engine_node_find(e, "b"));
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_node_remove_restarts_gang(mu_t_t *t)
{
	mu_engine_t *e = engine_with(3, 8, NULL);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("g", "q", &ps, 2, 8);
	mu_id_t id;
	mu_engine_job_submit(e, &j, 0, &id);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_id_t on = mu_engine_pod_node(e, id, 0, 0);
	CHECK_EQ_INT(t, mu_engine_node_remove(e, mu_engine_node_name(e, on), 5), MU_OK);
	mu_job_info_t info;
	mu_engine_job_info(e, id, &info);
	CHECK_EQ_INT(t, info.state, MU_JOB_PENDING);
	CHECK_EQ_INT(t, info.bound, 0);
	d.n = 0;
	mu_engine_cycle(e, 5, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, id), 2);
	CHECK(t, mu_engine_pod_node(e, id, 0, 0) != on);
	CHECK(t, mu_engine_pod_node(e, id, 0, 1) != on);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_min_member(mu_t_t *t)
{
	mu_engine_t *e = engine_with(2, 8, NULL);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("elastic", "q", &ps, 4, 8);
	j.min_member = 2;
	mu_id_t id;
	mu_engine_job_submit(e, &j, 0, &id);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_job_info_t info;
	mu_engine_job_info(e, id, &info);
	CHECK_EQ_INT(t, info.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, info.bound, 2);
	/* The missing pods join when nodes appear. */
	mu_node_spec_t n = node("extra", 64, 16);
	mu_engine_node_upsert(e, &n, NULL);
	d.n = 0;
	mu_engine_cycle(e, 1, &d);
	mu_engine_job_info(e, id, &info);
	CHECK_EQ_INT(t, info.bound, 4);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_PENDING, id), 0);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_bad_specs(mu_t_t *t)
{
	mu_engine_t *e = engine_with(1, 8, NULL);
	mu_podset_spec_t ps;
	mu_job_spec_t j = job("x", "nope", &ps, 1, 1);
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, NULL), MU_ENOENT);
	j.queue = "q";
	ps.replicas = 0;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, NULL), MU_ERANGE);
	ps.replicas = 1;
	ps.req.v[MU_RES_GPU_MILLI] = 500; /* a share and whole GPUs at once */
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, NULL), MU_ERANGE);
	ps.req.v[MU_RES_GPU_MILLI] = 0;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, NULL), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &j, 0, NULL), MU_EEXIST);
	mu_node_spec_t n = node("big", 8, 65);
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, NULL), MU_ERANGE);
	mu_queue_spec_t q = queue("loop", "missing", 0);
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_ENOENT);
	CHECK(t, strcmp(mu_strerror(MU_ENOENT), "no such object") == 0);
	mu_engine_free(e);
}

static void test_failure_cache(mu_t_t *t)
{
	mu_engine_t *e = engine_with(1, 8, NULL);
	mu_podset_spec_t p1, p2;
	mu_job_spec_t a = job("a", "q", &p1, 1, 8), b = job("b", "q", &p2, 1, 4);
	mu_id_t ia, ib;
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_job_submit(e, &a, 0, &ia);
	mu_engine_cycle(e, 0, &d);
	mu_engine_job_submit(e, &b, 1, &ib);
	for (int i = 0; i < 5; i++) {
		d.n = 0;
		mu_engine_cycle(e, 1 + i, &d);
		/* Still pending, same reason every cycle. */
		CHECK_EQ_INT(t, count_kind(&d, MU_DEC_PENDING, ib), 1);
		CHECK_EQ_INT(t, d.v[d.n - 1].reason.why, MU_WHY_UNSCHEDULABLE);
	}
	mu_engine_job_finish(e, ia, 10);
	d.n = 0;
	mu_engine_cycle(e, 10, &d);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, ib), 1);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

/* A cycle before any node is known: the job waits, unschedulable (the
 * daemon can run one before its node list is in). */
static void test_no_nodes(mu_t_t *t)
{
	mu_engine_t *e = engine_with(0, 8, NULL);
	mu_podset_spec_t p;
	mu_job_spec_t a = job("a", "q", &p, 1, 1);
	mu_id_t ia;
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &a, 0, &ia), MU_OK);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 1, &d), MU_OK);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_PENDING, ia), 1);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, -1), 0);
	mu_node_spec_t n = node("n0", 64, 8);
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, NULL), MU_OK);
	d.n = 0;
	CHECK_EQ_INT(t, mu_engine_cycle(e, 2, &d), MU_OK);
	CHECK_EQ_INT(t, count_kind(&d, MU_DEC_BIND, ia), 1);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_gang_fits);
	MU_RUN(&t, test_gang_rollback);
	MU_RUN(&t, test_binpack_vs_spread);
	MU_RUN(&t, test_fractional_gpu);
	MU_RUN(&t, test_queue_share_order);
	MU_RUN(&t, test_priority_and_age);
	MU_RUN(&t, test_queue_limit);
	MU_RUN(&t, test_filters_explained);
	MU_RUN(&t, test_node_remove_restarts_gang);
	MU_RUN(&t, test_min_member);
	MU_RUN(&t, test_bad_specs);
	MU_RUN(&t, test_failure_cache);
	MU_RUN(&t, test_no_nodes);
	return mu_t_done(&t);
}
