/*
 * crd_conv.c - the versions of a custom resource and their conversion, as
 * kube-apiserver's apiextensions serves them.  An object is stored in the
 * version that was the CRD's storage version when it was last written
 * (its stored apiVersion says which), and every request names a served
 * version: with spec.conversion.strategy None, converting is rewriting
 * apiVersion, so an answer (an object, a list and its items, a Table's
 * full objects, each watch event) carries the version the request named.
 *
 * With strategy Webhook the CRD's webhook converts (crd_webhook.c), as
 * kube-apiserver's converter calls it: a request at a version V other than
 * the storage version S is served at S, its body converted from V to S
 * first (a create or replace; a merge or JSON patch is applied to the
 * stored object converted to V, and the result converted back, then
 * written as a replace at the version read, made again when a concurrent
 * write wins, as kube's patcher retries); every object the answer carries that is not in V (a get, the
 * items of a list or of a Table, the object a write or delete returns, each
 * watch event) goes to the webhook, a list's in one ConversionReview.  A
 * failed conversion is a 500 with kube's message.  A server-side apply at
 * any version V (the storage version too, for the managers at others) is
 * made at V, as kube's structured-merge manager makes it: the stored
 * object converted to V, the managers at V compared there, those at
 * another version W on the old and merged objects converted to W (ssa.c,
 * mu__ssa_apply_conv), the result converted to S and written with its
 * managedFields as a replace at the version read (retried as a patch
 * is), or a create.  Work: one webhook call per request (an apply: two,
 * plus one per other version its managers are at) and per converted watch
 * event, and linear in the answer's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"

/* A 500 with a conversion's message (kube's words, crd_webhook.c). */
static void conv_failed(mu__resp_t *rs, const char *msg)
{
	free(rs->body);
	rs->body = NULL;
	mu__resp_status(rs, 500, "InternalError", "%s", msg);
}

/* Converts the objects of array objs not in apiVersion av with c's
 * webhook; false with rs filled on failure. */
static bool webhook(const mu__crdtype_t *c, json_t *objs, const char *av, mu__resp_t *rs)
{
	char err[3000];
	if (mu__crd_webhook_convert(c, objs, av, err, sizeof err) == MU_OK)
		return true;
	conv_failed(rs, err);
	return false;
}

/* One object o converted to av (a new reference), or NULL with rs filled. */
static json_t *webhook_one(const mu__crdtype_t *c, json_t *o, const char *av, mu__resp_t *rs)
{
	json_t *a = json_array();
	if (!a || json_array_append(a, o)) {
		json_decref(a);
		mu__resp_status(rs, 500, "InternalError", "out of memory");
		return NULL;
	}
	json_t *r = webhook(c, a, av, rs) ? json_incref(json_array_get(a, 0)) : NULL;
	json_decref(a);
	return r;
}

/* The body of a merge or JSON patch at version av applied to the stored
 * object (converted from the storage version to av and back); the result,
 * at the storage version with the stored resourceVersion unless the patch
 * set one, or NULL with rs filled. */
