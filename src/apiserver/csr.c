/*
 * csr.c - certificates.k8s.io/v1 CertificateSigningRequests, as
 * kube-apiserver stores them and kube-controller-manager's csrsigning
 * controllers sign them.
 *
 * The API side follows kube-apiserver's registry
 * (pkg/registry/certificates/certificates/strategy.go) and validation
 * (pkg/apis/certificates/validation): a create records who asked
 * (spec.username, groups, uid) and drops status; the request must be a
 * PEM "CERTIFICATE REQUEST" whose signature verifies, usages known and
 * unique, the signerName a domain and path, expirationSeconds at least 600;
 * a write to the main resource changes neither spec nor status, /approval
 * only status.conditions, /status all of status but the Approved and
 * Denied conditions.  The CertificateApproval and CertificateSigning
 * admission plugins ask RBAC for `approve` / `sign` on the signer
 * (resource `signers`, named by the signerName, or by its domain and a "/" then "*"), and
 * CertificateSubjectRestriction refuses a kube-apiserver-client request for
 * group system:masters.
 *
 * The signer (mu__csr_sign, run by the controller thread on every change of
 * a request) follows pkg/controller/certificates/signer/signer.go: an
 * approved request that has not failed and has no certificate, for one of
 * kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet or
 * kubelet-serving, is checked against that signer's rules
 * (pkg/apis/certificates/helpers.go); failing them adds the Failed
 * condition (reason SignerValidationFailure), passing them gets a
 * certificate signed with muster up's CA: the request's subject, public key
 * and SANs, the usages asked for, CA:FALSE, valid from 5 minutes ago for
 * expirationSeconds (at least 10 minutes, at most a year, less the 5
 * minutes when 8 hours or longer, never past the CA).  Other signers stay
 * pending, as with kube; kubernetes.io/legacy-unknown cannot be created
 * through v1 (csr_check.c), so its signer has nothing to sign.
 *
 * The approver (auto_approve, the same event) is kube's csrapproving
 * controller: a pending kubelet client request that passes the kubelet
 * client rules is approved when its requester may create
 * certificatesigningrequests/selfnodeclient (its own node name) or
 * .../nodeclient.  The cleaner (mu__csr_clean, at each start and hourly)
 * is kube's csrcleaner (pkg/controller/certificates/cleaner): it deletes
 * requests issued, denied or failed more than an hour ago, pending more
 * than a day, or whose certificate has expired.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"
#include "apiserver/csr.h"
#include "apiserver/ssa.h"

#define CERT_TTL_S (365 * 24 * 3600) /* --cluster-signing-duration's default */
#define BACKDATE_S 300
#define SHORT_S (8 * 3600)

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* --- the REST side ------------------------------------------------------ */

void mu__csr_prepare_create(const mu__req_t *rq, json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");
	if (!json_is_object(spec) || !rq->user)
		return;
	json_t *groups = json_array();
	for (int i = 0; i < rq->user->ngroups; i++)
		json_array_append_new(groups, json_string(rq->user->groups[i]));
	json_object_set_new(spec, "username", json_string(rq->user->name));
	json_object_set_new(spec, "groups", groups);
	json_object_del(spec, "uid");
	json_object_del(spec, "extra");
	if (rq->user->uid[0])
		json_object_set_new(spec, "uid", json_string(rq->user->uid));
	if (rq->user->nextra)
		json_object_set_new(spec, "extra", mu__user_extra_json(rq->user));
}

/* Condition timestamps as kube's populateConditionTimestamps: a condition
 * without lastUpdateTime gets now; without lastTransitionTime, the old
 * condition's when its status is the same, else now. */
static void stamp_conditions(json_t *nw, const json_t *old)
{
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	size_t i, j;
	json_t *c, *o;
	json_array_foreach(mu__jget(nw, "status.conditions"), i, c) {
		if (!json_is_object(c))
			continue;
		if (!mu__jstr(c, "lastUpdateTime"))
			json_object_set_new(c, "lastUpdateTime", json_string(ts));
		if (mu__jstr(c, "lastTransitionTime"))
			continue;
		const char *keep = NULL;
		json_array_foreach(mu__jget(old, "status.conditions"), j, o)
			if (!strcmp(nz(mu__jstr(o, "type")), nz(mu__jstr(c, "type"))) &&
			    !strcmp(nz(mu__jstr(o, "status")), nz(mu__jstr(c, "status"))))
				keep = mu__jstr(o, "lastTransitionTime");
		json_object_set_new(c, "lastTransitionTime", json_string(keep ? keep : ts));
	}
}

