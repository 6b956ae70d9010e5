/*
 * discovery.c - what kubectl asks before anything else, and tables.
 *
 * /version (the kubectl dispatcher picks its minor version from it), /api
 * (APIVersions), /apis (APIGroupList), /apis/G (APIGroup), /api/v1 and
 * /apis/G/V (APIResourceList with verbs, short names and subresources),
 * /openapi/v2 (openapi_v2.c), /openapi/v3 (openapi.c),
 * and the health endpoints.  Legacy (not aggregated) discovery is served: client-go
 * falls back to it when the answer's Content-Type is plain JSON.
 *
 * mu__table() renders object versions as a meta.k8s.io/v1 Table with the
 * type's columns, for `kubectl get`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

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

/* The distinct served groups other than core, in registry order.  O(types^2). */
static int groups(const mu__types_t *r, const char **out, int max)
{
	int k = 0;
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || !*t->group || !mu__type_served(r, i))
			continue;
		bool seen = false;
		for (int j = 0; j < k; j++)
			seen = seen || !strcmp(out[j], t->group);
		if (!seen && k < max)
			out[k++] = t->group;
	}
	return k;
}

/* Whether type i serves version v. */
static bool serves(const mu__types_t *r, int i, const char *v)
{
	const mu__rtype_t *t = mu__type(r, i);
	const mu__crdtype_t *c = mu__crdtype(t);
	return t && mu__type_served(r, i) && (c ? mu__crd_version(c, v) >= 0 : !strcmp(t->version, v));
}

/* Adds version v to the APIGroup's versions unless there. */
static void add_version(json_t *vers, const char *g, const char *v)
{
	size_t j;
	json_t *x;
	json_array_foreach(vers, j, x)
		if (!strcmp(json_string_value(json_object_get(x, "version")), v))
			return;
	char gv[400];
	snprintf(gv, sizeof gv, "%s/%s", g, v);
	json_array_append_new(vers, json_pack("{s:s, s:s}", "groupVersion", gv, "version", v));
}

/* The APIGroup of g: every version a type of it serves, the first type's
 * (storage) version preferred; NULL if g is not served. */
static json_t *group_doc(const mu__types_t *r, const char *g)
{
	json_t *vers = json_array();
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || strcmp(t->group, g) || !mu__type_served(r, i))
			continue;
		const mu__crdtype_t *c = mu__crdtype(t);
		add_version(vers, g, t->version);
		for (int v = 0; c && v < c->nver; v++)
			if (c->v[v].served)
				add_version(vers, g, c->v[v].name);
	}
	if (!json_array_size(vers)) {
		json_decref(vers);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:s, s:o, s:O}", "kind", "APIGroup", "apiVersion", "v1", "name", g,
			 "versions", vers, "preferredVersion", json_array_get(vers, 0));
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
	if (sub && !strcmp(sub, "token"))
		kind = "TokenRequest";
	else if (sub && !strcmp(sub, "binding"))
		kind = "Binding";
	else if (sub && !strcmp(sub, "eviction"))
		kind = "Eviction";
	else if (sub && !strcmp(sub, "scale"))
		kind = "Scale";
	json_t *r = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", name, "singularName", sub ? "" : t->singular,
			      "namespaced", t->namespaced, "kind", kind, "verbs",
			      strings(!sub && strcmp(t->plural, "selfsubjectaccessreviews") &&
						      strcmp(t->plural, "selfsubjectrulesreviews") &&
						      strcmp(t->plural, "selfsubjectreviews") &&
						      strcmp(t->plural, "subjectaccessreviews") &&
						      strcmp(t->plural, "localsubjectaccessreviews") &&
						      strcmp(t->plural, "tokenreviews") ? verbs
				      : sub && (!strcmp(sub, "status") || !strcmp(sub, "scale") || !strcmp(sub, "approval"))
					      ? sverbs
					      : cverbs));
	if (sub && !strcmp(sub, "token"))
		json_object_set_new(r, "group", json_string("authentication.k8s.io")),
			json_object_set_new(r, "version", json_string("v1"));
	if (sub && !strcmp(sub, "eviction"))
		json_object_set_new(r, "group", json_string("policy")), json_object_set_new(r, "version", json_string("v1"));
	if (sub && !strcmp(sub, "scale"))
		json_object_set_new(r, "group", json_string("autoscaling")),
			json_object_set_new(r, "version", json_string("v1"));
	if (!sub && t->shortnames[0])
		json_object_set_new(r, "shortNames", strings(t->shortnames));
	if (!sub && (!strcmp(t->plural, "pods") || !strcmp(t->plural, "jobs")))
		json_object_set_new(r, "categories", strings(all));
	if (!sub && mu__crdtype(t) && mu__crdtype(t)->categories[0])
		json_object_set_new(r, "categories", strings(mu__crdtype(t)->categories));
	return r;
}

static json_t *resource_list(const mu__types_t *r, const char *group, const char *version)
{
	json_t *res = json_array();
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || strcmp(t->group, group) || !serves(r, i, version))
			continue;
		json_array_append_new(res, resource_entry(t, NULL));
		if (t->subs & MU__SUB_STATUS)
			json_array_append_new(res, resource_entry(t, "status"));
		if (t->subs & MU__SUB_BINDING)
			json_array_append_new(res, resource_entry(t, "binding"));
		if (t->subs & MU__SUB_EVICTION)
			json_array_append_new(res, resource_entry(t, "eviction"));
		if (t->subs & MU__SUB_TOKEN)
			json_array_append_new(res, resource_entry(t, "token"));
		if (t->subs & MU__SUB_SCALE)
			json_array_append_new(res, resource_entry(t, "scale"));
		if (t->subs & MU__SUB_APPROVAL)
			json_array_append_new(res, resource_entry(t, "approval"));
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

static json_t *api_groups(const mu__types_t *r)
{
	const char *g[MU__RT_MAX];
	int k = groups(r, g, MU__RT_MAX);
	json_t *arr = json_array();
	for (int i = 0; i < k; i++) {
		json_t *d = group_doc(r, g[i]);
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
		doc = api_groups(s->types);
		break;
	case MU__R_GROUP:
		doc = group_doc(s->types, r->group);
		break;
	case MU__R_GV:
		doc = resource_list(s->types, r->core ? "" : r->group, r->version);
		break;
	case MU__R_OPENAPI_V2:
		mu__openapi_v2(s, rq, rs);
		return true;
	case MU__R_OPENAPI_V3:
		mu__openapi_v3(s, r, rs);
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
