/*
 * api.c - the REST handlers: create, get, list, update, patch and delete
 * for every registered type, and the dispatch from a parsed request to
 * them (watch streams live in watch.c, pod subresources in podsub.c).
 *
 * Each handler turns a request into one store mutation whose callback runs
 * under the store's writer lock, so read-check-write is atomic: conflicts
 * (resourceVersion, uid preconditions, existence) are decided there and
 * answered with a Kubernetes Status.  Objects the callbacks return are
 * validated first; a no-op update keeps the resourceVersion.
 *
 * Ownership: the request is borrowed; the answer body is malloc'd and owned
 * by the response until http.c hands it to libmicrohttpd.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"
#include "apiserver/crd.h"
#include "apiserver/proto.h"
#include "apiserver/schema.h"
#include "apiserver/ssa.h"

/* --- create ------------------------------------------------------------- */

/* Server-set metadata, defaults and validation of a new object.  Returns
 * MU_OK, or MU_EINVAL with causes in e. */
/* The path of the pod spec a kind of type t holds ("spec" for a Pod,
 * "spec.template.spec" for a Job and the apps kinds), or NULL.  Here, not
 * in podspec.c, so that podspec.c does not call back into the kinds'
 * defaulting files (scripts/check-loops.sh). */
static const char *pod_spec_path(const mu__rtype_t *t)
{
	if (t->defaults == mu__defaults_pod)
		return "spec";
	if (t->defaults == mu__defaults_job || t->defaults == mu__defaults_apps)
		return "spec.template.spec";
	return NULL;
}

int mu__prepare_create(mu_apiserver_t *s, const mu__rtype_t *t, json_t *obj, mu__verr_t *e)
{
	json_t *md = json_object_get(obj, "metadata");
	char uid[37], ts[40];
	mu__uid(s, uid);
	mu__timestamp(ts, sizeof ts, false);
	static const char *const drop[] = {"resourceVersion", "deletionTimestamp",
					   "deletionGracePeriodSeconds", "managedFields", "selfLink"};
	for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
		json_object_del(md, drop[i]);
	json_object_set_new(md, "uid", json_string(uid));
	json_object_set_new(md, "creationTimestamp", json_string(ts));
	json_object_set_new(md, "generation", json_integer(1));
	if (!t->namespaced)
		json_object_del(md, "namespace");
	if ((t->subs & MU__SUB_STATUS) && strcmp(t->kind, "Node") && strcmp(t->kind, "Namespace"))
		json_object_del(obj, "status");
	if (t->defaults)
		t->defaults(obj);
	if (pod_spec_path(t)) /* the strategies' dropDisabledFields, nothing stored */
		mu__drop_gated_pod_fields(mu__jget(obj, pod_spec_path(t)), NULL);
	mu__dra_taint_times(t, obj, NULL);
	if (t->validate == mu__validate_crd)
		mu__crd_status(obj, NULL, false);
	mu__validate(t, obj, NULL, e);
	if (mu__crdtype(t))
		mu__crd_validate(mu__crdtype(t), mu__crdtype(t)->storage, obj, NULL, e);
	return e->n ? MU_EINVAL : MU_OK;
}

/* Records the create of obj by m in its managedFields.  A Job's creator
 * does not own what kube's Job strategy generates after its field manager
 * ran (mu__job_owned_on_create): else kubectl's client-side to server-side
 * apply migration hands the generated selector to the applier, whose next
 * apply removes it ("spec.selector: field is immutable"). */
static void record_create(const mu__rtype_t *t, json_t *obj, const mu__mgr_t *m)
{
	json_t *rec = t->defaults == mu__defaults_job ? mu__job_owned_on_create(obj) : NULL;
	if (!rec) {
		mu__mf_record(NULL, obj, m);
		return;
	}
	mu__mf_record(NULL, rec, m);
	json_t *mf = mu__jget(rec, "metadata.managedFields");
	if (mf)
		json_object_set(json_object_get(obj, "metadata"), "managedFields", mf);
	json_decref(rec);
}

/* mu__store_mutate, and for a Job mu__store_mutate_keep: a Job created,
 * updated or patched through the API keeps the tree written for its next
 * reader, the Job controller's reconcile or the next update's update_fn,
 * which otherwise parse the text just written (round 20).  fn's tree must
 * be its own once fn returns (the handlers only release what it shares
 * with their bodies).  Bounds: the store's. */
static int write_kept(mu_apiserver_t *s, int rt, const char *ns, const char *name, mu__mut_fn_t fn, void *ctx,
		      bool dry, mu__obj_t **res)
{
	return (rt == MU__RT_JOBS ? mu__store_mutate_keep : mu__store_mutate)(s->store, rt, ns, name, fn, ctx, dry,
									     res);
}

static int create_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	if (cur)
		return MU_EEXIST;
	*out = json_incref(ctx);
	return MU__MUT_PUT;
}

int mu__create_by(mu_apiserver_t *s, mu__wtx_t *tx, int rt, json_t *obj, const char *manager, mu__obj_t **res)
{
	return mu__create_why(s, tx, rt, obj, manager, res, NULL, 0);
}

int mu__create_why(mu_apiserver_t *s, mu__wtx_t *tx, int rt, json_t *obj, const char *manager,
		   mu__obj_t **res, char *why, size_t len)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	mu__verr_t e = {0};
	char amsg[600] = "";
	if (mu__admit(s, rt, obj, amsg, sizeof amsg) != MU_OK) {
		if (why && len)
			snprintf(why, len, "%s", amsg);
		return MU_EINVAL;
	}
	if (mu__prepare_create(s, t, obj, &e) != MU_OK) {
		if (why && len)
			snprintf(why, len, "invalid");
		return MU_EINVAL;
	}
	if (manager) {
		mu__mgr_t m;
		mu__mgr_controller(&m, t, manager, false);
		record_create(t, obj, &m);
	}
	return mu__store_apply(tx, rt, mu__jstr(obj, "metadata.namespace"), mu__jstr(obj, "metadata.name"),
			       create_fn, obj, false, res);
}

int mu__create(mu_apiserver_t *s, mu__wtx_t *tx, int rt, json_t *obj, mu__obj_t **res)
{
	return mu__create_by(s, tx, rt, obj, NULL, res);
}

/* Checks apiVersion and kind of a body against the endpoint's type; when
 * either is missing it is filled in from the URL, as kube-apiserver's
 * decoder does with the endpoint's group, version and kind as defaults. */
