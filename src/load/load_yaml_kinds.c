/*
 * load_yaml_kinds.c - the cluster-side YAML kinds: v1 Node, and muster's
 * NodePool (with its nodeTopology, read by load_yaml_topo.c), Queue and
 * Scenario (muster.io/v1alpha1).
 *
 * Each converter reads one document's tree (load_yaml.h), builds its spec
 * in a local struct with strings in the set's arena, and appends it to the
 * set only once it is complete, so that a failed document leaves nothing
 * half-built behind.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "muster/engine.h"
#include "muster/mig.h"
#include "load/load_yaml.h"

#define NODE_MAX_PODS 1000000     /* pods per node */
#define POOL_MAX_COUNT 100000     /* nodes per NodePool */
#define POOL_MAX_TOPO 16          /* topology entries per NodePool */
#define POOL_MAX_LABELS 16000000  /* label entries NodePools make per load */
#define STEP_MAX_CYCLES 1000
#define EXPECT_MAX 10000000       /* bound and evicted in expectations */

/* --- Node resources ------------------------------------------------------ */

/* Reads one allocatable entry c into the node's vector or its extended
 * list ext (room for MU__Y_MAX_EXT). */
static int node_res(mu__yload_t *L, const mu__ynode_t *c, mu_res_t *alloc,
		    mu_ext_qty_t *ext, size_t *next)
{
	const char *k = c->key;
	int64_t v;
	int rc;
	if (!strcmp(k, "ephemeral-storage") || !strncmp(k, "hugepages-", 10))
		return MU_OK;
	if (!strcmp(k, "muster.io/gpu-milli"))
		return mu__y_err(L, c, NULL, MU_EINVAL,
				 "a GPU share is a pod request, not a node "
				 "resource; give nvidia.com/gpu devices");
	bool gpu = !strcmp(k, "nvidia.com/gpu");
	rc = mu__y_qty(L, c, !strcmp(k, "cpu") || gpu ? 1000 : 1, &v);
	if (rc != MU_OK)
		return rc;
	if (!strcmp(k, "cpu")) {
		alloc->v[MU_RES_CPU] = v;
	} else if (!strcmp(k, "memory")) {
		alloc->v[MU_RES_MEM] = v;
	} else if (gpu) {
		if (v % 1000 || v > 1000 * MU_MAX_GPUS)
			return mu__y_err(L, c, NULL, MU_ERANGE,
					 "expected a whole number of GPU devices "
					 "from 0 to %d, got \"%s\"", MU_MAX_GPUS,
					 c->s);
		alloc->v[MU_RES_GPU] = v / 1000;
	} else if (!strcmp(k, "pods")) {
		if (v > NODE_MAX_PODS)
			return mu__y_err(L, c, NULL, MU_ERANGE,
					 "at most %d pods per node",
					 NODE_MAX_PODS);
		alloc->v[MU_RES_PODS] = v;
	} else {
		if (*next == MU__Y_MAX_EXT)
			return mu__y_err(L, c, NULL, MU_ELIMIT,
					 "more than %d extended resources",
					 MU__Y_MAX_EXT);
		if (!(ext[*next].name = mu_arena_strdup(&L->into->arena, k)))
			return mu__y_oom(L);
		ext[(*next)++].qty = v;
	}
	return MU_OK;
}

/* Reads a node's allocatable mapping m (may be NULL: nothing) into n. */
static int node_alloc(mu__yload_t *L, const mu__ynode_t *m, mu_node_spec_t *n)
{
	n->alloc.v[MU_RES_PODS] = 110;
	if (!m)
		return MU_OK;
	mu_ext_qty_t *ext = mu__y_alloc(L, MU__Y_MAX_EXT, sizeof *ext);
	if (!ext)
		return mu__y_oom(L);
	for (const mu__ynode_t *c = m->head; c; c = c->next) {
		int rc = node_res(L, c, &n->alloc, ext, &n->next);
		if (rc != MU_OK)
			return rc;
	}
	n->ext = n->next ? ext : NULL;
	return MU_OK;
}

/* The GPU model from the node's labels, only when it has GPUs. */
static void node_gpu_model(mu_node_spec_t *n)
{
	static const char *keys[] = {"nvidia.com/gpu.product",
				     "muster.io/gpu-model"};
	n->gpu_model = NULL;
	if (n->alloc.v[MU_RES_GPU] == 0)
		return;
	for (size_t k = 0; k < 2 && !n->gpu_model; k++)
		for (size_t i = 0; i < n->nlabels; i++)
			if (!strcmp(n->labels[i].key, keys[k]) &&
			    *n->labels[i].value)
				n->gpu_model = n->labels[i].value;
}

/* Appends a finished node spec, within MU__Y_MAX_NODES. */
static int node_append(mu__yload_t *L, const mu__ynode_t *at,
		       const mu_node_spec_t *n)
{
	if (L->into->nnodes >= MU__Y_MAX_NODES)
		return mu__y_err(L, at, NULL, MU_ELIMIT,
				 "more than %d nodes", MU__Y_MAX_NODES);
	mu_node_spec_t *slot = mu_specs_add_node(L->into);
	if (!slot)
		return mu__y_oom(L);
	*slot = *n;
	return MU_OK;
}

/* The allocatable mapping of status: allocatable, else capacity. */
static int status_alloc(mu__yload_t *L, const mu__ynode_t *root,
			const mu__ynode_t **out)
{
	const mu__ynode_t *status;
	int rc = mu__y_map_at(L, root, "status", false, &status);
	if (rc == MU_OK)
		rc = mu__y_map_at(L, status, "allocatable", false, out);
	if (rc == MU_OK && !*out)
		rc = mu__y_map_at(L, status, "capacity", false, out);
	return rc;
}

