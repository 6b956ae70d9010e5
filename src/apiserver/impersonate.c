/*
 * impersonate.c - user impersonation, as kube-apiserver's WithImpersonation
 * filter (k8s.io/apiserver/pkg/endpoints/filters/impersonation.go): a
 * request with Impersonate-User (`kubectl --as`), Impersonate-Group
 * (`--as-group`, repeated), Impersonate-Uid (`--as-uid`) and
 * Impersonate-Extra-KEY headers is made as that user, once the
 * authenticated requester is allowed the verb `impersonate` on each:
 * resource `users` (or `serviceaccounts` in the namespace, for a user
 * system:serviceaccount:NS:NAME) and `groups` of the core group, `uids`
 * and `userextras/KEY` of authentication.k8s.io, named by the value.  A
 * refused one is 403 with kube's message (`users "jane" is forbidden: User
 * "alice" cannot impersonate resource "users" in API group "" at the
 * cluster scope`); groups, extras or a uid without a user is kube's 500
 * (`requested [...] without impersonating a user`).  The new user has the
 * groups asked for (a service account without any: its two groups) and
 * system:authenticated unless system:authenticated or
 * system:unauthenticated was asked for (system:anonymous gets
 * system:unauthenticated instead), and the uid and extras asked for
 * (each extra key lower-cased, then %-escapes undone, as kube's
 * unescapeExtraKey; a key repeated gives several values): a
 * SelfSubjectReview (`kubectl auth whoami --as-uid U`) and a
 * CertificateSigningRequest's spec.uid and spec.extra show them.  Extras
 * over MU__USER_EXTRA bytes in all are 500 (kube has no such limit).
 *
 * Cost: one RBAC check per header value (at most MAX_HDRS).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"

#define MAX_HDRS 32

/* What an asked-for identity is checked as. */
typedef struct want {
	const char *resource, *group, *sub, *ns, *name;
} want_t;

/* Splits system:serviceaccount:NS:NAME (serviceaccount.SplitUsername). */
static bool split_sa(const char *user, char *ns, size_t nslen, const char **name)
{
	static const char pre[] = "system:serviceaccount:";
	if (strncmp(user, pre, sizeof pre - 1))
		return false;
	const char *rest = user + sizeof pre - 1, *c = strchr(rest, ':');
	if (!c || c == rest || !c[1] || strchr(c + 1, ':') || (size_t)(c - rest) >= nslen)
		return false;
	snprintf(ns, nslen, "%.*s", (int)(c - rest), rest);
	*name = c + 1;
	return true;
}

int mu__impersonate(mu_apiserver_t *s, const mu__hdr_t *h, int n, mu__user_t *u, char *msg, size_t len)
{
	const char *user = NULL;
	int ngroups = 0, nother = 0;
	for (int i = 0; i < n; i++) {
		if (!strcasecmp(h[i].name, "Impersonate-User") && !user)
			user = h[i].value; /* headers.Get: the first */
		else if (!strcasecmp(h[i].name, "Impersonate-Group"))
			ngroups++;
		else if (!strcasecmp(h[i].name, "Impersonate-Uid") || !strncasecmp(h[i].name, "Impersonate-Extra-", 18))
			nother++;
	}
	if (user && !*user)
		user = NULL;
	if (!user && !ngroups && !nother)
		return 0;
	if (!user) {
		snprintf(msg, len, "Internal error occurred: requested %d group(s), uid or extra without impersonating "
				   "a user", ngroups + nother);
		return 500;
	}
	mu__user_t nu;
	memset(&nu, 0, sizeof nu);
	char ns[256], key[128];
	const char *saname = NULL;
	bool sa = split_sa(user, ns, sizeof ns, &saname);
	snprintf(nu.name, sizeof nu.name, "%s", user);
	for (int i = -1; i < n; i++) {
		want_t w = {0};
		if (i < 0) {
			w = sa ? (want_t){"serviceaccounts", "", "", ns, saname} : (want_t){"users", "", "", "", user};
		} else if (!strcasecmp(h[i].name, "Impersonate-Group")) {
			w = (want_t){"groups", "", "", "", h[i].value};
			mu__user_add_group(&nu, h[i].value);
		} else if (!strcasecmp(h[i].name, "Impersonate-Uid")) {
			w = (want_t){"uids", "authentication.k8s.io", "", "", h[i].value};
			if (!nu.uid[0]) /* headers.Get: the first */
				snprintf(nu.uid, sizeof nu.uid, "%s", h[i].value);
		} else if (!strncasecmp(h[i].name, "Impersonate-Extra-", 18)) {
			size_t k = 0; /* the key, lower case, %-escapes undone */
			for (const char *p = h[i].name + 18; *p && k + 1 < sizeof key; p++) {
				unsigned v;
				if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1 && p[1] && p[2]) {
					key[k++] = (char)v;
					p += 2;
				} else {
					key[k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
				}
			}
			key[k] = '\0';
			w = (want_t){"userextras", "authentication.k8s.io", key, "", h[i].value};
			if (!mu__user_add_extra(&nu, key, h[i].value)) {
				snprintf(msg, len, "Internal error occurred: the impersonated extras exceed %d bytes",
					 MU__USER_EXTRA);
				return 500;
			}
		} else {
			continue;
		}
		if (!mu__rbac_allowed(s, u, "impersonate", w.group, w.resource, w.sub, w.ns, w.name)) {
			mu__rbac_forbidden(u, "impersonate", w.group, w.resource, w.sub, w.ns, w.name, msg, len);
			return 403;
		}
	}
	if (sa && !ngroups) {
		mu__user_add_group(&nu, "system:serviceaccounts");
		char g[300];
		snprintf(g, sizeof g, "system:serviceaccounts:%s", ns);
		mu__user_add_group(&nu, g);
	}
	bool anon = !strcmp(nu.name, "system:anonymous"), found = false;
	for (int i = 0; i < nu.ngroups; i++)
		found = found || !strcmp(nu.groups[i], "system:unauthenticated") ||
			(!anon && !strcmp(nu.groups[i], "system:authenticated"));
	if (!found)
		mu__user_add_group(&nu, anon ? "system:unauthenticated" : "system:authenticated");
	for (int i = 0; i < nu.ngroups; i++)
		nu.admin = nu.admin || !strcmp(nu.groups[i], "system:masters");
	*u = nu;
	return 0;
}

typedef struct hdrs {
	mu__hdr_t h[MAX_HDRS];
	int n;
} hdrs_t;

static enum MHD_Result keep_hdr(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	hdrs_t *c = cls;
	if (key && value && !strncasecmp(key, "Impersonate-", 12) && c->n < MAX_HDRS)
		c->h[c->n++] = (mu__hdr_t){key, value};
	return MHD_YES;
}

int mu__impersonate_con(mu_apiserver_t *s, struct MHD_Connection *con, mu__user_t *u, char *msg, size_t len)
{
	hdrs_t c;
	c.n = 0;
	MHD_get_connection_values(con, MHD_HEADER_KIND, keep_hdr, &c);
	return c.n ? mu__impersonate(s, c.h, c.n, u, msg, len) : 0;
}
