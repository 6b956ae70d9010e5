/*
 * podsub.c - deletion, and the pod subresources a scheduler uses.
 *
 * Deletion follows Kubernetes: a pod that is bound to a node and still
 * running is deleted gracefully (it gets deletionTimestamp and
 * deletionGracePeriodSeconds; its simulated kubelet finishes the job), an
 * object with finalizers waits for them to go, everything else goes at
 * once.  Deleting a namespace deletes what is in it.  propagationPolicy
 * Orphan and Foreground give the object (pods and namespaces excepted) the
 * `orphan` or `foregroundDeletion` finalizer with a deletionTimestamp, and
 * the garbage collector (gc.c) does the rest; Background deletes at once
 * and the collector deletes the dependents afterwards.
 *
 * `binding` sets spec.nodeName and the PodScheduled condition (409 when the
 * pod is already bound, is being deleted or has scheduling gates, or when a
 * uid precondition fails); `eviction` marks the pod with a DisruptionTarget
 * condition and deletes it as DELETE would, in one transaction.  There are
 * no PodDisruptionBudgets, so an eviction is never refused with 429.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"

typedef struct del_ctx {
	int64_t grace;       /* < 0: the object's default */
	const char *uid, *rv;
	char msg[256];
} del_ctx_t;

static bool pod_finished(const json_t *o)
{
	const char *ph = mu__jstr(o, "status.phase");
	return ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
}

/* Precondition checks shared by delete and eviction. */
static bool preconditions_ok(const mu__obj_t *cur, const json_t *o, const char *uid, const char *rv,
			     char *msg, size_t len)
{
	const char *have = mu__jstr(o, "metadata.uid");
	if (uid && *uid && (!have || strcmp(uid, have))) {
		snprintf(msg, len, "Precondition failed: UID in precondition: %s, UID in object meta: %s", uid,
			 have ? have : "");
		return false;
	}
	if (rv && *rv && strtoll(rv, NULL, 10) != cur->rv) {
		snprintf(msg, len, "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %lld",
			 rv, (long long)cur->rv);
		return false;
	}
	return true;
}

/* Parses the stored object for a delete or an eviction and checks the
 * request's preconditions.  Returns MU_OK with *out (the caller's to
 * decref), or MU_ENOENT, MU_ENOMEM, or MU_ESTATE with c->msg filled. */
static int del_parse(del_ctx_t *c, const mu__obj_t *cur, json_t **out)
{
	*out = NULL;
	if (!cur)
		return MU_ENOENT;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	if (!preconditions_ok(cur, o, c->uid, c->rv, c->msg, sizeof c->msg)) {
		json_decref(o);
		return MU_ESTATE;
	}
	*out = o;
	return MU_OK;
}

static int delete_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	del_ctx_t *c = ctx;
	json_t *o;
	int rc0 = del_parse(c, cur, &o);
	if (rc0)
		return rc0;
	bool fin = json_array_size(mu__jget(o, "metadata.finalizers")) > 0;
	int64_t grace = 0;
	if (cur->rt == MU__RT_PODS) {
		const json_t *tg = mu__jget(o, "spec.terminationGracePeriodSeconds");
		grace = c->grace >= 0 ? c->grace : json_is_integer(tg) ? json_integer_value(tg) : 30;
		const char *node = mu__jstr(o, "spec.nodeName");
		if (!node || !*node || pod_finished(o))
			grace = 0;
	}
	if (grace == 0 && !fin) {
		json_decref(o);
		return MU__MUT_DEL;
	}
	const json_t *had = mu__jget(o, "metadata.deletionGracePeriodSeconds");
	if (cur->deleting && (!json_is_integer(had) || json_integer_value(had) <= grace)) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	char ts[40];
	mu__rfc3339_format((mu__now_s() + grace) * 1000000, false, ts, sizeof ts);
	mu__jset(o, "metadata.deletionTimestamp", json_string(ts));
	mu__jset(o, "metadata.deletionGracePeriodSeconds", json_integer(grace));
	*out = o;
	return MU__MUT_PUT;
}