int mu__y_node(mu__yload_t *L, const mu__ynode_t *root)
{
	mu_node_spec_t n = {0};
	const mu__ynode_t *meta, *spec, *res;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &n.name)) ||
	    (rc = mu__y_labels_at(L, meta, "labels", &n.labels, &n.nlabels)) ||
	    (rc = mu__y_map_at(L, root, "spec", false, &spec)) ||
	    (rc = mu__y_bool_at(L, spec, "unschedulable", &n.unschedulable)) ||
	    (rc = mu__y_taints_at(L, spec, "taints", &n.taints, &n.ntaints)) ||
	    (rc = status_alloc(L, root, &res)) ||
	    (rc = node_alloc(L, res, &n)))
		return rc;
	node_gpu_model(&n);
	return node_append(L, meta, &n);
}

/* --- NodePool ------------------------------------------------------------ */

typedef struct pool_topo {
	const char *label, *prefix;
	int64_t every;
	int64_t dom;       /* the domain of cur */
	const char *cur;   /* its label value */
} pool_topo_t;

/* A pool's template node and what varies per node. */
typedef struct pool {
	mu_node_spec_t tmpl;   /* labels are the shared ones */
	const char *prefix;
	int64_t count;
	int width;             /* digits of the index */
	pool_topo_t topo[POOL_MAX_TOPO];
	size_t ntopo;
} pool_t;

/* True when key is among the first n labels. */
static bool has_label(const mu_label_t *l, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, key))
			return true;
	return false;
}

/* Adds the label nvidia.com/gpu.product for gpuModel g (the node labels
 * may give the same value already). */
static int pool_gpu_label(mu__yload_t *L, const mu__ynode_t *spec, pool_t *p,
			  const char *g)
{
	static const char key[] = "nvidia.com/gpu.product";
	mu_node_spec_t *t = &p->tmpl;
	for (size_t i = 0; i < t->nlabels; i++) {
		if (strcmp(t->labels[i].key, key))
			continue;
		if (strcmp(t->labels[i].value, g))
			return mu__y_err(L, spec, "gpuModel", MU_EINVAL,
					 "\"%s\" conflicts with the label %s: "
					 "\"%s\"", g, key, t->labels[i].value);
		return MU_OK;
	}
	mu_label_t *l = mu__y_alloc(L, t->nlabels + 1, sizeof *l);
	if (!l)
		return mu__y_oom(L);
	if (t->nlabels)
		memcpy(l, t->labels, t->nlabels * sizeof *l);
	if (!(l[t->nlabels].key = mu_arena_strdup(&L->into->arena, key)))
		return mu__y_oom(L);
	l[t->nlabels].value = g;
	t->labels = l;
	t->nlabels++;
	return MU_OK;
}

/* Reads spec.topology into p->topo. */
static int pool_topology(mu__yload_t *L, const mu__ynode_t *spec, pool_t *p)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, spec, "topology", false, &seq);
	if (rc != MU_OK || !seq)
		return rc;
	if (seq->n > POOL_MAX_TOPO)
		return mu__y_err(L, seq, NULL, MU_ELIMIT,
				 "at most %d topology entries", POOL_MAX_TOPO);
	for (const mu__ynode_t *c = seq->head; c; c = c->next) {
		pool_topo_t *t = &p->topo[p->ntopo];
		t->prefix = "";
		t->dom = -1;
		if ((rc = mu__y_want_map(L, c)) ||
		    (rc = mu__y_str_at(L, c, "label", true, &t->label)) ||
		    (rc = mu__y_str_at(L, c, "prefix", false, &t->prefix)))
			return rc;
		if (!mu__y_get(c, "every"))
			return mu__y_err(L, c, "every", MU_EPARSE,
					 "required field is missing");
		if ((rc = mu__y_int_at(L, c, "every", 1, POOL_MAX_COUNT,
				       &t->every)))
			return rc;
		if (!*t->label)
			return mu__y_err(L, c, "label", MU_EPARSE,
					 "a label key must not be empty");
		bool dup = has_label(p->tmpl.labels, p->tmpl.nlabels, t->label);
		for (size_t i = 0; i < p->ntopo; i++)
			dup |= !strcmp(p->topo[i].label, t->label);
		if (dup)
			return mu__y_err(L, c, "label", MU_EINVAL,
					 "the label %s is set twice", t->label);
		p->ntopo++;
	}
	return MU_OK;
}

