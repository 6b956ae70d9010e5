/*
 * pdb.c - PodDisruptionBudgets (policy/v1): their status, kept as
 * kube-controller-manager's disruption controller keeps it
 * (pkg/controller/disruption), and the check the Eviction API makes against
 * it, as kube-apiserver's eviction REST handler does
 * (pkg/registry/core/pod/storage/eviction.go).
 *
 * The controller (mu__pdbc_*, on the controller thread of server.c) works
 * per namespace: a change of a pod or a budget marks its namespace, and a
 * sync recomputes the budgets there:
 *   - the pods are those of the namespace the selector matches (a missing
 *     selector matches none, an empty one all), whatever their phase;
 *   - minAvailable as a count: desiredHealthy is it, expectedPods the pods;
 *     maxUnavailable or a percentage need each pod's controller's scale
 *     (the Deployment of its ReplicaSet, the ReplicaSet, the StatefulSet,
 *     as kube's finders): pods without a controller are left out, and a
 *     pod whose controller is not found, or has no scale subresource, is an
 *     error, on which the budget fails safe (disruptionsAllowed 0,
 *     DisruptionAllowed False, reason SyncFailed, the error as message);
 *   - currentHealthy counts the pods that are Ready, not being deleted and
 *     not in disruptedPods (pods an eviction took, forgotten once deleted or
 *     after 2 minutes);
 *   - disruptionsAllowed = currentHealthy - desiredHealthy, 0 when that is
 *     negative or no pod is expected; observedGeneration; the condition
 *     DisruptionAllowed (True/SufficientPods or False/InsufficientPods).
 * A status is written only when it changed, and only over the version it was
 * computed from (an eviction in between makes it compute again).  Each
 * computation records kube's Events (NoPods, CalculateExpectedPodCountFailed,
 * UnmanagedPods: pdb_event), which the controller thread creates.
 *
 * The eviction: a pod that is Pending, finished or being deleted goes without
 * a budget; the budgets of its namespace whose selector matches apply (more
 * than one: 500, kube-apiserver's words); a pod that is not Ready goes while
 * currentHealthy >= desiredHealthy > 0 (unhealthyPodEvictionPolicy
 * IfHealthyBudget, the default) or always (AlwaysAllow); otherwise a status
 * older than the budget's generation is 429 ("still being processed"),
 * disruptionsAllowed 0 is 429 with the DisruptionBudget cause, and else the
 * eviction takes one from it and notes the pod in disruptedPods, in its own
 * transaction, under the store's writer lock (evictions cannot race past a
 * budget).  Cost: the pods and budgets of one namespace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

/* The label selector text of a metav1.LabelSelector ("" selects all). */
static void selector_text(const json_t *sel, char *buf, size_t len)
{
	buf[0] = '\0';
	const char *k;
	json_t *v;
	size_t n = 0;
	json_object_foreach(json_object_get(sel, "matchLabels"), k, v)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s=%s", n ? "," : "", k,
				      json_string_value(v) ? json_string_value(v) : "");
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, e) {
		const char *key = json_string_value(json_object_get(e, "key"));
		const char *op = json_string_value(json_object_get(e, "operator"));
		if (!key || !op || n >= len)
			continue;
		if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s%s", n ? "," : "", *op == 'D' ? "!" : "", key);
			continue;
		}
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s %s (", n ? "," : "", key,
				      !strcmp(op, "In") ? "in" : "notin");
		size_t j;
		json_t *x;
		json_array_foreach(json_object_get(e, "values"), j, x)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", j ? "," : "",
					      json_string_value(x) ? json_string_value(x) : "");
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, ")");
	}
	if (n >= len)
		buf[len - 1] = '\0';
}