int mu__delete_in(mu__wtx_t *tx, int rt, const char *ns, const char *name, int64_t grace,
		  const char *uid, const char *rv, bool dry, mu__obj_t **res)
{
	del_ctx_t c = {grace, uid, rv, ""};
	return mu__store_apply(tx, rt, ns, name, delete_fn, &c, dry, res);
}

static int now_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)ctx;
	(void)out;
	return cur ? MU__MUT_DEL : MU_ENOENT;
}

int mu__delete_now(mu__wtx_t *tx, int rt, const char *ns, const char *name)
{
	return mu__store_apply(tx, rt, ns, name, now_fn, NULL, false, NULL);
}

/* Reads DeleteOptions from the query and an optional body. */
static int delete_opts(const mu__req_t *rq, mu__resp_t *rs, json_t **body, int64_t *grace)
{
	*body = NULL;
	*grace = rq->q.has_grace ? rq->q.grace : -1;
	if (rq->body_len == 0)
		return MU_OK;
	char err[256];
	*body = mu__json_body(rq->body, rq->body_len, 1 << 20, err, sizeof err);
	if (*body && !json_is_object(*body)) {
		json_decref(*body);
		*body = NULL;
		snprintf(err, sizeof err, "the request body must be a JSON object");
	}
	if (!*body) {
		mu__resp_status(rs, 400, "BadRequest", "%s", err);
		return MU_EPARSE;
	}
	const json_t *g = json_object_get(*body, "gracePeriodSeconds");
	if (json_is_integer(g) && json_integer_value(g) >= 0)
		*grace = json_integer_value(g);
	return MU_OK;
}

/* Deletes every object of type rt in ns (NULL: all), in transactions of
 * at most MU__TX_MAX writes. */
static int delete_all(mu_apiserver_t *s, int rt, const char *ns)
{
	for (;;) {
		mu__page_t pg;
		if (mu__store_list(s->store, rt, ns, NULL, MU__TX_MAX, NULL, NULL, &pg) != MU_OK)
			return MU_ENOMEM;
		if (pg.n == 0) {
			mu__page_release(&pg);
			return MU_OK;
		}
		mu__wtx_t *tx;
		mu__store_begin(s->store, &tx);
		for (size_t i = 0; i < pg.n; i++)
			mu__delete_now(tx, rt, pg.objs[i]->ns, pg.objs[i]->name);
		int rc = mu__store_commit(tx);
		mu__page_release(&pg);
		if (rc != MU_OK)
			return rc;
	}
}

