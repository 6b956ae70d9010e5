/*
 * dra.c - Dynamic Resource Allocation for pods with spec.resourceClaims,
 * as kube-scheduler's DynamicResources plugin does it for structured
 * parameters (resource.k8s.io/v1beta1): devices are taken from the
 * ResourceSlices of a node, each request's devices must match its
 * DeviceClass's and its own CEL selectors (the subset of cel.h), a device
 * is given to one claim at a time, and before the pod is bound the claim's
 * status gets the allocation (devices.results, the node in nodeSelector)
 * and the pod joins reservedFor (a claim may be shared by several pods).
 *
 * How it joins the daemon: when an unbound pod of ours that asks for
 * claims is first seen, mu__kd_dra_allocate() finds the nodes where all of
 * its claims can be allocated (the slices' nodes; every node, in list
 * order, when a slice serves several), and the pod is shaped with a node
 * selector on that node's kubernetes.io/hostname, or for several a
 * required node affinity "kubernetes.io/hostname In [...]" (at most
 * MU__KD_DRA_NODES), so the engine chooses among them; when none can, it
 * is shaped so that it fits nowhere and its pending message says why
 * (p->dra_msg).  At bind time mu__kd_dra_reserve() allocates
 * again on the node the engine chose (the devices may have gone
 * meanwhile) and writes the claims' status; the bind goes out only after.
 * A pod whose claims fit nowhere (or whose bind found its devices gone) is
 * pinned again every 2 s (mu__kd_dra_retry), since muster up's claim
 * controller (apiserver/claimctl.c, on a real cluster
 * kube-controller-manager's) deallocates a claim when its pods are gone.
 * A resourceClaimTemplateName is read through the pod's
 * status.resourceClaimStatuses, where that controller records the claim it
 * made; until then the pod waits and says so.
 * Reads and writes here are synchronous: only pods with claims pay for
 * them.
 *
 * Slices with a nodeSelector or allNodes make the pass read the nodes (their
 * labels are what the selectors match) and try every node in list order;
 * DeviceTaintRules (v1alpha3) are read too and add their taints.
 * Preemption: mu__kd_dra_counts() gives the engine each node's devices of
 * the counted classes as extended resources (muster.io/dra-CLASS), a pod
 * asks for what its template claims take (add_counts); devices held by
 * claims the engine does not count (another scheduler's pods', a named
 * claim's) are taken off a node's count (uncounted_taken), and a pod whose
 * claims fit nowhere is pinned where they would once the claims made for
 * running pods were gone (relaxed_claims): the engine evicts there.
 * Reads: the passes that choose nodes and the binds share one read of the
 * lists for up to VIEW_MS (view_cached); a bind writes what it allocated
 * into that view (cache_wrote), and its claim writes carry the claim's
 * resourceVersion as read (a JSON patch "test", a merge patch's
 * metadata.resourceVersion), so that a claim changed meanwhile fails with
 * 409 and the bind allocates again on a fresh read, as kube-scheduler's
 * status update of a claim in its assume cache does.  The metrics count
 * the lists.
 * Not done (docs/kubernetes.md, "DRA"): allocationMode All across nodes.
 * Evicting pods for NoExecute taints is kube-controller-manager's (and
 * muster up's, apiserver/devtaint.c), not the scheduler's.  Device taints,
 * adminAccess, firstAvailable and device config are the allocator's
 * (load/dra.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/dra.h"
#include "muster/resource.h"

#define API "/apis/resource.k8s.io/v1beta1"
#define RULES "/apis/resource.k8s.io/v1alpha3/devicetaintrules"
/* kube-scheduler's finalizer on the claims it allocates; the resource
 * claim controller takes it off when it deallocates. */
#define DELETE_PROTECTION "resource.kubernetes.io/delete-protection"
/* the annotation of a claim the resource claim controller made for a pod */
#define POD_CLAIM "resource.kubernetes.io/pod-claim-name"
/* counted device classes, as extended resources of the engine */
#define MAX_COUNTED 4
#define RES_PREFIX "muster.io/dra-"

/* What one allocation pass reads once. */
typedef struct dra_view {
	json_t *slices, *classes, *claims; /* the lists' items */
	json_t *nodes;  /* the nodes, read when a slice is not on one node */
	json_t *rules;  /* DeviceTaintRules (empty when not served) */
} dra_view_t;

bool mu__kd_dra_wants(const json_t *pod)
{
	return json_array_size(mu__kj(pod, "spec.resourceClaims")) > 0;
}

/* Counts one list read of n objects in the daemon's metrics. */
static void count_read(mu__kd_t *d, size_t n)
{
	pthread_mutex_lock(&d->m.mu);
	d->m.dra_lists++;
	d->m.dra_items += n;
	pthread_mutex_unlock(&d->m.mu);
}

/* GETs path's items into *items (owned); MU_EIO with why in msg. */
static int get_items(mu__kd_t *d, mu__kc_t *c, const char *path, json_t **items, char *msg, size_t len)
{
	long st = 0;
	json_t *o = NULL;
	mu__kc_json(c, "GET", path, NULL, NULL, 10000, &st, &o);
	count_read(d, json_array_size(json_object_get(o, "items")));
	if (st != 200 || !o) {
		snprintf(msg, len, "reading %s: HTTP %ld", path, st);
		json_decref(o);
		return MU_EIO;
	}
	*items = json_incref(json_object_get(o, "items"));
	json_decref(o);
	if (!*items)
		*items = json_array();
	return MU_OK;
}

