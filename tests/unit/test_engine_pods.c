/*
 * test_engine_pods.c - pods bound outside the cycle, through the public
 * API only: mu_engine_pod_bound() accounts a pod on its node (queue and
 * cluster usage, free devices a cycle then avoids, the job's state), with
 * exact devices or the engine's choice, and refuses a double bind, ids out
 * of range and device masks that are wrong or taken, changing nothing;
 * mu_engine_pod_unbind() and mu_engine_job_finish() give the room back so
 * that another job is placed by the next cycle, and an unbound pod is
 * placed again.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

#define GI (1024LL * 1024 * 1024)

typedef struct fx {
	mu_engine_t *e;
	mu_decisions_t d;
	mu_id_t n0;
} fx_t;

/* An engine without preemption (so that only freed room lets a job in),
 * one queue "q" and node n0: 8 GPUs, 64 CPUs. */
static void fx_init(fx_t *f)
{
	memset(f, 0, sizeof *f);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = cfg.consolidate = false;
	mu_engine_new(&cfg, &f->e);
	mu_decisions_init(&f->d);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n0";
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 256 * GI;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	mu_engine_node_upsert(f->e, &n, &f->n0);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(f->e, &q);
}

static void fx_release(fx_t *f)
{
	mu_decisions_release(&f->d);
	mu_engine_free(f->e);
}

/* Submits job name: pods x (gpus whole GPUs, or milli of one when gpus is
 * 0 and milli > 0), 4 CPUs each; min_member 0 means all pods. */
static mu_id_t job(fx_t *f, const char *name, int pods, int gpus, int milli,
		   int min_member, int priority)
{
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.name = "main";
	ps.replicas = pods;
	ps.req.v[MU_RES_GPU] = gpus;
	ps.req.v[MU_RES_GPU_MILLI] = milli;
	ps.req.v[MU_RES_CPU] = 4000;
	ps.req.v[MU_RES_MEM] = 8 * GI;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.podsets = &ps;
	j.npodsets = 1;
	j.min_member = min_member;
	j.priority = priority;
	j.preemptible = true;
	j.submit = MU_TIME_NONE;
	mu_id_t id = -1;
	if (mu_engine_job_submit(f->e, &j, 0, &id) != MU_OK)
		return -1;
	return id;
}

static mu_decision_t gpus(uint64_t mask)
{
	mu_decision_t d;
	memset(&d, 0, sizeof d);
	d.gpus = mask;
	d.numa = d.nic = -1;
	return d;
}

static mu_job_info_t info(const fx_t *f, mu_id_t j)
{
	mu_job_info_t ji;
	memset(&ji, 0, sizeof ji);
	mu_engine_job_info(f->e, j, &ji);
	return ji;
}

/* Queue q's usage of resource r (accounting units: GPU in milli). */
static int64_t qused(const fx_t *f, int r)
{
	mu_queue_info_t qi;
	memset(&qi, 0, sizeof qi);
	mu_engine_queue_info(f->e, mu_engine_queue_find(f->e, "q"), &qi);
	return qi.used.v[r];
}

static int64_t total_used(const fx_t *f, int r)
{
	mu_res_t alloc, used;
	mu_engine_totals(f->e, &alloc, &used);
	return used.v[r];
}

/* Runs a cycle at now into a fresh f->d; returns its binds. */
static int cycle(fx_t *f, mu_time_t now)
{
	f->d.n = 0;
	if (mu_engine_cycle(f->e, now, &f->d) != MU_OK)
		return -1;
	int binds = 0;
	for (size_t i = 0; i < f->d.n; i++)
		binds += f->d.v[i].kind == MU_DEC_BIND;
	return binds;
}

/* The cycle's bind of job j, or NULL. */
static const mu_decision_t *bind_of(const fx_t *f, mu_id_t j)
{
	for (size_t i = 0; i < f->d.n; i++)
		if (f->d.v[i].kind == MU_DEC_BIND && f->d.v[i].job == j)
			return &f->d.v[i];
	return NULL;
}

