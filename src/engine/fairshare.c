/*
 * fairshare.c - each queue's demand and fair share, computed top-down once
 * per cycle.
 *
 * Demand is what a queue uses plus what its waiting jobs ask for, capped by
 * its limit.  At every level of the tree, per resource, the parent's share
 * (the cluster for top-level queues) is divided among the children:
 *   1. each child gets min(deserved, demand); if those add up to more
 *      than there is, it is water-filled in proportion to deserved;
 *   2. the surplus goes to higher-priority children first, and among equal
 *      priorities by over-quota weight, water-filling: no child gets more
 *      than it demands, and what one cannot use flows to the others.
 * With cfg.usage_half_life, fairness also looks back: every queue's GPU
 * usage is averaged with that half-life, and at each level a child's
 * over-quota weight is multiplied by 2^(-u/s), where u is its share of
 * its siblings' decayed usage and s its share of their weights (Slurm's
 * classic fair-share factor, applied to the part above deserved only).
 * A team that used much recently gets less of the surplus; deserved
 * quotas are untouched.  Half-life 0 keeps factor 1: today's behaviour.
 * Cost: O(pending jobs) for demand, O(q log q) per level for the shares.
 * The division of one parent's share (mu_fairshare_divide), the
 * dominant share (mu_fairshare_ratio) and the decay's formulas
 * (mu_fairshare_keep, _age, _decay_factor) are public, as data, so that
 * the fleet's hub queues (src/fleet/hubq.c) divide the fleet the same way.
 */
#include <math.h>

#include "engine/engine_int.h"

/* Resources that fair share divides (not pods, not the request-only
 * GPU-share slot). */
static bool fs_divided(const mu_engine_t *e, int r)
{
	return r < e->nres && r != MU_RES_PODS && r != MU_RES_GPU_MILLI;
}

/* Demand of q's subtree into q->demand; returns nothing but recurses over
 * children.  O(subtree + its pending jobs). */
static void fs_demand(mu_engine_t *e, int32_t qid)
{
	mu__queue_t *q = &e->queues[qid];
	memset(&q->demand, 0, sizeof q->demand);
	if (q->nchildren == 0) {
		q->demand = q->used;
		e->work += (uint64_t)q->npending;
		int nres = e->nres; /* no request names a slot beyond it */
		for (int32_t i = 0; i < q->npending; i++) {
			const mu__job_t *j = &e->jobs[q->pending[i]];
			for (int32_t p = 0; p < j->npodsets; p++) {
				const mu__podset_t *ps = &j->podsets[p];
				int32_t unbound = ps->replicas;
				if (j->nbound > 0) /* else none is bound: no walk */
					for (int32_t k = 0; k < ps->replicas; k++)
						unbound -= j->pods[ps->first + k].node >= 0;
				if (unbound == 0)
					continue;
				for (int r = 0; r < nres; r++)
					q->demand.v[r] += ps->acct->v[r] * unbound;
			}
		}
	} else {
		for (int32_t c = 0; c < q->nchildren; c++) {
			int32_t ch = q->children[c];
			fs_demand(e, ch);
			for (int r = 0; r < MU_RES_MAX; r++)
				q->demand.v[r] += e->queues[ch].demand.v[r];
		}
	}
	for (int r = 0; r < MU_RES_MAX; r++)
		if (q->demand.v[r] > q->limit.v[r])
			q->demand.v[r] = q->limit.v[r];
}

typedef struct fs_item {
	int32_t q;     /* its index in the siblings */
	double want;   /* still wanted */
	double weight;
	double got;
	int32_t prio;
	int32_t key;   /* order among equal priorities */
} fs_item_t;

