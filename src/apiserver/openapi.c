/*
 * openapi.c - /openapi/v3, what `kubectl explain` reads (and what kubectl
 * asks before it trusts a server with field validation).
 *
 * /openapi/v3 is the index kube-apiserver serves: one entry per served
 * group-version ("api/v1", "apis/batch/v1", ...) with its document's
 * address and a hash of its content (kubectl caches documents by it).
 * /openapi/v3/api/V and /openapi/v3/apis/G/V are OpenAPI 3.0 documents:
 *
 *   - components.schemas: for a built-in kind, its model and every model
 *     reachable from it, from the generated registry schema_gen.c (field
 *     names, types, arrays and maps, the strategic merge keys of patch.c;
 *     the descriptions of schema_desc_gen.c, where the client's models
 *     keep them: not on fields whose type is a model), named
 *     io.k8s.api.VERSION.Name
 *     with the kind's x-kubernetes-group-version-kind; for a CRD's type, its
 *     openAPIV3Schema, with apiVersion, kind and ObjectMeta added as
 *     kube-apiserver adds them;
 *   - paths: the collection and item of each type, each operation with the
 *     kind's x-kubernetes-group-version-kind and, on writes, the
 *     fieldValidation and dryRun parameters: kubectl's query-parameter
 *     verifier looks for them on the PATCH operation before it lets the
 *     server validate fields.
 *
 * Documents are built per request, bounded by the registry's size; the
 * index is not: it hashes names and registration numbers only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

#define META "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

/* The component name of a generated model: "V1PodSpec" -> io.k8s.api.v1.PodSpec. */
static void model_name(int m, char *buf, size_t len)
{
	const char *n = mu__smodels[m].name;
	if (!strcmp(n, "V1ObjectMeta")) {
		snprintf(buf, len, "%s", META);
		return;
	}
	size_t v = 0;
	if (n[0] == 'V' && n[1] >= '0' && n[1] <= '9') {
		v = 2;
		while (n[v] >= '0' && n[v] <= '9')
			v++;
		static const char *const pre[] = {"alpha", "beta"};
		for (int i = 0; i < 2; i++)
			if (!strncmp(n + v, pre[i], strlen(pre[i]))) {
				v += strlen(pre[i]);
				while (n[v] >= '0' && n[v] <= '9')
					v++;
			}
	}
	char ver[32] = "";
	for (size_t i = 0; i < v && i < sizeof ver - 1; i++)
		ver[i] = (char)(n[i] == 'V' && !i ? 'v' : n[i]);
	snprintf(buf, len, "io.k8s.api.%s%s%s", ver, *ver ? "." : "", n + v);
}

static json_t *ref(int m)
{
	char nm[160], r[200];
	model_name(m, nm, sizeof nm);
	snprintf(r, sizeof r, "#/components/schemas/%s", nm);
	return json_pack("{s:s}", "$ref", r);
}

/* The schema of one value of field f. */
static json_t *elem_schema(const mu__sfield_t *f)
{
	switch (f->elem) {
	case MU__ST_STRING: return json_pack("{s:s}", "type", "string");
	case MU__ST_NUMBER: return json_pack("{s:s}", "type", "number");
	case MU__ST_BOOL: return json_pack("{s:s}", "type", "boolean");
	case MU__ST_TIME: return json_pack("{s:s, s:s}", "type", "string", "format", "date-time");
	case MU__ST_INTSTR: return json_pack("{s:b}", "x-kubernetes-int-or-string", 1);
	case MU__ST_OBJECT:
		if (f->model >= 0)
			return ref(f->model);
		/* fall through */
	default: return json_pack("{s:s, s:b}", "type", "object", "x-kubernetes-preserve-unknown-fields", 1);
	}
}

/* Adds model m and the models its fields reach to schemas (once each).
 * Bounded by the registry: each model is added at most once. */
