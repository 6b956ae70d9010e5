/*
 * whatif.c - would this job start here now?  A dry run of the engine's own
 * gang placement that leaves the engine as it found it.
 *
 * The multi-cluster hub (src/dispatch) keeps one engine per cluster and asks
 * each candidate whether a job's gang fits there now, node by node (GPU
 * models, selectors, taints, topology), before it sends the job anywhere.
 * The job is built in the free slot past the last job (never counted,
 * named or listed), placed pod by pod exactly as a cycle places it (the
 * placement is logged in the engine's undo log), and the log is replayed
 * backwards: nothing stays bound.  Preemption, reclaim and consolidation
 * are not tried: the question is what fits as things are.
 * mu_engine_job_whatif_without() asks the same as if some running jobs
 * had left (their pods released, as preemption evicts, and bound back on
 * the same nodes and devices after): the fleet chooses its reclaim
 * victims across clusters with it; mu_engine_job_whatif_without_pods()
 * (round 16) lets only some pods of a job leave, as an elastic job's
 * surplus does when it is shrunk; mu_engine_job_whatif_where() (round 22)
 * also says on which node each pod went (the fleet's nomination of a
 * reclaim claimant, as kube-scheduler's nominated node).  A probe that does not fit gets, when
 * asked, the time its reservation would be due: the backfill's own
 * node-level replay (backfill.c, mu__resv_start), nothing reserved.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* Where the probe's pods were placed, asked for (round 22): the caller's
 * array and its length. */
typedef struct where {
	mu_id_t *nodes;
	int32_t n;
} where_t;

/* Places the probe in slot jid and fills out, and at (NULL: not asked)
 * with each pod's node before the binds are undone; undoes every bind.
 * The end-list queue is cut back to where it was, so no entry names the
 * slot.  O(pods x class nodes) plus the aggregate estimate when asked. */
static int whatif_place(mu_engine_t *e, int32_t jid, bool want_start,
			const where_t *at, mu_whatif_t *out)
{
	mu__gpu_models_sync(e); /* the pressure before any score */
	mu__job_t *j = &e->jobs[jid];
	mu_reason_t *r = &out->reason;
	*r = (mu_reason_t){.podset = -1, .limit_queue = -1, .limit_res = -1,
			   .fs_queue = -1, .blocked_by = -1, .nodes_total = e->nlive};
	int32_t need = j->min_member;
	for (int32_t p = 0; at && p < at->n; p++)
		at->nodes[p] = -1; /* placed or not, below */
	mu_res_t acct = {{0}};
	for (int32_t p = 0; p < j->npodsets; p++)
		for (int k = 0; k < MU_RES_MAX; k++)
			acct.v[k] += j->podsets[p].acct->v[k] * j->podsets[p].replicas;
	if (mu__queue_limit_check(e, j->queue, &acct, r) >= 0) {
		r->why = MU_WHY_QUEUE_LIMIT;
		goto unfit;
	}
	if (!j->preemptible && mu__queue_quota_check(e, j->queue, &acct, r) >= 0)
		goto unfit;
	int32_t ends_mark = e->nends_add;
	int32_t placing = e->placing;
	e->placing = jid;
	e->ntxn = 0;
	int32_t placed = j->topo >= 0 ? mu__place_topo(e, j, need, r) :
		mu__place_range(e, j, 0, j->npods, NULL, r);
	bool parts = placed >= need && mu__parts_ok(e, j, r);
	e->placing = placing;
	for (int32_t p = 0; at && placed >= need && parts && p < at->n && p < j->npods; p++)
		at->nodes[p] = j->pods[p].node; /* before the binds go */
	mu__txn_truncate(e, j, 0);
	if (e->ends_live && e->nends_add > ends_mark)
		e->nends_add = ends_mark;
	if (placed < 0)
		return placed;
	if (placed >= need && parts) {
		out->fits = true;
		return MU_OK;
	}
	if (r->why != MU_WHY_TOPOLOGY)
		r->why = placed ? MU_WHY_GANG : MU_WHY_UNSCHEDULABLE;
	r->pods_needed = need;
	r->pods_fit = placed;
unfit:
	/* when its reservation would be due, node by node (round 13; the
	 * aggregate's answer before, which a gang that fits in sum but on
	 * no set of nodes made too early) */
	if (want_start)
		return mu__resv_start(e, j, &out->expected_start);
	return MU_OK;
}

