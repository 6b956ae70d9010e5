/*
 * rbac.c - who a request comes from and what they may do.
 *
 * Authentication (bearer tokens and client certificates; only when the server has a token, which
 * `muster up` always gives it):
 *   - the server's token (DIR/token): user "admin", group system:masters;
 *   - a line of DIR/tokens.csv, kube-apiserver's static token file format
 *     (token,user,uid,"group1,group2": the user, its uid and groups), read
 *     on each request with an unknown token;
 *   - a service account JWT (satoken.c): a bound token from the
 *     TokenRequest API (POST serviceaccounts/NAME/token, `kubectl create
 *     token NAME`) or a legacy token Secret's; the user is
 *     system:serviceaccount:NS:NAME with groups system:serviceaccounts and
 *     system:serviceaccounts:NS.
 *   - a bootstrap token ID.SECRET held by the Secret
 *     kube-system/bootstrap-token-ID (bootstrap_token): user
 *     system:bootstrap:ID in system:bootstrappers;
 *   - before any token, a client certificate signed by the server's client
 *     CA (x509.c): CommonName the user, each Organization a group.
 * Every authenticated user is also in system:authenticated.
 *
 * Authorization is RBAC as kube-apiserver evaluates it: the rules of the
 * ClusterRoles bound by ClusterRoleBindings, and of the Roles and
 * ClusterRoles bound by RoleBindings in the request's namespace, whose
 * subjects name the user, one of its groups or its service account; a rule
 * matches the verb, API group, resource (or resource/subresource, "*",
 * "*\/sub"), resource name, or non-resource URL (with a trailing "*").
 * system:masters may do everything.  A SelfSubjectRulesReview lists the
 * rules that apply to the caller in a namespace (`kubectl auth can-i
 * --list`).  The bootstrap policy is reconciled at every start, as
 * kube-apiserver's autoupdate (rbacboot.c): cluster-admin,
 * system:discovery, system:public-info-viewer,
 * system:service-account-issuer-discovery and system:basic-user with their
 * bindings, admin, edit and view (aggregated by rbacagg.c) with the
 * system:aggregate-to-* roles, and system:auth-delegator and the kubelet bootstrap roles
 * (system:node-bootstrapper and the nodeclient and selfnodeclient ones)
 * without.  Escalation checks are rbac_escalate.c's, impersonation
 * impersonate.c's.
 *
 * Cost: an admin request costs nothing; any other reads the bindings and
 * roles that apply (their count bounds it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"
#include "apiserver/crd.h"
#include "apiserver/proto.h"

/* --- authentication ----------------------------------------------------- */

static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d = (unsigned)(la ^ lb);
	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned)(a[i] ^ b[i]);
	return d == 0;
}

/* Splits one line of a static token file into u; false if malformed. */
static bool token_line(char *line, const char *bearer, mu__user_t *u)
{
	char *f[4] = {0};
	int n = 0;
	char *p = line;
	while (n < 4 && p) {
		if (*p == '"') {
			f[n++] = ++p;
			p = strchr(p, '"');
			if (!p)
				return false;
			*p++ = '\0';
			p = *p == ',' ? p + 1 : NULL;
		} else {
			f[n++] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = '\0';
		}
	}
	if (n < 3 || !same(f[0], bearer))
		return false;
	snprintf(u->name, sizeof u->name, "%s", f[1]);
	snprintf(u->uid, sizeof u->uid, "%s", f[2]); /* kube's tokenfile: the third column */
	for (char *g = f[3] ? strtok(f[3], ",") : NULL; g; g = strtok(NULL, ","))
		mu__user_add_group(u, g);
	return true;
}

