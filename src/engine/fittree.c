/*
 * fittree.c - the best node for a request never seen before, without
 * scanning every node.
 *
 * The score heaps of nodeindex.c answer repeated request shapes; a request
 * of its own (every pod asking for its own CPU and memory) would build a
 * heap over all the class's nodes for one answer.  For a policy that
 * declares MU_SCORE_PACKS or MU_SCORE_SPREADS (binpack, spread), a node's score for a
 * request is monotone in its free CPU, memory and summed GPU share among
 * nodes of the same capacity, and reads nothing else that differs.  So each
 * class keeps, per capacity group, a segment tree over its nodes (in id
 * order) holding each subtree's largest free resources (no node below fits
 * a request larger in any of them) and its smallest and largest free CPU,
 * memory and GPU share, from which the score function itself gives an
 * upper bound of every score below.  A query descends best bound first and
 * prunes subtrees that cannot fit or cannot beat the best node found; the
 * leaves are scored with the policy itself and checked by the caller's
 * test (the full fit test and the reservations), so the answer is exactly
 * the linear scan's:
 * the highest score, ties to the lowest node id.
 *
 * Trees catch up from the engine's change log like the heaps (O(log n) per
 * changed node) and rebuild in O(class nodes) when the class changed or the
 * log moved too far.  Work per query: O(log n) per node visited; in the
 * worst case every node, typically tens.
 */
#include "engine/engine_int.h"

#define FT_MAX_GROUPS 32 /* capacity groups per class; more: no tree */

/* One tree node: a subtree's bounds. */
typedef struct mu__ftn {
	int64_t max_cpu, max_mem, max_pods, max_milli_sum;
	int32_t max_gpu, max_share;   /* whole free devices, largest share */
	int64_t min_cpu, min_mem, min_milli_sum;
} mu__ftn_t;

/* The nodes of one capacity (alloc vector and device count). */
typedef struct mu__ftgroup {
	mu_res_t alloc;
	int ngpu;
	int32_t rep;          /* a node of the group: the rest of the view */
	int32_t *ids;         /* sorted */
	int32_t n, size;      /* nodes; leaves (a power of two) */
	mu__ftn_t *t;         /* 2 * size, root at 1 */
} mu__ftgroup_t;

struct mu__ftree {
	uint64_t cls_gen;     /* class node list it was built from */
	uint64_t pos;         /* change-log position read up to */
	mu__ftgroup_t *g;
	int32_t ng;
	bool usable;          /* built and within FT_MAX_GROUPS */
	bool varied;          /* more groups than that: unusable until the
	                       * class changes (cls_gen) */
};

static void leaf_set(const mu_engine_t *e, mu__ftn_t *x, int32_t nid)
{
	const mu__nfree_t *f = &e->nfree[nid];
	int64_t ms = e->nodes[nid].free.v[MU_RES_GPU_MILLI];
	*x = (mu__ftn_t){f->cpu, f->mem, f->pods, ms, f->gpu, f->milli,
			 f->cpu, f->mem, ms};
}

static void pull(mu__ftn_t *p, const mu__ftn_t *a, const mu__ftn_t *b)
{
#define MX(f) p->f = a->f > b->f ? a->f : b->f
#define MN(f) p->f = a->f < b->f ? a->f : b->f
	MX(max_cpu); MX(max_mem); MX(max_pods); MX(max_milli_sum);
	MX(max_gpu); MX(max_share);
	MN(min_cpu); MN(min_mem); MN(min_milli_sum);
#undef MX
#undef MN
}

/* An empty leaf: fits nothing, bounds nothing. */
static const mu__ftn_t ft_empty = {-1, -1, -1, -1, -1, -1,
				   INT64_MAX, INT64_MAX, INT64_MAX};

static void ft_release(mu__ftree_t *f)
{
	for (int32_t i = 0; i < f->ng; i++) {
		free(f->g[i].ids);
		free(f->g[i].t);
	}
	free(f->g);
	f->g = NULL;
	f->ng = 0;
	f->usable = false;
}

void mu__ftree_free(mu__ftree_t *f)
{
	if (f) {
		ft_release(f);
		free(f);
	}
}

/* The group of node n in f, or -1.  O(groups). */
static int32_t group_of(const mu__ftree_t *f, const mu__node_t *n)
{
	for (int32_t i = 0; i < f->ng; i++)
		if (f->g[i].ngpu == n->ngpu &&
		    memcmp(&f->g[i].alloc, &n->alloc, sizeof n->alloc) == 0)
			return i;
	return -1;
}

