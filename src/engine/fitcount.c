/*
 * fitcount.c - why a request fits no node of a large class, counted
 * without checking every node.
 *
 * A fit explanation counts, for each class node, the first filter it fails
 * in the order CPU, memory, GPUs (whole devices or a share), pods; a node
 * failing none fits.  Checked node by node that is O(class nodes) per
 * pending job, and a backlog whose jobs all need counts at once (when the
 * class's failure memo lapses) pays pending x nodes.  Here each large
 * class keeps a k-d tree over its nodes' compact free records (e->nfree),
 * ordered by the free values themselves: every subtree holds the smallest
 * and largest free CPU, memory, whole GPUs, largest GPU share and pods of
 * its nodes.  A subtree whose box lies wholly on one side of the request in
 * the filters' order (all below the CPU asked, or all with the CPU and all
 * below the memory, ...) is counted whole; only boxes that straddle a
 * threshold are descended, so a query visits the nodes near the request's
 * boundary, not all of them.
 *
 * The tree is a snapshot taken at a change-log position; a query counts
 * the snapshot and then corrects the count for each class node changed
 * since (the log keeps each node's record before its first change), as the
 * carried explanations of cycle.c do; the net changes are read from the
 * log once per log end and shared by the queries (mu__cdelta), and a node
 * whose record came back to what it was is not corrected.  It is rebuilt, in O(n log n), when
 * the class changed, the log moved past it, or the corrections since the
 * last build cost more than a build.  The counts are exactly a scan's:
 * test_fitcount compares them with one over random states.
 */
#include "engine/engine_int.h"

#define FC_LEAF 8 /* points per leaf */
#define FC_DIMS 5 /* cpu, mem, gpu, milli, pods */

/* One tree node over points [b, e): its box; its first child is the next
 * node (preorder), its second is right (0: a leaf). */
typedef struct mu__fcn {
	mu__nfree_t lo, hi;
	int32_t b, e, right;
} mu__fcn_t;

struct mu__fcount {
	uint64_t cls_gen;     /* class node list it was built from */
	uint64_t pos;         /* change-log position of the snapshot */
	uint64_t spent;       /* correction work since the build: the log
	                       * entries read, the net changes applied */
	uint64_t spent_to;    /* the log end spent was last counted at */
	mu__cdelta_t cd;      /* the class's net changes since pos */
	mu__nfree_t *pt;      /* the snapshot's records, in tree order */
	int32_t npt, pt_cap;
	mu__fcn_t *t;
	int32_t nt, t_cap;
	bool built;
};

void mu__fcount_free(mu__fcount_t *f)
{
	if (f) {
		mu__cdelta_release(&f->cd);
		free(f->pt);
		free(f->t);
		free(f);
	}
}

uint64_t mu__fcount_pos(const mu__fcount_t *f)
{
	return f && f->built ? f->pos : UINT64_MAX;
}

/* Dimension d of record p, widened. */
static int64_t dim(const mu__nfree_t *p, int d)
{
	switch (d) {
	case 0: return p->cpu;
	case 1: return p->mem;
	case 2: return p->gpu;
	case 3: return p->milli;
	default: return p->pods;
	}
}

static void box_of(const mu__nfree_t *p, int32_t n, mu__nfree_t *lo, mu__nfree_t *hi)
{
	*lo = *hi = p[0];
	for (int32_t i = 1; i < n; i++) {
#define MN(f) if (p[i].f < lo->f) lo->f = p[i].f
#define MX(f) if (p[i].f > hi->f) hi->f = p[i].f
		MN(cpu); MN(mem); MN(gpu); MN(milli); MN(pods);
		MX(cpu); MX(mem); MX(gpu); MX(milli); MX(pods);
#undef MN
#undef MX
	}
}

/* Puts the k-th smallest of p[0, n) by dimension d at p[k], smaller ones
 * before it and larger ones after (quickselect, median of three pivots).
 * O(n) expected. */