bool mu__check_kind(const mu__rtype_t *t, json_t *obj, mu__resp_t *rs)
{
	char av[96];
	mu__rtype_apiversion(t, av, sizeof av);
	const json_t *kv = json_object_get(obj, "kind"), *avv = json_object_get(obj, "apiVersion");
	if ((kv && !json_is_string(kv)) || (avv && !json_is_string(avv))) {
		mu__resp_status(rs, 400, "BadRequest", "kind and apiVersion must be strings");
		return false;
	}
	const char *k = json_string_value(kv), *a = json_string_value(avv);
	if (!k || !*k)
		json_object_set_new(obj, "kind", json_string(k = t->kind));
	if (!a || !*a)
		json_object_set_new(obj, "apiVersion", json_string(a = av));
	k = json_string_value(json_object_get(obj, "kind"));
	a = json_string_value(json_object_get(obj, "apiVersion"));
	const mu__crdtype_t *c = mu__crdtype(t);
	size_t gl = strlen(t->group);
	if (c && !strcmp(k, t->kind) && !strncmp(a, t->group, gl) && a[gl] == '/' && mu__crd_version(c, a + gl + 1) >= 0)
		json_object_set_new(obj, "apiVersion", json_string(a = av)); /* conversion "None" */
	if (strcmp(k, t->kind) || strcmp(a, av)) {
		mu__resp_status(rs, 400, "BadRequest", "the body is a %s %s, but the endpoint serves %s %s",
				a, k, av, t->kind);
		return false;
	}
	if (!json_is_object(json_object_get(obj, "metadata"))) {
		mu__resp_status(rs, 400, "BadRequest", "metadata is missing in the request body");
		return false;
	}
	return true;
}

/* Makes the body's namespace agree with the URL's (400 when they differ). */
bool mu__fix_namespace(const mu__rtype_t *t, json_t *obj, const char *url_ns, mu__resp_t *rs)
{
	if (!t->namespaced)
		return true;
	json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	if (ns && *ns && strcmp(ns, url_ns)) {
		mu__resp_status(rs, 400, "BadRequest",
				"the namespace of the provided object does not match the namespace sent on the request");
		return false;
	}
	json_object_set_new(md, "namespace", json_string(url_ns));
	return true;
}

/* Field validation (schema.c) of obj per the request's fieldValidation:
 * unknown fields are pruned; with Strict the request fails (false, msg
 * set as kube-apiserver words it), with Warn warn gets Warning header text
 * (may be NULL to drop it).  old: the stored object of an update (NULL
 * for a create), whose unchanged top-level members a built-in kind's
 * check passes over (mu__schema_check_changed). */
static bool check_fields(const mu__rtype_t *t, const mu__req_t *rq, json_t *obj, const json_t *old, char *msg,
			 size_t msglen, char *warn, size_t warnlen)
{
	int model = mu__schema_model(t->group, t->kind);
	const mu__crdtype_t *c = mu__crdtype(t);
	if (model < 0 && !c)
		return true;
	mu__unknown_t u;
	bool strict = rq->q.field_validation == MU__FV_STRICT;
	if (c)
		mu__crd_prune(c, mu__crd_version(c, rq->route.version), obj, !strict, &u);
	else
		mu__schema_check_changed(obj, old, model, !strict, &u);
	if (!u.n)
		return true;
	if (strict) {
		char av[96];
		mu__rtype_apiversion(t, av, sizeof av);
		snprintf(msg, msglen, "%s in version \"%s\" cannot be handled as a %s: strict decoding error: %s",
			 t->kind, t->version, t->kind, u.text);
		return false;
	}
	if (rq->q.field_validation == MU__FV_WARN && warn)
		snprintf(warn, warnlen, "%s", u.text);
	return true;
}

bool mu__namespace_exists(mu_apiserver_t *s, const char *ns, mu__resp_t *rs)
{
	mu__obj_t *o = mu__store_get(s->store, MU__RT_NAMESPACES, NULL, ns);
	if (!o) {
		int n;
		mu__resp_store_err(rs, MU_ENOENT, &mu__rtypes(&n)[MU__RT_NAMESPACES], ns);
		return false;
	}
	mu__obj_unref(o);
	return true;
}

/* After a CustomResourceDefinition was written (res, not a dry run):
 * serves the type it defines at once, as its Established condition says,
 * and warns (a Warning header) about the CEL rules muster up does not
 * evaluate (crd_cel.c). */
static void crd_written(mu_apiserver_t *s, const mu__req_t *rq, int rt, const mu__obj_t *res, mu__resp_t *rs)
{
	if (rt != MU__RT_CRDS || !res || rq->q.dry_run || rs->code >= 300)
		return;
	json_t *o = mu__obj_parse(res);
	char err[300] = "";
	if (!o || mu__types_put(s->types, o, err, sizeof err) < 0)
		snprintf(rs->warning, sizeof rs->warning, "the definition is stored but not served: %s",
			 err[0] ? err : "out of memory");
	else
		mu__crd_cel_warnings(o, rs->warning, sizeof rs->warning);
	json_decref(o);
}

/* POST to a collection; also server-side apply's create path. */
/* Who writes a CertificateSigningRequest, for the admission plugins'
 * RBAC questions (csr.c). */
typedef struct csr_who {
	mu_apiserver_t *s;
	const mu__req_t *rq;
} csr_who_t;

/* Whether the writer of ctx (a csr_who_t) may make verb on the signer. */
static bool csr_authz(void *ctx, const char *verb, const char *signer)
{
	csr_who_t *w = ctx;
	return !w->rq->user || !w->rq->may ||
	       w->rq->may(w->s, w->rq->user, verb, "certificates.k8s.io", "signers", signer);
}