static json_t *patch_at(mu_apiserver_t *s, int rt, const mu__crdtype_t *c, const mu__req_t *rq, const char *av,
			const char *sav, mu__resp_t *rs)
{
	int ct = mu__content_type(rq->ctype);
	char err[512];
	json_t *p = mu__json_body(rq->body, rq->body_len, s->o.max_body, err, sizeof err);
	if (!p || json_is_array(p) != (ct == MU__CT_JSONPATCH)) {
		mu__resp_status(rs, 400, "BadRequest", "%s", !p ? err : json_is_array(p) ? "the request body must be a JSON "
				"object" : "a JSON patch must be an array of operations");
		json_decref(p);
		return NULL;
	}
	mu__obj_t *cur = mu__store_get(s->store, rt, rq->route.ns, rq->route.name);
	json_t *old = cur ? mu__obj_parse(cur) : NULL;
	if (!cur) {
		mu__resp_store_err(rs, MU_ENOENT, &c->t, rq->route.name);
		json_decref(p);
		return NULL;
	}
	char rv[32];
	err[0] = '\0';
	snprintf(rv, sizeof rv, "%lld", (long long)cur->rv);
	mu__obj_unref(cur);
	json_t *at = old ? webhook_one(c, old, av, rs) : NULL;
	json_decref(old);
	int rc = at ? (ct == MU__CT_JSONPATCH ? mu__json_patch(&at, p, err, sizeof err) : mu__merge_patch(at, p))
		    : MU_ENOMEM;
	json_decref(p);
	if (at && (rc != MU_OK || !json_is_object(at))) {
		mu__resp_status(rs, rc == MU_EPARSE ? 400 : 422, rc == MU_EPARSE ? "BadRequest" : "Invalid",
				"the patch could not be applied: %s", err[0] && rc != MU_OK ? err : mu_strerror(rc));
		json_decref(at);
		return NULL;
	}
	json_t *back = at ? webhook_one(c, at, sav, rs) : NULL;
	json_decref(at);
	if (back && !mu__jstr(back, "metadata.resourceVersion") && json_is_object(json_object_get(back, "metadata")))
		json_object_set_new(json_object_get(back, "metadata"), "resourceVersion", json_string(rv));
	return back;
}

/* Prunes and defaults body (an object of c at version vi) as kube decodes
 * it at that version, with the request's fieldValidation: false with a
 * 400 in rs when Strict finds unknown fields. */
static bool decode_at(const mu__crdtype_t *c, int vi, json_t *body, const mu__req_t *rq, mu__resp_t *rs)
{
	mu__unknown_t u;
	bool strict = rq->q.field_validation == MU__FV_STRICT;
	mu__crd_prune(c, vi, body, !strict, &u);
	if (strict && u.n) {
		mu__resp_status(rs, 400, "BadRequest", "%s in version \"%s\" cannot be handled as a %s: "
				"strict decoding error: %s", c->t.kind, c->v[vi].name, c->t.kind, u.text);
		return false;
	}
	if (u.n && rq->q.field_validation == MU__FV_WARN)
		snprintf(rs->warning, sizeof rs->warning, "%s", u.text);
	return true;
}

/* mu__ssa_conv_fn for c's webhook. */
static int ssa_conv(void *ctx, json_t *objs, const char *av, char *msg, size_t msglen)
{
	const mu__crdtype_t *c = ctx;
	size_t gl = strlen(c->t.group);
	if (strncmp(av, c->t.group, gl) || av[gl] != '/' || mu__crd_version(c, av + gl + 1) < 0)
		return MU_ENOENT;
	return mu__crd_webhook_convert(c, objs, av, msg, msglen);
}

/* Copies the managedFields of from into to (both objects). */
static void keep_fields(json_t *to, const json_t *from)
{
	json_t *mf = mu__jget(from, "metadata.managedFields"), *md = json_object_get(to, "metadata");
	if (json_is_object(md) && mf)
		json_object_set(md, "managedFields", mf);
	else if (json_is_object(md))
		json_object_del(md, "managedFields");
}

/* A server-side apply at version av (index vi) of c, as kube's
 * structured-merge manager applies at the request's version: the stored
 * object converted to av, the configuration applied there with the
 * managers at other versions compared at theirs (ssa.c), the result
 * converted back to the storage version sav with its managedFields.  The
 * object to write (*create: there was none), or NULL with rs filled. */