/* mu_engine_job_whatif() with at (NULL: not asked). */
static int whatif_at(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
		     bool want_start, const where_t *at, mu_whatif_t *out)
{
	if (!e || !s || !out)
		return MU_EINVAL;
	memset(out, 0, sizeof *out);
	out->expected_start = MU_TIME_NONE;
	int rc = mu__grow((void **)&e->jobs, &e->jobs_cap, e->njobs + 1, sizeof *e->jobs);
	if (rc)
		return rc;
	int32_t jid = e->njobs; /* past the last job: never seen by a walk */
	if ((rc = mu__job_build(e, jid, s, now)) != MU_OK)
		return rc;
	e->now = now;
	rc = whatif_place(e, jid, want_start, at, out);
	mu__job_unbuild(e, &e->jobs[jid]);
	return rc;
}

int mu_engine_job_whatif(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
			 bool want_start, mu_whatif_t *out)
{
	return whatif_at(e, s, now, want_start, NULL, out);
}

/* mu_engine_job_whatif_without_pods() with at (NULL: not asked). */
static int without_at(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
		      const mu_id_t *gone, const int32_t *npods, int32_t ngone,
		      const where_t *at, mu_whatif_t *out)
{
	if (!e || !s || !out || (ngone > 0 && !gone) || e->nevl != 0)
		return MU_EINVAL;
	for (int32_t i = 0; i < ngone; i++)
		if (gone[i] < 0 || gone[i] >= e->njobs)
			return MU_ENOENT;
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < ngone; i++) {
		mu__job_t *v = &e->jobs[gone[i]];
		if (v->state != MU_JOB_RUNNING)
			continue;
		/* npods[i] > 0: only that many of its bound pods, the last
		 * first (an elastic job shrunk); else all of them */
		int32_t skip = 0; /* bound pods that stay: the first ones */
		if (npods && npods[i] > 0) {
			for (int32_t p = 0; p < v->npods; p++)
				skip += v->pods[p].node >= 0;
			skip = skip > npods[i] ? skip - npods[i] : 0;
		}
		for (int32_t p = 0; p < v->npods && rc == MU_OK; p++) {
			if (v->pods[p].node < 0 || (skip > 0 && skip--))
				continue;
			rc = mu__grow((void **)&e->evl, &e->evl_cap, e->nevl + 1, sizeof *e->evl);
			if (rc == MU_OK) {
				e->evl[e->nevl++] = (mu__evict_t){gone[i], p, v->pods[p]};
				/* room grew: a failure cached before it is stale */
				mu__pod_release(e, v, p, true);
			}
		}
	}
	if (rc == MU_OK)
		rc = whatif_at(e, s, now, false, at, out);
	/* bound back, the last released first, on their very devices */
	for (int32_t i = e->nevl - 1; i >= 0; i--) {
		const mu__evict_t *x = &e->evl[i];
		int rb = mu__pod_bind(e, &e->jobs[x->job], x->pod, x->was.node, &x->was);
		if (rb && rc == MU_OK)
			rc = rb;
	}
	e->nevl = 0;
	return rc;
}

int mu_engine_job_whatif_without_pods(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
				      const mu_id_t *gone, const int32_t *npods, int32_t ngone,
				      mu_whatif_t *out)
{
	return without_at(e, s, now, gone, npods, ngone, NULL, out);
}

int mu_engine_job_whatif_without(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
				 const mu_id_t *gone, int32_t ngone, mu_whatif_t *out)
{
	return mu_engine_job_whatif_without_pods(e, s, now, gone, NULL, ngone, out);
}

int mu_engine_job_whatif_where(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
			       const mu_id_t *gone, const int32_t *npods, int32_t ngone,
			       mu_id_t *nodes, int32_t nnodes, mu_whatif_t *out)
{
	if (nnodes < 0 || (nnodes > 0 && !nodes))
		return MU_EINVAL;
	const where_t at = {nodes, nnodes};
	return without_at(e, s, now, gone, npods, ngone, &at, out);
}
