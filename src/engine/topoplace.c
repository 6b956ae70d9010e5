/*
 * topoplace.c - placing a gang under a topology constraint.
 *
 * Required level L: the whole gang inside one domain of L.  Preferred
 * level P: try one domain of P, then of each level further out, then
 * anywhere (or up to L when both are given).  Slices: consecutive groups of
 * N pods, each inside one domain of the slice level.
 *
 * At each level the candidate domains are those whose aggregated free
 * capacity covers the demand, tried tightest first (least free GPUs), so
 * that a gang packs into the smallest domain that holds it and big free
 * domains survive for big gangs.  Inside a domain pods are placed with the
 * scoring policy.  Work: O(domains) to rank candidates, plus
 * O(pods x domain nodes) per candidate tried, at most MU__TOPO_TRIES per
 * level.
 */
#include "engine/engine_int.h"

#define MU__TOPO_TRIES 16

typedef struct dcand {
	int32_t d;
	int64_t k1, k2;
} dcand_t;

static int cmp_dcand(const void *a, const void *b)
{
	const dcand_t *x = a, *y = b;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return (x->d > y->d) - (x->d < y->d);
}

/* Sum of the requests of j's unbound pods in [p0, p1); *count gets them. */
static mu_res_t range_demand(const mu__job_t *j, int32_t p0, int32_t p1,
			     int32_t *count)
{
	mu_res_t dem = {{0}};
	*count = 0;
	for (int32_t p = p0; p < p1; p++) {
		if (j->pods[p].node >= 0)
			continue;
		const mu__podset_t *ps = &j->podsets[mu__pod_podset(j, p)];
		for (int r = 0; r < MU_RES_MAX; r++)
			dem.v[r] += ps->req->v[r];
		(*count)++;
	}
	return dem;
}

/* Whether a domain's free capacity covers dem in aggregate (a necessary
 * condition only: it says nothing of fragmentation across nodes). */
static bool dom_room(const mu__domain_t *d, const mu_res_t *dem)
{
	if (d->free.v[MU_RES_GPU] < dem->v[MU_RES_GPU] ||
	    d->free.v[MU_RES_GPU_MILLI] < dem->v[MU_RES_GPU] * 1000 + dem->v[MU_RES_GPU_MILLI])
		return false;
	for (int r = 0; r < MU_RES_MAX; r++)
		if (r != MU_RES_GPU && r != MU_RES_GPU_MILLI && d->free.v[r] < dem->v[r])
			return false;
	return true;
}

/* Domains of level l inside domain `within` (or anywhere when -1), with
 * room for dem, tightest first, into *out (malloc'ed; caller frees).
 * Returns how many, or a negative error; *at_level gets all of level l. */
static int32_t candidates(const mu__topo_t *t, int32_t l, int32_t within,
			  int32_t wl, const mu_res_t *dem, dcand_t **out,
			  int32_t *at_level)
{
	dcand_t *c = malloc((size_t)(t->ndoms ? t->ndoms : 1) * sizeof *c);
	if (!c)
		return MU_ENOMEM;
	bool gpu = dem->v[MU_RES_GPU] || dem->v[MU_RES_GPU_MILLI];
	int32_t n = 0;
	*at_level = 0;
	for (int32_t d = 0; d < t->ndoms; d++) {
		const mu__domain_t *dom = &t->doms[d];
		if (dom->level != l || (within >= 0 && dom->anc[wl] != within))
			continue;
		(*at_level)++;
		if (!dom_room(dom, dem))
			continue;
		c[n++] = (dcand_t){d, gpu ? dom->free.v[MU_RES_GPU] : dom->free.v[MU_RES_CPU],
				   gpu ? dom->free.v[MU_RES_GPU_MILLI] : dom->free.v[MU_RES_MEM]};
	}
	qsort(c, (size_t)n, sizeof *c, cmp_dcand);
	*out = c;
	return n;
}

/* Places all unbound pods of [p0, p1) inside one domain of level l within
 * `within`.  Returns 1 (placed, logged), 0 (no domain held them), or a
 * negative error. */