/* The cycle's pending decision of job j, or NULL. */
static const mu_decision_t *pending_of(const fx_t *f, mu_id_t j)
{
	for (size_t i = 0; i < f->d.n; i++)
		if (f->d.v[i].kind == MU_DEC_PENDING && f->d.v[i].job == j)
			return &f->d.v[i];
	return NULL;
}

/* A gang of two recorded pod by pod: accounted at once, running from the
 * given start once both are in; the next cycle binds nothing of it and
 * gives another job exactly the GPUs left. */
static void test_bound_accounted(mu_t_t *t)
{
	fx_t f;
	fx_init(&f);
	mu_id_t a = job(&f, "a", 2, 2, 0, 0, 0);
	CHECK(t, a >= 0);
	mu_decision_t d = gpus(0x30);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 0, f.n0, &d, 5), MU_OK);
	mu_job_info_t ji = info(&f, a);
	CHECK_EQ_INT(t, ji.bound, 1);
	CHECK_EQ_INT(t, ji.state, MU_JOB_PENDING); /* 1 of minMember 2 */
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 2000);
	CHECK_EQ_INT(t, qused(&f, MU_RES_CPU), 4000);
	CHECK_EQ_INT(t, qused(&f, MU_RES_PODS), 1);
	CHECK_EQ_INT(t, total_used(&f, MU_RES_GPU), 2000);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, a, 0, 0), f.n0);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, a, 0, 1), -1);
	/* no devices named: the engine chooses (the lowest free, 0-1) */
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, NULL, 7), MU_OK);
	ji = info(&f, a);
	CHECK_EQ_INT(t, ji.bound, 2);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, ji.start, 7);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 4000);
	CHECK_EQ_INT(t, total_used(&f, MU_RES_GPU), 4000);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, a, 0, 1), f.n0);
	/* the four GPUs left are 2, 3, 6 and 7 */
	mu_id_t b = job(&f, "b", 1, 4, 0, 0, 0);
	CHECK_EQ_INT(t, cycle(&f, 10), 1);
	const mu_decision_t *x = bind_of(&f, b);
	CHECK(t, x != NULL);
	if (x)
		CHECK_EQ_INT(t, x->gpus, 0xcc);
	CHECK(t, bind_of(&f, a) == NULL);
	/* and the node is full */
	mu_id_t c = job(&f, "c", 1, 1, 0, 0, 0);
	CHECK_EQ_INT(t, cycle(&f, 11), 0);
	x = pending_of(&f, c);
	CHECK(t, x != NULL);
	if (x) {
		CHECK_EQ_INT(t, x->reason.why, MU_WHY_UNSCHEDULABLE);
		CHECK_EQ_INT(t, x->reason.fail[MU_F_GPU], 1);
	}
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 8000);
	fx_release(&f);
}

