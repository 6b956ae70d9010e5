/*
 * affinity.c - pod affinity, anti-affinity and topology spread, kept as
 * counts of matching pods per topology domain.
 *
 * kube-scheduler's InterPodAffinity and PodTopologySpread plugins walk every
 * pod on every node for each pod they place.  Here the counts they build are
 * kept instead, and moved on every bind and release:
 *
 *  - a counter (mu__actr_t) is a conjunction of pod selectors (labels and
 *    namespaces); it holds, per node and per domain of each topology key
 *    it serves, the bound pods that match.  Pods of a placing pod's own
 *    terms, its required affinity (all terms at once, as kube-scheduler
 *    counts them), each anti-affinity and preferred term and each spread
 *    constraint read one.
 *  - a carried term (mu__acarry_t) is a term that bound pods carry: per
 *    domain, how many carry it as required anti-affinity, and the sum of
 *    the weights they carry it with (preferred terms, and required affinity
 *    with kube-scheduler's hardPodAffinityWeight of 1).  An incoming pod
 *    that a carried term selects is refused or scored by it (symmetry).
 *
 * Counters and carried terms are found for a pod through an index by
 * (label key, value) of a selector's first In requirement, so a bind costs
 * O(its labels + matching counts), and nothing at all while no job uses
 * any term (e->aff is NULL).  Domains are dense per topology key and
 * rebuilt only when node labels change.  A placement then scans the
 * candidate nodes once: O(nodes x terms), never O(pods).
 *
 * Scores follow the plugins' NormalizeScore (0..100 each, weight 2 each as
 * kube-scheduler's defaults) and are added with preferred node affinity;
 * the sum ranks nodes first and the engine's policy breaks ties (a
 * documented difference: kube-scheduler adds its resource score in).
 */
#include <math.h>
#include <stdio.h>

#include "engine/engine_int.h"

#define MU__AFF_MAX 16       /* terms of each kind per pod set (required
                              * affinity, required anti-affinity, preferred
                              * of each, spread, preferred node terms) */
#define HOSTNAME "kubernetes.io/hostname"

/* A compiled pod selector with its namespaces. */
typedef struct mu__psel {
	mu__selreq_t *reqs;
	int32_t nreqs;
	bool absent;
	bool all_ns;
	int32_t *ns;
	int32_t nns;
} mu__psel_t;

/* A topology key: the dense domain of every node. */
typedef struct mu__atkey {
	int32_t key;
	int32_t *dom;      /* by node: domain, or -1 (no label, removed) */
	int32_t ndoms;
	int32_t *size;     /* by domain: its nodes */
} mu__atkey_t;

typedef struct mu__actr {
	mu__psel_t *cl;    /* ANDed */
	int32_t ncl;
	int32_t *tk;       /* topology keys it keeps domain counts for */
	int32_t ntk;
	int32_t **dom;     /* [ntk][domains] */
	int32_t *pn;       /* by node */
	bool fresh;        /* not counted yet */
} mu__actr_t;

typedef struct mu__acarry {
	mu__psel_t cl;
	int32_t tk;
	int32_t *anti;     /* by domain: carriers of it as required anti */
	int64_t *w;        /* by domain: summed weights carried */
	int64_t nanti, nw; /* carriers in all */
	bool fresh;
} mu__acarry_t;

/* A list of ids in the (key, value) index. */
typedef struct mu__alist {
	int32_t *v;
	int32_t n, cap;
} mu__alist_t;

struct mu__affx {
	uint64_t gen;            /* e->node_gen the domains are for */
	int32_t nnodes;          /* nodes the arrays are sized for */
	bool fresh;              /* a counter or carried term waits counting */
	bool dirty;              /* counts lost (out of memory): all again */
	mu__atkey_t *tk;
	int32_t ntk, tk_cap;
	mu__actr_t *ctr;
	int32_t nctr, ctr_cap;
	mu__acarry_t *car;
	int32_t ncar, car_cap;
	mu__strmap_t sigs;       /* signature -> id (counters "c", carried "k") */
	uint64_t *hkeys;         /* open addressing: (tag, key, value) */
	int32_t *hvals;          /* list index */
	uint32_t hcap, hn;
	mu__alist_t *lists;
	int32_t nlists, lists_cap;
	mu__alist_t any_ctr, any_car; /* selectors without an In to index */
	/* Scratch of one placement. */
	int32_t *feas;
	double *fpol;
	int64_t *raw;            /* 3 per feasible node */
	int32_t scr_cap;
	int64_t *dcnt;           /* spread domain counts */
	uint8_t *dseen;
	int32_t dcap;
	int32_t *hits;           /* matching carried terms */
	int32_t hits_cap;
	const int32_t **hp;      /* their (domain, anti count) arrays */
	int32_t hp_cap;
};

/* What one pod set asks (built at submit). */
typedef struct mu__aspr {
	int32_t ctr, tk, max_skew, min_domains;
	bool anyway, self, aff_ignore, taints_honor;
} mu__aspr_t;

typedef struct mu__apod {
	int32_t req_ctr;         /* pods matching all required affinity terms */
	int32_t nreq;
	bool self_all;           /* the pod matches all its own such terms */
	int32_t anti_ctr[MU__AFF_MAX], anti_tk[MU__AFF_MAX], nanti;
	int32_t pref_ctr[2 * MU__AFF_MAX], pref_tk[2 * MU__AFF_MAX];
	int32_t pref_w[2 * MU__AFF_MAX]; /* affinity and anti-affinity */
	int32_t npref;
	mu__aspr_t spr[MU__AFF_MAX];
	int32_t nspr, nhard, nsoft;
	mu__selterm_t np[MU__AFF_MAX];
	int32_t np_w[MU__AFF_MAX], nnp;
	/* Carried by its bound pods: term, and weight (0: required anti). */
	int32_t car[4 * MU__AFF_MAX], car_w[4 * MU__AFF_MAX], ncar;
} mu__apod_t;

/* --- Selectors ------------------------------------------------------------ */