void mu__csr_prepare_update(const json_t *old, json_t *nw, const char *sub)
{
	json_object_set(nw, "spec", json_object_get(old, "spec"));
	const json_t *ost = json_object_get(old, "status");
	if (!strcmp(sub, "approval")) {
		json_t *conds = json_incref(mu__jget(nw, "status.conditions"));
		json_t *st = ost ? json_deep_copy(ost) : json_object();
		if (conds)
			json_object_set_new(st, "conditions", conds);
		else
			json_object_del(st, "conditions");
		json_object_set_new(nw, "status", st);
	} else if (strcmp(sub, "status")) {
		if (ost)
			json_object_set(nw, "status", (json_t *)ost);
		else
			json_object_del(nw, "status");
	}
	stamp_conditions(nw, old);
}

bool mu__csr_check_update(const json_t *old, const json_t *nw, const char *sub, mu__verr_t *e)
{
	if (strcmp(sub, "approval")) {
		static const char *const t[] = {"Approved", "Denied"};
		for (int k = 0; k < 2; k++) {
			int o = mu__csr_count_cond(old, t[k]), n = mu__csr_count_cond(nw, t[k]);
			if (n > o)
				mu__verr_add(e, "status.conditions", "FieldValueForbidden",
					     "Forbidden: updates may not add a condition of type \"%s\"", t[k]);
		}
	}
	return e->n == 0;
}

/* Whether fn lets the requester make `verb` on the signer: RBAC's
 * resource `signers` named by the signerName, or by its domain then a
 * slash and a star. */
static bool may_on_signer(mu__csr_authz_fn fn, void *ctx, const char *verb, const char *signer)
{
	char wild[600];
	const char *slash = strchr(signer, '/');
	snprintf(wild, sizeof wild, "%.*s/*", slash ? (int)(slash - signer) : 0, signer);
	return fn(ctx, verb, signer) || (slash && fn(ctx, verb, wild));
}

bool mu__csr_admit(const mu__req_t *rq, const json_t *old, const json_t *nw, mu__csr_authz_fn fn, void *ctx,
		   char *msg, size_t len)
{
	const char *sn = nz(mu__jstr(nw, "spec.signerName"));
	const char *sub = rq->route.sub;
	if (!old) {
		/* CertificateSubjectRestriction */
		gnutls_x509_crq_t crq;
		char err[200];
		if (strcmp(sn, "kubernetes.io/kube-apiserver-client") || !mu__csr_parse_request(nw, &crq, err, sizeof err))
			return true;
		bool masters = false;
		for (unsigned i = 0; !masters; i++) {
			char o[256];
			size_t sz = sizeof o;
			if (gnutls_x509_crq_get_dn_by_oid(crq, GNUTLS_OID_X520_ORGANIZATION_NAME, i, 0, o, &sz) < 0)
				break;
			masters = sz < sizeof o && !strcmp(o, "system:masters");
		}
		gnutls_x509_crq_deinit(crq);
		if (masters)
			snprintf(msg, len, "use of kubernetes.io/kube-apiserver-client signer with system:masters group "
				 "is not allowed");
		return !masters;
	}
	if (!strcmp(sub, "approval")) {
		bool changed = mu__csr_count_cond(nw, "Approved") != mu__csr_count_cond(old, "Approved") ||
			       mu__csr_count_cond(nw, "Denied") != mu__csr_count_cond(old, "Denied");
		if (changed && !may_on_signer(fn, ctx, "approve", sn)) {
			snprintf(msg, len, "user not permitted to approve requests with signerName \"%.500s\"", sn);
			return false;
		}
	} else if (!strcmp(sub, "status")) {
		const char *oc = mu__jstr(old, "status.certificate"), *nc = mu__jstr(nw, "status.certificate");
		if (strcmp(nz(oc), nz(nc)) && !may_on_signer(fn, ctx, "sign", sn)) {
			snprintf(msg, len, "user not permitted to sign requests with signerName \"%.500s\"", sn);
			return false;
		}
	}
	return true;
}

