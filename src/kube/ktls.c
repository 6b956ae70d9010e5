/*
 * ktls.c - a kubeconfig's TLS material (certificate-authority-data,
 * client-certificate-data, client-key-data) decoded once, for every
 * connection of every client made from that config.
 *
 * libcurl reads a PEM blob again for each new connection (the CA, the
 * client certificate and its key: PEM_read_bio_PrivateKey alone is some
 * 4 million instructions with OpenSSL 3's decoders), and a daemon opens
 * one connection per watch: the hub daemon watches a dozen kinds on the
 * hub and on every worker, so its start-up decoded the same three PEM
 * texts a hundred times, about three quarters of each connection's cost
 * in the client (docs/dispatch.md, "Dispatch throughput (issue 18, round
 * 13)").  Here the config decodes them once (mu__ktls_new, from
 * kubeconfig.c), and each connection's SSL_CTX takes references to the
 * same objects (mu__ktls_ctx_fn, libcurl's CURLOPT_SSL_CTX_FUNCTION):
 * the CA certificates join the context's store, the client certificate,
 * its chain and key are set on it.  What is verified is unchanged: the
 * server's chain against these CA certificates only (libcurl is told to
 * load no CA file of its own), its host name by libcurl, as before.
 * Files named in a kubeconfig (certificate-authority, client-certificate,
 * client-key) are still read by libcurl on every connection, so that a
 * rotated file is picked up as before; a PEM text that does not decode
 * is left to libcurl too (mu__ktls_new gives no part for it), which
 * refuses it with its own error as before.
 *
 * And the config's TLS sessions are shared by its connections (round 13,
 * second part): libcurl's share interface with CURL_LOCK_DATA_SSL_SESSION,
 * one share per config, so that a new connection of any client made from
 * the config resumes a session a server gave a ticket for (`muster up`
 * sends them, as kube-apiserver's Go TLS server does) instead of a full
 * handshake.  A session is one identity's (the config's client
 * certificate): configs never share one, and a server keeps a resumed
 * session's identity, that of the full handshake's certificate.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "kube/kube_int.h"

struct mu_kube_tls {
	STACK_OF(X509) *cas;     /* the CA certificates, or NULL: libcurl's */
	X509 *cert;              /* the client certificate, or NULL: libcurl's */
	STACK_OF(X509) *chain;   /* the certificates after it in its PEM */
	EVP_PKEY *key;           /* its key (set together with cert) */
	CURLSH *share;           /* its connections' TLS sessions, or NULL */
	pthread_mutex_t mu[CURL_LOCK_DATA_LAST]; /* the share's locks */
};

/* The share's lock and unlock (libcurl calls them from any thread). */
static void share_lock(CURL *h, curl_lock_data data, curl_lock_access acc, void *arg)
{
	(void)h;
	(void)acc;
	mu_kube_tls_t *t = arg;
	if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
		pthread_mutex_lock(&t->mu[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
	(void)h;
	mu_kube_tls_t *t = arg;
	if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
		pthread_mutex_unlock(&t->mu[data]);
}

/* t's share of TLS sessions (none when libcurl refuses one: then each
 * handle keeps its own sessions, as before). */
static void share_new(mu_kube_tls_t *t)
{
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&t->mu[i], NULL);
	CURLSH *sh = curl_share_init();
	if (sh && curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, share_lock) == CURLSHE_OK &&
	    curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, share_unlock) == CURLSHE_OK &&
	    curl_share_setopt(sh, CURLSHOPT_USERDATA, t) == CURLSHE_OK &&
	    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) == CURLSHE_OK) {
		t->share = sh;
		return;
	}
	if (sh)
		curl_share_cleanup(sh);
}

/* Every certificate of the PEM text s into a new stack; NULL when there
 * is none or the text does not read (libcurl judges it then).  O(text). */
