/*
 * pods.c - single-pod events from outside the cycle.
 *
 * A caller that binds pods itself learns about binds the engine did not
 * decide: pods already bound when it starts (by an earlier leader, with a
 * bind in flight, or by another scheduler), which mu_engine_pod_bound()
 * records on their node with their devices.  It also learns that a bind
 * the engine decided did not go through, which mu_engine_pod_unbind()
 * takes back so that the pod is placed again.  Both keep the accounting
 * the cycle keeps (node free vectors and devices, job, queue and cluster
 * usage, the running and pending lists) through its own helpers
 * (mu__pod_bind / mu__pod_release in cycle.c, mu__queue_* in queue.c).
 * mu_engine_job_disruptions() sets how many of a job's pods a disruption
 * budget lets go, which the victim choice reads (preempt.c).
 */
#include "engine/engine_int.h"

/* Whether d names any device: GPUs, a NUMA node, a NIC or CPUs. */
static bool names_devices(const mu_decision_t *d)
{
	return d->gpus || d->numa >= 0 || d->nic >= 0 || mu_cpuset_count(&d->cpus) > 0;
}

/* Checks the devices named in d for one pod of ps on node n.  MU_EINVAL
 * when they cannot be such a pod's: a GPU, NUMA node, NIC or CPU the node
 * does not have, a GPU count other than the request's (one device for a
 * share), or a NUMA node, NIC or CPUs for a pod set that does not ask for
 * them.  MU_ESTATE when they could be but another pod holds one of them.
 * Reads only; O(GPUs + CPU words). */
static int devices_check(const mu__node_t *n, const mu__podset_t *ps,
			 const mu_decision_t *d)
{
	int64_t whole = ps->req->v[MU_RES_GPU], milli = ps->req->v[MU_RES_GPU_MILLI];
	bool busy = false;
	int count = 0;
	if (n->ngpu < MU_MAX_GPUS && (d->gpus >> n->ngpu))
		return MU_EINVAL;
	for (int g = 0; g < n->ngpu; g++) {
		if (!(d->gpus & ((uint64_t)1 << g)))
			continue;
		count++;
		if (milli ? n->gpu_free[g] < milli : n->gpu_free[g] != 1000)
			busy = true;
	}
	if (count != (milli ? 1 : whole))
		return MU_EINVAL;
	int ncpus = mu_cpuset_count(&d->cpus);
	if (d->numa < -1 || d->nic < -1 || (d->nic >= 0 && !ps->want_nic) ||
	    (ncpus && (!ps->pin_cpus || ncpus != ps->req->v[MU_RES_CPU] / 1000)) ||
	    (d->numa >= 0 && !ps->aligned))
		return MU_EINVAL;
	const mu__ntopo_t *t = n->topo;
	if (!t)
		return d->numa >= 0 || d->nic >= 0 || ncpus ? MU_EINVAL :
		       busy ? MU_ESTATE : MU_OK;
	if (d->numa >= t->nnuma || d->nic >= t->nnics)
		return MU_EINVAL;
	if (d->nic >= 0 && !(t->free_nics & ((uint32_t)1 << d->nic)))
		busy = true;
	mu_cpuset_t all = {{0}};
	for (int32_t u = 0; u < t->nnuma; u++)
		for (int w = 0; w < MU_CPUSET_WORDS; w++)
			all.w[w] |= t->numa_cpus[u].w[w];
	for (int w = 0; w < MU_CPUSET_WORDS; w++) {
		if (d->cpus.w[w] & ~all.w[w])
			return MU_EINVAL;
		if (d->cpus.w[w] & ~t->free_cpus.w[w])
			busy = true;
	}
	return busy ? MU_ESTATE : MU_OK;
}

/* Resolves (job, podset, pod) to the job and its pod index: MU_ENOENT for
 * an unknown job, MU_ESTATE for a finished one, MU_EINVAL for a pod set or
 * pod out of range.  O(1). */
static int pod_lookup(mu_engine_t *e, mu_id_t job, int32_t podset, int32_t pod,
		      mu__job_t **jp, int32_t *p)
{
	if (!e || job < 0 || job >= e->njobs)
		return MU_ENOENT;
	mu__job_t *j = &e->jobs[job];
	if (j->state == MU_JOB_FINISHED || !j->pods)
		return MU_ESTATE;
	if (podset < 0 || podset >= j->npodsets || pod < 0 ||
	    pod >= j->podsets[podset].replicas)
		return MU_EINVAL;
	*jp = j;
	*p = j->podsets[podset].first + pod;
	return MU_OK;
}

int mu_engine_pod_bound(mu_engine_t *e, mu_id_t job, int32_t podset, int32_t pod,
			mu_id_t node, const mu_decision_t *devices, mu_time_t start)
{
	mu__job_t *j;
	int32_t p;
	int rc = pod_lookup(e, job, podset, pod, &j, &p);
	if (rc)
		return rc;
	if (node < 0 || node >= e->nnodes || e->nodes[node].removed)
		return MU_ENOENT;
	if (j->pods[p].node >= 0)
		return MU_ESTATE;
	mu__node_t *n = &e->nodes[node];
	if (j->nflav && j->nbound == 0) /* its pool is where it runs */
		for (int32_t f = 0; f < j->nflav; f++)
			if (j->flav_pool[f] == n->pool)
				mu__flav_set(e, j, f);
	const mu__podset_t *ps = &j->podsets[podset];
	bool exact = devices && names_devices(devices);
	mu__pod_t was = {.node = node, .numa = -1, .nic = -1};
	if (exact) {
		if ((rc = devices_check(n, ps, devices)) != MU_OK)
			return rc;
		was.gpus = devices->gpus;
		was.numa = devices->numa;
		was.nic = devices->nic;
		was.cpus = devices->cpus;
	}
	if ((rc = mu__pod_bind(e, j, p, node, exact ? &was : NULL)) != MU_OK)
		return rc;
	if (start < n->min_start) /* it ran before the engine saw it */
		n->min_start = start;
	if (j->state == MU_JOB_PENDING && j->nbound >= j->min_member && mu__parts_ok(e, j, NULL)) {
		mu__backfill_forget(e, j);
		if ((rc = mu__job_set_running(e, job, start)) != MU_OK) {
			mu__pod_release(e, j, p, false); /* nothing changed */
			return rc;
		}
		j->failed = false;
		mu__job_last_clear(j);
	}
	return MU_OK;
}

int mu_engine_pod_unbind(mu_engine_t *e, mu_id_t job, int32_t podset, int32_t pod,
			 mu_time_t now)
{
	mu__job_t *j;
	int32_t p;
	int rc = pod_lookup(e, job, podset, pod, &j, &p);
	if (rc)
		return rc;
	if (j->pods[p].node < 0)
		return MU_ESTATE;
	/* Listed first: the one step that can fail, before anything moved. */
	if ((rc = mu__queue_pending_insert(e, job)) != MU_OK)
		return rc;
	e->now = now;
	mu__pod_release(e, j, p, true);
	if (j->state == MU_JOB_RUNNING && (j->nbound < j->min_member || !mu__parts_ok(e, j, NULL))) {
		mu__job_set_pending(e, job);
		mu__backfill_forget(e, j);
		j->failed = false;
		mu__job_last_clear(j);
	}
	return MU_OK;
}

int mu_engine_job_disruptions(mu_engine_t *e, mu_id_t job, int32_t allowed)
{
	if (!e || job < 0 || job >= e->njobs)
		return MU_ENOENT;
	if (allowed < -1)
		return MU_ERANGE;
	e->jobs[job].disrupt_allowed = allowed;
	return MU_OK;
}
