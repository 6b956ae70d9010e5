/*
 * apps.c - the scale subresource (autoscaling/v1 Scale) of the apps/v1
 * Deployments, ReplicaSets and StatefulSets that muster up stores, and of
 * custom resources whose CRD declares subresources.scale (their
 * checks, defaults and rows are in apps_check.c); the disruption
 * controller (pdb.c) reads the same spec.replicas, as kube's reads the
 * scale.  No controller acts on these objects: muster up makes no
 * ReplicaSet for a Deployment and no pod for either (docs/apiserver.md
 * says so).
 *
 * As kube-apiserver's ScaleREST (pkg/registry/apps/.../storage.go): GET
 * answers a Scale with the object's name, namespace, uid, resourceVersion
 * and creationTimestamp, spec.replicas, status.replicas and
 * status.selector (the selector as a string); PUT and PATCH (JSON merge,
 * strategic merge, JSON patch) of that Scale change spec.replicas only
 * (metadata.generation follows), honour a resourceVersion precondition, and
 * are recorded in managedFields under subresource "scale".  A server-side
 * apply (application/apply-patch+yaml, fieldManager required) follows
 * kube's ScaleHandler: the replicas field's owners are carried between
 * the parent and its Scale, so an apply conflicts (409) with another
 * owner of spec.replicas unless forced (scale_apply).  Each request's
 * work is bounded by the object's size.
 *
 * A custom resource's Scale is kube's CRD ScaleREST's: spec.replicas,
 * status.replicas and status.selector come from the CRD's
 * specReplicasPath, statusReplicasPath and labelSelectorPath (0, 0 and
 * omitted when absent; 400 when a path holds another type), and a change
 * writes specReplicasPath and is validated as an update of the custom
 * object (its schema and rules; 422 in the custom kind's name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* --- the scale subresource ---------------------------------------------- */

/* Orders two printed requirements by their keys (after a "!", up to "="
 * or " "). */
static int key_cmp(const char *x, const char *y)
{
	x += *x == '!';
	y += *y == '!';
	size_t lx = strcspn(x, "= "), ly = strcspn(y, "= ");
	int c = strncmp(x, y, lx < ly ? lx : ly);
	return c ? c : (lx > ly) - (lx < ly);
}

/* The selector as kube's LabelSelectorAsSelector(...).String() prints it:
 * requirements sorted by key (a "!" before a key does not count), "k=v",
 * "k in (a,b)", "k notin (a,b)", "k", "!k", joined by commas. */
static void selector_string(const json_t *sel, char *out, size_t cap)
{
	char parts[32][300];
	int n = 0;
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(sel, "matchLabels"), k, v)
		if (n < 32)
			snprintf(parts[n++], sizeof parts[0], "%.140s=%.140s", k, nz(json_string_value(v)));
	size_t i, j;
	json_t *x, *val;
	json_array_foreach(json_object_get(sel, "matchExpressions"), i, x) {
		if (n >= 32)
			break;
		const char *op = nz(mu__jstr(x, "operator")), *key = nz(mu__jstr(x, "key"));
		if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
			snprintf(parts[n++], sizeof parts[0], "%s%.140s", *op == 'D' ? "!" : "", key);
			continue;
		}
		/* kube sorts the values */
		const char *vals[32];
		size_t nv = 0;
		json_array_foreach(json_object_get(x, "values"), j, val)
			if (nv < 32)
				vals[nv++] = nz(json_string_value(val));
		for (size_t a = 1; a < nv; a++)
			for (size_t b = a; b > 0 && strcmp(vals[b - 1], vals[b]) > 0; b--) {
				const char *t = vals[b];
				vals[b] = vals[b - 1];
				vals[b - 1] = t;
			}
		size_t len = (size_t)snprintf(parts[n], sizeof parts[0], "%.140s %s (", key,
					      !strcmp(op, "NotIn") ? "notin" : "in");
		for (size_t a = 0; a < nv && len < sizeof parts[0]; a++)
			len += (size_t)snprintf(parts[n] + len, sizeof parts[0] - len, "%s%.60s", a ? "," : "", vals[a]);
		if (len < sizeof parts[0])
			snprintf(parts[n] + len, sizeof parts[0] - len, ")");
		n++;
	}
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && key_cmp(parts[b - 1], parts[b]) > 0; b--) {
			char t[300];
			memcpy(t, parts[b], sizeof t);
			memcpy(parts[b], parts[b - 1], sizeof t);
			memcpy(parts[b - 1], t, sizeof t);
		}
	size_t len = 0;
	out[0] = '\0';
	for (int a = 0; a < n && len < cap; a++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", a ? "," : "", parts[a]);
}

