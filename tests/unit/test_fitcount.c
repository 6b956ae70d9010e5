/*
 * test_fitcount.c - the fit counts (fitcount.c) give exactly the counts a
 * scan of the class's nodes gives.
 *
 * test_fitcount_exact: 700 nodes of varied CPU, memory, GPUs and pod room,
 * made busy to different degrees by random one-pod jobs; for random
 * requests (whole GPUs, GPU shares, CPU-only, pods), mu__fcount's counts
 * by first failing filter must equal mu__nfree_filter counted over every
 * class node: right after the snapshot, after running jobs end (the
 * snapshot corrected from the change log, not rebuilt: checked), and
 * after more cycles.  A count that a subtree rule or the correction gets
 * wrong fails it.
 *
 * test_fitcount_twin: two engines, fit counts used for every class (e->
 * fcount_min 1) and never (INT32_MAX), run the same varied backlog through
 * cycles with jobs ending and arriving; every decision, the pending
 * reasons' per-filter counts included, must be the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "engine/engine_int.h"
#include "muster/engine.h"

#define S 1000 /* ms */
#define NNODES 700

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static mu_engine_t *engine(void)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = cfg.consolidate = false;
	cfg.min_runtime = 0;
	mu_engine_t *e = NULL;
	if (mu_engine_new(&cfg, &e) != MU_OK)
		return NULL;
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "q";
	mu_engine_queue_upsert(e, &q);
	return e;
}

/* Node i: 16-96 CPUs, 64-512 GiB, 0/2/4/8 GPUs, 8 or 110 pods. */
static void add_varied_node(mu_engine_t *e, int i)
{
	char name[16];
	snprintf(name, sizeof name, "n%05d", i);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = name;
	n.alloc.v[MU_RES_CPU] = 16000 + (i * 7919 % 81) * 1000;
	n.alloc.v[MU_RES_MEM] = (64LL + i * 104729 % 449) << 30;
	n.alloc.v[MU_RES_GPU] = (int64_t[]){0, 2, 4, 8}[i % 4];
	n.alloc.v[MU_RES_PODS] = i % 5 == 0 ? 8 : 110;
	mu_engine_node_upsert(e, &n, NULL);
}

/* A random request: CPU and memory of any size, and sometimes whole GPUs
 * or a share of one. */
static void random_req(uint64_t *s, mu_res_t *req)
{
	memset(req, 0, sizeof *req);
	req->v[MU_RES_CPU] = 100 + (int64_t)(next(s) % 40000);
	req->v[MU_RES_MEM] = (int64_t)(next(s) % (200ULL << 30));
	req->v[MU_RES_PODS] = 1;
	switch (next(s) % 4) {
	case 0: req->v[MU_RES_GPU] = 1 + (int64_t)(next(s) % 8); break;
	case 1: req->v[MU_RES_GPU_MILLI] = 100 + (int64_t)(next(s) % 900); break;
	default: break;
	}
}

static int submit(mu_engine_t *e, int k, mu_time_t now, const mu_res_t *req)
{
	char name[16];
	snprintf(name, sizeof name, "j%06d", k);
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.replicas = 1;
	ps.req = *req;
	ps.req.v[MU_RES_PODS] = 0;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = name;
	j.queue = "q";
	j.type = MU_JOB_BATCH;
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = now;
	j.runtime_estimate = 3600 * S;
	j.preemptible = true;
	return mu_engine_job_submit(e, &j, now, NULL);
}

/* The class holding every node (refreshed), or NULL. */
static mu__sclass_t *all_class(mu_engine_t *e)
{
	for (int32_t i = 0; i < e->nclasses; i++) {
		mu__sclass_t *c = &e->classes[i];
		if (mu__sclass_refresh(e, c) == MU_OK && c->nnodes == NNODES)
			return c;
	}
	return NULL;
}

/* Whether mu__fcount answers n random requests as a scan does. */
static bool counts_agree(mu_t_t *t, mu_engine_t *e, mu__sclass_t *c, uint64_t *s, int n)
{
	bool agree = true;
	for (int q = 0; q < n; q++) {
		mu_res_t req;
		random_req(s, &req);
		int32_t want[MU_F_COUNT + 1] = {0}, got[MU_F_COUNT] = {0}, fit = -1;
		for (int32_t i = 0; i < c->nnodes; i++)
			want[mu__nfree_filter(&e->nfree[c->nodes[i]], &req)]++;
		CHECK(t, mu__fcount(e, c, &req, got, &fit) == MU_OK);
		bool same = fit == want[MU_F_COUNT] &&
			    memcmp(got, want, sizeof got) == 0;
		if (!same && agree)
			fprintf(stderr, "fitcount: request %lld cpu %lld mem %lld gpu %lld milli: "
				"cpu %d/%d mem %d/%d gpu %d/%d pods %d/%d fit %d/%d (got/want)\n",
				(long long)req.v[MU_RES_CPU], (long long)req.v[MU_RES_MEM],
				(long long)req.v[MU_RES_GPU], (long long)req.v[MU_RES_GPU_MILLI],
				got[MU_F_CPU], want[MU_F_CPU], got[MU_F_MEM], want[MU_F_MEM],
				got[MU_F_GPU], want[MU_F_GPU], got[MU_F_PODS], want[MU_F_PODS],
				fit, want[MU_F_COUNT]);
		agree = agree && same;
	}
	return agree;
}

