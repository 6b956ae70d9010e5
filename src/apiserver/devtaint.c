/*
 * devtaint.c - the device taint eviction controller of
 * kube-controller-manager (pkg/controller/devicetainteviction), as `muster
 * up` plays it: a pod that uses an allocated device with a NoExecute taint
 * it does not tolerate is evicted.
 *
 * The taint is the device's own (a ResourceSlice's devices[].basic.taints,
 * the pool's newest generation) or one a DeviceTaintRule adds.  When a
 * claim's pods must go is mu_dra_eviction_ms() (load/dra.c): the taint's
 * timeAdded plus the smallest tolerationSeconds of the allocation result's
 * NoExecute tolerations that match it; a matching one without seconds
 * keeps the pods.  A pod goes when it is scheduled (spec.nodeName), not
 * finished, not being deleted, and the claim is reserved for it (name and
 * uid in status.reservedFor), as the real controller does it: the condition
 * DisruptionTarget (reason DeletionByDeviceTaintManager) is written, the
 * pod is deleted with its uid as precondition (graceful, as kubectl
 * delete), and an Event DeviceTaintManagerEviction "Marking for deletion"
 * is recorded from component device-taint-eviction.  The claim controller
 * (claimctl.c) then unreserves and deallocates the claim.
 *
 * Level-triggered: events on slices, rules, claims and pods with claims
 * mark the controller dirty; mu__devtaint_sync() then reads the slices and
 * rules and, only when one of them mentions NoExecute, the classes, claims
 * and the pods claims are reserved for.  A pod that is due later (a
 * toleration with seconds) wakes the controller at that time.  A pod that
 * was due later and is not any more (the taint or rule went) gets the
 * Event DeviceTaintManagerEviction "Cancelling deletion", as the real
 * controller records when it drops a pending deletion.  Each
 * DeviceTaintRule gets the status condition EvictionInProgress of
 * Kubernetes 1.35 (rule_status): the pods that rule alone would evict and
 * have not gone yet, and those it evicted since the server started, in
 * the real controller's reasons and words; it is written at every sync
 * where it changed, not after the real controller's few seconds of delay.
 * Not done: the effect None (1.35), and PodGroup reservations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"
#include "muster/dra.h"

#define REASON "DeletionByDeviceTaintManager"
#define COMPONENT "device-taint-eviction"

struct mu__devtaint {
	mu_apiserver_t *s;
	bool dirty;
	int64_t next_ms; /* wall-clock ms when a pod is due, or -1 */
	json_t *later;   /* "ns/name" -> uid: pods due later at the last sync */
	json_t *evicted; /* rule uid -> pods it evicted since the server started */
};

int mu__devtaint_new(mu_apiserver_t *s, mu__devtaint_t **out)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return MU_ENOMEM;
	(*out)->s = s;
	(*out)->dirty = true;
	(*out)->next_ms = -1;
	(*out)->later = json_object();
	(*out)->evicted = json_object();
	if (!(*out)->later || !(*out)->evicted) {
		json_decref((*out)->later);
		json_decref((*out)->evicted);
		free(*out);
		*out = NULL;
		return MU_ENOMEM;
	}
	return MU_OK;
}

void mu__devtaint_free(mu__devtaint_t *d)
{
	if (d) {
		json_decref(d->later);
		json_decref(d->evicted);
	}
	free(d);
}

void mu__devtaint_resync(mu__devtaint_t *d)
{
	d->dirty = true;
}

void mu__devtaint_event(mu__devtaint_t *d, const mu__wev_t *ev)
{
	int rt = ev->obj->rt;
	if (rt == MU__RT_RESOURCESLICES || rt == MU__RT_DEVICETAINTRULES || rt == MU__RT_RESOURCECLAIMS ||
	    rt == MU__RT_DEVICECLASSES || (rt == MU__RT_PODS && strstr(ev->obj->json, "\"resourceClaims\"")))
		d->dirty = true;
}

/* Whether some object of rt has needle in its text.  O(objects). */
static bool mentions(mu__devtaint_t *d, int rt, const char *needle)
{
	mu__page_t pg;
	if (mu__store_list(d->s->store, rt, NULL, NULL, 1000000, NULL, NULL, &pg) != MU_OK)
		return false;
	bool yes = false;
	for (size_t i = 0; i < pg.n && !yes; i++)
		yes = strstr(pg.objs[i]->json, needle) != NULL;
	mu__page_release(&pg);
	return yes;
}