/* A Scale's metadata: the object's name, namespace, uid, version and
 * creation time, as kube's scale handlers copy them; owned. */
static json_t *scale_meta(const json_t *o)
{
	json_t *md = json_object();
	static const char *const keep[] = {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"};
	for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
		json_t *v = json_object_get(json_object_get(o, "metadata"), keep[i]);
		if (v)
			json_object_set(md, keep[i], v);
	}
	return md;
}

json_t *mu__scale_of(const json_t *o)
{
	char sel[4096];
	selector_string(mu__jget(o, "spec.selector"), sel, sizeof sel);
	json_t *md = scale_meta(o);
	json_t *spec = json_object();
	json_int_t want = json_integer_value(mu__jget(o, "spec.replicas"));
	if (want)
		json_object_set_new(spec, "replicas", json_integer(want)); /* omitempty */
	return json_pack("{s:s, s:s, s:o, s:o, s:{s:I, s:s}}", "kind", "Scale", "apiVersion", "autoscaling/v1",
			 "metadata", md, "spec", spec, "status", "replicas",
			 (json_int_t)json_integer_value(mu__jget(o, "status.replicas")), "selector", sel);
}

/* Go's name of the type of a JSON value in an unstructured object. */
static const char *go_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "map[string]interface {}";
	case JSON_ARRAY: return "[]interface {}";
	case JSON_STRING: return "string";
	case JSON_REAL: return "float64";
	case JSON_TRUE:
	case JSON_FALSE: return "bool";
	default: return "<nil>";
	}
}

/* The Scale of a custom object o as kube's CRD ScaleREST makes it
 * (scaleFromCustomResource): spec.replicas and status.replicas from the
 * CRD's paths (0 when absent), status.selector from labelSelectorPath
 * (omitted when empty).  NULL with msg when a path holds another type. */
static json_t *crd_scale_of(const mu__crdtype_t *c, const json_t *o, char *msg, size_t len)
{
	const json_t *sr = mu__jget(o, c->scale_spec), *st = mu__jget(o, c->scale_status);
	const json_t *sel = c->scale_selector ? mu__jget(o, c->scale_selector) : NULL;
	const char *paths[3] = {c->scale_spec, c->scale_status, c->scale_selector};
	const json_t *vals[3] = {sr, st, sel};
	for (int i = 0; i < 3; i++)
		if (vals[i] && !json_is_null(vals[i]) && (i < 2 ? !json_is_integer(vals[i]) : !json_is_string(vals[i]))) {
			char *t = json_dumps(vals[i], JSON_COMPACT | JSON_ENCODE_ANY);
			snprintf(msg, len, ".%s accessor error: %.100s is of the type %s, expected %s", paths[i],
				 t ? t : "?", go_type(vals[i]), i < 2 ? "int64" : "string");
			free(t);
			return NULL;
		}
	json_t *md = scale_meta(o);
	json_t *spec = json_object(), *status = json_pack("{s:I}", "replicas", (json_int_t)json_integer_value(st));
	if (json_integer_value(sr))
		json_object_set_new(spec, "replicas", json_integer(json_integer_value(sr))); /* omitempty */
	if (json_string_length(sel))
		json_object_set_new(status, "selector", json_string(json_string_value(sel)));
	return json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", "Scale", "apiVersion", "autoscaling/v1", "metadata", md,
			 "spec", spec, "status", status);
}

/* The Scale of o, an object of type t (apps/v1 or a custom type with a
 * scale subresource); NULL with msg (a 400) when it has none. */
