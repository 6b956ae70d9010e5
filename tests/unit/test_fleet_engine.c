/*
 * test_fleet_engine.c - the hub queues do what the engine does beyond the
 * order (round 12): non-preemptible jobs kept within their queue's
 * deserved quota, and time-decayed usage (usage_half_life), each given
 * both to one engine and to a fleet of one cluster with the same node,
 * which must agree; and reclaim across clusters on the fleet's model
 * (mu_fleet_reclaim): victims only from queues above their deserved
 * quota, never past the line, the fewest on one cluster, each once, none
 * before the minimum runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/fleet.h"
#include "fleet_fixture.h"

#define MAXJ 64

/* Jobs kept alive for both sides: one pod of `gpus` GPUs each. */
typedef struct jobs {
	mu_podset_spec_t ps[MAXJ];
	mu_job_spec_t js[MAXJ];
	mu_fleet_job_spec_t fs[MAXJ];
	char names[MAXJ][16];
	int n;
} jobs_t;

static int add_job(jobs_t *w, const char *queue, int gpus, bool preemptible, mu_time_t submit)
{
	int i = w->n++;
	snprintf(w->names[i], sizeof w->names[i], "j%d", i);
	memset(&w->ps[i], 0, sizeof w->ps[i]);
	w->ps[i].name = "main";
	w->ps[i].replicas = 1;
	w->ps[i].req.v[MU_RES_CPU] = 1000;
	w->ps[i].req.v[MU_RES_GPU] = gpus;
	memset(&w->js[i], 0, sizeof w->js[i]);
	w->js[i].name = w->names[i];
	w->js[i].queue = queue;
	w->js[i].podsets = &w->ps[i];
	w->js[i].npodsets = 1;
	w->js[i].submit = submit;
	w->js[i].runtime_estimate = 10 * HOUR;
	w->js[i].preemptible = preemptible;
	w->fs[i] = (mu_fleet_job_spec_t){.job = &w->js[i]};
	return i;
}

/* --- the engine and the hub side by side ---------------------------------- */

typedef struct pair {
	mu_engine_t *e;
	mu_fleet_t *f;
	int32_t cid;
	mu_id_t eid[MAXJ], fid[MAXJ];
	char eseq[MAXJ + 1], fseq[MAXJ + 1]; /* the queue letter of every start */
	int ne, nf;
} pair_t;

/* preempt: the engine preempts and reclaims (the hub's mu_fleet_reclaim),
 * its jobs in priority order as the hub's. */
static void pair_new_as(mu_t_t *t, pair_t *p, mu_time_t half_life, const mu_queue_spec_t *qs,
			int nq, int gpus, bool preempt)
{
	memset(p, 0, sizeof *p);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = preempt;
	cfg.consolidate = false;
	if (preempt)
		cfg.order = MU_ORDER_PRIORITY;
	cfg.usage_half_life = half_life;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &p->e), MU_OK);
	mu_fleet_config_t fc;
	mu_fleet_config_defaults(&fc);
	fc.usage_half_life = half_life;
	CHECK_EQ_INT(t, mu_fleet_new(&fc, &p->f), MU_OK);
	mu_cluster_spec_t cs = {.name = "only", .tier = MU_TIER_PRIVATE};
	CHECK_EQ_INT(t, mu_fleet_cluster_add(p->f, &cs, &p->cid), MU_OK);
	mu_node_spec_t n = node_of("n0", gpus);
	CHECK_EQ_INT(t, mu_engine_node_upsert(p->e, &n, NULL), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_node_upsert(p->f, p->cid, &n), MU_OK);
	for (int i = 0; i < nq; i++) {
		CHECK_EQ_INT(t, mu_engine_queue_upsert(p->e, &qs[i]), MU_OK);
		CHECK_EQ_INT(t, mu_fleet_queue_upsert(p->f, &qs[i]), MU_OK);
	}
}

static void pair_new(mu_t_t *t, pair_t *p, mu_time_t half_life, const mu_queue_spec_t *qs,
		     int nq, int gpus)
{
	pair_new_as(t, p, half_life, qs, nq, gpus, false);
}

static void pair_submit(mu_t_t *t, pair_t *p, jobs_t *w, int i, mu_time_t now)
{
	CHECK_EQ_INT(t, mu_engine_job_submit(p->e, &w->js[i], now, &p->eid[i]), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(p->f, &w->fs[i], now, &p->fid[i]), MU_OK);
}

static void pair_finish(mu_t_t *t, pair_t *p, int i, mu_time_t now)
{
	CHECK_EQ_INT(t, mu_engine_job_finish(p->e, p->eid[i], now), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_finish(p->f, p->fid[i], now), MU_OK);
}

/* One engine cycle and one dispatch pass at now; the queue's first
 * letter of every start is appended to eseq and fseq. */
static void pair_step(mu_t_t *t, pair_t *p, mu_time_t now)
{
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(p->e, now, &d), MU_OK);
	for (size_t i = 0; i < d.n && p->ne < MAXJ; i++)
		if (d.v[i].kind == MU_DEC_BIND) {
			mu_job_info_t ji;
			CHECK_EQ_INT(t, mu_engine_job_info(p->e, d.v[i].job, &ji), MU_OK);
			p->eseq[p->ne++] = ji.queue[0];
		}
	mu_decisions_release(&d);
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(p->f, now, &fd), MU_OK);
	for (size_t i = 0; i < fd.n && p->nf < MAXJ; i++) {
		mu_fleet_job_info_t ji;
		CHECK_EQ_INT(t, mu_fleet_job_info(p->f, fd.v[i].job, &ji), MU_OK);
		mu_fleet_queue_info_t qi;
		CHECK_EQ_INT(t, mu_fleet_queue_info(p->f, ji.queue, &qi), MU_OK);
		p->fseq[p->nf++] = qi.name[0];
	}
	mu_fleet_decisions_release(&fd);
}

static void pair_free(pair_t *p)
{
	mu_engine_free(p->e);
	mu_fleet_free(p->f);
}

/* Queue q's GPU fair share and decay factor on both sides. */
static void pair_queue(mu_t_t *t, pair_t *p, int32_t q, const char *name, int64_t *fair,
		       double *factor)
{
	mu_queue_info_t ei;
	CHECK_EQ_INT(t, mu_engine_queue_info(p->e, mu_engine_queue_find(p->e, name), &ei), MU_OK);
	mu_fleet_queue_info_t fi;
	CHECK_EQ_INT(t, mu_fleet_queue_info(p->f, q, &fi), MU_OK);
	fair[0] = ei.fair.v[MU_RES_GPU];
	fair[1] = fi.fair.v[MU_RES_GPU];
	factor[0] = ei.decay_factor;
	factor[1] = fi.decay_factor[MU_RES_GPU];
}

/* Non-preemptible jobs run only within deserved: queue a (deserved 2)
 * has four non-preemptible 1-GPU jobs, queue b (deserved 2) two
 * preemptible ones, on 8 GPUs.  The engine starts 2 of a's and both of
 * b's, and says OverQuota for a's other two; the hub must too (before
 * round 12 it sent all six). */
static void test_np_within_deserved(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "a", 2);
	queue_of(&qs[1], "b", 2);
	pair_t p;
	pair_new(t, &p, 0, qs, 2, 8);
	jobs_t w = {0};
	for (int i = 0; i < 4; i++)
		pair_submit(t, &p, &w, add_job(&w, "a", 1, false, i), 100);
	for (int i = 0; i < 2; i++)
		pair_submit(t, &p, &w, add_job(&w, "b", 1, true, 4 + i), 100);
	pair_step(t, &p, 100);
	int ea = 0, fa = 0;
	for (int i = 0; i < p.ne; i++)
		ea += p.eseq[i] == 'a';
	for (int i = 0; i < p.nf; i++)
		fa += p.fseq[i] == 'a';
	if (p.ne != p.nf || ea != fa)
		fprintf(stderr, "np: engine starts %s, hub %s\n", p.eseq, p.fseq);
	CHECK_EQ_INT(t, p.ne, 4);
	CHECK_EQ_INT(t, ea, 2);
	CHECK_EQ_INT(t, p.nf, p.ne);
	CHECK_EQ_INT(t, fa, ea);
	for (int i = 0; i < 4; i++) { /* the same jobs wait, for the same reason */
		mu_job_info_t ej;
		mu_fleet_job_info_t fj;
		CHECK_EQ_INT(t, mu_engine_job_info(p.e, p.eid[i], &ej), MU_OK);
		CHECK_EQ_INT(t, mu_fleet_job_info(p.f, p.fid[i], &fj), MU_OK);
		CHECK_EQ_INT(t, ej.state == MU_JOB_RUNNING, fj.state == MU_FJ_DISPATCHED);
		if (fj.state == MU_FJ_QUEUED) {
			CHECK_EQ_INT(t, ej.last.why, MU_WHY_OVER_QUOTA);
			CHECK_EQ_INT(t, fj.why, MU_FW_OVER_QUOTA);
			CHECK_STR(t, mu_fleet_why_name(fj.why), "OverQuota");
		}
	}
	mu_fleet_queue_info_t qi;
	CHECK_EQ_INT(t, mu_fleet_queue_info(p.f, 0, &qi), MU_OK);
	CHECK_EQ_INT(t, qi.used_np.v[MU_RES_GPU], 2000);
	/* one ends: one more of a's goes, on both sides */
	int done = -1;
	for (int i = 0; i < 4 && done < 0; i++) {
		mu_fleet_job_info_t fj;
		CHECK_EQ_INT(t, mu_fleet_job_info(p.f, p.fid[i], &fj), MU_OK);
		if (fj.state == MU_FJ_DISPATCHED)
			done = i;
	}
	pair_finish(t, &p, done, 200);
	pair_step(t, &p, 200);
	CHECK_EQ_INT(t, p.ne, 5);
	CHECK_EQ_INT(t, p.nf, 5);
	CHECK_EQ_INT(t, p.eseq[4], 'a');
	CHECK_EQ_INT(t, p.fseq[4], 'a');
	pair_free(&p);
}