/* --- the signer --------------------------------------------------------- */

/* kube's ValidateKubeletClientCSR / ValidateKubeletServingCSR /
 * validAPIServerClientUsages: NULL when crq with usages may be signed by
 * signer, else the error's text. */
static const char *signer_rules(const char *signer, gnutls_x509_crq_t crq, const json_t *usages, char *buf,
				size_t len)
{
	size_t i;
	json_t *u;
	if (!strcmp(signer, "kubernetes.io/kube-apiserver-client")) {
		bool client = false;
		json_array_foreach(usages, i, u) {
			const char *s = nz(json_string_value(u));
			if (!strcmp(s, "client auth"))
				client = true;
			else if (strcmp(s, "digital signature") && strcmp(s, "key encipherment"))
				return snprintf(buf, len, "invalid usage for client certificate: %s", s), buf;
		}
		return client ? NULL : "missing required usage for client certificate: client auth";
	}
	bool serving = !strcmp(signer, "kubernetes.io/kubelet-serving");
	char o[256], cn[256];
	size_t sz;
	int no = 0;
	bool nodes = false;
	for (unsigned k = 0; k < 16; k++, no++) {
		sz = sizeof o;
		if (gnutls_x509_crq_get_dn_by_oid(crq, GNUTLS_OID_X520_ORGANIZATION_NAME, k, 0, o, &sz) < 0)
			break;
		if (k == 0)
			nodes = !strcmp(o, "system:nodes");
	}
	if (no != 1 || !nodes) /* exactly [system:nodes] */
		return "subject organization is not system:nodes";
	int dns = 0, ip = 0, email = 0, uri = 0;
	for (unsigned k = 0;; k++) {
		char v[512];
		size_t vs = sizeof v;
		unsigned type = 0;
		int rc = gnutls_x509_crq_get_subject_alt_name(crq, k, v, &vs, &type, NULL);
		if (rc < 0 && rc != GNUTLS_E_SHORT_MEMORY_BUFFER)
			break;
		dns += type == GNUTLS_SAN_DNSNAME;
		ip += type == GNUTLS_SAN_IPADDRESS;
		email += type == GNUTLS_SAN_RFC822NAME;
		uri += type == GNUTLS_SAN_URI;
	}
	sz = sizeof cn;
	bool node_cn = gnutls_x509_crq_get_dn_by_oid(crq, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &sz) >= 0 &&
		       !strncmp(cn, "system:node:", 12);
	/* the usages as a set: {digital signature, client|server auth} with or
	 * without key encipherment */
	bool ds = false, auth = false, other = false;
	json_array_foreach(usages, i, u) {
		const char *s = nz(json_string_value(u));
		if (!strcmp(s, "digital signature"))
			ds = true;
		else if (!strcmp(s, serving ? "server auth" : "client auth"))
			auth = true;
		else if (strcmp(s, "key encipherment")) /* allowed, not required */
			other = true;
	}
	bool usages_ok = ds && auth && !other;
	if (serving) {
		if (!dns && !ip)
			return "DNS or IP subjectAltName is required";
		if (email)
			return "Email subjectAltNames are not allowed";
		if (uri)
			return "URI subjectAltNames are not allowed";
		if (!usages_ok)
			return "usages did not match [digital signature key encipherment server auth]";
		return node_cn ? NULL : "subject common name does not begin with system:node:";
	}
	if (dns)
		return "DNS subjectAltNames are not allowed";
	if (email)
		return "Email subjectAltNames are not allowed";
	if (ip)
		return "IP subjectAltNames are not allowed";
	if (uri)
		return "URI subjectAltNames are not allowed";
	if (!node_cn)
		return "subject common name does not begin with system:node:";
	return usages_ok ? NULL : "usages did not match [client auth digital signature key encipherment]";
}

/* The certificate's lifetime for expirationSeconds exp (NULL: the
 * default), as signer.duration. */
static long long ttl_of(const json_t *exp)
{
	if (!json_is_integer(exp))
		return CERT_TTL_S;
	long long r = json_integer_value(exp);
	return r > CERT_TTL_S ? CERT_TTL_S : r < 600 ? 600 : r;
}

