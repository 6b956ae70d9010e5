/*
 * rbacboot.c - kube's RBAC bootstrap policy as kube-apiserver's
 * rbac/bootstrap-roles post-start hook reconciles it at every start
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy, pkg/registry/rbac/
 * rest/storage_rbac.go, pkg/registry/rbac/reconciliation): cluster-admin,
 * the aggregated admin, edit and view, the system:aggregate-to-* roles,
 * discovery, basic-user, public-info-viewer, the service account issuer
 * discovery role and the kubelet TLS bootstrap roles, with their
 * bindings, each labelled kubernetes.io/bootstrapping=rbac-defaults and
 * annotated rbac.authorization.kubernetes.io/autoupdate=true.  A missing
 * one is created; a stored one whose autoupdate annotation is "false" is
 * left alone; any other gets back, without losing what was added, the
 * expected annotations and labels it lacks (a stored value wins), the
 * expected rules no rule of it covers (broken down to one verb, group,
 * resource and name each, as kube's validation.Covers gives them), the
 * aggregationRule selectors it lacks (or loses its aggregationRule when
 * none is expected), and, for a binding, the expected subjects it lacks;
 * a binding whose roleRef differs is deleted and made again.  Writes are
 * recorded in managedFields as field manager kube-apiserver (operation
 * Update), as the hook's loopback client.  Above api.c, whose create it
 * calls, so that rbac.c (the authorizer, which api.c's checks reach) does
 * not call back into it.  At start only: O(roles) reads, a write for
 * each role that differs.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"

#define MANAGER "kube-apiserver"
#define AUTOUPDATE "rbac.authorization.kubernetes.io/autoupdate"

/* Adds to dst (an object, made when missing under key k of obj) every
 * member of src it lacks: kube's merge(expected, existing), where the
 * existing value wins. */
static void merge_map(json_t *obj, const char *k, const json_t *src)
{
	if (!json_object_size(src))
		return;
	json_t *dst = json_object_get(obj, k);
	if (!json_is_object(dst))
		json_object_set_new(obj, k, dst = json_object());
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)src, key, v)
		if (!json_object_get(dst, key))
			json_object_set(dst, key, v);
}

/* Appends to obj's array k (made when missing) each member of want that
 * no member of it equals (kube's diffSubjectLists, aggregationRuleCovers). */
static void union_list(json_t *obj, const char *k, const json_t *want)
{
	size_t i, j;
	json_t *w, *h;
	json_t *have = json_object_get(obj, k);
	json_array_foreach(want, i, w) {
		bool found = false;
		json_array_foreach(have, j, h)
			found = found || json_equal(h, w);
		if (found)
			continue;
		if (!json_is_array(have))
			json_object_set_new(obj, k, have = json_array());
		json_array_append(have, w);
	}
}

/* What kube's computeReconciledRole / computeReconciledRoleBinding make
 * of the stored object old and the expected one exp (union, never
 * removing), a new object; NULL when the stored one is protected
 * (autoupdate "false").  *recreate: a binding's roleRef differs. */
static json_t *reconciled(int rt, const json_t *old, const json_t *exp, bool *recreate)
{
	*recreate = false;
	const char *au = json_string_value(json_object_get(mu__jget(old, "metadata.annotations"), AUTOUPDATE));
	if (au && !strcmp(au, "false"))
		return NULL;
	json_t *nw = json_deep_copy(old), *md = json_object_get(nw, "metadata");
	if (!json_is_object(md))
		json_object_set_new(nw, "metadata", md = json_object());
	merge_map(md, "annotations", mu__jget(exp, "metadata.annotations"));
	merge_map(md, "labels", mu__jget(exp, "metadata.labels"));
	if (rt == MU__RT_CLUSTERROLEBINDINGS) {
		if (!json_equal(json_object_get(old, "roleRef"), json_object_get(exp, "roleRef"))) {
			*recreate = true;
			return nw;
		}
		union_list(nw, "subjects", json_object_get(exp, "subjects"));
		return nw;
	}
	json_t *missing = mu__rbac_uncovered(json_object_get(old, "rules"), json_object_get(exp, "rules"));
	if (json_array_size(missing)) {
		json_t *rules = json_object_get(nw, "rules");
		if (!json_is_array(rules))
			json_object_set_new(nw, "rules", rules = json_array());
		json_array_extend(rules, missing);
	}
	json_decref(missing);
	const json_t *ea = json_object_get(exp, "aggregationRule");
	if (!ea) {
		json_object_del(nw, "aggregationRule");
	} else {
		json_t *na = json_object_get(nw, "aggregationRule");
		if (!json_is_object(na))
			json_object_set_new(nw, "aggregationRule", na = json_object());
		union_list(na, "clusterRoleSelectors", json_object_get(ea, "clusterRoleSelectors"));
	}
	return nw;
}