/* Deletes everything in namespace ns (custom objects too). */
static int empty_namespace(mu_apiserver_t *s, const char *ns)
{
	for (int rt = 0; rt < mu__types_end(s->types); rt++) {
		const mu__rtype_t *t = mu__type(s->types, rt);
		if (!t || !t->namespaced)
			continue;
		int rc = delete_all(s, rt, ns);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

/* Before a CustomResourceDefinition goes: its type stops being served and
 * its objects are deleted, as the apiextensions finalizer
 * customresourcecleanup.apiextensions.k8s.io does before it lets the CRD
 * go (done here at once, not in the background). */
static int crd_cleanup(mu_apiserver_t *s, const char *name)
{
	mu__obj_t *cur = mu__store_get(s->store, MU__RT_CRDS, NULL, name);
	json_t *o = cur ? mu__obj_parse(cur) : NULL;
	mu__obj_unref(cur);
	const char *g = mu__jstr(o, "spec.group"), *p = mu__jstr(o, "spec.names.plural");
	char res[400];
	snprintf(res, sizeof res, "%s/%s", g ? g : "", p ? p : "");
	int rt = g && p ? mu__type_by_res(s->types, res) : -1;
	json_decref(o);
	if (rt < MU__RT_COUNT)
		return MU_OK; /* none, or a type muster serves itself */
	mu__types_unserve(s->types, rt);
	return delete_all(s, rt, NULL);
}

/* --- propagation policies ---------------------------------------------- */

enum { PROP_BACKGROUND = 0, PROP_ORPHAN, PROP_FOREGROUND };

/* The propagation policy of a delete: the query's, else the body's
 * propagationPolicy, else the deprecated orphanDependents, else the kind's
 * default: Orphan for batch/v1 Jobs (kube-apiserver keeps that default for
 * compatibility and warns about it; kubectl always sends Background),
 * Background for the rest.  -1 when answered (422). */
static int propagation(const mu__req_t *rq, const json_t *body, int rt, mu__resp_t *rs)
{
	const char *p = rq->q.propagation[0] ? rq->q.propagation : mu__jstr(body, "propagationPolicy");
	const json_t *od = json_object_get(body, "orphanDependents");
	if (p && *p) {
		if (!strcmp(p, "Orphan"))
			return PROP_ORPHAN;
		if (!strcmp(p, "Background"))
			return PROP_BACKGROUND;
		if (!strcmp(p, "Foreground"))
			return PROP_FOREGROUND;
		mu__resp_status(rs, 422, "Invalid", "propagationPolicy: Unsupported value: \"%.40s\": supported values: "
				"\"Foreground\", \"Background\", \"Orphan\"", p);
		return -1;
	}
	if (json_is_boolean(od))
		return json_is_true(od) ? PROP_ORPHAN : PROP_BACKGROUND;
	if (rt == MU__RT_JOBS) {
		snprintf(rs->warning, sizeof rs->warning, "child pods are preserved by default when jobs are "
			 "deleted; set propagationPolicy=Background to remove them or set "
			 "propagationPolicy=Orphan to suppress this warning");
		return PROP_ORPHAN;
	}
	return PROP_BACKGROUND;
}

typedef struct fin_ctx {
	del_ctx_t *d;
	const char *finalizer;   /* "orphan" or "foregroundDeletion" */
} fin_ctx_t;

/* Marks an object for deletion with Orphan or Foreground propagation, as
 * kube-apiserver does: the policy's finalizer and deletionTimestamp (grace
 * 0); the garbage collector (gc.c) orphans or deletes the dependents and
 * then removes the finalizer, which lets the object go. */
static int finalize_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	fin_ctx_t *f = ctx;
	json_t *o;
	int rc0 = del_parse(f->d, cur, &o);
	if (rc0)
		return rc0;
	json_t *fin = mu__jget(o, "metadata.finalizers");
	size_t i;
	json_t *x;
	bool have = false;
	json_array_foreach(fin, i, x)
		have = have || (json_is_string(x) && !strcmp(json_string_value(x), f->finalizer));
	if (have && cur->deleting) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	if (!json_is_array(fin)) {
		mu__jset(o, "metadata.finalizers", json_array());
		fin = mu__jget(o, "metadata.finalizers");
	}
	if (!have)
		json_array_append_new(fin, json_string(f->finalizer));
	if (!cur->deleting) {
		char ts[40];
		mu__timestamp(ts, sizeof ts, false);
		mu__jset(o, "metadata.deletionTimestamp", json_string(ts));
		mu__jset(o, "metadata.deletionGracePeriodSeconds", json_integer(0));
	}
	*out = o;
	return MU__MUT_PUT;
}

void mu__do_delete(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	const char *name = rq->route.name;
	json_t *body;
	int64_t grace;
	if (delete_opts(rq, rs, &body, &grace) != MU_OK)
		return;
	if (rt == MU__RT_NAMESPACES) {
		static const char *const keep[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
		for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
			if (!strcmp(name, keep[i])) {
				json_decref(body);
				mu__resp_err(rs, 403, "Forbidden", t, name, NULL,
					     "namespaces \"%s\" is forbidden: this namespace may not be deleted", name);
				return;
			}
		mu__obj_t *cur = mu__store_get(s->store, rt, NULL, name);
		if (cur && !rq->q.dry_run)
			empty_namespace(s, name);
		mu__obj_unref(cur);
	}
	if (rt == MU__RT_CRDS && !rq->q.dry_run)
		crd_cleanup(s, name);
	bool dry = rq->q.dry_run || json_array_size(json_object_get(body, "dryRun")) > 0;
	int policy = propagation(rq, body, rt, rs);
	if (policy < 0) {
		json_decref(body);
		return;
	}
	del_ctx_t c = {grace, mu__jstr(body, "preconditions.uid"), mu__jstr(body, "preconditions.resourceVersion"), ""};
	mu__obj_t *res = NULL;
	char warn[sizeof rs->warning];
	snprintf(warn, sizeof warn, "%s", rs->warning);
	fin_ctx_t fc = {&c, policy == PROP_ORPHAN ? "orphan" : "foregroundDeletion"};
	int rc = policy != PROP_BACKGROUND && rt != MU__RT_PODS && rt != MU__RT_NAMESPACES
			 ? mu__store_mutate(s->store, rt, rq->route.ns, name, finalize_fn, &fc, dry, &res)
			 : mu__store_mutate(s->store, rt, rq->route.ns, name, delete_fn, &c, dry, &res);
	json_decref(body);
	if (rc == MU_ELIMIT)
		mu__resp_status(rs, 422, "Invalid", "%s", c.msg);
	else if (rc == MU_ESTATE)
		mu__resp_err(rs, 409, "Conflict", t, name, NULL, "%s", c.msg);
	else if (rc < 0)
		mu__resp_store_err(rs, rc, t, name);
	else
		mu__resp_obj(rs, rq, 200, res);
	if (rs->code < 300)
		snprintf(rs->warning, sizeof rs->warning, "%s", warn);
	mu__obj_unref(res);
}

typedef struct {
	mu_apiserver_t *s;
	int rt;
	int64_t grace;
	bool dry_run;
	size_t deleted;
} delcoll_t;

/* Deletes one page of the collection in one write transaction. */
static int delcoll_page(void *ctx, mu__page_t *pg)
{
	delcoll_t *dc = ctx;
	mu__wtx_t *tx;
	mu__store_begin(dc->s->store, &tx);
	for (size_t i = 0; i < pg->n; i++)
		if (mu__delete_in(tx, dc->rt, pg->objs[i]->ns, pg->objs[i]->name, dc->grace, NULL, NULL, dc->dry_run,
				  NULL) >= 0)
			dc->deleted++;
	mu__store_commit(tx);
	return 0;
}

void mu__do_delete_collection(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	const mu__rtype_t *t = mu__type(s->types, rt);
	if (rt == MU__RT_NAMESPACES) {
		mu__resp_status(rs, 405, "MethodNotAllowed", "deleting all namespaces is not allowed");
		return;
	}
	mu__filter_t f;
	if (mu__filter_init(&f, t, rq, rs) != MU_OK)
		return;
	json_t *body;
	int64_t grace;
	if (delete_opts(rq, rs, &body, &grace) != MU_OK) {
		mu__filter_release(&f);
		return;
	}
	json_decref(body);
	delcoll_t dc = {s, rt, grace, rq->q.dry_run, 0};
	(void)mu__store_each(s->store, rt, rq->route.ns, MU__TX_MAX, mu__filter_match, &f, delcoll_page, &dc);
	size_t deleted = dc.deleted;
	mu__filter_release(&f);
	json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:i, s:{s:s, s:s, s:I}}", "kind", "Status", "apiVersion",
			       "v1", "metadata", "status", "Success", "code", 200, "details", "kind", t->plural,
			       "group", t->group, "retryAfterSeconds", (json_int_t)0);
	json_object_set_new(st, "message", json_sprintf("deleted %zu %s", deleted, t->plural));
	mu__resp_json(rs, 200, st);
}

