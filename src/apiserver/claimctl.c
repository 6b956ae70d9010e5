/*
 * claimctl.c - the resource claim controller of kube-controller-manager
 * (pkg/controller/resourceclaim), as far as structured parameters need it.
 *
 * For a pod that names a ResourceClaimTemplate (spec.resourceClaims[]
 * .resourceClaimTemplateName) it makes the pod's claim from the template:
 * generateName "POD-CLAIM-" (each part cut to 28 characters when the pair
 * is longer than 57, as the real controller does), the annotation
 * resource.kubernetes.io/pod-claim-name, and the pod as controlling owner;
 * then it records the name in the pod's status.resourceClaimStatuses.  A
 * claim it made before a lost status write is found again by its owner and
 * annotation, so a pod never gets two.
 *
 * For every claim it drops from status.reservedFor the pods that are gone
 * (or replaced under the same name: another uid) or finished (phase
 * Succeeded or Failed).  A claim reserved for no one is deallocated
 * (status.allocation removed): with structured parameters no driver
 * controller takes part, so the controller does it, and it takes off the
 * resource.kubernetes.io/delete-protection finalizer that the scheduler
 * put on when it allocated (a claim deleted while allocated goes then).  A
 * claim made for a pod that is gone or finished is deleted once it is
 * reserved for no one.
 *
 * Level-triggered, as jobctl.c: events mark pods and claims dirty and
 * mu__claimctl_sync() reconciles them from the store on the controller
 * thread.  Only pods whose object mentions resourceClaims are looked at, so
 * a cluster without claims pays a substring test per pod event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"

#define MAX_DIRTY 4096
#define CLAIM_ANN "resource.kubernetes.io/pod-claim-name"
/* The finalizer kube-scheduler puts on a claim it allocates. */
#define DELETE_PROTECTION "resource.kubernetes.io/delete-protection"

typedef struct dirty {
	char *key[MAX_DIRTY]; /* "ns/name" */
	int n;
	bool all;             /* overflowed: look at every object of the kind */
} dirty_t;

struct mu__claimctl {
	mu_apiserver_t *s;
	dirty_t pods, claims;
};

int mu__claimctl_new(mu_apiserver_t *s, mu__claimctl_t **out)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return MU_ENOMEM;
	(*out)->s = s;
	return MU_OK;
}

static void dirty_clear(dirty_t *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->key[i]);
	d->n = 0;
}

void mu__claimctl_free(mu__claimctl_t *cc)
{
	if (!cc)
		return;
	dirty_clear(&cc->pods);
	dirty_clear(&cc->claims);
	free(cc);
}

/* Marks ns/name; O(dirty). */
static void mark(dirty_t *d, const char *ns, const char *name)
{
	char key[600];
	if (!ns || !name)
		return;
	snprintf(key, sizeof key, "%s/%s", ns, name);
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->key[i], key))
			return;
	if (d->n == MAX_DIRTY) {
		d->all = true;
		return;
	}
	if ((d->key[d->n] = strdup(key)))
		d->n++;
}

void mu__claimctl_resync(mu__claimctl_t *cc)
{
	cc->pods.all = cc->claims.all = true;
}

/* Marks the claims a pod object names (by name, or through its status). */
static void mark_pod_claims(mu__claimctl_t *cc, const mu__obj_t *o)
{
	json_t *pod = mu__obj_parse(o);
	size_t i;
	json_t *e;
	json_array_foreach(mu__jget(pod, "spec.resourceClaims"), i, e)
		mark(&cc->claims, o->ns, mu__jstr(e, "resourceClaimName"));
	json_array_foreach(mu__jget(pod, "status.resourceClaimStatuses"), i, e)
		mark(&cc->claims, o->ns, mu__jstr(e, "resourceClaimName"));
	json_decref(pod);
}

