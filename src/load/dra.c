/*
 * dra.c - the device allocator for DRA ResourceClaims (include/muster/dra.h):
 * which devices of which ResourceSlices a set of claims gets on one node,
 * read as Kubernetes' structured allocator reads them.
 *
 * It works in three steps.  pools_read() gathers the node's devices: the
 * slices on the node (spec.nodeName) or on every node (spec.allNodes), only
 * each pool's newest generation, noting pools that are incomplete (fewer
 * slices than resourceSliceCount) or invalid (a device name twice).
 * slots_make() turns every request of every claim to allocate into slots
 * (one per device it needs) with the candidate devices that pass the
 * class's and the request's CEL selectors.  search() then fills the slots
 * depth first, undoing a choice when a later slot finds nothing, as the real
 * allocator backtracks; constraints (matchAttribute), device taints (a
 * request's tolerations) and admin access (a device in use may be given,
 * and is not taken by it) are checked as devices are chosen.  The
 * allocation carries the class's and the claim's device config.  A request
 * with firstAvailable becomes its chosen subrequest; attempts() runs the
 * whole search once per choice, earlier requests' first subrequests kept
 * longest.  mu_dra_eviction_ms() reads the same devices and taints to say
 * when a NoExecute taint evicts the pods of an allocated claim.
 * Everything here is pure: JSON in, JSON out, no I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/cel.h"
#include "muster/dra.h"
#include "muster/error.h"
#include "muster/jpath.h"
#include "muster/resource.h"
#include "muster/util.h"

#define MAX_ATTRS 64
#define MAX_SLOTS 256
#define MAX_CONS 32
#define MAX_FA 16 /* requests with firstAvailable, over all claims */

typedef struct dev {
	const char *driver, *pool, *name;
	const json_t *obj;  /* the slice's device entry */
	bool local;         /* from a slice of this node (spec.nodeName) */
	const json_t *sel;  /* its slice's nodeSelector, or NULL */
	json_t *rtaints;    /* taints DeviceTaintRules add (owned), or NULL */
	bool taken;         /* another claim's allocation holds it */
	bool used;          /* chosen in this search */
} adev_t;

typedef struct pool {
	const char *driver, *name;
	json_int_t gen;
	long slices, want; /* slices at gen, resourceSliceCount */
	const char *dup;   /* a device name twice, or NULL */
} pool_t;

typedef struct slot {
	int claim;          /* index into the claims */
	const json_t *req;  /* the request */
	int *cand;          /* candidate devices, in order */
	int ncand;
	int first;          /* the first slot of its request (for order) */
	int cons[MAX_CONS]; /* constraints that cover it */
	int ncons;
	int chosen;         /* device index, or -1 */
} slot_t;

typedef struct cons {
	const char *attr;   /* "DOMAIN/NAME" */
	bool distinct;      /* distinctAttribute, else matchAttribute */
	const json_t *val;  /* the value fixed by the first device, or NULL */
	int n;              /* devices chosen under it */
} cons_t;

typedef struct alloc {
	const mu_dra_view_t *v;
	const json_t *const *claims;
	size_t nclaims;
	const char *node;
	const json_t *labels; /* the node's, from v->nodes, or NULL */
	bool every;           /* read every slice (mu_dra_eviction_ms) */
	pool_t *pools;
	int npools;
	adev_t *devs;
	int ndevs;
	slot_t slots[MAX_SLOTS];
	int nslots;
	cons_t cons[MAX_CONS];
	int ncons;
	long steps;
	json_t *synth;      /* the chosen subrequests, as requests */
	int pick[MAX_FA];   /* per firstAvailable request: its subrequest */
	int nalt[MAX_FA];   /* and how many it has */
	int nfa;            /* firstAvailable requests met building slots */
	int deep;           /* the furthest slot that found no device */
	char *msg;
	size_t len;
} alloc_t;

const char *mu_dra_claim_node(const json_t *c)
{
	const json_t *v = mu__jget(c, "status.allocation.nodeSelector.nodeSelectorTerms");
	v = json_array_get(mu__jget(json_array_get(v, 0), "matchFields"), 0);
	return json_string_value(json_array_get(json_object_get(v, "values"), 0));
}

/* --- pools -------------------------------------------------------------- */

static pool_t *pool_of(alloc_t *a, const char *drv, const char *name)
{
	for (int i = 0; i < a->npools; i++)
		if (!strcmp(a->pools[i].driver, drv) && !strcmp(a->pools[i].name, name))
			return &a->pools[i];
	return NULL;
}

/* Whether requirement x (key, operator, values) holds for value have
 * (NULL: absent), as core/v1 node selector requirements: Gt and Lt
 * compare one integer value. */
static bool req_holds(const json_t *x, const char *have)
{
	const char *op = mu__jstr(x, "operator");
	const json_t *vals = json_object_get(x, "values");
	bool in = false;
	size_t i;
	json_t *v;
	json_array_foreach(vals, i, v)
		in |= have && json_is_string(v) && !strcmp(json_string_value(v), have);
	if (!op)
		return false;
	if (!strcmp(op, "In"))
		return in;
	if (!strcmp(op, "NotIn"))
		return !in;
	if (!strcmp(op, "Exists"))
		return have != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return have == NULL;
	if ((strcmp(op, "Gt") && strcmp(op, "Lt")) || !have || json_array_size(vals) != 1)
		return false;
	char *e1, *e2;
	const char *w = json_string_value(json_array_get(vals, 0));
	long long h = strtoll(have, &e1, 10), t = w ? strtoll(w, &e2, 10) : 0;
	if (!w || *e1 || *e2 || !*have || !*w)
		return false;
	return !strcmp(op, "Gt") ? h > t : h < t;
}