/* Signs crq with the CA: a PEM certificate (caller frees) or NULL with a
 * message. */
static char *sign_crq(mu_apiserver_t *s, gnutls_x509_crq_t crq, const json_t *usages, long long ttl, char *msg,
		      size_t len)
{
	gnutls_x509_crt_t ca = NULL, crt = NULL;
	gnutls_privkey_t key = NULL;
	char *out = NULL;
	gnutls_datum_t cad = {(unsigned char *)s->client_ca_pem, (unsigned)strlen(s->client_ca_pem)};
	gnutls_datum_t kd = {(unsigned char *)s->ca_key_pem, (unsigned)strlen(s->ca_key_pem)};
	gnutls_datum_t pem = {NULL, 0};
	int rc;
	if ((rc = gnutls_x509_crt_init(&ca)) < 0 || (rc = gnutls_x509_crt_import(ca, &cad, GNUTLS_X509_FMT_PEM)) < 0 ||
	    (rc = gnutls_privkey_init(&key)) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0 ||
	    (rc = gnutls_x509_crt_init(&crt)) < 0 || (rc = gnutls_x509_crt_set_crq(crt, crq)) < 0)
		goto done;
	long long now = (long long)mu__now_s();
	long long ca_end = (long long)gnutls_x509_crt_get_expiration_time(ca);
	long long nb = now - BACKDATE_S, na = ttl < SHORT_S ? now + ttl : now + ttl - BACKDATE_S;
	if (na > ca_end)
		na = ca_end;
	if (now >= ca_end) {
		snprintf(msg, len, "refusing to sign a certificate that expired in the past");
		goto out;
	}
	unsigned char serial[16];
	gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
	serial[0] &= 0x7f;
	unsigned kbits = 0;
	size_t i;
	json_t *u;
	if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (rc = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0 ||
	    (rc = gnutls_x509_crt_set_activation_time(crt, (time_t)nb)) < 0 ||
	    (rc = gnutls_x509_crt_set_expiration_time(crt, (time_t)na)) < 0 ||
	    (rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0)
		goto done;
	json_array_foreach(usages, i, u) {
		unsigned bit;
		const char *oid;
		if (!mu__csr_usage(nz(json_string_value(u)), &bit, &oid))
			continue;
		kbits |= bit;
		if (oid && (rc = gnutls_x509_crt_set_key_purpose_oid(crt, oid, 0)) < 0)
			goto done;
	}
	if (kbits && (rc = gnutls_x509_crt_set_key_usage(crt, kbits)) < 0)
		goto done;
	for (unsigned k = 0;; k++) {
		char v[1024];
		size_t vs = sizeof v;
		unsigned type = 0;
		if (gnutls_x509_crq_get_subject_alt_name(crq, k, v, &vs, &type, NULL) < 0)
			break;
		if ((rc = gnutls_x509_crt_set_subject_alt_name(crt, type, v, (unsigned)vs, GNUTLS_FSAN_APPEND)) < 0)
			goto done;
	}
	unsigned char kid[64];
	size_t kidn = sizeof kid;
	if (gnutls_x509_crt_get_subject_key_id(ca, kid, &kidn, NULL) >= 0)
		gnutls_x509_crt_set_authority_key_id(crt, kid, kidn);
	if ((rc = gnutls_x509_crt_privkey_sign(crt, ca, key, GNUTLS_DIG_SHA256, 0)) < 0 ||
	    (rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &pem)) < 0)
		goto done;
	out = mu__b64enc(pem.data, pem.size);
	gnutls_free(pem.data);
done:
	if (rc < 0)
		snprintf(msg, len, "error auto signing csr: %s", gnutls_strerror(rc));
out:
	if (crt)
		gnutls_x509_crt_deinit(crt);
	if (key)
		gnutls_privkey_deinit(key);
	if (ca)
		gnutls_x509_crt_deinit(ca);
	return out;
}

typedef struct sign_ctx {
	const char *rv;     /* the version decided on */
	const char *cert;   /* base64 PEM to set, or NULL */
	const char *failed; /* the Failed condition's message, or NULL */
	bool stale;
} sign_ctx_t;