void mu__do_create(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, json_t *obj)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	if (!mu__check_kind(t, obj, rs) || !mu__fix_namespace(t, obj, rq->route.ns, rs))
		return;
	if (t->namespaced && !mu__namespace_exists(s, rq->route.ns, rs))
		return;
	char fmsg[1400], warn[sizeof rs->warning] = "";
	if (!check_fields(t, rq, obj, NULL, fmsg, sizeof fmsg, warn, sizeof warn)) {
		mu__resp_status(rs, 400, "BadRequest", "%s", fmsg);
		return;
	}
	mu__mgr_t mgr;
	if (mu__mgr_init(&mgr, rq, t, fmsg, sizeof fmsg) != MU_OK) {
		mu__resp_status(rs, 422, "Invalid", "CreateOptions.meta.k8s.io \"\" is invalid: %s", fmsg);
		return;
	}
	bool apply = !strcmp(rq->method, "PATCH");
	json_t *md = json_object_get(obj, "metadata");
	/* managedFields a create gives are decoded and the creation recorded
	 * on top of them, as kube's FieldManager.Update does with an empty
	 * live object (decodeLiveOrNew): [] or [{}] gives none */
	json_t *given = !apply && mu__mf_given(json_object_get(md, "managedFields"))
				? json_deep_copy(json_object_get(md, "managedFields")) : NULL;
	char amsg[600];
	if (rt == MU__RT_CSRS)
		mu__csr_prepare_create(rq, obj);
	char emsg[4096];
	int esc = mu__rbac_escalation(s, rq, rt, NULL, obj, emsg, sizeof emsg);
	if (esc) { /* RBAC's escalation check (rbac_escalate.c) */
		json_decref(given);
		const char *nm = json_string_value(json_object_get(md, "name"));
		if (esc == 404)
			mu__resp_status(rs, 404, "NotFound", "%s", emsg);
		else
			mu__resp_err(rs, 403, "Forbidden", t, nm ? nm : "", NULL, "%s%s%s \"%s\" is forbidden: %s",
				     t->plural, *t->group ? "." : "", t->group, nm ? nm : "", emsg);
		return;
	}
	if (rt == MU__RT_SECRETS && !rq->q.dry_run)
		mu__sa_secret_fill(s, obj); /* kube-controller-manager's tokens controller */
	json_t *applied = apply ? json_deep_copy(obj) : NULL;
	mu__sa_wait_default(s, rt, obj);
	if (mu__admit(s, rt, obj, amsg, sizeof amsg) != MU_OK ||
	    (rt == MU__RT_CSRS && !mu__csr_admit(rq, NULL, obj, csr_authz, &(csr_who_t){s, rq}, amsg, sizeof amsg))) {
		json_decref(applied);
		json_decref(given);
		const char *nm = json_string_value(json_object_get(md, "name"));
		mu__resp_err(rs, 403, "Forbidden", t, nm ? nm : "", NULL, "%s%s%s \"%s\" is forbidden: %s", t->plural,
			     *t->group ? "." : "", t->group, nm ? nm : "", amsg);
		return;
	}
	const char *gen = json_string_value(json_object_get(md, "generateName"));
	const char *name = json_string_value(json_object_get(md, "name"));
	bool generated = (!name || !*name) && gen && *gen;
	mu__verr_t e = {0};
	for (int attempt = 0; attempt < 5; attempt++) {
		if (generated) {
			char sfx[6], nm[300];
			mu__name_suffix(s, sfx);
			/* names.SimpleNameGenerator: at most 58 characters of the
			 * prefix, then 5 random ones */
			snprintf(nm, sizeof nm, "%.58s%s", gen, sfx);
			json_object_set_new(md, "name", json_string(nm));
		}
		memset(&e, 0, sizeof e);
		if (mu__prepare_create(s, t, obj, &e) != MU_OK) {
			name = json_string_value(json_object_get(md, "name"));
			mu__resp_invalid(rs, t, name ? name : "", &e);
			json_decref(applied);
			json_decref(given);
			return;
		}
		if (apply) {
			mu__mf_apply_create(obj, applied, &mgr);
		} else {
			if (given)
				json_object_set(md, "managedFields", given);
			record_create(t, obj, &mgr);
		}
		name = json_string_value(json_object_get(md, "name"));
		mu__obj_t *res = NULL;
		/* obj is only released after this (write_kept) */
		int rc = write_kept(s, rt, rq->route.ns, name, create_fn, obj, rq->q.dry_run, &res);
		if (rc == MU_EEXIST && generated)
			continue;
		if (rc < 0) {
			mu__resp_store_err(rs, rc, t, name);
			json_decref(applied);
			json_decref(given);
			return;
		}
		mu__resp_obj(rs, rq, 201, res);
		snprintf(rs->warning, sizeof rs->warning, "%s", warn);
		crd_written(s, rq, rt, res, rs);
		mu__obj_unref(res);
		json_decref(applied);
		json_decref(given);
		return;
	}
	json_decref(applied);
	json_decref(given);
	mu__resp_store_err(rs, MU_EEXIST, t, name);
}

/* --- update and patch --------------------------------------------------- */

/* Copies server-owned metadata from old to new, keeps what a write through
 * this endpoint may not change (status on the main resource, all but
 * status on /status), bumps generation on spec changes, validates.  Returns
 * MU__MUT_PUT, MU__MUT_KEEP (no change), MU__MUT_DEL (a deleting object
 * lost its last finalizer) or a negative error with e filled. */
int mu__finish_update(const mu__rtype_t *t, const json_t *old, json_t **newp, bool status_sub,
		      mu__verr_t *e)
{
	json_t *nw = *newp;
	int nt;
	if (status_sub && t == &mu__rtypes(&nt)[MU__RT_JOBS]) {
		/* jobs/status keeps all but the spec, metadata included:
		 * kube's jobStatusStrategy.PrepareForUpdate resets only the
		 * spec (pkg/registry/batch/job/strategy.go) */
		json_t *sp = json_object_get(old, "spec");
		if (sp)
			json_object_set(nw, "spec", sp);
		else
			json_object_del(nw, "spec");
	} else if (status_sub) {
		json_t *merged = mu__json_copy(old);
		if (!merged)
			return MU_ENOMEM;
		json_t *st = json_object_get(nw, "status");
		if (st)
			json_object_set(merged, "status", st);
		else
			json_object_del(merged, "status");
		json_decref(nw);
		*newp = nw = merged;
	} else if (t->subs & MU__SUB_STATUS) {
		json_t *st = json_object_get(old, "status");
		if (st)
			json_object_set(nw, "status", st);
		else
			json_object_del(nw, "status");
	}
	json_t *md = json_object_get(nw, "metadata");
	const json_t *omd = json_object_get(old, "metadata");
	if (!json_is_object(md)) {
		mu__verr_add(e, "metadata", "FieldValueRequired", "Required value");
		return MU_EINVAL;
	}
	static const char *const keep[] = {"uid", "creationTimestamp", "deletionTimestamp",
					   "deletionGracePeriodSeconds", "namespace", "name"};
	for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
		json_t *v = json_object_get(omd, keep[i]);
		if (v)
			json_object_set(md, keep[i], v);
		else
			json_object_del(md, keep[i]);
	}
	/* managedFields as kube's field manager takes them: a write may set
	 * them directly (a non-empty list; [{}] resets them), an empty or
	 * malformed list or none keeps the stored ones, and so does every
	 * write to a subresource */
	if (status_sub || !mu__mf_given(json_object_get(md, "managedFields"))) {
		json_t *mf = json_object_get(omd, "managedFields");
		if (mf)
			json_object_set(md, "managedFields", mf);
		else
			json_object_del(md, "managedFields");
	}
	json_object_set(md, "resourceVersion", json_object_get(omd, "resourceVersion"));
	mu__dra_taint_times(t, nw, old);
	json_int_t gen = json_integer_value(json_object_get(omd, "generation"));
	if (!json_equal(json_object_get(nw, "spec"), json_object_get(old, "spec")))
		gen++;
	json_object_set_new(md, "generation", json_integer(gen ? gen : 1));
	if (t->validate == mu__validate_crd)
		mu__crd_status(nw, old, status_sub);
	if (json_equal(nw, old))
		return MU__MUT_KEEP;
	mu__validate(t, nw, old, e);
	if (mu__crdtype(t))
		mu__crd_validate(mu__crdtype(t), mu__crdtype(t)->storage, nw, old, e);
	if (e->n)
		return MU_EINVAL;
	if (json_object_get(md, "deletionTimestamp") && json_array_size(json_object_get(md, "finalizers")) == 0 &&
	    json_array_size(json_object_get(omd, "finalizers")) > 0)
		return MU__MUT_DEL;
	return MU__MUT_PUT;
}