/* Reads a NodePool's spec into p: everything but the per-node parts. */
static int pool_read(mu__yload_t *L, const mu__ynode_t *meta,
		     const mu__ynode_t *spec, pool_t *p)
{
	mu_node_spec_t *t = &p->tmpl;
	const char *gpu_model = NULL;
	const mu__ynode_t *res;
	int rc;
	if (!mu__y_get(spec, "count"))
		return mu__y_err(L, spec, "count", MU_EPARSE,
				 "required field is missing");
	if ((rc = mu__y_int_at(L, spec, "count", 1, POOL_MAX_COUNT, &p->count)) ||
	    (rc = mu__y_str_at(L, spec, "namePrefix", false, &p->prefix)) ||
	    (rc = mu__y_str_at(L, spec, "gpuModel", false, &gpu_model)) ||
	    (rc = mu__y_labels_at(L, spec, "labels", &t->labels, &t->nlabels)) ||
	    (rc = mu__y_taints_at(L, spec, "taints", &t->taints, &t->ntaints)) ||
	    (rc = mu__y_bool_at(L, spec, "unschedulable", &t->unschedulable)) ||
	    (rc = mu__y_map_at(L, spec, "allocatable", false, &res)) ||
	    (rc = node_alloc(L, res, t)) ||
	    (rc = mu__y_node_topo(L, mu__y_get(spec, "nodeTopology"),
				  t->alloc.v[MU_RES_GPU], &t->topo)))
		return rc;
	if (gpu_model && *gpu_model &&
	    (rc = pool_gpu_label(L, spec, p, gpu_model)))
		return rc;
	if ((rc = pool_topology(L, spec, p)))
		return rc;
	if (!p->prefix) {
		size_t n = strlen(t->name);
		char *s = mu__y_alloc(L, n + 2, 1);
		if (!s)
			return mu__y_oom(L);
		memcpy(s, t->name, n);
		s[n] = '-';
		p->prefix = s;
	}
	p->width = 1;
	for (int64_t c = p->count - 1; c >= 10; c /= 10)
		p->width++;
	char first[300];
	snprintf(first, sizeof first, "%s%0*d", p->prefix, p->width, 0);
	if (strlen(p->prefix) > 253 || !mu__valid_name(first))
		return mu__y_err(L, mu__y_get(spec, "namePrefix") ?
				 mu__y_get(spec, "namePrefix") : meta,
				 NULL, MU_EINVAL,
				 "node names such as \"%.60s\" are not valid names",
				 first);
	node_gpu_model(t);
	return MU_OK;
}

/* Makes node i of the pool: its name and, with topology, its own label
 * array (shared labels, then one per topology entry). */
static int pool_node(mu__yload_t *L, const mu__ynode_t *at, pool_t *p,
		     int64_t i)
{
	mu_node_spec_t n = p->tmpl;
	char buf[300];
	snprintf(buf, sizeof buf, "%s%0*lld", p->prefix, p->width, (long long)i);
	if (!(n.name = mu_arena_strdup(&L->into->arena, buf)))
		return mu__y_oom(L);
	if (p->ntopo) {
		mu_label_t *l = mu__y_alloc(L, n.nlabels + p->ntopo, sizeof *l);
		if (!l)
			return mu__y_oom(L);
		if (n.nlabels)
			memcpy(l, n.labels, n.nlabels * sizeof *l);
		for (size_t k = 0; k < p->ntopo; k++) {
			pool_topo_t *t = &p->topo[k];
			if (t->dom != i / t->every) {
				t->dom = i / t->every;
				snprintf(buf, sizeof buf, "%.250s%lld", t->prefix,
					 (long long)t->dom);
				if (!(t->cur = mu_arena_strdup(&L->into->arena, buf)))
					return mu__y_oom(L);
			}
			l[n.nlabels + k].key = t->label;
			l[n.nlabels + k].value = t->cur;
		}
		n.labels = l;
		n.nlabels += p->ntopo;
	}
	return node_append(L, at, &n);
}

/* Reads spec.selector (a label selector: matchLabels and matchExpressions
 * with In, NotIn, Exists, DoesNotExist) into a pool object
 * (docs/policy.md, "Node pools"); absent: none.  O(requirements). */
static int pool_selector(mu__yload_t *L, const char *name,
			 const mu__ynode_t *spec, bool *made)
{
	const mu__ynode_t *sel;
	int rc = mu__y_map_at(L, spec, "selector", false, &sel);
	*made = false;
	if (rc || !sel)
		return rc;
	for (const mu__ynode_t *c = sel->head; c; c = c->next)
		if (strcmp(c->key, "matchLabels") && strcmp(c->key, "matchExpressions"))
			return mu__y_err(L, c, NULL, MU_EINVAL, "unknown field of a "
					 "label selector; expected matchLabels or "
					 "matchExpressions");
	mu_pool_spec_t ps = {.name = name};
	const mu__ynode_t *me;
	if ((rc = mu__y_labels_at(L, sel, "matchLabels", &ps.match, &ps.nmatch)) ||
	    (rc = mu__y_seq_at(L, sel, "matchExpressions", false, &me)))
		return rc;
	if (me && me->n && !(ps.exprs = mu__y_alloc(L, me->n, sizeof *ps.exprs)))
		return mu__y_oom(L);
	for (const mu__ynode_t *c = me ? me->head : NULL; c; c = c->next)
		if ((rc = mu__y_sel_req(L, c, false, &ps.exprs[ps.nexprs++])))
			return rc;
	if (!ps.nmatch && !ps.nexprs)
		return mu__y_err(L, sel, NULL, MU_EINVAL, "a pool's selector needs "
				 "at least one requirement in matchLabels or "
				 "matchExpressions (an empty selector would hold "
				 "every node)");
	for (size_t i = 0; i < L->into->npools; i++)
		if (!strcmp(L->into->pools[i].name, name))
			return mu__y_err(L, sel, NULL, MU_EEXIST, "the pool \"%s\" "
					 "is defined twice", name);
	if (strlen(name) > 63)
		return mu__y_err(L, sel, NULL, MU_EINVAL, "a pool name is at "
				 "most 63 characters (it names a resource)");
	mu_pool_spec_t *slot = mu_specs_add_pool(L->into);
	if (!slot)
		return mu__y_oom(L);
	*slot = ps;
	*made = true;
	return MU_OK;
}