/* Fills group g's tree from its nodes.  O(its nodes). */
static int group_build(const mu_engine_t *e, mu__ftgroup_t *g)
{
	int32_t size = 1;
	while (size < g->n)
		size *= 2;
	mu__ftn_t *t = malloc((size_t)2 * (size_t)size * sizeof *t);
	if (!t)
		return MU_ENOMEM;
	for (int32_t i = 0; i < size; i++) {
		if (i < g->n)
			leaf_set(e, &t[size + i], g->ids[i]);
		else
			t[size + i] = ft_empty;
	}
	for (int32_t k = size - 1; k >= 1; k--)
		pull(&t[k], &t[2 * k], &t[2 * k + 1]);
	free(g->t);
	g->t = t;
	g->size = size;
	return MU_OK;
}

/* Rebuilds f over class c's nodes.  O(class nodes x groups). */
static int ft_build(mu_engine_t *e, const mu__sclass_t *c, mu__ftree_t *f)
{
	ft_release(f);
	f->varied = false;
	int32_t gcap = 0; /* groups grow as capacities appear: most classes
	                   * have one or two */
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < c->nnodes; i++) {
		const mu__node_t *n = &e->nodes[c->nodes[i]];
		int32_t k = group_of(f, n);
		if (k < 0) {
			if (f->ng == FT_MAX_GROUPS) { /* too varied: not usable */
				ft_release(f);
				f->varied = true;
				f->cls_gen = c->gen;
				return MU_OK;
			}
			if (f->ng == gcap) { /* one more at a time: few groups */
				mu__ftgroup_t *ng = realloc(f->g, (size_t)(gcap + 1) * sizeof *ng);
				if (!ng) {
					rc = MU_ENOMEM;
					break;
				}
				f->g = ng;
				gcap++;
			}
			memset(&f->g[f->ng], 0, sizeof *f->g);
			k = f->ng++;
			f->g[k].alloc = n->alloc;
			f->g[k].ngpu = n->ngpu;
			f->g[k].rep = c->nodes[i];
		}
		mu__ftgroup_t *g = &f->g[k];
		if (g->n == g->size) { /* size: capacity of ids while collecting */
			int32_t cap = g->size ? 2 * g->size : 4;
			int32_t *ids = realloc(g->ids, (size_t)cap * sizeof *ids);
			if (!ids) {
				rc = MU_ENOMEM;
				break;
			}
			g->ids = ids;
			g->size = cap;
		}
		g->ids[g->n++] = c->nodes[i]; /* c->nodes is in id order */
	}
	for (int32_t k = 0; rc == MU_OK && k < f->ng; k++)
		rc = group_build(e, &f->g[k]);
	if (rc)
		return rc;
	f->cls_gen = c->gen;
	f->pos = e->chlog_base + (uint64_t)e->nchlog;
	f->usable = true;
	return MU_OK;
}

/* Re-reads node nid's leaf, if it is in f.  O(groups + log n). */
static void ft_update(const mu_engine_t *e, mu__ftree_t *f, int32_t nid)
{
	int32_t k = group_of(f, &e->nodes[nid]);
	if (k < 0)
		return;
	mu__ftgroup_t *g = &f->g[k];
	int32_t lo = 0, hi = g->n;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (g->ids[mid] < nid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= g->n || g->ids[lo] != nid)
		return;
	int32_t x = g->size + lo;
	leaf_set(e, &g->t[x], nid);
	for (x /= 2; x >= 1; x /= 2)
		pull(&g->t[x], &g->t[2 * x], &g->t[2 * x + 1]);
}

uint64_t mu__ftree_pos(const mu__ftree_t *f)
{
	return f && f->usable ? f->pos : UINT64_MAX;
}

/* Brings c's tree up to date: rebuilt when the class or too much changed,
 * else the logged nodes re-read.  False when it cannot be used. */
static bool ft_ready(mu_engine_t *e, mu__sclass_t *c)
{
	if (!c->ft) {
		if (!(c->ft = calloc(1, sizeof *c->ft)))
			return false;
		e->nindexes++; /* keeps the change log */
	}
	mu__ftree_t *f = c->ft;
	uint64_t end = e->chlog_base + (uint64_t)e->nchlog;
	if (f->varied && f->cls_gen == c->gen)
		return false;
	if (!f->usable || f->cls_gen != c->gen || f->pos < e->chlog_base ||
	    end - f->pos > (uint64_t)c->nnodes) {
		if (ft_build(e, c, f) != MU_OK)
			ft_release(f);
		return f->usable;
	}
	for (uint64_t k = f->pos - e->chlog_base; k < (uint64_t)e->nchlog; k++) {
		int32_t nid = e->chlog[k];
		if (mu__sclass_has(c, nid))
			ft_update(e, f, nid);
	}
	f->pos = end;
	return true;
}