bool mu_dra_node_selects(const json_t *sel, const char *name, const json_t *labels)
{
	if (!sel || json_is_null(sel))
		return true;
	size_t i, k;
	json_t *term, *x;
	json_array_foreach(json_object_get(sel, "nodeSelectorTerms"), i, term) {
		const json_t *me = json_object_get(term, "matchExpressions"), *mf = json_object_get(term, "matchFields");
		bool ok = json_array_size(me) + json_array_size(mf) > 0;
		json_array_foreach(me, k, x) {
			const char *key = mu__jstr(x, "key");
			ok = ok && key && req_holds(x, json_string_value(json_object_get(labels, key)));
		}
		json_array_foreach(mf, k, x) {
			const char *key = mu__jstr(x, "key");
			ok = ok && key && !strcmp(key, "metadata.name") && req_holds(x, name);
		}
		if (ok)
			return true;
	}
	return false;
}

/* Whether slice s is read for this node: its own, allNodes, or one whose
 * nodeSelector selects it (network-attached devices). */
static bool on_node(alloc_t *a, const json_t *s)
{
	const char *sn = mu__jstr(s, "spec.nodeName");
	const json_t *sel = mu__jget(s, "spec.nodeSelector");
	if (a->every)
		return true;
	if (!a->node) /* mu_dra_class_devices: the slices that serve several nodes */
		return !sn;
	if (json_is_true(mu__jget(s, "spec.allNodes")))
		return true;
	if (sn)
		return !strcmp(sn, a->node);
	return sel && mu_dra_node_selects(sel, a->node, a->labels); /* terms ORed */
}

/* Whether a device (driver, pool, name) is in an allocation's results,
 * those with admin access left out. */
static bool in_results(const json_t *results, const char *drv, const char *pool, const char *dev)
{
	size_t i;
	json_t *r;
	json_array_foreach(results, i, r) {
		const char *x = mu__jstr(r, "driver"), *y = mu__jstr(r, "pool"), *z = mu__jstr(r, "device");
		if (json_is_true(json_object_get(r, "adminAccess")))
			continue; /* admin access does not take the device */
		if (x && y && z && !strcmp(x, drv) && !strcmp(y, pool) && !strcmp(z, dev))
			return true;
	}
	return false;
}

/* Whether a claim other than those being allocated holds the device. */
static bool taken_by_other(const alloc_t *a, const char *drv, const char *pool, const char *dev)
{
	size_t i;
	json_t *c;
	json_array_foreach(a->v->claims, i, c) {
		bool ours = false;
		const char *cn = mu__jstr(c, "metadata.name"), *cs = mu__jstr(c, "metadata.namespace");
		for (size_t k = 0; k < a->nclaims && !ours && cn; k++) {
			const char *kn = mu__jstr(a->claims[k], "metadata.name");
			const char *ks = mu__jstr(a->claims[k], "metadata.namespace");
			ours = kn && !strcmp(kn, cn) && ((!ks && !cs) || (ks && cs && !strcmp(ks, cs))) &&
			       !mu__jget(a->claims[k], "status.allocation");
		}
		if (!ours && in_results(mu__jget(c, "status.allocation.devices.results"), drv, pool, dev))
			return true;
	}
	return false;
}

/* Gathers the node's pools (newest generation only) and their devices.
 * O(slices x devices) plus the taken test per device. */
static int pools_read(alloc_t *a)
{
	size_t ns = json_array_size(a->v->slices), nd = 0, i;
	json_t *s;
	a->pools = calloc(ns + 1, sizeof *a->pools);
	if (!a->pools)
		return MU_ENOMEM;
	json_array_foreach(a->v->slices, i, s) {
		const char *drv = mu__jstr(s, "spec.driver"), *pn = mu__jstr(s, "spec.pool.name");
		if (!drv || !pn || !on_node(a, s))
			continue;
		json_int_t gen = json_integer_value(mu__jget(s, "spec.pool.generation"));
		pool_t *p = pool_of(a, drv, pn);
		if (!p) {
			p = &a->pools[a->npools++];
			*p = (pool_t){.driver = drv, .name = pn, .gen = gen};
		}
		if (gen > p->gen)
			*p = (pool_t){.driver = drv, .name = pn, .gen = gen};
		if (gen == p->gen) {
			p->slices++;
			p->want = (long)json_integer_value(mu__jget(s, "spec.pool.resourceSliceCount"));
			nd += json_array_size(mu__jget(s, "spec.devices"));
		}
	}
	a->devs = calloc(nd + 1, sizeof *a->devs);
	if (!a->devs)
		return MU_ENOMEM;
	json_array_foreach(a->v->slices, i, s) {
		const char *drv = mu__jstr(s, "spec.driver"), *pn = mu__jstr(s, "spec.pool.name");
		pool_t *p = drv && pn && on_node(a, s) ? pool_of(a, drv, pn) : NULL;
		if (!p || json_integer_value(mu__jget(s, "spec.pool.generation")) != p->gen)
			continue;
		size_t k;
		json_t *d;
		json_array_foreach(mu__jget(s, "spec.devices"), k, d) {
			const char *dn = mu__jstr(d, "name");
			if (!dn)
				continue;
			for (int j = 0; j < a->ndevs && !p->dup; j++)
				if (!strcmp(a->devs[j].pool, pn) && !strcmp(a->devs[j].driver, drv) &&
				    !strcmp(a->devs[j].name, dn))
					p->dup = dn;
			a->devs[a->ndevs++] = (adev_t){drv, pn, dn, d, mu__jstr(s, "spec.nodeName") != NULL,
						       mu__jget(s, "spec.nodeSelector"), NULL,
						       taken_by_other(a, drv, pn, dn), false};
		}
	}
	return MU_OK;
}

/* --- candidates ----------------------------------------------------------- */

/* The CEL view of a device; attribute names qualified by the driver's
 * domain when they are not.  Names point into arena (len bytes). */