typedef struct upd_ctx {
	const mu__rtype_t *t;
	const mu__req_t *rq;
	json_t *body;       /* PUT: the new object; PATCH: the patch */
	int ptype;          /* MU__CT_* for PATCH, -1 for PUT */
	mu__verr_t e;
	mu__mgr_t mgr;      /* who writes (managedFields) */
	bool conflict;      /* an apply conflict: msg and causes in e */
	bool forbidden;     /* refused by admission: msg is a 403 */
	bool notfound;      /* a binding's role is missing: msg is a 404 */
	mu_apiserver_t *s;
	int err;            /* 409 conflict detail */
	bool bad;           /* msg is a 400 (malformed patch), not a 422 */
	char msg[4096];
	char warn[1100];    /* unknown fields dropped (fieldValidation=Warn) */
} upd_ctx_t;

/* Whether a patch of c may work on a copy that shares what it does not
 * change with the stored object (mu__json_copy_for): a merge or strategic
 * patch of a built-in kind, whose write path changes in place only the
 * patch's paths, the metadata and (the main resource: its defaults) the
 * spec, which is then copied whole; not the kinds whose writes change
 * more in place (CSRs' conditions, DRA's taint times, a CRD's status, the
 * apps kinds' defaults), nor custom resources (pruned by their schema).
 * O(1). */
static bool patch_shares(const upd_ctx_t *c, int rt)
{
	return (c->ptype == MU__CT_MERGE || c->ptype == MU__CT_STRATEGIC) && rt != MU__RT_CSRS && rt != MU__RT_CRDS &&
	       !mu__crdtype(c->t) && strcmp(c->t->group, "resource.k8s.io") != 0 && c->t->defaults != mu__defaults_apps;
}

/* Applies the patch of c to a copy of cur, the stored object of type rt. */
static json_t *patched(upd_ctx_t *c, const json_t *cur, int rt, int *rc)
{
	json_t *t = patch_shares(c, rt) ? mu__json_copy_for(cur, c->body, *c->rq->route.sub ? NULL : "spec")
					 : mu__json_copy(cur);
	if (!t) {
		*rc = MU_ENOMEM;
		return NULL;
	}
	char err[200] = "";
	if (c->ptype == MU__CT_JSONPATCH) {
		*rc = mu__json_patch(&t, c->body, err, sizeof err);
		if (*rc == MU_OK && !json_is_object(t)) {
			snprintf(err, sizeof err, "the patched document is not an object");
			*rc = MU_EINVAL;
		}
		if (*rc == MU_EPARSE)
			c->bad = true;
	} else if (c->ptype == MU__CT_STRATEGIC) {
		*rc = mu__strategic_patch(t, c->body);
	} else {
		*rc = mu__merge_patch(t, c->body);
	}
	if (*rc == MU_OK && mu__json_depth(t, MU__MAX_DEPTH) > MU__MAX_DEPTH) {
		snprintf(err, sizeof err, "the patched object nests more than %d levels deep", MU__MAX_DEPTH);
		*rc = MU_EINVAL;
	}
	if (*rc != MU_OK) {
		snprintf(c->msg, sizeof c->msg, "the patch could not be applied: %s", err[0] ? err : mu_strerror(*rc));
		json_decref(t);
		return NULL;
	}
	return t;
}

