/*
 * nodeindex.c - the best node for a pod without scanning every node.
 *
 * For a deterministic scoring policy (one that does not read ctx->random),
 * a node's score for a given request changes only when that node changes.
 * So each static class keeps a few indexes, one per recent request shape:
 * a max-heap of (score, node) over the class nodes that fit, built once in
 * O(nodes).  Every change to a node's resources bumps its version and
 * appends it to the engine's change log; an index catches up by re-scoring
 * only the logged nodes (O(log nodes) each) and drops heap entries whose
 * version is stale when they reach the top.  A lookup is then O(changes
 * since the index was last used x log nodes), instead of O(nodes).
 *
 * The answer is exactly the linear scan's: the highest score, ties to the
 * lowest node id.  Nodes held back by a reservation are set aside while
 * looking and put back after; when too many are, the caller scans.
 */
#include "engine/engine_int.h"

#define STASH_MAX 64 /* reserved tops to skip before falling back */
#define MU__HEAP_AFTER 16 /* tree lookups of a shape before its heap */
#define MU__SCAN_BELOW 32 /* classes of at most this many nodes are scanned */

/* --- The change log -------------------------------------------------------- */

/* The first log position every live index still needs, or the end. */
static uint64_t log_min_pos(const mu_engine_t *e)
{
	uint64_t min = e->chlog_base + (uint64_t)e->nchlog;
	for (int32_t i = 0; i < e->nclasses; i++) {
		const mu__sclass_t *c = &e->classes[i];
		for (int32_t k = 0; c->idx && k < c->nidx; k++)
			if (c->idx[k].live && c->idx[k].pos < min)
				min = c->idx[k].pos;
		if (mu__ftree_pos(c->ft) < min)
			min = mu__ftree_pos(c->ft);
	}
	return min < e->chlog_base ? e->chlog_base : min;
}

/* Makes room in the log: drops the prefix every index has read, and keeps
 * at most a quarter of the limit; indexes that needed more rebuild when
 * next used.  O(log + classes). */
static void log_trim(mu_engine_t *e)
{
	uint64_t min = log_min_pos(e);
	int32_t drop = (int32_t)(min - e->chlog_base);
	int32_t keep = (2 * e->nlive + 1024) / 4;
	if (e->nchlog - drop > keep) /* indexes that far behind rebuild */
		drop = e->nchlog - keep;
	memmove(e->chlog, e->chlog + drop, (size_t)(e->nchlog - drop) * sizeof *e->chlog);
	memmove(e->chlog_prev, e->chlog_prev + drop,
		(size_t)(e->nchlog - drop) * sizeof *e->chlog_prev);
	e->nchlog -= drop;
	e->chlog_base += (uint64_t)drop;
}

/* Copies node nid's free resources into e->nfree.  O(devices). */
static void nfree_set(mu_engine_t *e, int32_t nid)
{
	const mu__node_t *n = &e->nodes[nid];
	mu__nfree_t *f = &e->nfree[nid];
	f->cpu = n->free.v[MU_RES_CPU];
	f->mem = n->free.v[MU_RES_MEM];
	f->gpu = (int32_t)n->free.v[MU_RES_GPU];
	f->pods = n->free.v[MU_RES_PODS];
	f->milli = 0;
	for (int g = 0; g < n->ngpu; g++)
		if (n->gpu_free[g] > f->milli)
			f->milli = n->gpu_free[g];
}

void mu__node_touch(mu_engine_t *e, int32_t nid)
{
	mu__nfree_t prev = {0};
	if (nid < e->nfree_cap)
		prev = e->nfree[nid];
	e->nodes[nid].ver++;
	if (nid < e->nfree_cap ||
	    mu__grow((void **)&e->nfree, &e->nfree_cap, nid + 1, sizeof *e->nfree) == MU_OK)
		nfree_set(e, nid);
	else
		e->nfree_off = true; /* out of memory: no quick test from now on */
	if (!e->nindexes)
		return;
	if (e->nchlog >= 2 * e->nlive + 1024)
		log_trim(e);
	if (mu__grow((void **)&e->chlog, &e->chlog_cap, e->nchlog + 1,
		     sizeof *e->chlog) != MU_OK ||
	    mu__grow((void **)&e->chlog_prev, &e->chlog_prev_cap, e->nchlog + 1,
		     sizeof *e->chlog_prev) != MU_OK) {
		/* Out of memory: forget the log; every index rebuilds. */
		e->chlog_base += (uint64_t)e->nchlog + 1;
		e->nchlog = 0;
		return;
	}
	e->chlog_prev[e->nchlog] = prev;
	e->chlog[e->nchlog++] = nid;
}

/* --- The heap -------------------------------------------------------------- */

/* Whether a is a better node than b: higher score, then lower id. */
static inline bool hent_better(const mu__hent_t *a, const mu__hent_t *b)
{
	return a->score > b->score || (a->score == b->score && a->node < b->node);
}

