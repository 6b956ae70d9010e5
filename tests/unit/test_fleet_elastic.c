/*
 * test_fleet_elastic.c - elastic jobs' surplus pods as victims of reclaim
 * across clusters (round 17, mu_fleet_reclaim with shrinkable jobs,
 * mu_fleet_job_shrink): the engine's own elastic victim test
 * (tests/unit/test_preempt.c test_elastic_surplus_first) given to the
 * engine and to a fleet of one cluster side by side; a case of Volcano's
 * preempt action (volcano-sh/volcano pkg/scheduler/actions/preempt/
 * preempt_test.go, "preempt enough tasks to fit large task of different
 * job": a job of three one-CPU tasks, minAvailable 1, loses two of them
 * to a 5-CPU task on a 6-CPU node; the engine's node plan stops the job
 * whole there, and in two cases below, which the checks allow and
 * docs/dispatch.md records); a surplus pod whose whole job is
 * taken too counted once; never below the minimum; budgets; a cluster
 * whose copies cannot be shrunk (pull mode) giving whole jobs; and the
 * shrink confirmed (usage, the model, the claimant placed, whole again
 * once requeued).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/fleet.h"
#include "fleet_fixture.h"

#define MAXJ 32
#define WHOLE 100 /* ev[]: the engine suspended the whole job */

/* Jobs kept alive for both sides: `pods` pods of `gpus` GPUs each,
 * minMember min (0: all), shrinkable when min > 0. */
typedef struct jobs {
	mu_podset_spec_t ps[MAXJ];
	mu_job_spec_t js[MAXJ];
	mu_fleet_job_spec_t fs[MAXJ];
	char names[MAXJ][16];
	int n;
} jobs_t;

static int add_job(jobs_t *w, const char *queue, int pods, int gpus, int min, int prio,
		   mu_time_t submit)
{
	int i = w->n++;
	snprintf(w->names[i], sizeof w->names[i], "j%d", i);
	memset(&w->ps[i], 0, sizeof w->ps[i]);
	w->ps[i].name = "main";
	w->ps[i].replicas = pods;
	w->ps[i].req.v[MU_RES_CPU] = 1000;
	w->ps[i].req.v[MU_RES_GPU] = gpus;
	memset(&w->js[i], 0, sizeof w->js[i]);
	w->js[i].name = w->names[i];
	w->js[i].queue = queue;
	w->js[i].podsets = &w->ps[i];
	w->js[i].npodsets = 1;
	w->js[i].submit = submit;
	w->js[i].runtime_estimate = 10 * HOUR;
	w->js[i].preemptible = true;
	w->js[i].priority = prio;
	w->js[i].min_member = min;
	w->fs[i] = (mu_fleet_job_spec_t){.job = &w->js[i], .shrinkable = min > 0};
	return i;
}

typedef struct fx {
	mu_engine_t *e; /* the engine side (preemption and reclaim on) */
	mu_fleet_t *f;
	int32_t cid;
	mu_id_t eid[MAXJ], fid[MAXJ];
	jobs_t w;
} fx_t;

/* nodes nodes of `gpus` GPUs on both sides; no_shrink: the fleet's
 * cluster cannot shrink its copies. */
static void fx_init(mu_t_t *t, fx_t *x, const mu_queue_spec_t *qs, int nq, int nodes, int gpus,
		    bool no_shrink)
{
	memset(x, 0, sizeof *x);
	mu_engine_config_t cfg;
	mu_engine_config_defaults(&cfg);
	cfg.preemption = cfg.reclaim = true;
	cfg.consolidate = false;
	cfg.order = MU_ORDER_PRIORITY;
	CHECK_EQ_INT(t, mu_engine_new(&cfg, &x->e), MU_OK);
	mu_fleet_config_t fc;
	mu_fleet_config_defaults(&fc);
	CHECK_EQ_INT(t, mu_fleet_new(&fc, &x->f), MU_OK);
	mu_cluster_spec_t cs = {.name = "only", .tier = MU_TIER_PRIVATE, .no_shrink = no_shrink};
	CHECK_EQ_INT(t, mu_fleet_cluster_add(x->f, &cs, &x->cid), MU_OK);
	for (int i = 0; i < nodes; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%d", i);
		mu_node_spec_t n = node_of(name, gpus);
		CHECK_EQ_INT(t, mu_engine_node_upsert(x->e, &n, NULL), MU_OK);
		CHECK_EQ_INT(t, mu_fleet_node_upsert(x->f, x->cid, &n), MU_OK);
	}
	for (int i = 0; i < nq; i++) {
		CHECK_EQ_INT(t, mu_engine_queue_upsert(x->e, &qs[i]), MU_OK);
		CHECK_EQ_INT(t, mu_fleet_queue_upsert(x->f, &qs[i]), MU_OK);
	}
}