/* Every object of rt, parsed, into a new array.  O(objects). */
static json_t *all_of(mu__devtaint_t *d, int rt)
{
	json_t *arr = json_array();
	mu__page_t pg;
	if (!arr || mu__store_list(d->s->store, rt, NULL, NULL, 1000000, NULL, NULL, &pg) != MU_OK)
		return arr;
	for (size_t i = 0; i < pg.n; i++) {
		json_t *o = mu__obj_parse(pg.objs[i]);
		if (o)
			json_array_append_new(arr, o);
	}
	mu__page_release(&pg);
	return arr;
}

/* The object cur parsed into *o (owned) when it exists, is not being
 * deleted and is still the one of uid: MU__MUT_PUT; else MU__MUT_KEEP
 * (nothing to write), or MU_ENOMEM.  O(cur's size). */
static int parse_if_uid(const mu__obj_t *cur, const char *uid, json_t **o)
{
	*o = NULL;
	if (!cur || cur->deleting)
		return MU__MUT_KEEP;
	if (!(*o = mu__obj_parse(cur)))
		return MU_ENOMEM;
	const char *u = mu__jstr(*o, "metadata.uid");
	if (u && !strcmp(u, uid))
		return MU__MUT_PUT;
	json_decref(*o);
	*o = NULL;
	return MU__MUT_KEEP;
}

typedef struct evict_ctx {
	mu_apiserver_t *s;
	const char *uid;
} evict_ctx_t;

/* Marks the pod (if it is still the one of uid and not being deleted)
 * with the DisruptionTarget condition, written as kube-controller-manager
 * writes a status. */
static int disrupt_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	evict_ctx_t *c = ctx;
	json_t *o;
	int rc = parse_if_uid(cur, c->uid, &o);
	if (rc != MU__MUT_PUT)
		return rc;
	json_t *before = json_deep_copy(o);
	if (!before) {
		json_decref(o);
		return MU_ENOMEM;
	}
	mu__set_condition(o, "DisruptionTarget", "True", REASON, "Device Taint manager: deleting due to NoExecute taint");
	mu__mf_controller(mu__type(c->s->types, MU__RT_PODS), before, o, "kube-controller-manager", true);
	json_decref(before);
	*out = o;
	return MU__MUT_PUT;
}

/* The Event the real controller records for an eviction ("Marking for
 * deletion") or for one it gave up before its time ("Cancelling
 * deletion"). */
static void evict_event(mu_apiserver_t *s, mu__wtx_t *tx, const char *ns, const char *name, const char *uid,
			const char *msg)
{
	char ts[40], en[300], sfx[6];
	mu__timestamp(ts, sizeof ts, false);
	mu__name_suffix(s, sfx);
	snprintf(en, sizeof en, "%.200s.%s", name, sfx);
	json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, s:{s:s}, "
			      "s:s, s:s, s:i, s:s}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", en, "namespace", ns,
			      "involvedObject", "kind", "Pod", "apiVersion", "v1", "namespace", ns, "name", name,
			      "uid", uid, "reason", "DeviceTaintManagerEviction", "message", msg,
			      "type", "Normal", "source", "component", COMPONENT, "firstTimestamp", ts,
			      "lastTimestamp", ts, "count", 1, "reportingComponent", COMPONENT);
	if (e)
		mu__create_by(s, tx, MU__RT_EVENTS, e, "kube-controller-manager", NULL);
	json_decref(e);
}

/* Evicts pod ns/name of uid: the condition, the delete (uid
 * precondition), the Event, in one transaction. */
static void evict(mu__devtaint_t *d, const char *ns, const char *name, const char *uid)
{
	evict_ctx_t c = {d->s, uid};
	mu__wtx_t *tx;
	if (mu__store_begin(d->s->store, &tx) != MU_OK)
		return;
	int rc = mu__store_apply(tx, MU__RT_PODS, ns, name, disrupt_fn, &c, false, NULL);
	if (rc == MU__MUT_PUT) {
		mu__delete_in(tx, MU__RT_PODS, ns, name, -1, uid, NULL, false, NULL);
		evict_event(d->s, tx, ns, name, uid, "Marking for deletion");
	}
	mu__store_commit(tx);
}