typedef struct rec {
	const mu__rtype_t *t;
	int rt;
	const json_t *exp;
	bool recreate;
} rec_t;

/* The store's callback: the reconciled version, or KEEP. */
static int reconcile_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	rec_t *c = ctx;
	if (!cur || cur->deleting)
		return MU__MUT_KEEP;
	json_t *old = mu__obj_parse(cur);
	if (!old)
		return MU_ENOMEM;
	json_t *nw = reconciled(c->rt, old, c->exp, &c->recreate);
	int rc = MU__MUT_KEEP;
	if (nw && !c->recreate && !json_equal(nw, old)) {
		mu__mf_controller(c->t, old, nw, MANAGER, false);
		*out = nw;
		nw = NULL;
		rc = MU__MUT_PUT;
	}
	json_decref(nw);
	json_decref(old);
	return rc;
}

/* Reconciles the object text of type rt (a ClusterRole or
 * ClusterRoleBinding) with the stored one: created when absent, else as
 * reconciled() says. */
static int reconcile(mu_apiserver_t *s, int rt, const char *text)
{
	json_t *o = json_loads(text, 0, NULL);
	if (!o)
		return MU_EPARSE;
	const char *name = mu__jstr(o, "metadata.name");
	mu__obj_t *cur = mu__store_get(s->store, rt, NULL, name);
	bool absent = !cur || cur->deleting;
	mu__obj_unref(cur);
	int rc = MU_OK;
	rec_t c = {mu__type(s->types, rt), rt, o, false};
	if (!absent) {
		rc = mu__store_mutate(s->store, rt, NULL, name, reconcile_fn, &c, false, NULL);
		rc = rc < 0 ? rc : MU_OK;
	}
	if (rc == MU_OK && (absent || c.recreate)) {
		mu__wtx_t *tx;
		rc = mu__store_begin(s->store, &tx);
		if (rc == MU_OK) {
			if (c.recreate)
				rc = mu__delete_now(tx, rt, NULL, name);
			if (rc >= 0)
				rc = mu__create_by(s, tx, rt, o, MANAGER, NULL);
			int rc2 = mu__store_commit(tx);
			rc = rc < 0 ? rc : rc2;
		}
	}
	json_decref(o);
	return rc < 0 ? rc : MU_OK;
}

#define CR "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"%s\"," \
	   "\"annotations\":{\"" AUTOUPDATE "\":\"true\"},\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}},\"rules\":[%s]}"
#define CRB "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":" \
	    "{\"name\":\"%s\",\"annotations\":{\"" AUTOUPDATE "\":\"true\"},\"labels\":" \
	    "{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}},\"roleRef\":" \
	    "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"%s\"},\"subjects\":" \
	    "[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":\"%s\"}]}"

/* The user-facing roles of kube's bootstrap policy
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go): admin, edit
 * and view are aggregated (rbacagg.c) from the roles labelled
 * aggregate-to-admin, -edit and -view, edit aggregates into admin and view
 * into edit, and the system:aggregate-to-* roles hold kube's rules for the
 * built-in resources. */
#define META_AGG(name, labels) "\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\"," \
	"\"metadata\":{\"name\":\"" name "\",\"annotations\":{\"rbac.authorization.kubernetes.io/autoupdate\":\"true\"}," \
	"\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"" labels "}}"
#define LBL(to) ",\"rbac.authorization.k8s.io/aggregate-to-" to "\":\"true\""
#define AGG_RULE(to) ",\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":" \
	"{\"rbac.authorization.k8s.io/aggregate-to-" to "\":\"true\"}}]},\"rules\":[]"