/* Job i submitted to both sides at now, and one cycle and one dispatch
 * pass; returns the dispatches. */
static int fx_submit(mu_t_t *t, fx_t *x, int i, mu_time_t now)
{
	CHECK_EQ_INT(t, mu_engine_job_submit(x->e, &x->w.js[i], now, &x->eid[i]), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(x->f, &x->w.fs[i], now, &x->fid[i]), MU_OK);
	for (int c = 0; c < 8; c++) { /* an elastic job grows a pod a turn */
		mu_decisions_t d;
		mu_decisions_init(&d);
		CHECK_EQ_INT(t, mu_engine_cycle(x->e, now, &d), MU_OK);
		mu_decisions_release(&d);
	}
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(x->f, now, &fd), MU_OK);
	int n = (int)fd.n;
	mu_fleet_decisions_release(&fd);
	return n;
}

/* Claimant i at now: the engine's evictions per job (into ev[], the
 * surplus pods evicted, or WHOLE) and the fleet's reclaim into rc. */
static void fx_claim(mu_t_t *t, fx_t *x, int i, mu_time_t now, int *ev, mu_fleet_reclaims_t *rc)
{
	CHECK_EQ_INT(t, mu_engine_job_submit(x->e, &x->w.js[i], now, &x->eid[i]), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_submit(x->f, &x->w.fs[i], now, &x->fid[i]), MU_OK);
	mu_decisions_t d;
	mu_decisions_init(&d);
	CHECK_EQ_INT(t, mu_engine_cycle(x->e, now, &d), MU_OK);
	for (size_t k = 0; k < d.n; k++)
		for (int j = 0; j < x->w.n && d.v[k].kind == MU_DEC_EVICT; j++)
			if (x->eid[j] == d.v[k].job && j != i) /* WHOLE: suspended */
				ev[j] = d.v[k].suspend ? WHOLE : ev[j] + 1;
	mu_decisions_release(&d);
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(x->f, now, &fd), MU_OK);
	CHECK_EQ_INT(t, (int)fd.n, 0);
	mu_fleet_decisions_release(&fd);
	CHECK_EQ_INT(t, mu_fleet_reclaim(x->f, now, rc), MU_OK);
}

/* The fleet's entry for job i in rc, or NULL. */
static const mu_fleet_reclaim_t *entry(const fx_t *x, const mu_fleet_reclaims_t *rc, int i)
{
	for (size_t k = 0; k < rc->n; k++)
		if (rc->v[k].victim == x->fid[i])
			return &rc->v[k];
	return NULL;
}

/* The pods the fleet takes of job i (its whole job: all its pods). */
static int fleet_pods(const fx_t *x, const mu_fleet_reclaims_t *rc, int i)
{
	const mu_fleet_reclaim_t *r = entry(x, rc, i);
	return !r ? 0 : r->pods > 0 ? r->pods : x->w.ps[i].replicas;
}

static void fx_free(fx_t *x)
{
	mu_engine_free(x->e);
	mu_fleet_free(x->f);
}

static int64_t used_gpu(mu_t_t *t, fx_t *x, int32_t q)
{
	mu_fleet_queue_info_t qi;
	CHECK_EQ_INT(t, mu_fleet_queue_info(x->f, q, &qi), MU_OK);
	return qi.used.v[MU_RES_GPU];
}

/* test_preempt.c's test_elastic_surplus_first on both sides (the engine
 * and the fleet agree): two 8-GPU
 * nodes, queue q; a gang (one 8-GPU pod) and an elastic job (two 4-GPU
 * pods, minMember 1); a 4-GPU job of priority 10 takes one surplus pod
 * of the elastic job, never the gang, which keeps running.  The fleet's
 * shrink then places the claimant, and the elastic job runs on with one
 * pod, its usage down by four GPUs. */
