/*
 * test_pools.c - node pools through the engine's public API (issue 23):
 * membership by selector (at most one pool per node), the refusals of
 * mu_engine_pool_upsert(), a node that joins a pool after it, per-pool
 * usage and totals, a pod bound outside the cycle taking the flavor of its
 * node's pool, and the class-of-service escalation.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

static void node(mu_engine_t *e, const char *name, const char *model, int gpus)
{
	mu_label_t l[1] = {{"gpu", model}};
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.labels = l;
	n.nlabels = 1;
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 1LL << 40;
	n.alloc.v[MU_RES_GPU] = gpus;
	n.alloc.v[MU_RES_PODS] = 110;
	mu_engine_node_upsert(e, &n, NULL);
}

static int pool(mu_engine_t *e, const char *name, const char *key, const char *val)
{
	mu_label_t m[1] = {{key, val}};
	mu_pool_spec_t p = {.name = name, .match = m, .nmatch = 1};
	return mu_engine_pool_upsert(e, &p);
}

static mu_id_t job(mu_engine_t *e, const char *name, const char *q, int gpus,
		   const char **pools, size_t npools, mu_time_t now)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_GPU] = gpus;
	ps.req.v[MU_RES_CPU] = 1000;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = q;
	j.preemptible = true;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = MU_TIME_NONE;
	j.pools = pools;
	j.npools = npools;
	mu_id_t id = -1;
	mu_engine_job_submit(e, &j, now, &id);
	return id;
}

static void test_membership(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	node(e, "a0", "A100", 8);
	node(e, "h0", "H100", 8);
	CHECK_EQ_INT(t, pool(e, "a100", "gpu", "A100"), MU_OK);
	CHECK_EQ_INT(t, pool(e, "h100", "gpu", "H100"), MU_OK);
	CHECK_EQ_INT(t, mu_engine_npools(e), 2);
	CHECK_EQ_INT(t, mu_engine_node_pool(e, mu_engine_node_find(e, "a0")), 0);
	CHECK_EQ_INT(t, mu_engine_node_pool(e, mu_engine_node_find(e, "h0")), 1);
	/* a selector that would put a0 in two pools is refused, nothing moves */
	CHECK_EQ_INT(t, pool(e, "any-a", "gpu", "A100"), MU_EINVAL);
	CHECK_EQ_INT(t, mu_engine_npools(e), 2);
	/* a node that comes later joins its pool; the totals follow */
	node(e, "a1", "A100", 4);
	mu_pool_info_t pi;
	CHECK_EQ_INT(t, mu_engine_pool_info(e, 0, &pi), MU_OK);
	CHECK_EQ_INT(t, pi.nodes, 2);
	CHECK_EQ_INT(t, pi.gpus, 12000);
	CHECK(t, !strcmp(pi.name, "a100"));
	CHECK_EQ_INT(t, mu_engine_pool_info(e, 2, &pi), MU_ENOENT);
	/* bad specs */
	mu_pool_spec_t empty = {.name = "x"};
	CHECK_EQ_INT(t, mu_engine_pool_upsert(e, &empty), MU_EINVAL);
	CHECK_EQ_INT(t, pool(e, "a@b", "gpu", "T4"), MU_EINVAL);
	/* a node removed leaves its pool's count */
	mu_engine_node_remove(e, "a1", 0);
	mu_engine_pool_info(e, 0, &pi);
	CHECK_EQ_INT(t, pi.nodes, 1);
	CHECK_EQ_INT(t, pi.gpus, 8000);
	mu_engine_free(e);
}

static void test_usage_and_state(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	node(e, "a0", "A100", 8);
	node(e, "h0", "H100", 8);
	pool(e, "a100", "gpu", "A100");
	pool(e, "h100", "gpu", "H100");
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_pool_quota_t pq[1] = {{"nope", 8000, MU_RES_UNLIMITED, -1, MU_POOL_GPU}};
	q.pools = pq;
	q.npools = 1;
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_ENOENT); /* unknown pool */
	pq[0].pool = "h100";
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	const char *pref[2] = {"h100", "a100"};
	mu_id_t j1 = job(e, "j1", "q", 8, pref, 2, 0);
	mu_id_t j2 = job(e, "j2", "q", 8, pref, 2, 0);
	const char *twice[2] = {"h100", "h100"};
	CHECK_EQ_INT(t, job(e, "j3", "q", 1, twice, 2, 0), -1); /* a pool twice */
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_job_info_t ji;
	mu_engine_job_info(e, j1, &ji);
	CHECK(t, ji.pool && !strcmp(ji.pool, "h100"));
	CHECK_EQ_INT(t, ji.pool_rank, 0);
	mu_engine_job_info(e, j2, &ji);
	CHECK(t, ji.pool && !strcmp(ji.pool, "a100"));
	CHECK_EQ_INT(t, ji.pool_rank, 1);
	mu_pool_info_t pi;
	mu_engine_pool_info(e, 1, &pi);
	CHECK_EQ_INT(t, pi.used, 8000);
	mu_queue_info_t qi;
	mu_engine_queue_info(e, mu_engine_queue_find(e, "q"), &qi);
	CHECK_EQ_INT(t, qi.used.v[pi.slot], 8000);
	CHECK_EQ_INT(t, qi.deserved.v[pi.slot], 8000);
	CHECK_EQ_INT(t, qi.used.v[MU_RES_GPU], 16000); /* both pools */
	/* a node with pods cannot leave its pool */
	CHECK_EQ_INT(t, pool(e, "h100", "gpu", "none"), MU_ESTATE);
	/* a job that names no pool counts in the pool of its node */
	mu_engine_job_finish(e, j2, 1000);
	mu_id_t j4 = job(e, "j4", "q", 4, NULL, 0, 1000);
	mu_engine_cycle(e, 1000, &d);
	mu_engine_job_info(e, j4, &ji);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	CHECK(t, ji.pool == NULL);
	mu_engine_pool_info(e, 0, &pi);
	CHECK_EQ_INT(t, pi.used, 4000);
	char buf[64];
	CHECK_EQ_INT(t, mu_engine_pool_explain(e, j4, buf, sizeof buf), 0);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static void test_bound_outside_takes_pool(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	node(e, "a0", "A100", 8);
	node(e, "h0", "H100", 8);
	pool(e, "a100", "gpu", "A100");
	pool(e, "h100", "gpu", "H100");
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	const char *pref[2] = {"h100", "a100"};
	mu_id_t j = job(e, "j", "q", 2, pref, 2, 0);
	/* found bound on an A100 node: it is in a100, counted there only */
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, j, 0, 0, mu_engine_node_find(e, "a0"), NULL, 0), MU_OK);
	mu_job_info_t ji;
	mu_engine_job_info(e, j, &ji);
	CHECK(t, ji.pool && !strcmp(ji.pool, "a100"));
	mu_pool_info_t a, h;
	mu_engine_pool_info(e, 0, &a);
	mu_engine_pool_info(e, 1, &h);
	CHECK_EQ_INT(t, a.used, 2000);
	CHECK_EQ_INT(t, h.used, 0);
	mu_engine_job_finish(e, j, 10);
	mu_engine_pool_info(e, 0, &a);
	CHECK_EQ_INT(t, a.used, 0);
	mu_engine_free(e);
}