static void view_release(dra_view_t *v)
{
	json_decref(v->slices);
	json_decref(v->classes);
	json_decref(v->claims);
	json_decref(v->nodes);
	json_decref(v->rules);
}

/* Whether a slice serves more than one node (allNodes or a nodeSelector),
 * so that the nodes must be read. */
static bool any_shared(const json_t *slices)
{
	size_t i;
	json_t *s;
	json_array_foreach(slices, i, s)
		if (!mu__kjs(s, "spec.nodeName"))
			return true;
	return false;
}

/* Reads the DRA objects; the nodes only when a slice is shared, the
 * DeviceTaintRules as none when the server does not serve them (404, as
 * a cluster without the DRADeviceTaints feature). */
static int view_read(mu__kd_t *d, mu__kc_t *c, dra_view_t *v, char *msg, size_t len)
{
	memset(v, 0, sizeof *v);
	int rc = get_items(d, c, API "/resourceslices", &v->slices, msg, len);
	if (!rc)
		rc = get_items(d, c, API "/deviceclasses", &v->classes, msg, len);
	if (!rc)
		rc = get_items(d, c, API "/resourceclaims", &v->claims, msg, len);
	if (!rc && any_shared(v->slices))
		rc = get_items(d, c, "/api/v1/nodes", &v->nodes, msg, len);
	if (!rc) {
		long st = 0;
		json_t *o = NULL;
		mu__kc_json(c, "GET", RULES, NULL, NULL, 10000, &st, &o);
		count_read(d, json_array_size(json_object_get(o, "items")));
		v->rules = st == 200 ? json_incref(json_object_get(o, "items")) : NULL;
		if (st != 200 && st != 404) {
			snprintf(msg, len, "reading %s: HTTP %ld", RULES, st);
			rc = MU_EIO;
		}
		json_decref(o);
	}
	return rc;
}

/* The item of list named name (and namespace ns unless NULL), or NULL. */
static json_t *find(const json_t *list, const char *ns, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(list, i, o) {
		const char *n = mu__kjs(o, "metadata.name"), *s = mu__kjs(o, "metadata.namespace");
		if (n && !strcmp(n, name) && (!ns || (s && !strcmp(s, ns))))
			return o;
	}
	return NULL;
}

/* The claim name a template pod claim got from the resource claim
 * controller (the pod's status.resourceClaimStatuses), or NULL. */
static const char *made_claim(const json_t *pod, const char *pc)
{
	size_t i;
	json_t *e;
	json_array_foreach(mu__kj(pod, "status.resourceClaimStatuses"), i, e) {
		const char *n = mu__kjs(e, "name");
		if (n && pc && !strcmp(n, pc))
			return mu__kjs(e, "resourceClaimName");
	}
	return NULL;
}

/* The claims the pod names, in order, into claims (borrowed from v): a
 * resourceClaimName, or for a resourceClaimTemplateName the claim the
 * controller made and recorded in the pod's status (kube-scheduler waits
 * for it the same way).  -1 with why in msg when one is refused, 1 when one
 * is missing. */
static int pod_claims(const dra_view_t *v, const json_t *pod, const json_t **claims, size_t cap,
		      size_t *n, char *msg, size_t len)
{
	const char *ns = mu__kjs(pod, "metadata.namespace");
	size_t i;
	json_t *rc;
	*n = 0;
	json_array_foreach(mu__kj(pod, "spec.resourceClaims"), i, rc) {
		const char *cn = mu__kjs(rc, "resourceClaimName");
		const char *tn = mu__kjs(rc, "resourceClaimTemplateName");
		if (!cn && tn && !(cn = made_claim(pod, mu__kjs(rc, "name")))) {
			snprintf(msg, len, "waiting for the resource claim controller to create the claim "
				 "of pod claim \"%s\" from template \"%s\"", mu__kjs(rc, "name") ? mu__kjs(rc, "name") : "?", tn);
			return 1;
		}
		if (!cn) {
			snprintf(msg, len, "resourceClaims[%zu]: neither resourceClaimName nor "
				 "resourceClaimTemplateName is given", i);
			return -1;
		}
		const json_t *c = find(v->claims, ns ? ns : "default", cn);
		if (!c) {
			snprintf(msg, len, "resourceclaim \"%s\" not found", cn);
			return 1;
		}
		if (*n == cap) {
			snprintf(msg, len, "more than %zu claims", cap);
			return -1;
		}
		claims[(*n)++] = c;
	}
	return 0;
}

/* Whether claim c carries the delete-protection finalizer. */
static bool protected_(const json_t *c)
{
	size_t i;
	json_t *f;
	json_array_foreach(mu__kj(c, "metadata.finalizers"), i, f)
		if (json_is_string(f) && !strcmp(json_string_value(f), DELETE_PROTECTION))
			return true;
	return false;
}

/* How long the lists read for DRA serve the passes that only choose nodes
 * (pins, retries, counts) before they are read again. */
#define VIEW_MS 1000

/* v, or NULL for a JSON null (a list not read: json_pack's "O?"). */
static json_t *nonnull(json_t *v)
{
	return json_is_null(v) ? NULL : v;
}