static int sign_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	sign_ctx_t *c = ctx;
	if (!cur)
		return MU_ENOENT;
	char have[32];
	snprintf(have, sizeof have, "%lld", (long long)cur->rv);
	if (strcmp(have, c->rv)) {
		c->stale = true; /* changed meanwhile: the next event decides */
		return MU__MUT_KEEP;
	}
	json_t *old = mu__obj_parse(cur), *nw = old ? json_deep_copy(old) : NULL;
	if (!nw) {
		json_decref(old);
		return MU_ENOMEM;
	}
	json_t *st = json_object_get(nw, "status");
	if (!json_is_object(st)) {
		st = json_object();
		json_object_set_new(nw, "status", st);
	}
	if (c->cert)
		json_object_set_new(st, "certificate", json_string(c->cert));
	if (c->failed) {
		json_t *conds = json_object_get(st, "conditions");
		if (!json_is_array(conds)) {
			conds = json_array();
			json_object_set_new(st, "conditions", conds);
		}
		char ts[40];
		mu__timestamp(ts, sizeof ts, false);
		json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", "Failed", "status",
						       "True", "reason", "SignerValidationFailure", "message",
						       c->failed, "lastUpdateTime", ts, "lastTransitionTime", ts));
	}
	mu__mf_controller(cur->type, old, nw, "kube-controller-manager", true);
	json_decref(old);
	*out = nw;
	return MU__MUT_PUT;
}

/* --- the approver ------------------------------------------------------- */

typedef struct approve_ctx {
	const char *rv;      /* the version decided on */
	const char *message; /* the Approved condition's */
} approve_ctx_t;

static int approve_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	approve_ctx_t *c = ctx;
	if (!cur)
		return MU_ENOENT;
	char have[32];
	snprintf(have, sizeof have, "%lld", (long long)cur->rv);
	if (strcmp(have, c->rv))
		return MU__MUT_KEEP; /* changed meanwhile: the next event decides */
	json_t *old = mu__obj_parse(cur), *nw = old ? json_deep_copy(old) : NULL;
	if (!nw) {
		json_decref(old);
		return MU_ENOMEM;
	}
	json_t *st = json_object_get(nw, "status");
	if (!json_is_object(st)) {
		st = json_object();
		json_object_set_new(nw, "status", st);
	}
	json_t *conds = json_object_get(st, "conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(st, "conditions", conds);
	}
	char ts[40];
	mu__timestamp(ts, sizeof ts, false);
	json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", "Approved", "status", "True",
					       "reason", "AutoApproved", "message", c->message, "lastUpdateTime", ts,
					       "lastTransitionTime", ts));
	mu__mgr_t m;
	mu__mgr_controller(&m, cur->type, "kube-controller-manager", true);
	snprintf(m.sub, sizeof m.sub, "approval");
	mu__mf_record(old, nw, &m);
	json_decref(old);
	*out = nw;
	return MU__MUT_PUT;
}

/* Whether the requester recorded in csr (spec.username, spec.groups) may
 * `create` certificatesigningrequests/sub: the SubjectAccessReview that
 * kube's csrapproving controller asks. */
static bool requester_may(mu_apiserver_t *s, mu__sar_fn sar, const json_t *csr, const char *sub)
{
	mu__user_t u;
	memset(&u, 0, sizeof u);
	snprintf(u.name, sizeof u.name, "%s", nz(mu__jstr(csr, "spec.username")));
	size_t i;
	json_t *g;
	json_array_foreach(mu__jget(csr, "spec.groups"), i, g) {
		if (u.ngroups >= MU__USER_GROUPS || !json_is_string(g))
			continue;
		snprintf(u.groups[u.ngroups++], sizeof u.groups[0], "%s", json_string_value(g));
		u.admin = u.admin || !strcmp(json_string_value(g), "system:masters");
	}
	return sar(s, &u, "create", "certificates.k8s.io", "certificatesigningrequests", sub);
}

/* kube-controller-manager's csrapproving controller
 * (pkg/controller/certificates/approver/sarapprove.go): a pending request
 * for kubernetes.io/kube-apiserver-client-kubelet that passes the kubelet
 * client rules is approved (reason AutoApproved) when its requester may
 * create certificatesigningrequests/selfnodeclient (the request is for
 * the requester's own name) or .../nodeclient.  One store write at most. */