/* Looks bearer up in DIR/tokens.csv. */
static bool static_token(const mu_apiserver_t *s, const char *bearer, mu__user_t *u)
{
	if (!s->o.data_dir)
		return false;
	char path[4096], line[2048];
	snprintf(path, sizeof path, "%s/tokens.csv", s->o.data_dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool found = false;
	for (int i = 0; !found && i < 10000 && fgets(line, sizeof line, f); i++) {
		line[strcspn(line, "\r\n")] = '\0';
		found = line[0] && line[0] != '#' && token_line(line, bearer, u);
	}
	fclose(f);
	return found;
}

/* Secret data field k of j decoded into out (NUL-terminated); false when
 * missing or too long. */
static bool secret_field(const json_t *j, const char *k, char *out, size_t cap)
{
	const char *v = json_string_value(json_object_get(mu__jget(j, "data"), k));
	size_t n;
	if (!v || mu__b64dec(v, out, cap - 1, &n) != MU_OK)
		return false;
	out[n] = '\0';
	return true;
}

/* Whether s has n characters of [a-z0-9]. */
static bool lower_alnum(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* A bootstrap token "ID.SECRET" ([a-z0-9]{6}.[a-z0-9]{16}), as
 * kube-apiserver's bootstrap token authenticator
 * (plugin/pkg/auth/authenticator/token/bootstrap): the Secret
 * kube-system/bootstrap-token-ID of type bootstrap.kubernetes.io/token,
 * not being deleted, holding that token-id and token-secret,
 * usage-bootstrap-authentication "true" and no past expiration; the user is
 * system:bootstrap:ID in system:bootstrappers and the auth-extra-groups
 * (each system:bootstrappers:..., else the token names nobody). */
static bool bootstrap_token(mu_apiserver_t *s, const char *bearer, mu__user_t *u)
{
	if (strlen(bearer) != 23 || bearer[6] != '.' || !lower_alnum(bearer, 6) || !lower_alnum(bearer + 7, 16))
		return false;
	char name[32], v[1024];
	snprintf(name, sizeof name, "bootstrap-token-%.6s", bearer);
	mu__obj_t *o = mu__store_get(s->store, MU__RT_SECRETS, "kube-system", name);
	json_t *j = o && !o->deleting ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	bool ok = j && !strcmp(mu__jstr(j, "type") ? mu__jstr(j, "type") : "", "bootstrap.kubernetes.io/token") &&
		  secret_field(j, "token-secret", v, sizeof v) && same(v, bearer + 7) &&
		  secret_field(j, "token-id", v, sizeof v) && !strncmp(v, bearer, 6) && !v[6] &&
		  secret_field(j, "usage-bootstrap-authentication", v, sizeof v) && !strcmp(v, "true");
	if (ok && secret_field(j, "expiration", v, sizeof v)) {
		int64_t exp = mu__parse_rfc3339(v);
		ok = exp >= 0 && exp > mu__now_s(); /* an unparsable time is expired, as kube's */
	}
	mu__user_t t;
	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "system:bootstrap:%.6s", bearer);
	mu__user_add_group(&t, "system:bootstrappers");
	if (ok && secret_field(j, "auth-extra-groups", v, sizeof v)) {
		for (char *g = strtok(v, ","); g && ok; g = strtok(NULL, ",")) {
			while (*g == ' ')
				g++;
			size_t l = strlen(g);
			while (l && g[l - 1] == ' ')
				g[--l] = '\0';
			ok = !strncmp(g, "system:bootstrappers:", 21) && l > 21 && l <= 21 + 256 &&
			     strspn(g + 21, "abcdefghijklmnopqrstuvwxyz0123456789:-") == l - 21 &&
			     g[l - 1] != ':' && g[l - 1] != '-';
			mu__user_add_group(&t, g);
		}
	}
	json_decref(j);
	if (ok)
		*u = t;
	return ok;
}

static bool has(const json_t *arr, const char *v, bool star);

bool mu__authn_token(mu_apiserver_t *s, const char *b, const json_t *want, json_t *got, mu__user_t *u, char *why,
		     size_t wlen)
{
	memset(u, 0, sizeof *u);
	if (wlen)
		snprintf(why, wlen, "invalid bearer token");
	if (!s->o.token)
		return false;
	if (mu__sa_authn_aud(s, b, want, got, u, why, wlen))
		goto authenticated;
	memset(u, 0, sizeof *u);
	/* the other token authenticators are audience-agnostic: kube gives
	 * them the API audiences (the issuer) */
	bool api = !want || has(want, MU__SA_ISSUER, false);
	if (api && same(b, s->o.token)) {
		snprintf(u->name, sizeof u->name, "admin");
		mu__user_add_group(u, "system:masters");
	} else if (!api || (!bootstrap_token(s, b, u) && !static_token(s, b, u))) {
		memset(u, 0, sizeof *u);
		return false;
	}
	if (got)
		json_array_append_new(got, json_string(MU__SA_ISSUER));
authenticated:
	mu__user_add_group(u, "system:authenticated");
	for (int i = 0; i < u->ngroups; i++)
		u->admin = u->admin || !strcmp(u->groups[i], "system:masters");
	return true;
}

bool mu__authn(mu_apiserver_t *s, const char *authz_header, const mu__user_t *cert, mu__user_t *u)
{
	memset(u, 0, sizeof *u);
	const char *b = authz_header && !strncmp(authz_header, "Bearer ", 7) ? authz_header + 7 : NULL;
	if (cert && cert->name[0]) {
		*u = *cert; /* x509 first, as kube-apiserver's union of authenticators */
	} else if (!s->o.token) {
		snprintf(u->name, sizeof u->name, "admin"); /* no authentication configured */
		u->admin = true;
		return true;
	} else if (!b) {
		return false;
	} else if (same(b, s->o.token)) {
		snprintf(u->name, sizeof u->name, "admin");
		mu__user_add_group(u, "system:masters");
	} else if (!mu__sa_authn(s, b, u) && !bootstrap_token(s, b, u) && !static_token(s, b, u)) {
		return false;
	}
	mu__user_add_group(u, "system:authenticated");
	for (int i = 0; i < u->ngroups; i++)
		u->admin = u->admin || !strcmp(u->groups[i], "system:masters");
	return true;
}

/* --- authorization ------------------------------------------------------ */

/* What a request asks to do. */
typedef struct attrs {
	const char *verb, *group, *resource, *sub, *ns, *name, *path;
	bool resource_req;
} attrs_t;

static bool has(const json_t *arr, const char *v, bool star)
{
	size_t i;
	json_t *x;
	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(x);
		if (s && (!strcmp(s, v) || (star && !strcmp(s, "*"))))
			return true;
	}
	return false;
}