static void test_escalation(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	node(e, "n0", "A100", 8);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	q.max_wait = 60000;
	mu_engine_queue_upsert(e, &q);
	mu_id_t big = job(e, "big", "q", 8, NULL, 0, 0);
	mu_id_t w = job(e, "w", "q", 8, NULL, 0, 0);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_job_info_t ji;
	mu_engine_job_info(e, w, &ji);
	CHECK_EQ_INT(t, ji.max_wait, 60000);
	CHECK(t, !ji.escalated);
	mu_engine_cycle(e, 61000, &d);
	mu_engine_job_info(e, w, &ji);
	CHECK(t, ji.escalated);
	CHECK_EQ_INT(t, ji.priority, MU_ESCALATE_BOOST);
	mu_engine_job_info(e, big, &ji);
	CHECK(t, !ji.escalated); /* it started: its wait is over */
	mu_decisions_release(&d);
	mu_engine_free(e);
}

/* A per-pool CPU quota given while pods run in the pool: the new slot
 * counts the pool's CPUs and the pods already bound there, so that their
 * release leaves it at 0; a pending job that names the pool claims it. */
static void test_cpu_slot_late(mu_t_t *t)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	node(e, "a0", "A100", 8);
	node(e, "h0", "H100", 8);
	pool(e, "a100", "gpu", "A100");
	pool(e, "h100", "gpu", "H100");
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	const char *h[1] = {"h100"};
	mu_id_t j1 = job(e, "j1", "q", 8, h, 1, 0);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 0, &d);
	mu_id_t j2 = job(e, "j2", "q", 1, h, 1, 10); /* waits: h0 is full */
	mu_pool_info_t pi;
	mu_engine_pool_info(e, 1, &pi);
	CHECK_EQ_INT(t, pi.rslot[MU_POOL_CPU], -1);
	mu_pool_quota_t pq[2] = {{.pool = "h100", .deserved = 32000,
				  .limit = MU_RES_UNLIMITED, .weight = -1,
				  .res = MU_POOL_CPU},
				 {.pool = "h100", .deserved = 1,
				  .limit = 0, .weight = -1, .res = MU_POOL_PODS}};
	q.pools = pq;
	q.npools = 2;
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_EINVAL); /* limit < deserved */
	pq[1].deserved = 0;
	pq[1].limit = 1;
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	mu_engine_pool_info(e, 1, &pi);
	int cs = pi.rslot[MU_POOL_CPU], ps = pi.rslot[MU_POOL_PODS];
	CHECK(t, cs >= 0 && ps >= 0 && pi.rslot[MU_POOL_MEM] < 0);
	mu_queue_info_t qi;
	mu_engine_queue_info(e, mu_engine_queue_find(e, "q"), &qi);
	CHECK_EQ_INT(t, qi.used.v[cs], 1000); /* j1's pod, bound before */
	CHECK_EQ_INT(t, qi.deserved.v[cs], 32000);
	CHECK_EQ_INT(t, qi.used.v[ps], 1);
	/* j1 ends: its release takes back what the new slots counted */
	mu_engine_job_finish(e, j1, 20);
	mu_engine_queue_info(e, mu_engine_queue_find(e, "q"), &qi);
	CHECK_EQ_INT(t, qi.used.v[cs], 0);
	CHECK_EQ_INT(t, qi.used.v[ps], 0);
	mu_engine_cycle(e, 20, &d);
	mu_job_info_t ji;
	mu_engine_job_info(e, j2, &ji);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	mu_engine_queue_info(e, mu_engine_queue_find(e, "q"), &qi);
	CHECK_EQ_INT(t, qi.used.v[cs], 1000);
	CHECK_EQ_INT(t, qi.used.v[ps], 1);
	mu_engine_job_finish(e, j2, 30);
	mu_engine_queue_info(e, mu_engine_queue_find(e, "q"), &qi);
	CHECK_EQ_INT(t, qi.used.v[cs], 0);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_membership);
	MU_RUN(&t, test_usage_and_state);
	MU_RUN(&t, test_bound_outside_takes_pool);
	MU_RUN(&t, test_escalation);
	MU_RUN(&t, test_cpu_slot_late);
	return mu_t_done(&t);
}
