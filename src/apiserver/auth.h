/*
 * auth.h - what the apiserver's authentication and authorization files
 * share beyond apiserver_int.h: RBAC's escalation checks (rbac_escalate.c),
 * impersonation (impersonate.c), service account JWTs (satoken.c) and the
 * bootstrap signer (bootsign.c), and the pieces of rbac.c they reuse.
 */
#ifndef MUSTER_APISERVER_AUTH_H
#define MUSTER_APISERVER_AUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apiserver/apiserver_int.h"

/* --- rbac.c ---------------------------------------------------------- */

/* Adds group g to u (cut to the field's size; nothing past
 * MU__USER_GROUPS groups).  O(|g|). */
void mu__user_add_group(mu__user_t *u, const char *g);
/* Adds value v to u's extra key k (a key may have several values).
 * false, and nothing added, when u's extra has no room for it.
 * O(|k| + |v|). */
bool mu__user_add_extra(mu__user_t *u, const char *k, const char *v);
/* u's extra as kube's UserInfo.extra: {"key": ["v1", ...], ...}, keys in
 * the order first seen; a new object.  O(extra). */
json_t *mu__user_extra_json(const mu__user_t *u);
/* u as an authentication.k8s.io/v1 UserInfo (username, uid, groups,
 * extra; the empty ones left out, as kube's omitempty).  New object. */
json_t *mu__user_info_json(const mu__user_t *u);

/* Whether one of binding b's subjects names u (ns: the binding's
 * namespace, "" for a ClusterRoleBinding).  O(subjects). */
bool mu__rbac_names(const json_t *b, const mu__user_t *u, const char *ns);
/* Whether RBAC lets u make verb on group/resource[/sub] named name in ns
 * ("" for cluster scope).  Reads the bindings that apply once. */
bool mu__rbac_allowed(mu_apiserver_t *s, const mu__user_t *u, const char *verb, const char *group,
		      const char *resource, const char *sub, const char *ns, const char *name);
/* The token authenticators of kube-apiserver's chain, as a TokenReview
 * runs them on bearer token b: the server's token, a service account JWT
 * for one of want (NULL: the API audiences), a bootstrap token, a static
 * token (the last three audience-agnostic, for the API audiences); the
 * audiences the token is for are appended to got (may be NULL).  u gets
 * the user and system:authenticated; false when none accepts it or the
 * server has no authentication, with kube's error in why (wlen > 0):
 * a service account token's audience message, else "invalid bearer
 * token" (kube's bearer token authenticator's default).  Reads the Secret, ServiceAccount or
 * tokens.csv that token names. */
bool mu__authn_token(mu_apiserver_t *s, const char *b, const json_t *want, json_t *got, mu__user_t *u, char *why,
		     size_t wlen);
/* What a SubjectAccessReview asks (kube's authorizer.Attributes): a
 * resource request (verb, group, resource, sub, ns, name; "" when not
 * given) or a non-resource one (verb, path).  Borrowed strings. */
typedef struct mu__sar_attrs {
	const char *verb, *group, *resource, *sub, *ns, *name, *path;
	bool resource_req;
} mu__sar_attrs_t;
/* kube's authorizer chain as muster up runs it (the privileged group
 * system:masters, then RBAC) for u: true when allowed, with reason
 * "RBAC: allowed by ClusterRoleBinding \"B\" of ClusterRole \"R\" to
 * User \"U\"" (or RoleBinding \"B/NS\"; "" for system:masters); false
 * with reason "" or "RBAC: " and the missing roles of bindings naming u,
 * as kube's RBAC authorizer words them.  Reads the bindings that apply
 * and their roles once. */
bool mu__rbac_decide(mu_apiserver_t *s, const mu__user_t *u, const mu__sar_attrs_t *a, char *reason, size_t len);
/* kube's verb of resource request rq (get, list, watch, create, update,
 * patch, delete, deletecollection; "" for another method).  O(1). */
const char *mu__req_verb(const mu__req_t *rq);
/* kube-apiserver's 403 text for that request, into msg. */
void mu__rbac_forbidden(const mu__user_t *u, const char *verb, const char *group, const char *resource,
			const char *sub, const char *ns, const char *name, char *msg, size_t len);

/* --- sar.c: SubjectAccessReview, LocalSubjectAccessReview, TokenReview -- */