static void cel_device(const char *drv, const json_t *d, mu_cel_attr_t *at, mu_cel_attr_t *cp,
		       mu_cel_device_t *out, char *arena, size_t len)
{
	size_t used = 0;
	const char *k;
	json_t *x;
	*out = (mu_cel_device_t){.driver = drv, .attrs = at, .caps = cp};
	for (int pass = 0; pass < 2; pass++) {
		json_object_foreach(mu__jget(d, pass ? "basic.capacity" : "basic.attributes"), k, x) {
			size_t *n = pass ? &out->ncaps : &out->nattrs;
			mu_cel_attr_t *at1 = pass ? &cp[*n] : &at[*n];
			bool q = strchr(k, '/') != NULL;
			int w = snprintf(arena + used, len - used, "%s%s%s", q ? "" : drv, q ? "" : "/", k);
			if (*n >= MAX_ATTRS || w < 0 || (size_t)w >= len - used)
				continue;
			*at1 = (mu_cel_attr_t){.name = arena + used};
			used += (size_t)w + 1;
			const json_t *v;
			if (pass) {
				const char *qs = mu__jstr(x, "value");
				if (!qs || mu_quantity_parse(qs, 1000, &at1->i) != MU_OK)
					continue;
				at1->type = MU_CEL_QUANTITY;
			} else if (json_is_integer(v = json_object_get(x, "int"))) {
				at1->type = MU_CEL_INT;
				at1->i = json_integer_value(v);
			} else if (json_is_boolean(v = json_object_get(x, "bool"))) {
				at1->type = MU_CEL_BOOL;
				at1->b = json_is_true(v);
			} else if (json_is_string(v = json_object_get(x, "string"))) {
				at1->type = MU_CEL_STRING;
				at1->s = json_string_value(v);
			} else if (json_is_string(v = json_object_get(x, "version"))) {
				at1->type = MU_CEL_VERSION;
				at1->s = json_string_value(v);
			} else {
				continue;
			}
			(*n)++;
		}
	}
}

/* Whether device d passes every selector of sels: 1, 0, or -1 (refused,
 * why in msg).  A run-time error does not match, as in kube for a missing
 * attribute. */
static int selectors_pass(alloc_t *a, const json_t *sels, const adev_t *d, const char *what)
{
	mu_cel_attr_t at[MAX_ATTRS], cp[MAX_ATTRS];
	mu_cel_device_t dev;
	char arena[8192], err[300];
	cel_device(d->driver, d->obj, at, cp, &dev, arena, sizeof arena);
	size_t i;
	json_t *s;
	json_array_foreach(sels, i, s) {
		const char *x = mu__jstr(s, "cel.expression");
		if (!x) {
			snprintf(a->msg, a->len, "%s: a selector without cel.expression is not supported", what);
			return -1;
		}
		if (mu_cel_check(x, err, sizeof err) != MU_OK) {
			snprintf(a->msg, a->len, "%s: selector %.200s: %s", what, x, err);
			return -1;
		}
		bool m = false;
		if (mu_cel_eval(x, &dev, &m, err, sizeof err) != MU_OK || !m)
			return 0;
	}
	return 1;
}

static const json_t *class_of(const alloc_t *a, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach(a->v->classes, i, c) {
		const char *n = mu__jstr(c, "metadata.name");
		if (n && !strcmp(n, name))
			return c;
	}
	return NULL;
}

/* The candidates of one request into *out (owned): devices that pass its
 * class's and its own selectors.  MU_OK, MU_ENOENT (no class), MU_EINVAL. */
static int candidates(alloc_t *a, const json_t *rq, const char *what, int **out, int *n)
{
	const char *cls = mu__jstr(rq, "deviceClassName");
	*out = NULL;
	*n = 0;
	if (!cls || !*cls) {
		snprintf(a->msg, a->len, "%s: %s", what, json_object_get(rq, "firstAvailable") ?
			 "firstAvailable is empty" : "missing device class name");
		return MU_EINVAL;
	}
	const json_t *dc = class_of(a, cls);
	if (!dc) {
		snprintf(a->msg, a->len, "%s: could not retrieve device class %s", what, cls);
		return MU_ENOENT;
	}
	*out = malloc(((size_t)a->ndevs + 1) * sizeof **out);
	if (!*out)
		return MU_ENOMEM;
	for (int i = 0; i < a->ndevs; i++) {
		int ok = selectors_pass(a, mu__jget(dc, "spec.selectors"), &a->devs[i], what);
		if (ok > 0)
			ok = selectors_pass(a, json_object_get(rq, "selectors"), &a->devs[i], what);
		if (ok < 0)
			return MU_EINVAL;
		if (ok)
			(*out)[(*n)++] = i;
	}
	return MU_OK;
}

/* Whether toleration t tolerates taint x, as core/v1 tolerations match
 * node taints: an empty effect matches every effect, Exists with no key
 * every key, Equal (the default) the value too. */
static bool tolerates(const json_t *t, const json_t *x)
{
	const char *tk = mu__jstr(t, "key"), *op = mu__jstr(t, "operator");
	const char *te = mu__jstr(t, "effect"), *tv = mu__jstr(t, "value");
	const char *xk = mu__jstr(x, "key"), *xe = mu__jstr(x, "effect"), *xv = mu__jstr(x, "value");
	bool exists = op && !strcmp(op, "Exists");
	if (te && *te && (!xe || strcmp(te, xe)))
		return false;
	if (!tk || !*tk)
		return exists;
	if (!xk || strcmp(tk, xk))
		return false;
	return exists || !strcmp(tv ? tv : "", xv ? xv : "");
}

