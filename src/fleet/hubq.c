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
 * higher priority, then the lower dominant share (usage over fair share,
 * GPUs alone for a queue that uses or wants GPUs), then the lower index,
 * as the engine orders sibling queues in one cluster.  The fair shares
 * are the engine's own division (mu_fairshare_divide), once a pass, of
 * the ready clusters' total among the queues by deserved quota, demand
 * (usage plus queued jobs, capped by limits), priority and over-quota
 * weight, down the tree (mu__hubq_fair).  Usage counts only dispatched
 * jobs: a job that waits holds nothing (it counts in demand).  With
 * cfg.usage_half_life the usage is also averaged over time and lowers a
 * queue's over-quota weight, by the engine's own formulas
 * (mu_fairshare_age, mu_fairshare_decay_factor); what non-preemptible
 * jobs use is kept apart, for the engine's rule that keeps them within
 * deserved (mu__hubq_np_over, mu_quota_np_over).  The bottom file of
 * src/fleet: it calls no other file of the room.
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

void mu__job_acct_core(const mu_job_spec_t *j, mu_res_t *a)
{
	memset(a, 0, sizeof *a);
	for (size_t p = 0; p < j->npodsets; p++) {
		const mu_res_t *q = &j->podsets[p].req;
		int64_t n = j->podsets[p].replicas;
		a->v[MU_RES_CPU] += q->v[MU_RES_CPU] * n;
		a->v[MU_RES_MEM] += q->v[MU_RES_MEM] * n;
		a->v[MU_RES_GPU] += (q->v[MU_RES_GPU] * 1000 + q->v[MU_RES_GPU_MILLI]) * n;
		a->v[MU_RES_PODS] += (q->v[MU_RES_PODS] < 1 ? 1 : q->v[MU_RES_PODS]) * n;
	}
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
		f->queues[i].used_np = f->queues[i].own_np;
	}
	for (int32_t i = 0; i < f->nqueues; i++) {
		int32_t a = f->queues[i].parent;
		for (int d = 0; a >= 0 && d < MU__HUBQ_DEPTH; d++, a = f->queues[a].parent)
			for (int r = 0; r < MU_RES_MAX; r++) {
				f->queues[a].used.v[r] += f->queues[i].own.v[r];
				f->queues[a].used_np.v[r] += f->queues[i].own_np.v[r];
			}
	}
	return MU_OK;
}