/* A query's state: the request, the best node so far. */
typedef struct ftq {
	mu_engine_t *e;
	const mu__podset_t *ps;
	mu__ftree_ok_fn ok;
	mu_score_ctx_t ctx;
	bool spread;          /* score grows with free, not with use */
	double best_score;
	int32_t best;
} ftq_t;

/* Whether no node under x can hold req. */
static bool cannot_fit(const mu__ftn_t *x, const mu_res_t *req)
{
	return x->max_cpu < req->v[MU_RES_CPU] || x->max_mem < req->v[MU_RES_MEM] ||
	       x->max_gpu < req->v[MU_RES_GPU] || x->max_share < req->v[MU_RES_GPU_MILLI] ||
	       x->max_pods < req->v[MU_RES_PODS];
}

/* An upper bound of the score of any node under x of group g: the policy
 * on the group's capacity with the least free (or, spreading, the most). */
static double bound(ftq_t *q, const mu__ftgroup_t *g, const mu__ftn_t *x)
{
	const mu__node_t *rep = &q->e->nodes[g->rep];
	mu_res_t free = rep->free;
	free.v[MU_RES_CPU] = q->spread ? x->max_cpu : x->min_cpu;
	free.v[MU_RES_MEM] = q->spread ? x->max_mem : x->min_mem;
	free.v[MU_RES_GPU_MILLI] = q->spread ? x->max_milli_sum : x->min_milli_sum;
	mu_node_view_t v = {&g->alloc, &free, g->ngpu, rep->gpu_free, rep->model_name,
			    rep->gpu_kinds};
	return q->e->score->score(&q->ctx, &v, q->ps->req);
}

/* Whether a subtree bounded by ub whose lowest node id is lo_id could beat
 * the best so far (higher score, or equal and a lower id). */
static bool may_beat(const ftq_t *q, double ub, int32_t lo_id)
{
	return q->best < 0 || ub > q->best_score ||
	       (ub == q->best_score && lo_id < q->best);
}

/* Scores leaf i of g if it fits and the reservations allow it. */
static void visit_leaf(ftq_t *q, const mu__ftgroup_t *g, int32_t i)
{
	mu_engine_t *e = q->e;
	int32_t nid = g->ids[i];
	if (!q->ok(e, nid, q->ps))
		return;
	const mu__node_t *n = &e->nodes[nid];
	mu_node_view_t v = {&n->alloc, &n->free, n->ngpu, n->gpu_free, n->model_name,
			    n->gpu_kinds};
	double s = e->score->score(&q->ctx, &v, q->ps->req);
	if (q->best < 0 || s > q->best_score || (s == q->best_score && nid < q->best)) {
		q->best = nid;
		q->best_score = s;
	}
}

/* Branch and bound under tree node k of g (leaves [lo, lo + span)). */
static void visit(ftq_t *q, const mu__ftgroup_t *g, int32_t k, int32_t lo,
		  int32_t span)
{
	if (lo >= g->n || cannot_fit(&g->t[k], q->ps->req))
		return;
	if (span == 1) {
		visit_leaf(q, g, lo);
		return;
	}
	int32_t half = span / 2, a = 2 * k, b = 2 * k + 1;
	bool bok = lo + half < g->n && !cannot_fit(&g->t[b], q->ps->req);
	bool aok = !cannot_fit(&g->t[a], q->ps->req);
	double ua = aok ? bound(q, g, &g->t[a]) : 0, ub = bok ? bound(q, g, &g->t[b]) : 0;
	if (aok && bok && ub > ua) { /* the better bound first */
		if (may_beat(q, ub, g->ids[lo + half]))
			visit(q, g, b, lo + half, half);
		if (may_beat(q, ua, g->ids[lo]))
			visit(q, g, a, lo, half);
		return;
	}
	if (aok && may_beat(q, ua, g->ids[lo]))
		visit(q, g, a, lo, half);
	if (bok && may_beat(q, ub, g->ids[lo + half]))
		visit(q, g, b, lo + half, half);
}

int32_t mu__ftree_best(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
		       mu__ftree_ok_fn ok)
{
	if (e->nfree_off || !ft_ready(e, c))
		return -2;
	mu__ftree_t *f = c->ft;
	ftq_t q = {e, ps, ok, {e->cfg.score_state, 0, mu__supply_ctx(e),
			       &e->gmodels},
		   (e->score->flags & MU_SCORE_SPREADS) != 0, 0, -1};
	for (int32_t k = 0; k < f->ng; k++) {
		const mu__ftgroup_t *g = &f->g[k];
		if (g->n == 0 || cannot_fit(&g->t[1], ps->req))
			continue;
		if (may_beat(&q, bound(&q, g, &g->t[1]), g->ids[0]))
			visit(&q, g, 1, 0, g->size);
	}
	return q.best;
}
