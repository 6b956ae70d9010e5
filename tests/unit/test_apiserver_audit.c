/*
 * test_apiserver_audit.c - the audit policy of `muster up` (audit.c), as
 * kube-apiserver's policy checker decides: the first matching rule wins
 * and no match is None; users, userGroups, verbs and namespaces lists;
 * resources by group in kube's forms (resource/subresource, a star, a
 * star with a subresource, a resource with a star) and resourceNames;
 * nonResourceURLs with a trailing star; rule and policy omitStages and omitManagedFields; and the messages of
 * policies kube refuses (each naming its rule and field).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/audit.h"
#include "check.h"

static mu__audit_policy_t *P(mu_t_t *t, const char *text)
{
	mu__audit_policy_t *p = NULL;
	char err[512] = "";
	int rc = mu__audit_policy_parse("p.yaml", text, strlen(text), &p, err, sizeof err);
	if (rc != MU_OK)
		fprintf(stderr, "policy refused: %s\n", err);
	CHECK(t, rc == MU_OK && p);
	return p;
}

/* The level of a resource request. */
static int lv(const mu__audit_policy_t *p, const mu__user_t *u, const char *verb, const char *group,
	      const char *res, const char *sub, const char *ns, const char *name)
{
	mu__audit_attrs_t a = {u, verb, true, group, res, sub, ns, name, "/"};
	unsigned omit;
	bool mf;
	return p ? mu__audit_level(p, &a, &omit, &mf) : -1;
}

static int lv_path(const mu__audit_policy_t *p, const mu__user_t *u, const char *path)
{
	mu__audit_attrs_t a = {u, "get", false, "", "", "", "", "", path};
	unsigned omit;
	bool mf;
	return p ? mu__audit_level(p, &a, &omit, &mf) : -1;
}

static mu__user_t user(const char *name, const char *g1, const char *g2)
{
	mu__user_t u;
	memset(&u, 0, sizeof u);
	snprintf(u.name, sizeof u.name, "%s", name);
	if (g1)
		snprintf(u.groups[u.ngroups++], sizeof u.groups[0], "%s", g1);
	if (g2)
		snprintf(u.groups[u.ngroups++], sizeof u.groups[0], "%s", g2);
	return u;
}

static void test_first_match(mu_t_t *t)
{
	mu__audit_policy_t *p = P(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n"
				     "- level: None\n  users: [system:kube-proxy]\n  verbs: [watch]\n"
				     "- level: RequestResponse\n  resources:\n  - group: \"\"\n    resources: [pods, pods/log]\n"
				     "- level: Metadata\n  resources: [{group: \"\", resources: [secrets]}]\n"
				     "- level: Request\n  userGroups: [team-a]\n  namespaces: [prod]\n");
	mu__user_t kp = user("system:kube-proxy", "system:authenticated", NULL);
	mu__user_t al = user("alice", "team-a", "system:authenticated");
	CHECK_EQ_INT(t, lv(p, &kp, "watch", "", "pods", "", "default", ""), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &kp, "list", "", "pods", "", "default", ""), MU__AUDIT_RR);
	CHECK_EQ_INT(t, lv(p, &al, "get", "", "pods", "log", "default", "x"), MU__AUDIT_RR);
	/* "pods" is not "pods/exec", and the group must be the rule's */
	CHECK_EQ_INT(t, lv(p, &al, "create", "", "pods", "exec", "default", "x"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &al, "get", "apps", "pods", "", "default", "x"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &al, "get", "", "secrets", "", "default", "x"), MU__AUDIT_METADATA);
	CHECK_EQ_INT(t, lv(p, &al, "get", "", "configmaps", "", "prod", "x"), MU__AUDIT_REQUEST);
	CHECK_EQ_INT(t, lv(p, &al, "get", "", "configmaps", "", "dev", "x"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &kp, "get", "", "configmaps", "", "prod", "x"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, NULL, "get", "", "configmaps", "", "prod", "x"), MU__AUDIT_NONE);
	/* a rule with resources or namespaces never matches a path */
	CHECK_EQ_INT(t, lv_path(p, &al, "/healthz"), MU__AUDIT_NONE);
	mu__audit_policy_free(p);
}