/* Keeps v's lists (and tpls, when given) as d's cache, read now. */
static void cache_keep(mu__kd_t *d, const dra_view_t *v, json_t *tpls)
{
	json_t *old = d->dra_cache;
	d->dra_cache = json_pack("{s:O,s:O,s:O,s:O?,s:O?,s:O?}", "slices", v->slices, "classes", v->classes,
				 "claims", v->claims, "nodes", v->nodes, "rules", v->rules,
				 "tpls", tpls ? tpls : nonnull(json_object_get(old, "tpls")));
	d->dra_cache_ms = mu__k_mono_ms();
	json_decref(old);
}

/* The lists the node-choosing passes read: d's cache while it is younger
 * than VIEW_MS and has the templates, else read now (the objects and the
 * ResourceClaimTemplates) and kept.  v's lists and *tpls are new
 * references; MU_EIO with why in msg.  At most six list reads a second,
 * whatever the number of pods. */
static int view_cached(mu__kd_t *d, dra_view_t *v, json_t **tpls, char *msg, size_t len)
{
	json_t *c = d->dra_cache;
	memset(v, 0, sizeof *v);
	*tpls = NULL;
	if (c && json_is_array(json_object_get(c, "tpls")) && mu__k_mono_ms() - d->dra_cache_ms < VIEW_MS) {
		v->slices = json_incref(json_object_get(c, "slices"));
		v->classes = json_incref(json_object_get(c, "classes"));
		v->claims = json_incref(json_object_get(c, "claims"));
		v->nodes = json_incref(nonnull(json_object_get(c, "nodes")));
		v->rules = json_incref(nonnull(json_object_get(c, "rules")));
		*tpls = json_incref(json_object_get(c, "tpls"));
		return MU_OK;
	}
	mu__kc_t *kc = NULL;
	int rc = mu__kc_new(&d->auth, &kc);
	if (!rc)
		rc = view_read(d, kc, v, msg, len);
	if (!rc)
		rc = get_items(d, kc, API "/resourceclaimtemplates", tpls, msg, len);
	mu__kc_free(kc);
	if (rc) {
		view_release(v);
		json_decref(*tpls);
		*tpls = NULL;
		return rc;
	}
	cache_keep(d, v, *tpls);
	return MU_OK;
}

/* Puts what a bind wrote into the cached claim ns/name: the allocation,
 * reservedFor and the delete-protection finalizer, so that the passes
 * that read the cache next see its devices taken. */
static void cache_wrote(mu__kd_t *d, const char *ns, const char *name, const json_t *allocation,
			const json_t *reserved)
{
	json_t *c = find(json_object_get(d->dra_cache, "claims"), ns, name);
	if (!c)
		return;
	json_t *st = json_object_get(c, "status");
	if (!json_is_object(st))
		json_object_set_new(c, "status", st = json_object());
	json_object_set(st, "allocation", (json_t *)allocation);
	json_object_set(st, "reservedFor", (json_t *)reserved);
	json_t *md = json_object_get(c, "metadata"), *fin = json_object_get(md, "finalizers");
	if (json_is_object(md) && !protected_(c)) {
		if (!json_is_array(fin))
			json_object_set_new(md, "finalizers", fin = json_array());
		json_array_append_new(fin, json_string(DELETE_PROTECTION));
	}
}

/* The resourceVersion of claim ns/name in the shared view, or NULL. */
static const char *cached_rv(const mu__kd_t *d, const char *ns, const char *name)
{
	return mu__kjs(find(json_object_get(d->dra_cache, "claims"), ns, name),
		       "metadata.resourceVersion");
}

/* Sets the cached claim ns/name's resourceVersion to that of ans. */
static void cache_rv(mu__kd_t *d, const char *ns, const char *name, const json_t *ans)
{
	json_t *md = json_object_get(find(json_object_get(d->dra_cache, "claims"), ns, name),
				     "metadata");
	const char *rv = mu__kjs(ans, "metadata.resourceVersion");
	if (json_is_object(md) && rv)
		json_object_set_new(md, "resourceVersion", json_string(rv));
}

/* A claim changed since the shared view read it: the view is stale. */
static int conflict(mu__kd_t *d, const char *what, const char *name, char *msg, size_t len)
{
	d->dra_cache_ms = INT64_MIN / 2;
	snprintf(msg, len, "%s claim %s: it changed since it was read (HTTP 409)", what, name);
	return MU_ESTATE;
}

/* Adds the delete-protection finalizer to claim ns/name with a JSON patch
 * "add" (at the end of the list when the claim had one: mode 1; a new list:
 * mode 2), so that finalizers others put on stay. */
static int protect(mu__kd_t *d, mu__kc_t *c, const char *ns, const char *name, json_int_t mode,
		   char *msg, size_t len)
{
	char path[800];
	snprintf(path, sizeof path, API "/namespaces/%s/resourceclaims/%s", ns, name);
	json_t *ops = mode == 1 ?
		json_pack("[{s:s,s:s,s:s}]", "op", "add", "path", "/metadata/finalizers/-", "value", DELETE_PROTECTION) :
		json_pack("[{s:s,s:s,s:[s]}]", "op", "add", "path", "/metadata/finalizers", "value", DELETE_PROTECTION);
	const char *rv = cached_rv(d, ns, name);
	if (ops && rv) /* the claim as the view read it, or 409 */
		json_array_insert_new(ops, 0, json_pack("{s:s,s:s,s:s}", "op", "test", "path",
							"/metadata/resourceVersion", "value", rv));
	char *txt = json_dumps(ops, JSON_COMPACT);
	json_decref(ops);
	long st = 0;
	json_t *ans = NULL;
	mu__kc_json(c, "PATCH", path, "application/json-patch+json", txt, 10000, &st, &ans);
	free(txt);
	if (st == 200)
		cache_rv(d, ns, name, ans);
	json_decref(ans);
	if (st == 200)
		return MU_OK;
	if (st == 409 || st == 422) /* 422: the test op failed */
		return conflict(d, "protecting", name, msg, len);
	snprintf(msg, len, "adding the %s finalizer to claim %s: HTTP %ld", DELETE_PROTECTION, name, st);
	return MU_EIO;
}