static STACK_OF(X509) *pem_certs(const char *s)
{
	BIO *b = BIO_new_mem_buf(s, (int)strlen(s));
	STACK_OF(X509_INFO) *inf = b ? PEM_X509_INFO_read_bio(b, NULL, NULL, NULL) : NULL;
	STACK_OF(X509) *out = inf ? sk_X509_new_null() : NULL;
	for (int i = 0; out && i < sk_X509_INFO_num(inf); i++) {
		X509_INFO *x = sk_X509_INFO_value(inf, i);
		if (x->x509 && sk_X509_push(out, x->x509) > 0)
			x->x509 = NULL; /* the stack owns it now */
	}
	if (out && sk_X509_num(out) == 0) {
		sk_X509_free(out);
		out = NULL;
	}
	sk_X509_INFO_pop_free(inf, X509_INFO_free);
	BIO_free(b);
	return out;
}

/* The client certificate (the first of cert_pem, the rest its chain) and
 * its key into t, both or neither.  O(text). */
static void client_pair(mu_kube_tls_t *t, const char *cert_pem, const char *key_pem)
{
	STACK_OF(X509) *c = pem_certs(cert_pem);
	BIO *b = BIO_new_mem_buf(key_pem, (int)strlen(key_pem));
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	if (!c || !k || X509_check_private_key(sk_X509_value(c, 0), k) != 1) {
		sk_X509_pop_free(c, X509_free);
		EVP_PKEY_free(k);
		return;
	}
	t->cert = sk_X509_shift(c);
	t->chain = c;
	t->key = k;
}

mu_kube_tls_t *mu__ktls_new(const mu_kube_config_t *cfg)
{
	if (cfg->insecure || (!cfg->ca_pem && !(cfg->cert_pem && cfg->key_pem)))
		return NULL;
	mu_kube_tls_t *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	if (cfg->ca_pem)
		t->cas = pem_certs(cfg->ca_pem);
	if (cfg->cert_pem && cfg->key_pem)
		client_pair(t, cfg->cert_pem, cfg->key_pem);
	if (!t->cas && !t->cert) {
		free(t);
		return NULL;
	}
	share_new(t);
	return t;
}

void mu__ktls_free(mu_kube_tls_t *t)
{
	if (!t)
		return;
	/* every handle that used the share is gone (the config outlives its
	 * clients and watches); if one were not, libcurl keeps the share and
	 * may still lock it: then the share, its locks and t stay (a leak
	 * rather than a lock freed under a live handle) */
	bool kept = t->share && curl_share_cleanup(t->share) != CURLSHE_OK;
	sk_X509_pop_free(t->cas, X509_free);
	sk_X509_pop_free(t->chain, X509_free);
	X509_free(t->cert);
	EVP_PKEY_free(t->key);
	t->cas = t->chain = NULL;
	t->cert = NULL;
	t->key = NULL;
	if (kept)
		return;
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&t->mu[i]);
	free(t);
}

bool mu__ktls_has_cas(const mu_kube_tls_t *t)
{
	return t && t->cas;
}

bool mu__ktls_has_cert(const mu_kube_tls_t *t)
{
	return t && t->cert;
}

void *mu__ktls_share(const mu_kube_tls_t *t)
{
	return t ? t->share : NULL;
}

int mu__ktls_ctx_fn(void *curl, void *sslctx, void *arg)
{
	(void)curl;
	SSL_CTX *ctx = sslctx;
	const mu_kube_tls_t *t = arg;
	X509_STORE *st = SSL_CTX_get_cert_store(ctx);
	for (int i = 0; t->cas && i < sk_X509_num(t->cas); i++)
		if (!st || X509_STORE_add_cert(st, sk_X509_value(t->cas, i)) != 1)
			return CURLE_SSL_CACERT_BADFILE;
	if (!t->cert)
		return CURLE_OK;
	if (SSL_CTX_use_certificate(ctx, t->cert) != 1 || SSL_CTX_clear_chain_certs(ctx) != 1)
		return CURLE_SSL_CERTPROBLEM;
	for (int i = 0; i < sk_X509_num(t->chain); i++)
		if (SSL_CTX_add1_chain_cert(ctx, sk_X509_value(t->chain, i)) != 1)
			return CURLE_SSL_CERTPROBLEM;
	if (SSL_CTX_use_PrivateKey(ctx, t->key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
		return CURLE_SSL_CERTPROBLEM;
	return CURLE_OK;
}