/* Whether request rq tolerates every taint of list taints. */
static bool tolerated(const json_t *rq, const json_t *taints)
{
	size_t i, k;
	json_t *x, *t;
	json_array_foreach(taints, i, x) {
		const char *eff = mu__jstr(x, "effect");
		bool ok = eff && !strcmp(eff, "None"); /* informational ("tainted-no-effect") */
		json_array_foreach(json_object_get(rq, "tolerations"), k, t)
			ok |= tolerates(t, x);
		if (!ok)
			return false;
	}
	return true;
}

/* Whether request rq tolerates every taint of device d, its own and those
 * of DeviceTaintRules (DRADeviceTaints: a NoSchedule or NoExecute taint
 * keeps a device from new allocations). */
static bool taints_ok(const json_t *rq, const adev_t *d)
{
	return tolerated(rq, mu__jget(d->obj, "basic.taints")) && tolerated(rq, d->rtaints);
}

/* Whether DeviceTaintRule r's deviceSelector (v1alpha3: deviceClassName,
 * driver, pool, device, CEL selectors; all that are given must hold)
 * selects device d: 1, 0, or -1 (refused, why in a->msg). */
static int rule_selects(alloc_t *a, const json_t *r, const adev_t *d)
{
	const json_t *ds = mu__jget(r, "spec.deviceSelector");
	const char *f[3] = {"driver", "pool", "device"}, *have[3] = {d->driver, d->pool, d->name};
	char what[300];
	snprintf(what, sizeof what, "DeviceTaintRule %s", mu__jstr(r, "metadata.name") ? mu__jstr(r, "metadata.name") : "?");
	for (int i = 0; i < 3; i++) {
		const char *want = mu__jstr(ds, f[i]);
		if (want && strcmp(want, have[i]))
			return 0;
	}
	const char *cls = mu__jstr(ds, "deviceClassName");
	if (cls) {
		const json_t *dc = class_of(a, cls);
		int ok = dc ? selectors_pass(a, mu__jget(dc, "spec.selectors"), d, what) : 0;
		if (ok <= 0)
			return ok;
	}
	return selectors_pass(a, json_object_get(ds, "selectors"), d, what);
}

/* Adds the taint of every DeviceTaintRule to the devices it selects.
 * O(rules x devices x selectors). */
static int rules_apply(alloc_t *a)
{
	size_t i;
	json_t *r;
	json_array_foreach(a->v->rules, i, r) {
		const json_t *taint = mu__jget(r, "spec.taint");
		if (!json_is_object(taint) || !mu__jstr(taint, "key") || !mu__jstr(taint, "effect")) {
			snprintf(a->msg, a->len, "DeviceTaintRule %s: spec.taint needs a key and an effect",
				 mu__jstr(r, "metadata.name") ? mu__jstr(r, "metadata.name") : "?");
			return MU_EINVAL;
		}
		for (int k = 0; k < a->ndevs; k++) {
			int ok = rule_selects(a, r, &a->devs[k]);
			if (ok < 0)
				return MU_EINVAL;
			if (!ok)
				continue;
			if (!a->devs[k].rtaints && !(a->devs[k].rtaints = json_array()))
				return MU_ENOMEM;
			json_array_append(a->devs[k].rtaints, (json_t *)taint);
		}
	}
	return MU_OK;
}

/* --- slots and constraints ------------------------------------------------ */

/* Whether constraint k of claim covers request name rn. */
static bool covers(const json_t *k, const char *rn)
{
	const json_t *rs = json_object_get(k, "requests");
	if (!json_array_size(rs))
		return true;
	size_t i;
	json_t *r;
	json_array_foreach(rs, i, r)
		if (json_is_string(r) && rn && !strcmp(json_string_value(r), rn))
			return true;
	return false;
}

/* The constraints of claim ci into a->cons; *base is where they start. */
static int claim_cons(alloc_t *a, int ci, int *base)
{
	const json_t *claim = a->claims[ci];
	*base = a->ncons;
	size_t i;
	json_t *k;
	json_array_foreach(mu__jget(claim, "spec.devices.constraints"), i, k) {
		const char *attr = mu__jstr(k, "matchAttribute"), *dist = mu__jstr(k, "distinctAttribute");
		if (!attr == !dist) {
			snprintf(a->msg, a->len, "claim %s: constraint %zu: %s", mu__jstr(claim, "metadata.name"), i,
				 attr ? "matchAttribute and distinctAttribute are both given" :
				 "empty constraint (only matchAttribute and distinctAttribute are supported)");
			return MU_EINVAL;
		}
		if (a->ncons == MAX_CONS) {
			snprintf(a->msg, a->len, "more than %d constraints", MAX_CONS);
			return MU_EINVAL;
		}
		a->cons[a->ncons++] = (cons_t){attr ? attr : dist, dist != NULL, NULL, 0};
	}
	return MU_OK;
}

/* Adds the slots of one request: count of them (ExactCount), or one per
 * candidate (All; every pool it reads must be complete). */