static json_t *apply_at(mu_apiserver_t *s, int rt, const mu__crdtype_t *c, const mu__req_t *rq, const char *av,
			int vi, const char *sav, bool *create, mu__resp_t *rs)
{
	char err[4096];
	*create = false;
	if (!rq->q.field_manager[0]) {
		mu__resp_status(rs, 422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
				"value: is required for apply patch");
		return NULL;
	}
	json_t *body = mu__json_body(rq->body, rq->body_len, s->o.max_body, err, sizeof err);
	if (!json_is_object(body)) {
		mu__resp_status(rs, 400, "BadRequest", "%s", body ? "the request body must be a JSON object" : err);
		json_decref(body);
		return NULL;
	}
	const char *bav = mu__jstr(body, "apiVersion"), *nm = mu__jstr(body, "metadata.name");
	if (bav && strcmp(bav, av)) { /* kube's structuredMergeManager.Apply */
		mu__resp_status(rs, 400, "BadRequest", "the API version in the data (%s) does not match the expected API "
				"version (%s)", bav, av);
		json_decref(body);
		return NULL;
	}
	if (!nm || strcmp(nm, rq->route.name)) {
		mu__resp_status(rs, 400, "BadRequest", "metadata.name must be %s", rq->route.name);
		json_decref(body);
		return NULL;
	}
	if (!decode_at(c, vi, body, rq, rs)) {
		json_decref(body);
		return NULL;
	}
	mu__mgr_t m;
	if (mu__mgr_init(&m, rq, &c->t, err, sizeof err) != MU_OK) {
		mu__resp_status(rs, 422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: %s", err);
		json_decref(body);
		return NULL;
	}
	snprintf(m.api_version, sizeof m.api_version, "%s", av);
	mu__obj_t *cur = mu__store_get(s->store, rt, rq->route.ns, rq->route.name);
	json_t *old = cur ? mu__obj_parse(cur) : NULL, *nw = NULL;
	char rv[32];
	snprintf(rv, sizeof rv, "%lld", cur ? (long long)cur->rv : 0LL);
	mu__obj_unref(cur);
	if (!old) { /* a create: the applier owns what it applied, at av */
		nw = json_deep_copy(body);
		if (nw)
			mu__mf_apply_create(nw, body, &m);
		*create = true;
	} else {
		json_t *at = webhook_one(c, old, av, rs);
		if (at) {
			keep_fields(at, old);
			mu__verr_t e = {0};
			int rc = mu__ssa_apply_conv(at, body, &m, ssa_conv, (void *)c, &nw, err, sizeof err, &e);
			if (rc == MU_ESTATE)
				mu__resp_err(rs, 409, "Conflict", NULL, NULL, &e, "%s", err);
			else if (rc != MU_OK)
				mu__resp_status(rs, 500, "InternalError", "%s", err);
		}
		json_decref(at);
	}
	json_decref(old);
	json_decref(body);
	json_t *back = nw ? webhook_one(c, nw, sav, rs) : NULL;
	if (back) {
		keep_fields(back, nw);
		json_t *md = json_object_get(back, "metadata");
		if (json_is_object(md) && !*create)
			json_object_set_new(md, "resourceVersion", json_string(rv));
	}
	json_decref(nw);
	return back;
}

const mu__req_t *mu__crd_conv_before(mu_apiserver_t *s, int rt, const mu__crdtype_t *c, const mu__req_t *rq,
				     mu__req_t *out, char **owned, mu__resp_t *rs)
{
	*owned = NULL;
	if (!c || !c->conv_webhook)
		return rq; /* the built-in kinds and strategy None: no copy */
	*out = *rq;
	/* a Table is made of converted objects, as kube's: its rows carry the
	 * full objects to the webhook (mu__crd_conv_after puts back what the
	 * request asked for) */
	if (c->nver > 1 && !strcmp(rq->method, "GET") && !rq->q.watch && rq->accept && strstr(rq->accept, "as=Table"))
		out->q.include_object = 2;
	const char *sub = rq->route.sub;
	/* an apply at the storage version too, for the managers at others */
	bool apply = !strcmp(rq->method, "PATCH") && mu__content_type(rq->ctype) == MU__CT_APPLY &&
		     (!*sub || !strcmp(sub, "status"));
	if (!strcmp(rq->route.version, c->v[c->storage].name) && !apply)
		return out;
	if (!strcmp(sub, "scale")) { /* an autoscaling/v1 Scale: nothing to convert */
		snprintf(out->route.version, sizeof out->route.version, "%s", c->v[c->storage].name);
		return out;
	}
	char av[300], sav[300];
	snprintf(av, sizeof av, "%s/%s", c->t.group, rq->route.version);
	snprintf(sav, sizeof sav, "%s/%s", c->t.group, c->v[c->storage].name);
	bool post = !strcmp(rq->method, "POST"), put = !strcmp(rq->method, "PUT"), patch = !strcmp(rq->method, "PATCH");
	int ct = mu__content_type(rq->ctype);
	json_t *body = NULL;
	if ((post || put) && ct == MU__CT_JSON && (!*sub || !strcmp(sub, "status"))) {
		char err[512];
		body = mu__json_body(rq->body, rq->body_len, s->o.max_body, err, sizeof err);
		if (json_is_object(body)) {
			const char *bav = mu__jstr(body, "apiVersion");
			if (!bav || !*bav)
				json_object_set_new(body, "apiVersion", json_string(bav = av));
			int vi = mu__crd_version(c, strchr(bav, '/') ? strchr(bav, '/') + 1 : bav);
			const char *k = mu__jstr(body, "kind");
			/* pruned and defaulted at its own version first, as kube decodes it */
			if (vi >= 0 && (!k || !strcmp(k, c->t.kind)) && !strncmp(bav, c->t.group, strlen(c->t.group))) {
				if (!k)
					json_object_set_new(body, "kind", json_string(c->t.kind));
				if (!decode_at(c, vi, body, rq, rs)) {
					json_decref(body);
					return NULL;
				}
				json_t *conv = webhook_one(c, body, sav, rs);
				json_decref(body);
				if (!conv)
					return NULL;
				body = conv;
			}
		}
	} else if (patch && (ct == MU__CT_MERGE || ct == MU__CT_JSONPATCH) && (!*sub || !strcmp(sub, "status"))) {
		body = patch_at(s, rt, c, rq, av, sav, rs);
		if (!body)
			return NULL;
		out->method = "PUT";
		out->ctype = "application/json";
	} else if (apply) {
		bool create;
		body = apply_at(s, rt, c, rq, av, mu__crd_version(c, rq->route.version), sav, &create, rs);
		if (!body)
			return NULL;
		out->method = create ? "POST" : "PUT";
		if (create)
			out->route.name[0] = '\0';
		out->ctype = "application/json";
		out->mf_final = true;
	}
	if (body) {
		*owned = json_dumps(body, JSON_COMPACT);
		json_decref(body);
		if (!*owned) {
			mu__resp_status(rs, 500, "InternalError", "out of memory");
			return NULL;
		}
		out->body = *owned;
		out->body_len = strlen(*owned);
	}
	snprintf(out->route.version, sizeof out->route.version, "%s", c->v[c->storage].name);
	return out;
}

/* Rewrites the apiVersion of o (an object of c) to av (strategy None). */
static void rename_version(const mu__crdtype_t *c, json_t *o, const char *av)
{
	const char *have = json_string_value(json_object_get(o, "apiVersion"));
	const char *kind = json_string_value(json_object_get(o, "kind"));
	if (have && kind && !strcmp(kind, c->t.kind) && strcmp(have, av))
		json_object_set_new(o, "apiVersion", json_string(av));
}

/* Whether o is an object of c (not a Status, PartialObjectMetadata...). */
static bool is_ours(const mu__crdtype_t *c, const json_t *o)
{
	const char *kind = json_string_value(json_object_get(o, "kind"));
	return kind && !strcmp(kind, c->t.kind) && json_string_value(json_object_get(o, "apiVersion"));
}

/* The objects of c in the answer v, in order (borrowed into a new array). */
static json_t *answer_objects(const mu__crdtype_t *c, json_t *v)
{
	json_t *a = json_array();
	const char *kind = json_string_value(json_object_get(v, "kind"));
	size_t i;
	json_t *it;
	if (!a || !kind)
		return a;
	if (is_ours(c, v)) {
		json_array_append(a, v);
	} else if (!strcmp(kind, "Table")) {
		json_array_foreach(json_object_get(v, "rows"), i, it)
			if (is_ours(c, json_object_get(it, "object")))
				json_array_append(a, json_object_get(it, "object"));
	} else if (json_is_array(json_object_get(v, "items"))) {
		json_array_foreach(json_object_get(v, "items"), i, it)
			if (is_ours(c, it))
				json_array_append(a, it);
	}
	return a;
}

/* Puts the converted objects conv back where answer_objects() found them
 * (a Table's rows as include_object asked: 2 the object, 1 none, 0 its
 * PartialObjectMetadata); the new answer (v, or the converted object). */
static json_t *put_back(const mu__crdtype_t *c, json_t *v, json_t *conv, const char *av, int include_object)
{
	const char *kind = json_string_value(json_object_get(v, "kind"));
	size_t i, k = 0;
	json_t *it;
	if (is_ours(c, v))
		return json_incref(json_array_get(conv, 0));
	if (!strcmp(kind, "Table")) {
		json_array_foreach(json_object_get(v, "rows"), i, it) {
			if (!is_ours(c, json_object_get(it, "object")))
				continue;
			const json_t *o = json_array_get(conv, k++);
			if (include_object == 2)
				json_object_set(it, "object", (json_t *)o);
			else if (include_object == 1)
				json_object_del(it, "object");
			else
				json_object_set_new(it, "object", json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata",
									    "apiVersion", "meta.k8s.io/v1", "metadata",
									    json_object_get(o, "metadata")));
		}
	} else {
		json_object_set_new(v, "apiVersion", json_string(av));
		json_t *items = json_object_get(v, "items");
		json_array_foreach(items, i, it)
			if (is_ours(c, it))
				json_array_set(items, i, json_array_get(conv, k++));
	}
	return json_incref(v);
}