static void add_model(json_t *schemas, int m)
{
	char nm[160];
	model_name(m, nm, sizeof nm);
	if (json_object_get(schemas, nm))
		return;
	json_t *props = json_object();
	json_t *ms = json_pack("{s:s, s:o}", "type", "object", "properties", props);
	if (mu__smodel_desc[m])
		json_object_set_new(ms, "description", json_string(mu__smodel_desc[m]));
	json_object_set_new(schemas, nm, ms);
	const mu__smodel_t *md = &mu__smodels[m];
	for (int i = 0; i < md->n; i++) {
		const mu__sfield_t *f = &mu__sfields[md->first + i];
		const char *desc = mu__sfield_desc[md->first + i];
		json_t *e = elem_schema(f), *fs;
		if (f->shape == MU__SS_ARRAY) {
			fs = json_pack("{s:s, s:o}", "type", "array", "items", e);
			const char *mk = mu__merge_key(f->name);
			if (mk) {
				json_object_set_new(fs, "x-kubernetes-patch-merge-key", json_string(mk));
				json_object_set_new(fs, "x-kubernetes-patch-strategy", json_string("merge"));
			}
		} else if (f->shape == MU__SS_MAP) {
			fs = json_pack("{s:s, s:o}", "type", "object", "additionalProperties", e);
		} else {
			fs = e;
		}
		if (desc && !json_object_get(fs, "$ref"))
			json_object_set_new(fs, "description", json_string(desc));
		json_object_set_new(props, f->name, fs);
		if (f->elem == MU__ST_OBJECT && f->model >= 0)
			add_model(schemas, f->model);
	}
}

static json_t *gvk(const mu__rtype_t *t, const char *version)
{
	return json_pack("{s:s, s:s, s:s}", "group", t->group, "kind", t->kind, "version", version);
}

/* The component name of a custom type: its group reversed, version, kind. */
static void crd_name(const mu__rtype_t *t, const char *version, char *buf, size_t len)
{
	char rev[300] = "";
	const char *g = t->group;
	const char *end = g + strlen(g);
	while (end > g) {
		const char *dot = end;
		while (dot > g && dot[-1] != '.')
			dot--;
		size_t l = strlen(rev);
		snprintf(rev + l, sizeof rev - l, "%s%.*s", l ? "." : "", (int)(end - dot), dot);
		end = dot > g ? dot - 1 : g;
	}
	snprintf(buf, len, "%s.%s.%s", rev, version, t->kind);
}

/* Adds the schema of type t at version (its component name into name). */
static void add_type(json_t *schemas, const mu__rtype_t *t, const char *version, char *name, size_t len)
{
	const mu__crdtype_t *c = mu__crdtype(t);
	json_t *sc;
	if (c) {
		crd_name(t, version, name, len);
		int vi = mu__crd_version(c, version);
		sc = vi >= 0 && c->v[vi].schema ? json_deep_copy(c->v[vi].schema) : json_object();
		if (!json_object_get(sc, "type"))
			json_object_set_new(sc, "type", json_string("object"));
		json_t *props = json_object_get(sc, "properties");
		if (!json_is_object(props))
			json_object_set_new(sc, "properties", props = json_object());
		json_object_set_new(props, "apiVersion", json_pack("{s:s}", "type", "string"));
		json_object_set_new(props, "kind", json_pack("{s:s}", "type", "string"));
		char r[200];
		snprintf(r, sizeof r, "#/components/schemas/%s", META);
		json_object_set_new(props, "metadata", json_pack("{s:s}", "$ref", r));
		int meta = -1;
		for (int i = 0; i < mu__nsmodels && meta < 0; i++)
			if (!strcmp(mu__smodels[i].name, "V1ObjectMeta"))
				meta = i;
		if (meta >= 0)
			add_model(schemas, meta);
		json_object_set_new(schemas, name, sc);
	} else {
		int m = mu__schema_model(t->group, t->kind);
		if (m < 0) {
			/* muster's own kinds: no generated schema, any field */
			snprintf(name, len, "io.muster.%s.%s", t->version, t->kind);
			json_object_set_new(schemas, name, json_pack("{s:s, s:b}", "type", "object",
								     "x-kubernetes-preserve-unknown-fields", 1));
		} else {
			add_model(schemas, m);
			model_name(m, name, len);
		}
		sc = json_object_get(schemas, name);
	}
	json_object_set_new(json_object_get(schemas, name), "x-kubernetes-group-version-kind",
			    json_pack("[o]", gvk(t, version)));
}

/* An operation on t answering with component name. */
static json_t *op(const mu__rtype_t *t, const char *version, const char *name, const char *id, bool write)
{
	char r[300];
	snprintf(r, sizeof r, "#/components/schemas/%s", name);
	json_t *o = json_pack("{s:s, s:o, s:{s:{s:s, s:{s:{s:{s:s}}}}}}", "operationId", id,
			      "x-kubernetes-group-version-kind", gvk(t, version), "responses", "200", "description",
			      "OK", "content", "application/json", "schema", "$ref", r);
	if (write) {
		json_object_set_new(o, "parameters",
				    json_pack("[{s:s, s:s, s:{s:s}}, {s:s, s:s, s:{s:s}}, {s:s, s:s, s:{s:s}}]", "name",
					      "dryRun", "in", "query", "schema", "type", "string", "name",
					      "fieldManager", "in", "query", "schema", "type", "string", "name",
					      "fieldValidation", "in", "query", "schema", "type", "string"));
		json_object_set_new(o, "requestBody",
				    json_pack("{s:{s:{s:{s:s}}}}", "content", "application/json", "schema", "$ref", r));
	}
	return o;
}