static int update_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	upd_ctx_t *c = ctx;
	if (!cur)
		return MU_ENOENT;
	/* the tree the last write kept for cur (write_kept, the Job
	 * controller's status write), else a parse: it is only read, and
	 * what nw shares of it is nw's once it is released below */
	json_t *old = mu__store_take_tree(c->s->store, cur, NULL);
	if (!old)
		return MU_ENOMEM;
	int rc = MU_OK;
	bool apply = c->ptype == MU__CT_APPLY;
	json_t *nw = NULL;
	if (apply) {
		rc = mu__ssa_apply(old, c->body, &c->mgr, &nw, c->msg, sizeof c->msg, &c->e);
		if (rc == MU_ESTATE)
			c->conflict = true;
	} else {
		nw = c->ptype < 0 ? mu__json_copy(c->body) : patched(c, old, cur->rt, &rc);
	}
	if (!nw) {
		json_decref(old);
		return rc == MU_ESTATE ? rc : rc == MU_OK ? MU_ENOMEM : MU_EPARSE;
	}
	/* kube defaults every object it decodes, updates included (a
	 * Deployment replaced or applied without replicas gets 1); the apps
	 * kinds' defaults are exactly defaults.go's, while the Pod's and Job's
	 * here also do what kube does only on create */
	if (c->t->defaults == mu__defaults_apps && !*c->rq->route.sub)
		mu__defaults_apps(nw);
	/* kube's structured-merge manager defaults what an apply produced
	 * (objectDefaulter.Default): a Job field the applier stopped applying
	 * (completions, after kubectl's migration from client-side apply)
	 * comes back as its default rather than vanishing into "field is
	 * immutable" */
	else if (apply && c->t->defaults == mu__defaults_job)
		mu__defaults_job(nw);
	/* and every decoded Job's template, as kube's SetObjectDefaults_Job
	 * (a replace without the defaults must not read as a template change) */
	else if (c->t->defaults == mu__defaults_job && !*c->rq->route.sub)
		mu__defaults_pod_spec(mu__jget(nw, "spec.template.spec"));
	/* and every decoded Pod's spec (SetObjectDefaults_Pod), so that a
	 * replace or apply without the defaults is not refused as a change
	 * of the spec */
	else if (c->t->defaults == mu__defaults_pod && !*c->rq->route.sub) {
		json_t *ns = json_object_get(nw, "spec");
		mu__defaults_pod_spec(ns);
		mu__defaults_pod_only(ns);
		/* kube's Priority admission on update keeps the priority and
		 * preemptionPolicy it set on create when the new pod has none */
		static const char *const kept[] = {"priority", "preemptionPolicy"};
		for (int i = 0; i < 2 && json_is_object(ns); i++)
			if (!json_object_get(ns, kept[i]) && mu__jget(old, "spec") &&
			    json_object_get(json_object_get(old, "spec"), kept[i]))
				json_object_set(ns, kept[i], json_object_get(json_object_get(old, "spec"), kept[i]));
	}
	/* the strategies' dropDisabledFields on update: a gated field the
	 * stored spec has is kept */
	if (pod_spec_path(c->t) && !*c->rq->route.sub)
		mu__drop_gated_pod_fields(mu__jget(nw, pod_spec_path(c->t)), mu__jget(old, pod_spec_path(c->t)));
	if (!check_fields(c->t, c->rq, nw, old, c->msg, sizeof c->msg, c->warn, sizeof c->warn)) {
		c->bad = true;
		json_decref(nw);
		json_decref(old);
		return MU_EPARSE;
	}
	const char *want = mu__jstr(nw, "metadata.resourceVersion");
	char have[32];
	snprintf(have, sizeof have, "%lld", (long long)cur->rv);
	const char *nm = mu__jstr(nw, "metadata.name");
	if (c->ptype >= 0 && nm && strcmp(nm, cur->name)) {
		snprintf(c->msg, sizeof c->msg, "the patch may not change metadata.name");
		rc = MU_EPARSE;
	} else if (want && *want && strcmp(want, have)) {
		c->err = 409;
		rc = MU_ESTATE;
	} else {
		json_t *mf = apply ? json_incref(mu__jget(nw, "metadata.managedFields")) : NULL;
		bool csr = cur->rt == MU__RT_CSRS;
		if (csr)
			mu__csr_prepare_update(old, nw, c->rq->route.sub);
		rc = mu__finish_update(c->t, old, &nw, csr ? *c->rq->route.sub != '\0' : !strcmp(c->rq->route.sub, "status"),
				       &c->e);
		if (csr && (rc == MU__MUT_PUT || rc == MU_EINVAL) && !mu__csr_check_update(old, nw, c->rq->route.sub, &c->e))
			rc = MU_EINVAL;
		if (csr && rc == MU__MUT_PUT && !mu__csr_admit(c->rq, old, nw, csr_authz, &(csr_who_t){c->s, c->rq}, c->msg, sizeof c->msg)) {
			c->forbidden = true;
			rc = MU_ESTATE;
		}
		int esc = rc == MU__MUT_PUT ? mu__rbac_escalation(c->s, c->rq, cur->rt, old, nw, c->msg, sizeof c->msg) : 0;
		if (esc) { /* RBAC's escalation check (rbac_escalate.c) */
			c->forbidden = esc == 403;
			c->notfound = esc == 404;
			rc = MU_ESTATE;
		}
		if (apply && (rc == MU__MUT_PUT || rc == MU__MUT_KEEP)) {
			json_t *omf = mu__jget(old, "metadata.managedFields");
			if (mf)
				json_object_set(json_object_get(nw, "metadata"), "managedFields", mf);
			else
				json_object_del(json_object_get(nw, "metadata"), "managedFields");
			if (rc == MU__MUT_KEEP && !json_equal(mf ? mf : json_null(), omf ? omf : json_null()))
				rc = MU__MUT_PUT;
		} else if (rc == MU__MUT_PUT) {
			mu__mf_record(old, nw, &c->mgr);
		}
		json_decref(mf);
	}
	json_decref(old);
	if (rc == MU__MUT_PUT)
		*out = nw;
	else
		json_decref(nw);
	return rc;
}

/* Answers the result of an update-like mutation. */
static void update_answer(const mu__req_t *rq, mu__resp_t *rs, upd_ctx_t *c, int rc, mu__obj_t *res)
{
	const char *name = rq->route.name;
	if (rc == MU_EINVAL)
		mu__resp_invalid(rs, c->t, name, &c->e);
	else if (rc == MU_ESTATE && c->notfound)
		mu__resp_status(rs, 404, "NotFound", "%s", c->msg);
	else if (rc == MU_ESTATE && c->forbidden)
		mu__resp_err(rs, 403, "Forbidden", c->t, name, NULL, "%s%s%s \"%s\" is forbidden: %s", c->t->plural,
			     *c->t->group ? "." : "", c->t->group, name, c->msg);
	else if (rc == MU_ESTATE && c->conflict)
		mu__resp_err(rs, 409, "Conflict", NULL, NULL, &c->e, "%s", c->msg);
	else if (rc == MU_ESTATE)
		mu__resp_err(rs, 409, "Conflict", c->t, name, NULL,
			     "Operation cannot be fulfilled on %s%s%s \"%s\": the object has been modified; "
			     "please apply your changes to the latest version and try again",
			     c->t->plural, *c->t->group ? "." : "", c->t->group, name);
	else if (rc == MU_EPARSE && (c->bad || !c->msg[0]))
		mu__resp_status(rs, 400, "BadRequest", "%s", c->msg[0] ? c->msg : "malformed request");
	else if (rc == MU_EPARSE)
		mu__resp_status(rs, 422, "Invalid", "%s", c->msg);
	else if (rc < 0)
		mu__resp_store_err(rs, rc, c->t, name);
	else if (res)
		mu__resp_obj(rs, rq, 200, res);
	else
		mu__resp_status(rs, 200, "", "deleted");
	if (rs->code < 300)
		snprintf(rs->warning, sizeof rs->warning, "%s", c->warn);
}