#define RULE(verbs, group, res) "{\"apiGroups\":[\"" group "\"],\"resources\":[" res "],\"verbs\":[" verbs "]}"
#define READ "\"get\",\"list\",\"watch\""
#define WRITE "\"create\",\"delete\",\"deletecollection\",\"patch\",\"update\""
static const char *const aggregated[] = {
	"{" META_AGG("admin", "") AGG_RULE("admin") "}",
	"{" META_AGG("edit", LBL("admin")) AGG_RULE("edit") "}",
	"{" META_AGG("view", LBL("edit")) AGG_RULE("view") "}",
	"{" META_AGG("system:aggregate-to-admin", LBL("admin")) ",\"rules\":["
	RULE("\"create\"", "authorization.k8s.io", "\"localsubjectaccessreviews\"") ","
	RULE(READ "," WRITE, "rbac.authorization.k8s.io", "\"rolebindings\",\"roles\"") "]}",
	"{" META_AGG("system:aggregate-to-edit", LBL("edit")) ",\"rules\":["
	RULE(READ, "", "\"pods/attach\",\"pods/exec\",\"pods/portforward\",\"pods/proxy\",\"secrets\",\"services/proxy\"") ","
	RULE("\"impersonate\"", "", "\"serviceaccounts\"") ","
	RULE(WRITE, "", "\"pods\",\"pods/attach\",\"pods/exec\",\"pods/portforward\",\"pods/proxy\"") ","
	RULE("\"create\"", "", "\"pods/eviction\"") ","
	RULE(WRITE, "", "\"configmaps\",\"events\",\"persistentvolumeclaims\",\"replicationcontrollers\","
		 "\"replicationcontrollers/scale\",\"secrets\",\"serviceaccounts\",\"services\",\"services/proxy\"") ","
	RULE("\"create\"", "", "\"serviceaccounts/token\"") ","
	RULE(WRITE, "apps", "\"daemonsets\",\"deployments\",\"deployments/rollback\",\"deployments/scale\","
		 "\"replicasets\",\"replicasets/scale\",\"statefulsets\",\"statefulsets/scale\"") ","
	RULE(WRITE, "autoscaling", "\"horizontalpodautoscalers\"") ","
	RULE(WRITE, "batch", "\"cronjobs\",\"jobs\"") ","
	RULE(WRITE, "extensions", "\"daemonsets\",\"deployments\",\"deployments/rollback\",\"deployments/scale\","
		 "\"ingresses\",\"networkpolicies\",\"replicasets\",\"replicasets/scale\",\"replicationcontrollers/scale\"") ","
	RULE(WRITE, "policy", "\"poddisruptionbudgets\"") ","
	RULE(WRITE, "networking.k8s.io", "\"ingresses\",\"networkpolicies\"") "]}",
	"{" META_AGG("system:aggregate-to-view", LBL("view")) ",\"rules\":["
	RULE(READ, "", "\"configmaps\",\"endpoints\",\"persistentvolumeclaims\",\"persistentvolumeclaims/status\","
		 "\"pods\",\"replicationcontrollers\",\"replicationcontrollers/scale\",\"serviceaccounts\",\"services\","
		 "\"services/status\"") ","
	RULE(READ, "", "\"bindings\",\"events\",\"limitranges\",\"namespaces/status\",\"pods/log\",\"pods/status\","
		 "\"replicationcontrollers/status\",\"resourcequotas\",\"resourcequotas/status\"") ","
	RULE(READ, "", "\"namespaces\"") ","
	RULE(READ, "discovery.k8s.io", "\"endpointslices\"") ","
	RULE(READ, "apps", "\"controllerrevisions\",\"daemonsets\",\"daemonsets/status\",\"deployments\","
		 "\"deployments/scale\",\"deployments/status\",\"replicasets\",\"replicasets/scale\","
		 "\"replicasets/status\",\"statefulsets\",\"statefulsets/scale\",\"statefulsets/status\"") ","
	RULE(READ, "autoscaling", "\"horizontalpodautoscalers\",\"horizontalpodautoscalers/status\"") ","
	RULE(READ, "batch", "\"cronjobs\",\"cronjobs/status\",\"jobs\",\"jobs/status\"") ","
	RULE(READ, "extensions", "\"daemonsets\",\"daemonsets/status\",\"deployments\",\"deployments/scale\","
		 "\"deployments/status\",\"ingresses\",\"ingresses/status\",\"networkpolicies\",\"replicasets\","
		 "\"replicasets/scale\",\"replicasets/status\",\"replicationcontrollers/scale\"") ","
	RULE(READ, "policy", "\"poddisruptionbudgets\",\"poddisruptionbudgets/status\"") ","
	RULE(READ, "networking.k8s.io", "\"ingresses\",\"ingresses/status\",\"networkpolicies\"") "]}",
};