/* Refusals: each with its code, and none changes anything. */
static void test_bound_refused(mu_t_t *t)
{
	fx_t f;
	fx_init(&f);
	mu_id_t a = job(&f, "a", 2, 2, 0, 0, 0);
	mu_id_t s = job(&f, "s", 1, 0, 500, 0, 0);
	mu_id_t s2 = job(&f, "s2", 1, 0, 600, 0, 0);
	mu_id_t c = job(&f, "c", 1, 0, 0, 0, 0);
	mu_decision_t d = gpus(0x03);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 0, f.n0, &d, 1), MU_OK);
	d = gpus(0x0c);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 0, f.n0, &d, 1), MU_ESTATE); /* twice */
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 0, f.n0, NULL, 1), MU_ESTATE);
	d = gpus(0x03);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_ESTATE); /* held */
	d = gpus(0x06);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_ESTATE); /* one held */
	d = gpus(0x04);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_EINVAL); /* 1 of 2 */
	d = gpus(0x1c);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_EINVAL); /* 3 of 2 */
	d = gpus(0x300);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_EINVAL); /* 8-9 of 0-7 */
	d = gpus(0x0c);
	d.numa = 0;
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_EINVAL); /* not aligned */
	d = gpus(0x0c);
	d.nic = 0;
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_EINVAL);
	d = gpus(0x0c);
	d.cpus.w[0] = 0xf;
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 1), MU_EINVAL);
	d = gpus(0x01);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, c, 0, 0, f.n0, &d, 1), MU_EINVAL); /* no GPU asked */
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, s, 0, 0, f.n0, &d, 1), MU_ESTATE); /* GPU 0 whole */
	d = gpus(0x30);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, s, 0, 0, f.n0, &d, 1), MU_EINVAL); /* a share: 1 */
	/* ids */
	d = gpus(0x0c);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, 99, 0, 1, f.n0, &d, 1), MU_ENOENT);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, -1, 0, 1, f.n0, &d, 1), MU_ENOENT);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, 99, &d, 1), MU_ENOENT);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 1, 1, f.n0, &d, 1), MU_EINVAL);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 2, f.n0, &d, 1), MU_EINVAL);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, -1, f.n0, &d, 1), MU_EINVAL);
	/* nothing of that was recorded */
	CHECK_EQ_INT(t, info(&f, a).bound, 1);
	CHECK_EQ_INT(t, info(&f, s).bound, 0);
	CHECK_EQ_INT(t, info(&f, c).bound, 0);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 2000);
	CHECK_EQ_INT(t, total_used(&f, MU_RES_GPU), 2000);
	/* shares of one device: 500 + 500 fit, 500 + 600 do not */
	d = gpus(0x10);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, s, 0, 0, f.n0, &d, 1), MU_OK);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, s2, 0, 0, f.n0, &d, 1), MU_ESTATE);
	d = gpus(0x20);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, s2, 0, 0, f.n0, &d, 1), MU_OK);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 3100);
	/* a finished job, a removed node */
	CHECK_EQ_INT(t, mu_engine_job_finish(f.e, a, 2), MU_OK);
	d = gpus(0x0c);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 1, f.n0, &d, 2), MU_ESTATE);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 1100);
	CHECK_EQ_INT(t, mu_engine_node_remove(f.e, "n0", 3), MU_OK);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, c, 0, 0, f.n0, NULL, 3), MU_ENOENT);
	fx_release(&f);
}

/* 2 NUMA nodes (CPUs 0-7, 8-15); GPUs 0-3 on NUMA 0, 4-7 on NUMA 1; NICs
 * 0-1 on NUMA 0, 2-3 on NUMA 1. */
static void dgx_topo(mu_node_topo_spec_t *tp)
{
	memset(tp, 0, sizeof *tp);
	tp->nnuma = 2;
	mu_cpuset_parse("0-7", &tp->numa[0].cpus);
	mu_cpuset_parse("8-15", &tp->numa[1].cpus);
	tp->numa[0].memory = tp->numa[1].memory = 64 * GI;
	for (int g = 0; g < MU_MAX_GPUS; g++)
		tp->gpu_numa[g] = tp->gpu_group[g] = -1;
	for (int g = 0; g < 8; g++) {
		tp->gpu_numa[g] = (int8_t)(g / 4);
		tp->gpu_group[g] = (int8_t)(g / 2);
	}
	tp->nnics = 4;
	for (int i = 0; i < 4; i++)
		tp->nic_numa[i] = (int8_t)(i / 2);
}

/* An aligned pod with its NUMA node, NIC and pinned CPUs: they are taken
 * exactly, and a cycle places the next one around them. */