static void test_surplus_first_as_engine(mu_t_t *t)
{
	mu_queue_spec_t qs[1];
	queue_of(&qs[0], "q", 16);
	fx_t x;
	fx_init(t, &x, qs, 1, 2, 8, false);
	int gang = add_job(&x.w, "q", 1, 8, 0, 0, 0);
	int el = add_job(&x.w, "q", 2, 4, 1, 0, 0);
	CHECK_EQ_INT(t, fx_submit(t, &x, gang, 0), 1);
	CHECK_EQ_INT(t, fx_submit(t, &x, el, 0), 1);
	int high = add_job(&x.w, "q", 1, 4, 0, 10, 10 * MIN);
	int ev[MAXJ] = {0};
	mu_fleet_reclaims_t rc = {0};
	fx_claim(t, &x, high, 10 * MIN, ev, &rc);
	CHECK_EQ_INT(t, ev[el], 1);
	CHECK_EQ_INT(t, ev[gang], 0);
	CHECK_EQ_INT(t, (int)rc.n, 1);
	CHECK_EQ_INT(t, fleet_pods(&x, &rc, el), 1);
	CHECK_EQ_INT(t, fleet_pods(&x, &rc, gang), 0);
	CHECK(t, rc.n == 1 && rc.v[0].in_queue && rc.v[0].for_job == x.fid[high]);
	mu_fleet_job_info_t ji;
	CHECK_EQ_INT(t, mu_fleet_job_info(x.f, x.fid[el], &ji), MU_OK);
	CHECK_EQ_INT(t, ji.shrinking, 1);
	/* nothing placed before the shrink is confirmed */
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(x.f, 11 * MIN, &fd), MU_OK);
	CHECK_EQ_INT(t, (int)fd.n, 0);
	int64_t before = used_gpu(t, &x, 0);
	CHECK_EQ_INT(t, mu_fleet_job_shrink(x.f, x.fid[el], 1, 11 * MIN), MU_OK);
	CHECK_EQ_INT(t, used_gpu(t, &x, 0), before - 4000);
	CHECK_EQ_INT(t, mu_fleet_job_info(x.f, x.fid[el], &ji), MU_OK);
	CHECK_EQ_INT(t, ji.state, MU_FJ_DISPATCHED);
	CHECK_EQ_INT(t, ji.shrunk, 1);
	CHECK_EQ_INT(t, ji.shrinking, 0);
	CHECK_EQ_INT(t, (int)ji.gpu_milli, 4000);
	CHECK_EQ_INT(t, mu_fleet_job_info(x.f, x.fid[high], &ji), MU_OK);
	CHECK_EQ_INT(t, ji.victims, 0);
	CHECK_EQ_INT(t, mu_fleet_dispatch(x.f, 11 * MIN, &fd), MU_OK);
	CHECK_EQ_INT(t, (int)fd.n, 1);
	CHECK(t, fd.n == 1 && fd.v[0].job == x.fid[high]);
	/* the model holds one pod of it: 4 GPUs free beside the claimant */
	const mu_engine_t *m = mu_fleet_cluster_engine(x.f, x.cid);
	mu_res_t alloc, used;
	mu_engine_totals(m, &alloc, &used);
	CHECK_EQ_INT(t, (int)used.v[MU_RES_GPU], 16000);
	/* below its minimum: refused */
	CHECK_EQ_INT(t, mu_fleet_job_shrink(x.f, x.fid[el], 1, 12 * MIN), MU_EINVAL);
	CHECK_EQ_INT(t, mu_fleet_job_shrink(x.f, x.fid[gang], 1, 12 * MIN), MU_EINVAL);
	/* requeued: whole again, its usage all gone */
	CHECK_EQ_INT(t, mu_fleet_job_requeue(x.f, x.fid[el], 12 * MIN), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_info(x.f, x.fid[el], &ji), MU_OK);
	CHECK_EQ_INT(t, ji.shrunk, 0);
	CHECK_EQ_INT(t, (int)ji.gpu_milli, 8000);
	CHECK_EQ_INT(t, used_gpu(t, &x, 0), 12000);
	for (int i = 0; i < x.w.n; i++)
		CHECK_EQ_INT(t, mu_fleet_job_finish(x.f, x.fid[i], 13 * MIN), MU_OK);
	mu_fleet_queue_info_t qi;
	CHECK_EQ_INT(t, mu_fleet_queue_info(x.f, 0, &qi), MU_OK);
	CHECK_EQ_INT(t, (int)qi.used.v[MU_RES_GPU], 0);
	CHECK_EQ_INT(t, qi.running + qi.queued, 0);
	mu_fleet_decisions_release(&fd);
	mu_fleet_reclaims_release(&rc);
	fx_free(&x);
}

