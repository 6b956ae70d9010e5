/*
 * openapi_v2.c - /openapi/v2, the Swagger 2.0 document kube-apiserver
 * serves beside /openapi/v3, from the same schemas (openapi.c builds them
 * from the generated registry and the CRDs).
 *
 * The definitions are the union of every served group-version's v3
 * components (references rewritten to #/definitions/); the paths are the
 * v3 operations with their request body as a body parameter, their query
 * parameters typed inline and their 200 answer's schema, as a v2 document
 * says them.  Answered as JSON, or, when the Accept header asks for it as
 * client-go's OpenAPISchema() does, as the protobuf encoding of
 * gnostic's openapi.v2.Document (the messages and field numbers of
 * github.com/google/gnostic openapiv2/OpenAPIv2.proto), which `kubectl
 * explain --output plaintext-openapiv2` and kubectl's v2 fallbacks read.
 * Vendor extensions (x-kubernetes-group-version-kind, the patch merge keys)
 * travel as their JSON text in Any.yaml, which their YAML reader takes.
 *
 * Built per request, bounded by the registry's size.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

/* --- the Swagger 2.0 JSON document ------------------------------------- */

/* Rewrites every "$ref" under v from the v3 place to the v2 one. */
static void fix_refs(json_t *v, int depth)
{
	if (depth > MU__MAX_DEPTH)
		return;
	const char *k;
	json_t *x;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach(v, k, x) {
			const char *r = json_string_value(x);
			if (!strcmp(k, "$ref") && r && !strncmp(r, "#/components/schemas/", 21)) {
				char buf[600];
				snprintf(buf, sizeof buf, "#/definitions/%s", r + 21);
				json_object_set_new(v, k, json_string(buf));
			} else {
				fix_refs(x, depth + 1);
			}
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			fix_refs(x, depth + 1);
	}
}

/* A v2 operation from a v3 one (a new object). */
static json_t *v2_op(json_t *op)
{
	json_t *o = json_object();
	json_object_set(o, "operationId", json_object_get(op, "operationId"));
	json_object_set(o, "x-kubernetes-group-version-kind", json_object_get(op, "x-kubernetes-group-version-kind"));
	json_object_set_new(o, "produces", json_pack("[s]", "application/json"));
	json_t *params = json_array(), *p;
	size_t i;
	json_array_foreach(json_object_get(op, "parameters"), i, p)
		json_array_append_new(params, json_pack("{s:O?, s:s, s:s, s:b}", "name", json_object_get(p, "name"),
							"in", "query", "type", "string", "uniqueItems", 1));
	json_t *body = json_object_get(json_object_get(json_object_get(json_object_get(op, "requestBody"), "content"),
						       "application/json"), "schema");
	if (body) {
		json_array_append_new(params, json_pack("{s:s, s:s, s:b, s:O}", "name", "body", "in", "body", "required",
							1, "schema", body));
		json_object_set_new(o, "consumes", json_pack("[s]", "application/json"));
	}
	json_object_set_new(o, "parameters", params);
	json_t *ok = json_object_get(json_object_get(op, "responses"), "200");
	json_t *sc = json_object_get(json_object_get(json_object_get(ok, "content"), "application/json"), "schema");
	json_object_set_new(o, "responses", json_pack("{s:{s:s, s:O?}}", "200", "description", "OK", "schema", sc));
	return o;
}

/* Adds the definitions and paths of one group-version's v3 document. */
static void add_gv(json_t *defs, json_t *paths, json_t *v3)
{
	json_object_update_missing(defs, json_object_get(json_object_get(v3, "components"), "schemas"));
	const char *path, *verb;
	json_t *item, *op;
	json_object_foreach(json_object_get(v3, "paths"), path, item) {
		json_t *pi = json_object();
		json_object_foreach(item, verb, op)
			json_object_set_new(pi, verb, v2_op(op));
		json_object_set_new(paths, path, pi);
	}
}

/* The whole Swagger 2.0 document (caller owns). */
static json_t *v2_doc(const mu__types_t *r)
{
	json_t *defs = json_object(), *paths = json_object(), *seen = json_object();
	for (int i = 0; i < mu__types_end(r); i++) {
		const mu__rtype_t *t = mu__type(r, i);
		if (!t || !mu__type_served(r, i))
			continue;
		const mu__crdtype_t *c = mu__crdtype(t);
		for (int v = 0; v < (c ? c->nver : 1); v++) {
			const char *ver = c ? c->v[v].name : t->version;
			char key[300];
			snprintf(key, sizeof key, "%s/%s", t->group, ver);
			if ((c && !c->v[v].served) || json_object_get(seen, key))
				continue;
			json_object_set_new(seen, key, json_true());
			json_t *d = mu__openapi_gv_doc(r, t->group, ver);
			if (d)
				add_gv(defs, paths, d);
			json_decref(d);
		}
	}
	json_decref(seen);
	json_t *doc = json_pack("{s:s, s:{s:s, s:s}, s:o, s:o}", "swagger", "2.0", "info", "title", "Kubernetes",
				"version", "v1.32.0", "paths", paths, "definitions", defs);
	fix_refs(doc, 0);
	return doc;
}