/* Whether a reservation names a pod that this controller would evict:
 * the same uid, scheduled, not finished, not being deleted. */
static bool evictable(mu__devtaint_t *d, const char *ns, const json_t *ref)
{
	const char *res = mu__jstr(ref, "resource"), *grp = mu__jstr(ref, "apiGroup");
	const char *name = mu__jstr(ref, "name"), *uid = mu__jstr(ref, "uid");
	if (!res || strcmp(res, "pods") || (grp && *grp) || !name || !uid)
		return false;
	mu__obj_t *po = mu__store_get(d->s->store, MU__RT_PODS, ns, name);
	json_t *pod = po && !po->deleting ? mu__obj_parse(po) : NULL;
	mu__obj_unref(po);
	const char *pu = mu__jstr(pod, "metadata.uid"), *ph = mu__jstr(pod, "status.phase");
	const char *node = mu__jstr(pod, "spec.nodeName");
	bool yes = pu && !strcmp(pu, uid) && node && *node &&
		   !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")));
	json_decref(pod);
	return yes;
}

static int64_t wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* The pods that were due later at the last sync and are not any more
 * (the taint went, a toleration now keeps them) get the Event "Cancelling
 * deletion", as the real controller records when it drops a pod's
 * pending deletion; later becomes now_later.  O(pods due). */
static void cancel_dropped(mu__devtaint_t *d, json_t *now_later)
{
	const char *key;
	json_t *uid;
	json_object_foreach(d->later, key, uid) {
		if (json_object_get(now_later, key))
			continue;
		char ns[260];
		const char *slash = strchr(key, '/');
		if (!slash || (size_t)(slash - key) >= sizeof ns)
			continue;
		memcpy(ns, key, (size_t)(slash - key));
		ns[slash - key] = '\0';
		mu__obj_t *po = mu__store_get(d->s->store, MU__RT_PODS, ns, slash + 1);
		json_t *pod = po && !po->deleting ? mu__obj_parse(po) : NULL;
		mu__obj_unref(po);
		const char *pu = mu__jstr(pod, "metadata.uid");
		mu__wtx_t *tx;
		if (pu && !strcmp(pu, json_string_value(uid)) && mu__store_begin(d->s->store, &tx) == MU_OK) {
			evict_event(d->s, tx, ns, slash + 1, pu, "Cancelling deletion");
			mu__store_commit(tx);
		}
		json_decref(pod);
	}
	json_decref(d->later);
	d->later = now_later;
}

/* --- DeviceTaintRule status: the EvictionInProgress condition ---------- */

/* The slices without their devices' own taints, so that a view of them
 * and one rule says what that rule alone does.  New reference. */
static json_t *untainted(const json_t *slices)
{
	json_t *out = json_deep_copy(slices), *sl, *dv;
	size_t i, k;
	json_array_foreach(out, i, sl)
		json_array_foreach(mu__jget(sl, "spec.devices"), k, dv)
			json_object_del(json_object_get(dv, "basic"), "taints");
	return out;
}

/* What rule r alone does to claim c: when its pods go, or -1. */
static int64_t rule_due(const json_t *bare, const json_t *classes, const json_t *claims,
			const json_t *r, const json_t *c, int64_t now)
{
	json_t *one = json_pack("[O]", r);
	mu_dra_view_t v = {bare, classes, claims, NULL, one};
	int64_t when = one ? mu_dra_eviction_ms(&v, c, now, NULL, 0) : -1;
	json_decref(one);
	return when;
}

typedef struct cond_ctx {
	const char *uid;
	json_t *cond;   /* the condition to write */
} cond_ctx_t;

/* Writes the EvictionInProgress condition of the rule (if it is still
 * the one of uid), as kube-controller-manager applies the rule's status. */
static int cond_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	cond_ctx_t *c = ctx;
	json_t *o;
	int rc = parse_if_uid(cur, c->uid, &o);
	if (rc != MU__MUT_PUT)
		return rc;
	json_t *st = json_object_get(o, "status");
	if (!json_is_object(st))
		json_object_set_new(o, "status", st = json_object());
	json_t *conds = json_array(), *x;
	size_t i;
	json_array_foreach(json_object_get(st, "conditions"), i, x)
		if (!mu__jstr(x, "type") || strcmp(mu__jstr(x, "type"), "EvictionInProgress"))
			json_array_append(conds, x);
	json_array_append(conds, c->cond);
	json_object_set_new(st, "conditions", conds);
	*out = o;
	return MU__MUT_PUT;
}