static void test_resource_forms(mu_t_t *t)
{
	mu__audit_policy_t *p = P(t, "{\"apiVersion\":\"audit.k8s.io/v1\",\"kind\":\"Policy\",\"rules\":["
				     "{\"level\":\"Metadata\",\"resources\":[{\"group\":\"apps\",\"resources\":[\"*/scale\"]}]},"
				     "{\"level\":\"Request\",\"resources\":[{\"group\":\"batch\",\"resources\":[\"jobs/*\"]}]},"
				     "{\"level\":\"RequestResponse\",\"resources\":[{\"group\":\"\",\"resources\":[\"configmaps\"],"
				     "\"resourceNames\":[\"settings\"]}]},"
				     "{\"level\":\"Metadata\",\"resources\":[{\"group\":\"muster.io\"}]},"
				     "{\"level\":\"Request\",\"resources\":[{\"group\":\"rbac.authorization.k8s.io\",\"resources\":[\"*\"]}]}]}");
	mu__user_t u = user("bob", NULL, NULL);
	CHECK_EQ_INT(t, lv(p, &u, "update", "apps", "deployments", "scale", "d", "x"), MU__AUDIT_METADATA);
	CHECK_EQ_INT(t, lv(p, &u, "update", "apps", "deployments", "", "d", "x"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &u, "get", "batch", "jobs", "status", "d", "x"), MU__AUDIT_REQUEST);
	CHECK_EQ_INT(t, lv(p, &u, "get", "batch", "jobs", "", "d", "x"), MU__AUDIT_REQUEST);
	CHECK_EQ_INT(t, lv(p, &u, "get", "batch", "cronjobs", "", "d", "x"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &u, "get", "", "configmaps", "", "d", "settings"), MU__AUDIT_RR);
	CHECK_EQ_INT(t, lv(p, &u, "get", "", "configmaps", "", "d", "other"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &u, "list", "", "configmaps", "", "d", ""), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv(p, &u, "delete", "muster.io", "queues", "", "", "q"), MU__AUDIT_METADATA);
	CHECK_EQ_INT(t, lv(p, &u, "get", "rbac.authorization.k8s.io", "roles", "", "d", "r"), MU__AUDIT_REQUEST);
	mu__audit_policy_free(p);
}

