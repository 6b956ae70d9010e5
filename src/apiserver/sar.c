/*
 * sar.c - the review APIs through which other programs ask muster up's
 * authenticator and authorizer about someone else, as kube-apiserver
 * serves them (create only, nothing stored):
 *   - authorization.k8s.io/v1 SubjectAccessReview (cluster scope) and
 *     LocalSubjectAccessReview (in a namespace): may user/groups (uid and
 *     extra carried, which RBAC does not read) do resourceAttributes
 *     (verb, group, resource, subresource, name, namespace) or
 *     nonResourceAttributes (verb, path)?  Validated as kube's
 *     ValidateSubjectAccessReview / ValidateLocalSubjectAccessReview (422
 *     with kube's causes), the Local one's namespace as kube's create
 *     handler and REST (400), and answered by mu__rbac_decide (rbac.c):
 *     status.allowed and the reason as kube's RBAC authorizer words it;
 *   - authentication.k8s.io/v1 TokenReview: who is spec.token, for
 *     spec.audiences (default the API audiences), through the token
 *     authenticators of mu__authn_token (rbac.c).
 * Who may ask is RBAC's business like any request (kube's
 * system:auth-delegator ClusterRole grants create on both, rbacboot.c);
 * api.c's mu__handle hands these types here (mu__review_handle).
 * Work: a review reads the bindings and roles that apply (rbac.c's
 * bound); a TokenReview what its token names.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"
#include "apiserver/crd.h"
#include "apiserver/proto.h"

#define MU__SAR_MSG 1536

/* A Go %q of v into out (kube prints field values with it): quotes,
 * backslashes and control bytes escaped.  Bounded by cap. */
static void goq(char *out, size_t cap, const char *v)
{
	size_t n = 0;
	if (cap < 3)
		return;
	out[n++] = '"';
	for (const char *p = v ? v : ""; *p && n + 6 < cap; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			n += (size_t)snprintf(out + n, cap - n, "\\%c", c);
		else if (c < 0x20)
			n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
		else
			out[n++] = (char)c;
	}
	out[n++] = '"';
	out[n] = '\0';
}

/* The string member k of o, "" when missing. */
static const char *str(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

/* Whether metadata m is empty as kube's ValidateSubjectAccessReview
 * compares it (managedFields, and for a Local one the namespace, left
 * out; null members are zero).  O(|m|). */
static bool meta_empty(const json_t *m, bool local)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)m, k, v) {
		if (json_is_null(v) || !strcmp(k, "managedFields") || (local && !strcmp(k, "namespace")))
			continue;
		if ((json_is_string(v) && !*json_string_value(v)) || (json_is_object(v) && !json_object_size(v)) ||
		    (json_is_integer(v) && !json_integer_value(v)))
			continue;
		return false;
	}
	return true;
}

/* A string map as Go's %#v prints map[string]string (sorted keys). */
static void go_map(char *out, size_t cap, const json_t *m)
{
	if (!json_is_object(m) || !json_object_size(m)) {
		snprintf(out, cap, "map[string]string(nil)");
		return;
	}
	size_t n = (size_t)snprintf(out, cap, "map[string]string{");
	const char *keys[64];
	size_t nk = 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)m, k, v)
		if (nk < 64)
			keys[nk++] = k;
	for (size_t i = 1; i < nk; i++) /* insertion sort: at most 64 keys */
		for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	for (size_t i = 0; i < nk && n < cap; i++) {
		char qk[300], qv[300];
		goq(qk, sizeof qk, keys[i]);
		goq(qv, sizeof qv, json_string_value(json_object_get(m, keys[i])));
		n += (size_t)snprintf(out + n, cap - n, "%s%s:%s", i ? ", " : "", qk, qv);
	}
	if (n < cap)
		snprintf(out + n, cap - n, "}");
}

/* metadata m as the Go %#v of a v1.ObjectMeta that kube's "must be
 * empty" cause prints: the string members and the label and annotation
 * maps; the others as their zero values (muster cannot print a set
 * time, owner or finalizer as Go does: documented).  Bounded by cap. */
static void go_meta(char *out, size_t cap, const json_t *m)
{
	char name[300], gen[300], ns[300], uid[200], rv[100], labels[1024], ann[1024];
	goq(name, sizeof name, str(m, "name"));
	goq(gen, sizeof gen, str(m, "generateName"));
	goq(ns, sizeof ns, str(m, "namespace"));
	goq(uid, sizeof uid, str(m, "uid"));
	goq(rv, sizeof rv, str(m, "resourceVersion"));
	go_map(labels, sizeof labels, json_object_get(m, "labels"));
	go_map(ann, sizeof ann, json_object_get(m, "annotations"));
	snprintf(out, cap,
		 "v1.ObjectMeta{Name:%s, GenerateName:%s, Namespace:%s, SelfLink:\"\", UID:%s, ResourceVersion:%s, "
		 "Generation:%lld, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), "
		 "DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:%s, Annotations:%s, "
		 "OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), "
		 "ManagedFields:[]v1.ManagedFieldsEntry(nil)}",
		 name, gen, ns, uid, rv, (long long)json_integer_value(json_object_get(m, "generation")), labels, ann);
}