int32_t mu__hubq_np_over(const mu_fleet_t *f, int32_t qi, const mu_res_t *acct)
{
	int dom = mu_quota_dominant(acct);
	for (int d = 0; qi >= 0 && d < MU__HUBQ_DEPTH; d++, qi = f->queues[qi].parent)
		if (mu_quota_np_over(&f->queues[qi].used_np, acct, &f->queues[qi].deserved, dom) >= 0)
			return qi;
	return -1;
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

void mu__hubq_charge(mu_fleet_t *f, int32_t qi, int32_t c, const mu_res_t *acct, int sign,
		     bool preemptible)
{
	mu__hubq_t *q = &f->queues[qi];
	mu__cap_t *k = cap_of(q, c);
	for (int r = 0; r < MU_RES_MAX; r++) {
		q->own.v[r] += sign * acct->v[r];
		if (!preemptible)
			q->own_np.v[r] += sign * acct->v[r];
		if (r < MU_RES_NAMED0) /* as queued, below */
			q->pend.v[r] -= sign * acct->v[r];
		if (k)
			k->used.v[r] += sign * acct->v[r];
	}
	if (k)
		k->jobs += sign;
	for (int d = 0; qi >= 0 && d < MU__HUBQ_DEPTH; d++, qi = f->queues[qi].parent)
		for (int r = 0; r < MU_RES_MAX; r++) {
			f->queues[qi].used.v[r] += sign * acct->v[r];
			if (!preemptible)
				f->queues[qi].used_np.v[r] += sign * acct->v[r];
		}
	q->running += sign;
	q->queued -= sign;
}

void mu__hubq_usage(mu_fleet_t *f, int32_t qi, int32_t c, const mu_res_t *d, int sign,
		    bool preemptible)
{
	mu__hubq_t *q = &f->queues[qi];
	mu__cap_t *k = cap_of(q, c);
	for (int r = 0; r < MU_RES_MAX; r++) {
		q->own.v[r] += sign * d->v[r];
		if (!preemptible)
			q->own_np.v[r] += sign * d->v[r];
		if (k)
			k->used.v[r] += sign * d->v[r];
	}
	for (int dd = 0; qi >= 0 && dd < MU__HUBQ_DEPTH; dd++, qi = f->queues[qi].parent)
		for (int r = 0; r < MU_RES_MAX; r++) {
			f->queues[qi].used.v[r] += sign * d->v[r];
			if (!preemptible)
				f->queues[qi].used_np.v[r] += sign * d->v[r];
		}
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

/* The resources the hub divides: CPU, memory and GPUs (named slots are
 * each cluster model's own, so they are not summed across clusters). */
#define MU__HUBQ_NRES MU_RES_NAMED0

/* Depth of queue q (0: a root).  O(depth). */
static int depth_of(const mu_fleet_t *f, int32_t q)
{
	int d = 0;
	for (q = f->queues[q].parent; q >= 0 && d < MU__HUBQ_DEPTH; q = f->queues[q].parent)
		d++;
	return d;
}

/* Divides share among the children of parent p (-1: the roots), in
 * scratch sb (room for every queue).  O(queues + children x res log). */
static int fair_kids(mu_fleet_t *f, int32_t p, const mu_res_t *share, mu_fair_sib_t *sb,
		     int32_t *ids)
{
	int32_t n = 0;
	for (int32_t i = 0; i < f->nqueues; i++) {
		const mu__hubq_t *q = &f->queues[i];
		if (q->parent != p)
			continue;
		mu_fair_sib_t *x = &sb[n];
		x->key = i;
		x->priority = q->priority;
		x->deserved = q->deserved;
		x->demand = q->demand;
		x->fair = q->fair;
		for (int r = 0; r < MU_RES_MAX; r++) /* as the engine's fs_divide */
			x->weight[r] = f->cfg.usage_half_life > 0 ?
				q->weight[r] * q->decay_factor[r] : q->weight[r];
		ids[n++] = i;
	}
	int rc = mu_fairshare_divide(sb, n, share, MU__HUBQ_NRES);
	for (int32_t i = 0; rc == MU_OK && i < n; i++)
		f->queues[ids[i]].fair = sb[i].fair;
	return rc;
}

/* Whether the fair share divides slot r (the engine's fs_divided). */
static bool hubq_divided(int r)
{
	return r < MU__HUBQ_NRES && r != MU_RES_PODS && r != MU_RES_GPU_MILLI;
}

/* Ages every queue's decayed usage to now and sets each one's decay
 * factors among its siblings, as the engine's fs_decay does once a cycle
 * (the same formulas, the siblings' sums in the same order).  Nothing
 * with cfg.usage_half_life 0.  MU_ENOMEM.  O(queues x resources). */
static int hubq_decay(mu_fleet_t *f, mu_time_t now)
{
	mu_time_t h = f->cfg.usage_half_life;
	if (h <= 0 || f->nqueues == 0)
		return MU_OK;
	double dt = f->decay_at == MU_TIME_NONE || now < f->decay_at ? 0 :
		    (double)(now - f->decay_at);
	double keep = mu_fairshare_keep(dt, h);
	f->decay_at = now;
	/* per parent (slot 0: the roots), the children's sums */
	double *us = calloc((size_t)f->nqueues + 1, sizeof *us);
	double *ws = calloc((size_t)f->nqueues + 1, sizeof *ws);
	if (!us || !ws) {
		free(us);
		free(ws);
		return MU_ENOMEM;
	}
	for (int r = 0; r < MU_RES_MAX; r++) {
		if (!hubq_divided(r))
			continue;
		memset(us, 0, ((size_t)f->nqueues + 1) * sizeof *us);
		memset(ws, 0, ((size_t)f->nqueues + 1) * sizeof *ws);
		for (int32_t i = 0; i < f->nqueues; i++) {
			mu__hubq_t *q = &f->queues[i];
			q->decayed[r] = mu_fairshare_age(q->decayed[r], q->used.v[r], keep);
			us[q->parent + 1] += q->decayed[r];
			ws[q->parent + 1] += q->weight[r];
		}
		for (int32_t i = 0; i < f->nqueues; i++) {
			mu__hubq_t *q = &f->queues[i];
			q->decay_factor[r] = mu_fairshare_decay_factor(q->decayed[r], us[q->parent + 1],
								       q->weight[r], ws[q->parent + 1]);
		}
	}
	free(us);
	free(ws);
	return MU_OK;
}

int mu__hubq_fair(mu_fleet_t *f, mu_time_t now)
{
	int drc = hubq_decay(f, now);
	if (drc)
		return drc;
	memset(&f->total, 0, sizeof f->total);
	for (int32_t c = 0; c < f->nclusters; c++) {
		if (f->clusters[c].state != MU_CLUSTER_READY)
			continue;
		mu_res_t a;
		mu_engine_totals(f->clusters[c].eng, &a, NULL);
		for (int r = 0; r < MU__HUBQ_NRES; r++)
			f->total.v[r] += a.v[r];
	}
	if (f->nqueues == 0)
		return MU_OK;
	int8_t *depth = malloc((size_t)f->nqueues);
	mu_fair_sib_t *sb = malloc((size_t)f->nqueues * sizeof *sb);
	int32_t *ids = malloc((size_t)f->nqueues * sizeof *ids);
	if (!depth || !sb || !ids) {
		free(depth);
		free(sb);
		free(ids);
		return MU_ENOMEM;
	}
	for (int32_t i = 0; i < f->nqueues; i++) {
		mu__hubq_t *q = &f->queues[i];
		depth[i] = (int8_t)depth_of(f, i);
		memset(&q->fair, 0, sizeof q->fair);
		for (int r = 0; r < MU_RES_MAX; r++)
			q->demand.v[r] = q->own.v[r] + q->pend.v[r];
	}
	/* deepest first: a queue's demand is complete (its own, its queued
	 * jobs', its children's), capped by its limit, before its parent's */
	for (int d = MU__HUBQ_DEPTH; d >= 0; d--)
		for (int32_t i = 0; i < f->nqueues; i++) {
			if (depth[i] != d)
				continue;
			mu__hubq_t *q = &f->queues[i];
			for (int r = 0; r < MU_RES_MAX; r++)
				if (q->demand.v[r] > q->limit.v[r])
					q->demand.v[r] = q->limit.v[r];
			if (q->parent >= 0)
				for (int r = 0; r < MU_RES_MAX; r++)
					f->queues[q->parent].demand.v[r] += q->demand.v[r];
		}
	int rc = fair_kids(f, -1, &f->total, sb, ids);
	for (int d = 0; rc == MU_OK && d < MU__HUBQ_DEPTH; d++)
		for (int32_t i = 0; rc == MU_OK && i < f->nqueues; i++)
			if (depth[i] == d) {
				mu_res_t share = f->queues[i].fair;
				rc = fair_kids(f, i, &share, sb, ids);
			}
	free(depth);
	free(sb);
	free(ids);
	return rc;
}

/* Queue q's dominant share: usage over fair share (the engine's). */
static double share_of(const mu_fleet_t *f, const mu__hubq_t *q)
{
	return mu_fairshare_ratio(&q->used, &q->demand, &q->fair, &f->total, MU__HUBQ_NRES);
}

double mu__hubq_share(const mu_fleet_t *f, int32_t q)
{
	return share_of(f, &f->queues[q]);
}

/* Whether queue a goes before its sibling b: higher priority, then the
 * lower dominant share, then the lower index (the engine's order). */
static bool sib_before(const mu_fleet_t *f, int32_t a, int32_t b)
{
	const mu__hubq_t *x = &f->queues[a], *y = &f->queues[b];
	if (x->priority != y->priority)
		return x->priority > y->priority;
	double sa = share_of(f, x), sb = share_of(f, y);
	if (sa != sb)
		return sa < sb;
	return a < b;
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
	return sib_before(f, pa[i], pb[i]);
}

void mu__hubq_sides(const mu_fleet_t *f, int32_t a, int32_t b, int32_t *sa, int32_t *sb)
{
	int32_t pa[MU__HUBQ_DEPTH], pb[MU__HUBQ_DEPTH];
	int na = path_of(f, a, pa), nb = path_of(f, b, pb);
	int i = 0;
	while (i < na && i < nb && pa[i] == pb[i])
		i++;
	if (i == na || i == nb) { /* one is the other's ancestor */
		*sa = *sb = pa[i - 1];
		return;
	}
	*sa = pa[i];
	*sb = pb[i];
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

void mu__fleet_hold_drop(mu_fleet_t *f, int32_t j)
{
	mu__fjob_t *fj = &f->jobs[j];
	if (fj->hold < 0)
		return;
	f->clusters[fj->hold].hold_job = -1;
	fj->hold = -1;
	f->epoch++; /* jobs the hold kept out may go there now */
}