void mu__do_update(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, json_t *body)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	if (!mu__check_kind(t, body, rs) || !mu__fix_namespace(t, body, rq->route.ns, rs))
		return;
	const char *bn = mu__jstr(body, "metadata.name");
	if (!bn || strcmp(bn, rq->route.name)) {
		mu__resp_status(rs, 400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)",
				bn ? bn : "", rq->route.name);
		return;
	}
	upd_ctx_t c = {.t = t, .rq = rq, .body = body, .ptype = -1, .s = s};
	if (mu__mgr_init(&c.mgr, rq, t, c.msg, sizeof c.msg) != MU_OK) {
		mu__resp_status(rs, 422, "Invalid", "UpdateOptions.meta.k8s.io \"\" is invalid: %s", c.msg);
		return;
	}
	mu__obj_t *res = NULL;
	int rc = write_kept(s, rt, rq->route.ns, rq->route.name, update_fn, &c, rq->q.dry_run, &res);
	update_answer(rq, rs, &c, rc, res);
	crd_written(s, rq, rt, res, rs);
	mu__obj_unref(res);
}

void mu__do_patch(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, json_t *body)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	int ct = mu__content_type(rq->ctype);
	if (ct == MU__CT_STRATEGIC && !t->builtin) {
		mu__resp_status(rs, 415, "UnsupportedMediaType",
				"strategic merge patch is not supported for %s.%s: use application/merge-patch+json",
				t->plural, t->group);
		return;
	}
	if (ct != MU__CT_MERGE && ct != MU__CT_STRATEGIC && ct != MU__CT_APPLY && ct != MU__CT_JSONPATCH) {
		mu__resp_status(rs, 415, "UnsupportedMediaType",
				"the patch type %s is not supported: use application/json-patch+json, "
				"application/merge-patch+json, application/strategic-merge-patch+json or "
				"application/apply-patch+yaml",
				rq->ctype ? rq->ctype : "(none)");
		return;
	}
	const char *inv = "PatchOptions.meta.k8s.io \"\" is invalid";
	if (ct == MU__CT_APPLY && !rq->q.field_manager[0]) {
		mu__resp_status(rs, 422, "Invalid", "%s: fieldManager: Required value: is required for apply patch", inv);
		return;
	}
	if (ct != MU__CT_APPLY && rq->q.force) {
		mu__resp_status(rs, 422, "Invalid", "%s: force: Forbidden: may not be specified for non-apply patch",
				inv);
		return;
	}
	upd_ctx_t c = {.t = t, .rq = rq, .body = body, .ptype = ct, .s = s};
	if (mu__mgr_init(&c.mgr, rq, t, c.msg, sizeof c.msg) != MU_OK) {
		mu__resp_status(rs, 422, "Invalid", "%s: %s", inv, c.msg);
		return;
	}
	if (ct == MU__CT_APPLY) {
		/* server-side apply: create when absent, else apply (ssa.c) */
		if (!mu__check_kind(t, body, rs) || !mu__fix_namespace(t, body, rq->route.ns, rs))
			return;
		if (!check_fields(t, rq, body, NULL, c.msg, sizeof c.msg, c.warn, sizeof c.warn)) {
			mu__resp_status(rs, 400, "BadRequest", "%s", c.msg);
			return;
		}
		mu__obj_t *cur = mu__store_get(s->store, rt, rq->route.ns, rq->route.name);
		if (!cur) {
			const char *bn = mu__jstr(body, "metadata.name");
			if (!bn || strcmp(bn, rq->route.name)) {
				mu__resp_status(rs, 400, "BadRequest", "metadata.name must be %s", rq->route.name);
				return;
			}
			mu__do_create(s, rq, rs, rt, body);
			return;
		}
		mu__obj_unref(cur);
	}
	/* a patch made under a lease term is fenced like a binding: refused
	 * once that lease has another holder or term (only the patch's own
	 * annotation counts, not one an earlier write left on the object) */
	char why[900];
	if (ct != MU__CT_JSONPATCH && !mu__lease_term_current(s, body, why, sizeof why)) {
		mu__resp_err(rs, 409, "Conflict", t, rq->route.name, NULL, "%s", why);
		return;
	}
	mu__obj_t *res = NULL;
	int rc = write_kept(s, rt, rq->route.ns, rq->route.name, update_fn, &c, rq->q.dry_run, &res);
	update_answer(rq, rs, &c, rc, res);
	crd_written(s, rq, rt, res, rs);
	mu__obj_unref(res);
}

/* --- get and list ------------------------------------------------------- */

/* Continue tokens: base64 of {"rv":N,"start":KEY}. */
static char *make_continue(int64_t rv, const char *key)
{
	json_t *j = json_pack("{s:s, s:I, s:s}", "v", "meta.k8s.io/v1", "rv", (json_int_t)rv, "start", key);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	char *b = s ? mu__b64enc(s, strlen(s)) : NULL;
	free(s);
	return b;
}

static int read_continue(const char *tok, char *key, size_t cap)
{
	char raw[1024];
	size_t n;
	if (mu__b64dec(tok, raw, sizeof raw, &n) != MU_OK)
		return MU_EPARSE;
	json_t *j = json_loadb(raw, n, 0, NULL);
	const char *k = json_string_value(json_object_get(j, "start"));
	int rc = k && strlen(k) < cap ? MU_OK : MU_EPARSE;
	if (rc == MU_OK)
		snprintf(key, cap, "%s", k);
	json_decref(j);
	return rc;
}

/* Builds "{kind:XList, apiVersion, metadata, items:[...]}" by joining the
 * stored JSON texts, without parsing them. */
static char *list_body(const mu__rtype_t *t, const mu__page_t *pg, const char *cont, size_t *len)
{
	char av[96], head[2048];
	mu__rtype_apiversion(t, av, sizeof av);
	int hl = snprintf(head, sizeof head, "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":"
			  "{\"resourceVersion\":\"%lld\"", t->kind, av, (long long)pg->rv);
	if (cont)
		hl += snprintf(head + hl, sizeof head - (size_t)hl, ",\"continue\":\"%s\",\"remainingItemCount\":%zu",
			       cont, pg->remaining);
	hl += snprintf(head + hl, sizeof head - (size_t)hl, "},\"items\":[");
	size_t total = (size_t)hl + 3;
	for (size_t i = 0; i < pg->n; i++)
		total += pg->objs[i]->len + 1;
	char *b = malloc(total), *p = b;
	if (!b)
		return NULL;
	memcpy(p, head, (size_t)hl);
	p += hl;
	for (size_t i = 0; i < pg->n; i++) {
		if (i)
			*p++ = ',';
		memcpy(p, pg->objs[i]->json, pg->objs[i]->len);
		p += pg->objs[i]->len;
	}
	memcpy(p, "]}", 3);
	*len = (size_t)(p + 2 - b);
	return b;
}