static void auto_approve(mu_apiserver_t *s, mu__sar_fn sar, const mu__obj_t *o, const json_t *csr,
			 gnutls_x509_crq_t crq)
{
	char buf[200], cn[256];
	if (signer_rules("kubernetes.io/kube-apiserver-client-kubelet", crq, mu__jget(csr, "spec.usages"), buf,
			 sizeof buf))
		return;
	size_t sz = sizeof cn;
	bool self = gnutls_x509_crq_get_dn_by_oid(crq, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &sz) >= 0 &&
		    !strcmp(cn, nz(mu__jstr(csr, "spec.username")));
	const char *msg = NULL;
	if (self && requester_may(s, sar, csr, "selfnodeclient"))
		msg = "Auto approving self kubelet client certificate after SubjectAccessReview.";
	else if (requester_may(s, sar, csr, "nodeclient"))
		msg = "Auto approving kubelet client certificate after SubjectAccessReview.";
	if (!msg)
		return;
	char rv[32];
	snprintf(rv, sizeof rv, "%lld", (long long)o->rv);
	approve_ctx_t c = {rv, msg};
	mu__store_mutate(s->store, MU__RT_CSRS, NULL, o->name, approve_fn, &c, false, NULL);
}

void mu__csr_sign(mu_apiserver_t *s, const mu__obj_t *o, mu__sar_fn sar)
{
	if (o->rt != MU__RT_CSRS || !s->client_ca_pem || !s->ca_key_pem)
		return;
	json_t *csr = mu__obj_parse(o);
	if (!csr)
		return;
	const char *sn = nz(mu__jstr(csr, "spec.signerName"));
	if (!strcmp(sn, "kubernetes.io/kube-apiserver-client-kubelet") && !o->deleting &&
	    !mu__csr_count_cond(csr, "Approved") && !mu__csr_count_cond(csr, "Denied") &&
	    !*nz(mu__jstr(csr, "status.certificate"))) {
		gnutls_x509_crq_t crq;
		char err[200];
		if (mu__csr_parse_request(csr, &crq, err, sizeof err)) {
			auto_approve(s, sar, o, csr, crq);
			gnutls_x509_crq_deinit(crq);
		}
		json_decref(csr);
		return; /* the approval's own event signs it */
	}
	bool ours = !strcmp(sn, "kubernetes.io/kube-apiserver-client") ||
		    !strcmp(sn, "kubernetes.io/kube-apiserver-client-kubelet") ||
		    !strcmp(sn, "kubernetes.io/kubelet-serving");
	const char *cert = mu__jstr(csr, "status.certificate");
	gnutls_x509_crq_t crq = NULL;
	char msg[300], buf[200];
	if (!ours || o->deleting || mu__csr_count_cond(csr, "Approved") == 0 || mu__csr_count_cond(csr, "Failed") > 0 ||
	    (cert && *cert) || !mu__csr_parse_request(csr, &crq, msg, sizeof msg)) {
		json_decref(csr);
		return;
	}
	const json_t *usages = mu__jget(csr, "spec.usages");
	const char *bad = signer_rules(sn, crq, usages, buf, sizeof buf);
	char rv[32];
	snprintf(rv, sizeof rv, "%lld", (long long)o->rv);
	sign_ctx_t c = {rv, NULL, bad, false};
	char *pem = NULL;
	if (!bad) {
		pem = sign_crq(s, crq, usages, ttl_of(mu__jget(csr, "spec.expirationSeconds")), msg, sizeof msg);
		c.cert = pem;
	}
	gnutls_x509_crq_deinit(crq);
	if (c.cert || c.failed)
		mu__store_mutate(s->store, MU__RT_CSRS, NULL, o->name, sign_fn, &c, false, NULL);
	else if (!s->o.quiet)
		fprintf(stderr, "muster up: csr %s: %s\n", o->name, msg);
	free(pem);
	json_decref(csr);
}

void mu__csr_resync(mu_apiserver_t *s, mu__sar_fn sar)
{
	mu__page_t pg;
	if (!s->ca_key_pem || mu__store_list(s->store, MU__RT_CSRS, NULL, NULL, 100000, NULL, NULL, &pg) != MU_OK)
		return;
	for (size_t i = 0; i < pg.n; i++)
		mu__csr_sign(s, pg.objs[i], sar);
	mu__page_release(&pg);
}