/* The causes kube's validation gives a (Local)SubjectAccessReview body,
 * in kube's order, into e.  O(|body|). */
static void sar_check(const json_t *body, bool local, mu__verr_t *e)
{
	const json_t *spec = json_object_get(body, "spec");
	const json_t *ra = json_object_get(spec, "resourceAttributes");
	const json_t *na = json_object_get(spec, "nonResourceAttributes");
	bool has_ra = json_is_object(ra), has_na = json_is_object(na);
	char nav[700] = "", q1[300], q2[300];
	if (has_na) {
		goq(q1, sizeof q1, str(na, "path"));
		goq(q2, sizeof q2, str(na, "verb"));
		snprintf(nav, sizeof nav, "authorization.NonResourceAttributes{Path:%s, Verb:%s}", q1, q2);
	}
	if (has_ra && has_na)
		mu__verr_add(e, "spec.nonResourceAttributes", "FieldValueInvalid",
			     "Invalid value: %s: cannot be specified in combination with resourceAttributes", nav);
	if (!has_ra && !has_na)
		mu__verr_add(e, "spec.resourceAttributes", "FieldValueInvalid",
			     "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be "
			     "specified");
	const char *user = str(spec, "user");
	if (!*user && !json_array_size(json_object_get(spec, "groups")))
		mu__verr_add(e, "spec.user", "FieldValueInvalid",
			     "Invalid value: \"\": at least one of user or group must be specified");
	const json_t *meta = json_object_get(body, "metadata");
	if (json_is_object(meta) && !meta_empty(meta, local)) {
		char mv[4096];
		go_meta(mv, sizeof mv, meta);
		mu__verr_add(e, "metadata", "FieldValueInvalid", "Invalid value: %.300s: must be empty%s", mv,
			     local ? " except for namespace" : "");
	}
	if (!local)
		return;
	const char *ns = str(meta, "namespace");
	if (has_ra && strcmp(str(ra, "namespace"), ns)) {
		goq(q1, sizeof q1, str(ra, "namespace"));
		mu__verr_add(e, "spec.resourceAttributes.namespace", "FieldValueInvalid",
			     "Invalid value: %s: must match metadata.namespace", q1);
	}
	if (has_na)
		mu__verr_add(e, "spec.nonResourceAttributes", "FieldValueInvalid",
			     "Invalid value: %s: disallowed on this kind of request", nav);
}

/* The user a review's spec names: user, uid, groups and extra exactly as
 * given (kube adds no group), system:masters making it privileged. */
static void spec_user(const json_t *spec, mu__user_t *u)
{
	memset(u, 0, sizeof *u);
	snprintf(u->name, sizeof u->name, "%s", str(spec, "user"));
	snprintf(u->uid, sizeof u->uid, "%s", str(spec, "uid"));
	size_t i;
	json_t *g;
	json_array_foreach(json_object_get(spec, "groups"), i, g) {
		if (!json_is_string(g))
			continue;
		mu__user_add_group(u, json_string_value(g));
		u->admin = u->admin || !strcmp(json_string_value(g), "system:masters");
	}
	const char *k;
	json_t *vals;
	json_object_foreach(json_object_get(spec, "extra"), k, vals) {
		json_array_foreach(vals, i, g)
			if (json_is_string(g))
				(void)mu__user_add_extra(u, k, json_string_value(g));
	}
}

/* The object a review answers with: kind, apiVersion, metadata (with
 * kube's creationTimestamp null), the spec as sent, and status. */
static json_t *answer(const char *kind, const char *api, const json_t *body, json_t *status)
{
	json_t *meta = json_deep_copy(json_object_get(body, "metadata"));
	if (!json_is_object(meta)) {
		json_decref(meta);
		meta = json_object();
	}
	json_object_del(meta, "managedFields");
	json_object_set_new(meta, "creationTimestamp", json_null());
	json_t *spec = json_deep_copy(json_object_get(body, "spec"));
	return json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", kind, "apiVersion", api, "metadata", meta, "spec",
			 spec ? spec : json_object(), "status", status);
}

/* A (Local, when local) SubjectAccessReview POSTed as body (the
 * caller's). */
