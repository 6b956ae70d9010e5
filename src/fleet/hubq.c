/*
 * hubq.c - hub queues: muster's queue semantics applied to a fleet.
 *
 * A hub queue has a deserved quota, a limit, over-quota weights and a
 * priority, all against the fleet's total usage, an optional parent, and
 * optional caps on what it may use on one cluster.  As in the engine's
 * queue tree, a queue's usage is its own jobs' plus its descendants', and
 * a job must fit the limit of its queue and of every ancestor.  Jobs wait
 * in a line sorted by priority, submit time and arrival; the queues are
 * served in the order of mu__hubq_pick(): two queues are compared where
 * their paths from the roots part, by the two sibling subtrees there:
 * higher priority, then inside their deserved quota (lower usage over
 * deserved first), then above it (lower over-quota usage over weight
 * first).  Usage counts only dispatched jobs:
 * a job that waits holds nothing.  The bottom file of src/fleet: it
 * calls no other file of the room.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_int.h"

int mu__fleet_grow(void **v, int32_t *cap, int32_t need, size_t elem)
{
	if (need <= *cap)
		return MU_OK;
	int64_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	if (n > INT32_MAX)
		return MU_ELIMIT;
	void *p = realloc(*v, (size_t)n * elem);
	if (!p)
		return MU_ENOMEM;
	*v = p;
	*cap = (int32_t)n;
	return MU_OK;
}

int32_t mu__hubq_find(const mu_fleet_t *f, const char *name)
{
	for (int32_t i = 0; name && i < f->nqueues; i++)
		if (strcmp(f->queues[i].name, name) == 0)
			return i;
	return -1;
}

mu_res_t mu__job_acct(const mu_job_spec_t *j)
{
	mu_res_t a = {{0}};
	for (size_t p = 0; p < j->npodsets; p++) {
		mu_res_t req = j->podsets[p].req;
		if (req.v[MU_RES_PODS] < 1)
			req.v[MU_RES_PODS] = 1;
		mu_res_t one = mu_res_acct(&req);
		for (int r = 0; r < MU_RES_MAX; r++)
			a.v[r] += one.v[r] * j->podsets[p].replicas;
	}
	return a;
}

/* The deepest a queue tree may be (a bound on every walk up). */
#define MU__HUBQ_DEPTH 16

bool mu__hubq_within_limit(const mu_fleet_t *f, int32_t qi, const mu_res_t *acct)
{
	for (int d = 0; qi >= 0 && d < MU__HUBQ_DEPTH; d++, qi = f->queues[qi].parent) {
		const mu__hubq_t *q = &f->queues[qi];
		for (int r = 0; r < MU_RES_MAX; r++)
			if (q->limit.v[r] != MU_RES_UNLIMITED &&
			    q->used.v[r] + acct->v[r] > q->limit.v[r] && acct->v[r] > 0)
				return false;
	}
	return true;
}

int mu__hubq_link(mu_fleet_t *f)
{
	for (int32_t i = 0; i < f->nqueues; i++) {
		/* a loop (or a tree too deep) is refused before anything moves */
		const char *p = f->queues[i].parent_name;
		int d = 0;
		for (; p && d <= MU__HUBQ_DEPTH; d++) {
			int32_t k = mu__hubq_find(f, p);
			if (k == i)
				return MU_EINVAL;
			p = k >= 0 ? f->queues[k].parent_name : NULL;
		}
		if (d > MU__HUBQ_DEPTH)
			return MU_EINVAL;
	}
	for (int32_t i = 0; i < f->nqueues; i++) {
		f->queues[i].parent = mu__hubq_find(f, f->queues[i].parent_name);
		f->queues[i].used = f->queues[i].own;
	}
	for (int32_t i = 0; i < f->nqueues; i++) {
		int32_t a = f->queues[i].parent;
		for (int d = 0; a >= 0 && d < MU__HUBQ_DEPTH; d++, a = f->queues[a].parent)
			for (int r = 0; r < MU_RES_MAX; r++)
				f->queues[a].used.v[r] += f->queues[i].own.v[r];
	}
	return MU_OK;
}

static mu__cap_t *cap_of(const mu__hubq_t *q, int32_t c)
{
	for (int32_t i = 0; i < q->ncaps; i++)
		if (q->caps[i].cluster == c)
			return &q->caps[i];
	return NULL;
}

bool mu__hubq_within_cap(const mu__hubq_t *q, int32_t c, const mu_res_t *acct)
{
	const mu__cap_t *k = cap_of(q, c);
	if (!k)
		return true;
	if (k->max_jobs >= 0 && k->jobs + 1 > k->max_jobs)
		return false;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (k->cap.v[r] != MU_RES_UNLIMITED &&
		    k->used.v[r] + acct->v[r] > k->cap.v[r] && acct->v[r] > 0)
			return false;
	return true;
}