static void test_fitcount_exact(mu_t_t *t)
{
	mu_engine_t *e = engine();
	CHECK(t, e != NULL);
	if (!e)
		return;
	mu_decisions_t d;
	mu_decisions_init(&d);
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < NNODES; i++)
		add_varied_node(e, i);
	bool ok = true;
	int k = 0;
	for (; ok && k < 3000; k++) {
		mu_res_t req;
		random_req(&s, &req);
		req.v[MU_RES_CPU] /= 4; /* small enough that most start */
		req.v[MU_RES_MEM] /= 4;
		ok = submit(e, k, 0, &req) == MU_OK;
	}
	ok = ok && mu_engine_cycle(e, 0, &d) == MU_OK;
	CHECK(t, ok);
	CHECK(t, e->nindexes > 0); /* a change log is kept */
	mu__sclass_t *c = all_class(e);
	CHECK(t, c != NULL);
	if (!ok || !c || !e->nindexes)
		goto out;
	CHECK(t, counts_agree(t, e, c, &s, 400));
	/* Jobs end: the snapshot is corrected, not rebuilt. */
	uint64_t pos = mu__fcount_pos(c->fc);
	for (int i = 0; ok && i < 40; i++)
		ok = mu_engine_job_finish(e, (mu_id_t)(next(&s) % 2000), S) != MU_EINVAL;
	CHECK(t, pos != UINT64_MAX && e->chlog_base + (uint64_t)e->nchlog > pos); /* something changed */
	CHECK(t, counts_agree(t, e, c, &s, 10));
	CHECK(t, mu__fcount_pos(c->fc) == pos);
	CHECK(t, counts_agree(t, e, c, &s, 400)); /* rebuilt on the way */
	/* More cycles, more changes: rebuilt or not, still exact. */
	for (int r = 0; ok && r < 6; r++) {
		for (int i = 0; ok && i < 30; i++)
			mu_engine_job_finish(e, (mu_id_t)(next(&s) % (mu_id_t)k), (r + 2) * S);
		for (int i = 0; ok && i < 50; i++, k++) {
			mu_res_t req;
			random_req(&s, &req);
			ok = submit(e, k, (r + 2) * S, &req) == MU_OK;
		}
		d.n = 0;
		ok = ok && mu_engine_cycle(e, (r + 2) * S, &d) == MU_OK;
		CHECK(t, ok && (c = all_class(e)) != NULL);
		if (!c)
			break;
		CHECK(t, counts_agree(t, e, c, &s, 100));
	}
out:
	mu_decisions_release(&d);
	mu_engine_free(e);
}

static bool dec_equal(const mu_decision_t *a, const mu_decision_t *b)
{
	return a->kind == b->kind && a->job == b->job && a->node == b->node &&
	       a->gpus == b->gpus && a->reason.why == b->reason.why &&
	       a->reason.podset == b->reason.podset &&
	       a->reason.nodes_total == b->reason.nodes_total &&
	       memcmp(a->reason.fail, b->reason.fail, sizeof a->reason.fail) == 0;
}

static void test_fitcount_twin(mu_t_t *t)
{
	mu_engine_t *e[2] = {engine(), engine()};
	mu_decisions_t d[2];
	mu_decisions_init(&d[0]);
	mu_decisions_init(&d[1]);
	bool ok = e[0] && e[1];
	CHECK(t, ok);
	if (ok) {
		e[0]->fcount_min = 1;
		e[1]->fcount_min = INT32_MAX;
	}
	int differ = -1, pending = 0, binds = 0;
	uint64_t s[2];
	for (int w = 0; ok && w < 2; w++) {
		s[w] = 12345;
		for (int i = 0; i < NNODES; i++)
			add_varied_node(e[w], i);
	}
	int k = 0;
	for (int cyc = 0; ok && cyc < 12; cyc++) {
		mu_time_t now = (mu_time_t)cyc * S;
		int k0 = k;
		for (int w = 0; ok && w < 2; w++) {
			k = k0;
			for (int i = 0; cyc > 0 && i < 20; i++)
				mu_engine_job_finish(e[w], (mu_id_t)(next(&s[w]) % (uint64_t)k), now);
			for (int i = 0; ok && i < (cyc == 0 ? 3000 : 100); i++, k++) {
				mu_res_t req;
				random_req(&s[w], &req);
				ok = submit(e[w], k, now, &req) == MU_OK;
			}
			d[w].n = 0;
			ok = ok && mu_engine_cycle(e[w], now, &d[w]) == MU_OK;
		}
		bool same = ok && d[0].n == d[1].n;
		for (size_t i = 0; same && i < d[0].n; i++)
			same = dec_equal(&d[0].v[i], &d[1].v[i]);
		if (!same && differ < 0)
			differ = cyc;
		for (size_t i = 0; i < d[0].n; i++) {
			pending += d[0].v[i].kind == MU_DEC_PENDING && d[0].v[i].reason.podset >= 0;
			binds += d[0].v[i].kind == MU_DEC_BIND;
		}
	}
	CHECK(t, ok);
	CHECK(t, e[0] && e[0]->classes && e[0]->classes[0].fc != NULL); /* it was used */
	CHECK(t, pending > 1000 && binds > 500); /* the run is what it claims */
	if (differ >= 0)
		fprintf(stderr, "fitcount twin: decisions differ at cycle %d\n", differ);
	CHECK_EQ_INT(t, differ, -1);
	for (int w = 0; w < 2; w++) {
		mu_decisions_release(&d[w]);
		mu_engine_free(e[w]);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_fitcount_exact);
	MU_RUN(&t, test_fitcount_twin);
	return mu_t_done(&t);
}