/* Time-decayed usage: a ran eight 1-GPU jobs alone for two hours
 * (half-life 1 h), then a and b (deserved 0, weight 1 each) both want 8
 * GPUs.  a's decayed usage is 8 x (1 - 2^-2) = 6 GPUs, all of the
 * siblings', so its factor is 2^(-1/0.5) = 0.25: fair shares 1.6 and 6.4
 * GPUs.  The hub must give the same factors, shares and order of starts
 * as the engine (without decay on the hub: 4 and 4). */
static void test_decay_as_engine(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "a", 0);
	queue_of(&qs[1], "b", 0);
	pair_t p;
	pair_new(t, &p, HOUR, qs, 2, 8);
	jobs_t w = {0};
	for (int i = 0; i < 8; i++)
		pair_submit(t, &p, &w, add_job(&w, "a", 1, true, i), 0);
	pair_step(t, &p, 0);
	CHECK_EQ_INT(t, p.ne, 8);
	CHECK_EQ_INT(t, p.nf, 8);
	pair_step(t, &p, 2 * HOUR); /* usage aged with a at 8 GPUs */
	for (int i = 0; i < 8; i++)
		pair_finish(t, &p, i, 2 * HOUR);
	for (int i = 0; i < 16; i++)
		pair_submit(t, &p, &w, add_job(&w, i % 2 ? "b" : "a", 1, true, 2 * HOUR + i),
			    2 * HOUR);
	pair_step(t, &p, 2 * HOUR);
	int64_t fa[2], fb[2];
	double xa[2], xb[2];
	pair_queue(t, &p, 0, "a", fa, xa);
	pair_queue(t, &p, 1, "b", fb, xb);
	if (fa[0] != fa[1] || fb[0] != fb[1] || strcmp(p.eseq, p.fseq))
		fprintf(stderr, "decay: engine fair %lld/%lld x %.3f/%.3f starts %s; "
			"hub %lld/%lld x %.3f/%.3f starts %s\n",
			(long long)fa[0], (long long)fb[0], xa[0], xb[0], p.eseq,
			(long long)fa[1], (long long)fb[1], xa[1], xb[1], p.fseq);
	CHECK_EQ_INT(t, fa[0], 1600);
	CHECK_EQ_INT(t, fb[0], 6400);
	CHECK_EQ_INT(t, fa[1], fa[0]);
	CHECK_EQ_INT(t, fb[1], fb[0]);
	CHECK(t, xa[0] > 0.2499 && xa[0] < 0.2501);
	CHECK(t, xa[1] == xa[0] && xb[1] == xb[0]);
	CHECK_EQ_INT(t, p.nf, p.ne);
	CHECK(t, strcmp(p.eseq, p.fseq) == 0);
	mu_fleet_queue_info_t qi;
	CHECK_EQ_INT(t, mu_fleet_queue_info(p.f, 0, &qi), MU_OK);
	CHECK(t, qi.decayed[MU_RES_GPU] > 5999.9 && qi.decayed[MU_RES_GPU] < 6000.1);
	pair_free(&p);
}

/* --- reclaim across clusters ------------------------------------------------ */

typedef struct rfleet {
	mu_fleet_t *f;
	jobs_t w;
	mu_id_t id[MAXJ];
} rfleet_t;

/* A fleet of clusters of one node each, gpus[i] GPUs, and queues. */
static void rfleet_new_cfg(mu_t_t *t, rfleet_t *r, const int *gpus, int nc,
			   const mu_queue_spec_t *qs, int nq, const mu_fleet_config_t *cfg)
{
	memset(r, 0, sizeof *r);
	CHECK_EQ_INT(t, mu_fleet_new(cfg, &r->f), MU_OK);
	for (int c = 0; c < nc; c++) {
		char cn[16], nn[16];
		snprintf(cn, sizeof cn, "c%d", c);
		snprintf(nn, sizeof nn, "c%d-n0", c);
		mu_cluster_spec_t cs = {.name = cn, .tier = MU_TIER_PRIVATE};
		int32_t id;
		CHECK_EQ_INT(t, mu_fleet_cluster_add(r->f, &cs, &id), MU_OK);
		mu_node_spec_t n = node_of(nn, gpus[c]);
		CHECK_EQ_INT(t, mu_fleet_node_upsert(r->f, id, &n), MU_OK);
	}
	for (int i = 0; i < nq; i++)
		CHECK_EQ_INT(t, mu_fleet_queue_upsert(r->f, &qs[i]), MU_OK);
}

static void rfleet_new(mu_t_t *t, rfleet_t *r, const int *gpus, int nc, const mu_queue_spec_t *qs,
		       int nq)
{
	rfleet_new_cfg(t, r, gpus, nc, qs, nq, NULL);
}

static int rjob(mu_t_t *t, rfleet_t *r, const char *q, int gpus, bool preemptible, mu_time_t now)
{
	int i = add_job(&r->w, q, gpus, preemptible, now);
	CHECK_EQ_INT(t, mu_fleet_job_submit(r->f, &r->w.fs[i], now, &r->id[i]), MU_OK);
	return i;
}

static int dispatch(mu_t_t *t, rfleet_t *r, mu_time_t now)
{
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(r->f, now, &d), MU_OK);
	int n = (int)d.n;
	mu_fleet_decisions_release(&d);
	return n;
}

static mu_fleet_job_info_t info(mu_t_t *t, rfleet_t *r, int i)
{
	mu_fleet_job_info_t ji;
	memset(&ji, 0, sizeof ji);
	CHECK_EQ_INT(t, mu_fleet_job_info(r->f, r->id[i], &ji), MU_OK);
	return ji;
}

/* The hold tests' queues: A and B deserve 4 GPUs each, C none but is
 * served first (priority 10). */
static void abc_queues(mu_queue_spec_t qs[3])
{
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 4);
	queue_of(&qs[2], "C", 0);
	qs[2].priority = 10;
}

/* B (deserved 4) waits for 2 GPUs while A (deserved 4) runs eight 1-GPU
 * jobs on the one 8-GPU cluster: two of A's go (by deserved quota), the
 * youngest of the lowest priority first; once their copies are gone B's
 * job is dispatched, the victims wait and run again later, and are never
 * victims a second time. */
