/*
 * rbac_escalate.c - RBAC's escalation prevention, as kube-apiserver's RBAC
 * REST storage does it (pkg/registry/rbac/{role,clusterrole,rolebinding,
 * clusterrolebinding}/policybased, validation/rule.go, policy_comparator.go,
 * policy_compact.go).
 *
 * A write of a Role or ClusterRole is refused (403) unless the requester
 * is in system:masters, may `escalate` roles (clusterroles) in that scope,
 * or already holds every rule the role grants (in the role's namespace;
 * cluster-wide for a ClusterRole).  Setting a ClusterRole's aggregationRule
 * needs every permission ("must have cluster-admin privileges to use the
 * aggregationRule").  A write of a RoleBinding or ClusterRoleBinding is
 * refused unless the requester may `bind` the referenced role, or holds
 * its rules.  An update that changes only ownerReferences and finalizers
 * (what the garbage collector writes) passes.  The 403 text is kube's:
 * `user "NAME" (groups=["G" ...]) is attempting to grant RBAC permissions
 * not currently held:` then each missing rule.
 *
 * Cost: the requester's rules are read once (every ClusterRoleBinding and
 * the namespace's RoleBindings, and the roles they name); the comparison is
 * |the role's rules broken down| x |the requester's rules|.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

/* --- kube's Covers --------------------------------------------------- */

static bool has_str(const json_t *arr, const char *v)
{
	size_t i;
	json_t *x;
	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(x);
		if (s && !strcmp(s, v))
			return true;
	}
	return false;
}

/* The one string of a one-element array (or NULL). */
static const char *one(const json_t *arr)
{
	return json_string_value(json_array_get(arr, 0));
}

static bool url_covers(const char *owner, const char *path)
{
	size_t l = strlen(owner);
	return !strcmp(owner, path) || (l && owner[l - 1] == '*' && !strncmp(owner, path, l - 1));
}

/* Whether owner rule o covers subrule r (one verb, group, resource, name
 * or one verb and URL), as kube's ruleCovers. */
static bool rule_covers(const json_t *o, const json_t *r)
{
	const json_t *ov = json_object_get(o, "verbs"), *rv = json_object_get(r, "verbs");
	if (!has_str(ov, "*") && !(one(rv) && has_str(ov, one(rv))))
		return false;
	const json_t *rurl = json_object_get(r, "nonResourceURLs");
	if (json_array_size(rurl)) {
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(o, "nonResourceURLs"), i, x)
			if (json_string_value(x) && url_covers(json_string_value(x), one(rurl)))
				return true;
		return false;
	}
	const json_t *og = json_object_get(o, "apiGroups"), *ores = json_object_get(o, "resources");
	const char *g = one(json_object_get(r, "apiGroups")), *res = one(json_object_get(r, "resources"));
	if (!g || !res)
		return false;
	if (!has_str(og, "*") && !has_str(og, g))
		return false;
	if (!has_str(ores, "*") && !has_str(ores, res))
		return false;
	const json_t *on = json_object_get(o, "resourceNames");
	const char *n = one(json_object_get(r, "resourceNames"));
	if (!n)
		return !json_array_size(on);
	return !json_array_size(on) || has_str(on, n);
}

static json_t *arr1(const char *s)
{
	return json_pack("[s]", s);
}

/* kube's breakdownRule: one subrule per group x resource x verb (x name),
 * then one per URL x verb; appended to out. */