/* Allocates all of the pod's claims on node (load/dra.c): *plan =
 * [{claim, allocation, reservedFor}] (allocations of claims already
 * allocated are kept).  0, 1 (not there) or -1 (refused). */
static int pod_on(const dra_view_t *v, const json_t **cl, size_t n, const char *node,
		  json_t **plan, char *msg, size_t len)
{
	mu_dra_view_t mv = {v->slices, v->classes, v->claims, v->nodes, v->rules};
	int rc = mu_dra_allocate(&mv, cl, n, node, plan, msg, len);
	if (rc == MU_ENOENT)
		return 1;
	if (rc)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *rf = mu__kj(cl[i], "status.reservedFor"), *e = json_array_get(*plan, i);
		json_object_set_new(e, "reservedFor", json_is_array(rf) ? json_incref(rf) : json_array());
		if (!protected_(cl[i])) /* kube-scheduler protects the claim it allocates */
			json_object_set_new(e, "protect",
				json_integer(json_is_array(mu__kj(cl[i], "metadata.finalizers")) ? 1 : 2));
	}
	return 0;
}

/* Tries cl on node (or, node NULL, on every candidate node: the slices'
 * nodes, or every node when a slice serves several); fills *node_out,
 * *plan and all as mu__kd_dra_allocate() says.  rc as it returns. */
static int try_nodes(const dra_view_t *v, const json_t **cl, size_t n, const char *node, json_t *all,
		     char **node_out, json_t **plan, char *msg, size_t len)
{
	int rc = MU_ENOENT;
	size_t i;
	json_t *sl;
	snprintf(msg, len, "no ResourceSlice is on %s", node ? node : "any node");
	json_array_foreach(v->nodes ? v->nodes : v->slices, i, sl) {
		const char *sn = node ? node : mu__kjs(sl, v->nodes ? "metadata.name" : "spec.nodeName");
		bool seen = false;
		size_t k;
		json_t *x0;
		json_array_foreach(all, k, x0)
			seen |= sn && !strcmp(json_string_value(x0), sn);
		if (!sn || seen)
			continue;
		json_t *p1 = NULL;
		char m1[600];
		int x = pod_on(v, cl, n, sn, &p1, *node_out ? m1 : msg, *node_out ? sizeof m1 : len);
		if (x < 0 && !*node_out) {
			json_decref(p1);
			return MU_EINVAL;
		}
		if (x == 0 && !*node_out) {
			*plan = p1;
			p1 = NULL;
			*node_out = strdup(sn);
			rc = *node_out ? MU_OK : MU_ENOMEM;
		}
		if (x == 0 && all && json_array_size(all) < MU__KD_DRA_NODES)
			json_array_append_new(all, json_string(sn));
		json_decref(p1);
		if (node || (*node_out && (!all || json_array_size(all) >= MU__KD_DRA_NODES)))
			break;
	}
	return rc;
}

/* The claims without those made for pods (POD_CLAIM) and reserved now:
 * what the allocator sees once those pods are evicted.  Borrowed
 * references in a new array. */
static json_t *relaxed_claims(const json_t *claims)
{
	json_t *out = json_array(), *c;
	size_t i;
	json_array_foreach(out ? claims : NULL, i, c)
		if (!json_object_get(mu__kj(c, "metadata.annotations"), POD_CLAIM) ||
		    !json_array_size(mu__kj(c, "status.reservedFor")))
			json_array_append(out, c);
	return out;
}

int mu__kd_dra_allocate(mu__kd_t *d, const json_t *pod, const char *node, json_t *all, char **node_out,
			json_t **plan, char *msg, size_t len)
{
	dra_view_t v = {0};
	json_t *tpls = NULL;
	const json_t *cl[16];
	size_t n = 0;
	int rc = MU_OK;
	*node_out = NULL;
	*plan = NULL;
	/* pins and binds take the shared view: a bind's claim status write
	 * carries the resourceVersion read, so a claim changed since fails
	 * with 409 and the bind tries again on a fresh read (mu__kd_dra_bind) */
	rc = view_cached(d, &v, &tpls, msg, len);
	if (rc == MU_OK && pod_claims(&v, pod, cl, 16, &n, msg, len) == 1 &&
	    mu__k_mono_ms() - d->dra_cache_ms > 0) {
		/* a claim the cache does not have yet: read again, once */
		view_release(&v);
		json_decref(tpls);
		d->dra_cache_ms -= VIEW_MS;
		rc = view_cached(d, &v, &tpls, msg, len);
	}
	if (rc == MU_OK) {
		int r = pod_claims(&v, pod, cl, 16, &n, msg, len);
		rc = r ? (r < 0 ? MU_EINVAL : MU_ENOENT) : try_nodes(&v, cl, n, node, all, node_out, plan, msg, len);
		/* none fits now: where would it once the pods holding counted
		 * devices were evicted?  The engine decides whether to evict. */
		if (rc == MU_ENOENT && !r && !node && all && json_object_size(json_object_get(d->dra_ext, "#classes"))) {
			json_t *keep = v.claims;
			char m2[600];
			v.claims = relaxed_claims(keep);
			if (v.claims && try_nodes(&v, cl, n, NULL, all, node_out, plan, m2, sizeof m2) == MU_OK)
				rc = MU_OK;
			json_decref(v.claims);
			v.claims = keep;
		}
	}
	view_release(&v);
	json_decref(tpls);
	return rc;
}