static bool rule_allows(const json_t *r, const attrs_t *a)
{
	if (!has(json_object_get(r, "verbs"), a->verb, true))
		return false;
	if (!a->resource_req) {
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(r, "nonResourceURLs"), i, x) {
			const char *p = json_string_value(x);
			size_t l = p ? strlen(p) : 0;
			if (p && (!strcmp(p, a->path) || (l && p[l - 1] == '*' && !strncmp(p, a->path, l - 1))))
				return true;
		}
		return false;
	}
	if (!has(json_object_get(r, "apiGroups"), a->group, true))
		return false;
	char full[200], star[100];
	snprintf(full, sizeof full, "%s%s%s", a->resource, *a->sub ? "/" : "", a->sub);
	snprintf(star, sizeof star, "*/%s", a->sub);
	const json_t *res = json_object_get(r, "resources");
	if (!has(res, full, false) && !has(res, "*", false) && !(*a->sub && has(res, star, false)))
		return false;
	const json_t *names = json_object_get(r, "resourceNames");
	return !json_array_size(names) || (*a->name && has(names, a->name, false));
}

static bool subject_is(const json_t *subj, const mu__user_t *u, const char *binding_ns)
{
	const char *k = json_string_value(json_object_get(subj, "kind"));
	const char *n = json_string_value(json_object_get(subj, "name"));
	if (!k || !n)
		return false;
	if (!strcmp(k, "User"))
		return !strcmp(n, u->name);
	if (!strcmp(k, "Group")) {
		for (int i = 0; i < u->ngroups; i++)
			if (!strcmp(u->groups[i], n))
				return true;
		return false;
	}
	if (!strcmp(k, "ServiceAccount")) {
		const char *ns = json_string_value(json_object_get(subj, "namespace"));
		char full[400];
		snprintf(full, sizeof full, "system:serviceaccount:%s:%s", ns && *ns ? ns : binding_ns, n);
		return !strcmp(full, u->name);
	}
	return false;
}