static void test_reclaim_basic(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 4);
	const int gpus[1] = {8};
	rfleet_t r;
	rfleet_new(t, &r, gpus, 1, qs, 2);
	int a[8];
	for (int i = 0; i < 8; i++)
		a[i] = rjob(t, &r, "A", 1, true, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 0), 8);
	int b = rjob(t, &r, "B", 2, true, 30 * 1000);
	CHECK_EQ_INT(t, dispatch(t, &r, 30 * 1000), 0);
	CHECK_EQ_INT(t, info(t, &r, b).why, MU_FW_NO_FIT);
	mu_fleet_reclaims_t rc = {0};
	/* before A's jobs have run the minimum runtime (60 s): none */
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 30 * 1000, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 2);
	for (size_t i = 0; i < rc.n; i++) {
		CHECK_EQ_INT(t, rc.v[i].for_job, r.id[b]);
		CHECK_EQ_INT(t, rc.v[i].cluster, 0);
		CHECK(t, !rc.v[i].fair_sharing);
		mu_fleet_job_info_t vi;
		CHECK_EQ_INT(t, mu_fleet_job_info(r.f, rc.v[i].victim, &vi), MU_OK);
		CHECK_EQ_INT(t, vi.reclaimed_for, r.id[b]);
		CHECK_EQ_INT(t, vi.state, MU_FJ_DISPATCHED); /* until withdrawn */
		CHECK_EQ_INT(t, vi.generation, rc.v[i].generation);
	}
	CHECK_EQ_INT(t, info(t, &r, b).victims, 2);
	/* while they are withdrawn, nothing more is taken */
	mu_fleet_reclaims_t again = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &again), MU_OK);
	CHECK_EQ_INT(t, again.n, 0);
	/* the copies' deletion confirmed: requeued; B's job goes */
	for (size_t i = 0; i < rc.n; i++)
		CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[i].victim, 11 * MIN), MU_OK);
	CHECK_EQ_INT(t, info(t, &r, b).victims, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 1);
	CHECK_EQ_INT(t, info(t, &r, b).state, MU_FJ_DISPATCHED);
	for (size_t i = 0; i < rc.n; i++) {
		mu_fleet_job_info_t vi;
		CHECK_EQ_INT(t, mu_fleet_job_info(r.f, rc.v[i].victim, &vi), MU_OK);
		CHECK_EQ_INT(t, vi.state, MU_FJ_QUEUED);
	}
	/* B's job ends: the victims run again, with a new generation */
	CHECK_EQ_INT(t, mu_fleet_job_finish(r.f, r.id[b], 20 * MIN), MU_OK);
	CHECK_EQ_INT(t, dispatch(t, &r, 20 * MIN), 2);
	for (size_t i = 0; i < rc.n; i++) {
		mu_fleet_job_info_t vi;
		CHECK_EQ_INT(t, mu_fleet_job_info(r.f, rc.v[i].victim, &vi), MU_OK);
		CHECK_EQ_INT(t, vi.state, MU_FJ_DISPATCHED);
		CHECK_EQ_INT(t, vi.generation, rc.v[i].generation + 1);
	}
	/* B wants room again: two others of A's go, never the same twice */
	int b2 = rjob(t, &r, "B", 2, true, 40 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 40 * MIN), 0);
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 40 * MIN, &again), MU_OK);
	CHECK_EQ_INT(t, again.n, 2);
	for (size_t i = 0; i < again.n; i++) {
		CHECK_EQ_INT(t, again.v[i].for_job, r.id[b2]);
		for (size_t k = 0; k < rc.n; k++)
			CHECK(t, again.v[i].victim != rc.v[k].victim);
	}
	(void)a;
	mu_fleet_reclaims_release(&rc);
	mu_fleet_reclaims_release(&again);
	mu_fleet_free(r.f);
}

/* A victim's queue is not taken below its deserved quota: A (deserved 3)
 * runs four 1-GPU jobs, C (deserved 3) three non-preemptible ones, one
 * GPU is free; B (deserved 3) wants 3 GPUs.  Only one of A's may go (A
 * would be at 3 after it), which leaves 2 free: no reclaim at all.  And a
 * claimant past its own share takes nothing: B's deserved 1, the others'
 * use leaves it a fair share of 1. */
static void test_reclaim_lines(mu_t_t *t)
{
	mu_queue_spec_t qs[3];
	queue_of(&qs[0], "A", 3);
	queue_of(&qs[1], "B", 3);
	queue_of(&qs[2], "C", 3);
	const int gpus[1] = {8};
	rfleet_t r;
	rfleet_new(t, &r, gpus, 1, qs, 3);
	for (int i = 0; i < 4; i++)
		rjob(t, &r, "A", 1, true, 0);
	for (int i = 0; i < 3; i++)
		rjob(t, &r, "C", 1, false, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 0), 7);
	int b = rjob(t, &r, "B", 3, true, MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	CHECK_EQ_INT(t, info(t, &r, b).why, MU_FW_NO_FIT);
	mu_fleet_reclaims_t rc = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 0);
	/* with a 2-GPU job instead, one victim is enough */
	CHECK_EQ_INT(t, mu_fleet_job_finish(r.f, r.id[b], 10 * MIN), MU_OK);
	int b2 = rjob(t, &r, "B", 2, true, 10 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 1);
	if (rc.n == 1) {
		mu_fleet_job_info_t vi;
		CHECK_EQ_INT(t, mu_fleet_job_info(r.f, rc.v[0].victim, &vi), MU_OK);
		CHECK_EQ_INT(t, vi.queue, 0); /* A's, never C's non-preemptible */
		CHECK_EQ_INT(t, rc.v[0].for_job, r.id[b2]);
	}
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(r.f);

	/* B deserves 1 GPU only: no strategy lets it take 2 */
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 1);
	queue_of(&qs[2], "C", 3);
	rfleet_new(t, &r, gpus, 1, qs, 3);
	for (int i = 0; i < 5; i++)
		rjob(t, &r, "A", 1, true, 0);
	for (int i = 0; i < 3; i++)
		rjob(t, &r, "C", 1, false, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 0), 8);
	rjob(t, &r, "B", 2, true, MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 0);
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(r.f);
}

/* The fewest victims on ONE cluster: A runs a 3-GPU job and a 1-GPU job
 * on one 4-GPU cluster, four 1-GPU jobs on the other; B wants 3 GPUs on
 * one node: the 3-GPU job alone (the 1-GPU job beside it, tried first,
 * dropped as not needed), not three victims on the other cluster, nor
 * victims on both. */
static void test_reclaim_one_cluster(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "A", 3);
	queue_of(&qs[1], "B", 4);
	const int gpus[2] = {4, 4};
	rfleet_t r;
	rfleet_new(t, &r, gpus, 2, qs, 2);
	int big = rjob(t, &r, "A", 3, true, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 0), 1);
	CHECK_EQ_INT(t, info(t, &r, big).cluster >= 0, 1);
	int32_t bigc = info(t, &r, big).cluster;
	for (int i = 0; i < 5; i++)
		rjob(t, &r, "A", 1, true, MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, MIN), 5);
	int b = rjob(t, &r, "B", 3, true, 2 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	mu_fleet_reclaims_t rc = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 1);
	if (rc.n == 1) {
		CHECK_EQ_INT(t, rc.v[0].victim, r.id[big]);
		CHECK_EQ_INT(t, rc.v[0].cluster, bigc);
		CHECK_EQ_INT(t, rc.v[0].for_job, r.id[b]);
	}
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(r.f);
}

/* The room a claim frees is held for it.  One 9-GPU cluster: A (deserved
 * 4) runs eight 1-GPU jobs, B's (deserved 4) 3-GPU job takes two of them;
 * C, a queue served first (priority 10), then submits a 1-GPU job that
 * would fit in the free GPU at once.  It is kept off the held cluster
 * until the hold ends: B's job placed once its victims are gone (mode 0),
 * B's job deleted (1), or the hold lapsed (2: cfg.reclaim_hold, 5 min).
 * A job of a higher priority than B's passes the hold (3), as
 * kube-scheduler counts a nominated pod only against pods of its priority
 * or lower (round 20; before, it waited too). */