static json_t *scale_of(const mu__rtype_t *t, const json_t *o, char *msg, size_t len)
{
	const mu__crdtype_t *c = mu__crdtype(t);
	return c ? crd_scale_of(c, o, msg, len) : mu__scale_of(o);
}

/* The dotted path of spec.replicas in an object of type t. */
static const char *replicas_path(const mu__rtype_t *t)
{
	const mu__crdtype_t *c = mu__crdtype(t);
	return c ? c->scale_spec : "spec.replicas";
}

/* Validates nw (old before) as its type's update does: a custom object
 * also against its schema and rules (storage version). */
static void validate_parent(const mu__rtype_t *t, const json_t *nw, const json_t *old, mu__verr_t *e)
{
	mu__validate(t, nw, old, e);
	const mu__crdtype_t *c = mu__crdtype(t);
	if (c)
		mu__crd_validate(c, c->storage, nw, old, e);
}

typedef struct scale_ctx {
	const mu__rtype_t *t;
	const mu__req_t *rq;
	const json_t *body;
	int ptype;          /* MU__CT_* of a PATCH, -1 for PUT */
	mu__mgr_t mgr;
	mu__verr_t e;
	char msg[512];
	int code;           /* an answer decided in the mutation (4xx), or 0 */
	bool conflict;      /* an apply's field conflicts (msg, e) */
	bool parent;        /* e holds the parent object's causes, not the Scale's */
} scale_ctx_t;

/* The new Scale: the body of a PUT, or the current Scale patched. */
static json_t *new_scale(scale_ctx_t *c, const json_t *cur)
{
	if (c->ptype < 0)
		return json_deep_copy(c->body);
	json_t *sc = json_deep_copy(cur);
	int rc = MU_OK;
	if (c->ptype == MU__CT_JSONPATCH) {
		rc = mu__json_patch(&sc, c->body, c->msg, sizeof c->msg);
		c->code = rc == MU_EINVAL ? 422 : 400;
	} else if (c->ptype == MU__CT_STRATEGIC) {
		rc = mu__strategic_patch(sc, c->body);
		c->code = 422;
	} else {
		rc = mu__merge_patch(sc, c->body);
		c->code = 422;
	}
	if (rc != MU_OK) {
		if (!c->msg[0])
			snprintf(c->msg, sizeof c->msg, "the patch could not be applied: %s", mu_strerror(rc));
		json_decref(sc);
		return NULL;
	}
	c->code = 0;
	return sc;
}

/* Server-side apply of a Scale, as kube's ScaleHandler does it: the
 * parent's managedFields entries that own spec.replicas are the Scale's,
 * the apply runs on them, and the result goes back to the parent.  Here
 * that is an apply onto the parent of {spec: {replicas}} by the manager
 * with subresource "scale" (the same conflicts with the other owners of
 * spec.replicas, force, sharing of an equal value, and removal when the
 * manager stops applying it, the parent's defaults then filling it in).
 * Returns MU__MUT_PUT with *out, MU__MUT_KEEP, or an error (c->msg). */
static int scale_apply(scale_ctx_t *c, const json_t *old, const json_t *ns, json_t **out)
{
	char av[96];
	mu__rtype_apiversion(c->t, av, sizeof av);
	json_t *applied = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", av, "kind", c->t->kind, "metadata", "name",
				    nz(mu__jstr(old, "metadata.name")));
	const json_t *r = mu__jget(ns, "spec.replicas");
	if (r && mu__jset(applied, replicas_path(c->t), json_incref((json_t *)r)) != MU_OK) {
		json_decref(applied);
		snprintf(c->msg, sizeof c->msg, "spec replicas value cannot be set at .%s", replicas_path(c->t));
		c->code = 400;
		return MU_EPARSE;
	}
	json_t *nw = NULL;
	int rc = mu__ssa_apply(old, applied, &c->mgr, &nw, c->msg, sizeof c->msg, &c->e);
	json_decref(applied);
	if (rc == MU_ESTATE) {
		c->conflict = true;
		return rc;
	}
	if (rc != MU_OK) {
		c->code = 500;
		return MU_EPARSE;
	}
	if (!mu__crdtype(c->t))
		mu__defaults_apps(nw);
	if (!json_equal(mu__jget(nw, replicas_path(c->t)), mu__jget(old, replicas_path(c->t))))
		mu__jset(nw, "metadata.generation",
			 json_integer(json_integer_value(mu__jget(old, "metadata.generation")) + 1));
	validate_parent(c->t, nw, old, &c->e);
	c->parent = true;
	if (c->e.n) {
		json_decref(nw);
		return MU_EINVAL;
	}
	*out = nw;
	return MU__MUT_PUT;
}

