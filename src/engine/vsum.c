/*
 * vsum.c - per node, a summary of what its possible victims hold.
 *
 * The victim search (preempt.c) walks a node's pods and judges each job
 * against the claimant before it can tell whether the node is worth a
 * plan.  On a full cluster most nodes are not: every node would need the
 * same evictions, or more.  A node's summary (mu__vsum_t) says, for the
 * running preemptible jobs with pods there, how many devices they could
 * free at most, the most one of them could free, the fewest GPUs one
 * eviction takes, their lowest priority, latest start and queue.  From it
 * the search gets, without walking the node, a lower bound of the cost of
 * any plan there (preempt.c: summary_skip()).
 *
 * A summary is recomputed only when its node changed: every bind and
 * release on the node, and every start or stop of a job with a pod there,
 * gives the node a new stamp (mu__node_dirty(), mu__vsum_touch_job()).
 * and every change of a running job's effective priority (order.c).
 * What else a summary reads is fixed while a job runs (preemptibility,
 * queue, pod sets, minimum, priority as submitted).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* Adds job v (a candidate) with pods on nid to summary s, once.  O(v's
 * pods) for a gang, O(1) for a single pod. */
static void add_job(const mu_engine_t *e, mu__vsum_t *s, const mu__job_t *v, int32_t nid)
{
	int64_t dev = 0, gpu = 0, podmin = INT64_MAX;
	for (int32_t p = 0, k = 0; p < v->npods; p++) {
		while (k + 1 < v->npodsets && p >= v->podsets[k + 1].first)
			k++; /* the pod set of pod p (pods are in pod set order) */
		if (v->pods[p].node != nid)
			continue;
		int64_t g = v->podsets[k].acct->v[MU_RES_GPU];
		dev += (g + 999) / 1000;
		gpu += g;
		podmin = g < podmin ? g : podmin;
	}
	bool surplus = !v->parts && v->min_member < v->npods;
	int64_t least = surplus && podmin < gpu ? podmin : gpu;
	s->ncand++;
	s->devsum += dev;
	s->maxdev = dev > s->maxdev ? (int32_t)dev : s->maxdev;
	s->gmin = least < s->gmin ? least : s->gmin;
	s->minprio = v->eprio < s->minprio ? v->eprio : s->minprio;
	s->maxprio = v->priority > s->maxprio ? v->priority : s->maxprio;
	s->max_start = v->start > s->max_start ? v->start : s->max_start;
	s->queue = s->ncand == 1 || s->queue == v->queue ? v->queue : -1;
	s->surplus |= surplus;
	(void)e;
}

/* Recomputes node nid's summary into s.  O(pods on nid + the pods of its
 * gangs). */
static void vsum_build(mu_engine_t *e, int32_t nid, mu__vsum_t *s)
{
	const mu__node_t *n = &e->nodes[nid];
	*s = (mu__vsum_t){n->pgen, INT64_MAX, INT64_MIN, 0, INT64_MAX, 0, 0, INT32_MAX, INT32_MIN,
			  -1, false};
	uint64_t stamp = ++e->gather_stamp; /* tags the jobs seen here */
	for (int32_t i = 0; i < n->npods; i++) {
		mu__job_t *v = &e->jobs[n->refs[i].job];
		if (v->gather_stamp == stamp)
			continue;
		v->gather_stamp = stamp;
		if (v->state != MU_JOB_RUNNING)
			continue;
		if (v->start < s->min_start)
			s->min_start = v->start;
		if (v->preemptible)
			add_job(e, s, v, nid);
	}
}

const mu__vsum_t *mu__vsum_get(mu_engine_t *e, int32_t nid)
{
	if (nid >= e->vsum_cap) { /* realloc, not mu__grow(): this file
				   * calls nothing of the engine's core */
		int32_t old = e->vsum_cap, cap = e->nnodes > nid ? e->nnodes : nid + 1;
		mu__vsum_t *v = realloc(e->vsum, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		memset(v + old, 0, (size_t)(cap - old) * sizeof *v);
		e->vsum = v;
		e->vsum_cap = cap;
	}
	mu__vsum_t *s = &e->vsum[nid];
	const mu__node_t *n = &e->nodes[nid];
	if (s->pgen == 0 || s->pgen != n->pgen)
		vsum_build(e, nid, s);
	return s;
}