static void test_bound_aligned(mu_t_t *t)
{
	fx_t f;
	fx_init(&f);
	mu_node_topo_spec_t tp;
	dgx_topo(&tp);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "dgx";
	n.alloc.v[MU_RES_CPU] = 16000;
	n.alloc.v[MU_RES_MEM] = 128 * GI;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	n.topo = &tp;
	mu_id_t dgx;
	CHECK_EQ_INT(t, mu_engine_node_upsert(f.e, &n, &dgx), MU_OK);
	mu_engine_node_remove(f.e, "n0", 0);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_GPU] = 2;
	ps.req.v[MU_RES_CPU] = 4000;
	ps.req.v[MU_RES_MEM] = 8 * GI;
	ps.align = MU_ALIGN_NUMA;
	ps.want_nic = ps.pin_cpus = true;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.queue = "q";
	j.podsets = &ps;
	j.npodsets = 1;
	j.preemptible = true;
	j.submit = MU_TIME_NONE;
	mu_id_t a, b;
	j.name = "a";
	CHECK_EQ_INT(t, mu_engine_job_submit(f.e, &j, 0, &a), MU_OK);
	j.name = "b";
	CHECK_EQ_INT(t, mu_engine_job_submit(f.e, &j, 0, &b), MU_OK);
	mu_decision_t d = gpus(0x30);
	d.numa = 1;
	d.nic = 2;
	mu_cpuset_parse("8-11", &d.cpus);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, a, 0, 0, dgx, &d, 1), MU_OK);
	/* b cannot claim what a holds, nor what the node lacks */
	mu_decision_t e = gpus(0xc0);
	e.numa = 1;
	e.nic = 2;
	mu_cpuset_parse("12-15", &e.cpus);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, b, 0, 0, dgx, &e, 1), MU_ESTATE); /* NIC 2 */
	e.nic = 3;
	mu_cpuset_parse("10-13", &e.cpus);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, b, 0, 0, dgx, &e, 1), MU_ESTATE); /* CPUs 10-11 */
	mu_cpuset_parse("12", &e.cpus);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, b, 0, 0, dgx, &e, 1), MU_EINVAL); /* 1 CPU of 4 */
	mu_cpuset_parse("20-23", &e.cpus);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, b, 0, 0, dgx, &e, 1), MU_EINVAL); /* no such CPUs */
	mu_cpuset_parse("12-15", &e.cpus);
	e.nic = 4;
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, b, 0, 0, dgx, &e, 1), MU_EINVAL); /* no NIC 4 */
	e.nic = 3;
	e.numa = 2;
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, b, 0, 0, dgx, &e, 1), MU_EINVAL); /* no NUMA 2 */
	CHECK_EQ_INT(t, info(&f, b).bound, 0);
	/* the cycle puts b on NUMA 1 too (the tighter one), around a */
	CHECK_EQ_INT(t, cycle(&f, 2), 1);
	const mu_decision_t *x = bind_of(&f, b);
	CHECK(t, x != NULL);
	if (x) {
		CHECK_EQ_INT(t, x->numa, 1);
		CHECK_EQ_INT(t, x->gpus, 0xc0);
		CHECK_EQ_INT(t, x->nic, 3);
		char buf[64];
		mu_cpuset_format(&x->cpus, buf, sizeof buf);
		CHECK_STR(t, buf, "12-15");
	}
	fx_release(&f);
}

/* A bind taken back frees the node for a job of higher priority; when
 * that one finishes, the unbound pod is placed again. */