static void select_k(mu__nfree_t *p, int32_t n, int32_t k, int d)
{
	int32_t lo = 0, hi = n - 1;
	while (hi > lo) {
		int32_t mid = lo + (hi - lo) / 2;
		int64_t a = dim(&p[lo], d), b = dim(&p[mid], d), c = dim(&p[hi], d);
		int64_t piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		int32_t i = lo, j = hi;
		while (i <= j) {
			while (dim(&p[i], d) < piv)
				i++;
			while (dim(&p[j], d) > piv)
				j--;
			if (i <= j) {
				mu__nfree_t x = p[i];
				p[i++] = p[j];
				p[j--] = x;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* Builds the subtree over f->pt[b, e) at node f->nt (room is reserved by
 * the caller): split at the median of the dimension whose spread, relative
 * to the whole class's, is widest.  O(n log n) over all levels. */
static void build(mu__fcount_t *f, int32_t b, int32_t e, const double *scale)
{
	int32_t me = f->nt++;
	mu__fcn_t *x = &f->t[me];
	x->b = b;
	x->e = e;
	x->right = 0;
	box_of(f->pt + b, e - b, &x->lo, &x->hi);
	if (e - b <= FC_LEAF)
		return;
	int best = -1;
	double wide = 0;
	for (int d = 0; d < FC_DIMS; d++) {
		double s = (double)(dim(&x->hi, d) - dim(&x->lo, d)) * scale[d];
		if (s > wide) {
			wide = s;
			best = d;
		}
	}
	if (best < 0)
		return; /* all points equal: a leaf, however many */
	int32_t mid = b + (e - b) / 2;
	select_k(f->pt + b, e - b, mid - b, best);
	build(f, b, mid, scale);
	f->t[me].right = f->nt;
	build(f, mid, e, scale);
}

/* Takes the snapshot of class c's records now.  Returns MU_OK, or an error
 * (out of memory, or a class node without a compact record): then the
 * caller scans.  O(n log n). */
static int fc_build(mu_engine_t *e, const mu__sclass_t *c, mu__fcount_t *f)
{
	f->built = false;
	int32_t n = c->nnodes;
	if (n < 1 || mu__grow((void **)&f->pt, &f->pt_cap, n, sizeof *f->pt) != MU_OK ||
	    mu__grow((void **)&f->t, &f->t_cap, 2 * (n / (FC_LEAF / 2) + 1) + 1,
		      sizeof *f->t) != MU_OK)
		return MU_ENOMEM;
	for (int32_t i = 0; i < n; i++) {
		if (c->nodes[i] >= e->nfree_cap)
			return MU_EINVAL;
		f->pt[i] = e->nfree[c->nodes[i]];
	}
	f->npt = n;
	mu__nfree_t lo, hi;
	box_of(f->pt, n, &lo, &hi);
	double scale[FC_DIMS];
	for (int d = 0; d < FC_DIMS; d++) {
		int64_t w = dim(&hi, d) - dim(&lo, d);
		scale[d] = w > 0 ? 1.0 / (double)w : 0.0;
	}
	f->nt = 0;
	build(f, 0, n, scale);
	f->cls_gen = c->gen;
	f->pos = e->chlog_base + (uint64_t)e->nchlog;
	f->spent = f->spent_to = 0;
	f->built = true;
	return MU_OK;
}

/* The first filter every record in box [lo, hi] fails for req (MU_F_COUNT:
 * all fit), or -1 when they differ.  Mirrors mu__nfree_filter. */
static int box_filter(const mu__nfree_t *lo, const mu__nfree_t *hi, const mu_res_t *req)
{
	int64_t cpu = req->v[MU_RES_CPU], mem = req->v[MU_RES_MEM];
	int64_t gpu = req->v[MU_RES_GPU], milli = req->v[MU_RES_GPU_MILLI];
	int64_t pods = req->v[MU_RES_PODS];
	if (hi->cpu < cpu)
		return MU_F_CPU;
	if (lo->cpu < cpu)
		return -1;
	if (hi->mem < mem)
		return MU_F_MEM;
	if (lo->mem < mem)
		return -1;
	if (gpu > hi->gpu || (milli > 0 && hi->milli < milli))
		return MU_F_GPU;
	if (gpu > lo->gpu || (milli > 0 && lo->milli < milli))
		return -1;
	if (hi->pods < pods)
		return MU_F_PODS;
	if (lo->pods < pods)
		return -1;
	return MU_F_COUNT;
}

/* Adds the snapshot's counts for req into cnt (by filter, MU_F_COUNT for
 * the nodes that fit).  O(nodes near the request's boundary). */
static void fc_query(const mu__fcount_t *f, const mu_res_t *req, int32_t *cnt)
{
	int32_t stack[64], sp = 0;
	stack[sp++] = 0;
	while (sp > 0) {
		const mu__fcn_t *x = &f->t[stack[--sp]];
		int k = box_filter(&x->lo, &x->hi, req);
		if (k >= 0) {
			cnt[k] += x->e - x->b;
			continue;
		}
		if (!x->right) {
			for (int32_t i = x->b; i < x->e; i++)
				cnt[mu__nfree_filter(&f->pt[i], req)]++;
			continue;
		}
		stack[sp++] = x->right; /* depth is log2(n / FC_LEAF) < 64 */
		stack[sp++] = (int32_t)(x - f->t) + 1;
	}
}

int mu__fcount(mu_engine_t *e, mu__sclass_t *c, const mu_res_t *req,
	       int32_t fail[MU_F_COUNT], int32_t *fit)
{
	if (!e->nindexes || e->nfree_off)
		return MU_EINVAL; /* no change log to correct a snapshot by */
	if (!c->fc && !(c->fc = calloc(1, sizeof *c->fc)))
		return MU_ENOMEM;
	mu__fcount_t *f = c->fc;
	uint64_t end = e->chlog_base + (uint64_t)e->nchlog;
	if (!f->built || f->cls_gen != c->gen || f->pos < e->chlog_base ||
	    end - f->pos > (uint64_t)c->nnodes / 8 + 64 ||
	    f->spent > 2 * (uint64_t)c->nnodes) {
		int rc = fc_build(e, c, f);
		if (rc)
			return rc;
	}
	/* The nodes changed since the snapshot, net (shared by the queries
	 * until the log moves): their records at the snapshot and now. */
	const mu__cdelta_t *d = mu__cdelta(e, c, &f->cd, f->pos);
	if (!d)
		return MU_ENOMEM;
	int32_t cnt[MU_F_COUNT + 1] = {0};
	fc_query(f, req, cnt);
	for (int32_t i = 0; i < d->n; i++) {
		cnt[mu__nfree_filter(&d->v[i].was, req)]--;
		cnt[mu__nfree_filter(&d->v[i].now, req)]++;
	}
	f->spent += (uint64_t)d->n;
	if (d->to != f->spent_to) { /* the net changes were read afresh */
		f->spent += end - f->pos;
		f->spent_to = d->to;
	}
	for (int k = 0; k < MU_F_COUNT; k++)
		fail[k] += cnt[k];
	*fit = cnt[MU_F_COUNT];
	return MU_OK;
}