static void test_reclaim_hold(mu_t_t *t)
{
	for (int mode = 0; mode < 4; mode++) {
		mu_queue_spec_t qs[3];
		abc_queues(qs);
		const int gpus[1] = {9};
		rfleet_t r;
		rfleet_new(t, &r, gpus, 1, qs, 3);
		for (int i = 0; i < 8; i++)
			rjob(t, &r, "A", 1, true, 0);
		CHECK_EQ_INT(t, dispatch(t, &r, 0), 8);
		int b = rjob(t, &r, "B", 3, true, 10 * MIN);
		CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
		mu_fleet_reclaims_t rc = {0};
		CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
		CHECK_EQ_INT(t, rc.n, 2);
		CHECK_EQ_INT(t, info(t, &r, b).held, 0);
		if (mode == 3) { /* priority 20 against B's 0: passes */
			int hi = add_job(&r.w, "C", 1, true, 10 * MIN);
			r.w.js[hi].priority = 20;
			CHECK_EQ_INT(t, mu_fleet_job_submit(r.f, &r.w.fs[hi], 10 * MIN, &r.id[hi]),
				     MU_OK);
			CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 1);
			CHECK_EQ_INT(t, info(t, &r, hi).state, MU_FJ_DISPATCHED);
			CHECK_EQ_INT(t, info(t, &r, b).held, 0); /* still B's */
			mu_fleet_reclaims_release(&rc);
			mu_fleet_free(r.f);
			continue;
		}
		int c = rjob(t, &r, "C", 1, true, 10 * MIN);
		CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0); /* held for B */
		CHECK_EQ_INT(t, info(t, &r, c).why, MU_FW_NO_FIT);
		if (mode == 0) {
			for (size_t i = 0; i < rc.n; i++)
				CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[i].victim, 11 * MIN),
					     MU_OK);
			CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 1);
			CHECK_EQ_INT(t, info(t, &r, b).state, MU_FJ_DISPATCHED);
			CHECK_EQ_INT(t, info(t, &r, b).held, -1);
			CHECK_EQ_INT(t, info(t, &r, c).state, MU_FJ_QUEUED); /* full now */
		} else if (mode == 1) {
			CHECK_EQ_INT(t, mu_fleet_job_finish(r.f, r.id[b], 11 * MIN), MU_OK);
			CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 1);
			CHECK_EQ_INT(t, info(t, &r, c).state, MU_FJ_DISPATCHED);
		} else {
			CHECK_EQ_INT(t, dispatch(t, &r, 14 * MIN), 0); /* 4 min: held */
			CHECK_EQ_INT(t, dispatch(t, &r, 15 * MIN), 1); /* 5 min: lapsed */
			CHECK_EQ_INT(t, info(t, &r, c).state, MU_FJ_DISPATCHED);
			CHECK_EQ_INT(t, info(t, &r, b).held, -1);
		}
		mu_fleet_reclaims_release(&rc);
		mu_fleet_free(r.f);
	}
}

/* The set-up of the hold tests below: queues A and B (deserved 4 each) and
 * C (deserved 0, served first); A's eight 1-GPU jobs fill c0-n0 (8 GPUs),
 * then c0-n1 (1 GPU) joins; B's 2-GPU job fits nowhere and takes two of
 * A's (rc), its room on c0 held.  cfg NULL: the defaults.  Returns B's
 * job. */
static int room_setup(mu_t_t *t, rfleet_t *r, const mu_fleet_config_t *cfg,
		      mu_fleet_reclaims_t *rc)
{
	mu_queue_spec_t qs[3];
	abc_queues(qs);
	const int gpus[1] = {8};
	rfleet_new_cfg(t, r, gpus, 1, qs, 3, cfg);
	for (int i = 0; i < 8; i++)
		rjob(t, r, "A", 1, true, 0);
	CHECK_EQ_INT(t, dispatch(t, r, 0), 8);
	mu_node_spec_t n1 = node_of("c0-n1", 1);
	CHECK_EQ_INT(t, mu_fleet_node_upsert(r->f, 0, &n1), MU_OK);
	int b = rjob(t, r, "B", 2, true, 10 * MIN);
	CHECK_EQ_INT(t, dispatch(t, r, 10 * MIN), 0);
	CHECK_EQ_INT(t, mu_fleet_reclaim(r->f, 10 * MIN, rc), MU_OK);
	CHECK_EQ_INT(t, (int)rc->n, 2);
	CHECK_EQ_INT(t, info(t, r, b).held, 0);
	return b;
}

/* The hold keeps the claimant's room, not the whole cluster: A (deserved
 * 4) fills node n0 (8 GPUs) with eight 1-GPU jobs, then node n1 (1 GPU)
 * joins; B's (deserved 4) 2-GPU job fits on neither and takes two of A's
 * on n0.  C's 1-GPU job (a queue served first) still goes to n1 at once
 * (round 12 closed the whole cluster); once one victim is back, another
 * 1-GPU job of C, which could only take the GPU it freed on n0, waits
 * ("held" in explain), and once both are back B's job goes to n0. */
static void test_reclaim_hold_room(mu_t_t *t)
{
	rfleet_t r;
	mu_fleet_reclaims_t rc = {0};
	int b = room_setup(t, &r, NULL, &rc);
	int c1 = rjob(t, &r, "C", 1, true, 10 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 1); /* n1: not B's room */
	CHECK_EQ_INT(t, info(t, &r, c1).state, MU_FJ_DISPATCHED);
	/* one victim back: its GPU on n0 is B's, not C's */
	CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[0].victim, 11 * MIN), MU_OK);
	int c2 = rjob(t, &r, "C", 1, true, 11 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 0);
	CHECK_EQ_INT(t, info(t, &r, c2).why, MU_FW_NO_FIT);
	mu_fleet_explain_t x[1];
	CHECK_EQ_INT(t, mu_fleet_job_explain(r.f, r.id[c2], 11 * MIN, x), MU_OK);
	CHECK_STR(t, x[0].why, "held");
	CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[1].victim, 12 * MIN), MU_OK);
	CHECK_EQ_INT(t, dispatch(t, &r, 12 * MIN), 1); /* B's, first */
	CHECK_EQ_INT(t, info(t, &r, b).state, MU_FJ_DISPATCHED);
	CHECK_EQ_INT(t, info(t, &r, c2).state, MU_FJ_QUEUED);
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(r.f);
}

/* Round 22: a job of the claimant's priority or lower is steered off the
 * claimant's nominated room onto another node of the held cluster.  As in
 * test_reclaim_hold_room, B's 2-GPU job takes two of A's eight on c0-n0
 * while c0-n1 (1 GPU) is free; once one victim is back, n0 and n1 each
 * have a free GPU and n0's is B's.  C's 1-GPU job goes to n1 at once (it
 * went to n0 by the score, was refused, and waited: mode 0; with a public
 * cluster c1 of two 1-GPU nodes beside, too small for B, it went there: mode 2); a second one waits,
 * "held for" B in explain (mode 0).  Once the other victim is back, B goes
 * first.  Mode 1: a priority-20 job of C takes n0's GPU at once, as a
 * nominated pod counts only for equal or lower priorities, and one of
 * priority 0 then goes to n1 (B, no longer fitting, keeps nothing). */
static void test_reclaim_steer(mu_t_t *t)
{
	for (int mode = 0; mode < 3; mode++) {
		mu_fleet_config_t cfg;
		mu_fleet_config_defaults(&cfg);
		cfg.burst_after = 0; /* c1 (mode 2) takes any job */
		rfleet_t r;
		mu_fleet_reclaims_t rc = {0};
		int b = room_setup(t, &r, &cfg, &rc);
		if (mode == 2) { /* public, ranked after c0 */
			mu_cluster_spec_t cs = {.name = "c1", .tier = MU_TIER_PUBLIC};
			int32_t id;
			CHECK_EQ_INT(t, mu_fleet_cluster_add(r.f, &cs, &id), MU_OK);
			mu_node_spec_t m0 = node_of("c1-n0", 1), m1 = node_of("c1-n1", 1);
			CHECK_EQ_INT(t, mu_fleet_node_upsert(r.f, id, &m0), MU_OK);
			CHECK_EQ_INT(t, mu_fleet_node_upsert(r.f, id, &m1), MU_OK);
		}
		CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[0].victim, 11 * MIN), MU_OK);
		if (mode == 1) { /* above B's priority: the room is not held */
			int hi = add_job(&r.w, "C", 1, true, 11 * MIN);
			r.w.js[hi].priority = 20;
			CHECK_EQ_INT(t, mu_fleet_job_submit(r.f, &r.w.fs[hi], 11 * MIN, &r.id[hi]), MU_OK);
			int lo = rjob(t, &r, "C", 1, true, 11 * MIN);
			CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 2);
			CHECK_EQ_INT(t, info(t, &r, hi).cluster, 0);
			CHECK_EQ_INT(t, info(t, &r, lo).cluster, 0);
			/* n0's GPU went to the priority-20 job: B no longer
			 * fits, its hold ends, a victim takes n0's other GPU */
			CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[1].victim, 12 * MIN), MU_OK);
			CHECK_EQ_INT(t, dispatch(t, &r, 12 * MIN), 1);
			CHECK_EQ_INT(t, info(t, &r, b).state, MU_FJ_QUEUED);
			CHECK_EQ_INT(t, info(t, &r, b).held, -1);
			mu_fleet_reclaims_release(&rc);
			mu_fleet_free(r.f);
			continue;
		}
		/* C's queue is served first; mode 2: the victim back goes to c1 */
		int c1 = rjob(t, &r, "C", 1, true, 11 * MIN);
		CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), mode == 2 ? 2 : 1);
		CHECK_EQ_INT(t, info(t, &r, c1).state, MU_FJ_DISPATCHED);
		CHECK_EQ_INT(t, info(t, &r, c1).cluster, 0); /* n1, not B's room */
		CHECK_EQ_INT(t, info(t, &r, b).held, 0);
		int c2 = rjob(t, &r, "C", 1, true, 11 * MIN);
		CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), mode == 2); /* c1's last GPU */
		if (mode == 2)
			CHECK_EQ_INT(t, info(t, &r, c2).cluster, 1);
		if (mode == 0) {
			CHECK_EQ_INT(t, info(t, &r, c2).why, MU_FW_NO_FIT);
			mu_fleet_explain_t x[1];
			CHECK_EQ_INT(t, mu_fleet_job_explain(r.f, r.id[c2], 11 * MIN, x), MU_OK);
			CHECK_STR(t, x[0].why, "held");
			CHECK_EQ_INT(t, (int)x[0].held_for, (int)r.id[b]);
			char line[256], want[64];
			mu_fleet_explain_format(r.f, x, 11 * MIN, line, sizeof line);
			snprintf(want, sizeof want, "c0: held for %s", r.w.names[b]);
			CHECK_STR(t, line, want);
		}
		CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[1].victim, 12 * MIN), MU_OK);
		CHECK_EQ_INT(t, dispatch(t, &r, 12 * MIN), 1); /* B's, first */
		CHECK_EQ_INT(t, info(t, &r, b).state, MU_FJ_DISPATCHED);
		CHECK_EQ_INT(t, info(t, &r, b).cluster, 0);
		mu_fleet_reclaims_release(&rc);
		mu_fleet_free(r.f);
	}
}