static void breakdown(const json_t *rule, json_t *out)
{
	const json_t *gs = json_object_get(rule, "apiGroups"), *rs = json_object_get(rule, "resources");
	const json_t *vs = json_object_get(rule, "verbs"), *ns = json_object_get(rule, "resourceNames");
	size_t i, j, k, l;
	json_t *g, *r, *v, *n;
	json_array_foreach(gs, i, g) {
		json_array_foreach(rs, j, r) {
			json_array_foreach(vs, k, v) {
				if (!json_is_string(g) || !json_is_string(r) || !json_is_string(v))
					continue;
				if (!json_array_size(ns)) {
					json_array_append_new(out, json_pack("{s:o, s:o, s:o}", "apiGroups",
									     arr1(json_string_value(g)), "resources",
									     arr1(json_string_value(r)), "verbs",
									     arr1(json_string_value(v))));
					continue;
				}
				json_array_foreach(ns, l, n)
					if (json_is_string(n))
						json_array_append_new(
							out, json_pack("{s:o, s:o, s:o, s:o}", "apiGroups",
								       arr1(json_string_value(g)), "resources",
								       arr1(json_string_value(r)), "resourceNames",
								       arr1(json_string_value(n)), "verbs",
								       arr1(json_string_value(v))));
			}
		}
	}
	json_array_foreach(json_object_get(rule, "nonResourceURLs"), i, g)
		json_array_foreach(vs, k, v)
			if (json_is_string(g) && json_is_string(v))
				json_array_append_new(out, json_pack("{s:o, s:o}", "nonResourceURLs",
								     arr1(json_string_value(g)), "verbs",
								     arr1(json_string_value(v))));
}

json_t *mu__rbac_uncovered(const json_t *owner, const json_t *servant)
{
	json_t *subs = json_array(), *out = json_array();
	size_t i, j;
	json_t *r, *o;
	json_array_foreach(servant, i, r)
		breakdown(r, subs);
	json_array_foreach(subs, i, r) {
		bool covered = false;
		json_array_foreach(owner, j, o) {
			if (rule_covers(o, r)) {
				covered = true;
				break;
			}
		}
		if (!covered)
			json_array_append(out, r);
	}
	json_decref(subs);
	return out;
}

/* --- the message ----------------------------------------------------- */

/* Go's %q of a []string: ["a" "b"]. */
static void quoted_list(const json_t *arr, char *out, size_t cap)
{
	size_t l = (size_t)snprintf(out, cap, "[");
	size_t i;
	json_t *x;
	json_array_foreach(arr, i, x) {
		if (l >= cap)
			break;
		l += (size_t)snprintf(out + l, cap - l, "%s\"%s\"", i ? " " : "", json_string_value(x) ? json_string_value(x) : "");
	}
	if (l < cap)
		snprintf(out + l, cap - l, "]");
}