void mu__hubq_charge(mu_fleet_t *f, int32_t qi, int32_t c, const mu_res_t *acct, int sign)
{
	mu__hubq_t *q = &f->queues[qi];
	mu__cap_t *k = cap_of(q, c);
	for (int r = 0; r < MU_RES_MAX; r++) {
		q->own.v[r] += sign * acct->v[r];
		if (k)
			k->used.v[r] += sign * acct->v[r];
	}
	if (k)
		k->jobs += sign;
	for (int d = 0; qi >= 0 && d < MU__HUBQ_DEPTH; d++, qi = f->queues[qi].parent)
		for (int r = 0; r < MU_RES_MAX; r++)
			f->queues[qi].used.v[r] += sign * acct->v[r];
	q->running += sign;
	q->queued -= sign;
}

/* Line order: higher priority, earlier submit, lower id. */
static int cmp_qent(const void *a, const void *b)
{
	const mu__qent_t *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->job > y->job) - (x->job < y->job);
}

int mu__hubq_enqueue(mu__hubq_t *q, const mu__fjob_t *fj, int32_t j)
{
	int rc = mu__fleet_grow((void **)&q->line, &q->line_cap, q->nline + 1,
				sizeof *q->line);
	if (rc)
		return rc;
	mu__qent_t e = {fj->spec.job->priority, j, fj->submit};
	if (q->nline && cmp_qent(&q->line[q->nline - 1], &e) > 0)
		q->sorted = false;
	q->line[q->nline++] = e;
	return MU_OK;
}

void mu__hubq_prepare(mu_fleet_t *f)
{
	for (int32_t i = 0; i < f->nqueues; i++) {
		mu__hubq_t *q = &f->queues[i];
		int32_t n = 0;
		for (int32_t k = 0; k < q->nline; k++)
			if (f->jobs[q->line[k].job].state == MU_FJ_QUEUED)
				q->line[n++] = q->line[k];
		q->nline = n;
		if (!q->sorted && n > 1)
			qsort(q->line, (size_t)n, sizeof *q->line, cmp_qent);
		q->sorted = true;
		q->cursor = 0;
	}
}

/* 0 inside its deserved quota, 1 above it; *share the order key inside
 * the class.  GPUs decide when the queue has or uses any, else CPU. */
static int queue_class(const mu__hubq_t *q, double *share)
{
	int r = q->deserved.v[MU_RES_GPU] > 0 || q->used.v[MU_RES_GPU] > 0 ?
		MU_RES_GPU : MU_RES_CPU;
	double used = (double)q->used.v[r], des = (double)q->deserved.v[r];
	if (used < des) {
		*share = used / des;
		return 0;
	}
	double w = q->weight[r];
	*share = w > 0 ? (used - des) / w : HUGE_VAL;
	return 1;
}

/* Whether queue a goes before queue b as siblings: higher priority, then
 * the lower class, then the lower share. */
static bool sib_before(const mu__hubq_t *a, const mu__hubq_t *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	double sa, sb;
	int ca = queue_class(a, &sa), cb = queue_class(b, &sb);
	if (ca != cb)
		return ca < cb;
	return sa < sb;
}

/* q's path from its root into path (root first); its length. */
static int path_of(const mu_fleet_t *f, int32_t q, int32_t *path)
{
	int32_t up[MU__HUBQ_DEPTH];
	int n = 0;
	for (; q >= 0 && n < MU__HUBQ_DEPTH; q = f->queues[q].parent)
		up[n++] = q;
	for (int i = 0; i < n; i++)
		path[i] = up[n - 1 - i];
	return n;
}

/* Whether queue a is served before queue b: compared where their paths
 * from the roots part (a queue before its own descendants). */
static bool served_before(const mu_fleet_t *f, int32_t a, int32_t b)
{
	int32_t pa[MU__HUBQ_DEPTH], pb[MU__HUBQ_DEPTH];
	int na = path_of(f, a, pa), nb = path_of(f, b, pb);
	int i = 0;
	while (i < na && i < nb && pa[i] == pb[i])
		i++;
	if (i == na || i == nb)
		return na < nb;
	return sib_before(&f->queues[pa[i]], &f->queues[pb[i]]);
}

int32_t mu__hubq_pick(const mu_fleet_t *f)
{
	int32_t best = -1;
	for (int32_t i = 0; i < f->nqueues; i++) {
		const mu__hubq_t *q = &f->queues[i];
		if (q->cursor < q->nline && (best < 0 || served_before(f, i, best)))
			best = i;
	}
	return best;
}
