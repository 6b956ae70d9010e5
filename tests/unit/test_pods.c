/*
 * test_pods.c - mu_engine_pod_bound(): pods bound outside a cycle (after a
 * restart, or by another scheduler) are accounted, with their devices,
 * and bad calls are refused with the documented errors.
 */
#include <string.h>

#include "check.h"
#include "muster/engine.h"

static mu_engine_t *pods_engine(void)
{
	mu_engine_t *e;
	mu_engine_new(NULL, &e);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n0";
	n.alloc.v[MU_RES_CPU] = 8000;
	n.alloc.v[MU_RES_GPU] = 4;
	n.alloc.v[MU_RES_PODS] = 110;
	mu_engine_node_upsert(e, &n, NULL);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	return e;
}

static mu_id_t pods_job(mu_engine_t *e, const char *name, int replicas, int gpus)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = replicas;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.req.v[MU_RES_GPU] = gpus;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.preemptible = true;
	j.podsets = &ps;
	j.npodsets = 1;
	mu_id_t id = -1;
	mu_engine_job_submit(e, &j, 0, &id);
	return id;
}

static void test_bound_accounted(mu_t_t *t)
{
	mu_engine_t *e = pods_engine();
	mu_id_t a = pods_job(e, "a", 2, 2);
	mu_decision_t dev;
	memset(&dev, 0, sizeof dev);
	dev.gpus = 0xC; /* devices 2 and 3 */
	dev.numa = dev.nic = -1;
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, a, 0, 0, 0, &dev, 0), MU_OK);
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, a, 0, 0, 0, &dev, 0), MU_ESTATE);
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, a, 1, 0, 0, NULL, 0), MU_EINVAL);
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, a, 0, 1, 7, NULL, 0), MU_ENOENT);
	mu_job_info_t ji;
	mu_engine_job_info(e, a, &ji);
	CHECK_EQ_INT(t, ji.bound, 1);
	CHECK_EQ_INT(t, ji.state, MU_JOB_PENDING); /* minMember is 2 */
	/* The second pod asks for devices 2 and 3 too: taken, so the engine
	 * picks 0 and 1 instead. */
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, a, 0, 1, 0, &dev, 0), MU_OK);
	mu_engine_job_info(e, a, &ji);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	mu_res_t alloc, used;
	mu_engine_totals(e, &alloc, &used);
	CHECK_EQ_INT(t, used.v[MU_RES_GPU], 4 * 1000); /* accounting: milli-GPUs */
	/* Nothing is left for another GPU job until a finishes. */
	mu_id_t b = pods_job(e, "b", 1, 1);
	mu_decisions_t d;
	mu_decisions_init(&d);
	mu_engine_cycle(e, 1000, &d);
	mu_engine_job_info(e, b, &ji);
	CHECK_EQ_INT(t, ji.bound, 0);
	mu_engine_job_finish(e, a, 2000);
	d.n = 0;
	mu_engine_cycle(e, 2000, &d);
	mu_engine_job_info(e, b, &ji);
	CHECK_EQ_INT(t, ji.bound, 1);
	mu_decisions_release(&d);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_bound_accounted);
	return mu_t_done(&t);
}