/* Whether the role a binding refers to (a ClusterRole, or a Role in ns)
 * has a rule that allows a. */
static bool role_allows(mu_apiserver_t *s, const json_t *ref, const char *ns, const attrs_t *a)
{
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	if (!kind || !name)
		return false;
	bool cluster = !strcmp(kind, "ClusterRole");
	mu__obj_t *o = mu__store_get(s->store, cluster ? MU__RT_CLUSTERROLES : MU__RT_ROLES, cluster ? NULL : ns, name);
	json_t *r = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	bool ok = false;
	size_t i;
	json_t *rule;
	json_array_foreach(json_object_get(r, "rules"), i, rule)
		ok = ok || rule_allows(rule, a);
	json_decref(r);
	return ok;
}

/* Whether one of binding b's subjects is user u (ns: the binding's
 * namespace, "" for a ClusterRoleBinding).  O(subjects). */
bool mu__rbac_names(const json_t *b, const mu__user_t *u, const char *ns)
{
	size_t j;
	json_t *subj;
	json_array_foreach(json_object_get(b, "subjects"), j, subj)
		if (subject_is(subj, u, ns))
			return true;
	return false;
}

typedef struct {
	mu_apiserver_t *s;
	const mu__user_t *u;
	const attrs_t *a;
} grant_t;

/* 1 when a binding of the page names the user and its role grants the
 * request (which stops the walk), else 0. */
static int grant_page(void *ctx, mu__page_t *pg)
{
	grant_t *g = ctx;
	for (size_t i = 0; i < pg->n; i++) {
		json_t *b = mu__obj_parse(pg->objs[i]);
		bool me = mu__rbac_names(b, g->u, pg->objs[i]->ns);
		bool ok = me && role_allows(g->s, json_object_get(b, "roleRef"), pg->objs[i]->ns, g->a);
		json_decref(b);
		if (ok)
			return 1;
	}
	return 0;
}

/* Whether a binding of type rt (in ns, NULL for cluster bindings) grants a.
 * Reads every binding of rt in ns at most once. */
static bool bindings_allow(mu_apiserver_t *s, int rt, const char *ns, const mu__user_t *u, const attrs_t *a)
{
	grant_t g = {s, u, a};
	return mu__store_each(s->store, rt, ns, 500, NULL, NULL, grant_page, &g) == 1;
}

static bool allowed(mu_apiserver_t *s, const mu__user_t *u, const attrs_t *a)
{
	if (u->admin)
		return true;
	if (bindings_allow(s, MU__RT_CLUSTERROLEBINDINGS, NULL, u, a))
		return true;
	return a->resource_req && *a->ns && bindings_allow(s, MU__RT_ROLEBINDINGS, a->ns, u, a);
}

const char *mu__req_verb(const mu__req_t *rq)
{
	const char *m = rq->method;
	bool named = rq->route.name[0] != '\0';
	if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
		return rq->q.watch && (!named || rq->route.watch_prefix) ? "watch" : named ? "get" : "list";
	if (!strcmp(m, "POST"))
		return "create";
	if (!strcmp(m, "PUT"))
		return "update";
	if (!strcmp(m, "PATCH"))
		return "patch";
	if (!strcmp(m, "DELETE"))
		return named ? "delete" : "deletecollection";
	return "";
}

/* Kube-apiserver's message for a denied request. */
static void forbidden(const mu__user_t *u, const attrs_t *a, char *msg, size_t len)
{
	if (!a->resource_req) {
		snprintf(msg, len, "forbidden: User \"%s\" cannot %s path \"%s\"", u->name, a->verb, a->path);
		return;
	}
	char res[200], where[200];
	snprintf(res, sizeof res, "%s%s%s", a->resource, *a->sub ? "/" : "", a->sub);
	if (*a->ns)
		snprintf(where, sizeof where, "in the namespace \"%s\"", a->ns);
	else
		snprintf(where, sizeof where, "at the cluster scope");
	char head[400], qual[200]; /* the group-qualified resource, as schema.GroupResource prints it */
	snprintf(qual, sizeof qual, "%s%s%s", a->resource, *a->group ? "." : "", a->group);
	if (*a->name)
		snprintf(head, sizeof head, "%s \"%s\" is forbidden", qual, a->name);
	else
		snprintf(head, sizeof head, "%s is forbidden", qual);
	snprintf(msg, len, "%s: User \"%s\" cannot %s resource \"%s\" in API group \"%s\" %s", head, u->name,
		 a->verb, res, a->group, where);
}

