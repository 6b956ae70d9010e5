/*
 * rbacagg.c - kube-controller-manager's clusterrole-aggregation controller
 * (pkg/controller/clusterroleaggregation): a ClusterRole with an
 * aggregationRule gets as its rules those of every other ClusterRole that
 * one of its clusterRoleSelectors selects, selectors in order, roles by
 * name, a rule equal to one already taken not taken again.  When the
 * result differs from its rules the controller applies them (server-side
 * apply, field manager clusterrole-aggregation-controller, forced), so a
 * role labelled for aggregation (rbac.example.com/aggregate-to-x: "true")
 * widens the aggregate at once, and a rule written by hand into an
 * aggregate is taken back.  muster up's controller thread (server.c)
 * runs a pass at start and after any change of a ClusterRole.
 *
 * Work per pass: one list of the ClusterRoles, then for each aggregate
 * its selectors against every ClusterRole (aggregates x roles x rules);
 * only aggregates whose rules change are written.  Nothing is kept
 * between passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "muster/jpath.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"

#define MANAGER "clusterrole-aggregation-controller"

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* The rules aggregate agg should have (a new array, caller owns), from the
 * ClusterRoles roles[0..n) (parsed, in name order). */
static json_t *aggregate(const json_t *agg, json_t *const *roles, size_t n)
{
	json_t *out = json_array();
	const char *me = nz(mu__jstr(agg, "metadata.name"));
	size_t s, r, k, m;
	json_t *sel, *rule;
	json_array_foreach(mu__jget(agg, "aggregationRule.clusterRoleSelectors"), s, sel) {
		for (r = 0; r < n; r++) {
			if (!strcmp(nz(mu__jstr(roles[r], "metadata.name")), me) ||
			    !mu_label_selector_match(sel, mu__jget(roles[r], "metadata.labels")))
				continue;
			json_array_foreach(json_object_get(roles[r], "rules"), k, rule) {
				bool seen = false;
				for (m = 0; m < json_array_size(out) && !seen; m++)
					seen = json_equal(json_array_get(out, m), rule);
				if (!seen)
					json_array_append(out, rule);
			}
		}
	}
	return out;
}

typedef struct agg_ctx {
	const mu__rtype_t *t;
	json_t *rules; /* borrowed */
} agg_ctx_t;

/* Applies {rules} to the current aggregate, forced, as the controller's
 * applyClusterRoles. */
static int apply_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	agg_ctx_t *c = ctx;
	if (!cur || cur->deleting)
		return MU__MUT_KEEP;
	json_t *old = mu__obj_parse(cur);
	if (!old)
		return MU_ENOMEM;
	int rc = MU__MUT_KEEP;
	if (!json_equal(json_object_get(old, "rules"), c->rules) &&
	    !(json_array_size(c->rules) == 0 && json_array_size(json_object_get(old, "rules")) == 0)) {
		json_t *applied = json_pack("{s:s, s:s, s:{s:s}, s:O}", "apiVersion", "rbac.authorization.k8s.io/v1",
					    "kind", "ClusterRole", "metadata", "name", cur->name, "rules", c->rules);
		mu__mgr_t m;
		mu__mgr_controller(&m, c->t, MANAGER, false);
		m.force = true;
		char msg[256];
		mu__verr_t e = {0};
		json_t *nw = NULL;
		if (applied && mu__ssa_apply(old, applied, &m, &nw, msg, sizeof msg, &e) == MU_OK && nw) {
			/* rules is atomic (no listType: structured-merge-diff's
			 * default), so the applied list replaces the old one */
			json_object_set(nw, "rules", c->rules);
			*out = nw;
			rc = MU__MUT_PUT;
		}
		json_decref(applied);
	}
	json_decref(old);
	return rc;
}

typedef struct roles {
	json_t **v;
	size_t n, cap;
} roles_t;

static int collect(void *ctx, mu__page_t *pg)
{
	roles_t *r = ctx;
	for (size_t i = 0; i < pg->n; i++) {
		if (r->n == r->cap) {
			size_t nc = r->cap ? r->cap * 2 : 64;
			json_t **nv = realloc(r->v, nc * sizeof *nv);
			if (!nv)
				return MU_ENOMEM;
			r->v = nv;
			r->cap = nc;
		}
		json_t *j = mu__obj_parse(pg->objs[i]);
		if (j)
			r->v[r->n++] = j;
	}
	return 0;
}

int mu__rbacagg_sync(mu_apiserver_t *s)
{
	roles_t r = {0};
	int rc = mu__store_each(s->store, MU__RT_CLUSTERROLES, NULL, 500, NULL, NULL, collect, &r);
	int changed = 0;
	for (size_t i = 0; rc == MU_OK && i < r.n; i++) {
		if (!json_is_object(json_object_get(r.v[i], "aggregationRule")))
			continue;
		json_t *rules = aggregate(r.v[i], r.v, r.n);
		agg_ctx_t c = {mu__type(s->types, MU__RT_CLUSTERROLES), rules};
		if (mu__store_mutate(s->store, MU__RT_CLUSTERROLES, NULL, nz(mu__jstr(r.v[i], "metadata.name")),
				     apply_fn, &c, false, NULL) == MU__MUT_PUT)
			changed++;
		json_decref(rules);
	}
	for (size_t i = 0; i < r.n; i++)
		json_decref(r.v[i]);
	free(r.v);
	return rc == MU_OK ? changed : rc;
}

bool mu__rbacagg_event(const mu__wev_t *ev)
{
	return ev->obj->rt == MU__RT_CLUSTERROLES;
}