/* Expands the pool into count nodes; work and memory are linear in count
 * times the labels per node, bounded by POOL_MAX_LABELS per load.  With a
 * selector it is also (or, without count, only) a pool object. */
int mu__y_nodepool(mu__yload_t *L, const mu__ynode_t *root)
{
	pool_t p = {.count = 0};
	const mu__ynode_t *meta, *spec;
	bool made;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &p.tmpl.name)) ||
	    (rc = mu__y_map_at(L, root, "spec", true, &spec)) ||
	    (rc = pool_selector(L, p.tmpl.name, spec, &made)))
		return rc;
	if (made && !mu__y_get(spec, "count"))
		return MU_OK; /* a pool of nodes defined elsewhere */
	if (!mu__y_get(spec, "count"))
		return mu__y_err(L, spec, NULL, MU_EPARSE, "expected spec.selector "
				 "(a pool of nodes) or spec.count (nodes to make)");
	if ((rc = pool_read(L, meta, spec, &p)))
		return rc;
	if (L->into->nnodes + (size_t)p.count > MU__Y_MAX_NODES)
		return mu__y_err(L, spec, "count", MU_ELIMIT,
				 "%lld more nodes would make more than %d",
				 (long long)p.count, MU__Y_MAX_NODES);
	if (p.ntopo) {
		int64_t labels = p.count * (int64_t)(p.tmpl.nlabels + p.ntopo);
		if (labels > POOL_MAX_LABELS - L->pool_labels)
			return mu__y_err(L, spec, "count", MU_ELIMIT,
					 "NodePools would make more than %d "
					 "node labels", POOL_MAX_LABELS);
		L->pool_labels += labels;
	}
	for (int64_t i = 0; i < p.count; i++)
		if ((rc = pool_node(L, meta, &p, i)))
			return rc;
	return MU_OK;
}

/* --- Queue --------------------------------------------------------------- */

/* The quota slot and scale of a queue resource name; -1 if unknown. */
static int queue_slot(const char *k, int64_t *scale)
{
	*scale = 1000;
	if (!strcmp(k, "gpu") || !strcmp(k, "nvidia.com/gpu"))
		return MU_RES_GPU;
	if (!strcmp(k, "cpu"))
		return MU_RES_CPU;
	*scale = 1;
	if (!strcmp(k, "memory"))
		return MU_RES_MEM;
	if (!strcmp(k, "pods"))
		return MU_RES_PODS;
	return -1;
}

/* Reads one entry of spec.resources into q; seen marks slots given. */
static int queue_res(mu__yload_t *L, const mu__ynode_t *c, mu_queue_spec_t *q,
		     bool *seen)
{
	int64_t scale;
	int r = queue_slot(c->key, &scale), rc;
	if (r < 0)
		return mu__y_err(L, c, NULL, MU_EINVAL,
				 "extended resources in queues are not supported "
				 "yet; expected gpu, nvidia.com/gpu, cpu, memory "
				 "or pods");
	if (seen[r])
		return mu__y_err(L, c, NULL, MU_EINVAL,
				 "the GPU quota is given twice (gpu and "
				 "nvidia.com/gpu)");
	seen[r] = true;
	if (mu__y_null(c))
		return MU_OK;
	if ((rc = mu__y_want_map(L, c)))
		return rc;
	const mu__ynode_t *d = mu__y_get(c, "deserved");
	const mu__ynode_t *l = mu__y_get(c, "limit");
	const mu__ynode_t *w = mu__y_get(c, "overQuotaWeight");
	if ((d && (rc = mu__y_qty(L, d, scale, &q->deserved.v[r]))) ||
	    (l && (rc = mu__y_qty(L, l, scale, &q->limit.v[r]))))
		return rc;
	if (w && (rc = mu__y_want_scalar(L, w)))
		return rc;
	if (w && (rc = mu__parse_num(w->s, 0, 1e9, &q->weight[r])))
		return mu__y_err(L, w, NULL, rc, "expected a number from 0 to "
				 "1e9, got \"%.60s\"", w->s);
	if (q->limit.v[r] < q->deserved.v[r])
		return mu__y_err(L, l, NULL, MU_ERANGE,
				 "limit %s is below deserved %s", l->s, d->s);
	return MU_OK;
}

/* Reads spec.pools: per pool, its quotas in the shape of spec.resources
 * (pool -> gpu|cpu|memory|pods -> deserved, limit, overQuotaWeight). */