bool mu__authz(mu_apiserver_t *s, const mu__user_t *u, const mu__req_t *rq, char *msg, size_t len)
{
	if (u->admin)
		return true;
	const mu__route_t *r = &rq->route;
	attrs_t a = {mu__req_verb(rq), r->core ? "" : r->group, r->plural, r->sub, r->ns, r->name,
		     rq->path ? rq->path : "/", r->kind == MU__R_RESOURCE};
	if (!a.resource_req)
		a.verb = !strcmp(rq->method, "HEAD") ? "get" : !strcmp(rq->method, "GET") ? "get" : "post";
	if (a.resource_req && !strcmp(a.verb, "create") && *a.name && !*a.sub)
		a.name = ""; /* a create names no existing object */
	if (allowed(s, u, &a))
		return true;
	forbidden(u, &a, msg, len);
	return false;
}

bool mu__rbac_allowed(mu_apiserver_t *s, const mu__user_t *u, const char *verb, const char *group,
		      const char *resource, const char *sub, const char *ns, const char *name)
{
	if (u->admin)
		return true;
	attrs_t a = {verb, group, resource, sub, ns, name, "/", true};
	return allowed(s, u, &a);
}

void mu__rbac_forbidden(const mu__user_t *u, const char *verb, const char *group, const char *resource,
			const char *sub, const char *ns, const char *name, char *msg, size_t len)
{
	attrs_t a = {verb, group, resource, sub, ns, name, "/", true};
	forbidden(u, &a, msg, len);
}

bool mu__authz_attrs(mu_apiserver_t *s, const mu__user_t *u, const char *verb, const char *group,
		     const char *resource, const char *name)
{
	if (u->admin)
		return true;
	attrs_t a = {verb, group, resource, "", "", name, "/", true};
	return allowed(s, u, &a);
}

bool mu__authz_sub(mu_apiserver_t *s, const mu__user_t *u, const char *verb, const char *group,
		   const char *resource, const char *sub)
{
	if (u->admin)
		return true;
	attrs_t a = {verb, group, resource, sub, "", "", "/", true};
	return allowed(s, u, &a);
}

/* --- the authorizer's decision with kube's reason (SubjectAccessReview) -- */

/* The first subject of binding b that names u (kube's appliesTo), or NULL.
 * O(subjects). */
static const json_t *first_subject(const json_t *b, const mu__user_t *u, const char *ns)
{
	size_t j;
	json_t *subj;
	json_array_foreach(json_object_get(b, "subjects"), j, subj)
		if (subject_is(subj, u, ns))
			return subj;
	return NULL;
}

typedef struct decide {
	mu_apiserver_t *s;
	const mu__user_t *u;
	const attrs_t *a;
	char *reason; /* the allowing binding, as kube's describers print it */
	size_t len;
	char err[1024]; /* the missing roles of bindings that name u */
	int nerr;
} decide_t;

/* kube's RBAC visitor over one page of bindings (ClusterRoleBindings when
 * the page's objects have no namespace): 1 when a binding naming the user
 * grants the request (reason set), else 0; a binding whose role is missing
 * adds kube's not-found error.  One role read per binding that names u. */