/* --- binding ------------------------------------------------------------ */

typedef struct bind_ctx {
	const char *node, *uid;
	const json_t *annotations;
	char msg[256];
} bind_ctx_t;

/* Sets (or replaces) condition `type` of a pod's status. */
void mu__set_condition(json_t *o, const char *type, const char *status, const char *reason,
		       const char *message)
{
	json_t *conds = mu__jget(o, "status.conditions");
	if (!json_is_array(conds)) {
		mu__jset(o, "status.conditions", json_array());
		conds = mu__jget(o, "status.conditions");
	}
	if (!conds)
		return;
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	size_t i;
	json_t *c, *found = NULL;
	json_array_foreach(conds, i, c) {
		const char *ty = json_string_value(json_object_get(c, "type"));
		if (ty && !strcmp(ty, type))
			found = c;
	}
	if (!found) {
		found = json_object();
		json_array_append_new(conds, found);
		json_object_set_new(found, "type", json_string(type));
	}
	const char *was = json_string_value(json_object_get(found, "status"));
	if (!was || strcmp(was, status))
		json_object_set_new(found, "lastTransitionTime", json_string(ts));
	json_object_set_new(found, "status", json_string(status));
	json_object_set_new(found, "lastProbeTime", json_null());
	if (reason)
		json_object_set_new(found, "reason", json_string(reason));
	else
		json_object_del(found, "reason");
	if (message)
		json_object_set_new(found, "message", json_string(message));
	else
		json_object_del(found, "message");
}