/* Volcano's "preempt enough tasks to fit large task of different job"
 * (preempt_test.go), in GPUs: one 6-GPU node, queue q1; pg1 runs three
 * 1-GPU pods with minAvailable 1 (low priority); pg2's one 5-GPU pod
 * (high priority) needs two of them: pg1 loses two pods and runs on with
 * one.  Volcano keeps its third by a non-preemptable pod, muster by the
 * minimum; the engine evicts the same two. */
static void test_volcano_enough_tasks(mu_t_t *t)
{
	mu_queue_spec_t qs[1];
	queue_of(&qs[0], "q1", 6);
	fx_t x;
	fx_init(t, &x, qs, 1, 1, 6, false);
	int pg1 = add_job(&x.w, "q1", 3, 1, 1, 0, 0);
	CHECK_EQ_INT(t, fx_submit(t, &x, pg1, 0), 1);
	int pg2 = add_job(&x.w, "q1", 1, 5, 0, 100, 10 * MIN);
	int ev[MAXJ] = {0};
	mu_fleet_reclaims_t rc = {0};
	fx_claim(t, &x, pg2, 10 * MIN, ev, &rc);
	/* (until round 20 the engine suspended pg1 whole here: its plan
	 * cost counted each surplus pod of the claimant's own queue as a
	 * victim, and a single whole job ended the node's search) */
	CHECK_EQ_INT(t, ev[pg1], 2);
	CHECK_EQ_INT(t, (int)rc.n, 1);
	CHECK_EQ_INT(t, fleet_pods(&x, &rc, pg1), 2);
	CHECK_EQ_INT(t, mu_fleet_job_shrink(x.f, x.fid[pg1], 2, 11 * MIN), MU_OK);
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(x.f, 11 * MIN, &fd), MU_OK);
	CHECK(t, fd.n == 1 && fd.v[0].job == x.fid[pg2]);
	mu_fleet_decisions_release(&fd);
	mu_fleet_reclaims_release(&rc);
	fx_free(&x);
}

/* Reclaim across queues (round 13's test_reclaim_as_engine with an
 * elastic job): one 8-GPU node, A (deserved 4) runs an elastic job of
 * four 1-GPU pods (minMember 2) and four 1-GPU jobs; B (deserved 4) asks
 * 3 GPUs: the two surplus pods go first, then one whole job (the
 * youngest), on both sides.  With the four 1-GPU jobs not preemptible
 * and B asking 4, the elastic job's whole is needed: its surplus pods
 * and the job are one entry, taken whole (counted once), as the engine
 * evicts its four pods.  On a cluster whose copies cannot shrink (pull
 * mode) no entry takes pods only. */
static void test_reclaim_surplus_as_engine(mu_t_t *t)
{
	for (int variant = 0; variant < 3; variant++) {
		mu_queue_spec_t qs[2];
		queue_of(&qs[0], "A", 4);
		queue_of(&qs[1], "B", 4);
		fx_t x;
		fx_init(t, &x, qs, 2, 1, 8, variant == 2);
		int el = add_job(&x.w, "A", 4, 1, 2, 0, 0);
		CHECK_EQ_INT(t, fx_submit(t, &x, el, 0), 1);
		int one[4];
		for (int i = 0; i < 4; i++) {
			one[i] = add_job(&x.w, "A", 1, 1, 0, 0, (i + 1) * MIN);
			x.w.js[one[i]].preemptible = variant != 1; /* 1: only the elastic one */
			CHECK_EQ_INT(t, fx_submit(t, &x, one[i], (i + 1) * MIN), 1);
		}
		int b = add_job(&x.w, "B", 1, variant == 1 ? 4 : 3, 0, 0, 10 * MIN);
		int ev[MAXJ] = {0};
		mu_fleet_reclaims_t rc = {0};
		fx_claim(t, &x, b, 10 * MIN, ev, &rc);
		if (variant == 0) {
			/* (until round 20 the engine's node plan stopped the
			 * elastic job whole here, 4 GPUs for 3) */
			CHECK_EQ_INT(t, ev[el], 2);
			CHECK_EQ_INT(t, ev[one[3]], WHOLE);
			CHECK_EQ_INT(t, (int)rc.n, 2);
			CHECK_EQ_INT(t, fleet_pods(&x, &rc, el), 2);
			CHECK(t, entry(&x, &rc, el) && entry(&x, &rc, el)->pods == 2);
			CHECK(t, entry(&x, &rc, one[3]) && entry(&x, &rc, one[3])->pods == 0);
			/* once the shrink is confirmed and the whole one is back,
			 * the claimant goes */
			CHECK_EQ_INT(t, mu_fleet_job_shrink(x.f, x.fid[el], 2, 11 * MIN), MU_OK);
			mu_fleet_job_info_t ji;
			CHECK_EQ_INT(t, mu_fleet_job_info(x.f, x.fid[b], &ji), MU_OK);
			CHECK_EQ_INT(t, ji.victims, 1);
			CHECK_EQ_INT(t, mu_fleet_job_requeue(x.f, x.fid[one[3]], 11 * MIN), MU_OK);
			mu_fleet_decisions_t fd;
			mu_fleet_decisions_init(&fd);
			CHECK_EQ_INT(t, mu_fleet_dispatch(x.f, 11 * MIN, &fd), MU_OK);
			CHECK(t, fd.n == 1 && fd.v[0].job == x.fid[b]);
			mu_fleet_decisions_release(&fd);
			CHECK_EQ_INT(t, used_gpu(t, &x, 0), 5000);
		} else if (variant == 1) {
			/* its two surplus pods do not make room: the job whole,
			 * one entry (its surplus pods counted once, with it) */
			CHECK_EQ_INT(t, (int)rc.n, 1);
			const mu_fleet_reclaim_t *r = entry(&x, &rc, el);
			CHECK(t, r && r->pods == 0);
			CHECK_EQ_INT(t, ev[el], WHOLE);
		} else {
			for (size_t k = 0; k < rc.n; k++)
				CHECK_EQ_INT(t, rc.v[k].pods, 0);
			CHECK_EQ_INT(t, (int)rc.n, 3); /* three 1-GPU jobs, whole */
		}
		mu_fleet_reclaims_release(&rc);
		fx_free(&x);
	}
}