static int decide_page(void *ctx, mu__page_t *pg)
{
	decide_t *d = ctx;
	for (size_t i = 0; i < pg->n; i++) {
		const char *bns = pg->objs[i]->ns;
		json_t *b = mu__obj_parse(pg->objs[i]);
		const json_t *subj = b ? first_subject(b, d->u, bns) : NULL;
		if (!subj) {
			json_decref(b);
			continue;
		}
		const json_t *ref = json_object_get(b, "roleRef");
		const char *kind = json_string_value(json_object_get(ref, "kind"));
		const char *name = json_string_value(json_object_get(ref, "name"));
		bool cluster = kind && !strcmp(kind, "ClusterRole");
		mu__obj_t *o = name ? mu__store_get(d->s->store, cluster ? MU__RT_CLUSTERROLES : MU__RT_ROLES,
						    cluster ? NULL : bns, name)
				    : NULL;
		json_t *role = o ? mu__obj_parse(o) : NULL;
		mu__obj_unref(o);
		bool ok = false;
		if (!role) {
			size_t l = strlen(d->err);
			snprintf(d->err + l, sizeof d->err - l, "%s%s.rbac.authorization.k8s.io \"%s\" not found",
				 d->nerr++ ? ", " : "", cluster ? "clusterrole" : "role", name ? name : "");
		} else {
			size_t k;
			json_t *rule;
			json_array_foreach(json_object_get(role, "rules"), k, rule)
				ok = ok || rule_allows(rule, d->a);
		}
		json_decref(role);
		if (ok) { /* kube's clusterRoleBindingDescriber / roleBindingDescriber */
			const char *sk = json_string_value(json_object_get(subj, "kind"));
			const char *sn = json_string_value(json_object_get(subj, "name"));
			const char *sns = json_string_value(json_object_get(subj, "namespace"));
			char who[600], bname[400];
			if (sk && !strcmp(sk, "ServiceAccount"))
				snprintf(who, sizeof who, "%s \"%s/%s\"", sk, sn ? sn : "", sns && *sns ? sns : bns);
			else
				snprintf(who, sizeof who, "%s \"%s\"", sk ? sk : "", sn ? sn : "");
			snprintf(bname, sizeof bname, "%s%s%s", pg->objs[i]->name, *bns ? "/" : "", bns);
			snprintf(d->reason, d->len, "RBAC: allowed by %s \"%s\" of %s \"%s\" to %s",
				 *bns ? "RoleBinding" : "ClusterRoleBinding", bname, kind ? kind : "", name, who);
		}
		json_decref(b);
		if (ok)
			return 1;
	}
	return 0;
}

bool mu__rbac_decide(mu_apiserver_t *s, const mu__user_t *u, const mu__sar_attrs_t *in, char *reason, size_t len)
{
	reason[0] = '\0';
	if (u->admin) /* kube's privileged group authorizer: allowed, no reason */
		return true;
	attrs_t a = {in->verb, in->group, in->resource, in->sub, in->ns, in->name, in->path, in->resource_req};
	decide_t d = {.s = s, .u = u, .a = &a, .reason = reason, .len = len};
	if (mu__store_each(s->store, MU__RT_CLUSTERROLEBINDINGS, NULL, 500, NULL, NULL, decide_page, &d) == 1)
		return true;
	if (*a.ns && mu__store_each(s->store, MU__RT_ROLEBINDINGS, a.ns, 500, NULL, NULL, decide_page, &d) == 1)
		return true;
	if (d.nerr) /* kube: "RBAC: " and the errors' aggregate */
		snprintf(reason, len, d.nerr > 1 ? "RBAC: [%s]" : "RBAC: %s", d.err);
	return false;
}

/* --- SelfSubjectAccessReview, TokenRequest ------------------------------ */

void mu__do_ssar(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body)
{
	const json_t *ra = mu__jget(body, "spec.resourceAttributes");
	const json_t *na = mu__jget(body, "spec.nonResourceAttributes");
	if (!json_is_object(ra) == !json_is_object(na)) {
		mu__resp_status(rs, 422, "Invalid", "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
				"spec: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be "
				"specified");
		return;
	}
	const char *v = json_string_value(json_object_get(ra ? ra : na, "verb"));
	attrs_t a = {v ? v : "", "", "", "", "", "", "/", ra != NULL};
	if (ra) {
		const char *f[] = {"group", "resource", "subresource", "namespace", "name"};
		const char **dst[] = {&a.group, &a.resource, &a.sub, &a.ns, &a.name};
		for (int i = 0; i < 5; i++) {
			const char *x = json_string_value(json_object_get(ra, f[i]));
			*dst[i] = x ? x : "";
		}
	} else {
		const char *p = json_string_value(json_object_get(na, "path"));
		a.path = p ? p : "/";
	}
	mu__sar_attrs_t in = {a.verb, a.group, a.resource, a.sub, a.ns, a.name, a.path, a.resource_req};
	char reason[1200];
	bool ok = mu__rbac_decide(s, rq->user, &in, reason, sizeof reason);
	json_t *out = json_deep_copy(body);
	json_t *st = json_pack("{s:b}", "allowed", ok);
	if (reason[0])
		json_object_set_new(st, "reason", json_string(reason));
	json_object_set_new(out, "status", st);
	mu__resp_json(rs, 201, out);
}