static int queue_pools(mu__yload_t *L, const mu__ynode_t *spec,
		       mu_queue_spec_t *q)
{
	const mu__ynode_t *m;
	int rc = mu__y_map_at(L, spec, "pools", false, &m);
	if (rc || !m)
		return rc;
	if (m->n > MU_RES_MAX - MU_RES_NAMED0)
		return mu__y_err(L, m, NULL, MU_ELIMIT, "at most %d pools",
				 MU_RES_MAX - MU_RES_NAMED0);
	mu_pool_quota_t *pq = mu__y_alloc(L, m->n * MU_POOL_NRES, sizeof *pq);
	if (!pq)
		return mu__y_oom(L);
	size_t n = 0;
	for (const mu__ynode_t *c = m->head; c; c = c->next) {
		if (!mu__valid_name(c->key))
			return mu__y_err(L, c, NULL, MU_EINVAL, "\"%.60s\" is not "
					 "a valid pool name", c->key);
		const char *pool = mu_arena_strdup(&L->into->arena, c->key);
		if (!pool)
			return mu__y_oom(L);
		if ((rc = mu__y_want_map(L, c)))
			return rc;
		bool seen[MU_POOL_NRES] = {false};
		size_t first = n;
		for (const mu__ynode_t *r = c->head; r; r = r->next) {
			int64_t scale;
			int slot = queue_slot(r->key, &scale);
			int k = slot == MU_RES_GPU ? MU_POOL_GPU : slot == MU_RES_CPU ?
				MU_POOL_CPU : slot == MU_RES_MEM ? MU_POOL_MEM :
				slot == MU_RES_PODS ? MU_POOL_PODS : -1;
			if (k < 0)
				return mu__y_err(L, r, NULL, MU_EINVAL, "per-pool "
						 "quotas take gpu (or nvidia.com/gpu), "
						 "cpu, memory or pods; not %.40s",
						 r->key);
			if (seen[k])
				return mu__y_err(L, r, NULL, MU_EINVAL, "the pool's "
						 "GPU quota is given twice (gpu and "
						 "nvidia.com/gpu)");
			seen[k] = true;
			if (mu__y_null(r))
				continue;
			mu_pool_quota_t *x = &pq[n];
			x->pool = pool;
			x->res = (mu_pool_res_t)k;
			x->limit = MU_RES_UNLIMITED;
			x->weight = -1;
			if ((rc = mu__y_want_map(L, r)))
				return rc;
			const mu__ynode_t *d = mu__y_get(r, "deserved");
			const mu__ynode_t *l = mu__y_get(r, "limit");
			const mu__ynode_t *w = mu__y_get(r, "overQuotaWeight");
			if ((d && (rc = mu__y_qty(L, d, scale, &x->deserved))) ||
			    (l && (rc = mu__y_qty(L, l, scale, &x->limit))) ||
			    (w && (rc = mu__y_num(L, w, 0, 1e9, &x->weight))))
				return rc;
			if (x->limit < x->deserved)
				return mu__y_err(L, l, NULL, MU_ERANGE,
						 "limit %s is below deserved %s",
						 l->s, d->s);
			n++;
		}
		if (n == first)
			/* named with no figures: deserved 0 in it, no limit */
			pq[n++] = (mu_pool_quota_t){.pool = pool, .limit = MU_RES_UNLIMITED,
						    .weight = -1};
	}
	q->pools = pq;
	q->npools = n;
	return MU_OK;
}

/* Reads spec.flavorFungibility, as Kueue's ClusterQueue has it:
 * whenCanBorrow MayStopSearch (default) or TryNextFlavor, whenCanPreempt
 * MayStopSearch (default; Preempt is its older name) or TryNextFlavor. */
static int queue_fungibility(mu__yload_t *L, const mu__ynode_t *spec,
			     mu_queue_spec_t *q)
{
	const mu__ynode_t *m;
	int rc = mu__y_map_at(L, spec, "flavorFungibility", false, &m);
	if (rc || !m)
		return rc;
	for (const mu__ynode_t *c = m->head; c; c = c->next) {
		bool borrow = !strcmp(c->key, "whenCanBorrow");
		if (!borrow && strcmp(c->key, "whenCanPreempt"))
			return mu__y_err(L, c, NULL, MU_EINVAL, "unknown field; "
					 "expected whenCanBorrow or whenCanPreempt");
		if ((rc = mu__y_want_scalar(L, c)))
			return rc;
		bool next = !strcmp(c->s, "TryNextFlavor");
		if (!next && strcmp(c->s, "MayStopSearch") &&
		    (borrow ? strcmp(c->s, "Borrow") : strcmp(c->s, "Preempt")))
			return mu__y_err(L, c, NULL, MU_EINVAL, "expected "
					 "MayStopSearch or TryNextFlavor, got "
					 "\"%.60s\"", c->s);
		*(borrow ? &q->borrow_try_next : &q->preempt_try_next) = next;
	}
	return MU_OK;
}

int mu__y_queue(mu__yload_t *L, const mu__ynode_t *root)
{
	mu_queue_spec_t q;
	const mu__ynode_t *meta, *spec, *res;
	bool seen[MU_RES_MAX] = {false};
	int64_t prio = 0;
	int rc;
	mu_queue_spec_defaults(&q);
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &q.name)) ||
	    (rc = mu__y_map_at(L, root, "spec", false, &spec)) ||
	    (rc = mu__y_name_at(L, spec, "parent", false, &q.parent)) ||
	    (rc = mu__y_int_at(L, spec, "priority", INT32_MIN, INT32_MAX, &prio)) ||
	    (rc = mu__y_map_at(L, spec, "resources", false, &res)))
		return rc;
	q.priority = (int32_t)prio;
	const mu__ynode_t *ord = spec ? mu__y_get(spec, "order") : NULL;
	if (ord && (rc = mu__y_want_scalar(L, ord)))
		return rc;
	if (ord && !strcmp(ord->s, "fifo"))
		q.order = MU_QORDER_FIFO;
	else if (ord && strcmp(ord->s, "default"))
		return mu__y_err(L, ord, NULL, MU_EINVAL, "expected \"default\" (the "
				 "scheduler's job order) or \"fifo\" (arrival order), got "
				 "\"%.60s\"", ord->s);
	for (const mu__ynode_t *c = res ? res->head : NULL; c; c = c->next)
		if ((rc = queue_res(L, c, &q, seen)))
			return rc;
	if ((rc = queue_pools(L, spec, &q)) ||
	    (rc = mu__y_dur_at(L, spec, "maxWait", &q.max_wait)) ||
	    (rc = mu__y_escalation_at(L, spec, "escalation", &q.escalation)) ||
	    (rc = queue_fungibility(L, spec, &q)))
		return rc;
	if (q.parent && !strcmp(q.parent, q.name))
		return mu__y_err(L, spec, "parent", MU_EINVAL,
				 "a queue cannot be its own parent");
	mu_queue_spec_t *slot = mu_specs_add_queue(L->into);
	if (!slot)
		return mu__y_oom(L);
	*slot = q;
	return MU_OK;
}