static int request_slots(alloc_t *a, int ci, const json_t *rq, int cbase)
{
	const json_t *claim = a->claims[ci];
	const char *parent = NULL;
	const json_t *fa = json_object_get(rq, "firstAvailable");
	if (json_array_size(fa)) { /* the subrequest of this attempt */
		if (a->nfa == MAX_FA) {
			snprintf(a->msg, a->len, "more than %d requests with firstAvailable", MAX_FA);
			return MU_EINVAL;
		}
		a->nalt[a->nfa] = (int)json_array_size(fa);
		int k = a->pick[a->nfa++];
		json_t *sub = json_deep_copy(json_array_get(fa, (size_t)k));
		char full[300];
		parent = mu__jstr(rq, "name");
		snprintf(full, sizeof full, "%s/%s", parent ? parent : "?", mu__jstr(sub, "name") ? mu__jstr(sub, "name") : "?");
		json_object_set_new(sub, "name", json_string(full));
		json_array_append_new(a->synth, sub);
		rq = sub;
	}
	const char *rn = mu__jstr(rq, "name"), *mode = mu__jstr(rq, "allocationMode");
	char what[300];
	snprintf(what, sizeof what, "claim %s, request %s", mu__jstr(claim, "metadata.name"), rn ? rn : "?");
	int *cand, ncand, rc = candidates(a, rq, what, &cand, &ncand);
	if (rc) {
		free(cand);
		return rc;
	}
	bool all = mode && !strcmp(mode, "All");
	if (mode && !all && strcmp(mode, "ExactCount")) {
		snprintf(a->msg, a->len, "%s: unknown allocationMode %s", what, mode);
		free(cand);
		return MU_EINVAL;
	}
	json_int_t count = json_is_integer(json_object_get(rq, "count")) ?
			   json_integer_value(json_object_get(rq, "count")) : 1;
	if (all) {
		for (int i = 0; i < a->npools; i++) {
			pool_t *p = &a->pools[i];
			bool reads = false;
			for (int k = 0; k < ncand && !reads; k++)
				reads = !strcmp(a->devs[cand[k]].pool, p->name) && !strcmp(a->devs[cand[k]].driver, p->driver);
			if (reads && p->slices < p->want) {
				snprintf(a->msg, a->len, "%s: asks for all devices, but resource pool %s/%s is "
					 "currently being updated", what, p->driver, p->name);
				free(cand);
				return MU_ENOENT;
			}
		}
		count = ncand;
		if (!ncand) {
			snprintf(a->msg, a->len, "%s: asks for all devices, but none matches on %s", what, a->node);
			free(cand);
			return MU_ENOENT;
		}
	}
	if (count < 1 || a->nslots + count > MAX_SLOTS) {
		snprintf(a->msg, a->len, "%s: count %lld is not between 1 and %d", what, (long long)count,
			 MAX_SLOTS - a->nslots);
		free(cand);
		return parent && count >= 1 ? MU_ENOENT : MU_EINVAL; /* a subrequest: try the next */
	}
	int first = a->nslots;
	for (json_int_t k = 0; k < count; k++) {
		slot_t *s = &a->slots[a->nslots++];
		*s = (slot_t){.claim = ci, .req = rq, .cand = k ? NULL : cand, .ncand = ncand, .first = first,
			      .chosen = -1};
		size_t j;
		json_t *c;
		json_array_foreach(mu__jget(claim, "spec.devices.constraints"), j, c)
			if (covers(c, rn) || (parent && covers(c, parent)))
				s->cons[s->ncons++] = cbase + (int)j;
	}
	return MU_OK;
}

/* The value of a device's attribute "DOMAIN/NAME" (unqualified names in
 * the slice belong to the driver's domain), or NULL. */
static const json_t *attr_of(const adev_t *d, const char *qn)
{
	const char *k;
	json_t *x;
	size_t dl = strlen(d->driver);
	json_object_foreach(mu__jget(d->obj, "basic.attributes"), k, x) {
		if (!strcmp(k, qn))
			return x;
		if (!strchr(k, '/') && !strncmp(qn, d->driver, dl) && qn[dl] == '/' && !strcmp(qn + dl + 1, k))
			return x;
	}
	return NULL;
}

/* Whether a device chosen for a slot before s under constraint ci has
 * attribute value v (the slots are filled in order). */
static bool value_taken(const alloc_t *a, const slot_t *s, int ci, const json_t *v)
{
	for (const slot_t *p = a->slots; p < s; p++) {
		bool under = false;
		for (int k = 0; k < p->ncons && !under; k++)
			under = p->cons[k] == ci;
		const json_t *w = under && p->chosen >= 0 ? attr_of(&a->devs[p->chosen], a->cons[ci].attr) : NULL;
		if (w && json_equal(w, v))
			return true;
	}
	return false;
}

/* Whether device di fits slot s's constraints: matchAttribute, the value
 * of the devices chosen before (which it fixes); distinctAttribute, a
 * value none of them has.  Either needs the attribute. */
static bool cons_take(alloc_t *a, const slot_t *s, int di)
{
	for (int k = 0; k < s->ncons; k++) {
		cons_t *c = &a->cons[s->cons[k]];
		const json_t *v = attr_of(&a->devs[di], c->attr);
		if (!v || (!c->distinct && c->val && !json_equal(c->val, v)) ||
		    (c->distinct && value_taken(a, s, s->cons[k], v)))
			return false;
	}
	for (int k = 0; k < s->ncons; k++) {
		cons_t *c = &a->cons[s->cons[k]];
		if (!c->n++)
			c->val = attr_of(&a->devs[di], c->attr);
	}
	return true;
}

static void cons_drop(alloc_t *a, const slot_t *s)
{
	for (int k = 0; k < s->ncons; k++) {
		cons_t *c = &a->cons[s->cons[k]];
		if (!--c->n)
			c->val = NULL;
	}
}

/* Fills slots i.. depth first; true when all are filled.  A slot of a
 * request after its first takes devices after the previous slot's, so a
 * set of devices is tried once, not in every order. */
static bool search(alloc_t *a, int i)
{
	if (i == a->nslots)
		return true;
	if (i > a->deep)
		a->deep = i;
	slot_t *s = &a->slots[i];
	const slot_t *f = &a->slots[s->first];
	int from = 0;
	if (i > s->first)
		for (int k = 0; k < f->ncand; k++)
			if (f->cand[k] == a->slots[i - 1].chosen)
				from = k + 1;
	bool admin = json_is_true(json_object_get(s->req, "adminAccess"));
	for (int k = from; k < f->ncand; k++) {
		int di = f->cand[k];
		adev_t *d = &a->devs[di];
		if ((!admin && (d->taken || d->used)) || ++a->steps > MU_DRA_MAX_STEPS)
			continue;
		if (!taints_ok(s->req, d) || !cons_take(a, s, di))
			continue;
		d->used |= !admin; /* admin access takes no device */
		s->chosen = di;
		if (search(a, i + 1))
			return true;
		d->used &= admin;
		s->chosen = -1;
		cons_drop(a, s);
	}
	return false;
}