/* --- protobuf (openapi.v2.Document) ------------------------------------- */

typedef struct pbuf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
} pbuf_t;

static void put(pbuf_t *b, const void *d, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->n + n > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		while (c < b->n + n)
			c *= 2;
		unsigned char *q = realloc(b->p, c);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void varint(pbuf_t *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;
	do {
		t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(b, t, n);
}

static void bytes_field(pbuf_t *b, unsigned num, const void *d, size_t n)
{
	varint(b, (uint64_t)num << 3 | 2);
	varint(b, n);
	put(b, d, n);
}

static void str_field(pbuf_t *b, unsigned num, const char *s)
{
	if (s)
		bytes_field(b, num, s, strlen(s));
}

/* Appends sub as message field num of b and frees sub. */
static void msg_field(pbuf_t *b, unsigned num, pbuf_t *sub)
{
	if (sub->oom)
		b->oom = true;
	bytes_field(b, num, sub->p ? (const void *)sub->p : "", sub->n);
	free(sub->p);
	memset(sub, 0, sizeof *sub);
}

/* An openapi.v2.Any holding v as YAML (its JSON text) as field num. */
static void any_field(pbuf_t *b, unsigned num, const json_t *v)
{
	char *y = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	pbuf_t a = {0};
	str_field(&a, 2, y ? y : "null");
	free(y);
	msg_field(b, num, &a);
}

/* A NamedAny vendor extension as field num. */
static void ext_field(pbuf_t *b, unsigned num, const char *name, const json_t *v)
{
	pbuf_t na = {0};
	str_field(&na, 1, name);
	any_field(&na, 2, v);
	msg_field(b, num, &na);
}

static void schema_msg(pbuf_t *b, const json_t *s, int depth);

static void schema_field(pbuf_t *b, unsigned num, const json_t *s, int depth)
{
	pbuf_t sub = {0};
	schema_msg(&sub, s, depth + 1);
	msg_field(b, num, &sub);
}

/* A NamedSchema (name, schema) as field num. */
static void named_schema(pbuf_t *b, unsigned num, const char *name, const json_t *s, int depth)
{
	pbuf_t ns = {0};
	str_field(&ns, 1, name);
	schema_field(&ns, 2, s, depth);
	msg_field(b, num, &ns);
}

/* openapi.v2.Schema: the JSON Schema keywords a Kubernetes schema uses. */
static void schema_msg(pbuf_t *b, const json_t *s, int depth)
{
	if (depth > MU__MAX_DEPTH || !json_is_object(s))
		return;
	str_field(b, 1, json_string_value(json_object_get(s, "$ref")));
	str_field(b, 2, json_string_value(json_object_get(s, "format")));
	str_field(b, 4, json_string_value(json_object_get(s, "description")));
	if (json_object_get(s, "default"))
		any_field(b, 5, json_object_get(s, "default"));
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(s, "required"), i, x)
		str_field(b, 19, json_string_value(x));
	json_array_foreach(json_object_get(s, "enum"), i, x)
		any_field(b, 20, x);
	json_t *ap = json_object_get(s, "additionalProperties");
	if (ap) {
		pbuf_t it = {0};
		if (json_is_object(ap)) {
			schema_field(&it, 1, ap, depth);
		} else {
			varint(&it, 2 << 3);
			varint(&it, json_is_true(ap));
		}
		msg_field(b, 21, &it);
	}
	json_t *ty = json_object_get(s, "type");
	if (ty) {
		pbuf_t ti = {0};
		if (json_is_string(ty))
			str_field(&ti, 1, json_string_value(ty));
		json_array_foreach(ty, i, x)
			str_field(&ti, 1, json_string_value(x));
		msg_field(b, 22, &ti);
	}
	json_t *items = json_object_get(s, "items");
	if (items) {
		pbuf_t ii = {0};
		if (json_is_array(items))
			json_array_foreach(items, i, x)
				schema_field(&ii, 1, x, depth);
		else
			schema_field(&ii, 1, items, depth);
		msg_field(b, 23, &ii);
	}
	json_array_foreach(json_object_get(s, "allOf"), i, x)
		schema_field(b, 24, x, depth);
	const json_t *props = json_object_get(s, "properties");
	if (json_is_object(props)) {
		pbuf_t pp = {0};
		const char *k;
		json_object_foreach((json_t *)props, k, x)
			named_schema(&pp, 1, k, x, depth);
		msg_field(b, 25, &pp);
	}
	const char *k;
	json_object_foreach((json_t *)s, k, x)
		if (!strncmp(k, "x-", 2))
			ext_field(b, 31, k, x);
}

/* A ParametersItem of a v2 parameter object as field num. */
static void param_field(pbuf_t *b, unsigned num, const json_t *p)
{
	pbuf_t inner = {0}, par = {0}, item = {0};
	const char *in = json_string_value(json_object_get(p, "in"));
	if (in && !strcmp(in, "body")) {
		str_field(&inner, 2, json_string_value(json_object_get(p, "name")));
		str_field(&inner, 3, in);
		varint(&inner, 4 << 3);
		varint(&inner, 1);
		schema_field(&inner, 5, json_object_get(p, "schema"), 0);
		msg_field(&par, 1, &inner); /* Parameter.body_parameter */
	} else {
		pbuf_t q = {0};
		str_field(&q, 2, in);
		str_field(&q, 4, json_string_value(json_object_get(p, "name")));
		str_field(&q, 6, json_string_value(json_object_get(p, "type")));
		msg_field(&inner, 3, &q);   /* NonBodyParameter.query_parameter_sub_schema */
		msg_field(&par, 2, &inner); /* Parameter.non_body_parameter */
	}
	msg_field(&item, 1, &par); /* ParametersItem.parameter */
	msg_field(b, num, &item);
}

/* openapi.v2.Operation. */
static void op_msg(pbuf_t *b, const json_t *op)
{
	str_field(b, 5, json_string_value(json_object_get(op, "operationId")));
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(op, "produces"), i, x)
		str_field(b, 6, json_string_value(x));
	json_array_foreach(json_object_get(op, "consumes"), i, x)
		str_field(b, 7, json_string_value(x));
	json_array_foreach(json_object_get(op, "parameters"), i, x)
		param_field(b, 8, x);
	const json_t *ok = json_object_get(json_object_get(op, "responses"), "200");
	pbuf_t resp = {0}, rv = {0}, nrv = {0}, rs = {0};
	str_field(&resp, 1, "OK");
	if (json_object_get(ok, "schema")) {
		pbuf_t si = {0};
		schema_field(&si, 1, json_object_get(ok, "schema"), 0);
		msg_field(&resp, 2, &si); /* SchemaItem.schema */
	}
	msg_field(&rv, 1, &resp); /* ResponseValue.response */
	str_field(&nrv, 1, "200");
	msg_field(&nrv, 2, &rv);
	msg_field(&rs, 1, &nrv); /* Responses.response_code */
	msg_field(b, 9, &rs);
	const json_t *g = json_object_get(op, "x-kubernetes-group-version-kind");
	if (g)
		ext_field(b, 13, "x-kubernetes-group-version-kind", g);
}

