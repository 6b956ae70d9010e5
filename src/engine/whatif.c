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
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* Places the probe in slot jid and fills out; undoes every bind.  The
 * end-list queue is cut back to where it was, so no entry names the slot.
 * O(pods x class nodes) plus the aggregate estimate when asked. */
static int whatif_place(mu_engine_t *e, int32_t jid, bool want_start,
			mu_whatif_t *out)
{
	mu__job_t *j = &e->jobs[jid];
	mu_reason_t *r = &out->reason;
	*r = (mu_reason_t){.podset = -1, .limit_queue = -1, .limit_res = -1,
			   .fs_queue = -1, .blocked_by = -1, .nodes_total = e->nlive};
	int32_t need = j->min_member;
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
	if (want_start)
		out->expected_start = mu__expected_start(e, j);
	return MU_OK;
}

int mu_engine_job_whatif(mu_engine_t *e, const mu_job_spec_t *s, mu_time_t now,
			 bool want_start, mu_whatif_t *out)
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
	rc = whatif_place(e, jid, want_start, out);
	mu__job_unbuild(e, &e->jobs[jid]);
	return rc;
}