static int scale_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	scale_ctx_t *c = ctx;
	if (!cur)
		return MU_ENOENT;
	json_t *old = mu__obj_parse(cur);
	json_t *sc = old ? scale_of(c->t, old, c->msg, sizeof c->msg) : NULL;
	if (old && !sc && c->msg[0])
		c->code = 400;
	json_t *ns = sc ? (c->ptype == MU__CT_APPLY ? json_deep_copy(c->body) : new_scale(c, sc)) : NULL;
	json_decref(sc);
	if (!ns) {
		json_decref(old);
		return c->code ? MU_EPARSE : MU_ENOMEM;
	}
	const char *want = mu__jstr(ns, "metadata.resourceVersion");
	char have[32];
	snprintf(have, sizeof have, "%lld", (long long)cur->rv);
	const json_t *r = mu__jget(ns, "spec.replicas");
	const char *kind = mu__jstr(ns, "kind");
	int rc = MU__MUT_PUT;
	if ((kind && strcmp(kind, "Scale")) || !json_is_object(ns)) {
		snprintf(c->msg, sizeof c->msg, "the body must be an autoscaling/v1 Scale");
		c->code = 400;
		rc = MU_EPARSE;
	} else if (strcmp(nz(mu__jstr(ns, "metadata.name")), cur->name)) {
		snprintf(c->msg, sizeof c->msg, "the name of the object (%s) does not match the name on the URL (%s)",
			 nz(mu__jstr(ns, "metadata.name")), cur->name);
		c->code = 400;
		rc = MU_EPARSE;
	} else if (want && *want && strcmp(want, have)) {
		c->code = 409;
		rc = MU_ESTATE;
	} else if (r && (!json_is_integer(r) || json_integer_value(r) < 0)) {
		mu__verr_add(&c->e, "spec.replicas", "FieldValueInvalid",
			     "Invalid value: %lld: must be greater than or equal to 0", (long long)json_integer_value(r));
		rc = MU_EINVAL;
	}
	json_t *nw = NULL;
	if (rc == MU__MUT_PUT && c->ptype == MU__CT_APPLY) {
		rc = scale_apply(c, old, ns, &nw);
	} else if (rc == MU__MUT_PUT) {
		nw = json_deep_copy(old);
		json_int_t n = json_integer_value(r); /* omitted: 0 */
		const json_t *was = mu__jget(old, replicas_path(c->t));
		if (was && n == json_integer_value(was)) {
			rc = MU__MUT_KEEP; /* kube writes nothing for a no-op */
		} else if (mu__jset(nw, replicas_path(c->t), json_integer(n)) != MU_OK) {
			snprintf(c->msg, sizeof c->msg, "spec replicas value cannot be set because one of the nesting "
				 "levels of .%s is not a map", replicas_path(c->t));
			c->code = 400;
			rc = MU_EPARSE;
		} else {
			mu__jset(nw, "metadata.generation",
				 json_integer(json_integer_value(mu__jget(old, "metadata.generation")) + 1));
			validate_parent(c->t, nw, old, &c->e);
			c->parent = true;
			rc = c->e.n ? MU_EINVAL : MU__MUT_PUT;
		}
		if (rc == MU__MUT_PUT)
			mu__mf_record(old, nw, &c->mgr);
	}
	json_decref(ns);
	json_decref(old);
	if (rc == MU__MUT_PUT)
		*out = nw;
	else
		json_decref(nw);
	return rc;
}