/* --- the cleaner -------------------------------------------------------- */

#define CLEAN_DONE_S 3600     /* approvedExpiration, deniedExpiration */
#define CLEAN_PENDING_S 86400 /* pendingExpiration */

/* Whether condition t of csr was last updated more than age seconds
 * before now (a missing time is never old, as kube's isOlderThan). */
static bool cond_older(const json_t *csr, const char *t, int64_t now, int64_t age)
{
	size_t i;
	json_t *c;
	json_array_foreach(mu__jget(csr, "status.conditions"), i, c) {
		if (strcmp(nz(mu__jstr(c, "type")), t))
			continue;
		int64_t at = mu__parse_rfc3339(mu__jstr(c, "lastUpdateTime"));
		if (at > 0 && now - at > age)
			return true;
	}
	return false;
}

/* Whether the certificate (base64 of PEM) cert has passed its NotAfter;
 * false when it does not parse, as kube's isExpired. */
static bool cert_expired(const char *cert, int64_t now)
{
	size_t cap = strlen(cert), n = 0;
	char *pem = malloc(cap + 1);
	bool expired = false;
	gnutls_x509_crt_t crt;
	if (pem && mu__b64dec(cert, pem, cap, &n) == MU_OK && gnutls_x509_crt_init(&crt) >= 0) {
		gnutls_datum_t d = {(unsigned char *)pem, (unsigned)n};
		if (gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) >= 0)
			expired = (int64_t)gnutls_x509_crt_get_expiration_time(crt) < now;
		gnutls_x509_crt_deinit(crt);
	}
	free(pem);
	return expired;
}

/* Why kube's csrcleaner removes csr at now, or NULL to keep it. */
static const char *clean_reason(const json_t *csr, int64_t now)
{
	const char *cert = nz(mu__jstr(csr, "status.certificate"));
	bool approved = mu__csr_count_cond(csr, "Approved") > 0;
	if (approved && *cert && cond_older(csr, "Approved", now, CLEAN_DONE_S))
		return "it is more than 1h0m0s old and approved";
	if (cond_older(csr, "Denied", now, CLEAN_DONE_S))
		return "it is more than 1h0m0s old and denied";
	if (cond_older(csr, "Failed", now, CLEAN_DONE_S))
		return "it is more than 1h0m0s old and failed";
	int64_t made = mu__parse_rfc3339(mu__jstr(csr, "metadata.creationTimestamp"));
	if (json_array_size(mu__jget(csr, "status.conditions")) == 0 && made > 0 && now - made > CLEAN_PENDING_S)
		return "it is more than 24h0m0s old and unhandled";
	if (approved && *cert && cert_expired(cert, now))
		return "the associated certificate is expired";
	return NULL;
}

int mu__csr_clean(mu_apiserver_t *s)
{
	mu__page_t pg;
	int removed = 0;
	if (mu__store_list(s->store, MU__RT_CSRS, NULL, NULL, 100000, NULL, NULL, &pg) != MU_OK)
		return 0;
	int64_t now = mu__now_s();
	mu__wtx_t *tx = NULL;
	for (size_t i = 0; i < pg.n; i++) {
		json_t *csr = mu__obj_parse(pg.objs[i]);
		const char *why = csr && !pg.objs[i]->deleting ? clean_reason(csr, now) : NULL;
		if (why && (tx || mu__store_begin(s->store, &tx) == MU_OK)) {
			if (!s->o.quiet)
				fprintf(stderr, "muster up: cleaning CSR \"%s\" as %s\n", pg.objs[i]->name, why);
			mu__delete_in(tx, MU__RT_CSRS, NULL, pg.objs[i]->name, -1, nz(mu__jstr(csr, "metadata.uid")),
				      NULL, false, NULL);
			removed++;
			if (removed % MU__TX_MAX == 0) {
				mu__store_commit(tx);
				tx = NULL;
			}
		}
		json_decref(csr);
	}
	if (tx)
		mu__store_commit(tx);
	mu__page_release(&pg);
	return removed;
}