/* --- the whole -------------------------------------------------------------- */

/* The configuration of claim ci's allocation, as the real allocator
 * copies it: the configs of each request's class (source FromClass, for
 * all requests), then the claim's own (FromClaim, with their requests). */
static json_t *config_of(const alloc_t *a, int ci)
{
	json_t *out = json_array();
	size_t i, k;
	json_t *rq, *c;
	json_array_foreach(mu__jget(a->claims[ci], "spec.devices.requests"), i, rq) {
		const char *cls = mu__jstr(rq, "deviceClassName"), *pn = mu__jstr(rq, "name");
		for (int j = 0; !cls && pn && j < a->nslots; j++) { /* firstAvailable: the chosen one */
			const char *sn = mu__jstr(a->slots[j].req, "name");
			size_t pl = strlen(pn);
			if (a->slots[j].claim == ci && sn && !strncmp(sn, pn, pl) && sn[pl] == '/')
				cls = mu__jstr(a->slots[j].req, "deviceClassName");
		}
		const json_t *dc = cls ? class_of(a, cls) : NULL;
		json_array_foreach(mu__jget(dc, "spec.config"), k, c) {
			json_t *e = json_deep_copy(c);
			json_object_set_new(e, "source", json_string("FromClass"));
			json_array_append_new(out, e);
		}
	}
	json_array_foreach(mu__jget(a->claims[ci], "spec.devices.config"), k, c) {
		json_t *e = json_deep_copy(c);
		json_object_set_new(e, "source", json_string("FromClaim"));
		json_array_append_new(out, e);
	}
	return out;
}

/* Appends the entries of list from that to is not holding yet. */
static void merge_reqs(json_t *to, const json_t *from)
{
	size_t i, k;
	json_t *x, *y;
	json_array_foreach(from, i, x) {
		bool have = false;
		json_array_foreach(to, k, y)
			have |= json_equal(x, y);
		if (!have)
			json_array_append(to, x);
	}
}

/* The nodeSelector of an allocation, as kube's allocator makes it: the
 * node when a device is node-local; else one term joining the
 * requirements of the (one-term) selectors of the devices' slices; NULL
 * when every device is on all nodes. */
static json_t *alloc_selector(const alloc_t *a, int ci)
{
	json_t *me = json_array(), *mf = json_array(), *term = json_object();
	bool local = false;
	for (int i = 0; i < a->nslots; i++) {
		const adev_t *d = a->slots[i].claim == ci ? &a->devs[a->slots[i].chosen] : NULL;
		local |= d && d->local;
		const json_t *t = d && d->sel ? json_array_get(json_object_get(d->sel, "nodeSelectorTerms"), 0) : NULL;
		merge_reqs(me, json_object_get(t, "matchExpressions"));
		merge_reqs(mf, json_object_get(t, "matchFields"));
	}
	if (local) {
		json_array_clear(me);
		json_array_clear(mf);
		json_array_append_new(mf, json_pack("{s:s,s:s,s:[s]}", "key", "metadata.name", "operator", "In",
						    "values", a->node));
	}
	if (json_array_size(me))
		json_object_set(term, "matchExpressions", me);
	if (json_array_size(mf))
		json_object_set(term, "matchFields", mf);
	json_decref(me);
	json_decref(mf);
	if (!json_object_size(term)) {
		json_decref(term);
		return NULL;
	}
	return json_pack("{s:[o]}", "nodeSelectorTerms", term);
}

/* Whether the allocations can carry a node selector, as kube's allocator
 * builds one (createNodeSelector): walking each claim's devices in order, a
 * node-local device settles it; a device of a slice whose nodeSelector has
 * several terms (ORed when slices are matched to nodes, but not mergeable
 * into one term; kube's validation allows only one) fails the allocation.
 * MU_OK or MU_EINVAL with why in a->msg.  O(slots). */
static int selectors_mergeable(alloc_t *a)
{
	for (size_t ci = 0; ci < a->nclaims; ci++)
		for (int i = 0; i < a->nslots; i++) {
			const adev_t *d = a->slots[i].claim == (int)ci ? &a->devs[a->slots[i].chosen] : NULL;
			if (d && d->local)
				break;
			size_t nt = d && d->sel ? json_array_size(json_object_get(d->sel, "nodeSelectorTerms")) : 0;
			if (nt > 1) {
				snprintf(a->msg, a->len, "claim %s: create NodeSelector: unsupported ResourceSlice.NodeSelector "
					 "with %zu terms (driver %s, pool %s, device %s)",
					 mu__jstr(a->claims[ci], "metadata.name"), nt, d->driver, d->pool, d->name);
				return MU_EINVAL;
			}
		}
	return MU_OK;
}

/* The allocation of claim ci from the filled slots. */
static json_t *result_of(const alloc_t *a, int ci)
{
	json_t *results = json_array();
	for (int i = 0; i < a->nslots; i++) {
		const slot_t *s = &a->slots[i];
		if (s->claim != ci)
			continue;
		const adev_t *d = &a->devs[s->chosen];
		json_t *r = json_pack("{s:s?,s:s,s:s,s:s}", "request", mu__jstr(s->req, "name"),
				      "driver", d->driver, "pool", d->pool, "device", d->name);
		if (json_is_true(json_object_get(s->req, "adminAccess")))
			json_object_set_new(r, "adminAccess", json_true());
		/* as kube's allocator (DRADeviceTaints): the request's
		 * tolerations go with the result, where the eviction
		 * controller reads them */
		const json_t *tol = json_object_get(s->req, "tolerations");
		if (json_array_size(tol))
			json_object_set_new(r, "tolerations", json_deep_copy(tol));
		json_array_append_new(results, r);
	}
	json_t *al = json_pack("{s:{s:o,s:o}}", "devices", "results", results, "config", config_of(a, ci));
	json_t *sel = alloc_selector(a, ci);
	if (sel)
		json_object_set_new(al, "nodeSelector", sel);
	return al;
}