static void test_unbind_gives_back(mu_t_t *t)
{
	fx_t f;
	fx_init(&f);
	mu_id_t low = job(&f, "low", 1, 8, 0, 0, 0);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, low, 0, 0, f.n0, NULL, 1), MU_OK);
	CHECK_EQ_INT(t, info(&f, low).state, MU_JOB_RUNNING);
	mu_id_t high = job(&f, "high", 1, 8, 0, 0, 10);
	CHECK_EQ_INT(t, cycle(&f, 2), 0); /* full, and no preemption */
	CHECK(t, pending_of(&f, high) != NULL);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, low, 0, 0, 3), MU_OK);
	mu_job_info_t ji = info(&f, low);
	CHECK_EQ_INT(t, ji.state, MU_JOB_PENDING);
	CHECK_EQ_INT(t, ji.bound, 0);
	CHECK_EQ_INT(t, mu_engine_pod_node(f.e, low, 0, 0), -1);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 0);
	CHECK_EQ_INT(t, qused(&f, MU_RES_CPU), 0);
	CHECK_EQ_INT(t, total_used(&f, MU_RES_GPU), 0);
	/* refusals */
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, low, 0, 0, 3), MU_ESTATE);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, 99, 0, 0, 3), MU_ENOENT);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, low, 1, 0, 3), MU_EINVAL);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, low, 0, 1, 3), MU_EINVAL);
	/* the room goes to the higher priority */
	CHECK_EQ_INT(t, cycle(&f, 4), 1);
	const mu_decision_t *x = bind_of(&f, high);
	CHECK(t, x != NULL);
	if (x)
		CHECK_EQ_INT(t, x->gpus, 0xff);
	CHECK(t, pending_of(&f, low) != NULL);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 8000);
	/* a job finished gives it back as well; low is placed again */
	CHECK_EQ_INT(t, mu_engine_job_finish(f.e, high, 5), MU_OK);
	CHECK_EQ_INT(t, cycle(&f, 6), 1);
	CHECK(t, bind_of(&f, low) != NULL);
	ji = info(&f, low);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, ji.start, 6);
	CHECK_EQ_INT(t, mu_engine_job_finish(f.e, high, 7), MU_ESTATE);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, high, 0, 0, 7), MU_ESTATE);
	fx_release(&f);
}

/* A gang member taken back: the gang waits again with its other pod
 * bound, and the next cycle places just the missing one.  An elastic job
 * above its minimum keeps running, and a pod taken back can be recorded
 * again. */
static void test_unbind_members(mu_t_t *t)
{
	fx_t f;
	fx_init(&f);
	mu_id_t g = job(&f, "g", 2, 4, 0, 0, 0);
	mu_decision_t d = gpus(0x0f);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, g, 0, 0, f.n0, &d, 1), MU_OK);
	d = gpus(0xf0);
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, g, 0, 1, f.n0, &d, 1), MU_OK);
	CHECK_EQ_INT(t, info(&f, g).state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, g, 0, 1, 2), MU_OK);
	mu_job_info_t ji = info(&f, g);
	CHECK_EQ_INT(t, ji.state, MU_JOB_PENDING);
	CHECK_EQ_INT(t, ji.bound, 1);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 4000);
	CHECK_EQ_INT(t, cycle(&f, 3), 1);
	const mu_decision_t *x = bind_of(&f, g);
	CHECK(t, x != NULL);
	if (x) {
		CHECK_EQ_INT(t, x->pod, 1);
		CHECK_EQ_INT(t, x->gpus, 0xf0);
	}
	ji = info(&f, g);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, ji.bound, 2);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 8000);
	CHECK_EQ_INT(t, mu_engine_job_finish(f.e, g, 4), MU_OK);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 0);
	mu_id_t el = job(&f, "el", 3, 1, 0, 1, 0);
	for (int p = 0; p < 3; p++)
		CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, el, 0, p, f.n0, NULL, 5), MU_OK);
	CHECK_EQ_INT(t, mu_engine_pod_unbind(f.e, el, 0, 2, 6), MU_OK);
	ji = info(&f, el);
	CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	CHECK_EQ_INT(t, ji.bound, 2);
	CHECK_EQ_INT(t, ji.start, 5);
	d = gpus(0x80); /* recorded again after being taken back */
	CHECK_EQ_INT(t, mu_engine_pod_bound(f.e, el, 0, 2, f.n0, &d, 6), MU_OK);
	CHECK_EQ_INT(t, info(&f, el).bound, 3);
	CHECK_EQ_INT(t, qused(&f, MU_RES_GPU), 3000);
	CHECK_EQ_INT(t, total_used(&f, MU_RES_GPU), 3000);
	CHECK_EQ_INT(t, cycle(&f, 7), 0);
	fx_release(&f);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_bound_accounted);
	MU_RUN(&t, test_bound_refused);
	MU_RUN(&t, test_bound_aligned);
	MU_RUN(&t, test_unbind_gives_back);
	MU_RUN(&t, test_unbind_members);
	return mu_t_done(&t);
}