/* A count or "N%" of total, rounded up; -1 when neither. */
static long scaled(const json_t *v, long total)
{
	if (json_is_integer(v))
		return (long)json_integer_value(v);
	const char *s = json_string_value(v);
	char *end;
	long p = s ? strtol(s, &end, 10) : -1;
	if (!s || end == s || strcmp(end, "%"))
		return -1;
	return (p * total + 99) / 100;
}


/* The budget's selector, parsed; NULL when it has none (matches nothing)
 * or cannot be parsed (kube's eviction skips such a budget). */
static mu__sel_t *pdb_selector(const json_t *pdb)
{
	const json_t *js = mu__jget(pdb, "spec.selector");
	if (!json_is_object(js))
		return NULL;
	char text[4096], msg[200];
	selector_text(js, text, sizeof text);
	mu__sel_t *sel = NULL;
	if (mu__sel_parse(text, false, &sel, msg, sizeof msg) != MU_OK)
		return NULL;
	return sel;
}

static bool pod_ready(const json_t *pod)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(pod, "status.conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && !strcmp(t, "Ready")) {
			const char *st = json_string_value(json_object_get(c, "status"));
			return st && !strcmp(st, "True");
		}
	}
	return false;
}

int mu__pdb_allows(mu_apiserver_t *s, const json_t *pod, char *msg, size_t len, mu__verr_t *e,
		   char *take, size_t take_len)
{
	if (take_len)
		take[0] = 0;
	const char *ns = mu__jstr(pod, "metadata.namespace");
	const char *ph = mu__jstr(pod, "status.phase");
	if (!ns || mu__jget(pod, "metadata.deletionTimestamp") ||
	    (ph && (!strcmp(ph, "Pending") || !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))))
		return MU_OK; /* canIgnorePDB */
	mu__page_t pg;
	if (mu__store_list(s->store, MU__RT_PDBS, ns, NULL, 1000, NULL, NULL, &pg) != MU_OK)
		return MU_OK;
	json_t *pdb = NULL;
	int matches = 0;
	for (size_t i = 0; i < pg.n; i++) {
		json_t *b = mu__obj_parse(pg.objs[i]);
		mu__sel_t *sel = pdb_selector(b);
		if (sel && mu__sel_match_json(sel, mu__jget(pod, "metadata.labels")) && matches++ == 0)
			pdb = json_incref(b);
		mu__sel_free(sel);
		json_decref(b);
	}
	mu__page_release(&pg);
	if (matches > 1) {
		json_decref(pdb);
		snprintf(msg, len, "This pod has more than one PodDisruptionBudget, which the eviction subresource "
			 "does not support.");
		return MU_ELIMIT;
	}
	if (!pdb)
		return MU_OK;
	const char *name = mu__jstr(pdb, "metadata.name");
	long long cur = json_integer_value(mu__jget(pdb, "status.currentHealthy"));
	long long want = json_integer_value(mu__jget(pdb, "status.desiredHealthy"));
	long long allowed = json_integer_value(mu__jget(pdb, "status.disruptionsAllowed"));
	const char *policy = mu__jstr(pdb, "spec.unhealthyPodEvictionPolicy");
	int rc = MU_OK;
	if (!pod_ready(pod) && ((policy && !strcmp(policy, "AlwaysAllow")) || (cur >= want && want > 0))) {
		rc = MU_OK; /* an unready pod: the budget is not spent */
	} else if (json_integer_value(mu__jget(pdb, "status.observedGeneration")) <
		   json_integer_value(mu__jget(pdb, "metadata.generation"))) {
		snprintf(msg, len, "Cannot evict pod as it would violate the pod's disruption budget.");
		mu__verr_add(e, "", "DisruptionBudget", "The disruption budget %s is still being processed by the "
			     "server.", name);
		rc = MU_ESTATE;
	} else if (allowed <= 0) {
		snprintf(msg, len, "Cannot evict pod as it would violate the pod's disruption budget.");
		mu__verr_add(e, "", "DisruptionBudget", "The disruption budget %s needs %lld healthy pods and has "
			     "%lld currently", name, want, cur);
		rc = MU_ESTATE;
	} else {
		snprintf(take, take_len, "%s", name);
	}
	json_decref(pdb);
	return rc;
}