/* rbacv1helpers.CompactString: the non-empty lists in kube's order. */
static void compact_string(const json_t *r, char *out, size_t cap)
{
	static const char *const k[] = {"apiGroups", "resources", "nonResourceURLs", "resourceNames", "verbs"};
	static const char *const g[] = {"APIGroups", "Resources", "NonResourceURLs", "ResourceNames", "Verbs"};
	size_t l = (size_t)snprintf(out, cap, "{");
	int parts = 0;
	for (int i = 0; i < 5 && l < cap; i++) {
		const json_t *a = json_object_get(r, k[i]);
		if (!json_array_size(a))
			continue;
		char q[1024];
		quoted_list(a, q, sizeof q);
		l += (size_t)snprintf(out + l, cap - l, "%s%s:%s", parts++ ? ", " : "", g[i], q);
	}
	if (l < cap)
		snprintf(out + l, cap - l, "}");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void mu__rbac_missing_text(const json_t *missing, char *out, size_t cap)
{
	/* kube's CompactRules: a rule with one group, one resource and
	 * verbs only takes in the verbs of later such rules on the same
	 * group and resource */
	json_t *comp = json_array();
	size_t i, j;
	json_t *r, *c;
	json_array_foreach(missing, i, r) {
		bool simple = json_object_size(r) == 3 && json_array_size(json_object_get(r, "apiGroups")) == 1 &&
			      json_array_size(json_object_get(r, "resources")) == 1 && json_object_get(r, "verbs");
		bool merged = false;
		json_array_foreach(comp, j, c) {
			if (!simple || json_object_size(c) != 3 || !json_object_get(c, "resources") ||
			    json_array_size(json_object_get(c, "resources")) != 1 ||
			    !json_equal(json_object_get(c, "apiGroups"), json_object_get(r, "apiGroups")) ||
			    !json_equal(json_object_get(c, "resources"), json_object_get(r, "resources")))
				continue;
			json_array_extend(json_object_get(c, "verbs"), json_object_get(r, "verbs"));
			merged = true;
			break;
		}
		if (!merged)
			json_array_append_new(comp, json_deep_copy(r));
	}
	size_t n = json_array_size(comp), k = 0;
	char **lines = calloc(n ? n : 1, sizeof *lines);
	json_array_foreach(comp, i, c) {
		char buf[2048];
		compact_string(c, buf, sizeof buf);
		bool dup = false; /* a set, as sets.NewString */
		for (j = 0; j < k && !dup; j++)
			dup = !strcmp(lines[j], buf);
		if (!dup && lines && (lines[k] = strdup(buf)))
			k++;
	}
	qsort(lines, k, sizeof *lines, cmp_str);
	size_t l = 0;
	out[0] = '\0';
	for (j = 0; j < k; j++) {
		if (l < cap)
			l += (size_t)snprintf(out + l, cap - l, "%s%s", j ? "\n" : "", lines[j]);
		free(lines[j]);
	}
	free(lines);
	json_decref(comp);
}

/* --- the requester's rules ------------------------------------------- */

typedef struct collect {
	mu_apiserver_t *s;
	const mu__user_t *u;
	json_t *rules;
	int errs;
} collect_t;

/* The rules of role ref (a ClusterRole, or a Role in ns): a borrowed
 * reference into *holder (free it), NULL when missing. */
static const json_t *ref_rules(mu_apiserver_t *s, const json_t *ref, const char *ns, json_t **holder)
{
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	*holder = NULL;
	if (!kind || !name || (strcmp(kind, "ClusterRole") && strcmp(kind, "Role")))
		return NULL;
	bool cluster = !strcmp(kind, "ClusterRole");
	if (!cluster && !*ns)
		return NULL;
	mu__obj_t *o = mu__store_get(s->store, cluster ? MU__RT_CLUSTERROLES : MU__RT_ROLES, cluster ? NULL : ns, name);
	*holder = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	if (!*holder)
		return NULL;
	const json_t *r = json_object_get(*holder, "rules");
	return json_is_array(r) ? r : NULL;
}

static int collect_page(void *ctx, mu__page_t *pg)
{
	collect_t *c = ctx;
	for (size_t i = 0; i < pg->n; i++) {
		json_t *b = mu__obj_parse(pg->objs[i]);
		const char *ns = pg->objs[i]->ns ? pg->objs[i]->ns : "";
		if (b && mu__rbac_names(b, c->u, ns)) {
			json_t *holder;
			const json_t *rules = ref_rules(c->s, json_object_get(b, "roleRef"), ns, &holder);
			if (rules)
				json_array_extend(c->rules, (json_t *)rules); /* jansson takes no const */
			else
				c->errs++;
			json_decref(holder);
		}
		json_decref(b);
	}
	return 0;
}

json_t *mu__rbac_rules_for(mu_apiserver_t *s, const mu__user_t *u, const char *ns, int *errs)
{
	collect_t c = {s, u, json_array(), 0};
	(void)mu__store_each(s->store, MU__RT_CLUSTERROLEBINDINGS, NULL, 500, NULL, NULL, collect_page, &c);
	if (ns && *ns)
		(void)mu__store_each(s->store, MU__RT_ROLEBINDINGS, ns, 500, NULL, NULL, collect_page, &c);
	if (errs)
		*errs = c.errs;
	return c.rules;
}

/* --- the check ------------------------------------------------------- */

/* kube's IsOnlyMutatingGCFields: old and nw differ at most in
 * ownerReferences and finalizers (and what the store itself sets). */
static bool only_gc_fields(const json_t *old, const json_t *nw)
{
	if (!old)
		return false;
	json_t *a = json_deep_copy(old), *b = json_deep_copy(nw);
	static const char *const drop[] = {"ownerReferences", "finalizers", "resourceVersion", "managedFields",
					   "generation"};
	for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
		json_object_del(json_object_get(a, "metadata"), drop[i]);
		json_object_del(json_object_get(b, "metadata"), drop[i]);
	}
	bool same = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

/* ConfirmNoEscalation: 0, or 403 with kube's text. */
static int confirm(mu_apiserver_t *s, const mu__user_t *u, const char *ns, const json_t *rules, char *msg, size_t len)
{
	int errs = 0;
	json_t *own = mu__rbac_rules_for(s, u, ns, &errs);
	json_t *miss = mu__rbac_uncovered(own, rules);
	json_decref(own);
	if (!json_array_size(miss)) {
		json_decref(miss);
		return 0;
	}
	json_t *groups = json_array();
	for (int i = 0; i < u->ngroups; i++)
		json_array_append_new(groups, json_string(u->groups[i]));
	char g[1200], text[8192];
	quoted_list(groups, g, sizeof g);
	json_decref(groups);
	mu__rbac_missing_text(miss, text, sizeof text);
	json_decref(miss);
	snprintf(msg, len, "user \"%s\" (groups=%s) is attempting to grant RBAC permissions not currently held:\n%s%s",
		 u->name, g, text, errs ? "; resolution errors: [role not found]" : "");
	return 403;
}

static json_t *full_authority(void)
{
	return json_pack("[{s:[s], s:[s], s:[s]}, {s:[s], s:[s]}]", "verbs", "*", "apiGroups", "*", "resources", "*",
			 "verbs", "*", "nonResourceURLs", "*");
}

int mu__rbac_escalation(mu_apiserver_t *s, const mu__req_t *rq, int rt, const json_t *old, const json_t *nw,
			char *msg, size_t len)
{
	const mu__user_t *u = rq->user;
	if (!u || u->admin) /* inside the server; system:masters (EscalationAllowed) */
		return 0;
	bool role = rt == MU__RT_ROLES || rt == MU__RT_CLUSTERROLES;
	bool binding = rt == MU__RT_ROLEBINDINGS || rt == MU__RT_CLUSTERROLEBINDINGS;
	if ((!role && !binding) || only_gc_fields(old, nw))
		return 0;
	const char *ns = rq->route.ns;
	const char *name = mu__jstr(nw, "metadata.name");
	if (role) {
		const char *plural = rt == MU__RT_ROLES ? "roles" : "clusterroles";
		if (mu__rbac_allowed(s, u, "escalate", RBAC_GROUP, plural, "", ns, name ? name : ""))
			return 0;
		const json_t *rules = json_object_get(nw, "rules");
		int rc = confirm(s, u, ns, json_is_array(rules) ? rules : NULL, msg, len);
		const json_t *agg = json_object_get(nw, "aggregationRule");
		const json_t *oagg = old ? json_object_get(old, "aggregationRule") : NULL;
		if (!rc && rt == MU__RT_CLUSTERROLES && json_is_object(agg) && (!oagg || !json_equal(agg, oagg))) {
			json_t *full = full_authority();
			char tmp[16];
			if (confirm(s, u, "", full, tmp, sizeof tmp)) {
				snprintf(msg, len, "must have cluster-admin privileges to use the aggregationRule");
				rc = 403;
			}
			json_decref(full);
		}
		return rc;
	}
	const json_t *ref = json_object_get(nw, "roleRef");
	const char *kind = mu__jstr(nw, "roleRef.kind"), *rname = mu__jstr(nw, "roleRef.name");
	const char *group = mu__jstr(nw, "roleRef.apiGroup");
	if (!kind || !rname)
		return 0; /* validation refuses it */
	bool cr = !strcmp(kind, "ClusterRole");
	if ((cr || !strcmp(kind, "Role")) &&
	    mu__rbac_allowed(s, u, "bind", group ? group : "", cr ? "clusterroles" : "roles", "", ns, rname))
		return 0;
	json_t *holder;
	const json_t *rules = ref_rules(s, ref, ns, &holder);
	if (!holder) {
		snprintf(msg, len, "%s.%s \"%s\" not found", cr ? "clusterroles" : "roles", RBAC_GROUP, rname);
		return 404;
	}
	int rc = confirm(s, u, ns, rules, msg, len);
	json_decref(holder);
	return rc;
}