static int32_t pod_label(const int32_t *labels, int32_t n, int32_t key)
{
	int32_t lo = 0, hi = n - 1;
	while (lo <= hi) {
		int32_t mid = (lo + hi) / 2;
		if (labels[2 * mid] == key)
			return labels[2 * mid + 1];
		if (labels[2 * mid] < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static bool in_vals(const mu__selreq_t *q, int32_t v)
{
	for (int32_t i = 0; i < q->nvals; i++)
		if (q->vals[i] == v)
			return true;
	return false;
}

/* Whether a pod with these labels in namespace ns matches s. */
static bool psel_match(const mu__psel_t *s, const int32_t *labels, int32_t nl,
		       int32_t ns)
{
	if (s->absent)
		return false;
	if (!s->all_ns) {
		bool ok = false;
		for (int32_t i = 0; i < s->nns && !ok; i++)
			ok = s->ns[i] == ns;
		if (!ok)
			return false;
	}
	for (int32_t r = 0; r < s->nreqs; r++) {
		const mu__selreq_t *q = &s->reqs[r];
		int32_t v = pod_label(labels, nl, q->key);
		bool ok;
		switch (q->op) {
		case MU_SEL_IN: ok = v >= 0 && in_vals(q, v); break;
		case MU_SEL_NOT_IN: ok = v < 0 || !in_vals(q, v); break;
		case MU_SEL_EXISTS: ok = v >= 0; break;
		case MU_SEL_DOES_NOT_EXIST: ok = v < 0; break;
		default: ok = false; break;
		}
		if (!ok)
			return false;
	}
	return true;
}

static void psel_free(mu__psel_t *s)
{
	for (int32_t r = 0; r < s->nreqs; r++)
		free(s->reqs[r].vals);
	free(s->reqs);
	free(s->ns);
	memset(s, 0, sizeof *s);
}

/* Compiles selector sel (plus the pod's own values of match / mismatch
 * keys) with namespaces into out.  MU_EINVAL for an operator a pod
 * selector does not have. */
static int psel_build(mu_engine_t *e, mu__psel_t *out, const mu_pod_sel_t *sel,
		      const char **mk, size_t nmk, const char **xk, size_t nxk,
		      const mu_label_t *labels, size_t nl, int32_t own_ns,
		      const char **nss, size_t nns, bool all_ns)
{
	memset(out, 0, sizeof *out);
	out->absent = sel->absent;
	out->all_ns = all_ns;
	size_t cap = sel->nreqs + nmk + nxk;
	out->reqs = calloc(cap ? cap : 1, sizeof *out->reqs);
	out->ns = calloc(nns ? nns : 1, sizeof *out->ns);
	if (!out->reqs || !out->ns)
		return MU_ENOMEM;
	for (size_t r = 0; r < sel->nreqs; r++) {
		const mu_sel_req_t *sq = &sel->reqs[r];
		mu__selreq_t *q = &out->reqs[out->nreqs];
		if (!sq->key || !*sq->key || sq->op > MU_SEL_DOES_NOT_EXIST ||
		    ((sq->op == MU_SEL_IN || sq->op == MU_SEL_NOT_IN) && !sq->nvalues))
			return MU_EINVAL;
		q->vals = calloc(sq->nvalues ? sq->nvalues : 1, sizeof *q->vals);
		if (!q->vals)
			return MU_ENOMEM;
		out->nreqs++;
		q->key = mu__intern(&e->strs, sq->key);
		q->op = sq->op;
		for (size_t v = 0; v < sq->nvalues; v++)
			if (!sq->values[v] || (q->vals[q->nvals++] =
					       mu__intern(&e->strs, sq->values[v])) < 0)
				return sq->values[v] ? MU_ENOMEM : MU_EINVAL;
		if (q->key < 0)
			return MU_ENOMEM;
	}
	for (size_t k = 0; k < nmk + nxk; k++) {
		const char *key = k < nmk ? mk[k] : xk[k - nmk];
		if (!key || !*key)
			return MU_EINVAL;
		const char *val = NULL;
		for (size_t l = 0; l < nl && !val; l++)
			if (!strcmp(labels[l].key, key))
				val = labels[l].value ? labels[l].value : "";
		if (!val)
			continue; /* keys the pod lacks are ignored */
		mu__selreq_t *q = &out->reqs[out->nreqs];
		if (!(q->vals = calloc(1, sizeof *q->vals)))
			return MU_ENOMEM;
		out->nreqs++;
		q->key = mu__intern(&e->strs, key);
		q->op = k < nmk ? MU_SEL_IN : MU_SEL_NOT_IN;
		q->vals[0] = mu__intern(&e->strs, val);
		q->nvals = 1;
	}
	if (all_ns) {
		out->nns = 0;
	} else if (nns == 0) {
		out->ns[0] = own_ns;
		out->nns = 1;
	} else {
		for (size_t i = 0; i < nns; i++) {
			if (!nss[i] || !*nss[i])
				return MU_EINVAL;
			out->ns[out->nns++] = mu__intern(&e->strs, nss[i]);
		}
	}
	return MU_OK;
}

/* Appends a decimal number and a separator to a signature. */
static int sig_num(char **buf, size_t *len, size_t *cap, long long v, char sep)
{
	if (*len + 24 > *cap) {
		size_t nc = *cap ? *cap * 2 : 128;
		char *nb = realloc(*buf, nc);
		if (!nb)
			return MU_ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	*len += (size_t)snprintf(*buf + *len, *cap - *len, "%lld%c", v, sep);
	return MU_OK;
}

/* Appends the canonical form of s (its requirements in their order). */
static int sig_psel(char **b, size_t *l, size_t *c, const mu__psel_t *s)
{
	int rc = sig_num(b, l, c, s->absent, 'a');
	rc = rc ? rc : sig_num(b, l, c, s->all_ns ? -1 : s->nns, 'n');
	for (int32_t i = 0; i < s->nns && !rc; i++)
		rc = sig_num(b, l, c, s->ns[i], ',');
	for (int32_t r = 0; r < s->nreqs && !rc; r++) {
		const mu__selreq_t *q = &s->reqs[r];
		rc = sig_num(b, l, c, q->key, (char)('0' + q->op));
		for (int32_t v = 0; v < q->nvals && !rc; v++)
			rc = sig_num(b, l, c, q->vals[v], ',');
		rc = rc ? rc : sig_num(b, l, c, 0, ';');
	}
	return rc;
}

/* --- The (key, value) index ---------------------------------------------- */

static uint64_t hkey(int tag, int32_t k, int32_t v)
{
	return ((uint64_t)(tag + 1) << 62) ^ ((uint64_t)(uint32_t)k << 31) ^ (uint32_t)v;
}

static uint32_t hslot(uint64_t k, uint32_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k & (cap - 1);
}

/* The list of index key k, or -1 when absent (create false) or out of
 * memory.  O(1) expected. */
static int32_t index_list(struct mu__affx *x, uint64_t k, bool create)
{
	if (x->hcap) {
		for (uint32_t s = hslot(k, x->hcap);; s = (s + 1) & (x->hcap - 1)) {
			if (x->hvals[s] < 0)
				break;
			if (x->hkeys[s] == k)
				return x->hvals[s];
		}
	}
	if (!create)
		return -1;
	if ((x->hn + 1) * 2 > x->hcap) {
		uint32_t nc = x->hcap ? x->hcap * 2 : 64;
		uint64_t *nk = malloc(nc * sizeof *nk);
		int32_t *nv = malloc(nc * sizeof *nv);
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (uint32_t s = 0; s < nc; s++)
			nv[s] = -1;
		for (uint32_t o = 0; o < x->hcap; o++) {
			if (x->hvals[o] < 0)
				continue;
			uint32_t s = hslot(x->hkeys[o], nc);
			while (nv[s] >= 0)
				s = (s + 1) & (nc - 1);
			nk[s] = x->hkeys[o];
			nv[s] = x->hvals[o];
		}
		free(x->hkeys);
		free(x->hvals);
		x->hkeys = nk;
		x->hvals = nv;
		x->hcap = nc;
	}
	if (mu__grow((void **)&x->lists, &x->lists_cap, x->nlists + 1, sizeof *x->lists))
		return -1;
	uint32_t s = hslot(k, x->hcap);
	while (x->hvals[s] >= 0)
		s = (s + 1) & (x->hcap - 1);
	x->hkeys[s] = k;
	x->hvals[s] = x->nlists;
	x->hn++;
	x->lists[x->nlists] = (mu__alist_t){NULL, 0, 0};
	return x->nlists++;
}

static int alist_add(mu__alist_t *l, int32_t id)
{
	int rc = mu__grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v);
	if (rc == MU_OK)
		l->v[l->n++] = id;
	return rc;
}

/* Files id (tag 0 counter, 1 carried term) under the values of s's first
 * In requirement, or in the unindexed list. */
static int index_add(struct mu__affx *x, int tag, const mu__psel_t *s, int32_t id)
{
	for (int32_t r = 0; r < s->nreqs; r++) {
		const mu__selreq_t *q = &s->reqs[r];
		if (q->op != MU_SEL_IN)
			continue;
		for (int32_t v = 0; v < q->nvals; v++) {
			int32_t li = index_list(x, hkey(tag, q->key, q->vals[v]), true);
			if (li < 0 || alist_add(&x->lists[li], id))
				return MU_ENOMEM;
		}
		return MU_OK;
	}
	if (s->absent)
		return MU_OK; /* matches nothing: never looked up */
	return alist_add(tag ? &x->any_car : &x->any_ctr, id);
}

/* --- Topology keys and domains ------------------------------------------- */

static bool is_hostname(const mu_engine_t *e, int32_t key)
{
	return !strcmp(e->strs.strs[key], HOSTNAME);
}

/* Dense domains of key k over the nodes: the value of label k; for
 * kubernetes.io/hostname a node without it is its own domain (kubelet
 * sets the label on every node).  Returns whether any node's domain moved.
 * O(nodes + strings). */
static int tkey_build(mu_engine_t *e, mu__atkey_t *t, int32_t nnodes, bool *moved)
{
	int32_t *map = malloc((size_t)(e->strs.n + 1) * sizeof *map);
	int32_t *dom = malloc((size_t)(nnodes + 1) * sizeof *dom);
	if (!map || !dom) {
		free(map);
		free(dom);
		return MU_ENOMEM;
	}
	for (int32_t i = 0; i < e->strs.n; i++)
		map[i] = -1;
	bool host = is_hostname(e, t->key);
	int32_t nd = 0;
	for (int32_t n = 0; n < nnodes; n++) {
		const mu__node_t *node = &e->nodes[n];
		int32_t v = node->removed ? -1 : mu__node_label(node, t->key);
		if (v >= 0) {
			if (map[v] < 0)
				map[v] = nd++;
			dom[n] = map[v];
		} else {
			dom[n] = host && !node->removed ? nd++ : -1;
		}
	}
	int32_t *size = calloc((size_t)nd + 1, sizeof *size);
	if (!size) {
		free(map);
		free(dom);
		return MU_ENOMEM;
	}
	for (int32_t n = 0; n < nnodes; n++)
		if (dom[n] >= 0)
			size[dom[n]]++;
	*moved = t->dom == NULL;
	for (int32_t n = 0; n < nnodes && !*moved; n++)
		*moved = n >= e->nnodes || t->dom[n] != dom[n];
	free(map);
	free(t->dom);
	free(t->size);
	t->dom = dom;
	t->size = size;
	t->ndoms = nd;
	return MU_OK;
}

static int32_t tkey_get(mu_engine_t *e, const char *key)
{
	struct mu__affx *x = e->aff;
	int32_t k = mu__intern(&e->strs, key);
	if (k < 0)
		return -1;
	for (int32_t i = 0; i < x->ntk; i++)
		if (x->tk[i].key == k)
			return i;
	if (mu__grow((void **)&x->tk, &x->tk_cap, x->ntk + 1, sizeof *x->tk))
		return -1;
	x->tk[x->ntk] = (mu__atkey_t){.key = k};
	x->gen = 0; /* domains to build */
	return x->ntk++;
}

/* (Re)sizes a counter's or carried term's arrays to the domains; zeroed. */
static int ctr_size(struct mu__affx *x, mu__actr_t *c)
{
	free(c->pn);
	c->pn = calloc((size_t)x->nnodes + 1, sizeof *c->pn);
	if (!c->pn)
		return MU_ENOMEM;
	for (int32_t t = 0; t < c->ntk; t++) {
		free(c->dom[t]);
		c->dom[t] = calloc((size_t)x->tk[c->tk[t]].ndoms + 1, sizeof *c->dom[t]);
		if (!c->dom[t])
			return MU_ENOMEM;
	}
	return MU_OK;
}

static int car_size(struct mu__affx *x, mu__acarry_t *c)
{
	int32_t nd = x->tk[c->tk].ndoms + 1;
	free(c->anti);
	free(c->w);
	c->anti = calloc((size_t)nd, sizeof *c->anti);
	c->w = calloc((size_t)nd, sizeof *c->w);
	c->nanti = c->nw = 0;
	return c->anti && c->w ? MU_OK : MU_ENOMEM;
}

/* --- Counting ------------------------------------------------------------- */

static bool ctr_match(const mu__actr_t *c, const mu__podset_t *ps, int32_t ns)
{
	for (int32_t i = 0; i < c->ncl; i++)
		if (!psel_match(&c->cl[i], ps->labels, ps->nlabels, ns))
			return false;
	return true;
}

static void ctr_add(struct mu__affx *x, mu__actr_t *c, int32_t nid, int sign)
{
	c->pn[nid] += sign;
	for (int32_t t = 0; t < c->ntk; t++) {
		int32_t d = x->tk[c->tk[t]].dom[nid];
		if (d >= 0)
			c->dom[t][d] += sign;
	}
}

/* The index list of kind (0 counters, 1 carried terms) for ps's label l,
 * or for l = -1 the list of those that select any pod; NULL when no list
 * has that label.  O(1) expected. */
static const mu__alist_t *label_list(struct mu__affx *x, int kind, const mu__podset_t *ps,
				     int32_t l)
{
	if (l < 0)
		return kind ? &x->any_car : &x->any_ctr;
	int32_t k = index_list(x, hkey(kind, ps->labels[2 * l], ps->labels[2 * l + 1]), false);
	return k < 0 ? NULL : &x->lists[k];
}

/* Counts one pod of ps (namespace ns) on nid in the counters and carried
 * terms; only_fresh limits it to those not counted yet. */
static void count_pod(struct mu__affx *x, const mu__podset_t *ps, int32_t ns,
		      int32_t nid, int sign, bool only_fresh)
{
	for (int32_t l = -1; l < ps->nlabels; l++) {
		const mu__alist_t *li = label_list(x, 0, ps, l);
		if (!li)
			continue;
		for (int32_t i = 0; i < li->n; i++) {
			mu__actr_t *c = &x->ctr[li->v[i]];
			if ((!only_fresh || c->fresh) && ctr_match(c, ps, ns))
				ctr_add(x, c, nid, sign);
		}
	}
	const mu__apod_t *a = ps->aff;
	for (int32_t i = 0; a && i < a->ncar; i++) {
		mu__acarry_t *c = &x->car[a->car[i]];
		int32_t d = x->tk[c->tk].dom[nid];
		if ((only_fresh && !c->fresh) || d < 0)
			continue;
		if (a->car_w[i] == 0) {
			c->anti[d] += sign;
			c->nanti += sign;
		} else {
			c->w[d] += sign * a->car_w[i];
			c->nw += sign;
		}
	}
}

static int aff_sync(mu_engine_t *e);

/* Called before the pod enters the node's list (bind) or leaves it
 * (release), so that a full count made on the way sees the node as it
 * was. */
void mu__aff_pod(mu_engine_t *e, const mu__job_t *j, int32_t pod, int32_t nid,
		 int sign)
{
	struct mu__affx *x = e->aff;
	if (!x || x->dirty)
		return;
	if (aff_sync(e) != MU_OK || nid >= x->nnodes) {
		x->dirty = true; /* counted afresh at the next sync */
		return;
	}
	const mu__podset_t *ps = &j->podsets[mu__pod_podset(j, pod)];
	count_pod(x, ps, ps->ns, nid, sign, false);
}

/* Counts every bound pod into the fresh counts (all with all_fresh). */
static void recount(mu_engine_t *e, bool all_fresh)
{
	struct mu__affx *x = e->aff;
	for (int32_t n = 0; n < x->nnodes; n++) {
		const mu__node_t *node = &e->nodes[n];
		for (int32_t r = 0; r < node->npods; r++) {
			const mu__job_t *j = &e->jobs[node->refs[r].job];
			const mu__podset_t *ps = &j->podsets[mu__pod_podset(j, node->refs[r].pod)];
			count_pod(x, ps, ps->ns, n, +1, !all_fresh);
		}
	}
	for (int32_t i = 0; i < x->nctr; i++)
		x->ctr[i].fresh = false;
	for (int32_t i = 0; i < x->ncar; i++)
		x->car[i].fresh = false;
	x->fresh = false;
}

/* Brings domains and counts up to date: domains when nodes' static facts
 * changed (counts again only if a domain moved), and new counts.
 * O(nodes x keys), plus O(bound pods) when anything is counted anew. */
static int aff_sync(mu_engine_t *e)
{
	struct mu__affx *x = e->aff;
	if (x->gen == e->node_gen && x->nnodes == e->nnodes && !x->fresh && !x->dirty)
		return MU_OK;
	bool all = x->nnodes != e->nnodes || x->dirty;
	if (x->gen != e->node_gen || all) {
		for (int32_t t = 0; t < x->ntk; t++) {
			bool moved = false;
			int rc = tkey_build(e, &x->tk[t], e->nnodes, &moved);
			if (rc)
				return rc;
			all = all || moved;
		}
	}
	x->nnodes = e->nnodes;
	x->dirty = true; /* until counted */
	for (int32_t i = 0; i < x->nctr; i++)
		if ((all || x->ctr[i].fresh) && ctr_size(x, &x->ctr[i]))
			return MU_ENOMEM;
	for (int32_t i = 0; i < x->ncar; i++)
		if ((all || x->car[i].fresh) && car_size(x, &x->car[i]))
			return MU_ENOMEM;
	x->gen = e->node_gen;
	if (all || x->fresh)
		recount(e, all);
	x->dirty = false;
	return MU_OK;
}

/* --- Building a pod set's terms ------------------------------------------ */

static struct mu__affx *aff_get(mu_engine_t *e)
{
	if (!e->aff)
		e->aff = calloc(1, sizeof *e->aff);
	return e->aff;
}

/* The counter of the conjunction cl[0..ncl) with domain counts for tks;
 * takes cl (freed when an equal counter exists).  -1 on out of memory. */
static int32_t ctr_get(mu_engine_t *e, mu__psel_t *cl, int32_t ncl,
		       const int32_t *tks, int32_t ntk)
{
	struct mu__affx *x = e->aff;
	char *sig = NULL;
	size_t len = 0, cap = 0;
	int rc = sig_num(&sig, &len, &cap, ntk, 'c');
	for (int32_t t = 0; t < ntk && !rc; t++)
		rc = sig_num(&sig, &len, &cap, x->tk[tks[t]].key, 't');
	for (int32_t i = 0; i < ncl && !rc; i++)
		rc = sig_psel(&sig, &len, &cap, &cl[i]);
	int32_t id = rc ? -1 : mu__strmap_get(&x->sigs, sig);
	if (rc || id >= 0) {
		free(sig);
		for (int32_t i = 0; i < ncl; i++)
			psel_free(&cl[i]);
		free(cl);
		return rc ? -1 : id;
	}
	if (mu__grow((void **)&x->ctr, &x->ctr_cap, x->nctr + 1, sizeof *x->ctr))
		goto oom;
	mu__actr_t *c = &x->ctr[x->nctr];
	memset(c, 0, sizeof *c);
	c->tk = malloc((size_t)ntk * sizeof *c->tk + 1);
	c->dom = calloc((size_t)ntk + 1, sizeof *c->dom);
	if (!c->tk || !c->dom) {
		free(c->tk);
		free(c->dom);
		goto oom;
	}
	memcpy(c->tk, tks, (size_t)ntk * sizeof *tks);
	c->ntk = ntk;
	c->cl = cl;
	c->ncl = ncl;
	c->fresh = true;
	id = x->nctr++;
	if (!mu__strmap_put(&x->sigs, sig, id) || index_add(x, 0, &cl[0], id)) {
		free(sig);
		x->dirty = true;
		return -1;
	}
	free(sig);
	x->fresh = true;
	return id;
oom:
	free(sig);
	for (int32_t i = 0; i < ncl; i++)
		psel_free(&cl[i]);
	free(cl);
	return -1;
}

/* The carried term (cl, tk); takes cl.  -1 on out of memory. */
static int32_t car_get(mu_engine_t *e, mu__psel_t *cl, int32_t tk)
{
	struct mu__affx *x = e->aff;
	char *sig = NULL;
	size_t len = 0, cap = 0;
	int rc = sig_num(&sig, &len, &cap, x->tk[tk].key, 'k');
	rc = rc ? rc : sig_psel(&sig, &len, &cap, cl);
	int32_t id = rc ? -1 : mu__strmap_get(&x->sigs, sig);
	if (rc || id >= 0 ||
	    mu__grow((void **)&x->car, &x->car_cap, x->ncar + 1, sizeof *x->car)) {
		free(sig);
		psel_free(cl);
		return id;
	}
	mu__acarry_t *c = &x->car[x->ncar];
	memset(c, 0, sizeof *c);
	c->cl = *cl;
	c->tk = tk;
	c->fresh = true;
	id = x->ncar++;
	if (!mu__strmap_put(&x->sigs, sig, id) || index_add(x, 1, &c->cl, id)) {
		free(sig);
		x->dirty = true;
		return -1;
	}
	free(sig);
	x->fresh = true;
	return id;
}

/* Compiles term t of pod set ps (namespace ns) into one selector. */
static int term_sel(mu_engine_t *e, const mu_pod_term_t *t, const mu_podset_spec_t *ps,
		    int32_t ns, mu__psel_t *out)
{
	if (!t->topology_key || !*t->topology_key)
		return MU_EINVAL;
	if (t->weight < 0 || t->weight > 100)
		return MU_ERANGE;
	return psel_build(e, out, &t->sel, t->match_keys, t->nmatch_keys,
			  t->mismatch_keys, t->nmismatch_keys, ps->labels,
			  ps->nlabels, ns, t->namespaces, t->nnamespaces,
			  t->all_namespaces);
}

/* Whether pod set p matches selector s (its own labels and namespace). */
static bool self_match(const mu__psel_t *s, const mu__podset_t *p)
{
	return psel_match(s, p->labels, p->nlabels, p->ns);
}

static int carry_add(mu_engine_t *e, mu__apod_t *a, const mu_pod_term_t *t,
		     const mu_podset_spec_t *ps, int32_t ns, int32_t tk, int32_t w)
{
	mu__psel_t cl;
	int rc = term_sel(e, t, ps, ns, &cl);
	if (rc) {
		psel_free(&cl);
		return rc;
	}
	int32_t id = car_get(e, &cl, tk);
	if (id < 0)
		return MU_ENOMEM;
	a->car[a->ncar] = id;
	a->car_w[a->ncar++] = w;
	return MU_OK;
}

/* The pod set's inter-pod terms: required affinity (one counter for all),
 * anti-affinity and preferred terms (one each), and what it carries. */
static int build_terms(mu_engine_t *e, mu__apod_t *a, const mu__podset_t *p,
		       const mu_podset_spec_t *ps)
{
	mu__psel_t *req = calloc(MU__AFF_MAX + 1, sizeof *req);
	int32_t req_tk[MU__AFF_MAX];
	int rc = req ? MU_OK : MU_ENOMEM;
	for (size_t i = 0; i < ps->npod_terms && !rc; i++) {
		const mu_pod_term_t *t = &ps->pod_terms[i];
		int32_t tk = t->topology_key && *t->topology_key ?
			tkey_get(e, t->topology_key) : -1;
		if (!t->topology_key || !*t->topology_key)
			rc = MU_EINVAL;
		else if (tk < 0)
			rc = MU_ENOMEM;
		else if (!t->anti && t->weight == 0) {
			req_tk[a->nreq] = tk;
			rc = term_sel(e, t, ps, p->ns, &req[a->nreq++]);
			rc = rc ? rc : carry_add(e, a, t, ps, p->ns, tk, 1);
		} else {
			mu__psel_t *cl = calloc(1, sizeof *cl);
			if (!cl) {
				rc = MU_ENOMEM;
				break;
			}
			if ((rc = term_sel(e, t, ps, p->ns, cl))) {
				psel_free(cl);
				free(cl);
				break;
			}
			int32_t id = ctr_get(e, cl, 1, &tk, 1);
			if (id < 0) {
				rc = MU_ENOMEM;
				break;
			}
			if (t->weight == 0) {
				a->anti_ctr[a->nanti] = id;
				a->anti_tk[a->nanti++] = tk;
			} else {
				a->pref_ctr[a->npref] = id;
				a->pref_tk[a->npref] = tk;
				a->pref_w[a->npref++] = t->anti ? -t->weight : t->weight;
			}
			rc = carry_add(e, a, t, ps, p->ns, tk,
				       t->weight == 0 ? 0 : t->anti ? -t->weight : t->weight);
		}
	}
	if (rc || !a->nreq) {
		for (int32_t i = 0; req && i < a->nreq; i++)
			psel_free(&req[i]);
		free(req);
		if (!rc)
			a->req_ctr = -1;
		return rc;
	}
	a->self_all = true;
	for (int32_t i = 0; i < a->nreq; i++)
		a->self_all = a->self_all && self_match(&req[i], p);
	a->req_ctr = ctr_get(e, req, a->nreq, req_tk, a->nreq);
	return a->req_ctr < 0 ? MU_ENOMEM : MU_OK;
}

/* The pod set's spread constraints: a counter each over its namespace. */
static int build_spread(mu_engine_t *e, mu__apod_t *a, const mu__podset_t *p,
			const mu_podset_spec_t *ps)
{
	for (size_t i = 0; i < ps->nspread; i++) {
		const mu_spread_spec_t *sp = &ps->spread[i];
		if (!sp->topology_key || !*sp->topology_key)
			return MU_EINVAL;
		if (sp->max_skew < 1 || sp->min_domains < 0 ||
		    (sp->min_domains > 0 && sp->schedule_anyway))
			return MU_ERANGE;
		mu__aspr_t *s = &a->spr[a->nspr];
		s->tk = tkey_get(e, sp->topology_key);
		mu__psel_t *cl = calloc(1, sizeof *cl);
		if (s->tk < 0 || !cl) {
			free(cl);
			return MU_ENOMEM;
		}
		int rc = psel_build(e, cl, &sp->sel, sp->match_keys, sp->nmatch_keys,
				    NULL, 0, ps->labels, ps->nlabels, p->ns, NULL, 0, false);
		if (rc) {
			psel_free(cl);
			free(cl);
			return rc;
		}
		s->self = self_match(cl, p);
		if ((s->ctr = ctr_get(e, cl, 1, &s->tk, 1)) < 0)
			return MU_ENOMEM;
		s->max_skew = sp->max_skew;
		s->min_domains = sp->min_domains;
		s->anyway = sp->schedule_anyway;
		s->aff_ignore = sp->affinity_ignore;
		s->taints_honor = sp->taints_honor;
		a->nspr++;
		if (s->anyway)
			a->nsoft++;
		else
			a->nhard++;
	}
	return MU_OK;
}

static int cmp_pair(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

int mu__aff_podset_build(mu_engine_t *e, mu__job_t *j, mu__podset_t *p,
			 const mu_podset_spec_t *ps, const mu_job_spec_t *s)
{
	p->ns = mu__intern(&e->strs, s->namespace && *s->namespace ? s->namespace : "default");
	if (p->ns < 0)
		return MU_ENOMEM;
	if (ps->nlabels) {
		if (!(p->labels = malloc(2 * ps->nlabels * sizeof *p->labels)))
			return MU_ENOMEM;
		for (size_t i = 0; i < ps->nlabels; i++) {
			if (!ps->labels[i].key || !*ps->labels[i].key)
				return MU_EINVAL;
			p->labels[2 * i] = mu__intern(&e->strs, ps->labels[i].key);
			p->labels[2 * i + 1] = mu__intern(&e->strs, ps->labels[i].value ?
							  ps->labels[i].value : "");
			if (p->labels[2 * i] < 0 || p->labels[2 * i + 1] < 0)
				return MU_ENOMEM;
		}
		p->nlabels = (int32_t)ps->nlabels;
		qsort(p->labels, ps->nlabels, 2 * sizeof *p->labels, cmp_pair);
		for (int32_t i = 1; i < p->nlabels; i++)
			if (p->labels[2 * i] == p->labels[2 * i - 2])
				return MU_EINVAL; /* a key twice */
	}
	if (!ps->npod_terms && !ps->nspread && !ps->nnode_pref)
		return MU_OK;
	size_t nreq = 0, nanti = 0, npref = 0;
	for (size_t i = 0; i < ps->npod_terms; i++) {
		const mu_pod_term_t *t = &ps->pod_terms[i];
		*(t->weight ? &npref : t->anti ? &nanti : &nreq) += 1;
	}
	if (nreq > MU__AFF_MAX || nanti > MU__AFF_MAX || npref > 2 * MU__AFF_MAX ||
	    ps->nspread > MU__AFF_MAX || ps->nnode_pref > MU__AFF_MAX)
		return MU_ERANGE;
	if (!aff_get(e) || !(p->aff = calloc(1, sizeof *p->aff)))
		return MU_ENOMEM;
	mu__apod_t *a = p->aff;
	a->req_ctr = -1;
	j->aff = true;
	int rc = build_terms(e, a, p, ps);
	rc = rc ? rc : build_spread(e, a, p, ps);
	for (size_t i = 0; i < ps->nnode_pref && !rc; i++) {
		if (ps->node_pref[i].weight < 1 || ps->node_pref[i].weight > 100)
			return MU_ERANGE;
		a->np_w[i] = ps->node_pref[i].weight;
		a->nnp = (int32_t)i + 1;
		rc = mu__selterm_fill(e, &a->np[i], &ps->node_pref[i].term);
	}
	return rc;
}

void mu__aff_podset_free(mu__podset_t *p)
{
	free(p->labels);
	p->labels = NULL;
	if (!p->aff)
		return;
	for (int32_t i = 0; i < p->aff->nnp; i++)
		mu__selterm_free(&p->aff->np[i]);
	free(p->aff);
	p->aff = NULL;
}

void mu__aff_free(mu_engine_t *e)
{
	struct mu__affx *x = e->aff;
	if (!x)
		return;
	for (int32_t t = 0; t < x->ntk; t++) {
		free(x->tk[t].dom);
		free(x->tk[t].size);
	}
	for (int32_t i = 0; i < x->nctr; i++) {
		mu__actr_t *c = &x->ctr[i];
		for (int32_t k = 0; k < c->ncl; k++)
			psel_free(&c->cl[k]);
		for (int32_t t = 0; t < c->ntk; t++)
			free(c->dom[t]);
		free(c->cl);
		free(c->dom);
		free(c->tk);
		free(c->pn);
	}
	for (int32_t i = 0; i < x->ncar; i++) {
		psel_free(&x->car[i].cl);
		free(x->car[i].anti);
		free(x->car[i].w);
	}
	for (int32_t i = 0; i < x->nlists; i++)
		free(x->lists[i].v);
	free(x->lists);
	free(x->any_ctr.v);
	free(x->any_car.v);
	free(x->hkeys);
	free(x->hvals);
	mu__strmap_release(&x->sigs);
	free(x->tk);
	free(x->ctr);
	free(x->car);
	free(x->feas);
	free(x->fpol);
	free(x->raw);
	free(x->dcnt);
	free(x->dseen);
	free(x->hits);
	free(x->hp);
	free(x);
	e->aff = NULL;
}

/* --- Placing a pod --------------------------------------------------------- */

/* Collects into x->hits the carried terms with carriers that select a pod
 * of ps; returns how many.  O(its labels + terms looked at). */
static int32_t carried_hits(struct mu__affx *x, const mu__podset_t *ps)
{
	int32_t n = 0;
	for (int32_t l = -1; l < ps->nlabels; l++) {
		const mu__alist_t *li = label_list(x, 1, ps, l);
		if (!li)
			continue;
		for (int32_t i = 0; i < li->n; i++) {
			const mu__acarry_t *c = &x->car[li->v[i]];
			if ((!c->nanti && !c->nw) ||
			    !psel_match(&c->cl, ps->labels, ps->nlabels, ps->ns))
				continue;
			if (mu__grow((void **)&x->hits, &x->hits_cap, n + 1, sizeof *x->hits))
				return -1;
			x->hits[n++] = li->v[i];
		}
	}
	return n;
}

bool mu__aff_involved(mu_engine_t *e, const mu__podset_t *ps)
{
	if (ps->aff)
		return true;
	if (!e->aff || !e->aff->ncar || aff_sync(e) != MU_OK)
		return false;
	return carried_hits(e->aff, ps) != 0;
}

/* One placement's view of the counts (set up once per pod). */
typedef struct mu__aview {
	struct mu__affx *x;
	const mu__sclass_t *c;
	const mu__podset_t *ps;
	const mu__apod_t *a;   /* NULL: only carried terms select it */
	int32_t nhits;
	bool req_empty;        /* no pod matches all its required terms */
	int64_t *cnt[MU__AFF_MAX];   /* by constraint: domain counts */
	uint8_t *seen[MU__AFF_MAX];  /* by constraint: eligible domains */
	int64_t minm[MU__AFF_MAX];   /* hard constraints: global minimum */
	/* The per-node checks, flattened (view_flatten): a node fails a
	 * hard spread when it lacks the key or cnt[d] > lim; an
	 * anti-affinity term or a carried one when cnt[dom[node]] > 0. */
	struct { const int32_t *dom; const int64_t *cnt; int64_t lim; } spr[MU__AFF_MAX];
	int32_t nspr;
	struct { const int32_t *dom, *cnt; } anti[MU__AFF_MAX];
	int32_t nanti;
	int32_t nex;           /* carried: x->hp[2 h], x->hp[2 h + 1] */
} mu__aview_t;

/* Whether node n has every key of the constraints of one kind. */
static bool has_keys(const mu__aview_t *v, int32_t nid, bool soft)
{
	for (int32_t i = 0; i < v->a->nspr; i++)
		if (v->a->spr[i].anyway == soft && v->x->tk[v->a->spr[i].tk].dom[nid] < 0)
			return false;
	return true;
}

/* Domain counts of constraint k over the nodes its inclusion policies
 * admit (kube-scheduler's PreFilter and PreScore).  O(nodes). */
static void spread_count(mu_engine_t *e, mu__aview_t *v, int32_t k)
{
	const mu__aspr_t *sp = &v->a->spr[k];
	const mu__atkey_t *t = &v->x->tk[sp->tk];
	const mu__actr_t *ctr = &v->x->ctr[sp->ctr];
	memset(v->cnt[k], 0, (size_t)t->ndoms * sizeof *v->cnt[k]);
	memset(v->seen[k], 0, (size_t)t->ndoms);
	bool all_nodes = !sp->taints_honor &&
		(sp->aff_ignore || (v->c->nsel == 0 && v->c->nterms == 0)) &&
		(sp->anyway ? v->a->nsoft : v->a->nhard) == 1;
	if (all_nodes) {
		/* Every node with the key counts: the kept domain counts are
		 * the answer.  O(domains). */
		for (int32_t d = 0; d < t->ndoms; d++) {
			v->seen[k][d] = t->size[d] > 0;
			v->cnt[k][d] = ctr->dom[0][d];
		}
	}
	for (int32_t n = 0; !all_nodes && n < v->x->nnodes; n++) {
		int32_t d = t->dom[n];
		if (d < 0 || !has_keys(v, n, sp->anyway))
			continue;
		const mu__node_t *node = &e->nodes[n];
		if (!sp->aff_ignore && !mu__sclass_node_affine(e, v->c, node))
			continue;
		if (sp->taints_honor && !mu__sclass_node_tolerates(v->c, node))
			continue;
		v->seen[k][d] = 1;
		v->cnt[k][d] += ctr->pn[n];
	}
	if (sp->anyway)
		return;
	int64_t m = INT64_MAX, nd = 0;
	for (int32_t d = 0; d < t->ndoms; d++) {
		if (!v->seen[k][d])
			continue;
		nd++;
		if (v->cnt[k][d] < m)
			m = v->cnt[k][d];
	}
	v->minm[k] = m == INT64_MAX || nd < sp->min_domains ? 0 : m;
}

static int view_flatten(mu__aview_t *v);

/* Sets up v for placing one pod of ps.  MU_ENOMEM. */
static int view_init(mu_engine_t *e, mu__aview_t *v, const mu__sclass_t *c,
		     const mu__podset_t *ps)
{
	struct mu__affx *x = e->aff;
	memset(v, 0, sizeof *v);
	v->x = x;
	v->c = c;
	v->ps = ps;
	v->a = ps->aff;
	if ((v->nhits = carried_hits(x, ps)) < 0)
		return MU_ENOMEM;
	const mu__apod_t *a = v->a;
	if (!a)
		return view_flatten(v);
	if (a->req_ctr >= 0) {
		const mu__actr_t *r = &x->ctr[a->req_ctr];
		v->req_empty = true;
		for (int32_t t = 0; t < r->ntk && v->req_empty; t++)
			for (int32_t d = 0; d < x->tk[r->tk[t]].ndoms && v->req_empty; d++)
				v->req_empty = r->dom[t][d] <= 0;
	}
	int32_t need = 0;
	for (int32_t k = 0; k < a->nspr; k++)
		need += x->tk[a->spr[k].tk].ndoms + 1;
	if (need > x->dcap) {
		free(x->dcnt);
		free(x->dseen);
		x->dcnt = malloc((size_t)need * sizeof *x->dcnt);
		x->dseen = malloc((size_t)need);
		x->dcap = x->dcnt && x->dseen ? need : 0;
		if (!x->dcap)
			return MU_ENOMEM;
	}
	int32_t off = 0;
	for (int32_t k = 0; k < a->nspr; k++) {
		v->cnt[k] = x->dcnt + off;
		v->seen[k] = x->dseen + off;
		off += x->tk[a->spr[k].tk].ndoms + 1;
		spread_count(e, v, k);
	}
	return view_flatten(v);
}

/* The first of this plugin's filters node nid fails, or MU_F_COUNT.
 * O(terms). */
static mu_filter_t view_filter(const mu__aview_t *v, int32_t nid)
{
	const struct mu__affx *x = v->x;
	const mu__apod_t *a = v->a;
	for (int32_t k = 0; k < v->nspr; k++) {
		int32_t d = v->spr[k].dom[nid];
		if (d < 0)
			return MU_F_SPREAD_LABEL;
		if (v->spr[k].cnt[d] > v->spr[k].lim)
			return MU_F_SPREAD;
	}
	if (a) {
		if (a->req_ctr >= 0) {
			const mu__actr_t *r = &x->ctr[a->req_ctr];
			bool exist = true;
			for (int32_t t = 0; t < r->ntk; t++) {
				int32_t d = x->tk[r->tk[t]].dom[nid];
				if (d < 0)
					return MU_F_POD_AFFINITY;
				if (r->dom[t][d] <= 0)
					exist = false;
			}
			if (!exist && !(v->req_empty && a->self_all))
				return MU_F_POD_AFFINITY;
		}
	}
	for (int32_t k = 0; k < v->nanti; k++) {
		int32_t d = v->anti[k].dom[nid];
		if (d >= 0 && v->anti[k].cnt[d] > 0)
			return MU_F_POD_ANTI;
	}
	for (int32_t h = 0; h < v->nex; h++) {
		int32_t d = x->hp[2 * h][nid];
		if (d >= 0 && x->hp[2 * h + 1][d] > 0)
			return MU_F_EXISTING_ANTI;
	}
	return MU_F_COUNT;
}

/* Flattens the filters of v into direct array pointers (view_filter()).
 * O(terms + hits).  MU_ENOMEM. */
static int view_flatten(mu__aview_t *v)
{
	struct mu__affx *x = v->x;
	const mu__apod_t *a = v->a;
	for (int32_t k = 0; a && k < a->nspr; k++) {
		const mu__aspr_t *sp = &a->spr[k];
		if (sp->anyway)
			continue;
		v->spr[v->nspr].dom = x->tk[sp->tk].dom;
		v->spr[v->nspr].cnt = v->cnt[k];
		v->spr[v->nspr++].lim = sp->max_skew + v->minm[k] - sp->self;
	}
	for (int32_t k = 0; a && k < a->nanti; k++) {
		v->anti[v->nanti].dom = x->tk[a->anti_tk[k]].dom;
		v->anti[v->nanti++].cnt = x->ctr[a->anti_ctr[k]].dom[0];
	}
	if (mu__grow((void **)&x->hp, &x->hp_cap, 2 * v->nhits + 2, sizeof *x->hp))
		return MU_ENOMEM;
	for (int32_t h = 0; h < v->nhits; h++) {
		const mu__acarry_t *c = &x->car[x->hits[h]];
		if (!c->nanti)
			continue;
		x->hp[2 * v->nex] = x->tk[c->tk].dom;
		x->hp[2 * v->nex++ + 1] = c->anti;
	}
	return MU_OK;
}

bool mu__aff_node_ok(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
		     int32_t nid)
{
	mu__aview_t v;
	if (!e->aff || aff_sync(e) != MU_OK || view_init(e, &v, c, ps) != MU_OK)
		return !ps->aff;
	return view_filter(&v, nid) == MU_F_COUNT;
}

/* Raw preference scores of feasible node nid into raw[0..3): preferred
 * node affinity, inter-pod affinity, soft spread (kube-scheduler's Score
 * of NodeAffinity, InterPodAffinity, PodTopologySpread).  Soft spread
 * uses the normalizing weights w[].  Returns whether the node lacks a
 * soft constraint's key (then its spread score is 0). */
static bool view_raw(mu_engine_t *e, const mu__aview_t *v, int32_t nid,
		     const double *w, int64_t raw[3])
{
	const struct mu__affx *x = v->x;
	const mu__apod_t *a = v->a;
	raw[0] = raw[1] = raw[2] = 0;
	for (int32_t k = 0; a && k < a->nnp; k++)
		if (mu__selterm_match(e, &a->np[k], &e->nodes[nid]))
			raw[0] += a->np_w[k];
	for (int32_t k = 0; a && k < a->npref; k++) {
		int32_t d = x->tk[a->pref_tk[k]].dom[nid];
		if (d >= 0)
			raw[1] += (int64_t)a->pref_w[k] * x->ctr[a->pref_ctr[k]].dom[0][d];
	}
	for (int32_t h = 0; h < v->nhits; h++) {
		const mu__acarry_t *c = &x->car[x->hits[h]];
		int32_t d = x->tk[c->tk].dom[nid];
		if (c->nw && d >= 0)
			raw[1] += c->w[d];
	}
	if (!a || !a->nsoft)
		return false;
	if (!has_keys(v, nid, true))
		return true;
	double sc = 0;
	for (int32_t k = 0; k < a->nspr; k++) {
		const mu__aspr_t *sp = &a->spr[k];
		if (!sp->anyway)
			continue;
		const mu__atkey_t *t = &x->tk[sp->tk];
		int64_t cnt = is_hostname(e, t->key) ? x->ctr[sp->ctr].pn[nid] :
			v->cnt[k][t->dom[nid]];
		sc += (double)cnt * w[k] + (double)(sp->max_skew - 1);
	}
	raw[2] = (int64_t)llround(sc);
	return false;
}

/* kube-scheduler's normalizing weight of a soft constraint: log(domains
 * of the feasible nodes + 2). */
static void soft_weights(mu_engine_t *e, const mu__aview_t *v, const int32_t *feas,
			 int32_t nf, double *w)
{
	const mu__apod_t *a = v->a;
	struct mu__affx *x = v->x;
	for (int32_t k = 0; k < a->nspr; k++) {
		if (!a->spr[k].anyway)
			continue;
		const mu__atkey_t *t = &x->tk[a->spr[k].tk];
		int64_t size = 0;
		/* seen[k] is free to reuse: the counts are read, not the marks */
		memset(v->seen[k], 0, (size_t)t->ndoms);
		for (int32_t i = 0; i < nf; i++) {
			if (!has_keys(v, feas[i], true))
				continue;
			int32_t d = t->dom[feas[i]];
			if (is_hostname(e, t->key) || !v->seen[k][d])
				size++;
			v->seen[k][d] = 1;
		}
		w[k] = log((double)(size + 2));
	}
}

/* Ranks the feasible nodes by the three normalized preference scores
 * (weight 2 each), then the policy score, then the lower id.  Returns
 * the winner. */
static int32_t view_rank(mu_engine_t *e, const mu__aview_t *v, int32_t nf)
{
	struct mu__affx *x = v->x;
	double w[MU__AFF_MAX] = {0};
	if (v->a && v->a->nsoft)
		soft_weights(e, v, x->feas, nf, w);
	int64_t mx[3] = {INT64_MIN, INT64_MIN, 0}, mn[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
	for (int32_t i = 0; i < nf; i++) {
		int64_t *raw = &x->raw[3 * i];
		bool ignored = view_raw(e, v, x->feas[i], w, raw);
		for (int k = 0; k < 3; k++) {
			if (k == 2 && ignored) {
				raw[2] = -1; /* scores 0 */
				continue;
			}
			if (raw[k] > mx[k])
				mx[k] = raw[k];
			if (raw[k] < mn[k])
				mn[k] = raw[k];
		}
	}
	int32_t best = -1;
	int64_t best_pref = 0;
	double best_pol = 0;
	for (int32_t i = 0; i < nf; i++) {
		const int64_t *raw = &x->raw[3 * i];
		int64_t na = mx[0] > 0 ? 100 * raw[0] / mx[0] : 0;
		int64_t ipa = mx[1] > mn[1] ?
			(int64_t)(100.0 * (double)(raw[1] - mn[1]) / (double)(mx[1] - mn[1])) : 0;
		int64_t sp = raw[2] < 0 ? 0 : mx[2] == 0 ? 100 :
			100 * (mx[2] + mn[2] - raw[2]) / mx[2];
		int64_t pref = 2 * na + 2 * ipa + 2 * sp;
		int32_t nid = x->feas[i];
		double pol = x->fpol[i];
		if (best < 0 || pref > best_pref ||
		    (pref == best_pref && (pol > best_pol || (pol == best_pol && nid < best)))) {
			best = nid;
			best_pref = pref;
			best_pol = pol;
		}
	}
	return best;
}

/* Whether any preference can tell feasible nodes apart: preferred node
 * affinity, preferred pod terms, soft spread, or carried weights. */
static bool view_prefs(const mu__aview_t *v)
{
	const mu__apod_t *a = v->a;
	if (a && (a->nnp || a->npref || a->nsoft))
		return true;
	for (int32_t h = 0; h < v->nhits; h++)
		if (v->x->car[v->x->hits[h]].nw)
			return true;
	return false;
}

int32_t mu__aff_best_node(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
			  const mu__scope_t *sc, mu_reason_t *r)
{
	mu__aview_t v;
	if (aff_sync(e) != MU_OK || view_init(e, &v, c, ps) != MU_OK)
		return -3;
	struct mu__affx *x = e->aff;
	const int32_t *ids = sc ? sc->nodes : c->nodes;
	int32_t n_ids = sc ? sc->n : c->nnodes;
	if (!r && n_ids > x->scr_cap) {
		free(x->feas);
		free(x->fpol);
		free(x->raw);
		x->feas = malloc((size_t)n_ids * sizeof *x->feas);
		x->fpol = malloc((size_t)n_ids * sizeof *x->fpol);
		x->raw = malloc((size_t)n_ids * 3 * sizeof *x->raw);
		x->scr_cap = x->feas && x->fpol && x->raw ? n_ids : 0;
		if (!x->scr_cap)
			return -3;
	}
	if (r)
		memcpy(r->fail, c->fail, sizeof r->fail);
	mu_node_view_t nv;
	mu_score_ctx_t ctx = {e->cfg.score_state, 0, mu__supply_ctx(e),
			       &e->gmodels};
	int32_t nf = 0, best = -1;
	double best_pol = 0;
	bool prefs = view_prefs(&v);
	for (int32_t i = 0; i < n_ids; i++) {
		int32_t nid = ids[i];
		if (sc && !mu__sclass_has(c, nid))
			continue;
		mu_filter_t f = r ? mu__node_fit(e, &e->nodes[nid], ps) :
			mu__fits(e, nid, ps) ? MU_F_COUNT : MU_F_CPU;
		if (f == MU_F_COUNT && e->placing >= 0 &&
		    !mu__resv_allows(e, &e->jobs[e->placing], nid, ps))
			f = MU_F_RESERVED;
		if (f == MU_F_COUNT)
			f = view_filter(&v, nid);
		if (r) {
			if (f != MU_F_COUNT)
				r->fail[f]++;
			continue;
		}
		if (f != MU_F_COUNT)
			continue;
		mu__node_view(&e->nodes[nid], &nv);
		if (e->score->flags & MU_SCORE_RANDOM)
			ctx.random = mu__random(e);
		double pol = e->score->score(&ctx, &nv, ps->req);
		if (!prefs) { /* the policy alone decides */
			if (best < 0 || pol > best_pol || (pol == best_pol && nid < best)) {
				best = nid;
				best_pol = pol;
			}
			continue;
		}
		x->feas[nf] = nid;
		x->fpol[nf++] = pol;
	}
	if (r) {
		r->nodes_total = e->nlive;
		return -1;
	}
	if (!prefs)
		return best;
	return nf ? view_rank(e, &v, nf) : -1;
}

/* The first filter between pods (spread, pod affinity and anti-affinity,
 * bound pods' anti-affinity) one pod of ps fails on node as things now
 * stand, or MU_F_COUNT, into *out; e->aff is set.  MU_ENOMEM.  O(terms),
 * plus O(nodes) for a spread's counts. */
static int between_pods(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps, int32_t node,
			mu_filter_t *out)
{
	mu__aview_t v;
	int rc = aff_sync(e);
	if (rc == MU_OK)
		rc = mu__sclass_refresh(e, c);
	if (rc == MU_OK)
		rc = view_init(e, &v, c, ps);
	if (rc == MU_OK)
		*out = view_filter(&v, node);
	return rc;
}

int mu_engine_node_check(mu_engine_t *e, mu_id_t job, int32_t podset,
			 mu_id_t node, mu_filter_t *out)
{
	if (job < 0 || job >= e->njobs || node < 0 || node >= e->nnodes ||
	    e->nodes[node].removed)
		return MU_ENOENT;
	const mu__job_t *j = &e->jobs[job];
	if (j->state == MU_JOB_FINISHED)
		return MU_ESTATE;
	if (podset < 0 || podset >= j->npodsets)
		return MU_EINVAL;
	const mu__podset_t *ps = &j->podsets[podset];
	mu__sclass_t *c = &e->classes[ps->sclass];
	mu_filter_t f = mu__sclass_node_check(e, c, &e->nodes[node]);
	if (f == MU_F_COUNT)
		f = mu__node_fit(e, &e->nodes[node], ps);
	if (f == MU_F_COUNT && e->placing >= 0 &&
	    !mu__resv_allows(e, &e->jobs[e->placing], node, ps))
		f = MU_F_RESERVED;
	int rc = f == MU_F_COUNT && e->aff ? between_pods(e, c, ps, node, &f) : MU_OK;
	if (rc)
		return rc;
	*out = f;
	return MU_OK;
}

/* One bound pod p (pod set ps) of j: released, its node checked against
 * the filters between pods as things now stand, bound back on its very
 * devices; into *out.  O(terms), plus O(nodes) for a spread's counts. */
static int recheck_pod(mu_engine_t *e, mu__job_t *j, int32_t p, mu__podset_t *ps,
		       mu_filter_t *out)
{
	const mu__pod_t was = j->pods[p];
	mu__pod_release(e, j, p, false); /* bound back below: no room grew */
	int rc = between_pods(e, &e->classes[ps->sclass], ps, was.node, out);
	int rb = mu__pod_bind(e, j, p, was.node, &was);
	return rc ? rc : rb;
}

int mu_engine_job_recheck(mu_engine_t *e, mu_id_t job, mu_filter_t *out, int32_t *pod)
{
	if (!e || !out || !pod)
		return MU_EINVAL;
	if (job < 0 || job >= e->njobs)
		return MU_ENOENT;
	mu__job_t *j = &e->jobs[job];
	if (j->state == MU_JOB_FINISHED)
		return MU_ESTATE;
	*out = MU_F_COUNT;
	*pod = -1;
	int rc = MU_OK;
	/* pods with terms of their own: what others carry did not change */
	for (int32_t p = 0; e->aff && rc == MU_OK && *out == MU_F_COUNT && p < j->npods; p++) {
		mu__podset_t *ps = &j->podsets[mu__pod_podset(j, p)];
		if (j->pods[p].node < 0 || !ps->aff)
			continue;
		rc = recheck_pod(e, j, p, ps, out);
		*pod = *out == MU_F_COUNT ? -1 : p;
	}
	return rc;
}

int32_t mu__aff_anti_peers(mu_engine_t *e, const mu__podset_t *ps, int32_t nid, int32_t *out,
			   int32_t max)
{
	const mu__apod_t *a = ps->aff;
	struct mu__affx *x = e->aff;
	int32_t n = 0;
	if (!x || (!(a && a->nanti) && !x->ncar) || aff_sync(e) != MU_OK || nid >= x->nnodes)
		return 0;
	for (int32_t t = 0; a && t < a->nanti; t++) {
		const mu__atkey_t *tk = &x->tk[a->anti_tk[t]];
		const mu__actr_t *c = &x->ctr[a->anti_ctr[t]];
		int32_t d = tk->dom[nid], ct = 0;
		while (ct < c->ntk && c->tk[ct] != a->anti_tk[t])
			ct++;
		/* only when the domain holds such pods off nid: O(1) to know */
		if (is_hostname(e, tk->key) || d < 0 || tk->size[d] < 2 || !c->pn || ct == c->ntk ||
		    !c->dom[ct] || c->dom[ct][d] <= c->pn[nid])
			continue;
		for (int32_t m = 0; m < x->nnodes && n < max; m++) {
			bool dup = m == nid || tk->dom[m] != d || c->pn[m] <= 0;
			for (int32_t i = 0; i < n && !dup; i++)
				dup = out[i] == m;
			if (!dup)
				out[n++] = m;
		}
	}
	/* Symmetry: bound pods whose own required anti-affinity, per a
	 * domain wider than a node, selects a pod of ps.  Their counts are
	 * per domain, not per node, so every other node of the domain with
	 * pods is a peer; the victims not needed are reprieved. */
	int32_t nh = x->ncar ? carried_hits(x, ps) : 0;
	for (int32_t h = 0; h < nh && n < max; h++) {
		const mu__acarry_t *c = &x->car[x->hits[h]];
		const mu__atkey_t *tk = &x->tk[c->tk];
		int32_t d = tk->dom[nid];
		if (!c->nanti || is_hostname(e, tk->key) || d < 0 || tk->size[d] < 2 || c->anti[d] <= 0)
			continue;
		for (int32_t m = 0; m < x->nnodes && n < max; m++) {
			bool dup = m == nid || tk->dom[m] != d || e->nodes[m].npods <= 0;
			for (int32_t i = 0; i < n && !dup; i++)
				dup = out[i] == m;
			if (!dup)
				out[n++] = m;
		}
	}
	return n;
}