/* --- Scenario ------------------------------------------------------------ */

/* Reads `pending`: a reason name (mu_why_name() but "None"), or false
 * for "must not be pending". */
static int expect_pending(mu__yload_t *L, const mu__ynode_t *v,
			  mu_expect_job_t *e)
{
	char names[256];
	size_t o = 0;
	bool b;
	int rc = mu__y_want_scalar(L, v);
	if (rc)
		return rc;
	if (v->plain && !isdigit((unsigned char)v->s[0]) &&
	    mu__parse_bool(v->s, &b) == MU_OK && !b) {
		e->pending = "";
		return MU_OK;
	}
	names[0] = '\0';
	for (int w = MU_WHY_NONE + 1; w < MU_WHY_COUNT; w++) {
		const char *n = mu_why_name((mu_why_t)w);
		if (!strcmp(v->s, n))
			return mu__y_str(L, v, &e->pending);
		int k = snprintf(names + o, sizeof names - o, "%s, ", n);
		if (k > 0 && (size_t)k < sizeof names - o)
			o += (size_t)k;
	}
	return mu__y_err(L, v, NULL, MU_EINVAL,
			 "expected a reason (%sor false for \"must not be "
			 "pending\"), got \"%.60s\"", names, v->s);
}

/* Reads `devices`: device strings, each kept in canonical form with its
 * node part.  Linear in the strings' length. */
static int expect_devices(mu__yload_t *L, const mu__ynode_t *f,
			  mu_expect_job_t *e)
{
	char buf[MU__DEVSTR_MAX];
	int rc;
	e->check_devices = true;
	if (mu__y_null(f))
		return MU_OK;
	if ((rc = mu__y_want_seq(L, f)))
		return rc;
	e->devices = mu__y_alloc(L, f->n, sizeof *e->devices);
	e->devnodes = mu__y_alloc(L, f->n, sizeof *e->devnodes);
	if (!e->devices || !e->devnodes)
		return mu__y_oom(L);
	for (const mu__ynode_t *c = f->head; c; c = c->next) {
		const char *why;
		size_t nl;
		if ((rc = mu__y_want_scalar(L, c)))
			return rc;
		if ((rc = mu__devstr_norm(c->s, buf, sizeof buf, &nl, &why))) {
			char q[80];
			return mu__y_err(L, c, NULL, rc, "%s; expected a string "
					 "such as \"n0:gpus=0,1;numa=0;nic=0;"
					 "cpus=0-3\", got %s", why,
					 mu__quote(c->s, q, sizeof q));
		}
		size_t i = e->ndevices++;
		e->devices[i] = mu_arena_strdup(&L->into->arena, buf);
		e->devnodes[i] = mu_arena_strndup(&L->into->arena, buf, nl);
		if (!e->devices[i] || !e->devnodes[i])
			return mu__y_oom(L);
	}
	return MU_OK;
}

/* Reads `draDevices`: strings "NODE:DRIVER/POOL/DEVICE". */
static int expect_dra(mu__yload_t *L, const mu__ynode_t *c, mu_expect_job_t *e)
{
	int rc = mu__y_strs_at(L, c, "draDevices", false, &e->dra_devices,
			       &e->ndra_devices);
	for (size_t i = 0; rc == MU_OK && i < e->ndra_devices; i++) {
		const char *s = e->dra_devices[i], *colon = strchr(s, ':');
		const char *sl = colon ? strchr(colon + 1, '/') : NULL;
		if (!colon || colon == s || !sl || sl == colon + 1 ||
		    !strchr(sl + 1, '/') || strchr(sl + 1, '/')[1] == '\0') {
			char q[80];
			const mu__ynode_t *f = mu__y_get(c, "draDevices");
			const mu__ynode_t *at = f->head;
			for (size_t k = 0; k < i && at; k++)
				at = at->next;
			return mu__y_err(L, at ? at : f, NULL, MU_EINVAL,
					 "expected \"NODE:DRIVER/POOL/DEVICE\", got %s",
					 mu__quote(s, q, sizeof q));
		}
	}
	return rc;
}