static int bind_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	bind_ctx_t *c = ctx;
	if (!cur)
		return MU_ENOENT;
	json_t *o = mu__obj_parse(cur);
	if (!o)
		return MU_ENOMEM;
	const char *node = mu__jstr(o, "spec.nodeName");
	if (!preconditions_ok(cur, o, c->uid, NULL, c->msg, sizeof c->msg)) {
	} else if (cur->deleting) {
		snprintf(c->msg, sizeof c->msg, "pod %s is being deleted, cannot be assigned to a host", cur->name);
	} else if (node && *node) {
		snprintf(c->msg, sizeof c->msg, "Operation cannot be fulfilled on pods/binding \"%s\": "
			 "pod %s is already assigned to node \"%s\"", cur->name, cur->name, node);
	} else if (json_array_size(mu__jget(o, "spec.schedulingGates"))) {
		snprintf(c->msg, sizeof c->msg, "pod %s has non-empty .spec.schedulingGates", cur->name);
	} else {
		mu__jset(o, "spec.nodeName", json_string(c->node));
		if (json_object_size(c->annotations)) {
			if (!json_is_object(mu__jget(o, "metadata.annotations")))
				mu__jset(o, "metadata.annotations", json_object());
			/* copied: the store keeps this tree for the kubelet, which
			 * must not share values with the request's body */
			json_t *copy = json_deep_copy(c->annotations);
			json_object_update(mu__jget(o, "metadata.annotations"), copy);
			json_decref(copy);
		}
		mu__set_condition(o, "PodScheduled", "True", NULL, NULL);
		*out = o;
		return MU__MUT_PUT;
	}
	json_decref(o);
	return MU_ESTATE;
}

/* Whether a write made under the lease term in the annotation
 * muster.io/lease-term ("NS/NAME:HOLDER:TRANSITIONS") of obj may go
 * through: yes without the annotation, else only while that lease still
 * has that holder and that many transitions.  A scheduler replica that
 * was paused, or whose write the network held back, after another took
 * its lease over is fenced off here (an extension of muster up's: a real
 * kube-apiserver ignores the annotation).  msg says why not.  O(1) reads.
 * Also asked of a PATCH whose own body carries the annotation (api.c):
 * the hub daemon's dispatch records (src/dispatch). */