/* Moves h[i] down to its place in the heap h[0..n).  O(log n). */
static void sift_down(mu__hent_t *h, int32_t n, int32_t i)
{
	mu__hent_t x = h[i];
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && hent_better(&h[c + 1], &h[c]))
			c++;
		if (!hent_better(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* Moves h[i] up to its place.  O(log i). */
static void sift_up(mu__hent_t *h, int32_t i)
{
	mu__hent_t x = h[i];
	while (i > 0) {
		int32_t p = (i - 1) / 2;
		if (!hent_better(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

/* Adds a copy of ent to x's heap (which owns its array).  MU_ENOMEM.
 * O(log n) amortized. */
static int heap_push(mu__nindex_t *x, const mu__hent_t *ent)
{
	int rc = mu__grow((void **)&x->heap, &x->cap, x->n + 1, sizeof *x->heap);
	if (rc)
		return rc;
	x->heap[x->n] = *ent;
	sift_up(x->heap, x->n++);
	return MU_OK;
}

/* Drops the top of x's heap (which must not be empty).  O(log n). */
static void heap_pop(mu__nindex_t *x)
{
	x->heap[0] = x->heap[--x->n];
	if (x->n > 0)
		sift_down(x->heap, x->n, 0);
}

/* --- Indexes --------------------------------------------------------------- */

/* The request's alignment flags, part of an index's key. */
static uint8_t index_align(const mu__podset_t *ps)
{
	return (uint8_t)(ps->align | ps->want_nic << 2 | ps->pin_cpus << 3 |
			 ps->aligned << 4);
}

/* Scores node nid for ps into ent if it fits; false if it does not. */
static bool index_score(mu_engine_t *e, int32_t nid, const mu__podset_t *ps,
			mu__hent_t *ent)
{
	const mu__node_t *n = &e->nodes[nid];
	if (!mu__fits(e, nid, ps))
		return false;
	mu_node_view_t v;
	mu__node_view(n, &v);
	mu_score_ctx_t ctx = {e->cfg.score_state, 0, mu__supply_ctx(e),
			       &e->gmodels};
	ent->score = e->score->score(&ctx, &v, ps->req);
	ent->node = nid;
	ent->ver = n->ver;
	return true;
}

/* A hash of ps's request and alignment flags.  O(resources). */
static uint64_t index_key(const mu__podset_t *ps)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ index_align(ps);
	for (int r = 0; r < MU_RES_MAX; r++) {
		h ^= (uint64_t)ps->req->v[r] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
		h *= 0xbf58476d1ce4e5b9ULL;
	}
	return h;
}

/* Makes room for one more index in c: the slots double, up to
 * MU__NINDEX_MAX, so that a class used with one request shape holds one.
 * False when it is full or out of memory (the LRU slot is reused). */
static bool index_grow(mu__sclass_t *c)
{
	if (c->nidx >= MU__NINDEX_MAX)
		return false;
	int32_t n = c->nidx ? 2 * c->nidx : 1;
	if (n > MU__NINDEX_MAX)
		n = MU__NINDEX_MAX;
	mu__nindex_t *nv = realloc(c->idx, (size_t)n * sizeof *nv);
	if (!nv)
		return false;
	memset(nv + c->nidx, 0, (size_t)(n - c->nidx) * sizeof *nv);
	c->idx = nv;
	c->nidx = n;
	return true;
}

/* The index of class c for ps's request: an existing one, else a free
 * slot (growing the slots), else the least recently used one, emptied.
 * NULL on out of memory.  O(slots). */
static mu__nindex_t *index_get(mu_engine_t *e, mu__sclass_t *c,
			       const mu__podset_t *ps)
{
	if (!c->idx && !index_grow(c))
		return NULL;
	uint8_t align = index_align(ps);
	uint64_t key = index_key(ps);
	mu__nindex_t *victim = &c->idx[0];
	for (int32_t k = 0; k < c->nidx; k++) {
		mu__nindex_t *x = &c->idx[k];
		if (x->live && x->key == key && x->align == align &&
		    memcmp(&x->req, ps->req, sizeof x->req) == 0) {
			x->last_use = ++e->idx_clock;
			return x;
		}
		if (!x->live || (victim->live && x->last_use < victim->last_use))
			victim = x;
	}
	if (victim->live && index_grow(c))
		victim = &c->idx[c->nidx / 2]; /* the first new slot */
	if (!victim->live)
		e->nindexes++;
	victim->live = true;
	victim->built = false;
	victim->key = key;
	victim->req = *ps->req;
	victim->align = align;
	victim->last_use = ++e->idx_clock;
	victim->uses = 0;
	victim->n = 0;
	return victim;
}

/* Rebuilds x from the class's nodes.  O(class nodes). */
static int index_build(mu_engine_t *e, mu__sclass_t *c, mu__nindex_t *x,
		       const mu__podset_t *ps)
{
	int rc = mu__grow((void **)&x->heap, &x->cap, c->nnodes + 1, sizeof *x->heap);
	if (rc)
		return rc;
	x->n = 0;
	for (int32_t i = 0; i < c->nnodes; i++)
		if (index_score(e, c->nodes[i], ps, &x->heap[x->n]))
			x->n++;
	for (int32_t i = x->n / 2 - 1; i >= 0; i--)
		sift_down(x->heap, x->n, i);
	x->cls_gen = c->gen;
	x->pos = e->chlog_base + (uint64_t)e->nchlog;
	x->built = true;
	return MU_OK;
}

/* Re-scores the nodes logged since x was last used.  O(changes log n). */
static int index_catch_up(mu_engine_t *e, mu__sclass_t *c, mu__nindex_t *x,
			  const mu__podset_t *ps)
{
	for (uint64_t k = x->pos - e->chlog_base; k < (uint64_t)e->nchlog; k++) {
		int32_t nid = e->chlog[k];
		mu__hent_t ent;
		if (mu__sclass_has(c, nid) &&
		    index_score(e, nid, ps, &ent)) {
			int rc = heap_push(x, &ent);
			if (rc)
				return rc;
		}
	}
	x->pos = e->chlog_base + (uint64_t)e->nchlog;
	return MU_OK;
}

/* The fit trees' test of a leaf: it fits and the reservations allow it,
 * as the scan requires. */
static bool tree_leaf_ok(mu_engine_t *e, int32_t nid, const mu__podset_t *ps)
{
	return mu__fits(e, nid, ps) &&
	       (e->placing < 0 || e->nresv == 0 ||
		mu__resv_allows(e, &e->jobs[e->placing], nid, ps));
}

int32_t mu__best_node_indexed(mu_engine_t *e, mu__sclass_t *c,
			      const mu__podset_t *ps)
{
	if (c->nnodes <= MU__SCAN_BELOW)
		return -2; /* a small class: a scan is as quick, and keeps no index */
	mu__nindex_t *x = index_get(e, c, ps);
	if (!x)
		return -2;
	/* A shape not seen lately is answered by the fit tree; its heap is
	 * built only once it keeps coming back. */
	if (!x->built && x->uses < MU__HEAP_AFTER &&
	    (e->score->flags & (MU_SCORE_PACKS | MU_SCORE_SPREADS))) {
		x->uses++;
		int32_t nid = mu__ftree_best(e, c, ps, tree_leaf_ok);
		if (nid != -2)
			return nid;
	}
	int rc;
	uint64_t end = e->chlog_base + (uint64_t)e->nchlog;
	if (!x->built || x->cls_gen != c->gen || x->pos < e->chlog_base ||
	    x->n > 2 * c->nnodes + 64 || end - x->pos > (uint64_t)c->nnodes)
		rc = index_build(e, c, x, ps);
	else
		rc = index_catch_up(e, c, x, ps);
	if (rc) {
		x->built = false;
		return -2;
	}
	bool resv = e->placing >= 0 && e->nresv > 0;
	mu__hent_t stash[STASH_MAX];
	int32_t nstash = 0, best = -1;
	while (x->n > 0) {
		mu__hent_t top = x->heap[0];
		if (top.ver != e->nodes[top.node].ver) {
			heap_pop(x); /* stale: the node changed since */
			continue;
		}
		if (resv && !mu__resv_allows(e, &e->jobs[e->placing], top.node, ps)) {
			if (nstash == STASH_MAX) {
				best = -2; /* many held back: let the caller scan */
				break;
			}
			stash[nstash++] = top;
			heap_pop(x);
			continue;
		}
		best = top.node;
		break;
	}
	for (int32_t i = 0; i < nstash; i++)
		if (heap_push(x, &stash[i]) != MU_OK) {
			x->built = false; /* lost an entry: rebuild next time */
			break;
		}
	return best;
}

void mu_engine_rescore(mu_engine_t *e)
{
	e->gm_stale = true; /* the mix may have changed: its pressure too */
	for (int32_t i = 0; i < e->nclasses; i++) {
		mu__sclass_t *c = &e->classes[i];
		for (int32_t k = 0; c->idx && k < c->nidx; k++)
			c->idx[k].built = false; /* rebuilt from scores on next use */
	}
}

/* Frees c's indexes and their heaps (engine teardown). */
void mu__sclass_index_release(mu__sclass_t *c)
{
	for (int32_t k = 0; c->idx && k < c->nidx; k++)
		free(c->idx[k].heap);
	free(c->idx);
	c->idx = NULL;
	c->nidx = 0;
	mu__ftree_free(c->ft);
	c->ft = NULL;
	mu__fcount_free(c->fc);
	c->fc = NULL;
	if (c->cd) {
		mu__cdelta_release(c->cd);
		free(c->cd);
		c->cd = NULL;
	}
}