/* Reads one `expect` entry: the job's name is the key. */
static int expect_read(mu__yload_t *L, const mu__ynode_t *c, mu_expect_job_t *e)
{
	int64_t v;
	int rc;
	e->bound = e->evicted = -1;
	e->escalated = -1;
	if (!mu__valid_name(c->key))
		return mu__y_err(L, c, NULL, MU_EINVAL,
				 "the key must be a job name");
	if (!(e->job = mu_arena_strdup(&L->into->arena, c->key)))
		return mu__y_oom(L);
	if (mu__y_null(c))
		return MU_OK;
	if ((rc = mu__y_want_map(L, c)))
		return rc;
	for (const mu__ynode_t *f = c->head; f; f = f->next) {
		const char *k = f->key;
		if (!strcmp(k, "bound") || !strcmp(k, "evicted")) {
			if ((rc = mu__y_int(L, f, 0, EXPECT_MAX, &v)))
				return rc;
			*(k[0] == 'b' ? &e->bound : &e->evicted) = (int32_t)v;
		} else if (!strcmp(k, "nodes")) {
			e->check_nodes = true;
			if (!mu__y_null(f) &&
			    (rc = mu__y_strs_at(L, c, "nodes", true, &e->nodes,
						&e->nnodes)))
				return rc;
		} else if (!strcmp(k, "pending")) {
			if (!mu__y_null(f) && (rc = expect_pending(L, f, e)))
				return rc;
		} else if (!strcmp(k, "message")) {
			if (!mu__y_null(f) && (rc = mu__y_str(L, f, &e->message)))
				return rc;
		} else if (!strcmp(k, "devices")) {
			if ((rc = expect_devices(L, f, e)))
				return rc;
		} else if (!strcmp(k, "draDevices")) {
			e->check_dra = true;
			if (!mu__y_null(f) &&
			    (rc = expect_dra(L, c, e)))
				return rc;
		} else if (!strcmp(k, "pool")) {
			if (!mu__y_null(f) && (rc = mu__y_name(L, f, &e->pool)))
				return rc;
		} else if (!strcmp(k, "escalated")) {
			bool b;
			if ((rc = mu__y_bool(L, f, &b)))
				return rc;
			e->escalated = b ? 1 : 0;
		} else {
			return mu__y_err(L, f, NULL, MU_EINVAL,
					 "unknown expectation; expected bound, "
					 "nodes, devices, draDevices, pending, "
					 "message, evicted, pool or escalated");
		}
	}
	return MU_OK;
}

/* Reads a step's disruptionsAllowed: a mapping of job names to pods a
 * disruption budget lets go (-1 to 1000000; -1 = no budget). */
static int step_budgets(mu__yload_t *L, const mu__ynode_t *c, mu_scenario_step_t *s)
{
	const mu__ynode_t *m;
	int rc = mu__y_map_at(L, c, "disruptionsAllowed", false, &m);
	if (rc || !m || !m->n)
		return rc;
	if (!(s->budget_jobs = mu__y_alloc(L, m->n, sizeof *s->budget_jobs)) ||
	    !(s->budget_allowed = mu__y_alloc(L, m->n, sizeof *s->budget_allowed)))
		return mu__y_oom(L);
	for (const mu__ynode_t *f = m->head; f; f = f->next) {
		int64_t v;
		if (!mu__valid_name(f->key))
			return mu__y_err(L, f, NULL, MU_EINVAL, "the key must be a job name");
		if ((rc = mu__y_int(L, f, -1, EXPECT_MAX, &v)))
			return rc;
		if (!(s->budget_jobs[s->nbudgets] = mu_arena_strdup(&L->into->arena, f->key)))
			return mu__y_oom(L);
		s->budget_allowed[s->nbudgets++] = (int32_t)v;
	}
	return MU_OK;
}

/* Reads `migLayouts` of mapping c: node names to lists of one layout per
 * GPU, each checked by mu_mig_parse() against the known MIG models (the
 * runner checks it again against the node's own).  O(text). */
static int mig_layouts(mu__yload_t *L, const mu__ynode_t *c,
		       mu_mig_layout_spec_t **out, size_t *nout)
{
	const mu__ynode_t *m;
	int rc = mu__y_map_at(L, c, "migLayouts", false, &m);
	if (rc || !m || !m->n)
		return rc;
	if (!(*out = mu__y_alloc(L, m->n, sizeof **out)))
		return mu__y_oom(L);
	for (const mu__ynode_t *f = m->head; f; f = f->next) {
		mu_mig_layout_spec_t *x = &(*out)[(*nout)++];
		if (!mu__valid_name(f->key))
			return mu__y_err(L, f, NULL, MU_EINVAL, "the key must be a node name");
		if (!(x->node = mu_arena_strdup(&L->into->arena, f->key)))
			return mu__y_oom(L);
		if ((rc = mu__y_strs_at(L, m, f->key, false, &x->gpus, &x->ngpus)))
			return rc;
		if (!x->ngpus || x->ngpus > MU_MAX_GPUS)
			return mu__y_err(L, f, NULL, MU_EINVAL, "expected a list of 1 to %d "
					 "layouts, one per GPU", MU_MAX_GPUS);
		const mu__ynode_t *g = f->head;
		for (size_t i = 0; i < x->ngpus; i++, g = g ? g->next : NULL) {
			mu_mig_gpu_t gpu;
			char why[160];
			if (mu_mig_parse(NULL, x->gpus[i], &gpu, why, sizeof why))
				return mu__y_err(L, g ? g : f, NULL, MU_EINVAL, "%s", why);
		}
	}
	return MU_OK;
}

/* Reads a step's expectHorizon: {choices: N, changes: N, settings: TEXT}. */
static int step_horizon(mu__yload_t *L, const mu__ynode_t *c, mu_scenario_step_t *s)
{
	const mu__ynode_t *m;
	int64_t v;
	s->expect_choices = s->expect_changes = -1;
	int rc = mu__y_map_at(L, c, "expectHorizon", false, &m);
	if (rc || !m)
		return rc;
	for (const mu__ynode_t *f = m->head; f; f = f->next) {
		if (!strcmp(f->key, "choices") || !strcmp(f->key, "changes")) {
			if ((rc = mu__y_int(L, f, 0, EXPECT_MAX, &v)))
				return rc;
			*(!strcmp(f->key, "choices") ? &s->expect_choices :
			  &s->expect_changes) = (int32_t)v;
		} else if (!strcmp(f->key, "settings")) {
			if ((rc = mu__y_str(L, f, &s->expect_settings)))
				return rc;
		} else {
			return mu__y_err(L, f, NULL, MU_EINVAL, "unknown expectation; "
					 "expected choices, changes or settings");
		}
	}
	return MU_OK;
}