/* Sets the DisruptionAllowed condition of status st (kube's
 * UpdateDisruptionAllowedCondition, or its fail-safe with reason SyncFailed
 * and a message): lastTransitionTime moves only when the status does. */
static void set_condition(json_t *st, bool allowed, const char *reason, const char *message, json_int_t gen)
{
	json_t *conds = json_object_get(st, "conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(st, "conditions", conds);
	}
	json_t *c = NULL;
	size_t i;
	json_t *x;
	json_array_foreach(conds, i, x) {
		const char *t = json_string_value(json_object_get(x, "type"));
		if (t && !strcmp(t, "DisruptionAllowed"))
			c = x;
	}
	const char *status = allowed ? "True" : "False";
	if (!c) {
		c = json_object();
		json_object_set_new(c, "type", json_string("DisruptionAllowed"));
		json_array_append_new(conds, c);
	}
	const char *old = json_string_value(json_object_get(c, "status"));
	if (!old || strcmp(old, status)) {
		char ts[40];
		mu__timestamp(ts, sizeof ts, false);
		json_object_set_new(c, "lastTransitionTime", json_string(ts));
	}
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "reason", json_string(reason));
	json_object_set_new(c, "message", json_string(message ? message : ""));
	json_object_set_new(c, "observedGeneration", json_integer(gen));
}

int mu__pdb_take_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	if (!o)
		return MU_ENOENT;
	json_t *st = json_object_get(o, "status");
	json_t *da = json_object_get(st, "disruptionsAllowed");
	if (!json_is_integer(da) || json_integer_value(da) < 1) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	json_int_t left = json_integer_value(da) - 1;
	json_object_set_new(st, "disruptionsAllowed", json_integer(left));
	if (left == 0)
		set_condition(st, false, "InsufficientPods", "", json_integer_value(json_object_get(st, "observedGeneration")));
	if (ctx) { /* the pod, for the controller not to count it meanwhile */
		json_t *dp = json_object_get(st, "disruptedPods");
		if (!json_is_object(dp)) {
			dp = json_object();
			json_object_set_new(st, "disruptedPods", dp);
		}
		char ts[40];
		mu__timestamp(ts, sizeof ts, false);
		json_object_set_new(dp, ctx, json_string(ts));
	}
	*out = o;
	return MU__MUT_PUT;
}

/* --- the disruption controller ------------------------------------------ */

#define PDBC_PENDING 4096 /* namespaces waiting */
#define PDBC_WORK 16      /* namespaces per sync */
#define DELETION_TIMEOUT 120 /* s: kube's DeletionTimeout for disruptedPods */

struct mu__pdbc {
	mu_apiserver_t *s;
	json_t *dirty; /* namespace -> true */
	int64_t recheck; /* wall s: a disruptedPods entry runs out then (0: none) */
	json_t *evout;   /* new Events for the controller thread to write */
};

int mu__pdbc_new(mu_apiserver_t *s, mu__pdbc_t **out)
{
	mu__pdbc_t *c = calloc(1, sizeof *c);
	if (!c || !(c->dirty = json_object()) || !(c->evout = json_array())) {
		if (c)
			json_decref(c->dirty);
		free(c);
		return MU_ENOMEM;
	}
	c->s = s;
	*out = c;
	return MU_OK;
}

void mu__pdbc_free(mu__pdbc_t *c)
{
	if (!c)
		return;
	json_decref(c->dirty);
	json_decref(c->evout);
	free(c);
}

void mu__pdbc_event(mu__pdbc_t *c, const mu__wev_t *ev)
{
	int rt = ev->obj->rt;
	if ((rt == MU__RT_PODS || rt == MU__RT_PDBS) && json_object_size(c->dirty) < PDBC_PENDING)
		json_object_set_new(c->dirty, ev->obj->ns, json_true());
}

