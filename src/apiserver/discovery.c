/*
 * discovery.c - what kubectl asks before anything else, and tables.
 *
 * /version (the kubectl dispatcher picks its minor version from it), /api
 * (APIVersions), /apis (APIGroupList), /apis/G (APIGroup), /api/v1 and
 * /apis/G/V (APIResourceList with verbs, short names and subresources),
 * /openapi/v2 (an empty protobuf document, which `kubectl apply` accepts
 * and then falls back to its built-in schemas), /openapi/v3 (404), and the
 * health endpoints.  Legacy (not aggregated) discovery is served: client-go
 * falls back to it when the answer's Content-Type is plain JSON.
 *
 * mu__table() renders object versions as a meta.k8s.io/v1 Table with the
 * type's columns, for `kubectl get`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"

#define K8S_MINOR "32"

static json_t *strings(const char *const *v)
{
	json_t *a = json_array();
	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

static json_t *version_doc(void)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor", K8S_MINOR,
			 "gitVersion", "v1." K8S_MINOR ".0-muster", "gitCommit", "muster", "gitTreeState",
			 "clean", "buildDate", "2025-01-01T00:00:00Z", "goVersion", "go1.23", "compiler", "gc",
			 "platform", "linux/amd64");
}

/* The distinct groups other than core, in registry order. */
static int groups(const char **out, int max)
{
	int n, k = 0;
	const mu__rtype_t *t = mu__rtypes(&n);
	for (int i = 0; i < n; i++) {
		if (!*t[i].group)
			continue;
		bool seen = false;
		for (int j = 0; j < k; j++)
			seen = seen || !strcmp(out[j], t[i].group);
		if (!seen && k < max)
			out[k++] = t[i].group;
	}
	return k;
}

/* The version a group serves (one per group here). */
static const char *group_version(const char *g)
{
	int n;
	const mu__rtype_t *t = mu__rtypes(&n);
	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].group, g))
			return t[i].version;
	return NULL;
}

static json_t *group_doc(const char *g)
{
	char gv[128];
	const char *v = group_version(g);
	snprintf(gv, sizeof gv, "%s/%s", g, v);
	json_t *ver = json_pack("{s:s, s:s}", "groupVersion", gv, "version", v);
	return json_pack("{s:s, s:s, s:s, s:[O], s:o}", "kind", "APIGroup", "apiVersion", "v1", "name", g,
			 "versions", ver, "preferredVersion", ver);
}

static json_t *resource_entry(const mu__rtype_t *t, const char *sub)
{
	static const char *const verbs[] = {"create", "delete", "deletecollection", "get", "list",
					    "patch", "update", "watch", NULL};
	static const char *const sverbs[] = {"get", "patch", "update", NULL};
	static const char *const cverbs[] = {"create", NULL};
	static const char *const all[] = {"all", NULL};
	char name[128];
	snprintf(name, sizeof name, "%s%s%s", t->plural, sub ? "/" : "", sub ? sub : "");
	const char *kind = t->kind;
	if (sub && !strcmp(sub, "binding"))
		kind = "Binding";
	else if (sub && !strcmp(sub, "eviction"))
		kind = "Eviction";
	json_t *r = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", name, "singularName", sub ? "" : t->singular,
			      "namespaced", t->namespaced, "kind", kind, "verbs",
			      strings(!sub ? verbs : !strcmp(sub, "status") ? sverbs : cverbs));
	if (sub && !strcmp(sub, "eviction"))
		json_object_set_new(r, "group", json_string("policy")), json_object_set_new(r, "version", json_string("v1"));
	if (!sub && t->shortnames[0])
		json_object_set_new(r, "shortNames", strings(t->shortnames));
	if (!sub && (!strcmp(t->plural, "pods") || !strcmp(t->plural, "jobs")))
		json_object_set_new(r, "categories", strings(all));
	return r;
}

static json_t *resource_list(const char *group, const char *version)
{
	int n;
	const mu__rtype_t *t = mu__rtypes(&n);
	json_t *res = json_array();
	for (int i = 0; i < n; i++) {
		if (strcmp(t[i].group, group) || strcmp(t[i].version, version))
			continue;
		json_array_append_new(res, resource_entry(&t[i], NULL));
		if (t[i].subs & MU__SUB_STATUS)
			json_array_append_new(res, resource_entry(&t[i], "status"));
		if (t[i].subs & MU__SUB_BINDING)
			json_array_append_new(res, resource_entry(&t[i], "binding"));
		if (t[i].subs & MU__SUB_EVICTION)
			json_array_append_new(res, resource_entry(&t[i], "eviction"));
	}
	if (json_array_size(res) == 0) {
		json_decref(res);
		return NULL;
	}
	char gv[128];
	snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
	return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
			 "groupVersion", gv, "resources", res);
}

static json_t *api_groups(void)
{
	const char *g[16];
	int k = groups(g, 16);
	json_t *arr = json_array();
	for (int i = 0; i < k; i++) {
		json_t *d = group_doc(g[i]);
		json_object_del(d, "kind");
		json_object_del(d, "apiVersion");
		json_array_append_new(arr, d);
	}
	return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", arr);
}

bool mu__discovery(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs)
{
	const mu__route_t *r = &rq->route;
	if (r->kind == MU__R_RESOURCE || r->kind == MU__R_UNKNOWN)
		return false;
	if (strcmp(rq->method, "GET") && strcmp(rq->method, "HEAD")) {
		mu__resp_status(rs, 405, "MethodNotAllowed", "the method %s is not allowed here", rq->method);
		return true;
	}
	json_t *doc = NULL;
	char addr[96];
	switch (r->kind) {
	case MU__R_VERSION:
		doc = version_doc();
		break;
	case MU__R_API:
		snprintf(addr, sizeof addr, "%s:%d", s->listen_host, s->port);
		doc = json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions", "v1",
				"serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress", addr);
		break;
	case MU__R_APIS:
		doc = api_groups();
		break;
	case MU__R_GROUP:
		doc = group_version(r->group) ? group_doc(r->group) : NULL;
		break;
	case MU__R_GV:
		doc = resource_list(r->core ? "" : r->group, r->version);
		break;
	case MU__R_OPENAPI_V2:
		rs->code = 200;
		rs->ctype = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
		rs->body = strdup("");
		return true;
	case MU__R_HEALTH:
		rs->code = 200;
		rs->ctype = "text/plain";
		rs->body = strdup("ok");
		rs->len = 2;
		return true;
	default:
		break;
	}
	if (!doc)
		mu__resp_status(rs, 404, "NotFound", "the server could not find the requested resource");
	else
		mu__resp_json(rs, 200, doc);
	return true;
}