/* Reads spec.horizon: {from: SHARE, every: SHARE, minInterval: DUR,
 * rollouts: N}, muster-horizon's options. */
static int scenario_horizon(mu__yload_t *L, const mu__ynode_t *spec,
			    mu_scenario_spec_t *sc)
{
	const mu__ynode_t *m;
	int64_t v;
	int rc = mu__y_map_at(L, spec, "horizon", false, &m);
	if (rc || !m)
		return rc;
	sc->has_horizon = true;
	for (const mu__ynode_t *f = m->head; f; f = f->next) {
		if (!strcmp(f->key, "from") || !strcmp(f->key, "every")) {
			if ((rc = mu__y_num(L, f, 0, 1, f->key[0] == 'f' ? &sc->horizon_from :
					    &sc->horizon_every)))
				return rc;
		} else if (!strcmp(f->key, "minInterval")) {
			if ((rc = mu__y_dur(L, f, &sc->horizon_min_interval)))
				return rc;
		} else if (!strcmp(f->key, "rollouts")) {
			if ((rc = mu__y_int(L, f, 1, 1000, &v)))
				return rc;
			sc->horizon_rollouts = (int32_t)v;
		} else {
			return mu__y_err(L, f, NULL, MU_EINVAL, "unknown horizon option; "
					 "expected from, every, minInterval or rollouts");
		}
	}
	return MU_OK;
}

/* Reads one step; prev_at is the previous step's time (0 for the first),
 * which is also the default. */
static int step_read(mu__yload_t *L, const mu__ynode_t *c, mu_time_t prev_at,
		     mu_scenario_step_t *s)
{
	const mu__ynode_t *ex;
	int64_t cycles = 1;
	int rc;
	s->at = prev_at;
	if ((rc = mu__y_want_map(L, c)) ||
	    (rc = mu__y_dur_at(L, c, "at", &s->at)) ||
	    (rc = mu__y_int_at(L, c, "cycles", 1, STEP_MAX_CYCLES, &cycles)) ||
	    (rc = mu__y_strs_at(L, c, "finish", true, &s->finish, &s->nfinish)) ||
	    (rc = mu__y_strs_at(L, c, "removeNodes", true, &s->remove_nodes,
				&s->nremove_nodes)) ||
	    (rc = step_budgets(L, c, s)) ||
	    (rc = mig_layouts(L, c, &s->expect_mig, &s->nexpect_mig)) ||
	    (rc = step_horizon(L, c, s)) ||
	    (rc = mu__y_map_at(L, c, "expect", false, &ex)))
		return rc;
	s->cycles = (int32_t)cycles;
	if (s->at < prev_at)
		return mu__y_err(L, mu__y_get(c, "at"), NULL, MU_ERANGE,
				 "steps must be in time order: this step is "
				 "before the previous one");
	if (!ex)
		return MU_OK;
	if (!(s->expect = mu__y_alloc(L, ex->n, sizeof *s->expect)))
		return mu__y_oom(L);
	for (const mu__ynode_t *e = ex->head; e; e = e->next)
		if ((rc = expect_read(L, e, &s->expect[s->nexpect++])))
			return rc;
	return MU_OK;
}

int mu__y_scenario(mu__yload_t *L, const mu__ynode_t *root)
{
	mu_scenario_spec_t sc = {0};
	const mu__ynode_t *meta, *spec, *steps;
	int rc;
	if ((rc = mu__y_map_at(L, root, "metadata", true, &meta)) ||
	    (rc = mu__y_name_at(L, meta, "name", true, &sc.name)))
		return rc;
	if (L->into->scenario)
		return mu__y_err(L, meta, "name", MU_EEXIST,
				 "only one Scenario per load; \"%s\" came first",
				 L->into->scenario->name);
	if ((rc = mu__y_map_at(L, root, "spec", true, &spec)) ||
	    (rc = mu__y_str_at(L, spec, "description", false, &sc.description)) ||
	    (rc = mu__y_str_at(L, spec, "policy", false, &sc.policy)) ||
	    (rc = mu__y_dur_at(L, spec, "usageHalfLife", &sc.usage_half_life)) ||
	    (rc = mig_layouts(L, spec, &sc.mig, &sc.nmig)) ||
	    (rc = scenario_horizon(L, spec, &sc)) ||
	    (rc = mu__y_seq_at(L, spec, "steps", true, &steps)))
		return rc;
	if (steps->n == 0)
		return mu__y_err(L, steps, NULL, MU_EPARSE,
				 "a scenario needs at least one step");
	if (!(sc.steps = mu__y_alloc(L, steps->n, sizeof *sc.steps)))
		return mu__y_oom(L);
	mu_time_t at = 0;
	for (const mu__ynode_t *c = steps->head; c; c = c->next) {
		mu_scenario_step_t *s = &sc.steps[sc.nsteps++];
		if ((rc = step_read(L, c, at, s)))
			return rc;
		at = s->at;
	}
	mu_scenario_spec_t *slot = mu__y_alloc(L, 1, sizeof *slot);
	if (!slot)
		return mu__y_oom(L);
	*slot = sc;
	L->into->scenario = slot;
	return MU_OK;
}