static int place_in_one(mu_engine_t *e, mu__job_t *j, const mu__topo_t *t,
			int32_t p0, int32_t p1, int32_t l, int32_t within,
			int32_t wl, mu_reason_t *r)
{
	int32_t count, at_level;
	mu_res_t dem = range_demand(j, p0, p1, &count);
	if (count == 0)
		return 1;
	dcand_t *c;
	int32_t n = candidates(t, l, within, wl, &dem, &c, &at_level);
	if (n < 0)
		return n;
	int32_t keep = e->ntxn;
	int rc = 0;
	for (int32_t i = 0; i < n && i < MU__TOPO_TRIES && rc == 0; i++) {
		const mu__domain_t *dom = &t->doms[c[i].d];
		mu__scope_t sc = {dom->nodes, dom->nnodes};
		int32_t placed = mu__place_range(e, j, p0, p1, &sc, r);
		if (placed < 0)
			rc = placed;
		else if (placed == count)
			rc = 1;
		else
			mu__txn_truncate(e, j, keep);
	}
	free(c);
	return rc;
}

/* Places the gang inside domain d of level l (anywhere when l is -1),
 * slice by slice if it has slices.  Returns pods placed (all of them for
 * slices, or 0), or a negative error. */
static int32_t place_gang_in(mu_engine_t *e, mu__job_t *j, const mu__topo_t *t,
			     int32_t l, int32_t d, mu_reason_t *r)
{
	if (j->slice_size <= 0) {
		if (d < 0)
			return mu__place_range(e, j, 0, j->npods, NULL, r);
		mu__scope_t sc = {t->doms[d].nodes, t->doms[d].nnodes};
		return mu__place_range(e, j, 0, j->npods, &sc, r);
	}
	int32_t start = e->ntxn;
	for (int32_t p0 = 0; p0 < j->npods; p0 += j->slice_size) {
		int32_t p1 = p0 + j->slice_size < j->npods ? p0 + j->slice_size : j->npods;
		int rc = place_in_one(e, j, t, p0, p1, j->slice_level, d, l, r);
		if (rc <= 0)
			return rc;
	}
	return e->ntxn - start;
}

/* Records why no domain of the required level worked. */
static void topo_reason(const mu__topo_t *t, int32_t topo, int32_t l, int32_t tried,
			int32_t best, mu_reason_t *r)
{
	int32_t at_level = 0;
	for (int32_t d = 0; d < t->ndoms; d++)
		at_level += t->doms[d].level == l;
	r->why = MU_WHY_TOPOLOGY;
	r->topo_id = topo;
	r->topo_level = l;
	r->topo_domains = at_level;
	r->topo_tried = tried;
	r->topo_best = best;
}

int32_t mu__place_topo(mu_engine_t *e, mu__job_t *j, int32_t need, mu_reason_t *r)
{
	mu__topo_t *t = &e->topos[j->topo];
	int rc = mu__topo_refresh(e, t);
	if (rc)
		return rc;
	int32_t stop = j->req_level; /* -1: may end up anywhere */
	int32_t start = j->pref_level >= 0 ? j->pref_level : stop;
	if (start < stop)
		start = stop;
	int32_t best = 0;
	for (int32_t l = start; l >= stop; l--) {
		if (l < 0) /* the last resort of a preferred-only gang */
			return place_gang_in(e, j, t, -1, -1, r);
		int32_t count, at_level, tried = 0;
		mu_res_t dem = range_demand(j, 0, j->npods, &count);
		dcand_t *c;
		int32_t n = candidates(t, l, -1, -1, &dem, &c, &at_level);
		if (n < 0)
			return n;
		for (int32_t i = 0; i < n && i < MU__TOPO_TRIES; i++, tried++) {
			int32_t placed = place_gang_in(e, j, t, l, c[i].d, r);
			if (placed >= need && placed > 0 && mu__parts_ok(e, j, NULL)) {
				free(c);
				return placed;
			}
			mu__txn_truncate(e, j, 0);
			if (placed < 0) {
				free(c);
				return placed;
			}
			if (placed > best)
				best = placed;
		}
		free(c);
		if (l == stop)
			topo_reason(t, j->topo, l, n, best, r);
	}
	return 0;
}