static int resync_page(void *ctx, mu__page_t *pg)
{
	mu__pdbc_t *c = ctx;
	for (size_t i = 0; i < pg->n && json_object_size(c->dirty) < PDBC_PENDING; i++)
		json_object_set_new(c->dirty, pg->objs[i]->ns, json_true());
	return 0;
}

void mu__pdbc_resync(mu__pdbc_t *c)
{
	(void)mu__store_each(c->s->store, MU__RT_PDBS, NULL, 1000, NULL, NULL, resync_page, c);
}

/* Whether pod o matches the selector ctx (under the store lock: labels
 * only, nothing parsed). */
static bool selected(void *ctx, const mu__obj_t *o)
{
	return mu__sel_match_labels(ctx, o);
}

/* The pods of namespace ns that sel selects, parsed outside the store lock
 * (a new array; empty without a selector). */
static json_t *selected_pods(mu_apiserver_t *s, const char *ns, mu__sel_t *sel)
{
	json_t *pods = json_array();
	mu__page_t pg;
	if (!sel || !pods || mu__store_list(s->store, MU__RT_PODS, ns, NULL, (size_t)1 << 30, selected, sel, &pg) != MU_OK)
		return pods;
	for (size_t i = 0; i < pg.n; i++) {
		json_t *p = mu__obj_parse(pg.objs[i]);
		if (p)
			json_array_append_new(pods, p);
	}
	mu__page_release(&pg);
	return pods;
}

/* The controller of pod p, or NULL (metav1.GetControllerOf). */
static const json_t *controller_of(const json_t *p)
{
	size_t i;
	json_t *r;
	json_array_foreach(mu__jget(p, "metadata.ownerReferences"), i, r)
		if (json_is_true(json_object_get(r, "controller")))
			return r;
	return NULL;
}

/* Object rt/ns/name as JSON (caller decrefs) when its uid is uid, else
 * NULL: a lister's Get followed by kube's UID check. */