/* Budgets (round 14) on surplus pods: one surplus pod counts one against
 * its budget (the engine's over_budget).  A 6-GPU node, q runs an elastic
 * job of four 1-GPU pods (minMember 2) whose budget lets one pod go, and
 * two 1-GPU jobs whose budgets let none go; a 2-GPU job of priority 10
 * takes the two surplus pods (the first within the budget, the second
 * over it as the whole jobs would be: then surplus before whole) and
 * none of the other jobs. */
static void test_surplus_budget(mu_t_t *t)
{
	mu_queue_spec_t qs[1];
	queue_of(&qs[0], "q", 6);
	fx_t x;
	fx_init(t, &x, qs, 1, 1, 6, false);
	int el = add_job(&x.w, "q", 4, 1, 2, 0, 0);
	CHECK_EQ_INT(t, fx_submit(t, &x, el, 0), 1);
	int o1 = add_job(&x.w, "q", 1, 1, 0, 0, MIN), o2 = add_job(&x.w, "q", 1, 1, 0, 0, 2 * MIN);
	CHECK_EQ_INT(t, fx_submit(t, &x, o1, MIN), 1);
	CHECK_EQ_INT(t, fx_submit(t, &x, o2, 2 * MIN), 1);
	CHECK_EQ_INT(t, mu_fleet_job_disruptions(x.f, x.fid[el], 1), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_disruptions(x.f, x.fid[o1], 0), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_job_disruptions(x.f, x.fid[o2], 0), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_disruptions(x.e, x.eid[el], 1), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_disruptions(x.e, x.eid[o1], 0), MU_OK);
	CHECK_EQ_INT(t, mu_engine_job_disruptions(x.e, x.eid[o2], 0), MU_OK);
	int high = add_job(&x.w, "q", 1, 2, 0, 10, 10 * MIN);
	int ev[MAXJ] = {0};
	mu_fleet_reclaims_t rc = {0};
	fx_claim(t, &x, high, 10 * MIN, ev, &rc);
	CHECK_EQ_INT(t, ev[o1] + ev[o2], 0);
	CHECK_EQ_INT(t, ev[el], 2); /* (whole until round 20, as above) */
	CHECK_EQ_INT(t, (int)rc.n, 1);
	CHECK_EQ_INT(t, fleet_pods(&x, &rc, el), 2);
	mu_fleet_reclaims_release(&rc);
	fx_free(&x);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_surplus_first_as_engine);
	MU_RUN(&t, test_volcano_enough_tasks);
	MU_RUN(&t, test_reclaim_surplus_as_engine);
	MU_RUN(&t, test_surplus_budget);
	return mu_t_done(&t);
}