int mu__kd_dra_reserve(mu__kd_t *d, const mu__kpod_t *p, const json_t *plan, char *msg, size_t len)
{
	mu__kc_t *c = NULL;
	int rc = mu__kc_new(&d->auth, &c);
	size_t i;
	json_t *e;
	json_array_foreach(rc ? NULL : plan, i, e) {
		char path[800];
		json_int_t mode = json_integer_value(json_object_get(e, "protect"));
		if (mode && (rc = protect(d, c, p->ns, mu__kjs(e, "claim"), mode, msg, len)))
			break;
		snprintf(path, sizeof path, API "/namespaces/%s/resourceclaims/%s/status", p->ns,
			 mu__kjs(e, "claim"));
		/* the pods that already use the claim stay in reservedFor */
		json_t *rf = json_array();
		size_t k;
		json_t *r;
		json_array_foreach(json_object_get(e, "reservedFor"), k, r) {
			const char *u = mu__kjs(r, "uid"), *n = mu__kjs(r, "name");
			if (!(u && p->uid && !strcmp(u, p->uid)) && !(n && !strcmp(n, p->name)))
				json_array_append(rf, r);
		}
		json_array_append_new(rf, json_pack("{s:s,s:s,s:s?}", "resource", "pods", "name", p->name,
						    "uid", p->uid));
		json_t *body = json_pack("{s:{s:O,s:o}}", "status", "allocation",
					 json_object_get(e, "allocation"), "reservedFor", rf);
		const char *rv = cached_rv(d, p->ns, mu__kjs(e, "claim"));
		if (body && rv) /* a precondition: the claim as the view read it */
			json_object_set_new(body, "metadata", json_pack("{s:s}", "resourceVersion", rv));
		char *txt = json_dumps(body, JSON_COMPACT);
		long st = 0;
		json_t *ans = NULL;
		mu__kc_json(c, "PATCH", path, "application/merge-patch+json", txt, 10000, &st, &ans);
		free(txt);
		if (st == 200) {
			cache_wrote(d, p->ns, mu__kjs(e, "claim"), json_object_get(e, "allocation"), rf);
			cache_rv(d, p->ns, mu__kjs(e, "claim"), ans);
		}
		json_decref(body);
		json_decref(ans);
		if (st == 409) {
			rc = conflict(d, "writing the allocation of", mu__kjs(e, "claim"), msg, len);
			break;
		}
		if (st != 200) {
			snprintf(msg, len, "writing the allocation of claim %s: HTTP %ld", mu__kjs(e, "claim"), st);
			rc = MU_EIO;
			break;
		}
	}
	mu__kc_free(c);
	return rc;
}

static bool pod_counts(const mu__kd_t *d, const json_t *tpls, json_t *pod);

/* The ResourceClaimTemplates (a new reference, or NULL when they cannot
 * be read): the cached list, read again when it lacks one that pod
 * names. */
static json_t *cached_tpls(mu__kd_t *d, const json_t *pod)
{
	for (int pass = 0; pass < 2; pass++) {
		dra_view_t v;
		json_t *tpls = NULL;
		char msg[300];
		if (view_cached(d, &v, &tpls, msg, sizeof msg))
			return NULL;
		view_release(&v);
		bool all = true;
		size_t i;
		json_t *e;
		const char *ns = mu__kjs(pod, "metadata.namespace");
		json_array_foreach(mu__kj(pod, "spec.resourceClaims"), i, e) {
			const char *tn = mu__kjs(e, "resourceClaimTemplateName");
			all &= !tn || find(tpls, ns ? ns : "default", tn) != NULL;
		}
		if (all || pass)
			return tpls;
		json_decref(tpls);
		d->dra_cache_ms -= VIEW_MS; /* one is new: read them again */
	}
	return NULL;
}

/* Adds the counted devices of pod's template claims to pod (a copy) as
 * requests, reading the templates (cached_tpls). */
static void add_counts(mu__kd_t *d, json_t *pod)
{
	json_t *tpls = cached_tpls(d, pod);
	if (tpls)
		pod_counts(d, tpls, pod);
	json_decref(tpls);
}

/* Adds "kubernetes.io/hostname In nodes" to every required node affinity
 * term of pod (ANDed with what each asks; one term when there is none). */