/* A request to one of the reviews (rt: MU__RT_SARS, MU__RT_LSARS or
 * MU__RT_TOKENREVIEWS), from api.c's mu__handle once RBAC let it through:
 * a POST of a collection is answered (201 with the status, 422 with
 * kube's causes, 400 as kube's), anything else is 405.  Reads the body
 * once and what mu__rbac_decide or mu__authn_token read.  (Here rather
 * than in mu__rbac_route so that rbac.c and sar.c do not call each
 * other: api.c -> sar.c -> rbac.c.) */
void mu__review_handle(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt);

/* --- rbac_escalate.c: RBAC's escalation prevention ------------------- */

/* kube's validation.Covers: the rules of servant (an array of PolicyRules)
 * that no rule of owner covers, broken down to one verb, group, resource
 * and name (or URL) each; a new array, empty when owner covers all.
 * O(|servant's breakdown| x |owner|). */
json_t *mu__rbac_uncovered(const json_t *owner, const json_t *servant);
/* The text kube's ConfirmNoEscalation gives for the missing rules: kube's
 * CompactRules (simple rules that differ only in verbs merged), each as
 * rbacv1helpers.CompactString, sorted, one a line. */
void mu__rbac_missing_text(const json_t *missing, char *out, size_t cap);
/* Every rule that applies to u in ns ("" for cluster scope), as kube's
 * RulesFor: ClusterRoleBindings' then the namespace's RoleBindings'.  A
 * new array; *errs counts the roles a binding names that are missing. */
json_t *mu__rbac_rules_for(mu_apiserver_t *s, const mu__user_t *u, const char *ns, int *errs);
/* The escalation check of kube's RBAC REST storage for a write of a Role,
 * ClusterRole, RoleBinding or ClusterRoleBinding (rt) by rq's user: nw the
 * new object, old the stored one (NULL on create).  0 when allowed; else
 * the HTTP code (403, or 404 for a binding of a role that does not exist)
 * and kube's message in msg (the part after `... is forbidden: `, or the
 * whole text for 404). */
int mu__rbac_escalation(mu_apiserver_t *s, const mu__req_t *rq, int rt, const json_t *old, const json_t *nw,
			char *msg, size_t len);

/* --- impersonate.c: kube's WithImpersonation ------------------------- */

/* One request header (name, value), as the listener gives them. */
typedef struct mu__hdr {
	const char *name, *value;
} mu__hdr_t;
/* Applies the Impersonate-* headers among h[0..n) to u: each asked-for
 * user, group, uid and extra must be allowed to u by the `impersonate`
 * verb, and u then becomes the impersonated user.  0 when there are none
 * or all are allowed; else the HTTP code (403, or 500 as kube's for a
 * malformed set) with the message in msg.  Bounded by n RBAC checks. */
int mu__impersonate(mu_apiserver_t *s, const mu__hdr_t *h, int n, mu__user_t *u, char *msg, size_t len);
/* The same with the headers of a libmicrohttpd connection (at most 32
 * Impersonate-* headers are read). */
struct MHD_Connection;
int mu__impersonate_con(mu_apiserver_t *s, struct MHD_Connection *con, mu__user_t *u, char *msg, size_t len);

/* --- satoken.c: service account tokens as signed JWTs ----------------- */

/* The issuer muster up signs with and accepts ("iss"), and the audience
 * it accepts by default, as kube-apiserver's --service-account-issuer and
 * --api-audiences (which defaults to the issuer). */
#define MU__SA_ISSUER "https://kubernetes.default.svc.cluster.local"
/* kube's WarnOnlyBoundTokenExpirationSeconds (what the kubelet asks for a
 * projected token) and ExpirationExtensionSeconds (the life such a
 * pod-bound token gets, warnafter marking the time asked for). */
#define MU__SA_WARN_ONLY_S 3607
#define MU__SA_EXTENDED_S (365 * 24 * 3600)
#define MU__SA_LEGACY_ISSUER "kubernetes/serviceaccount"
/* base64url without padding (RFC 7515) of n bytes, malloc'd. */
char *mu__b64url(const void *data, size_t n);
/* A signing key (P-256, ES256): opaque; NULL-safe free. */
typedef struct mu__sakey mu__sakey_t;
/* Reads the PEM private key at path, or makes one in memory (path NULL).
 * NULL on failure. */
mu__sakey_t *mu__sakey_load(const char *path);
/* At most this many keys verify tokens. */
#define MU__SA_MAX_KEYS 16
/* Verifies tokens with the keys of the PEM file at path (each PUBLIC
 * KEY, PRIVATE KEY or EC PRIVATE KEY block, P-256 only), as
 * kube-apiserver's repeatable --service-account-key-file: the first call
 * replaces the signing key's own, later ones add.  MU_OK, or an error
 * with the reason in err.  O(file). */