/* The resourceVersion and resourceVersionMatch of a list, as kube-apiserver
 * checks them (ValidateListOptions: 422) and serves them from its watch
 * cache: a version the store has not reached is waited for up to 3 s, then
 * 504 "Too large resource version"; Exact serves only the current version
 * (no history is kept: 410 for an older one).  False when answered. */
static bool list_rv_ok(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs)
{
	const char *m = rq->q.rv_match;
	const char *inv = "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch";
	if (*m && strcmp(m, "Exact") && strcmp(m, "NotOlderThan")) {
		mu__resp_status(rs, 422, "Invalid", "%s: Unsupported value: \"%s\": supported values: \"Exact\", "
				"\"NotOlderThan\"", inv, m);
		return false;
	}
	if (*m && !rq->q.has_rv) {
		mu__resp_status(rs, 422, "Invalid", "%s: Forbidden: resourceVersionMatch is forbidden unless "
				"resourceVersion is provided", inv);
		return false;
	}
	if (!strcmp(m, "Exact") && !strcmp(rq->q.rv, "0")) {
		mu__resp_status(rs, 422, "Invalid", "%s: Forbidden: resourceVersionMatch \"exact\" is forbidden for "
				"resourceVersion \"0\"", inv);
		return false;
	}
	if (!rq->q.has_rv || !strcmp(rq->q.rv, "0") || !rq->q.rv[0])
		return true;
	char *end;
	long long want = strtoll(rq->q.rv, &end, 10);
	if (*end || want < 0) {
		mu__resp_status(rs, 400, "BadRequest", "invalid resource version \"%s\"", rq->q.rv);
		return false;
	}
	int64_t deadline = mu__mono_ms() + 3000;
	while (mu__store_rv(s->store) < want && mu__mono_ms() < deadline) {
		int64_t cur = mu__store_rv(s->store);
		mu__wev_t ev;
		int n = mu__store_wait(s->store, &cur, &ev, 1, (int)(deadline - mu__mono_ms()));
		if (n > 0)
			mu__wev_release(&ev, n);
		else if (n < 0)
			break;
	}
	int64_t now = mu__store_rv(s->store);
	if (now < want) {
		mu__resp_status(rs, 504, "Timeout", "Timeout: Too large resource version: %lld, current: %lld", want,
				(long long)now);
		return false;
	}
	if (!strcmp(m, "Exact") && want != now) {
		mu__resp_status(rs, 410, "Expired", "too old resource version: %s (%lld)", rq->q.rv, (long long)now);
		return false;
	}
	return true;
}

void mu__do_list(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	mu__filter_t f;
	if (mu__filter_init(&f, t, rq, rs) != MU_OK)
		return;
	char after[600] = "";
	if (rq->q.cont[0] && read_continue(rq->q.cont, after, sizeof after) != MU_OK) {
		mu__filter_release(&f);
		mu__resp_status(rs, 400, "BadRequest", "continue key is not valid");
		return;
	}
	if (!list_rv_ok(s, rq, rs)) {
		mu__filter_release(&f);
		return;
	}
	int64_t limit = rq->q.has_limit ? rq->q.limit : s->o.list_limit;
	if (limit > s->o.list_limit)
		limit = s->o.list_limit;
	mu__page_t pg;
	int rc = mu__store_list(s->store, rt, rq->route.ns, after[0] ? after : NULL, (size_t)limit,
				mu__filter_match, &f, &pg);
	mu__filter_release(&f);
	if (rc != MU_OK) {
		mu__resp_store_err(rs, rc, t, NULL);
		return;
	}
	char *cont = pg.next ? make_continue(pg.rv, pg.next) : NULL;
	if (mu__accept_table(rq->accept)) {
		json_t *tab = mu__table(t, pg.objs, pg.n, rq->q.include_object, true);
		json_t *md = json_object_get(tab, "metadata");
		char rv[32];
		snprintf(rv, sizeof rv, "%lld", (long long)pg.rv);
		json_object_set_new(md, "resourceVersion", json_string(rv));
		if (cont)
			json_object_set_new(md, "continue", json_string(cont));
		mu__resp_json(rs, 200, tab);
	} else {
		rs->code = 200;
		rs->ctype = "application/json";
		rs->body = list_body(t, &pg, cont, &rs->len);
		if (!rs->body)
			mu__resp_status(rs, 500, "InternalError", "out of memory");
	}
	free(cont);
	mu__page_release(&pg);
}

void mu__do_get(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	mu__obj_t *o = mu__store_get(s->store, rt, rq->route.ns, rq->route.name);
	if (!o) {
		mu__resp_store_err(rs, MU_ENOENT, mu__type(s->types, rt), rq->route.name);
		return;
	}
	mu__resp_obj(rs, rq, 200, o);
	mu__obj_unref(o);
}

/* --- dispatch ----------------------------------------------------------- */