/* The node of pod 0 of fleet job i's copy in cluster c's model (its name
 * as commit_once() makes it, generation 1), or "" when it has none. */
static const char *model_node(rfleet_t *r, int i, int32_t c)
{
	char name[64];
	snprintf(name, sizeof name, "%s.j%d.g1", r->w.names[i], (int)r->id[i]);
	const mu_engine_t *e = mu_fleet_cluster_engine(r->f, c);
	mu_id_t id = mu_engine_job_find(e, name);
	mu_id_t n = id < 0 ? -1 : mu_engine_pod_node(e, id, 0, 0);
	return n < 0 ? "" : mu_engine_node_name(e, n);
}

/* Submits a job of queue C at 11 min asking cpu milli-CPUs and no GPU,
 * with label l, required pod term pt and preferred node term np (each
 * NULL: none); returns its index in r->w. */
static int cpu_job(mu_t_t *t, rfleet_t *r, int64_t cpu, mu_label_t *l, mu_pod_term_t *pt,
		   mu_pref_term_t *np)
{
	int i = add_job(&r->w, "C", 0, true, 11 * MIN);
	mu_podset_spec_t *p = &r->w.ps[i];
	p->req.v[MU_RES_CPU] = cpu;
	*p = (mu_podset_spec_t){.name = p->name, .replicas = 1, .req = p->req, .labels = l,
				.nlabels = l != NULL, .pod_terms = pt, .npod_terms = pt != NULL,
				.node_pref = np, .nnode_pref = np != NULL};
	CHECK_EQ_INT(t, mu_fleet_job_submit(r->f, &r->w.fs[i], 11 * MIN, &r->id[i]), MU_OK);
	return i;
}

/* Round 23: kube-scheduler's two filter passes beside nominated pods, and
 * explain agreeing with the pass.  As in test_reclaim_hold_room, B's
 * 2-GPU job (labels app=b, required anti-affinity to app=noisy on the
 * node) takes two of A's eight on c0-n0, which has no GPU free, and its
 * pod is nominated there; the jobs below ask CPU only, and c0-n0 has the
 * label pref=yes.  R (app=b, 60 CPUs) fits only on c0-n1.  D (required
 * pod affinity to app=b on the node, preferring pref=yes) goes to n1,
 * where R meets its affinity: on n0 only B's nominated pod, not there
 * yet, would (round 22 put it there, by its preference; kube-scheduler's
 * second pass, without the nominated pods, refuses n0).  J (app=noisy, 4
 * CPUs) then fits only beside the room on n0, but B would no longer fit
 * with it (the hold's check): the pass refuses it and explain says "held
 * for" B (round 22 said "fits"). */
static void test_reclaim_second_pass(mu_t_t *t)
{
	rfleet_t r;
	mu_fleet_reclaims_t rc = {0};
	int b = room_setup(t, &r, NULL, &rc);
	static const char *vb[1] = {"b"}, *vn[1] = {"noisy"}, *vy[1] = {"yes"};
	static mu_sel_req_t rb = {.key = "app", .op = MU_SEL_IN, .values = vb, .nvalues = 1};
	static mu_sel_req_t rn = {.key = "app", .op = MU_SEL_IN, .values = vn, .nvalues = 1};
	static mu_sel_req_t ry = {.key = "pref", .op = MU_SEL_IN, .values = vy, .nvalues = 1};
	static mu_pod_term_t to_b = {.sel = {.reqs = &rb, .nreqs = 1},
				     .topology_key = "kubernetes.io/hostname"};
	static mu_pod_term_t off_noisy = {.anti = true, .sel = {.reqs = &rn, .nreqs = 1},
					  .topology_key = "kubernetes.io/hostname"};
	static mu_pref_term_t to_pref = {.weight = 100, .term = {.reqs = &ry, .nreqs = 1}};
	static mu_label_t app_b = {"app", "b"}, app_noisy = {"app", "noisy"}, pref = {"pref", "yes"};
	r.w.ps[b].labels = &app_b; /* the fleet reads its spec when it nominates */
	r.w.ps[b].nlabels = 1;
	r.w.ps[b].pod_terms = &off_noisy;
	r.w.ps[b].npod_terms = 1;
	mu_node_spec_t n0 = node_of("c0-n0", 8);
	n0.labels = &pref;
	n0.nlabels = 1;
	CHECK_EQ_INT(t, mu_fleet_node_upsert(r.f, 0, &n0), MU_OK);
	int rr = cpu_job(t, &r, 60000, &app_b, NULL, NULL);
	CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 1);
	CHECK_STR(t, model_node(&r, rr, 0), "c0-n1");
	int d = cpu_job(t, &r, 1000, NULL, &to_b, &to_pref);
	CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 1);
	CHECK_EQ_INT(t, info(t, &r, d).cluster, 0);
	CHECK_STR(t, model_node(&r, d, 0), "c0-n1");
	int jn = cpu_job(t, &r, 4000, &app_noisy, NULL, NULL);
	CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 0);
	CHECK_EQ_INT(t, info(t, &r, jn).state, MU_FJ_QUEUED);
	mu_fleet_explain_t x[1];
	CHECK_EQ_INT(t, mu_fleet_job_explain(r.f, r.id[jn], 11 * MIN, x), MU_OK);
	CHECK_STR(t, x[0].why, "held");
	CHECK_EQ_INT(t, (int)x[0].held_for, (int)r.id[b]);
	CHECK_EQ_INT(t, info(t, &r, b).held, 0); /* B's hold stands */
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(r.f);
}

/* A restarted caller marks the jobs its record says were victims
 * (mu_fleet_job_mark_victim): they are never victims again.  Of A's eight
 * 1-GPU jobs six are marked; B's 2-GPU claim takes the other two, and a
 * second claim nothing. */
static void test_reclaim_marked(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 4);
	const int gpus[1] = {8};
	rfleet_t r;
	rfleet_new(t, &r, gpus, 1, qs, 2);
	int a[8];
	for (int i = 0; i < 8; i++)
		a[i] = rjob(t, &r, "A", 1, true, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 0), 8);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(t, mu_fleet_job_mark_victim(r.f, r.id[a[i]]), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_mark_victim(r.f, 99), MU_ENOENT);
	rjob(t, &r, "B", 2, true, 10 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	mu_fleet_reclaims_t rc = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, rc.n, 2);
	for (size_t i = 0; i < rc.n; i++)
		CHECK(t, rc.v[i].victim == r.id[a[6]] || rc.v[i].victim == r.id[a[7]]);
	for (size_t i = 0; i < rc.n; i++)
		CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, rc.v[i].victim, 11 * MIN), MU_OK);
	CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 1);
	rjob(t, &r, "B", 2, true, 12 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 12 * MIN), 0);
	mu_fleet_reclaims_t again = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 12 * MIN, &again), MU_OK);
	CHECK_EQ_INT(t, again.n, 0);
	mu_fleet_reclaims_release(&rc);
	mu_fleet_reclaims_release(&again);
	mu_fleet_free(r.f);
}

/* --- round 13: every waiting job claims; preemption in a queue; the
 * cool-down; the engine and the hub choose the same victims ------------- */