static json_t *get_if_uid(mu_apiserver_t *s, int rt, const char *ns, const char *name, const char *uid)
{
	mu__obj_t *o = mu__store_get(s->store, rt, ns, name);
	json_t *j = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	if (j && strcmp(uid, mu__jstr(j, "metadata.uid") ? mu__jstr(j, "metadata.uid") : "")) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* Whether reference r names kind in one of groups g1, g2 (kube's
 * verifyGroupKind; g2 may be NULL). */
static bool ref_is(const json_t *r, const char *kind, const char *g1, const char *g2)
{
	const char *av = mu__jstr(r, "apiVersion"), *k = mu__jstr(r, "kind");
	const char *slash = av ? strchr(av, '/') : NULL;
	size_t gl = slash ? (size_t)(slash - av) : 0;
	if (!k || strcmp(k, kind))
		return false;
	return (strlen(g1) == gl && !strncmp(av, g1, gl)) || (g2 && strlen(g2) == gl && !strncmp(av, g2, gl));
}

/* Records the scale (spec.replicas) of controller j in found (by uid);
 * returns 1. */
static int found_scale(json_t *found, json_t *j)
{
	json_object_set_new(found, mu__jstr(j, "metadata.uid") ? mu__jstr(j, "metadata.uid") : "",
			    json_integer(json_integer_value(mu__jget(j, "spec.replicas"))));
	json_decref(j);
	return 1;
}

/* kube's finders for controller reference r of a pod in ns, in their
 * order: getPodDeployment (a ReplicaSet whose controller is a Deployment:
 * the Deployment's scale), getPodReplicaSet (one with no Deployment as
 * controller), getPodStatefulSet, then getScaleController (any kind with a
 * scale subresource, through it; a served kind without one is an error,
 * an unknown kind a mapping error).  ReplicationControllers are not
 * served.  1: the controller's scale is now in found; 0: none found; -1:
 * error (why). */
static int find_scale(mu_apiserver_t *s, const json_t *r, const char *ns, json_t *found, char *why, size_t len)
{
	const char *name = mu__jstr(r, "name") ? mu__jstr(r, "name") : "";
	const char *uid = mu__jstr(r, "uid") ? mu__jstr(r, "uid") : "";
	if (ref_is(r, "ReplicaSet", "apps", "extensions")) {
		json_t *rs = get_if_uid(s, MU__RT_REPLICASETS, ns, name, uid);
		const json_t *ctl = rs ? controller_of(rs) : NULL;
		if (ctl && ref_is(ctl, "Deployment", "apps", "extensions")) {
			json_t *d = get_if_uid(s, MU__RT_DEPLOYMENTS, ns, mu__jstr(ctl, "name") ? mu__jstr(ctl, "name") : "",
					       mu__jstr(ctl, "uid") ? mu__jstr(ctl, "uid") : "");
			json_decref(rs);
			if (d)
				return found_scale(found, d);
		} else if (rs && (!ctl || strcmp(mu__jstr(ctl, "kind") ? mu__jstr(ctl, "kind") : "", "Deployment"))) {
			return found_scale(found, rs);
		} else {
			json_decref(rs);
		}
	}
	if (ref_is(r, "StatefulSet", "apps", NULL)) {
		json_t *ss = get_if_uid(s, MU__RT_STATEFULSETS, ns, name, uid);
		if (ss)
			return found_scale(found, ss);
	}
	const char *av = mu__jstr(r, "apiVersion") ? mu__jstr(r, "apiVersion") : "";
	const char *kind = mu__jstr(r, "kind") ? mu__jstr(r, "kind") : "";
	const char *slash = strchr(av, '/');
	size_t gl = slash ? (size_t)(slash - av) : 0;
	for (int rt = 0; rt < mu__types_end(s->types); rt++) {
		const mu__rtype_t *t = mu__type(s->types, rt);
		if (!t || strcmp(t->kind, kind) || strlen(t->group) != gl || strncmp(t->group, av, gl))
			continue;
		if (!(t->subs & MU__SUB_SCALE)) {
			snprintf(why, len, "%s%s%s does not implement the scale subresource", t->plural,
				 *t->group ? "." : "", t->group);
			return -1;
		}
		json_t *j = get_if_uid(s, rt, ns, name, uid); /* its scale: not found or another uid is nil */
		return j ? found_scale(found, j) : 0;
	}
	snprintf(why, len, "no matches for kind \"%s\" in version \"%s\"", kind, av);
	return -1;
}

/* kube's getExpectedScale over the pods a budget selects: pods without a
 * controller are left out (*unmanaged is set, kube's unmanagedPods); each
 * other pod's controller is found (find_scale) and the scales of the
 * distinct controllers are summed; a pod whose controller is not found is
 * the error "found no controllers for pod". Returns the count, or -1 with
 * why.  Reads one or two objects per pod. */
static long expected_scale(mu_apiserver_t *s, const json_t *pods, char *why, size_t len, bool *unmanaged)
{
	size_t i;
	json_t *p;
	json_t *found = json_object();
	long total = 0;
	json_array_foreach(pods, i, p) {
		const json_t *r = controller_of(p);
		if (!r) {
			*unmanaged = true;
			continue;
		}
		if (json_object_get(found, mu__jstr(r, "uid") ? mu__jstr(r, "uid") : ""))
			continue;
		int rc = find_scale(s, r, mu__jstr(p, "metadata.namespace") ? mu__jstr(p, "metadata.namespace") : "",
				    found, why, len);
		if (rc == 0)
			snprintf(why, len, "found no controllers for pod \"%s\"",
				 mu__jstr(p, "metadata.name") ? mu__jstr(p, "metadata.name") : "");
		if (rc <= 0) {
			json_decref(found);
			return -1;
		}
	}
	const char *k;
	json_t *v;
	json_object_foreach(found, k, v)
		total += (long)json_integer_value(v);
	json_decref(found);
	return total;
}

typedef struct pdb_status {
	const char *rv;    /* the version computed from */
	json_t *status;    /* the new status, or NULL for the fail-safe */
	const char *why;   /* the fail-safe's message */
	bool stale;        /* the budget changed since: compute again */
} pdb_status_t;

/* Writes a computed status over the version it was computed from; KEEP when
 * the budget changed since (it is computed again) or nothing differs. */
static int pdb_status_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	pdb_status_t *ps = ctx;
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	if (!o)
		return MU_ENOENT;
	const char *rv = mu__jstr(o, "metadata.resourceVersion");
	if (!rv || strcmp(rv, ps->rv)) {
		json_decref(o);
		ps->stale = true;
		return MU__MUT_KEEP;
	}
	json_t *st = json_object_get(o, "status");
	if (!json_is_object(st)) {
		st = json_object();
		json_object_set_new(o, "status", st);
	}
	json_t *before = json_deep_copy(st);
	if (ps->status) {
		json_object_update(st, ps->status);
		if (!json_object_size(json_object_get(st, "disruptedPods")))
			json_object_del(st, "disruptedPods");
		json_int_t allowed = json_integer_value(json_object_get(st, "disruptionsAllowed"));
		set_condition(st, allowed > 0, allowed > 0 ? "SufficientPods" : "InsufficientPods", "",
			      json_integer_value(json_object_get(st, "observedGeneration")));
	} else {
		json_object_set_new(st, "disruptionsAllowed", json_integer(0));
		set_condition(st, false, "SyncFailed", ps->why,
			      json_integer_value(json_object_get(st, "observedGeneration")));
	}
	/* the transition time is the only thing a rewrite alone changes */
	bool same = json_equal(before, st);
	if (!same) {
		json_t *c1 = json_deep_copy(before), *c2 = json_deep_copy(st);
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(c1, "conditions"), i, x)
			json_object_del(x, "lastTransitionTime");
		json_array_foreach(json_object_get(c2, "conditions"), i, x)
			json_object_del(x, "lastTransitionTime");
		same = json_equal(c1, c2);
		json_decref(c1);
		json_decref(c2);
	}
	json_decref(before);
	if (same) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	*out = o;
	return MU__MUT_PUT;
}

