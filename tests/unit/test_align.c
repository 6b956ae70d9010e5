/*
 * test_align.c - topology inside a node: GPUs aligned to a NUMA node or a
 * link group, a NIC and pinned CPUs beside them, exact devices in the bind
 * decision, nodes filtered out when alignment is impossible, and devices
 * given back on finish.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "muster/engine.h"

/* 2 NUMA nodes (CPUs 0-7 and 8-15, 64 GiB each); GPUs 0-3 on NUMA 0 and
 * 4-7 on NUMA 1, link groups of two (0-1, 2-3, 4-5, 6-7); NICs 0-1 on NUMA
 * 0 and 2-3 on NUMA 1. */
static void dgx_topo(mu_node_topo_spec_t *t)
{
	memset(t, 0, sizeof *t);
	t->nnuma = 2;
	mu_cpuset_parse("0-7", &t->numa[0].cpus);
	mu_cpuset_parse("8-15", &t->numa[1].cpus);
	t->numa[0].memory = t->numa[1].memory = 64LL << 30;
	for (int g = 0; g < MU_MAX_GPUS; g++)
		t->gpu_numa[g] = t->gpu_group[g] = -1;
	for (int g = 0; g < 8; g++) {
		t->gpu_numa[g] = (int8_t)(g / 4);
		t->gpu_group[g] = (int8_t)(g / 2);
	}
	t->nnics = 4;
	for (int i = 0; i < 4; i++)
		t->nic_numa[i] = (int8_t)(i / 2);
}

typedef struct afx {
	mu_engine_t *e;
	mu_decisions_t d;
	mu_podset_spec_t ps[16];
	char names[16][16];
	int n;
} afx_t;

static void afx_init(afx_t *f, bool with_topo)
{
	memset(f, 0, sizeof *f);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	mu_engine_new(&cfg, &f->e);
	mu_decisions_init(&f->d);
	static mu_node_topo_spec_t topo;
	dgx_topo(&topo);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "dgx";
	n.alloc.v[MU_RES_CPU] = 16000;
	n.alloc.v[MU_RES_MEM] = 128LL << 30;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	n.topo = with_topo ? &topo : NULL;
	mu_engine_node_upsert(f->e, &n, NULL);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(f->e, &q);
}

static mu_id_t afx_job(afx_t *f, int gpus, int cpus, mu_align_t align, bool nic,
		       bool pin)
{
	int i = f->n++;
	snprintf(f->names[i], sizeof f->names[i], "p%d", i);
	mu_podset_spec_t *ps = &f->ps[i];
	memset(ps, 0, sizeof *ps);
	ps->replicas = 1;
	ps->req.v[MU_RES_GPU] = gpus;
	ps->req.v[MU_RES_CPU] = cpus * 1000LL;
	ps->req.v[MU_RES_MEM] = 8LL << 30;
	ps->align = align;
	ps->want_nic = nic;
	ps->pin_cpus = pin;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = f->names[i];
	j.queue = "q";
	j.preemptible = true;
	j.podsets = ps;
	j.npodsets = 1;
	mu_id_t id = -1;
	mu_engine_job_submit(f->e, &j, 0, &id);
	return id;
}

/* The bind decision of job in the last cycle, or NULL. */
static const mu_decision_t *afx_bind(afx_t *f, mu_id_t job)
{
	f->d.n = 0;
	mu_engine_cycle(f->e, 0, &f->d);
	for (size_t i = 0; i < f->d.n; i++)
		if (f->d.v[i].kind == MU_DEC_BIND && f->d.v[i].job == job)
			return &f->d.v[i];
	return NULL;
}

static void afx_free(afx_t *f)
{
	mu_decisions_release(&f->d);
	mu_engine_free(f->e);
}

static void test_link_group_nic_cpus(mu_t_t *t)
{
	afx_t f;
	afx_init(&f, true);
	mu_id_t a = afx_job(&f, 2, 4, MU_ALIGN_LINK, true, true);
	const mu_decision_t *d = afx_bind(&f, a);
	CHECK(t, d != NULL);
	if (d) {
		CHECK_EQ_INT(t, d->gpus, 0x03);
		CHECK_EQ_INT(t, d->numa, 0);
		CHECK_EQ_INT(t, d->nic, 0);
		char cpus[64];
		mu_cpuset_format(&d->cpus, cpus, sizeof cpus);
		CHECK_STR(t, cpus, "0-3");
	}
	/* The tightest NUMA node that holds 2 GPUs is NUMA 0 (2 left). */
	mu_id_t b = afx_job(&f, 2, 2, MU_ALIGN_NUMA, true, true);
	d = afx_bind(&f, b);
	CHECK(t, d != NULL);
	if (d) {
		CHECK_EQ_INT(t, d->gpus, 0x0c);
		CHECK_EQ_INT(t, d->nic, 1);
		char cpus[64];
		mu_cpuset_format(&d->cpus, cpus, sizeof cpus);
		CHECK_STR(t, cpus, "4-5");
	}
	/* NUMA 0 has no NIC left: a NIC-wanting pod goes to NUMA 1. */
	mu_id_t c = afx_job(&f, 0, 2, MU_ALIGN_NONE, true, true);
	d = afx_bind(&f, c);
	CHECK(t, d != NULL);
	if (d) {
		CHECK_EQ_INT(t, d->numa, 1);
		CHECK_EQ_INT(t, d->nic, 2);
	}
	afx_free(&f);
}