/* Decodes the body of a write (400/413/415 answered here). */
static json_t *write_body(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs)
{
	char err[512];
	int ct = mu__content_type(rq->ctype);
	bool patch = !strcmp(rq->method, "PATCH");
	if (ct == MU__CT_PROTOBUF && !patch && rq->body_len <= s->o.max_body) {
		json_t *o = mu__proto_decode(rq->body, rq->body_len, err, sizeof err);
		if (!o)
			mu__resp_status(rs, 415, "UnsupportedMediaType", "%s", err);
		else if (mu__json_depth(o, MU__MAX_DEPTH) > MU__MAX_DEPTH) {
			mu__resp_status(rs, 400, "BadRequest", "the object nests more than %d levels deep", MU__MAX_DEPTH);
			json_decref(o);
			o = NULL;
		}
		return o;
	}
	if (ct == MU__CT_OTHER || ct == MU__CT_YAML || ct == MU__CT_PROTOBUF || (ct == MU__CT_JSONPATCH && !patch)) {
		mu__resp_status(rs, 415, "UnsupportedMediaType", "the body must be JSON (Content-Type %s)",
				rq->ctype ? rq->ctype : "");
		return NULL;
	}
	if (rq->body_len > s->o.max_body) {
		mu__resp_status(rs, 413, "RequestEntityTooLarge", "the request body is larger than %zu bytes",
				s->o.max_body);
		return NULL;
	}
	json_t *o = mu__json_body(rq->body, rq->body_len, s->o.max_body, err, sizeof err);
	if (!o) {
		mu__resp_status(rs, 400, "BadRequest", "%s", err);
	} else if (json_is_array(o) != (ct == MU__CT_JSONPATCH && patch)) {
		mu__resp_status(rs, 400, "BadRequest", "%s", json_is_array(o) ? "the request body must be a JSON object"
							  : "a JSON patch must be an array of operations");
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* Which methods and subresources a route allows. */
static void resource(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	const mu__route_t *r = &rq->route;
	const char *m = rq->method;
	bool named = r->name[0] != '\0';
	const char *sub = r->sub;
	if (*sub && !((!strcmp(sub, "status") && (t->subs & MU__SUB_STATUS)) ||
		      (!strcmp(sub, "approval") && (t->subs & MU__SUB_APPROVAL)) ||
		      (!strcmp(sub, "binding") && (t->subs & MU__SUB_BINDING)) ||
		      (!strcmp(sub, "eviction") && (t->subs & MU__SUB_EVICTION)) ||
		      (!strcmp(sub, "scale") && (t->subs & MU__SUB_SCALE)))) {
		mu__resp_status(rs, 404, "NotFound", "the server could not find the requested resource");
		return;
	}
	/* kube-apiserver routes a GET of one object (or of its subresource) to
	 * its Get handler, which ignores ?watch=true and answers the object once
	 * (installer.go: the item path has a GET action; only the deprecated
	 * /watch/ item path has a WATCH one, and only for a storage that
	 * watches: /status and /scale do not, so there it is 404). */
	bool watch = rq->q.watch && (!named || r->watch_prefix);
	if (!strcmp(m, "GET") && r->watch_prefix && *sub) {
		mu__resp_status(rs, 404, "NotFound", "the server could not find the requested resource");
		return;
	}
	if (!strcmp(m, "GET") && watch && rq->q.rv_match[0]) {
		mu__resp_status(rs, 422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
				"Forbidden: resourceVersionMatch is forbidden for watch");
		return;
	}
	if (!strcmp(m, "GET") && watch) {
		mu__do_watch(s, rq, rs, rt);
		return;
	}
	if ((!strcmp(m, "GET") || !strcmp(m, "HEAD")) && !strcmp(sub, "scale") && named) {
		mu__do_scale(s, rq, rs, rt, NULL);
		return;
	}
	if (!strcmp(m, "GET") || !strcmp(m, "HEAD")) {
		if (named)
			mu__do_get(s, rq, rs, rt);
		else
			mu__do_list(s, rq, rs, rt);
		return;
	}
	if (!strcmp(m, "DELETE")) {
		if (*sub)
			mu__resp_status(rs, 405, "MethodNotAllowed", "DELETE is not allowed on %s", sub);
		else if (named)
			mu__do_delete(s, rq, rs, rt);
		else
			mu__do_delete_collection(s, rq, rs, rt);
		return;
	}
	bool post = !strcmp(m, "POST"), put = !strcmp(m, "PUT"), patch = !strcmp(m, "PATCH");
	if (!post && !put && !patch) {
		mu__resp_status(rs, 405, "MethodNotAllowed", "the method %s is not allowed", m);
		return;
	}
	bool ok = post ? (!named && !*sub) || (named && (!strcmp(sub, "binding") || !strcmp(sub, "eviction")))
		       : named && (!*sub || !strcmp(sub, "status") || !strcmp(sub, "approval") || !strcmp(sub, "scale"));
	if (!ok) {
		mu__resp_status(rs, 405, "MethodNotAllowed", "the method %s is not allowed here", m);
		return;
	}
	json_t *body = write_body(s, rq, rs);
	if (!body)
		return;
	if (!strcmp(sub, "scale"))
		mu__do_scale(s, rq, rs, rt, body);
	else if (post && !named)
		mu__do_create(s, rq, rs, rt, body);
	else if (post && !strcmp(sub, "binding"))
		mu__do_binding(s, rq, rs, body);
	else if (post)
		mu__do_eviction(s, rq, rs, body);
	else if (put)
		mu__do_update(s, rq, rs, rt, body);
	else
		mu__do_patch(s, rq, rs, rt, body);
	json_decref(body);
}

void mu__handle(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs)
{
	memset(rs, 0, sizeof *rs);
	if (mu__discovery(s, rq, rs))
		return;
	mu__req_t core;
	char *text;
	int ev = mu__events_v1_in(s, rq, &core, &text, rs);
	if (ev) {
		/* events.k8s.io/v1: the core request, answered in that group */
		if (ev > 0)
			mu__handle(s, &core, rs);
		free(text);
		if (ev > 0 && rs->watch)
			mu__watch_set_convert(rs->watch, mu__event_json_to_v1);
		else if (ev > 0)
			mu__events_v1_out(rs);
		return;
	}
	const mu__route_t *r = &rq->route;
	int rt = r->kind == MU__R_RESOURCE ? mu__type_find(s->types, r->core ? "" : r->group, r->version, r->plural)
					    : -1;
	if (rt < 0 || (r->ns[0] && !mu__type(s->types, rt)->namespaced)) {
		mu__resp_status(rs, 404, "NotFound", "the server could not find the requested resource");
		return;
	}
	if (rt == MU__RT_SARS || rt == MU__RT_LSARS || rt == MU__RT_TOKENREVIEWS) {
		mu__review_handle(s, rq, rs, rt); /* sar.c: create-only reviews */
		return;
	}
	const mu__crdtype_t *c = mu__crdtype(mu__type(s->types, rt));
	mu__req_t at; /* a copy for a conversion webhook (crd_conv.c) */
	/* a patch converted there is written as a replace: retried on a
	 * conflict as kube's patcher retries (maxRetryWhenPatchConflicts) */
	for (int try = 0; try < 5; try++) {
		char *body = NULL;
		const mu__req_t *use = mu__crd_conv_before(s, rt, c, rq, &at, &body, rs);
		if (use)
			resource(s, use, rs, rt);
		free(body);
		if (!use || !mu__crd_conv_retry(rq, use, rs))
			break;
		free(rs->body);
		memset(rs, 0, sizeof *rs);
	}
	mu__crd_conv_after(c, rq, rs);
}