/* One engine cycle at now; the jobs it evicts (their indexes in w) are
 * set in ev[], their count returned, and one reclaim pass of the hub at
 * the same now into rc. */
static int pair_preempt(mu_t_t *t, pair_t *p, mu_time_t now, bool *ev, mu_fleet_reclaims_t *rc)
{
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(p->e, now, &d), MU_OK);
	int n = 0;
	for (size_t i = 0; i < d.n; i++)
		for (int k = 0; k < MAXJ && d.v[i].kind == MU_DEC_EVICT; k++)
			if (p->eid[k] == d.v[i].job && !ev[k]) {
				ev[k] = true;
				n++;
			}
	mu_decisions_release(&d);
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(p->f, now, &fd), MU_OK);
	CHECK_EQ_INT(t, (int)fd.n, 0);
	mu_fleet_decisions_release(&fd);
	CHECK_EQ_INT(t, mu_fleet_reclaim(p->f, now, rc), MU_OK);
	return n;
}

/* Whether the hub's victims in rc are exactly the engine's ev[]. */
static bool same_victims(const pair_t *p, const bool *ev, int nev, const mu_fleet_reclaims_t *rc)
{
	if ((int)rc->n != nev)
		return false;
	for (size_t i = 0; i < rc->n; i++) {
		int k = 0;
		while (k < MAXJ && p->fid[k] != rc->v[i].victim)
			k++;
		if (k == MAXJ || !ev[k])
			return false;
	}
	return true;
}

/* Preemption inside a queue, the engine's rule on both sides.  One node of
 * 9 GPUs, queue A: four 1-GPU jobs from 0 min, then one at 5 min and one
 * at 6 min, a non-preemptible one at 7 min, a priority-5 one at 8 min and
 * one at 9.5 min (priority 0 unless said).  At 10 min A's 2-GPU job of
 * priority 10 fits nowhere: both take the two youngest preemptible jobs of
 * priority 0 that ran their minute (5 and 6 min), never the
 * non-preemptible one, the priority-5 one or the one too young; the hub
 * says InClusterQueue.  A 2-GPU job of priority 0 takes nothing. */
static void test_preempt_in_queue_as_engine(mu_t_t *t)
{
	mu_queue_spec_t qs[1];
	queue_of(&qs[0], "A", 9);
	pair_t p;
	pair_new_as(t, &p, 0, qs, 1, 9, true);
	jobs_t w = {0};
	for (int i = 0; i < 4; i++)
		pair_submit(t, &p, &w, add_job(&w, "A", 1, true, i), 0);
	pair_step(t, &p, 0);
	const mu_time_t at[5] = {5 * MIN, 6 * MIN, 7 * MIN, 8 * MIN, 9 * MIN + 30 * 1000};
	for (int i = 0; i < 5; i++) {
		int k = add_job(&w, "A", 1, i != 2, at[i]);
		w.js[k].priority = i == 3 ? 5 : 0;
		pair_submit(t, &p, &w, k, at[i]);
		pair_step(t, &p, at[i]);
	}
	CHECK_EQ_INT(t, p.ne, 9);
	CHECK_EQ_INT(t, p.nf, 9);
	int low = add_job(&w, "A", 2, true, 10 * MIN); /* no higher: nothing */
	pair_submit(t, &p, &w, low, 10 * MIN);
	bool ev[MAXJ] = {false};
	mu_fleet_reclaims_t rc = {0};
	CHECK_EQ_INT(t, pair_preempt(t, &p, 10 * MIN, ev, &rc), 0);
	CHECK_EQ_INT(t, (int)rc.n, 0);
	pair_finish(t, &p, low, 10 * MIN);
	int c = add_job(&w, "A", 2, true, 10 * MIN);
	w.js[c].priority = 10;
	pair_submit(t, &p, &w, c, 10 * MIN);
	int nev = pair_preempt(t, &p, 10 * MIN, ev, &rc);
	CHECK_EQ_INT(t, nev, 2);
	CHECK(t, ev[4] && ev[5]);
	CHECK_EQ_INT(t, (int)rc.n, 2);
	CHECK(t, same_victims(&p, ev, nev, &rc));
	for (size_t i = 0; i < rc.n; i++) {
		CHECK(t, rc.v[i].in_queue);
		CHECK_EQ_INT(t, rc.v[i].for_job, p.fid[c]);
		CHECK_EQ_INT(t, mu_fleet_job_requeue(p.f, rc.v[i].victim, 11 * MIN), MU_OK);
	}
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(p.f, 11 * MIN, &fd), MU_OK);
	CHECK_EQ_INT(t, (int)fd.n, 1);
	if (fd.n == 1)
		CHECK_EQ_INT(t, fd.v[0].job, p.fid[c]);
	mu_fleet_decisions_release(&fd);
	mu_fleet_reclaims_release(&rc);
	pair_free(&p);
}

/* Reclaim on both sides: one node of 8 GPUs, A (deserved 4) runs eight
 * 1-GPU jobs started a minute apart, B (deserved 4) asks 2 GPUs at 10 min:
 * the engine and the hub take the same two (the youngest). */
static void test_reclaim_as_engine(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 4);
	pair_t p;
	pair_new_as(t, &p, 0, qs, 2, 8, true);
	jobs_t w = {0};
	for (int i = 0; i < 8; i++) {
		pair_submit(t, &p, &w, add_job(&w, "A", 1, true, i * MIN), i * MIN);
		pair_step(t, &p, i * MIN);
	}
	CHECK_EQ_INT(t, p.nf, 8);
	int b = add_job(&w, "B", 2, true, 10 * MIN);
	pair_submit(t, &p, &w, b, 10 * MIN);
	bool ev[MAXJ] = {false};
	mu_fleet_reclaims_t rc = {0};
	int nev = pair_preempt(t, &p, 10 * MIN, ev, &rc);
	CHECK_EQ_INT(t, nev, 2);
	CHECK(t, ev[6] && ev[7]);
	CHECK(t, same_victims(&p, ev, nev, &rc));
	for (size_t i = 0; i < rc.n; i++)
		CHECK(t, !rc.v[i].in_queue && !rc.v[i].fair_sharing);
	mu_fleet_reclaims_release(&rc);
	pair_free(&p);
}

/* Disruption budgets (round 14): as test_reclaim_as_engine, but the
 * budgets covering the youngest job's pod let one go (within it) and
 * those of the second youngest none (over it): both sides take the
 * youngest and then, passing over the second, the third youngest. */
static void test_reclaim_pdb_as_engine(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 4);
	pair_t p;
	pair_new_as(t, &p, 0, qs, 2, 8, true);
	jobs_t w = {0};
	for (int i = 0; i < 8; i++) {
		pair_submit(t, &p, &w, add_job(&w, "A", 1, true, i * MIN), i * MIN);
		pair_step(t, &p, i * MIN);
	}
	CHECK_EQ_INT(t, p.nf, 8);
	const int32_t allowed[2] = {0, 1}; /* jobs 6 and 7 */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(t, mu_engine_job_disruptions(p.e, p.eid[6 + i], allowed[i]), MU_OK);
		CHECK_EQ_INT(t, mu_fleet_job_disruptions(p.f, p.fid[6 + i], allowed[i]), MU_OK);
	}
	CHECK_EQ_INT(t, mu_fleet_job_disruptions(p.f, MAXJ * 10, 0), MU_ENOENT);
	int b = add_job(&w, "B", 2, true, 10 * MIN);
	pair_submit(t, &p, &w, b, 10 * MIN);
	bool ev[MAXJ] = {false};
	mu_fleet_reclaims_t rc = {0};
	int nev = pair_preempt(t, &p, 10 * MIN, ev, &rc);
	CHECK_EQ_INT(t, nev, 2);
	CHECK(t, ev[7] && ev[5] && !ev[6]);
	CHECK(t, same_victims(&p, ev, nev, &rc));
	mu_fleet_reclaims_release(&rc);
	pair_free(&p);
}

/* Every waiting job may claim, not only each queue's first; at most 32
 * searches a pass, and a job whose search found nothing is not searched
 * again before something moves.  One 8-GPU cluster, A (deserved 4) runs
 * eight 1-GPU jobs; B (deserved 4) has forty 6-GPU jobs first in line (no
 * strategy lets B take 6) and then a 2-GPU job.  The first pass spends its
 * 32 searches on the 6-GPU jobs; the second skips them, searches the
 * other eight and then the 2-GPU job, which takes two of A's. */