void mu__claimctl_event(mu__claimctl_t *cc, const mu__wev_t *ev)
{
	const mu__obj_t *o = ev->obj;
	if (o->rt == MU__RT_RESOURCECLAIMS) {
		mark(&cc->claims, o->ns, o->name);
	} else if (o->rt == MU__RT_PODS && strstr(o->json, "\"resourceClaims\"")) {
		const char *ph = mu__obj_field(o, "status.phase");
		bool done = ev->type == MU__EV_DELETED || (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")));
		if (done)
			mark_pod_claims(cc, o);
		else
			mark(&cc->pods, o->ns, o->name);
	}
}

/* --- pods: claims from templates ---------------------------------------- */

typedef struct owned_ctx {
	const char *uid, *claim; /* the pod's uid, its claim's name in the pod */
} owned_ctx_t;

/* A claim made for this pod claim: owned by the pod, with the annotation. */
static bool made_for(void *ctx, const mu__obj_t *o)
{
	owned_ctx_t *c = ctx;
	char needle[128];
	snprintf(needle, sizeof needle, "\"uid\":\"%.80s\"", c->uid);
	if (!strstr(o->json, needle) || !strstr(o->json, CLAIM_ANN))
		return false;
	json_t *j = mu__obj_parse(o);
	const char *a = json_string_value(json_object_get(mu__jget(j, "metadata.annotations"), CLAIM_ANN));
	bool yes = a && !strcmp(a, c->claim);
	json_decref(j);
	return yes;
}

/* The claim object for pod claim pc of pod (ns, name, uid) from template
 * tpl (owned by the caller), named as the real controller names it. */
static json_t *claim_from(mu__claimctl_t *cc, const json_t *tpl, const char *ns, const char *pod,
			  const char *uid, const char *pc)
{
	char base[300], name[320], sfx[6];
	snprintf(base, sizeof base, "%s-%s-", pod, pc);
	if (strlen(base) > 57)
		snprintf(base, sizeof base, "%.28s-%.28s-", pod, pc);
	mu__name_suffix(cc->s, sfx);
	snprintf(name, sizeof name, "%s%s", base, sfx);
	json_t *md = json_deep_copy(mu__jget(tpl, "spec.metadata"));
	if (!json_is_object(md)) {
		json_decref(md);
		md = json_object();
	}
	json_object_set_new(md, "name", json_string(name));
	json_object_set_new(md, "generateName", json_string(base));
	json_object_set_new(md, "namespace", json_string(ns));
	if (!json_is_object(json_object_get(md, "annotations")))
		json_object_set_new(md, "annotations", json_object());
	json_object_set_new(json_object_get(md, "annotations"), CLAIM_ANN, json_string(pc));
	json_object_set_new(md, "ownerReferences",
			    json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "v1", "kind", "Pod", "name", pod,
				      "uid", uid, "controller", 1, "blockOwnerDeletion", 1));
	return json_pack("{s:s,s:s,s:o,s:O}", "apiVersion", "resource.k8s.io/v1beta1", "kind", "ResourceClaim",
			 "metadata", md, "spec", mu__jget(tpl, "spec.spec"));
}

/* Sets status.resourceClaimStatuses of the pod to ctx (an array). */
static int statuses_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (!cur || cur->deleting)
		return MU__MUT_KEEP;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	if (json_equal(mu__jget(o, "status.resourceClaimStatuses"), ctx)) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	mu__jset(o, "status.resourceClaimStatuses", json_deep_copy(ctx));
	*out = o;
	return MU__MUT_PUT;
}

/* The name recorded for pod claim pc in statuses, or NULL. */
static const char *recorded(const json_t *statuses, const char *pc)
{
	size_t i;
	json_t *e;
	json_array_foreach(statuses, i, e) {
		const char *n = mu__jstr(e, "name");
		if (n && !strcmp(n, pc))
			return mu__jstr(e, "resourceClaimName");
	}
	return NULL;
}

/* Finds the claim made earlier for one template pod claim, or builds a
 * new one into *make (owned) from its template; the name found or made goes
 * into statuses.  A missing template leaves it out (the pod waits).  Reads
 * only: the caller writes outside the store lock's reach here. */
static void one_template(mu__claimctl_t *cc, const json_t *pod, const json_t *rc, json_t *statuses,
			 json_t *make)
{
	const char *ns = mu__jstr(pod, "metadata.namespace"), *name = mu__jstr(pod, "metadata.name");
	const char *uid = mu__jstr(pod, "metadata.uid"), *pc = mu__jstr(rc, "name");
	const char *tn = mu__jstr(rc, "resourceClaimTemplateName");
	if (!pc || !tn || !uid || recorded(statuses, pc))
		return;
	owned_ctx_t f = {uid, pc};
	mu__page_t pg;
	if (mu__store_list(cc->s->store, MU__RT_RESOURCECLAIMS, ns, NULL, 1, made_for, &f, &pg) == MU_OK) {
		if (pg.n)
			json_array_append_new(statuses, json_pack("{s:s,s:s}", "name", pc, "resourceClaimName",
								  pg.objs[0]->name));
		size_t n = pg.n;
		mu__page_release(&pg);
		if (n)
			return;
	}
	mu__obj_t *to = mu__store_get(cc->s->store, MU__RT_RESOURCECLAIMTEMPLATES, ns, tn);
	json_t *tpl = to ? mu__obj_parse(to) : NULL;
	mu__obj_unref(to);
	json_t *claim = tpl ? claim_from(cc, tpl, ns, name, uid, pc) : NULL;
	if (claim) {
		json_array_append_new(statuses, json_pack("{s:s,s:s}", "name", pc, "resourceClaimName",
							  mu__jstr(claim, "metadata.name")));
		json_array_append_new(make, claim);
	}
	json_decref(tpl);
}