static void add_paths(json_t *paths, const mu__rtype_t *t, const char *version, const char *name)
{
	char base[400], coll[500], item[600], id[300];
	if (*t->group)
		snprintf(base, sizeof base, "/apis/%s/%s", t->group, version);
	else
		snprintf(base, sizeof base, "/api/%s", version);
	snprintf(coll, sizeof coll, "%s%s/%s", base, t->namespaced ? "/namespaces/{namespace}" : "", t->plural);
	snprintf(item, sizeof item, "%s/{name}", coll);
	snprintf(id, sizeof id, "create%s", t->kind);
	json_object_set_new(paths, coll, json_pack("{s:o, s:o}", "get", op(t, version, name, "list", false), "post",
						   op(t, version, name, id, true)));
	json_object_set_new(paths, item, json_pack("{s:o, s:o, s:o}", "get", op(t, version, name, "read", false),
						   "put", op(t, version, name, "replace", true), "patch",
						   op(t, version, name, "patch", true)));
}

/* The document of group g ("" core), version v; NULL when nothing is served there. */
static json_t *gv_doc(const mu__types_t *r, const char *g, const char *v)
{
	json_t *schemas = json_object(), *paths = json_object();
	int found = 0;
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || strcmp(t->group, g) || !mu__type_served(r, i))
			continue;
		const mu__crdtype_t *c = mu__crdtype(t);
		if (c ? mu__crd_version(c, v) < 0 : strcmp(t->version, v) != 0)
			continue;
		char name[400];
		add_type(schemas, t, v, name, sizeof name);
		add_paths(paths, t, v, name);
		found++;
	}
	if (!found) {
		json_decref(schemas);
		json_decref(paths);
		return NULL;
	}
	return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0", "info", "title", "Kubernetes",
			 "version", "v1.32.0", "paths", paths, "components", "schemas", schemas);
}

json_t *mu__openapi_gv_doc(const mu__types_t *r, const char *g, const char *v)
{
	return gv_doc(r, g, v);
}

static unsigned long long fnv(unsigned long long h, const char *p)
{
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

/* The hash kubectl caches the document of g/v by: it changes whenever
 * what the document is built from does (the generated registry, the
 * types served there, each CRD's registration), without building it. */
static unsigned long long gv_hash(const mu__types_t *r, const char *g, const char *v)
{
	unsigned long long h = fnv(fnv(fnv(1469598103934665603ull, mu__schema_source), g), v);
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || strcmp(t->group, g) || !mu__type_served(r, i))
			continue;
		const mu__crdtype_t *c = mu__crdtype(t);
		if (c ? mu__crd_version(c, v) < 0 : strcmp(t->version, v) != 0)
			continue;
		char seq[32];
		snprintf(seq, sizeof seq, "/%lu", c ? c->seq : 0ul);
		h = fnv(fnv(h, t->plural), seq);
	}
	return h;
}

/* The index: every served group-version with its document's address. */
static json_t *index_doc(const mu__types_t *r)
{
	json_t *paths = json_object();
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || !mu__type_served(r, i))
			continue;
		const mu__crdtype_t *c = mu__crdtype(t);
		for (int v = 0; v < (c ? c->nver : 1); v++) {
			const char *ver = c ? c->v[v].name : t->version;
			if (c && !c->v[v].served)
				continue;
			char key[300], url[400];
			if (*t->group)
				snprintf(key, sizeof key, "apis/%s/%s", t->group, ver);
			else
				snprintf(key, sizeof key, "api/%s", ver);
			if (json_object_get(paths, key))
				continue;
			snprintf(url, sizeof url, "/openapi/v3/%s?hash=%016llX", key, gv_hash(r, t->group, ver));
			json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
		}
	}
	return json_pack("{s:o}", "paths", paths);
}

void mu__openapi_v3(mu_apiserver_t *s, const mu__route_t *r, mu__resp_t *rs)
{
	json_t *doc = r->version[0] ? gv_doc(s->types, r->core ? "" : r->group, r->version) : index_doc(s->types);
	if (!doc)
		mu__resp_status(rs, 404, "NotFound", "the server could not find the requested resource");
	else
		mu__resp_json(rs, 200, doc);
}