/* --- SelfSubjectRulesReview (`kubectl auth can-i --list`) -------------- */

/* What the review collects: kube's RBAC RulesFor, in its order (the
 * ClusterRoleBindings', then the namespace's RoleBindings'), each rule as
 * a ResourceRule or a NonResourceRule; a role that a binding names but
 * that does not exist makes the answer incomplete, with kube's message. */
typedef struct rules {
	mu_apiserver_t *s;
	const mu__user_t *u;
	json_t *res, *nonres;
	char err[1024];
	int nerr;
} rules_t;

static json_t *copy_strings(const json_t *a)
{
	return json_is_array(a) ? json_deep_copy(a) : json_array();
}

/* Appends each rule of role ref (a ClusterRole, or a Role in ns). */
static void role_rules(rules_t *r, const json_t *ref, const char *ns)
{
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	if (!kind || !name)
		return;
	bool cluster = !strcmp(kind, "ClusterRole");
	mu__obj_t *o = mu__store_get(r->s->store, cluster ? MU__RT_CLUSTERROLES : MU__RT_ROLES, cluster ? NULL : ns,
				     name);
	json_t *role = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	if (!role) {
		size_t l = strlen(r->err);
		snprintf(r->err + l, sizeof r->err - l, "%s%s.rbac.authorization.k8s.io \"%s\" not found",
			 r->nerr++ ? ", " : "", cluster ? "clusterrole" : "role", name);
		return;
	}
	size_t i;
	json_t *rule;
	json_array_foreach(json_object_get(role, "rules"), i, rule) {
		const json_t *urls = json_object_get(rule, "nonResourceURLs");
		json_t *x = json_pack("{s:o}", "verbs", copy_strings(json_object_get(rule, "verbs")));
		if (json_array_size(urls)) {
			json_object_set_new(x, "nonResourceURLs", json_deep_copy(urls));
			json_array_append_new(r->nonres, x);
			continue;
		}
		static const char *const lists[] = {"apiGroups", "resources", "resourceNames"};
		for (int k = 0; k < 3; k++) /* omitempty */
			if (json_array_size(json_object_get(rule, lists[k])))
				json_object_set_new(x, lists[k], json_deep_copy(json_object_get(rule, lists[k])));
		json_array_append_new(r->res, x);
	}
	json_decref(role);
}

static int rules_page(void *ctx, mu__page_t *pg)
{
	rules_t *r = ctx;
	for (size_t i = 0; i < pg->n; i++) {
		json_t *b = mu__obj_parse(pg->objs[i]);
		bool me = mu__rbac_names(b, r->u, pg->objs[i]->ns);
		if (me)
			role_rules(r, json_object_get(b, "roleRef"), pg->objs[i]->ns);
		json_decref(b);
	}
	return 0;
}

/* As kube's SelfSubjectRulesReview REST (pkg/registry/authorization/
 * selfsubjectrulesreview): spec.namespace is required (400 "no namespace
 * on request"); the answer is 201 with the body and its status.  Reads
 * every ClusterRoleBinding and the namespace's RoleBindings once, and each
 * role they name. */