static void test_reclaim_every_job(mu_t_t *t)
{
	mu_queue_spec_t qs[2];
	queue_of(&qs[0], "A", 4);
	queue_of(&qs[1], "B", 4);
	const int gpus[1] = {8};
	rfleet_t r;
	rfleet_new(t, &r, gpus, 1, qs, 2);
	for (int i = 0; i < 8; i++)
		rjob(t, &r, "A", 1, true, 0);
	CHECK_EQ_INT(t, dispatch(t, &r, 0), 8);
	for (int i = 0; i < 40; i++)
		rjob(t, &r, "B", 6, true, MIN + i);
	int small = rjob(t, &r, "B", 2, true, 2 * MIN);
	CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
	CHECK_EQ_INT(t, info(t, &r, small).why, MU_FW_NO_FIT);
	mu_fleet_reclaims_t rc = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, (int)rc.n, 0); /* the bound: 32 of the 6-GPU jobs */
	CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
	CHECK_EQ_INT(t, (int)rc.n, 2);
	for (size_t i = 0; i < rc.n; i++)
		CHECK_EQ_INT(t, rc.v[i].for_job, r.id[small]);
	CHECK_EQ_INT(t, info(t, &r, small).victims, 2);
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(r.f);
}

/* The engine's cool-down: a queue that lost jobs to reclaim is protected
 * for cfg.reclaim_cooldown.  Two clusters of 4 GPUs, A (deserved 2) runs
 * four 1-GPU jobs on each; B and C (deserved 3) each ask 2 GPUs.  B's
 * claim takes two of A's on one cluster; C's, in the same pass, none while
 * A cools down (10 min), and two on the other cluster once it has (with no
 * cool-down: at once). */
static void test_reclaim_cooldown(mu_t_t *t)
{
	for (int cool = 0; cool < 2; cool++) {
		mu_queue_spec_t qs[3];
		queue_of(&qs[0], "A", 2);
		queue_of(&qs[1], "B", 3);
		queue_of(&qs[2], "C", 3);
		const int gpus[2] = {4, 4};
		mu_fleet_config_t cfg;
		mu_fleet_config_defaults(&cfg);
		cfg.reclaim_cooldown = cool ? 10 * MIN : 0;
		rfleet_t r;
		rfleet_new_cfg(t, &r, gpus, 2, qs, 3, &cfg);
		for (int i = 0; i < 8; i++)
			rjob(t, &r, "A", 1, true, 0);
		CHECK_EQ_INT(t, dispatch(t, &r, 0), 8);
		int b = rjob(t, &r, "B", 2, true, MIN);
		int c = rjob(t, &r, "C", 2, true, MIN);
		CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
		mu_fleet_reclaims_t rc = {0};
		CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
		CHECK_EQ_INT(t, info(t, &r, b).victims, 2);
		CHECK_EQ_INT(t, info(t, &r, c).victims, cool ? 0 : 2);
		CHECK_EQ_INT(t, (int)rc.n, cool ? 2 : 4);
		if (cool) {
			mu_fleet_reclaims_t again = {0};
			CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 19 * MIN, &again), MU_OK);
			CHECK_EQ_INT(t, (int)again.n, 0); /* 9 min: still cooling */
			CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 20 * MIN, &again), MU_OK);
			CHECK_EQ_INT(t, (int)again.n, 2);
			CHECK_EQ_INT(t, info(t, &r, c).victims, 2);
			mu_fleet_reclaims_release(&again);
		}
		mu_fleet_reclaims_release(&rc);
		mu_fleet_free(r.f);
	}
}

/* A restart in the middle of a withdrawal remembers the claimant
 * (mu_fleet_job_mark_victim_for, from the victim's record): a fleet made
 * again has A's eight 1-GPU jobs adopted and B's 2-GPU job queued; two of
 * A's are read back as leaving for B.  B claims nothing more while they
 * are on their way out (marked victims only, it would take two others),
 * its room is held, and once both are back B goes first. */
static void test_reclaim_restart_claimant(mu_t_t *t)
{
	for (int linked = 0; linked < 2; linked++) {
		mu_queue_spec_t qs[3];
		queue_of(&qs[0], "A", 4);
		queue_of(&qs[1], "B", 4);
		queue_of(&qs[2], "C", 0);
		qs[2].priority = 10;
		const int gpus[1] = {8};
		rfleet_t r;
		rfleet_new(t, &r, gpus, 1, qs, 3);
		int a[8];
		for (int i = 0; i < 8; i++)
			a[i] = rjob(t, &r, "A", 1, true, 0);
		for (int i = 0; i < 8; i++)
			CHECK_EQ_INT(t, mu_fleet_job_adopt(r.f, r.id[a[i]], 0, 1, 0), MU_OK);
		int b = rjob(t, &r, "B", 2, true, 10 * MIN);
		for (int i = 6; i < 8; i++)
			CHECK_EQ_INT(t, linked ? mu_fleet_job_mark_victim_for(r.f, r.id[a[i]], r.id[b], 10 * MIN) :
				     mu_fleet_job_mark_victim(r.f, r.id[a[i]]), MU_OK);
		CHECK_EQ_INT(t, dispatch(t, &r, 10 * MIN), 0);
		mu_fleet_reclaims_t rc = {0};
		CHECK_EQ_INT(t, mu_fleet_reclaim(r.f, 10 * MIN, &rc), MU_OK);
		CHECK_EQ_INT(t, (int)rc.n, linked ? 0 : 2);
		if (!linked) {
			mu_fleet_reclaims_release(&rc);
			mu_fleet_free(r.f);
			continue;
		}
		CHECK_EQ_INT(t, info(t, &r, b).victims, 2);
		CHECK_EQ_INT(t, info(t, &r, b).held, 0);
		CHECK_EQ_INT(t, info(t, &r, a[6]).reclaimed_for, r.id[b]);
		/* a claimant linked once is not linked twice; a queued job is no victim */
		CHECK_EQ_INT(t, mu_fleet_job_mark_victim_for(r.f, r.id[a[6]], r.id[b], 10 * MIN), MU_ESTATE);
		CHECK_EQ_INT(t, mu_fleet_job_mark_victim_for(r.f, r.id[b], r.id[a[0]], 10 * MIN), MU_ESTATE);
		CHECK_EQ_INT(t, mu_fleet_job_mark_victim_for(r.f, r.id[a[0]], 99, 10 * MIN), MU_ENOENT);
		CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, r.id[a[6]], 11 * MIN), MU_OK);
		int c = rjob(t, &r, "C", 1, true, 11 * MIN);
		CHECK_EQ_INT(t, dispatch(t, &r, 11 * MIN), 0); /* B's room */
		CHECK_EQ_INT(t, mu_fleet_job_requeue(r.f, r.id[a[7]], 12 * MIN), MU_OK);
		CHECK_EQ_INT(t, info(t, &r, b).victims, 0);
		CHECK_EQ_INT(t, dispatch(t, &r, 12 * MIN), 1);
		CHECK_EQ_INT(t, info(t, &r, b).state, MU_FJ_DISPATCHED);
		CHECK_EQ_INT(t, info(t, &r, c).state, MU_FJ_QUEUED);
		mu_fleet_reclaims_release(&rc);
		mu_fleet_free(r.f);
	}
}

/* An engine of defaults with queue A (deserving gpus GPUs) and node n0
 * of 8 GPUs (its id in *nid). */
static mu_engine_t *engine_a(mu_t_t *t, int gpus, mu_id_t *nid)
{
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	mu_engine_t *e = NULL;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &e), MU_OK);
	mu_queue_spec_t q;
	queue_of(&q, "A", gpus);
	CHECK_EQ_INT(t, mu_engine_queue_upsert(e, &q), MU_OK);
	mu_node_spec_t n = node_of("n0", 8);
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n, nid), MU_OK);
	return e;
}

/* The what-if with some pods of a job gone (round 16, the first step of
 * elastic victims across clusters): one node of 8 GPUs runs an elastic
 * job of six 1-GPU pods (minMember 2) and A's 2-GPU job, full.  A 3-GPU
 * probe does not fit with one or two of the elastic job's pods gone, fits
 * with three (npods 3) or the whole job (npods 0), and with one surplus
 * pod and the 2-GPU job; the job runs its six pods after each. */
