/*
 * pods.c - pods that are bound already: "this pod of this job runs on that
 * node, with these devices".  The daemon calls it after a restart for pods
 * an earlier leader bound, and for pods bound by another scheduler, so that
 * the engine's accounting matches the cluster without scheduling them.
 * Work: O(devices + resources), plus the engine's bind bookkeeping.
 */
#include "engine/engine_int.h"

/* Whether the devices named in d are free on n for a pod of ps. */
static bool devices_free(const mu__node_t *n, const mu__podset_t *ps,
			 const mu_decision_t *d)
{
	int64_t whole = ps->req.v[MU_RES_GPU], milli = ps->req.v[MU_RES_GPU_MILLI];
	int count = 0;
	for (int g = 0; g < MU_MAX_GPUS; g++) {
		if (!(d->gpus & ((uint64_t)1 << g)))
			continue;
		if (g >= n->ngpu)
			return false;
		if (milli ? n->gpu_free[g] < milli : n->gpu_free[g] != 1000)
			return false;
		count++;
	}
	if (count != (milli ? 1 : whole))
		return false;
	const mu__ntopo_t *t = n->topo;
	if (!t)
		return d->numa < 0 && d->nic < 0 && mu_cpuset_count(&d->cpus) == 0;
	if (d->numa >= t->nnuma || (d->nic >= 0 && (d->nic >= t->nnics ||
						     !(t->free_nics & (1u << d->nic)))))
		return false;
	for (int w = 0; w < MU_CPUSET_WORDS; w++)
		if (d->cpus.w[w] & ~t->free_cpus.w[w])
			return false;
	return true;
}

int mu_engine_pod_bound(mu_engine_t *e, mu_id_t jid, int32_t ps, int32_t pod,
			mu_id_t nid, const mu_decision_t *d, mu_time_t start)
{
	if (jid < 0 || jid >= e->njobs || nid < 0 || nid >= e->nnodes ||
	    e->nodes[nid].removed)
		return MU_ENOENT;
	mu__job_t *j = &e->jobs[jid];
	if (j->state == MU_JOB_FINISHED || !j->pods)
		return MU_ESTATE;
	if (ps < 0 || ps >= j->npodsets || pod < 0 || pod >= j->podsets[ps].replicas)
		return MU_EINVAL;
	int32_t p = j->podsets[ps].first + pod;
	if (j->pods[p].node >= 0)
		return MU_ESTATE;
	mu__node_t *n = &e->nodes[nid];
	const mu__podset_t *set = &j->podsets[ps];
	mu__pod_t was = {.node = nid, .numa = -1, .nic = -1};
	bool exact = d && devices_free(n, set, d) &&
		     (d->gpus || set->req.v[MU_RES_GPU] + set->req.v[MU_RES_GPU_MILLI] == 0);
	if (exact) {
		was.gpus = d->gpus;
		was.numa = d->numa;
		was.nic = d->nic;
		was.cpus = d->cpus;
	}
	int rc = mu__pod_bind(e, j, p, nid, exact ? &was : NULL);
	if (rc)
		return rc;
	if (start < n->min_start) /* it ran before the engine saw it */
		n->min_start = start;
	if (j->state == MU_JOB_PENDING && j->nbound >= j->min_member) {
		mu__backfill_forget(e, j);
		rc = mu__job_set_running(e, jid, start);
		j->failed = false;
		memset(&j->last, 0, sizeof j->last);
	}
	return rc;
}