/* --- Events ------------------------------------------------------------- */

/* Go's String() of a metav1.LabelSelector (generated.pb.go), which the
 * UnmanagedPods message prints with %v: "nil" for none. */
static void selector_go(const json_t *sel, char *buf, size_t len)
{
	if (!json_is_object(sel)) {
		snprintf(buf, len, "nil");
		return;
	}
	size_t n = (size_t)snprintf(buf, len, "&LabelSelector{MatchLabels:map[string]string{");
	const json_t *ml = json_object_get(sel, "matchLabels");
	const char **keys = calloc(json_object_size(ml) + 1, sizeof *keys);
	size_t nk = 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)ml, k, v)
		if (keys)
			keys[nk++] = k;
	for (size_t i = 1; i < nk; i++) /* sorted, as Go prints a map */
		for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (size_t i = 0; i < nk; i++)
		n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s: %s,", keys[i],
				      json_string_value(json_object_get(ml, keys[i])) ?
					      json_string_value(json_object_get(ml, keys[i])) : "");
	free(keys);
	n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
			      "},MatchExpressions:[]LabelSelectorRequirement{");
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, e) {
		n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
				      "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[",
				      mu__jstr(e, "key") ? mu__jstr(e, "key") : "",
				      mu__jstr(e, "operator") ? mu__jstr(e, "operator") : "");
		size_t j;
		json_t *x;
		json_array_foreach(json_object_get(e, "values"), j, x)
			n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s%s", j ? " " : "",
					      json_string_value(x) ? json_string_value(x) : "");
		n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "],},");
	}
	snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "},}");
}

