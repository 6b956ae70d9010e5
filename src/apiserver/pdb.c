/*
 * pdb.c - PodDisruptionBudgets (policy/v1) and the check the Eviction API
 * makes against them, as kube-apiserver's eviction REST handler does:
 *
 *   - the PDBs of the pod's namespace whose selector matches its labels
 *     apply; more than one is refused (500, kube-apiserver's words);
 *   - expected pods are the matching pods that are not finished or being
 *     deleted; healthy ones are Running with Ready=True;
 *   - desired healthy = minAvailable (a count, or a percentage of expected
 *     rounded up), or expected - maxUnavailable (likewise);
 *   - a healthy pod may go while healthy - desired > 0; a pod that is not
 *     healthy may go while healthy >= desired (the default
 *     unhealthyPodEvictionPolicy IfHealthyBudget);
 *   - otherwise 429 TooManyRequests, "Cannot evict pod as it would violate
 *     the pod's disruption budget.", with a DisruptionBudget cause.
 *
 * kube-apiserver decides from the PDB's status, which its disruption
 * controller keeps: disruptionsAllowed 0 refuses, otherwise one is taken
 * from it in the same update.  muster up runs no disruption controller, so
 * a budget whose status has disruptionsAllowed (a client played that
 * controller) is decided that way, and the caller takes one from it in the
 * eviction's transaction; a budget without it is decided from the same
 * numbers counted from the pods at the time of the eviction.  Both happen
 * under the store's writer lock (evictions cannot race past a budget).
 * Cost: the pods and PDBs of one namespace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"

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

static bool healthy(const json_t *pod)
{
	const char *ph = mu__jstr(pod, "status.phase");
	if (!ph || strcmp(ph, "Running") || mu__jget(pod, "metadata.deletionTimestamp"))
		return false;
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(pod, "status.conditions"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "type")) ? json_string_value(json_object_get(c, "type")) : "",
			    "Ready"))
			return !strcmp(json_string_value(json_object_get(c, "status")) ? json_string_value(json_object_get(c, "status")) : "",
				       "True");
	return false;
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

typedef struct count {
	mu__sel_t *sel;
	long expected, healthy;
} count_t;

static bool count_pod(void *ctx, const mu__obj_t *o)
{
	count_t *c = ctx;
	json_t *p = mu__obj_parse(o);
	const char *ph = mu__jstr(p, "status.phase");
	if (p && mu__sel_match_json(c->sel, mu__jget(p, "metadata.labels")) && !o->deleting &&
	    !(ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")))) {
		c->expected++;
		c->healthy += healthy(p);
	}
	json_decref(p);
	return false; /* counted, not listed */
}

int mu__pdb_allows(mu_apiserver_t *s, const json_t *pod, char *msg, size_t len, mu__verr_t *e,
		   char *take, size_t take_len)
{
	if (take_len)
		take[0] = 0;
	const char *ns = mu__jstr(pod, "metadata.namespace");
	mu__page_t pg;
	if (!ns || mu__store_list(s->store, MU__RT_PDBS, ns, NULL, 1000, NULL, NULL, &pg) != MU_OK)
		return MU_OK;
	json_t *pdb = NULL;
	int matches = 0;
	for (size_t i = 0; i < pg.n; i++) {
		json_t *b = mu__obj_parse(pg.objs[i]);
		char text[4096];
		selector_text(mu__jget(b, "spec.selector"), text, sizeof text);
		mu__sel_t *sel = NULL;
		bool has_sel = json_is_object(mu__jget(b, "spec.selector"));
		if (has_sel && mu__sel_parse(text, false, &sel, msg, len) == MU_OK &&
		    mu__sel_match_json(sel, mu__jget(pod, "metadata.labels")) && matches++ == 0)
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
	const json_t *da = mu__jget(pdb, "status.disruptionsAllowed");
	if (json_is_integer(da)) { /* a controller's status: as kube-apiserver */
		int rc = MU_OK;
		if (json_integer_value(da) <= 0) {
			snprintf(msg, len, "Cannot evict pod as it would violate the pod's disruption budget.");
			mu__verr_add(e, "", "DisruptionBudget", "The disruption budget %s needs %lld healthy pods and has "
				     "%lld currently", mu__jstr(pdb, "metadata.name"),
				     (long long)json_integer_value(mu__jget(pdb, "status.desiredHealthy")),
				     (long long)json_integer_value(mu__jget(pdb, "status.currentHealthy")));
			rc = MU_ESTATE;
		} else {
			snprintf(take, take_len, "%s", mu__jstr(pdb, "metadata.name"));
		}
		json_decref(pdb);
		return rc;
	}
	char text[4096];
	selector_text(mu__jget(pdb, "spec.selector"), text, sizeof text);
	count_t c = {0};
	int rc = MU_OK;
	if (mu__sel_parse(text, false, &c.sel, msg, len) == MU_OK &&
	    mu__store_list(s->store, MU__RT_PODS, ns, NULL, 1, count_pod, &c, &pg) == MU_OK) {
		mu__page_release(&pg);
		long min = scaled(mu__jget(pdb, "spec.minAvailable"), c.expected);
		long maxu = scaled(mu__jget(pdb, "spec.maxUnavailable"), c.expected);
		long desired = min >= 0 ? min : maxu >= 0 ? c.expected - maxu : 0;
		if (desired < 0)
			desired = 0;
		bool ok = healthy(pod) ? c.healthy - desired > 0 : c.healthy >= desired;
		if (!ok) {
			snprintf(msg, len, "Cannot evict pod as it would violate the pod's disruption budget.");
			mu__verr_add(e, "", "DisruptionBudget", "The disruption budget %s needs %ld healthy pods and has "
				     "%ld currently", mu__jstr(pdb, "metadata.name"), desired, c.healthy);
			rc = MU_ESTATE;
		}
	}
	mu__sel_free(c.sel);
	json_decref(pdb);
	return rc;
}

int mu__pdb_take_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	if (!o)
		return MU_ENOENT;
	json_t *st = json_object_get(o, "status");
	json_t *da = json_object_get(st, "disruptionsAllowed");
	if (!json_is_integer(da) || json_integer_value(da) < 1) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	json_object_set_new(st, "disruptionsAllowed", json_integer(json_integer_value(da) - 1));
	*out = o;
	return MU__MUT_PUT;
}