/* Builds the slots of the claims not yet allocated; MU_OK or an error. */
static int slots_make(alloc_t *a)
{
	for (size_t ci = 0; ci < a->nclaims; ci++) {
		const json_t *c = a->claims[ci];
		if (mu__jget(c, "status.allocation")) {
			const char *at = mu_dra_claim_node(c);
			if (!mu_dra_node_selects(mu__jget(c, "status.allocation.nodeSelector"), a->node, a->labels)) {
				if (at)
					snprintf(a->msg, a->len, "claim %s is allocated on %s", mu__jstr(c, "metadata.name"), at);
				else
					snprintf(a->msg, a->len, "claim %s is allocated for nodes its nodeSelector selects, "
						 "and it does not select %s", mu__jstr(c, "metadata.name"), a->node);
				return MU_ENOENT;
			}
			continue;
		}
		int cbase, rc = claim_cons(a, (int)ci, &cbase);
		size_t i;
		json_t *rq;
		json_array_foreach(rc ? NULL : mu__jget(c, "spec.devices.requests"), i, rq)
			if ((rc = request_slots(a, (int)ci, rq, cbase)))
				break;
		if (rc)
			return rc;
	}
	for (int i = 0; i < a->npools; i++)
		if (a->pools[i].dup) {
			snprintf(a->msg, a->len, "pool %s is invalid: duplicate device name %s", a->pools[i].name,
				 a->pools[i].dup);
			return MU_EINVAL;
		}
	return MU_OK;
}

/* Why the search failed, at the furthest slot it reached: its request's
 * matching devices that are free, against the devices it needs. */
static void short_msg(alloc_t *a)
{
	const slot_t *s = &a->slots[a->deep], *f = &a->slots[s->first];
	int want = 0, free_ = 0;
	for (int i = s->first; i < a->nslots && a->slots[i].first == s->first; i++)
		want++;
	for (int k = 0; k < f->ncand; k++)
		free_ += !a->devs[f->cand[k]].taken;
	snprintf(a->msg, a->len, "claim %s, request %s: %d of %d matching devices free on %s%s",
		 mu__jstr(a->claims[s->claim], "metadata.name"), mu__jstr(s->req, "name") ? mu__jstr(s->req, "name") : "?",
		 free_, want, a->node, free_ >= want ? " (taken by the claims' other requests, tainted, or "
		 "refused by a constraint)" : "");
}

static void slots_free(alloc_t *a)
{
	for (int i = 0; i < a->nslots; i++)
		if (a->slots[i].first == i)
			free(a->slots[i].cand);
	a->nslots = a->ncons = a->deep = 0;
}

/* Moves the firstAvailable picks on, the last request's fastest (so that
 * earlier requests keep their earlier subrequests longest, as the real
 * allocator's backtracking prefers them); false when all were tried. */
static bool picks_next(alloc_t *a)
{
	for (int i = a->nfa - 1; i >= 0; i--) {
		if (++a->pick[i] < a->nalt[i])
			return true;
		a->pick[i] = 0;
	}
	return false;
}

/* Builds the slots and searches, once per choice of subrequests of the
 * firstAvailable requests (one attempt without them).  Every attempt
 * shares the MU_DRA_MAX_STEPS budget. */
static int attempts(alloc_t *a)
{
	for (;;) {
		a->nfa = 0;
		int rc = slots_make(a);
		if (!rc && search(a, 0))
			return MU_OK;
		if (rc && rc != MU_ENOENT)
			return rc;
		if (!rc) {
			rc = MU_ENOENT;
			if (a->steps > MU_DRA_MAX_STEPS)
				snprintf(a->msg, a->len, "no allocation found on %s within %d device tries", a->node,
					 MU_DRA_MAX_STEPS);
			else if (a->nslots)
				short_msg(a);
		}
		if (!a->nfa || a->steps > MU_DRA_MAX_STEPS || !picks_next(a))
			return rc;
		slots_free(a);
		json_array_clear(a->synth);
	}
}

long mu_dra_class_devices(const mu_dra_view_t *v, const char *cls, const char *node, char *msg, size_t len)
{
	alloc_t *a = calloc(1, sizeof *a);
	if (!a)
		return -1;
	*a = (alloc_t){.v = v, .node = node, .msg = msg, .len = len};
	size_t i;
	json_t *nd;
	json_array_foreach(node ? v->nodes : NULL, i, nd) {
		const char *nn = mu__jstr(nd, "metadata.name");
		if (nn && !strcmp(nn, node))
			a->labels = mu__jget(nd, "metadata.labels");
	}
	const json_t *dc = class_of(a, cls);
	long n = pools_read(a) ? -1 : 0;
	for (int k = 0; dc && n >= 0 && k < a->ndevs; k++) {
		int ok = selectors_pass(a, mu__jget(dc, "spec.selectors"), &a->devs[k], cls);
		n = ok < 0 ? -1 : n + ok;
	}
	free(a->pools);
	free(a->devs);
	free(a);
	return n;
}