void mu__crd_conv_after(const mu__crdtype_t *c, const mu__req_t *rq, mu__resp_t *rs)
{
	if (!c || c->nver < 2 || !strcmp(rq->route.sub, "scale"))
		return;
	char av[300];
	snprintf(av, sizeof av, "%s/%s", c->t.group, rq->route.version);
	if (rs->watch) {
		if (c->conv_webhook)
			mu__watch_set_webhook(rs->watch, c, av);
		else
			mu__watch_set_apiversion(rs->watch, av);
		return;
	}
	if (!rs->body || rs->code >= 300 || !rs->ctype || strcmp(rs->ctype, "application/json"))
		return;
	json_t *v = json_loadb(rs->body, rs->len, 0, NULL);
	if (!v)
		return;
	json_t *objs = answer_objects(c, v);
	json_t *nv = NULL;
	if (objs && c->conv_webhook) {
		if (webhook(c, objs, av, rs))
			nv = put_back(c, v, objs, av, rq->q.include_object);
	} else if (objs) {
		size_t i;
		json_t *o;
		json_array_foreach(objs, i, o)
			rename_version(c, o, av);
		if (json_is_array(json_object_get(v, "items")))
			json_object_set_new(v, "apiVersion", json_string(av));
		nv = json_incref(v);
	}
	char *text = nv ? json_dumps(nv, JSON_COMPACT) : NULL;
	if (text) {
		free(rs->body);
		rs->body = text;
		rs->len = strlen(text);
	}
	json_decref(nv);
	json_decref(objs);
	json_decref(v);
}

/* Whether text (n bytes, not NUL-terminated) contains w.  O(n * |w|). */
static bool contains(const char *text, size_t n, const char *w)
{
	size_t wl = strlen(w);
	for (size_t i = 0; i + wl <= n; i++)
		if (!memcmp(text + i, w, wl))
			return true;
	return false;
}

bool mu__crd_conv_retry(const mu__req_t *rq, const mu__req_t *use, const mu__resp_t *rs)
{
	/* a patch that names a resourceVersion itself meant its conflict */
	return use != rq && rs->code == 409 && !rs->watch && !strcmp(rq->method, "PATCH") &&
	       !strcmp(use->method, "PUT") && rq->body &&
	       !contains(rq->body, rq->body_len, "resourceVersion");
}