static int cmp_prio(const void *a, const void *b)
{
	const fs_item_t *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

static int cmp_ratio(const void *a, const void *b)
{
	const fs_item_t *x = a, *y = b;
	double rx = x->want / x->weight, ry = y->want / y->weight;
	return (rx > ry) - (rx < ry);
}

/* Water-fills `avail` over items[0..n) by weight; returns what is left.
 * Items with zero weight or want get nothing.  O(n log n). */
static double fs_waterfill(fs_item_t *it, int32_t n, double avail)
{
	int32_t k = 0;
	for (int32_t i = 0; i < n; i++) /* active ones first */
		if (it[i].weight > 0 && it[i].want > 0) {
			fs_item_t t = it[k];
			it[k++] = it[i];
			it[i] = t;
		}
	if (k > 1)
		qsort(it, (size_t)k, sizeof *it, cmp_ratio);
	double w = 0;
	for (int32_t i = 0; i < k; i++)
		w += it[i].weight;
	for (int32_t i = 0; i < k && avail > 0; i++) {
		double share = avail * it[i].weight / w;
		if (it[i].want <= share) {
			it[i].got += it[i].want;
			avail -= it[i].want;
			w -= it[i].weight;
			continue;
		}
		double level = avail / w; /* the rest all stop at this level */
		for (int32_t j = i; j < k; j++)
			it[j].got += level * it[j].weight;
		return 0;
	}
	return avail;
}

/* Whether fair share divides slot r (not pods, not the request-only
 * GPU-share slot). */
static bool divided(int r, int nres)
{
	return r < nres && r != MU_RES_PODS && r != MU_RES_GPU_MILLI;
}

int mu_fairshare_divide(mu_fair_sib_t *sibs, int32_t n, const mu_res_t *cap, int nres)
{
	if (n <= 0)
		return MU_OK;
	fs_item_t small[8]; /* most parents have few children: no malloc */
	fs_item_t *it = n <= 8 ? small : malloc((size_t)n * sizeof *it);
	if (!it)
		return MU_ENOMEM;
	for (int r = 0; r < MU_RES_MAX; r++) {
		if (!divided(r, nres))
			continue;
		double base = 0;
		for (int32_t i = 0; i < n; i++) {
			const mu_fair_sib_t *q = &sibs[i];
			double d = (double)q->demand.v[r];
			double g = (double)q->deserved.v[r] < d ? (double)q->deserved.v[r] : d;
			it[i] = (fs_item_t){i, d - g, q->weight[r], g, q->priority, q->key};
			base += g;
		}
		double avail = (double)cap->v[r];
		if (base > avail) { /* quotas overcommitted: by deserved */
			for (int32_t i = 0; i < n; i++) {
				it[i].want = it[i].got;
				it[i].weight = (double)sibs[it[i].q].deserved.v[r];
				it[i].got = 0;
			}
			fs_waterfill(it, n, avail);
			avail = 0;
		} else {
			avail -= base;
		}
		if (n > 1)
			qsort(it, (size_t)n, sizeof *it, cmp_prio);
		for (int32_t i = 0; i < n && avail > 0;) {
			int32_t g = i;
			while (g < n && it[g].prio == it[i].prio)
				g++;
			avail = fs_waterfill(it + i, g - i, avail);
			i = g;
		}
		for (int32_t i = 0; i < n; i++)
			sibs[it[i].q].fair.v[r] = (int64_t)it[i].got;
	}
	if (it != small)
		free(it);
	return MU_OK;
}

double mu_fairshare_ratio(const mu_res_t *used, const mu_res_t *demand,
			  const mu_res_t *fair, const mu_res_t *total, int nres)
{
	double s = 0;
	/* GPU-dominant: a queue that uses or wants GPUs is judged on GPUs
	 * alone, so a small CPU quota used up does not rank it as satisfied. */
	bool gpu = used->v[MU_RES_GPU] > 0 || demand->v[MU_RES_GPU] > 0;
	for (int r = 0; r < nres && r < MU_RES_MAX; r++) {
		if (r == MU_RES_PODS || r == MU_RES_GPU_MILLI || !used->v[r] ||
		    (gpu && r != MU_RES_GPU))
			continue;
		double x;
		if (fair->v[r] > 0)
			x = (double)used->v[r] / (double)fair->v[r];
		else /* uses what it has no share of: after all others */
			x = 1e6 * (1.0 + (double)used->v[r] /
				   (double)(total->v[r] > 0 ? total->v[r] : 1));
		if (x > s)
			s = x;
	}
	return s;
}

/* Divides cap (per resource) among the n children of one parent, then
 * each child's share among its own children.  The siblings' scratch
 * (mu_fair_sib_t, on the stack for up to 8) is freed before the
 * recursion.  O(subtree x resources x log). */
static int fs_divide(mu_engine_t *e, const int32_t *kids, int32_t n,
		     const mu_res_t *cap)
{
	if (n == 0)
		return MU_OK;
	mu_fair_sib_t small[8];
	mu_fair_sib_t *sb = n <= 8 ? small : malloc((size_t)n * sizeof *sb);
	if (!sb)
		return MU_ENOMEM;
	for (int32_t i = 0; i < n; i++) {
		const mu__queue_t *q = &e->queues[kids[i]];
		mu_fair_sib_t *x = &sb[i];
		x->key = kids[i];
		x->priority = q->priority;
		x->deserved = q->deserved;
		x->demand = q->demand;
		x->fair = q->fair;
		for (int r = 0; r < MU_RES_MAX; r++)
			x->weight[r] = e->cfg.usage_half_life > 0 ?
				q->weight[r] * q->decay_factor[r] : q->weight[r];
	}
	int rc = mu_fairshare_divide(sb, n, cap, e->nres);
	for (int32_t i = 0; rc == MU_OK && i < n; i++) {
		mu__queue_t *q = &e->queues[kids[i]];
		for (int r = 0; r < MU_RES_MAX; r++) {
			if (!fs_divided(e, r))
				continue;
			if (q->fair.v[r] != sb[i].fair.v[r])
				e->fair_changed = true; /* cached refusals lapse */
			q->fair.v[r] = sb[i].fair.v[r];
		}
	}
	if (sb != small)
		free(sb);
	for (int32_t i = 0; rc == MU_OK && i < n; i++) {
		const mu__queue_t *q = &e->queues[kids[i]];
		rc = fs_divide(e, q->children, q->nchildren, &q->fair);
	}
	return rc;
}

/* Sets the decay factors on resource r of parent p's children (-1: the
 * roots): 2^(-their share of the siblings' decayed usage / their share of
 * the weights).  O(queues). */
static void fs_decay_kids(mu_engine_t *e, int32_t p, int r)
{
	double u = 0, w = 0;
	for (int32_t q = 0; q < e->nqueues; q++)
		if (e->queues[q].parent == p) {
			u += e->queues[q].decayed[r];
			w += e->queues[q].weight[r];
		}
	for (int32_t q = 0; q < e->nqueues; q++) {
		mu__queue_t *qq = &e->queues[q];
		if (qq->parent != p)
			continue;
		qq->decay_factor[r] = mu_fairshare_decay_factor(qq->decayed[r], u,
								qq->weight[r], w);
	}
}

double mu_fairshare_keep(double dt, mu_time_t half_life)
{
	return pow(0.5, dt / (double)half_life);
}

double mu_fairshare_age(double decayed, int64_t used, double keep)
{
	return decayed * keep + (double)used * (1.0 - keep);
}

double mu_fairshare_decay_factor(double decayed, double decayed_sum, double weight,
				 double weight_sum)
{
	double us = decayed_sum > 0 ? decayed / decayed_sum : 0;
	double ws = weight_sum > 0 ? weight / weight_sum : 0;
	return ws > 0 ? pow(2.0, -us / ws) : 1.0;
}

/* Ages every queue's decayed usage of every divided resource to now and
 * sets, per resource, the factors of the children of each parent (-1: the
 * roots).  O(resources x queues x children). */
static void fs_decay(mu_engine_t *e, mu_time_t now)
{
	mu_time_t h = e->cfg.usage_half_life;
	if (h <= 0)
		return;
	double dt = e->decay_at == MU_TIME_NONE || now < e->decay_at ? 0 :
		    (double)(now - e->decay_at);
	double keep = mu_fairshare_keep(dt, h);
	e->decay_at = now;
	for (int r = 0; r < MU_RES_MAX; r++) {
		if (!fs_divided(e, r))
			continue;
		for (int32_t q = 0; q < e->nqueues; q++) {
			mu__queue_t *qq = &e->queues[q];
			qq->decayed[r] = mu_fairshare_age(qq->decayed[r], qq->used.v[r], keep);
		}
		for (int32_t p = -1; p < e->nqueues; p++)
			fs_decay_kids(e, p, r);
	}
}

int mu__fairshare(mu_engine_t *e, mu_time_t now)
{
	fs_decay(e, now);
	int32_t nroots = 0;
	size_t cap = e->nqueues > 0 ? (size_t)e->nqueues : 1;
	int32_t *roots = malloc(cap * sizeof *roots);
	if (!roots)
		return MU_ENOMEM;
	for (int32_t q = 0; q < e->nqueues; q++) {
		if (e->queues[q].parent < 0) {
			fs_demand(e, q);
			roots[nroots++] = q;
		}
	}
	e->fair_changed = false;
	int rc = fs_divide(e, roots, nroots, &e->total_alloc);
	free(roots);
	if (e->fair_changed) {
		e->fair_gen++;
		e->qgen++;
	}
	e->share_epoch++; /* cached shares are stale */
	return rc;
}