int mu__sakey_verify_with(mu__sakey_t *k, const char *path, char *err, size_t len);
/* How many keys verify tokens. */
int mu__sakey_count(const mu__sakey_t *k);
void mu__sakey_free(mu__sakey_t *k);
/* A compact JWS (ES256) of claims (a JSON object): header.payload.sig,
 * malloc'd; NULL on failure. */
char *mu__jwt_sign(const mu__sakey_t *k, const json_t *claims);
/* Parses and verifies a compact JWS: the header must be ES256 and the
 * signature valid under the verifying key its kid names (or, when none
 * is named or none has that kid, under one of them, tried in order, as
 * kube's authenticator tries its keys).  Returns the claims (new
 * reference) or NULL.  Reads at most 8 KiB of token; at most
 * MU__SA_MAX_KEYS ECDSA checks. */
json_t *mu__jwt_verify(const mu__sakey_t *k, const char *tok);
/* mu__jwt_verify, remembering the last 256 tokens that verified (by a
 * hash of the text; thread-safe): a token seen before costs a hash and a
 * copy of its claims.  Claims owned by the caller; NULL when it does not
 * verify. */
json_t *mu__jwt_verify_cached(mu__sakey_t *k, const char *tok);
/* How many signatures mu__jwt_verify_cached checked (not remembered). */
uint64_t mu__sakey_verifies(mu__sakey_t *k);
/* Checks claims as kube's service account authenticator: issuer, an
 * audience in want (NULL-terminated), nbf and exp around now (with kube's
 * 60 s leeway).  false with the reason in why. */
bool mu__jwt_check_times(const json_t *claims, int64_t now, char *why, size_t len);
/* The JWKS document (/openid/v1/jwks: every verifying key, with its
 * kid) and OpenID configuration
 * (/.well-known/openid-configuration) kube serves; new references. */
json_t *mu__sakey_jwks(const mu__sakey_t *k);
json_t *mu__sa_openid_config(const mu__sakey_t *k);
/* The user a service account JWT names (bound: the ServiceAccount, and
 * the Pod or Secret it is bound to, exist with the uids in the token;
 * legacy: its Secret holds it).  false when it is not one or is invalid. */
bool mu__sa_authn(mu_apiserver_t *s, const char *bearer, mu__user_t *u);
/* The same for a TokenReview's audiences: the token must be for one of
 * want (an array; NULL: the API audiences, the issuer), and the ones it
 * is for are appended to got (may be NULL), as kube's authenticator
 * answers them; a legacy token is for the API audiences.  A verified
 * token for none of want leaves kube's message in why (may be NULL):
 * `token audiences ["a"] is invalid for the target audiences ["b"]`. */
bool mu__sa_authn_aud(mu_apiserver_t *s, const char *bearer, const json_t *want, json_t *got, mu__user_t *u,
		      char *why, size_t wlen);
/* Fills a kubernetes.io/service-account-token Secret being created with
 * a legacy token, ca.crt and namespace, as kube-controller-manager's
 * tokens controller (nothing when its ServiceAccount does not exist). */
void mu__sa_secret_fill(mu_apiserver_t *s, json_t *secret);
/* A TokenRequest body in Kubernetes protobuf (what `kubectl create token`
 * sends): its spec (audiences, expirationSeconds, boundObjectRef) as JSON,
 * a new object; NULL with err when malformed.  O(len). */
json_t *mu__token_request_proto(const void *body, size_t len, char *err, size_t errlen);

/* --- bootsign.c: kube-controller-manager's bootstrapsigner ------------ */

/* The detached JWS (HS256, kid the token id, key "ID.SECRET") of content,
 * as k8s.io/cluster-bootstrap's ComputeDetachedSignature:
 * header..signature, malloc'd. */
char *mu__jws_detached(const char *content, const char *id, const char *secret);
/* Whether a change calls for signing again (a Secret of kube-system, or
 * the kube-public/cluster-info ConfigMap). */
bool mu__bootsign_event(const mu__wev_t *ev);
/* Signs kube-public/cluster-info's kubeconfig with each bootstrap token
 * that has usage-bootstrap-signing and has not expired, as
 * jws-kubeconfig-ID, and removes the signatures of the others.  One list
 * of kube-system's Secrets and at most one write. */
void mu__bootsign_sync(mu_apiserver_t *s);

#endif
