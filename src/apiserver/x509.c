/*
 * x509.c - client certificate authentication, as kube-apiserver's x509
 * authenticator (k8s.io/apiserver/pkg/authentication/request/x509) does it.
 *
 * When the server has a client CA (mu_apiserver_opts_t.client_ca, the
 * counterpart of kube-apiserver's --client-ca-file), libmicrohttpd asks
 * every TLS client for a certificate (optional: a client without one goes
 * on to the bearer token) and GnuTLS checks the chain against that CA.  A
 * certificate that chains to it, is within its validity period and, when it
 * lists extended key usages, allows client authentication, names the user:
 * the subject's CommonName is the user name and each Organization a group.
 * A certificate from another CA, an expired one or one without a CommonName
 * names nobody; the request then needs a token, or it gets 401.
 */
#include <stdio.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "apiserver/apiserver_int.h"

/* Whether crt may authenticate a client: no extended key usage extension
 * (any use, as Go's x509 verifier treats it), or one listing clientAuth or
 * anyExtendedKeyUsage.  Bounded by the certificate's usages. */
static bool client_usage(gnutls_x509_crt_t crt)
{
	for (unsigned i = 0;; i++) {
		char oid[128];
		size_t sz = sizeof oid;
		int rc = gnutls_x509_crt_get_key_purpose_oid(crt, i, oid, &sz, NULL);
		if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			return i == 0;
		if (rc < 0)
			return false;
		if (!strcmp(oid, GNUTLS_KP_TLS_WWW_CLIENT) || !strcmp(oid, GNUTLS_KP_ANY))
			return true;
	}
}

/* Copies the value of the idx'th attribute oid of crt's subject into buf;
 * false when there is none (or it does not fit). */
static bool subject_attr(gnutls_x509_crt_t crt, const char *oid, unsigned idx, char *buf, size_t len)
{
	size_t sz = len;
	if (gnutls_x509_crt_get_dn_by_oid(crt, oid, idx, 0, buf, &sz) < 0 || sz >= len)
		return false;
	buf[sz] = '\0';
	return true;
}

bool mu__x509_user(const mu_apiserver_t *s, struct MHD_Connection *con, mu__user_t *u)
{
	memset(u, 0, sizeof *u);
	if (!s->client_ca_pem)
		return false;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t ses = ci ? (gnutls_session_t)ci->tls_session : NULL;
	unsigned n = 0;
	const gnutls_datum_t *peers = ses ? gnutls_certificate_get_peers(ses, &n) : NULL;
	if (!peers || n == 0)
		return false;
	unsigned status = 0;
	if (gnutls_certificate_verify_peers2(ses, &status) < 0 || status != 0)
		return false;
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) < 0)
		return false;
	bool ok = gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) >= 0 && client_usage(crt) &&
		  subject_attr(crt, GNUTLS_OID_X520_COMMON_NAME, 0, u->name, sizeof u->name) && u->name[0];
	for (unsigned i = 0; ok && u->ngroups < MU__USER_GROUPS - 1; i++) /* room for system:authenticated */
		if (!subject_attr(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, u->groups[u->ngroups], sizeof u->groups[0]))
			break;
		else if (u->groups[u->ngroups][0])
			u->ngroups++;
	gnutls_x509_crt_deinit(crt);
	if (!ok)
		memset(u, 0, sizeof *u);
	return ok;
}