/* Gives a live pod the claims of its templates.  O(claims of the namespace)
 * per template claim without a recorded name. */
static void reconcile_pod(mu__claimctl_t *cc, const char *ns, const char *name)
{
	mu__obj_t *po = mu__store_get(cc->s->store, MU__RT_PODS, ns, name);
	json_t *pod = po && !po->deleting ? mu__obj_parse(po) : NULL;
	mu__obj_unref(po);
	const char *ph = mu__jstr(pod, "status.phase");
	if (!pod || (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")))) {
		json_decref(pod);
		return;
	}
	json_t *before = mu__jget(pod, "status.resourceClaimStatuses");
	json_t *statuses = json_is_array(before) ? json_deep_copy(before) : json_array(), *make = json_array();
	size_t i;
	json_t *rc;
	json_array_foreach(mu__jget(pod, "spec.resourceClaims"), i, rc)
		one_template(cc, pod, rc, statuses, make);
	if (json_array_size(statuses) != json_array_size(before)) {
		mu__wtx_t *tx;
		mu__store_begin(cc->s->store, &tx);
		bool ok = true;
		json_array_foreach(make, i, rc)
			ok &= mu__create_by(cc->s, tx, MU__RT_RESOURCECLAIMS, rc, "kube-controller-manager", NULL) >= 0;
		if (ok) /* a claim that could not be made is not recorded: tried again */
			mu__store_apply(tx, MU__RT_PODS, ns, name, statuses_fn, statuses, false, NULL);
		mu__store_commit(tx);
	}
	json_decref(make);
	json_decref(statuses);
	json_decref(pod);
}

/* --- claims: reservedFor, deallocation, deletion ------------------------ */

/* Whether pod ns/name is there (with uid, when given) and not finished. */
static bool pod_live(mu__claimctl_t *cc, const char *ns, const char *name, const char *uid)
{
	mu__obj_t *po = name ? mu__store_get(cc->s->store, MU__RT_PODS, ns, name) : NULL;
	json_t *pod = po ? mu__obj_parse(po) : NULL;
	mu__obj_unref(po);
	const char *pu = mu__jstr(pod, "metadata.uid"), *ph = mu__jstr(pod, "status.phase");
	bool live = pod && (!uid || (pu && !strcmp(pu, uid))) &&
		    !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")));
	json_decref(pod);
	return live;
}

/* Whether a reservation still counts: another kind's is someone else's to
 * manage; a pod's while the pod lives. */
static bool pod_holds(mu__claimctl_t *cc, const char *ns, const json_t *ref)
{
	const char *res = mu__jstr(ref, "resource"), *grp = mu__jstr(ref, "apiGroup");
	if (!res || strcmp(res, "pods") || (grp && *grp))
		return true;
	return pod_live(cc, ns, mu__jstr(ref, "name"), mu__jstr(ref, "uid"));
}

/* Removes the reservations in ctx (an array) from the current version of
 * the claim, so that one the scheduler added meanwhile stays; with no one
 * left, the allocation goes too (with structured parameters no driver
 * deallocates). */
static int unreserve_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	const json_t *dropped = ctx;
	if (!cur)
		return MU__MUT_KEEP;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	json_t *st = json_object_get(o, "status"), *keep = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(st, "reservedFor"), i, r) {
		bool drop = false;
		size_t k;
		json_t *d;
		json_array_foreach(dropped, k, d)
			drop |= json_equal(d, r);
		if (!drop)
			json_array_append(keep, r);
	}
	bool deleting = mu__jget(o, "metadata.deletionTimestamp") != NULL;
	if (json_array_size(keep))
		json_object_set(st, "reservedFor", keep);
	else {
		json_object_del(st, "reservedFor");
		json_object_del(st, "allocation"); /* no driver: deallocated here */
		/* unprotected once deallocated, as kube-controller-manager does */
		json_t *fin = mu__jget(o, "metadata.finalizers");
		for (size_t k = json_array_size(fin); k-- > 0;)
			if (json_is_string(json_array_get(fin, k)) &&
			    !strcmp(json_string_value(json_array_get(fin, k)), DELETE_PROTECTION))
				json_array_remove(fin, k);
		if (deleting && !json_array_size(fin)) {
			json_decref(keep);
			json_decref(o);
			return MU__MUT_DEL; /* it waited for the protection only */
		}
	}
	json_decref(keep);
	*out = o;
	return MU__MUT_PUT;
}