/* An Event about budget pdb, as client-go's event recorder writes the
 * disruption controller's (source component "controllermanager"), named
 * NAME.<hex nanoseconds> and queued for the controller thread, which
 * writes it through its correlator (server.c, events_corr.c): a repeat of
 * the same type, reason and message about the same budget adds to the
 * count of the Event written before.  No store write here. */
static void pdb_event(mu__pdbc_t *c, const json_t *pdb, const char *type, const char *reason, const char *msg)
{
	const char *ns = mu__jstr(pdb, "metadata.namespace"), *name = mu__jstr(pdb, "metadata.name");
	const char *uid = mu__jstr(pdb, "metadata.uid");
	if (!ns || !name || !uid)
		return;
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	char en[300];
	snprintf(en, sizeof en, "%.230s.%llx", name,
		 (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
	json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:{s:s}, "
			      "s:s, s:s, s:i, s:s, s:s, s:s}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", en, "namespace", ns,
			      "involvedObject", "kind", "PodDisruptionBudget", "namespace", ns, "name", name, "uid", uid,
			      "apiVersion", "policy/v1", "resourceVersion",
			      mu__jstr(pdb, "metadata.resourceVersion") ? mu__jstr(pdb, "metadata.resourceVersion") : "",
			      "reason", reason, "message", msg, "source", "component", "controllermanager",
			      "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "type", type, "reportingComponent",
			      "controllermanager", "reportingInstance", "");
	if (e)
		json_array_append_new(c->evout, e);
}

json_t *mu__pdbc_take_events(mu__pdbc_t *c)
{
	json_t *out = c->evout;
	c->evout = json_array();
	if (!c->evout) {
		c->evout = out;
		return json_array();
	}
	return out;
}

/* Computes one budget's status from the pods of its namespace and writes
 * it; true when it must be computed again (it changed meanwhile). */
static bool sync_pdb(mu__pdbc_t *c, const json_t *pdb, int64_t now)
{
	mu__sel_t *sel = pdb_selector(pdb);
	json_t *mine = selected_pods(c->s, mu__jstr(pdb, "metadata.namespace"), sel);
	mu__sel_free(sel);
	size_t i;
	json_t *p;
	char why[300] = "";
	long expected = 0, desired = 0;
	const json_t *minav = mu__jget(pdb, "spec.minAvailable"), *maxun = mu__jget(pdb, "spec.maxUnavailable");
	bool fail = false;
	if (json_array_size(mine) == 0)
		pdb_event(c, pdb, "Normal", "NoPods", "No matching pods found");
	if (maxun || json_is_string(minav)) {
		bool unmanaged = false;
		expected = expected_scale(c->s, mine, why, sizeof why, &unmanaged);
		fail = expected < 0;
		if (fail) {
			char m[400];
			snprintf(m, sizeof m, "Failed to calculate the number of expected pods: %s", why);
			pdb_event(c, pdb, "Warning", "CalculateExpectedPodCountFailed", m);
		} else if (unmanaged) {
			char seltext[600], m[1200];
			selector_go(mu__jget(pdb, "spec.selector"), seltext, sizeof seltext);
			snprintf(m, sizeof m, "Pods selected by this PodDisruptionBudget (selector: %s) were found to be "
				 "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may "
				 "result in undefined behavior. To account for these pods please set \".spec.minAvailable\" "
				 "field of the PDB to an integer value.", seltext);
			pdb_event(c, pdb, "Warning", "UnmanagedPods", m);
		}
		if (!fail && maxun) {
			long m = scaled(maxun, expected);
			desired = m < 0 ? 0 : expected - m;
		} else if (!fail) {
			desired = scaled(minav, expected);
		}
	} else if (json_is_integer(minav)) {
		desired = (long)json_integer_value(minav);
		expected = (long)json_array_size(mine);
	}
	if (desired < 0)
		desired = 0;
	/* disruptedPods: kept for pods that exist, are not being deleted and
	 * were taken less than DELETION_TIMEOUT ago */
	json_t *disrupted = json_object();
	const json_t *olddp = mu__jget(pdb, "status.disruptedPods");
	long healthy = 0;
	json_array_foreach(mine, i, p) {
		if (mu__jget(p, "metadata.deletionTimestamp"))
			continue;
		const char *pn = mu__jstr(p, "metadata.name");
		const char *when = pn ? json_string_value(json_object_get(olddp, pn)) : NULL;
		int64_t t = when ? mu__parse_rfc3339(when) : -1;
		if (when && t >= 0 && t + DELETION_TIMEOUT > now) {
			json_object_set_new(disrupted, pn, json_string(when));
			if (!c->recheck || t + DELETION_TIMEOUT < c->recheck)
				c->recheck = t + DELETION_TIMEOUT;
			continue;
		}
		healthy += pod_ready(p);
	}
	json_decref(mine);
	long allowed = healthy - desired;
	if (expected <= 0 || allowed < 0)
		allowed = 0;
	pdb_status_t ps = {mu__jstr(pdb, "metadata.resourceVersion"), NULL, why, false};
	if (!fail) {
		ps.status = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "currentHealthy", (json_int_t)healthy,
				      "desiredHealthy", (json_int_t)desired, "expectedPods", (json_int_t)expected,
				      "disruptionsAllowed", (json_int_t)allowed, "observedGeneration",
				      json_integer_value(mu__jget(pdb, "metadata.generation")), "disruptedPods", disrupted);
		disrupted = NULL;
	}
	json_decref(disrupted);
	if (!ps.rv || (!fail && !ps.status))
		return false;
	int rc = mu__store_mutate(c->s->store, MU__RT_PDBS, mu__jstr(pdb, "metadata.namespace"),
				  mu__jstr(pdb, "metadata.name"), pdb_status_fn, &ps, false, NULL);
	json_decref(ps.status);
	return ps.stale || (rc < 0 && rc != MU_ENOENT);
}