bool mu__lease_term_current(mu_apiserver_t *s, const json_t *obj, char *msg, size_t len)
{
	const char *term = json_string_value(json_object_get(mu__jget(obj, "metadata.annotations"),
							      "muster.io/lease-term"));
	if (!term)
		return true;
	char ns[254], name[254], holder[254];
	int tr = -1;
	if (sscanf(term, "%253[^/]/%253[^:]:%253[^:]:%d", ns, name, holder, &tr) != 4) {
		snprintf(msg, len, "muster.io/lease-term: expected NAMESPACE/NAME:HOLDER:TRANSITIONS, got %.200s", term);
		return false;
	}
	mu__obj_t *o = mu__store_get(s->store, MU__RT_LEASES, ns, name);
	json_t *l = o ? mu__obj_parse(o) : NULL;
	const char *now = mu__jstr(l, "spec.holderIdentity");
	const json_t *t = mu__jget(l, "spec.leaseTransitions");
	bool ok = now && !strcmp(now, holder) && (json_is_integer(t) ? json_integer_value(t) : 0) == tr;
	if (!ok)
		snprintf(msg, len, "fenced: made under lease %s/%s term %d of %s, but the lease is now %s's (term %lld)",
			 ns, name, tr, holder, now && *now ? now : "nobody",
			 (long long)(json_is_integer(t) ? json_integer_value(t) : 0));
	json_decref(l);
	if (o)
		mu__obj_unref(o);
	return ok;
}

void mu__do_binding(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body)
{
	int n;
	const mu__rtype_t *t = &mu__rtypes(&n)[MU__RT_PODS];
	const char *k = json_string_value(json_object_get(body, "kind"));
	const char *bn = mu__jstr(body, "metadata.name");
	const char *node = mu__jstr(body, "target.name");
	if (!k || strcmp(k, "Binding")) {
		mu__resp_status(rs, 400, "BadRequest", "the body must be a v1 Binding");
		return;
	}
	if (bn && *bn && strcmp(bn, rq->route.name)) {
		mu__resp_status(rs, 400, "BadRequest", "the name of the binding (%s) does not match the pod (%s)",
				bn, rq->route.name);
		return;
	}
	if (!node || !mu__valid_dns_subdomain(node)) {
		mu__verr_t e = {0};
		mu__verr_add(&e, "target.name", node ? "FieldValueInvalid" : "FieldValueRequired",
			     "must be the name of a node");
		mu__resp_err(rs, 422, "Invalid", t, rq->route.name, &e,
			     "Binding \"%s\" is invalid: target.name: must be the name of a node", rq->route.name);
		return;
	}
	char why[900];
	if (!mu__lease_term_current(s, body, why, sizeof why)) {
		mu__resp_err(rs, 409, "Conflict", t, rq->route.name, NULL, "%s", why);
		return;
	}
	bind_ctx_t c = {node, mu__jstr(body, "metadata.uid"), mu__jget(body, "metadata.annotations"), ""};
	/* the bound pod's tree is kept: the simulated kubelet's status write,
	 * which comes next, takes it instead of parsing the pod again */
	int rc = mu__store_mutate_keep(s->store, MU__RT_PODS, rq->route.ns, rq->route.name, bind_fn, &c,
				       rq->q.dry_run, NULL);
	if (rc == MU_ESTATE)
		mu__resp_err(rs, 409, "Conflict", t, rq->route.name, NULL, "%s", c.msg);
	else if (rc < 0)
		mu__resp_store_err(rs, rc, t, rq->route.name);
	else
		mu__resp_success(rs, 201);
}

/* --- eviction ----------------------------------------------------------- */

static int disrupt_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	del_ctx_t *c = ctx;
	json_t *o;
	int rc0 = del_parse(c, cur, &o);
	if (rc0)
		return rc0;
	if (cur->deleting) {
		json_decref(o);
		return MU__MUT_KEEP;
	}
	mu__set_condition(o, "DisruptionTarget", "True", "EvictionByEvictionAPI", "Eviction API: evicting");
	*out = o;
	return MU__MUT_PUT;
}

