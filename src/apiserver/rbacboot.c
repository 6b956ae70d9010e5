/*
 * rbacboot.c - kube's RBAC bootstrap policy as muster up applies it at
 * start (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): cluster-admin,
 * the aggregated admin, edit and view, the system:aggregate-to-* roles,
 * discovery, basic-user, public-info-viewer, the service account issuer
 * discovery role and the kubelet TLS bootstrap roles, with their
 * bindings; each is created when absent (a hand edit is kept).  Above
 * api.c, whose create it calls, so that rbac.c (the authorizer, which
 * api.c's checks reach) does not call back into it.  At start only:
 * O(roles) creates.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "apiserver/apiserver_int.h"

/* Creates the object text of type rt unless one of its name is stored. */
static int put_if_absent(mu_apiserver_t *s, int rt, const char *text)
{
	json_t *o = json_loads(text, 0, NULL);
	if (!o)
		return MU_EPARSE;
	int rc = MU_OK;
	mu__obj_t *cur = mu__store_get(s->store, rt, NULL, mu__jstr(o, "metadata.name"));
	if (!cur) {
		mu__wtx_t *tx;
		rc = mu__store_begin(s->store, &tx);
		if (rc == MU_OK) {
			rc = mu__create(s, tx, rt, o, NULL);
			int rc2 = mu__store_commit(tx);
			rc = rc < 0 ? rc : rc2;
		}
	}
	mu__obj_unref(cur);
	json_decref(o);
	return rc < 0 ? rc : MU_OK;
}

#define CR "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"%s\"," \
	   "\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}},\"rules\":[%s]}"
#define CRB "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":" \
	    "{\"name\":\"%s\",\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}},\"roleRef\":" \
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
		int rc = put_if_absent(s, MU__RT_CLUSTERROLES, aggregated[i]);
		if (rc != MU_OK)
			return rc;
	}
	for (size_t i = 0; i < sizeof roles / sizeof *roles; i++) {
		snprintf(buf, sizeof buf, CR, roles[i][0], roles[i][1]);
		int rc = put_if_absent(s, MU__RT_CLUSTERROLES, buf);
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
			rc = put_if_absent(s, MU__RT_CLUSTERROLEBINDINGS, buf);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