/* Recomputes every budget of namespace ns; true when one must be computed
 * again. */
static bool sync_ns(mu__pdbc_t *c, const char *ns, int64_t now)
{
	mu__page_t pg;
	if (mu__store_list(c->s->store, MU__RT_PDBS, ns, NULL, 1000, NULL, NULL, &pg) != MU_OK)
		return false;
	bool again = false;
	for (size_t i = 0; i < pg.n; i++) {
		json_t *b = mu__obj_parse(pg.objs[i]);
		if (b && !mu__jget(b, "metadata.deletionTimestamp"))
			again |= sync_pdb(c, b, now);
		json_decref(b);
	}
	mu__page_release(&pg);
	return again;
}

void mu__pdbc_sync(mu__pdbc_t *c)
{
	int64_t now = mu__now_s();
	if (c->recheck && now >= c->recheck) { /* a disruptedPods entry ran out */
		c->recheck = 0;
		mu__pdbc_resync(c);
	}
	const char *ns;
	json_t *v, *tmp;
	int work = 0;
	json_t *again = json_array();
	json_object_foreach_safe(c->dirty, tmp, ns, v) {
		if (work++ >= PDBC_WORK)
			break;
		if (sync_ns(c, ns, now))
			json_array_append_new(again, json_string(ns));
		json_object_del(c->dirty, ns);
	}
	size_t i;
	json_t *x;
	json_array_foreach(again, i, x)
		json_object_set_new(c->dirty, json_string_value(x), json_true());
	json_decref(again);
}

bool mu__pdbc_busy(const mu__pdbc_t *c)
{
	return json_object_size(c->dirty) > 0;
}