static void test_alignment_impossible(mu_t_t *t)
{
	afx_t f;
	afx_init(&f, true);
	mu_id_t u1 = afx_job(&f, 1, 1, MU_ALIGN_NONE, false, false); /* GPU 0 */
	mu_id_t u2 = afx_job(&f, 1, 1, MU_ALIGN_NONE, false, false); /* GPU 1 */
	f.d.n = 0;
	mu_engine_cycle(f.e, 0, &f.d);
	(void)u1;
	(void)u2;
	/* 6 GPUs free, but no NUMA node has 5. */
	mu_id_t big = afx_job(&f, 5, 1, MU_ALIGN_NUMA, false, false);
	CHECK(t, afx_bind(&f, big) == NULL);
	mu_job_info_t info;
	mu_engine_job_info(f.e, big, &info);
	CHECK_EQ_INT(t, info.last.fail[MU_F_ALIGN], 1);
	char msg[256];
	mu_reason_format(f.e, &info.last, msg, sizeof msg);
	CHECK(t, strstr(msg, "1 node(s) could not align GPUs, NIC and CPUs") != NULL);
	/* Without alignment the same pod fits. */
	mu_id_t loose = afx_job(&f, 5, 1, MU_ALIGN_NONE, false, false);
	CHECK(t, afx_bind(&f, loose) != NULL);
	afx_free(&f);
}

static void test_no_topology_node(mu_t_t *t)
{
	afx_t f;
	afx_init(&f, false);
	mu_id_t a = afx_job(&f, 1, 1, MU_ALIGN_NUMA, false, false);
	CHECK(t, afx_bind(&f, a) == NULL);
	mu_id_t b = afx_job(&f, 1, 1, MU_ALIGN_NONE, false, false);
	CHECK(t, afx_bind(&f, b) != NULL);
	afx_free(&f);
}

static void test_pinned_cpus_run_out_and_return(mu_t_t *t)
{
	afx_t f;
	afx_init(&f, true);
	mu_id_t a = afx_job(&f, 0, 8, MU_ALIGN_NONE, false, true);
	mu_id_t b = afx_job(&f, 0, 8, MU_ALIGN_NONE, false, true);
	f.d.n = 0;
	mu_engine_cycle(f.e, 0, &f.d);
	mu_job_info_t ia, ib;
	mu_engine_job_info(f.e, a, &ia);
	mu_engine_job_info(f.e, b, &ib);
	CHECK_EQ_INT(t, ia.bound + ib.bound, 2);
	mu_id_t c = afx_job(&f, 0, 1, MU_ALIGN_NONE, false, true);
	CHECK(t, afx_bind(&f, c) == NULL); /* every CPU is pinned */
	mu_engine_job_finish(f.e, a, 1);
	f.d.n = 0;
	mu_engine_cycle(f.e, 1, &f.d);
	mu_job_info_t ic;
	mu_engine_job_info(f.e, c, &ic);
	CHECK_EQ_INT(t, ic.bound, 1);
	/* Not-pinned pods are unaffected by pinning beyond the CPU count. */
	afx_free(&f);
}

static void test_pin_needs_whole_cpus(mu_t_t *t)
{
	afx_t f;
	afx_init(&f, true);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 1500;
	ps.pin_cpus = true;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = "half";
	j.queue = "q";
	j.podsets = &ps;
	j.npodsets = 1;
	CHECK_EQ_INT(t, mu_engine_job_submit(f.e, &j, 0, NULL), MU_EINVAL);
	afx_free(&f);
}

static void test_cpuset_text(mu_t_t *t)
{
	mu_cpuset_t s;
	CHECK_EQ_INT(t, mu_cpuset_parse("0-3,8,10-11\n", &s), MU_OK);
	CHECK_EQ_INT(t, mu_cpuset_count(&s), 7);
	char buf[64];
	mu_cpuset_format(&s, buf, sizeof buf);
	CHECK_STR(t, buf, "0-3,8,10-11");
	CHECK_EQ_INT(t, mu_cpuset_parse("3-1", &s), MU_EPARSE);
	CHECK_EQ_INT(t, mu_cpuset_parse("0-100000", &s), MU_ERANGE);
	CHECK_EQ_INT(t, mu_cpuset_parse("1,,2", &s), MU_EPARSE);
	CHECK_EQ_INT(t, mu_cpuset_parse("", &s), MU_OK);
	CHECK_EQ_INT(t, mu_cpuset_count(&s), 0);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_link_group_nic_cpus);
	MU_RUN(&t, test_alignment_impossible);
	MU_RUN(&t, test_no_topology_node);
	MU_RUN(&t, test_pinned_cpus_run_out_and_return);
	MU_RUN(&t, test_pin_needs_whole_cpus);
	MU_RUN(&t, test_cpuset_text);
	return mu_t_done(&t);
}
