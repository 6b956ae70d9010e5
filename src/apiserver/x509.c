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
 *
 * The chain's check (GnuTLS's, about 2.6 million instructions for one
 * ECDSA certificate) is made once per certificate, not once per
 * connection: a client that connects again with the same certificates
 * (the dispatcher's and the schedulers' senders, a resumed session) is
 * answered from a small cache keyed by the SHA-256 of the chain it sent,
 * as kubernetes/kubernetes#100902 proposed for kube-apiserver (its x509
 * authenticator verifies per request).  The check's result depends only on
 * the chain, the client CA (fixed for the server's life) and the time, so
 * an entry is used only while every certificate of the chain and every
 * client CA is within its validity period (otherwise the chain is checked
 * again, as before); failures are not cached.  The TLS handshake still
 * proves on every connection that the client holds the key.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/crypto.h>

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

#define CERT_CACHE 64 /* chains remembered: the clients of one server */

struct mu__certcache {
	pthread_mutex_t mu;
	time_t ca_from, ca_until; /* when every client CA is valid */
	uint64_t checked, reused, tick;
	int n;
	struct centry {
		unsigned char key[32]; /* SHA-256 of the chain as sent */
		time_t from, until;    /* when every certificate of it is valid */
		uint64_t used;         /* tick of the last use: the oldest goes */
		mu__user_t user;
	} e[CERT_CACHE];
};

/* Narrows [*from, *until) to crt's validity period. */
static void narrow(gnutls_x509_crt_t crt, time_t *from, time_t *until)
{
	time_t a = gnutls_x509_crt_get_activation_time(crt), b = gnutls_x509_crt_get_expiration_time(crt);
	if (a == (time_t)-1 || b == (time_t)-1) {
		*until = *from; /* unknown: an empty window, never used */
		return;
	}
	if (a > *from)
		*from = a;
	if (b < *until)
		*until = b;
}

int mu__certcache_new(const char *ca_pem, mu__certcache_t **out)
{
	*out = NULL;
	mu__certcache_t *c = calloc(1, sizeof *c);
	if (!c)
		return MU_ENOMEM;
	pthread_mutex_init(&c->mu, NULL);
	c->ca_from = 0;
	c->ca_until = 0; /* no CA read: nothing is cached */
	gnutls_x509_crt_t *cas = NULL;
	unsigned nca = 0;
	gnutls_datum_t d = {(unsigned char *)(uintptr_t)ca_pem, ca_pem ? (unsigned)strlen(ca_pem) : 0};
	if (ca_pem && gnutls_x509_crt_list_import2(&cas, &nca, &d, GNUTLS_X509_FMT_PEM, 0) >= 0 && nca > 0) {
		c->ca_until = (time_t)INT64_MAX;
		for (unsigned i = 0; i < nca; i++) {
			narrow(cas[i], &c->ca_from, &c->ca_until);
			gnutls_x509_crt_deinit(cas[i]);
		}
		gnutls_free(cas);
	}
	*out = c;
	return MU_OK;
}

void mu__certcache_free(mu__certcache_t *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void mu__certcache_counts(mu__certcache_t *c, uint64_t *checked, uint64_t *reused)
{
	*checked = *reused = 0;
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	*checked = c->checked;
	*reused = c->reused;
	pthread_mutex_unlock(&c->mu);
}

/* The cache's key for the n certificates peers: SHA-256 over each one's
 * length and bytes.  False when GnuTLS cannot hash.  O(their bytes). */
static bool chain_key(const gnutls_datum_t *peers, unsigned n, unsigned char key[32])
{
	gnutls_hash_hd_t h;
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		return false;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = peers[i].size;
		gnutls_hash(h, &len, sizeof len);
		gnutls_hash(h, peers[i].data, peers[i].size);
	}
	gnutls_hash_deinit(h, key);
	return true;
}

/* Copies into u the user of the cached chain key, when it is there and
 * it and the client CAs are valid at now.  O(CERT_CACHE). */
static bool cache_get(mu__certcache_t *c, const unsigned char key[32], time_t now, mu__user_t *u)
{
	bool hit = false;
	pthread_mutex_lock(&c->mu);
	if (now >= c->ca_from && now < c->ca_until)
		for (int i = 0; i < c->n && !hit; i++)
			if (!memcmp(c->e[i].key, key, 32) && now >= c->e[i].from && now < c->e[i].until) {
				*u = c->e[i].user;
				c->e[i].used = ++c->tick;
				hit = true;
			}
	*(hit ? &c->reused : &c->checked) += 1;
	pthread_mutex_unlock(&c->mu);
	return hit;
}

/* Remembers that chain key, valid in [from, until), names u: in a free
 * entry, the key's own or the least recently used.  O(CERT_CACHE). */
static void cache_put(mu__certcache_t *c, const unsigned char key[32], time_t from, time_t until,
		      const mu__user_t *u)
{
	pthread_mutex_lock(&c->mu);
	int k = c->n < CERT_CACHE ? c->n : 0;
	for (int i = 0; i < c->n; i++)
		if (!memcmp(c->e[i].key, key, 32)) {
			k = i;
			break;
		} else if (c->n == CERT_CACHE && c->e[i].used < c->e[k].used) {
			k = i;
		}
	if (k == c->n)
		c->n++;
	memcpy(c->e[k].key, key, 32);
	c->e[k].from = from;
	c->e[k].until = until;
	c->e[k].used = ++c->tick;
	c->e[k].user = *u;
	pthread_mutex_unlock(&c->mu);
}

/* The chain's full check: GnuTLS verifies it against the client CA, and
 * the leaf names the user; [*from, *until) narrowed to the validity of
 * every certificate sent.  O(the chain) and its signatures' checks. */
static bool verify_chain(gnutls_session_t ses, const gnutls_datum_t *peers, unsigned n, mu__user_t *u,
			 time_t *from, time_t *until)
{
	unsigned status = 0;
	if (gnutls_certificate_verify_peers2(ses, &status) < 0 || status != 0)
		return false;
	bool ok = true;
	for (unsigned i = 0; ok && i < n; i++) {
		gnutls_x509_crt_t crt;
		if (gnutls_x509_crt_init(&crt) < 0)
			return false;
		ok = gnutls_x509_crt_import(crt, &peers[i], GNUTLS_X509_FMT_DER) >= 0;
		if (ok)
			narrow(crt, from, until);
		if (ok && i == 0) {
			ok = client_usage(crt) &&
			     subject_attr(crt, GNUTLS_OID_X520_COMMON_NAME, 0, u->name, sizeof u->name) && u->name[0];
			for (unsigned g = 0; ok && u->ngroups < MU__USER_GROUPS - 1; g++) /* room for system:authenticated */
				if (!subject_attr(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, g, u->groups[u->ngroups],
						  sizeof u->groups[0]))
					break;
				else if (u->groups[u->ngroups][0])
					u->ngroups++;
		}
		gnutls_x509_crt_deinit(crt);
	}
	return ok;
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
	unsigned char key[32];
	time_t now = time(NULL);
	bool keyed = s->certs && chain_key(peers, n, key);
	if (keyed && cache_get(s->certs, key, now, u))
		return true;
	time_t from = 0, until = (time_t)INT64_MAX;
	bool ok = verify_chain(ses, peers, n, u, &from, &until);
	if (!ok)
		memset(u, 0, sizeof *u);
	else if (keyed && now >= from && now < until)
		cache_put(s->certs, key, from, until, u);
	return ok;
}