static void test_urls_and_stages(mu_t_t *t)
{
	mu__audit_policy_t *p = P(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n"
				     "rules:\n- level: None\n  nonResourceURLs: [/healthz*, /version]\n"
				     "- level: Metadata\n  nonResourceURLs: [/api*]\n  omitStages: [ResponseStarted]\n"
				     "  omitManagedFields: false\n"
				     "- level: Request\n  verbs: [get]\n");
	mu__user_t u = user("bob", NULL, NULL);
	CHECK_EQ_INT(t, lv_path(p, &u, "/healthz/etcd"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv_path(p, &u, "/version"), MU__AUDIT_NONE);
	CHECK_EQ_INT(t, lv_path(p, &u, "/versions"), MU__AUDIT_REQUEST);
	mu__audit_attrs_t a = {&u, "get", false, "", "", "", "", "", "/apis/apps"};
	unsigned omit = 0;
	bool mf = true;
	CHECK_EQ_INT(t, mu__audit_level(p, &a, &omit, &mf), MU__AUDIT_METADATA);
	CHECK_EQ_INT(t, omit, MU__STAGE_RECEIVED | MU__STAGE_STARTED);
	CHECK(t, !mf);
	/* a resource request never matches a nonResourceURLs rule */
	CHECK_EQ_INT(t, lv(p, &u, "get", "", "pods", "", "d", "x"), MU__AUDIT_REQUEST);
	CHECK_EQ_INT(t, lv(p, &u, "list", "", "pods", "", "d", ""), MU__AUDIT_NONE);
	mu__audit_policy_free(p);
	p = P(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nrules:\n- level: Metadata\n");
	a.path = "/x";
	mf = false;
	CHECK_EQ_INT(t, p ? mu__audit_level(p, &a, &omit, &mf) : -1, MU__AUDIT_METADATA);
	CHECK(t, mf && omit == 0);
	mu__audit_policy_free(p);
}

/* The message of a refused policy. */
static void refused(mu_t_t *t, const char *text, const char *want)
{
	mu__audit_policy_t *p = NULL;
	char err[512] = "";
	int rc = mu__audit_policy_parse("bad.yaml", text, strlen(text), &p, err, sizeof err);
	CHECK(t, rc != MU_OK && !p);
	if (!strstr(err, want) || strncmp(err, "bad.yaml: ", 10)) {
		fprintf(stderr, "got \"%s\", want \"%s\"\n", err, want);
		t->cur_failed++;
	}
	mu__audit_policy_free(p);
}

static void test_refused(mu_t_t *t)
{
	const char *h = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n";
	char b[512];
	refused(t, "kind: Policy\napiVersion: audit.k8s.io/v1beta1\nrules: [{level: None}]\n", "apiVersion: Unsupported");
	refused(t, "apiVersion: audit.k8s.io/v1\nkind: Pod\nrules: [{level: None}]\n", "kind: Unsupported");
	refused(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\n", "loaded illegal policy with 0 rules");
	snprintf(b, sizeof b, "%s- level: None\n- {}\n", h);
	refused(t, b, "rules[1].level: Required value");
	snprintf(b, sizeof b, "%s- level: metadata\n", h);
	refused(t, b, "rules[0].level: Unsupported value: \"metadata\"");
	snprintf(b, sizeof b, "%s- level: None\n  usrs: [a]\n", h);
	refused(t, b, "unknown field \"rules[0].usrs\"");
	snprintf(b, sizeof b, "%s- level: None\n  resources: [{group: \"\", resource: [pods]}]\n", h);
	refused(t, b, "unknown field \"rules[0].resources[0].resource\"");
	snprintf(b, sizeof b, "%s- level: None\n  resources: [{group: \"\", resourceNames: [a]}]\n", h);
	refused(t, b, "rules[0].resources[0].resourceNames: Invalid value");
	snprintf(b, sizeof b, "%s- level: None\n  resources: [{resources: [a/b/c]}]\n", h);
	refused(t, b, "rules[0].resources[0].resources[0]: Invalid value: \"a/b/c\"");
	snprintf(b, sizeof b, "%s- level: None\n  nonResourceURLs: [healthz]\n", h);
	refused(t, b, "rules[0].nonResourceURLs[0]: Invalid value: \"healthz\"");
	snprintf(b, sizeof b, "%s- level: None\n  nonResourceURLs: [/a*b]\n", h);
	refused(t, b, "must be the final character");
	snprintf(b, sizeof b, "%s- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n", h);
	refused(t, b, "rules[0]: Invalid value: rules cannot apply to both");
	snprintf(b, sizeof b, "%s- level: None\n  omitStages: [Done]\n", h);
	refused(t, b, "rules[0].omitStages[0]: Unsupported value: \"Done\"");
	snprintf(b, sizeof b, "%s- level: None\n  omitManagedFields: sometimes\n", h);
	refused(t, b, "rules[0].omitManagedFields: Invalid value");
	snprintf(b, sizeof b, "%s- level: None\n  users: [a, [b]]\n", h);
	refused(t, b, "rules[0].users[1]: Invalid value");
	refused(t, "rules: [\n", "yaml: line");
	refused(t, "{\"apiVersion\": \"audit.k8s.io/v1\", \"kind\": \"Policy\", \"rules\": [], \"rules\": []}", "line 1");
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_first_match);
	MU_RUN(&t, test_resource_forms);
	MU_RUN(&t, test_urls_and_stages);
	MU_RUN(&t, test_refused);
	return mu_t_done(&t);
}