static void pin_nodes(json_t *pod, const json_t *nodes)
{
	json_t *spec = json_object_get(pod, "spec");
	if (!json_is_object(spec))
		return;
	json_t *aff = json_object_get(spec, "affinity");
	if (!json_is_object(aff))
		json_object_set_new(spec, "affinity", aff = json_object());
	json_t *na = json_object_get(aff, "nodeAffinity");
	if (!json_is_object(na))
		json_object_set_new(aff, "nodeAffinity", na = json_object());
	json_t *req = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
	if (!json_is_object(req))
		json_object_set_new(na, "requiredDuringSchedulingIgnoredDuringExecution", req = json_object());
	json_t *terms = json_object_get(req, "nodeSelectorTerms");
	if (!json_array_size(terms))
		json_object_set_new(req, "nodeSelectorTerms", terms = json_pack("[{}]"));
	size_t i;
	json_t *t;
	json_array_foreach(terms, i, t) {
		json_t *me = json_object_get(t, "matchExpressions");
		if (!json_is_array(me))
			json_object_set_new(t, "matchExpressions", me = json_array());
		json_array_append_new(me, json_pack("{s:s,s:s,s:O}", "key", "kubernetes.io/hostname",
						    "operator", "In", "values", nodes));
	}
}

json_t *mu__kd_dra_counted(mu__kd_t *d, const json_t *pod)
{
	d->dra_seen = true;
	if (!d->dra_ext)
		mu__kd_dra_counts(d);
	if (!json_object_size(json_object_get(d->dra_ext, "#classes")))
		return NULL;
	json_t *copy = json_deep_copy(pod);
	json_t *tpls = copy ? cached_tpls(d, pod) : NULL;
	bool any = tpls && pod_counts(d, tpls, copy);
	json_decref(tpls);
	if (!any) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

json_t *mu__kd_dra_pin(mu__kd_t *d, mu__kpod_t *p, const json_t *pod)
{
	char msg[600] = "", *node = NULL;
	json_t *plan = NULL, *copy = json_deep_copy(pod);
	json_t *keep = json_deep_copy(pod); /* pod may be p->dra itself */
	char *old_msg = p->dra_msg;
	json_decref(p->dra);
	p->dra_msg = NULL;
	p->dra_refused = false;
	p->dra = keep; /* the whole pod: a retry shapes it again */
	pod = keep;
	d->dra_seen = true;
	if (!d->dra_round)
		d->dra_round = 1; /* pods start at 0: due in the first round */
	if (!d->dra_ext) /* the counts, before the first pod is shaped */
		mu__kd_dra_counts(d);
	json_t *fits = json_array();
	int rc = mu__kd_dra_allocate(d, pod, NULL, fits, &node, &plan, msg, sizeof msg);
	json_t *sel = json_object();
	if (rc == MU_OK && json_object_size(json_object_get(d->dra_ext, "#classes")))
		add_counts(d, copy);
	if (rc == MU_OK && json_array_size(fits) > 1) {
		pin_nodes(copy, fits);
	} else if (rc == MU_OK) {
		json_object_set_new(sel, "kubernetes.io/hostname", json_string(node));
	} else {
		/* fits nowhere; the reason goes out as the pending message.  A
		 * refusal (MU_EINVAL) stands until the pod changes: no retry. */
		json_object_set_new(sel, "muster.io/dra-unallocatable", json_string("true"));
		char full[700];
		snprintf(full, sizeof full, "0 nodes can allocate its resource claims: %s", msg);
		bool again = old_msg && !strcmp(old_msg, full);
		p->dra_msg = strdup(full);
		p->dra_refused = rc == MU_EINVAL;
		if (!again) /* a retry that finds the same says nothing new */
			mu__klog(&d->log, 1, "dra %s: %s | pod=%s", p->key, msg, p->key);
	}
	json_t *ns = mu__kj(copy, "spec.nodeSelector");
	if (json_is_object(ns))
		json_object_update(ns, sel);
	else if (json_is_object(json_object_get(copy, "spec")))
		json_object_set(json_object_get(copy, "spec"), "nodeSelector", sel);
	json_decref(sel);
	json_decref(fits);
	json_decref(plan);
	free(node);
	free(old_msg);
	return copy;
}

bool mu__kd_dra_bind(mu__kd_t *d, mu__kpod_t *p, const char *node)
{
	char msg[600] = "", *at = NULL;
	json_t *plan = NULL;
	int rc = MU_ESTATE;
	/* a claim that changed since the shared view read it (409): once
	 * more, on a fresh read */
	for (int round = 0; rc == MU_ESTATE && round < 2; round++) {
		json_decref(plan);
		free(at);
		plan = NULL;
		at = NULL;
		rc = mu__kd_dra_allocate(d, p->dra, node, NULL, &at, &plan, msg, sizeof msg);
		if (rc == MU_OK)
			rc = mu__kd_dra_reserve(d, p, plan, msg, sizeof msg);
	}
	json_decref(plan);
	free(at);
	if (rc == MU_OK)
		return true;
	mu__klog(&d->log, 1, "dra %s on %s: %s | pod=%s", p->key, node, msg, p->key);
	char full[700];
	snprintf(full, sizeof full, "its resource claims cannot be allocated on %s: %s", node, msg);
	free(p->dra_msg);
	p->dra_msg = strdup(full);
	return false;
}


/* --- counted devices: the engine's view of them, for preemption --------------------- */

/* Whether class name cls is in d->dra_ext's counted list (the keys of any
 * node's entry carry RES_PREFIX CLASS). */
static bool counted(const mu__kd_t *d, const char *cls)
{
	char res[300];
	snprintf(res, sizeof res, RES_PREFIX "%s", cls);
	return json_object_get(json_object_get(d->dra_ext, "#classes"), res) != NULL;
}

/* The classes that the ResourceClaimTemplates' requests name (the first
 * subrequest of a firstAvailable list), whose devices are all node-local,
 * at most MAX_COUNTED, as {RES_PREFIX CLASS: true}. */
static json_t *counted_classes(const dra_view_t *v, const json_t *tpls)
{
	json_t *out = json_object(), *t, *rq;
	size_t i, k;
	mu_dra_view_t mv = {v->slices, v->classes, v->claims, v->nodes, v->rules};
	json_array_foreach(tpls, i, t) {
		json_array_foreach(mu__kj(t, "spec.spec.devices.requests"), k, rq) {
			const json_t *q = json_array_size(json_object_get(rq, "firstAvailable")) ?
					  json_array_get(json_object_get(rq, "firstAvailable"), 0) : rq;
			const char *cls = mu__kjs(q, "deviceClassName");
			char res[300], why[300];
			snprintf(res, sizeof res, RES_PREFIX "%s", cls ? cls : "");
			if (!cls || json_object_get(out, res) || json_object_size(out) >= MAX_COUNTED ||
			    mu_dra_class_devices(&mv, cls, NULL, why, sizeof why) != 0)
				continue;
			json_object_set_new(out, res, json_string(cls));
		}
	}
	return out;
}

/* Appends a cached node's object to the array arg. */
static void cached_node(void *arg, void *val)
{
	const mu__knode_t *n = val;
	json_t *obj = mu__knode_parse(n->text);
	if (obj)
		json_array_append_new(arg, obj);
}

/* The class of allocation result r's request in claim c ("REQ", or
 * "REQ/SUB" of a firstAvailable list), or NULL.  O(requests). */
static const char *result_class(const json_t *c, const char *req)
{
	const json_t *rq;
	size_t i, k;
	size_t n = req ? strcspn(req, "/") : 0;
	json_array_foreach(req ? mu__kj(c, "spec.devices.requests") : NULL, i, rq) {
		const char *name = mu__kjs(rq, "name");
		if (!name || strlen(name) != n || strncmp(name, req, n))
			continue;
		if (!req[n])
			return mu__kjs(rq, "deviceClassName");
		const json_t *sub;
		json_array_foreach(json_object_get(rq, "firstAvailable"), k, sub)
			if (mu__kjs(sub, "name") && !strcmp(mu__kjs(sub, "name"), req + n + 1))
				return mu__kjs(sub, "deviceClassName");
	}
	return NULL;
}

/* The node of the slice (driver, pool) that lists device, or NULL for a
 * device of no node's own slice.  O(slices x devices). */
static const char *device_node(const json_t *slices, const char *drv, const char *pool, const char *dev)
{
	const json_t *sl, *x;
	size_t i, k;
	json_array_foreach(drv && pool && dev ? slices : NULL, i, sl) {
		const char *sd = mu__kjs(sl, "spec.driver"), *sp = mu__kjs(sl, "spec.pool.name");
		if (!sd || !sp || strcmp(sd, drv) || strcmp(sp, pool) || !mu__kjs(sl, "spec.nodeName"))
			continue;
		json_array_foreach(mu__kj(sl, "spec.devices"), k, x)
			if (mu__kjs(x, "name") && !strcmp(mu__kjs(x, "name"), dev))
				return mu__kjs(sl, "spec.nodeName");
	}
	return NULL;
}

/* Whether the engine counts claim c's devices already: one made from a
 * template (POD_CLAIM) for a pod of ours, whose engine pod asks for them
 * (pod_counts, a Job's job_dra_counted).  O(reservedFor). */
static bool engine_counts(mu__kd_t *d, const json_t *c)
{
	if (!json_object_get(mu__kj(c, "metadata.annotations"), POD_CLAIM))
		return false;
	const char *ns = mu__kjs(c, "metadata.namespace");
	const json_t *rf;
	size_t i;
	json_array_foreach(mu__kj(c, "status.reservedFor"), i, rf) {
		char key[600];
		const char *n = mu__kjs(rf, "name");
		snprintf(key, sizeof key, "%s/%s", ns ? ns : "default", n ? n : "");
		const mu__kpod_t *p = n ? mu__kmap_get(&d->pods, key) : NULL;
		if (p && p->ours)
			return true;
	}
	return false;
}

/* The devices of the counted classes cls that claims the engine does not
 * count hold (another scheduler's pods', a named claim's, one allocated by
 * hand), per node: {NODE: {RES_PREFIX CLASS: n}}.  Without them the
 * engine would plan a pod onto a device taken meanwhile, and a Job's slot
 * planned there would be re-planned onto the same node (jobs.c).
 * O(claims x results x slices). */
static json_t *uncounted_taken(mu__kd_t *d, const dra_view_t *v, const json_t *cls)
{
	json_t *out = json_object();
	const json_t *c, *r;
	size_t i, k;
	json_array_foreach(out && json_object_size(cls) ? v->claims : NULL, i, c) {
		const json_t *res = mu__kj(c, "status.allocation.devices.results");
		if (!json_array_size(res) || engine_counts(d, c))
			continue;
		json_array_foreach(res, k, r) {
			const char *cl = result_class(c, mu__kjs(r, "request"));
			char key[300];
			snprintf(key, sizeof key, RES_PREFIX "%s", cl ? cl : "");
			const char *node = cl && json_object_get(cls, key) ?
				device_node(v->slices, mu__kjs(r, "driver"), mu__kjs(r, "pool"), mu__kjs(r, "device")) : NULL;
			if (!node)
				continue;
			json_t *e = json_object_get(out, node);
			if (!e)
				json_object_set_new(out, node, e = json_object());
			json_object_set_new(e, key, json_integer(json_integer_value(json_object_get(e, key)) + 1));
		}
	}
	return out;
}

void mu__kd_dra_counts(mu__kd_t *d)
{
	dra_view_t v = {0};
	json_t *tpls = NULL, *nodes = NULL;
	char msg[300];
	if (view_cached(d, &v, &tpls, msg, sizeof msg))
		return; /* the next pass tries again */
	if (!v.nodes) { /* the nodes the reflector keeps, not another GET of them all every 2 s */
		nodes = json_array();
		mu__kmap_each(&d->nodes, cached_node, nodes);
	}
	json_t *cls = counted_classes(&v, tpls), *ext = json_object(), *nd;
	json_t *taken = uncounted_taken(d, &v, cls);
	mu_dra_view_t mv = {v.slices, v.classes, v.claims, v.nodes ? v.nodes : nodes, v.rules};
	size_t i;
	json_object_set(ext, "#classes", cls);
	json_array_foreach(mv.nodes, i, nd) {
		const char *name = mu__kjs(nd, "metadata.name"), *res;
		json_t *e = json_object(), *cn;
		json_object_foreach(cls, res, cn) {
			long n = name ? mu_dra_class_devices(&mv, json_string_value(cn), name, msg, sizeof msg) : -1;
			n -= name ? (long)json_integer_value(json_object_get(json_object_get(taken, name), res)) : 0;
			if (n > 0)
				json_object_set_new(e, res, json_integer(n));
		}
		if (name)
			json_object_set_new(ext, name, e);
		else
			json_decref(e);
	}
	json_t *old = d->dra_ext;
	d->dra_ext = ext;
	const char *name;
	json_t *e;
	if (!d->dra_refeed)
		d->dra_refeed = json_array();
	json_object_foreach(ext, name, e) /* the nodes whose counts changed */
		if (name[0] != '#' && !json_equal(e, json_object_get(old, name)))
			json_array_append_new(d->dra_refeed, json_string(name));
	json_object_foreach(old, name, e)
		if (name[0] != '#' && !json_object_get(ext, name))
			json_array_append_new(d->dra_refeed, json_string(name));
	json_decref(old);
	json_decref(cls);
	json_decref(taken);
	json_decref(nodes);
	json_decref(tpls);
	view_release(&v);
}

void mu__kd_dra_node_ext(const mu__kd_t *d, mu_node_spec_t *s)
{
	const char *res;
	json_t *n;
	mu_ext_qty_t *ext = (mu_ext_qty_t *)s->ext;
	json_object_foreach(s->name ? json_object_get(d->dra_ext, s->name) : NULL, res, n)
		if (ext && s->next < MU_RES_MAX - MU_RES_NAMED0)
			ext[s->next++] = (mu_ext_qty_t){res, json_integer_value(n)};
}

/* Adds to pod (a copy) the counted devices its template claims take, as
 * requests of its first container: each request's count (ExactCount; the
 * first subrequest of a firstAvailable list), none for All or adminAccess.
 * Returns whether it asks for any. */
static bool pod_counts(const mu__kd_t *d, const json_t *tpls, json_t *pod)
{
	json_t *want = json_object(), *e, *t, *rq;
	size_t i, k, j;
	const char *ns = mu__kjs(pod, "metadata.namespace");
	json_array_foreach(mu__kj(pod, "spec.resourceClaims"), i, e) {
		const char *tn = mu__kjs(e, "resourceClaimTemplateName");
		json_array_foreach(tn ? tpls : NULL, j, t) {
			const char *n = mu__kjs(t, "metadata.name"), *s = mu__kjs(t, "metadata.namespace");
			if (!n || strcmp(n, tn) || strcmp(s ? s : "default", ns ? ns : "default"))
				continue;
			json_array_foreach(mu__kj(t, "spec.spec.devices.requests"), k, rq) {
				const json_t *q = json_array_size(json_object_get(rq, "firstAvailable")) ?
						  json_array_get(json_object_get(rq, "firstAvailable"), 0) : rq;
				const char *cls = mu__kjs(q, "deviceClassName"), *mode = mu__kjs(q, "allocationMode");
				const json_t *cnt = json_object_get(q, "count");
				char res[300];
				if (!cls || !counted(d, cls) || json_is_true(json_object_get(q, "adminAccess")) ||
				    (mode && !strcmp(mode, "All")))
					continue;
				snprintf(res, sizeof res, RES_PREFIX "%s", cls);
				json_int_t had = json_integer_value(json_object_get(want, res));
				json_object_set_new(want, res, json_integer(had + (json_integer_value(cnt) > 0 ?
								json_integer_value(cnt) : 1)));
			}
		}
	}
	json_t *c0 = json_array_get(mu__kj(pod, "spec.containers"), 0);
	bool any = json_object_size(want) > 0 && json_is_object(c0);
	if (any) {
		json_t *r = json_object_get(c0, "resources");
		if (!json_is_object(r))
			json_object_set_new(c0, "resources", r = json_object());
		json_t *req = json_object_get(r, "requests");
		if (!json_is_object(req))
			json_object_set_new(r, "requests", req = json_object());
		const char *res;
		json_object_foreach(want, res, t) {
			char num[32];
			snprintf(num, sizeof num, "%lld", (long long)json_integer_value(t));
			json_object_set_new(req, res, json_string(num));
		}
	}
	json_decref(want);
	return any;
}