static void test_whatif_without_pods(mu_t_t *t)
{
	mu_id_t nid;
	mu_engine_t *e = engine_a(t, 8, &nid);
	jobs_t w = {0};
	int el = add_job(&w, "A", 1, true, 0), two = add_job(&w, "A", 2, true, 0);
	w.ps[el].replicas = 6;
	w.js[el].min_member = 2;
	int probe = add_job(&w, "A", 3, true, MIN);
	mu_id_t id[2];
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &w.js[el], 0, &id[0]), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &w.js[two], 0, &id[1]), MU_OK);
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, &d), MU_OK);
	mu_decisions_release(&d);
	mu_job_info_t ji;
	CHECK_EQ_INT(t, mu_engine_job_info(e, id[0], &ji), MU_OK);
	CHECK_EQ_INT(t, ji.bound, 6);
	const int32_t want[4] = {1, 2, 3, 0};
	const bool fits[4] = {false, false, true, true};
	for (int i = 0; i < 4; i++) {
		mu_whatif_t wi;
		CHECK_EQ_INT(t, mu_engine_job_whatif_without_pods(e, &w.js[probe], MIN, id, &want[i], 1, &wi),
			     MU_OK);
		CHECK_EQ_INT(t, wi.fits, fits[i]);
		CHECK_EQ_INT(t, mu_engine_job_info(e, id[0], &ji), MU_OK);
		CHECK_EQ_INT(t, ji.bound, 6); /* bound back */
		CHECK_EQ_INT(t, ji.state, MU_JOB_RUNNING);
	}
	mu_whatif_t wi;
	CHECK_EQ_INT(t, mu_engine_job_whatif_without(e, &w.js[probe], MIN, &id[1], 1, &wi), MU_OK);
	CHECK(t, !wi.fits); /* the 2-GPU job alone leaves 2 */
	const int32_t both[2] = {1, 0};
	CHECK_EQ_INT(t, mu_engine_job_whatif_without_pods(e, &w.js[probe], MIN, id, both, 2, &wi), MU_OK);
	CHECK(t, wi.fits); /* one surplus pod and the 2-GPU job: 3 */
	mu_engine_free(e);
}

/* Where the what-if put each pod (round 22, the fleet's nomination):
 * node n0 (8 GPUs) runs X's eight 1-GPU pods, n1 (4 GPUs) is empty.  A
 * probe of two 4-GPU pods does not fit (every entry -1); with four of X's
 * pods gone it fits, one pod on each node, the entry past its pods -1;
 * X keeps its eight pods; a negative count or a NULL array is refused. */
static void test_whatif_where(mu_t_t *t)
{
	mu_id_t nid[2];
	mu_engine_t *e = engine_a(t, 16, &nid[0]);
	mu_node_spec_t n1 = node_of("n1", 4);
	jobs_t w = {0};
	int x = add_job(&w, "A", 1, true, 0);
	w.ps[x].replicas = 8;
	w.js[x].min_member = 2;
	mu_id_t xid;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &w.js[x], 0, &xid), MU_OK);
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, &d), MU_OK);
	mu_decisions_release(&d);
	CHECK_EQ_INT(t, mu_engine_node_upsert(e, &n1, &nid[1]), MU_OK);
	int probe = add_job(&w, "A", 4, true, MIN);
	w.ps[probe].replicas = 2;
	w.js[probe].min_member = 2;
	mu_id_t at[3] = {7, 7, 7};
	mu_whatif_t wi;
	CHECK_EQ_INT(t, mu_engine_job_whatif_where(e, &w.js[probe], MIN, NULL, NULL, 0, at, 3, &wi),
		     MU_OK);
	CHECK(t, !wi.fits);
	CHECK(t, at[0] == -1 && at[1] == -1 && at[2] == -1);
	const int32_t four = 4;
	CHECK_EQ_INT(t, mu_engine_job_whatif_where(e, &w.js[probe], MIN, &xid, &four, 1, at, 3, &wi),
		     MU_OK);
	CHECK(t, wi.fits);
	CHECK(t, (at[0] == nid[0] && at[1] == nid[1]) || (at[0] == nid[1] && at[1] == nid[0]));
	CHECK_EQ_INT(t, (int)at[2], -1);
	mu_job_info_t ji;
	CHECK_EQ_INT(t, mu_engine_job_info(e, xid, &ji), MU_OK);
	CHECK_EQ_INT(t, ji.bound, 8); /* bound back */
	CHECK_EQ_INT(t, mu_engine_job_whatif_where(e, &w.js[probe], MIN, NULL, NULL, 0, at, -1, &wi),
		     MU_EINVAL);
	CHECK_EQ_INT(t, mu_engine_job_whatif_where(e, &w.js[probe], MIN, NULL, NULL, 0, NULL, 2, &wi),
		     MU_EINVAL);
	mu_engine_free(e);
}

/* The filters between pods run again for a placed job (round 23, the
 * fleet's second filter pass): on n0 (8 GPUs) P (labels app=b) runs, and
 * D (required pod affinity to app=b on the node) is placed beside it; its
 * check passes.  With P withdrawn it fails on pod affinity, pod 0, and D
 * keeps its pod on n0 and its GPU; an unknown job and a NULL argument are
 * refused. */
static void test_job_recheck(mu_t_t *t)
{
	mu_id_t n0;
	mu_engine_t *e = engine_a(t, 16, &n0);
	jobs_t w = {0};
	static const char *vb[1] = {"b"};
	static mu_sel_req_t rb = {.key = "app", .op = MU_SEL_IN, .values = vb, .nvalues = 1};
	static mu_pod_term_t to_b = {.sel = {.reqs = &rb, .nreqs = 1},
				     .topology_key = "kubernetes.io/hostname"};
	static mu_label_t app_b = {"app", "b"};
	int p = add_job(&w, "A", 1, true, 0), d = add_job(&w, "A", 1, true, 0);
	w.ps[p].labels = &app_b;
	w.ps[p].nlabels = 1;
	w.ps[d].pod_terms = &to_b;
	w.ps[d].npod_terms = 1;
	mu_id_t pid, did;
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &w.js[p], 0, &pid), MU_OK);
	CHECK_EQ_INT(t, mu_engine_pod_bound(e, pid, 0, 0, n0, NULL, 0), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_submit(e, &w.js[d], 0, &did), MU_OK);
	mu_decisions_t dd;
	mu_decisions_init(&dd);
	CHECK_EQ_INT(t, mu_engine_cycle(e, 0, &dd), MU_OK);
	mu_decisions_release(&dd);
	CHECK_EQ_INT(t, (int)mu_engine_pod_node(e, did, 0, 0), (int)n0);
	mu_filter_t why = MU_F_UNSCHEDULABLE;
	int32_t pod = 7;
	CHECK_EQ_INT(t, mu_engine_job_recheck(e, did, &why, &pod), MU_OK);
	CHECK_EQ_INT(t, (int)why, (int)MU_F_COUNT);
	CHECK_EQ_INT(t, pod, -1);
	CHECK_EQ_INT(t, mu_engine_job_withdraw(e, pid, MIN), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_recheck(e, did, &why, &pod), MU_OK);
	CHECK_EQ_INT(t, (int)why, (int)MU_F_POD_AFFINITY);
	CHECK_EQ_INT(t, pod, 0);
	CHECK_EQ_INT(t, (int)mu_engine_pod_node(e, did, 0, 0), (int)n0); /* bound back */
	mu_node_info_t ni;
	CHECK_EQ_INT(t, mu_engine_node_info(e, n0, &ni), MU_OK);
	CHECK_EQ_INT(t, (int)ni.free.v[MU_RES_GPU], 7);
	CHECK_EQ_INT(t, mu_engine_job_recheck(e, 99, &why, &pod), MU_ENOENT);
	CHECK_EQ_INT(t, mu_engine_job_recheck(e, did, NULL, &pod), MU_EINVAL);
	mu_engine_free(e);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_np_within_deserved);
	MU_RUN(&t, test_decay_as_engine);
	MU_RUN(&t, test_reclaim_basic);
	MU_RUN(&t, test_reclaim_lines);
	MU_RUN(&t, test_reclaim_one_cluster);
	MU_RUN(&t, test_reclaim_hold);
	MU_RUN(&t, test_reclaim_hold_room);
	MU_RUN(&t, test_reclaim_steer);
	MU_RUN(&t, test_reclaim_second_pass);
	MU_RUN(&t, test_reclaim_marked);
	MU_RUN(&t, test_preempt_in_queue_as_engine);
	MU_RUN(&t, test_reclaim_as_engine);
	MU_RUN(&t, test_reclaim_pdb_as_engine);
	MU_RUN(&t, test_reclaim_every_job);
	MU_RUN(&t, test_reclaim_cooldown);
	MU_RUN(&t, test_reclaim_restart_claimant);
	MU_RUN(&t, test_whatif_without_pods);
	MU_RUN(&t, test_whatif_where);
	MU_RUN(&t, test_job_recheck);
	return mu_t_done(&t);
}