void mu__do_eviction(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body)
{
	int n;
	const mu__rtype_t *t = &mu__rtypes(&n)[MU__RT_PODS];
	/* a body without kind and apiVersion gets them from the URL, as
	 * kube-apiserver's decoder defaults them (the Python client sends
	 * none) */
	const char *k = json_string_value(json_object_get(body, "kind"));
	const char *av = json_string_value(json_object_get(body, "apiVersion"));
	if (!json_object_get(body, "kind") && !json_object_get(body, "apiVersion"))
		k = "Eviction", av = "policy/v1";
	const char *bn = mu__jstr(body, "metadata.name");
	if (!k || strcmp(k, "Eviction") || !av || (strcmp(av, "policy/v1") && strcmp(av, "policy/v1beta1"))) {
		mu__resp_status(rs, 400, "BadRequest", "the body must be a policy/v1 Eviction");
		return;
	}
	if (bn && *bn && strcmp(bn, rq->route.name)) {
		mu__resp_status(rs, 400, "BadRequest", "name in URL does not match name in Eviction object");
		return;
	}
	char why[900];
	if (!mu__lease_term_current(s, body, why, sizeof why)) {
		mu__resp_err(rs, 409, "Conflict", t, rq->route.name, NULL, "%s", why);
		return;
	}
	const json_t *g = mu__jget(body, "deleteOptions.gracePeriodSeconds");
	int64_t grace = json_is_integer(g) && json_integer_value(g) >= 0 ? json_integer_value(g) : -1;
	del_ctx_t dc = {grace, mu__jstr(body, "deleteOptions.preconditions.uid"),
			mu__jstr(body, "deleteOptions.preconditions.resourceVersion"), ""};
	mu__wtx_t *tx;
	mu__store_begin(s->store, &tx);
	/* the budgets are checked under the writer lock: no other eviction
	 * can pass between the count and the delete */
	mu__obj_t *cur = mu__store_get(s->store, MU__RT_PODS, rq->route.ns, rq->route.name);
	json_t *pod = cur ? mu__obj_parse(cur) : NULL;
	mu__verr_t pe = {0};
	char take[320] = "";
	int prc = pod && !cur->deleting ? mu__pdb_allows(s, pod, why, sizeof why, &pe, take, sizeof take) : MU_OK;
	json_decref(pod);
	mu__obj_unref(cur);
	if (prc != MU_OK) {
		mu__store_commit(tx);
		if (prc == MU_ESTATE)
			mu__resp_err(rs, 429, "TooManyRequests", t, rq->route.name, &pe, "%s", why);
		else
			mu__resp_status(rs, 500, "InternalError", "%s", why);
		return;
	}
	/* the preconditions are checked by the first step, so the second,
	 * which sees the first's new version, cannot fail on them */
	int rc = mu__store_apply(tx, MU__RT_PODS, rq->route.ns, rq->route.name, disrupt_fn, &dc,
				 rq->q.dry_run, NULL);
	bool was_deleting = rc == MU__MUT_KEEP;
	if (rc >= 0 && !was_deleting && take[0]) { /* the budget's status pays for it */
		int trc = mu__store_apply(tx, MU__RT_PDBS, rq->route.ns, take, mu__pdb_take_fn,
					  rq->q.dry_run ? NULL : (void *)rq->route.name,
					  rq->q.dry_run, NULL);
		if (trc < 0)
			rc = trc;
	}
	del_ctx_t plain = {grace, NULL, NULL, ""};
	if (rc >= 0 && !was_deleting && !rq->q.dry_run)
		rc = mu__store_apply(tx, MU__RT_PODS, rq->route.ns, rq->route.name, delete_fn, &plain, false, NULL);
	int crc = mu__store_commit(tx);
	if (rc == MU_ESTATE)
		mu__resp_err(rs, 409, "Conflict", t, rq->route.name, NULL, "%s", dc.msg);
	else if (rc < 0)
		mu__resp_store_err(rs, rc, t, rq->route.name);
	else if (crc != MU_OK)
		mu__resp_store_err(rs, crc, t, rq->route.name);
	else
		mu__resp_success(rs, was_deleting ? 200 : 201);
}