/* Appends "1 pod " or "N pods " to b. */
static void pods_n(char *b, size_t len, long long n)
{
	size_t at = strlen(b);
	if (at >= len)
		return;
	if (n == 1)
		snprintf(b + at, len - at, "1 pod ");
	else
		snprintf(b + at, len - at, "%lld pods ", n);
}

/* Sets each rule's EvictionInProgress condition from the pods pending for
 * it (pending: rule uid -> {"n": pods, "ns": {namespace: 1}}) and those it
 * evicted, as the real controller computes it (reasons PodsPendingEviction,
 * Completed, NotStarted, OtherEffect; the messages "N pods need to be
 * evicted in N different namespaces." and "N pods evicted since starting
 * the controller."), writing only a condition that changed.  O(rules). */
static void rule_status(mu__devtaint_t *d, const json_t *rules, const json_t *pending)
{
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		const char *uid = mu__jstr(r, "metadata.uid"), *eff = mu__jstr(r, "spec.taint.effect");
		if (!uid)
			continue;
		json_t *p = json_object_get(pending, uid);
		long long np = json_integer_value(json_object_get(p, "n"));
		long long nns = (long long)json_object_size(json_object_get(p, "ns"));
		long long nev = json_integer_value(json_object_get(d->evicted, uid));
		const char *status = "False", *reason;
		char msg[400] = "";
		if (eff && !strcmp(eff, "NoExecute")) {
			if (np > 0) {
				reason = "PodsPendingEviction";
				status = "True";
				if (np == 1)
					snprintf(msg, sizeof msg, "1 pod needs to be evicted in ");
				else
					snprintf(msg, sizeof msg, "%lld pods need to be evicted in ", np);
				size_t at = strlen(msg);
				if (nns == 1)
					snprintf(msg + at, sizeof msg - at, "1 namespace.");
				else
					snprintf(msg + at, sizeof msg - at, "%lld different namespaces.", nns);
			} else {
				reason = nev > 0 ? "Completed" : "NotStarted";
			}
		} else {
			reason = "OtherEffect";
			snprintf(msg, sizeof msg, "Eviction only happens for the NoExecute effect.");
		}
		if (nev > 0) {
			if (*msg)
				strncat(msg, " ", sizeof msg - strlen(msg) - 1);
			pods_n(msg, sizeof msg, nev);
			strncat(msg, "evicted since starting the controller.", sizeof msg - strlen(msg) - 1);
		}
		json_int_t gen = json_integer_value(mu__jget(r, "metadata.generation"));
		const json_t *old = NULL, *x;
		size_t k;
		json_array_foreach(mu__jget(r, "status.conditions"), k, x)
			if (mu__jstr(x, "type") && !strcmp(mu__jstr(x, "type"), "EvictionInProgress"))
				old = x;
		if (old && !strcmp(mu__jstr(old, "status") ? mu__jstr(old, "status") : "", status) &&
		    !strcmp(mu__jstr(old, "reason") ? mu__jstr(old, "reason") : "", reason) &&
		    !strcmp(mu__jstr(old, "message") ? mu__jstr(old, "message") : "", msg) &&
		    json_integer_value(json_object_get(old, "observedGeneration")) == gen)
			continue;
		char ts[40];
		mu__timestamp(ts, sizeof ts, false);
		cond_ctx_t c = {uid, json_pack("{s:s,s:s,s:s,s:s,s:I,s:s}", "type", "EvictionInProgress",
					     "status", status, "reason", reason, "message", msg,
					     "observedGeneration", gen, "lastTransitionTime", ts)};
		if (c.cond)
			mu__store_mutate(d->s->store, MU__RT_DEVICETAINTRULES, NULL, mu__jstr(r, "metadata.name"),
					 cond_fn, &c, false, NULL);
		json_decref(c.cond);
	}
}

/* Adds pod ns/name to the pending counts of every NoExecute rule that
 * alone would evict it (claim c). */