static void do_sar(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body, bool local)
{
	const char *kind = local ? "LocalSubjectAccessReview" : "SubjectAccessReview";
	const char *url_ns = rq->route.ns;
	json_t *meta = json_object_get(body, "metadata");
	if (local) { /* kube's create handler: EnsureObjectNamespaceMatchesRequestNamespace */
		const char *ons = str(meta, "namespace");
		if (*ons && *url_ns && strcmp(ons, url_ns)) {
			mu__resp_status(rs, 400, "BadRequest",
					"the namespace of the provided object does not match the namespace sent on the "
					"request");
			return;
		}
		if (!*ons && *url_ns) {
			if (!json_is_object(meta))
				json_object_set_new(body, "metadata", meta = json_object());
			json_object_set_new(meta, "namespace", json_string(url_ns));
		}
	}
	mu__verr_t e = {0};
	sar_check(body, local, &e);
	if (e.n) {
		mu__resp_invalid(rs, mu__type(s->types, local ? MU__RT_LSARS : MU__RT_SARS), "", &e);
		return;
	}
	if (local && !*url_ns) {
		mu__resp_status(rs, 400, "BadRequest", "namespace is required on this type: ");
		return;
	}
	if (local && strcmp(url_ns, str(json_object_get(body, "metadata"), "namespace"))) {
		mu__resp_status(rs, 400, "BadRequest", "spec.resourceAttributes.namespace must match namespace: %s", url_ns);
		return;
	}
	const json_t *spec = json_object_get(body, "spec");
	const json_t *ra = json_object_get(spec, "resourceAttributes");
	const json_t *na = json_object_get(spec, "nonResourceAttributes");
	mu__sar_attrs_t a;
	if (json_is_object(ra))
		a = (mu__sar_attrs_t){str(ra, "verb"), str(ra, "group"), str(ra, "resource"), str(ra, "subresource"),
				      str(ra, "namespace"), str(ra, "name"), "", true};
	else
		a = (mu__sar_attrs_t){str(na, "verb"), "", "", "", "", "", str(na, "path"), false};
	mu__user_t u;
	spec_user(spec, &u);
	char reason[MU__SAR_MSG];
	bool ok = mu__rbac_decide(s, &u, &a, reason, sizeof reason);
	json_t *st = json_pack("{s:b}", "allowed", ok);
	if (reason[0])
		json_object_set_new(st, "reason", json_string(reason));
	mu__resp_json(rs, 201, answer(kind, "authorization.k8s.io/v1", body, st));
}

/* A TokenReview POSTed as body. */
static void do_token_review(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body)
{
	if (rq->route.ns[0]) {
		mu__resp_status(rs, 400, "BadRequest", "namespace is not allowed on this type: %s", rq->route.ns);
		return;
	}
	const json_t *spec = json_object_get(body, "spec");
	const char *tok = str(spec, "token");
	if (!*tok) {
		mu__resp_status(rs, 400, "BadRequest", "token is required for TokenReview in authentication");
		return;
	}
	json_t *st = json_object();
	if (s->o.token) { /* kube answers the review unchanged without a token authenticator */
		const json_t *want = json_object_get(spec, "audiences");
		json_t *got = json_array();
		mu__user_t u;
		char why[1200];
		bool ok = mu__authn_token(s, tok, json_array_size(want) ? want : NULL, got, &u, why, sizeof why);
		if (ok) {
			json_object_set_new(st, "authenticated", json_true());
			json_object_set_new(st, "user", mu__user_info_json(&u));
			json_object_set_new(st, "audiences", got);
		} else {
			json_decref(got);
			json_object_set_new(st, "user", json_object());
			json_object_set_new(st, "error", json_string(why));
		}
	}
	mu__resp_json(rs, 201, answer("TokenReview", "authentication.k8s.io/v1", body, st));
}

void mu__review_handle(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt)
{
	if (strcmp(rq->method, "POST") || rq->route.name[0]) {
		mu__resp_status(rs, 405, "MethodNotAllowed", "the method %s is not allowed here", rq->method);
		return;
	}
	char err[300] = "";
	json_t *body = mu__content_type(rq->ctype) == MU__CT_PROTOBUF
			       ? mu__proto_decode(rq->body, rq->body_len, err, sizeof err)
			       : mu__json_body(rq->body, rq->body_len, s->o.max_body, err, sizeof err);
	if (!body) {
		mu__resp_status(rs, 400, "BadRequest", "%s", err);
		return;
	}
	if (rt == MU__RT_TOKENREVIEWS)
		do_token_review(s, rq, rs, body);
	else
		do_sar(s, rq, rs, body, rt == MU__RT_LSARS);
	json_decref(body);
}