/* The protobuf encoding of doc; NULL when out of memory. */
static unsigned char *v2_proto(const json_t *doc, size_t *len)
{
	pbuf_t b = {0}, info = {0}, paths = {0}, defs = {0};
	str_field(&b, 1, "2.0");
	str_field(&info, 1, "Kubernetes");
	str_field(&info, 2, "v1.32.0");
	msg_field(&b, 2, &info);
	const char *path, *verb;
	json_t *item, *op;
	static const char *const verbs[] = {"get", "put", "post", "delete", "options", "head", "patch"};
	json_object_foreach(json_object_get(doc, "paths"), path, item) {
		pbuf_t pi = {0}, np = {0};
		for (unsigned v = 0; v < sizeof verbs / sizeof *verbs; v++) {
			json_object_foreach(item, verb, op) {
				if (strcmp(verb, verbs[v]))
					continue;
				pbuf_t o = {0};
				op_msg(&o, op);
				msg_field(&pi, 2 + v, &o); /* PathItem.get = 2 ... patch = 8 */
			}
		}
		str_field(&np, 1, path);
		msg_field(&np, 2, &pi);
		msg_field(&paths, 2, &np); /* Paths.path */
	}
	msg_field(&b, 8, &paths);
	const char *name;
	json_t *sc;
	json_object_foreach(json_object_get(doc, "definitions"), name, sc)
		named_schema(&defs, 1, name, sc, 0);
	msg_field(&b, 9, &defs);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.n;
	return b.p;
}

void mu__openapi_v2(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs)
{
	json_t *doc = v2_doc(s->types);
	if (!rq->accept || !strstr(rq->accept, "protobuf")) {
		mu__resp_json(rs, 200, doc);
		return;
	}
	size_t n = 0;
	unsigned char *p = v2_proto(doc, &n);
	json_decref(doc);
	if (!p) {
		mu__resp_status(rs, 500, "InternalError", "out of memory");
		return;
	}
	rs->code = 200;
	rs->ctype = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"; /* kube-openapi answers so */
	rs->body = (char *)p;
	rs->len = n;
}