static void note_pending(json_t *pending, const json_t *rules, const json_t *bare, const json_t *classes,
			 const json_t *claims, const json_t *c, const char *ns, int64_t now)
{
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		const char *uid = mu__jstr(r, "metadata.uid"), *eff = mu__jstr(r, "spec.taint.effect");
		if (!uid || !eff || strcmp(eff, "NoExecute") || rule_due(bare, classes, claims, r, c, now) < 0)
			continue;
		json_t *p = json_object_get(pending, uid);
		if (!p)
			json_object_set_new(pending, uid, p = json_pack("{s:i,s:{}}", "n", 0, "ns"));
		json_object_set_new(p, "n", json_integer(json_integer_value(json_object_get(p, "n")) + 1));
		json_object_set_new(json_object_get(p, "ns"), ns, json_true());
	}
}

/* Counts an eviction of claim c's pod for every NoExecute rule that alone
 * makes it due by now. */
static void note_evicted(mu__devtaint_t *d, const json_t *rules, const json_t *bare, const json_t *classes,
			 const json_t *claims, const json_t *c, int64_t now)
{
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		const char *uid = mu__jstr(r, "metadata.uid"), *eff = mu__jstr(r, "spec.taint.effect");
		if (!uid || !eff || strcmp(eff, "NoExecute"))
			continue;
		int64_t when = rule_due(bare, classes, claims, r, c, now);
		if (when >= 0 && when <= now)
			json_object_set_new(d->evicted, uid,
					    json_integer(json_integer_value(json_object_get(d->evicted, uid)) + 1));
	}
}

void mu__devtaint_sync(mu__devtaint_t *d)
{
	int64_t now = wall_ms();
	if (!d->dirty && (d->next_ms < 0 || now < d->next_ms))
		return;
	d->dirty = false;
	d->next_ms = -1;
	json_t *later = json_object();
	if (!later)
		return;
	if (!mentions(d, MU__RT_RESOURCESLICES, "\"NoExecute\"") &&
	    !mentions(d, MU__RT_DEVICETAINTRULES, "\"NoExecute\"")) {
		cancel_dropped(d, later);
		if (mentions(d, MU__RT_DEVICETAINTRULES, "\"effect\"")) { /* rules of other effects */
			json_t *rules = all_of(d, MU__RT_DEVICETAINTRULES), *none = json_object();
			rule_status(d, rules, none);
			json_decref(none);
			json_decref(rules);
		}
		return; /* the common case: nothing evicts */
	}
	json_t *slices = all_of(d, MU__RT_RESOURCESLICES), *rules = all_of(d, MU__RT_DEVICETAINTRULES);
	json_t *classes = all_of(d, MU__RT_DEVICECLASSES), *claims = all_of(d, MU__RT_RESOURCECLAIMS);
	json_t *bare = json_array_size(rules) ? untainted(slices) : NULL, *pending = json_object();
	mu_dra_view_t v = {slices, classes, claims, NULL, rules};
	size_t i, k;
	json_t *c, *r;
	json_array_foreach(claims, i, c) {
		if (!json_array_size(mu__jget(c, "status.reservedFor")) || !mu__jget(c, "status.allocation"))
			continue;
		char why[300];
		int64_t when = mu_dra_eviction_ms(&v, c, now, why, sizeof why);
		if (when < 0)
			continue;
		const char *ns = mu__jstr(c, "metadata.namespace");
		json_array_foreach(mu__jget(c, "status.reservedFor"), k, r) {
			if (!ns || !evictable(d, ns, r))
				continue;
			if (when <= now) {
				evict(d, ns, mu__jstr(r, "name"), mu__jstr(r, "uid"));
				if (bare)
					note_evicted(d, rules, bare, classes, claims, c, now);
				continue;
			}
			if (bare && pending)
				note_pending(pending, rules, bare, classes, claims, c, ns, now);
			if (d->next_ms < 0 || when < d->next_ms)
				d->next_ms = when;
			char key[600];
			snprintf(key, sizeof key, "%s/%s", ns, mu__jstr(r, "name"));
			json_object_set_new(later, key, json_string(mu__jstr(r, "uid")));
		}
	}
	cancel_dropped(d, later);
	if (pending)
		rule_status(d, rules, pending);
	json_decref(pending);
	json_decref(bare);
	json_decref(slices);
	json_decref(rules);
	json_decref(classes);
	json_decref(claims);
}