void mu__do_ssrr(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body)
{
	const char *ns = mu__jstr(body, "spec.namespace");
	if (!ns || !*ns) {
		mu__resp_status(rs, 400, "BadRequest", "no namespace on request");
		return;
	}
	rules_t r = {.s = s, .u = rq->user, .res = json_array(), .nonres = json_array()};
	(void)mu__store_each(s->store, MU__RT_CLUSTERROLEBINDINGS, NULL, 500, NULL, NULL, rules_page, &r);
	(void)mu__store_each(s->store, MU__RT_ROLEBINDINGS, ns, 500, NULL, NULL, rules_page, &r);
	json_t *out = json_deep_copy(body);
	json_t *st = json_pack("{s:o, s:o, s:b}", "resourceRules", r.res, "nonResourceRules", r.nonres, "incomplete",
			       r.nerr > 0);
	if (r.nerr) {
		char msg[1100];
		snprintf(msg, sizeof msg, r.nerr > 1 ? "[%s]" : "%s", r.err); /* utilerrors.NewAggregate */
		json_object_set_new(st, "evaluationError", json_string(msg));
	}
	json_object_set_new(out, "status", st);
	if (!json_object_get(out, "metadata"))
		json_object_set_new(out, "metadata", json_object());
	mu__resp_json(rs, 201, out);
}

bool mu__rbac_route(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs)
{
	const mu__route_t *r = &rq->route;
	bool ssar = r->kind == MU__R_RESOURCE && !strcmp(r->group, "authorization.k8s.io") &&
		    !strcmp(r->plural, "selfsubjectaccessreviews");
	bool token = r->kind == MU__R_RESOURCE && r->core && !strcmp(r->plural, "serviceaccounts") &&
		     !strcmp(r->sub, "token") && r->name[0];
	bool ssr = r->kind == MU__R_RESOURCE && !strcmp(r->group, "authentication.k8s.io") &&
		   !strcmp(r->plural, "selfsubjectreviews");
	bool ssrr = r->kind == MU__R_RESOURCE && !strcmp(r->group, "authorization.k8s.io") &&
		    !strcmp(r->plural, "selfsubjectrulesreviews");
	bool oidc = r->kind == MU__R_UNKNOWN && rq->path &&
		    (!strcmp(rq->path, "/.well-known/openid-configuration") || !strcmp(rq->path, "/openid/v1/jwks"));
	if (oidc) { /* ServiceAccountIssuerDiscovery (satoken.c) */
		if (strcmp(rq->method, "GET") && strcmp(rq->method, "HEAD")) {
			mu__resp_status(rs, 405, "MethodNotAllowed", "the method %s is not allowed here", rq->method);
			return true;
		}
		bool jwks = rq->path[1] == 'o';
		json_t *doc = jwks ? mu__sakey_jwks(s->sakey) : mu__sa_openid_config(s->sakey);
		mu__resp_json(rs, 200, doc);
		rs->ctype = jwks ? "application/jwk-set+json" : "application/json";
		return true;
	}
	if (!ssar && !token && !ssr && !ssrr)
		return false;
	if (strcmp(rq->method, "POST") || ((ssar || ssr || ssrr) && (r->name[0] || r->ns[0]))) {
		mu__resp_status(rs, 405, "MethodNotAllowed", "the method %s is not allowed here", rq->method);
		return true;
	}
	if (ssr) { /* SelfSubjectReview: who am I (`kubectl auth whoami`); its body holds nothing */
		mu__resp_json(rs, 201, json_pack("{s:s, s:s, s:{}, s:{s:o}}", "kind", "SelfSubjectReview",
						 "apiVersion", "authentication.k8s.io/v1", "metadata", "status",
						 "userInfo", mu__user_info_json(rq->user)));
		return true;
	}
	char err[300] = "";
	bool proto = mu__content_type(rq->ctype) == MU__CT_PROTOBUF;
	json_t *body;
	if (proto && token)
		body = mu__token_request_proto(rq->body, rq->body_len, err, sizeof err);
	else if (proto)
		body = mu__proto_decode(rq->body, rq->body_len, err, sizeof err);
	else
		body = mu__json_body(rq->body, rq->body_len, s->o.max_body, err, sizeof err);
	if (!body) {
		mu__resp_status(rs, 400, "BadRequest", "%s", err);
		return true;
	}
	if (ssar)
		mu__do_ssar(s, rq, rs, body);
	else if (ssrr)
		mu__do_ssrr(s, rq, rs, body);
	else
		mu__do_token_request(s, rq, rs, body);
	json_decref(body);
	return true;
}