int mu__rbac_bootstrap(mu_apiserver_t *s)
{
	static const char *const roles[][3] = {
		{"cluster-admin", "{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]},"
				  "{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}", "system:masters"},
		{"system:discovery", "{\"nonResourceURLs\":[\"/api\",\"/api/*\",\"/apis\",\"/apis/*\",\"/healthz\","
				     "\"/livez\",\"/openapi\",\"/openapi/*\",\"/readyz\",\"/version\",\"/version/\"],"
				     "\"verbs\":[\"get\"]}", "system:authenticated"},
		{"system:public-info-viewer", "{\"nonResourceURLs\":[\"/healthz\",\"/livez\",\"/readyz\",\"/version\","
					      "\"/version/\"],\"verbs\":[\"get\"]}", "system:authenticated"},
		{"system:service-account-issuer-discovery",
		 "{\"nonResourceURLs\":[\"/.well-known/openid-configuration\",\"/.well-known/openid-configuration/\","
		 "\"/openid/v1/jwks\",\"/openid/v1/jwks/\"],\"verbs\":[\"get\"]}", "system:serviceaccounts"},
		{"system:basic-user", "{\"apiGroups\":[\"authorization.k8s.io\"],\"resources\":"
				      "[\"selfsubjectaccessreviews\",\"selfsubjectrulesreviews\"],\"verbs\":[\"create\"]},"
				      "{\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"selfsubjectreviews\"],"
				      "\"verbs\":[\"create\"]}",
		 "system:authenticated"},
		/* delegated authentication and authorization (an extension
		 * API server, a kubelet's webhook): kube's policy has the role,
		 * not a binding */
		{"system:auth-delegator", "{\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"tokenreviews\"],"
					  "\"verbs\":[\"create\"]},{\"apiGroups\":[\"authorization.k8s.io\"],"
					  "\"resources\":[\"subjectaccessreviews\"],\"verbs\":[\"create\"]}", NULL},
		/* kubelet TLS bootstrap: kube's policy has the roles, not their
		 * bindings (kubeadm binds them to system:bootstrappers:... and
		 * system:nodes) */
		{"system:node-bootstrapper", "{\"apiGroups\":[\"certificates.k8s.io\"],\"resources\":"
					     "[\"certificatesigningrequests\"],\"verbs\":[\"create\",\"get\",\"list\","
					     "\"watch\"]}", NULL},
		{"system:certificates.k8s.io:certificatesigningrequests:nodeclient",
		 "{\"apiGroups\":[\"certificates.k8s.io\"],\"resources\":[\"certificatesigningrequests/nodeclient\"],"
		 "\"verbs\":[\"create\"]}", NULL},
		{"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
		 "{\"apiGroups\":[\"certificates.k8s.io\"],\"resources\":"
		 "[\"certificatesigningrequests/selfnodeclient\"],\"verbs\":[\"create\"]}", NULL},
	};
	char buf[4096];
	for (size_t i = 0; i < sizeof aggregated / sizeof *aggregated; i++) {
		int rc = reconcile(s, MU__RT_CLUSTERROLES, aggregated[i]);
		if (rc != MU_OK)
			return rc;
	}
	for (size_t i = 0; i < sizeof roles / sizeof *roles; i++) {
		snprintf(buf, sizeof buf, CR, roles[i][0], roles[i][1]);
		int rc = reconcile(s, MU__RT_CLUSTERROLES, buf);
		if (!roles[i][2]) {
			if (rc != MU_OK)
				return rc;
			continue;
		}
		snprintf(buf, sizeof buf, CRB, roles[i][0], roles[i][0], roles[i][2]);
		if (!strcmp(roles[i][0], "system:public-info-viewer")) /* and the unauthenticated, as kube's */
			snprintf(buf + strlen(buf) - 2, sizeof buf - strlen(buf) + 2,
				 ",{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":"
				 "\"system:unauthenticated\"}]}");
		if (rc == MU_OK)
			rc = reconcile(s, MU__RT_CLUSTERROLEBINDINGS, buf);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