int mu_dra_allocate(const mu_dra_view_t *v, const json_t *const *claims, size_t n, const char *node,
		    json_t **plan, char *msg, size_t len)
{
	alloc_t *a = calloc(1, sizeof *a);
	*plan = NULL;
	if (!a)
		return MU_ENOMEM;
	*a = (alloc_t){.v = v, .claims = claims, .nclaims = n, .node = node, .msg = msg, .len = len};
	size_t i;
	json_t *nd;
	json_array_foreach(v->nodes, i, nd) {
		const char *nn = mu__jstr(nd, "metadata.name");
		if (nn && !strcmp(nn, node))
			a->labels = mu__jget(nd, "metadata.labels");
	}
	int rc = n > MU_DRA_MAX_CLAIMS ? MU_EINVAL : pools_read(a);
	if (!rc)
		rc = rules_apply(a);
	if (n > MU_DRA_MAX_CLAIMS)
		snprintf(msg, len, "more than %d claims", MU_DRA_MAX_CLAIMS);
	a->synth = json_array();
	if (!rc)
		rc = attempts(a);
	if (!rc)
		rc = selectors_mergeable(a);
	if (!rc) {
		*plan = json_array();
		for (size_t ci = 0; ci < n; ci++) {
			const json_t *al = mu__jget(claims[ci], "status.allocation");
			json_array_append_new(*plan, json_pack("{s:s?,s:o}", "claim", mu__jstr(claims[ci], "metadata.name"),
				"allocation", al ? json_deep_copy(al) : result_of(a, (int)ci)));
		}
	}
	slots_free(a);
	json_decref(a->synth);
	for (int k = 0; a->devs && k < a->ndevs; k++)
		json_decref(a->devs[k].rtaints);
	free(a->pools);
	free(a->devs);
	free(a);
	return rc;
}

/* --- NoExecute: when the pods of an allocated claim must go ------------- */

/* The eviction time of one NoExecute taint x of a device for result r
 * (its tolerations): timeAdded plus the smallest tolerationSeconds of the
 * NoExecute tolerations that match it (negative ones count as 0); -1 when
 * one without seconds tolerates it forever.  A taint without timeAdded
 * counts from now_ms. */
static int64_t taint_due(const json_t *x, const json_t *tols, int64_t now_ms)
{
	int64_t added;
	const char *ta = mu__jstr(x, "timeAdded");
	if (!ta || mu__rfc3339_parse(ta, &added) != MU_OK)
		added = now_ms;
	int64_t secs = -1;
	size_t i;
	json_t *t;
	json_array_foreach(tols, i, t) {
		const char *e = mu__jstr(t, "effect");
		if (!e || strcmp(e, "NoExecute") || !tolerates(t, x))
			continue;
		const json_t *ts = json_object_get(t, "tolerationSeconds");
		if (!json_is_integer(ts))
			return -1;
		int64_t v = json_integer_value(ts) < 0 ? 0 : json_integer_value(ts);
		if (secs < 0 || v < secs)
			secs = v;
	}
	return added + (secs > 0 ? secs * 1000 : 0);
}

/* The tolerations that go with result r of claim c: the result's own, or,
 * for an allocation written without them, those of the claim's request of
 * that name. */
static const json_t *result_tolerations(const json_t *c, const json_t *r)
{
	if (json_object_get(r, "tolerations"))
		return json_object_get(r, "tolerations");
	const char *rn = mu__jstr(r, "request");
	size_t i;
	json_t *q;
	json_array_foreach(mu__jget(c, "spec.devices.requests"), i, q)
		if (rn && mu__jstr(q, "name") && !strcmp(rn, mu__jstr(q, "name")))
			return json_object_get(q, "tolerations");
	return NULL;
}

/* Scans the taints list of one device for result r; keeps the earliest
 * due time in *when and the first reason in why. */
static void taints_due(const json_t *taints, const char *origin, const json_t *c, const json_t *r,
		       int64_t now_ms, int64_t *when, char *why, size_t len)
{
	size_t i;
	json_t *x;
	json_array_foreach(taints, i, x) {
		const char *e = mu__jstr(x, "effect");
		if (!e || strcmp(e, "NoExecute"))
			continue;
		int64_t due = taint_due(x, result_tolerations(c, r), now_ms);
		if (due < 0 || (*when >= 0 && due >= *when))
			continue;
		*when = due;
		snprintf(why, len, "%s/%s/%s: taint %s=%s:NoExecute (%s)", mu__jstr(r, "driver"), mu__jstr(r, "pool"),
			 mu__jstr(r, "device"), mu__jstr(x, "key") ? mu__jstr(x, "key") : "",
			 mu__jstr(x, "value") ? mu__jstr(x, "value") : "", origin);
	}
}

int64_t mu_dra_eviction_ms(const mu_dra_view_t *v, const json_t *claim, int64_t now_ms, char *why, size_t len)
{
	const json_t *results = mu__jget(claim, "status.allocation.devices.results");
	if (why && len)
		why[0] = '\0';
	if (!json_array_size(results))
		return -1;
	mu_dra_view_t v1 = *v;
	v1.claims = NULL; /* who holds a device does not matter here */
	alloc_t *a = calloc(1, sizeof *a);
	if (!a)
		return -1;
	char msg[300];
	*a = (alloc_t){.v = &v1, .every = true, .msg = msg, .len = sizeof msg};
	int64_t when = -1;
	if (pools_read(a) == MU_OK && rules_apply(a) == MU_OK) {
		size_t i;
		json_t *r;
		json_array_foreach(results, i, r) {
			const char *drv = mu__jstr(r, "driver"), *pl = mu__jstr(r, "pool"), *dn = mu__jstr(r, "device");
			for (int k = 0; drv && pl && dn && k < a->ndevs; k++) {
				const adev_t *d = &a->devs[k];
				if (strcmp(d->driver, drv) || strcmp(d->pool, pl) || strcmp(d->name, dn))
					continue;
				taints_due(mu__jget(d->obj, "basic.taints"), "the slice's", claim, r, now_ms, &when, why, len);
				taints_due(d->rtaints, "a DeviceTaintRule's", claim, r, now_ms, &when, why, len);
				break;
			}
		}
	}
	for (int k = 0; a->devs && k < a->ndevs; k++)
		json_decref(a->devs[k].rtaints);
	free(a->pools);
	free(a->devs);
	free(a);
	return when;
}