/* The pod a claim was made for (its controlling owner, when it carries the
 * annotation), or NULL. */
static const json_t *maker(const json_t *claim)
{
	if (!json_object_get(mu__jget(claim, "metadata.annotations"), CLAIM_ANN))
		return NULL;
	size_t i;
	json_t *r;
	json_array_foreach(mu__jget(claim, "metadata.ownerReferences"), i, r) {
		const char *k = mu__jstr(r, "kind"), *v = mu__jstr(r, "apiVersion");
		if (k && v && !strcmp(k, "Pod") && !strcmp(v, "v1") && json_is_true(json_object_get(r, "controller")))
			return r;
	}
	return NULL;
}

/* Drops finished and gone pods from a claim's reservedFor, deallocates a
 * claim reserved for no one, and deletes a made claim whose pod is done.
 * O(reservedFor) store reads. */
static void reconcile_claim(mu__claimctl_t *cc, const char *ns, const char *name)
{
	mu__obj_t *co = mu__store_get(cc->s->store, MU__RT_RESOURCECLAIMS, ns, name);
	json_t *claim = co ? mu__obj_parse(co) : NULL;
	mu__obj_unref(co);
	if (!claim)
		return;
	json_t *rf = mu__jget(claim, "status.reservedFor"), *drop = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(rf, i, r)
		if (!pod_holds(cc, ns, r))
			json_array_append(drop, r);
	size_t left = json_array_size(rf) - json_array_size(drop);
	const json_t *own = maker(claim);
	bool gone_owner = own && !pod_live(cc, ns, mu__jstr(own, "name"), mu__jstr(own, "uid"));
	bool protect = false;
	json_array_foreach(mu__jget(claim, "metadata.finalizers"), i, r)
		protect |= json_is_string(r) && !strcmp(json_string_value(r), DELETE_PROTECTION);
	/* the protection goes with the allocation, or from a claim being
	 * deleted that holds none (a claim the scheduler has just protected
	 * and not yet allocated keeps it) */
	bool deleting = mu__jget(claim, "metadata.deletionTimestamp") != NULL;
	bool change = json_array_size(drop) ||
		      (!left && (mu__jget(claim, "status.allocation") || (protect && deleting)));
	mu__wtx_t *tx;
	mu__store_begin(cc->s->store, &tx);
	if (change) /* first: a claim deleted unprotected goes at once */
		mu__store_apply(tx, MU__RT_RESOURCECLAIMS, ns, name, unreserve_fn, drop, false, NULL);
	if (gone_owner && !left)
		mu__delete_in(tx, MU__RT_RESOURCECLAIMS, ns, name, -1, NULL, NULL, false, NULL);
	mu__store_commit(tx);
	json_decref(drop);
	json_decref(claim);
}

/* --- the loop ------------------------------------------------------------ */

/* Runs fn on every object of rt (after an overflow or a resync). */
static void each(mu__claimctl_t *cc, int rt, void (*fn)(mu__claimctl_t *, const char *, const char *))
{
	mu__page_t pg;
	if (mu__store_list(cc->s->store, rt, NULL, NULL, 1000000, NULL, NULL, &pg) != MU_OK)
		return;
	for (size_t i = 0; i < pg.n; i++)
		if (rt != MU__RT_PODS || strstr(pg.objs[i]->json, "\"resourceClaims\""))
			fn(cc, pg.objs[i]->ns, pg.objs[i]->name);
	mu__page_release(&pg);
}

/* Reconciles what d marks, or every object of rt after an overflow. */
static void drain(mu__claimctl_t *cc, dirty_t *d, int rt,
		  void (*fn)(mu__claimctl_t *, const char *, const char *))
{
	if (d->all) {
		d->all = false;
		dirty_clear(d);
		each(cc, rt, fn);
		return;
	}
	int n = d->n;
	char *work[MAX_DIRTY];
	memcpy(work, d->key, (size_t)n * sizeof *work);
	d->n = 0;
	for (int i = 0; i < n; i++) {
		char *slash = strchr(work[i], '/');
		if (slash) {
			*slash = '\0';
			fn(cc, work[i], slash + 1);
		}
		free(work[i]);
	}
}

void mu__claimctl_sync(mu__claimctl_t *cc)
{
	drain(cc, &cc->pods, MU__RT_PODS, reconcile_pod);
	drain(cc, &cc->claims, MU__RT_RESOURCECLAIMS, reconcile_claim);
}