void mu__do_scale(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, const json_t *body)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	const char *name = rq->route.name;
	mu__obj_t *res = NULL;
	int rc;
	scale_ctx_t c = {.t = t, .rq = rq, .body = body, .ptype = -1};
	if (body) {
		if (!strcmp(rq->method, "PATCH")) {
			c.ptype = mu__content_type(rq->ctype);
			if (c.ptype != MU__CT_MERGE && c.ptype != MU__CT_STRATEGIC && c.ptype != MU__CT_JSONPATCH &&
			    c.ptype != MU__CT_APPLY) {
				mu__resp_status(rs, 415, "UnsupportedMediaType", "the patch type %s is not supported on "
						"/scale: use application/merge-patch+json, "
						"application/strategic-merge-patch+json, application/json-patch+json or "
						"application/apply-patch+yaml", rq->ctype ? rq->ctype : "(none)");
				return;
			}
			const char *inv = "PatchOptions.meta.k8s.io \"\" is invalid";
			if (c.ptype == MU__CT_APPLY && !rq->q.field_manager[0]) {
				mu__resp_status(rs, 422, "Invalid", "%s: fieldManager: Required value: is required for "
						"apply patch", inv);
				return;
			}
			if (c.ptype != MU__CT_APPLY && rq->q.force) {
				mu__resp_status(rs, 422, "Invalid", "%s: force: Forbidden: may not be specified for "
						"non-apply patch", inv);
				return;
			}
		}
		if (mu__mgr_init(&c.mgr, rq, t, c.msg, sizeof c.msg) != MU_OK) {
			mu__resp_status(rs, 422, "Invalid", "UpdateOptions.meta.k8s.io \"\" is invalid: %s", c.msg);
			return;
		}
		snprintf(c.mgr.sub, sizeof c.mgr.sub, "scale");
		rc = mu__store_mutate(s->store, rt, rq->route.ns, name, scale_fn, &c, rq->q.dry_run, &res);
	} else {
		res = mu__store_get(s->store, rt, rq->route.ns, name);
		rc = res ? MU_OK : MU_ENOENT;
	}
	if (rc == MU_EINVAL && c.parent) {
		mu__resp_err(rs, 422, "Invalid", t, name, &c.e, "%s.%s \"%s\" is invalid: %s: %s", t->kind, t->group, name,
			     c.e.n ? c.e.c[0].field : "spec", c.e.n ? c.e.c[0].msg : "invalid");
	} else if (rc == MU_EINVAL) {
		static const mu__rtype_t scale_t = {.group = "autoscaling", .version = "v1", .plural = "scale",
						    .kind = "Scale"};
		mu__resp_err(rs, 422, "Invalid", &scale_t, name, &c.e, "Scale.autoscaling \"%s\" is invalid: %s: %s", name,
			     c.e.n ? c.e.c[0].field : "spec", c.e.n ? c.e.c[0].msg : "invalid");
	} else if (rc == MU_ESTATE && c.conflict) {
		mu__resp_err(rs, 409, "Conflict", NULL, NULL, &c.e, "%s", c.msg);
	} else if (rc == MU_ESTATE) {
		mu__resp_err(rs, 409, "Conflict", t, name, NULL, "Operation cannot be fulfilled on %s.%s \"%s\": the "
			     "object has been modified; please apply your changes to the latest version and try again",
			     t->plural, t->group, name);
	} else if (rc == MU_EPARSE) {
		mu__resp_status(rs, c.code ? c.code : 400, c.code == 422 ? "Invalid" : "BadRequest", "%s", c.msg);
	} else if (rc < 0) {
		mu__resp_store_err(rs, rc, t, name);
	} else {
		json_t *o = mu__obj_parse(res);
		json_t *sc = o ? scale_of(t, o, c.msg, sizeof c.msg) : json_object();
		if (sc)
			mu__resp_json(rs, 200, sc);
		else
			mu__resp_status(rs, 400, "BadRequest", "%s", c.msg);
		json_decref(o);
	}
	mu__obj_unref(res);
}
