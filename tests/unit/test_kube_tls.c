/*
 * test_kube_tls.c - a kubeconfig's PEM data decoded once (ktls.c) and set
 * on each connection by libcurl's SSL_CTX callback, against a small TLS
 * server on loopback (OpenSSL, one thread, one connection at a time,
 * HTTP/1.1 keep-alive) that asks for a client certificate of its CA:
 * the right CA and client pair are answered, over one handshake for two
 * requests (the connection is kept); a CA that did not sign the server's
 * certificate is refused by the client, a client without a certificate
 * by the server; a kubeconfig's -data fields give a decoded config, a
 * key that is not the certificate's gives no client pair, text that is
 * no PEM gives nothing (libcurl judges it, as before).  Keys and
 * certificates are made here (P-256), valid for an hour.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "check.h"
#include "kube/kube_int.h"

typedef struct pair {
	EVP_PKEY *key;
	X509 *cert;
} pair_t;

static void ext(X509 *c, X509 *issuer, int nid, const char *v)
{
	X509V3_CTX x;
	X509V3_set_ctx(&x, issuer, c, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &x, nid, v);
	X509_add_ext(c, e, -1);
	X509_EXTENSION_free(e);
}

/* A key and a certificate for cn, signed by ca (NULL: self-signed CA). */
static pair_t make(const char *cn, const pair_t *ca, bool server)
{
	pair_t p = {EVP_EC_gen("P-256"), X509_new()};
	static atomic_long serial = 1;
	X509_set_version(p.cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(p.cert), atomic_fetch_add(&serial, 1));
	X509_gmtime_adj(X509_getm_notBefore(p.cert), -60);
	X509_gmtime_adj(X509_getm_notAfter(p.cert), 3600);
	X509_set_pubkey(p.cert, p.key);
	X509_NAME *n = X509_get_subject_name(p.cert);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(p.cert, ca ? X509_get_subject_name(ca->cert) : n);
	X509 *is = ca ? ca->cert : p.cert;
	ext(p.cert, is, NID_basic_constraints, ca ? "critical,CA:FALSE" : "critical,CA:TRUE");
	ext(p.cert, is, NID_key_usage, ca ? "critical,digitalSignature" : "critical,keyCertSign");
	if (server)
		ext(p.cert, is, NID_subject_alt_name, "IP:127.0.0.1");
	if (ca)
		ext(p.cert, is, NID_ext_key_usage, server ? "serverAuth" : "clientAuth");
	X509_sign(p.cert, ca ? ca->key : p.key, EVP_sha256());
	return p;
}

static void drop(pair_t *p)
{
	EVP_PKEY_free(p->key);
	X509_free(p->cert);
}

/* A certificate's or a key's PEM text, malloc'ed. */
static char *pem(X509 *c, EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	if (c)
		PEM_write_bio_X509(b, c);
	else
		PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	char *d;
	long n = BIO_get_mem_data(b, &d);
	char *s = calloc(1, (size_t)n + 1);
	memcpy(s, d, (size_t)n);
	BIO_free(b);
	return s;
}

typedef struct server {
	SSL_CTX *ctx;
	int fd, port;
	atomic_int stop, handshakes, requests;
	atomic_int resumed;       /* handshakes that resumed a session */
	pthread_t th;
} server_t;

/* Answers every request of one connection with "{}" until it closes. */
static void serve_conn(server_t *s, SSL *ssl)
{
	char buf[8192];
	size_t n = 0;
	for (;;) {
		int r = SSL_read(ssl, buf + n, (int)(sizeof buf - 1 - n));
		if (r <= 0)
			return;
		n += (size_t)r;
		buf[n] = '\0';
		char *end;
		while ((end = strstr(buf, "\r\n\r\n"))) {
			const char *a = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					"Content-Length: 2\r\n\r\n{}";
			atomic_fetch_add(&s->requests, 1);
			if (SSL_write(ssl, a, (int)strlen(a)) <= 0)
				return;
			size_t used = (size_t)(end + 4 - buf);
			memmove(buf, buf + used, n - used + 1);
			n -= used;
		}
		if (n >= sizeof buf - 1)
			return;
	}
}

static void *serve(void *arg)
{
	server_t *s = arg;
	while (!atomic_load(&s->stop)) {
		struct pollfd p = {s->fd, POLLIN, 0};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		SSL *ssl = SSL_new(s->ctx);
		SSL_set_fd(ssl, c);
		if (SSL_accept(ssl) == 1) {
			atomic_fetch_add(&s->handshakes, 1);
			if (SSL_session_reused(ssl))
				atomic_fetch_add(&s->resumed, 1);
			serve_conn(s, ssl);
		}
		SSL_free(ssl);
		close(c);
	}
	return NULL;
}

static bool server_start(server_t *s, const pair_t *ca, const pair_t *srv, bool tickets)
{
	memset(s, 0, sizeof *s);
	s->ctx = SSL_CTX_new(TLS_server_method());
	SSL_CTX_use_certificate(s->ctx, srv->cert);
	SSL_CTX_use_PrivateKey(s->ctx, srv->key);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(s->ctx), ca->cert);
	SSL_CTX_set_verify(s->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	/* as muster up before round 13's second part: no resumption; or
	 * TLS 1.3 tickets, as Go's server and muster up now send them */
	SSL_CTX_set_num_tickets(s->ctx, tickets ? 2 : 0);
	SSL_CTX_set_session_id_context(s->ctx, (const unsigned char *)"t", 1);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (bind(s->fd, (struct sockaddr *)&a, sizeof a) || listen(s->fd, 8) ||
	    getsockname(s->fd, (struct sockaddr *)&a, &al))
		return false;
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->th, NULL, serve, s) == 0;
}

static void server_stop(server_t *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->th, NULL);
	close(s->fd);
	SSL_CTX_free(s->ctx);
}

/* n GETs over one connection of cfg: the last status (0: none). */
static long get(const mu_kube_config_t *cfg, int n)
{
	mu__kauth_t a;
	mu__kc_t *c = NULL;
	long st = 0;
	mu__kauth_init(&a, cfg);
	if (mu__kc_new(&a, &c) == MU_OK)
		for (int i = 0; i < n; i++) {
			mu__kresp_t r;
			mu__kc_do(c, "GET", "/api", NULL, NULL, 5000, &r);
			st = r.status;
			mu__kresp_release(&r);
		}
	mu__kc_free(c);
	mu__kauth_release(&a);
	return st;
}

static pair_t ca, other, srv, cli;

static void test_connections(mu_t_t *t)
{
	server_t s;
	CHECK(t, server_start(&s, &ca, &srv, false));
	char url[64];
	snprintf(url, sizeof url, "https://127.0.0.1:%d", s.port);
	mu_kube_config_t cfg = {.server = url, .ca_pem = pem(ca.cert, NULL),
				.cert_pem = pem(cli.cert, NULL), .key_pem = pem(NULL, cli.key)};
	cfg.tls = mu__ktls_new(&cfg);
	CHECK(t, cfg.tls && mu__ktls_has_cas(cfg.tls) && mu__ktls_has_cert(cfg.tls));
	/* answered, both requests over one handshake */
	CHECK_EQ_INT(t, get(&cfg, 2), 200);
	CHECK_EQ_INT(t, atomic_load(&s.handshakes), 1);
	CHECK_EQ_INT(t, atomic_load(&s.requests), 2);
	/* another client: a connection, and a handshake, of its own */
	CHECK_EQ_INT(t, get(&cfg, 1), 200);
	CHECK_EQ_INT(t, atomic_load(&s.handshakes), 2);
	/* a CA that did not sign the server's certificate: refused */
	mu_kube_config_t bad = cfg;
	bad.ca_pem = pem(other.cert, NULL);
	bad.tls = mu__ktls_new(&bad);
	CHECK(t, bad.tls != NULL);
	CHECK_EQ_INT(t, get(&bad, 1), 0);
	/* no client certificate: the server refuses the handshake */
	mu_kube_config_t anon = {.server = url, .ca_pem = cfg.ca_pem};
	anon.tls = mu__ktls_new(&anon);
	CHECK(t, anon.tls && mu__ktls_has_cas(anon.tls) && !mu__ktls_has_cert(anon.tls));
	CHECK_EQ_INT(t, get(&anon, 1), 0);
	/* the same without the decoded data: libcurl's own loading agrees */
	mu_kube_config_t plain = cfg;
	plain.tls = NULL;
	CHECK_EQ_INT(t, get(&plain, 1), 200);
	mu__ktls_free(bad.tls);
	bad.tls = NULL;
	CHECK_EQ_INT(t, get(&bad, 1), 0);
	server_stop(&s);
	mu__ktls_free(cfg.tls);
	mu__ktls_free(anon.tls);
	free(bad.ca_pem);
	free(cfg.ca_pem);
	free(cfg.cert_pem);
	free(cfg.key_pem);
}

/* A server that sends session tickets: a second client of the same config
 * resumes the session the first one got (the config's share, ktls.c); a
 * client of another config, even with the same certificate, does not. */
static void test_resume(mu_t_t *t)
{
	server_t s;
	CHECK(t, server_start(&s, &ca, &srv, true));
	char url[64];
	snprintf(url, sizeof url, "https://127.0.0.1:%d", s.port);
	mu_kube_config_t cfg = {.server = url, .ca_pem = pem(ca.cert, NULL),
				.cert_pem = pem(cli.cert, NULL), .key_pem = pem(NULL, cli.key)};
	cfg.tls = mu__ktls_new(&cfg);
	CHECK(t, mu__ktls_share(cfg.tls) != NULL);
	CHECK_EQ_INT(t, get(&cfg, 1), 200);
	CHECK_EQ_INT(t, atomic_load(&s.handshakes), 1);
	CHECK_EQ_INT(t, atomic_load(&s.resumed), 0);
	/* another client of the config: its connection resumes */
	CHECK_EQ_INT(t, get(&cfg, 2), 200);
	CHECK_EQ_INT(t, atomic_load(&s.handshakes), 2);
	CHECK_EQ_INT(t, atomic_load(&s.resumed), 1);
	/* another config: a full handshake of its own, then its own resumes */
	mu_kube_config_t cfg2 = cfg;
	cfg2.tls = mu__ktls_new(&cfg2);
	CHECK_EQ_INT(t, get(&cfg2, 1), 200);
	CHECK_EQ_INT(t, atomic_load(&s.handshakes), 3);
	CHECK_EQ_INT(t, atomic_load(&s.resumed), 1);
	CHECK_EQ_INT(t, get(&cfg2, 1), 200);
	CHECK_EQ_INT(t, atomic_load(&s.resumed), 2);
	server_stop(&s);
	mu__ktls_free(cfg.tls);
	mu__ktls_free(cfg2.tls);
	free(cfg.ca_pem);
	free(cfg.cert_pem);
	free(cfg.key_pem);
}

/* The base64 of s, malloc'ed. */
static char *b64(const char *s)
{
	size_t n = strlen(s), cap = (n + 2) / 3 * 4 + 1;
	unsigned char *o = malloc(cap);
	EVP_EncodeBlock(o, (const unsigned char *)s, (int)n);
	return (char *)o;
}

static void test_decode(mu_t_t *t)
{
	char *capem = pem(ca.cert, NULL), *cert = pem(cli.cert, NULL), *key = pem(NULL, cli.key);
	char *okey = pem(NULL, other.key);
	char *a = b64(capem), *b = b64(cert), *c = b64(key);
	char kc[16384], err[256];
	snprintf(kc, sizeof kc, "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
		 "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1', "
		 "certificate-authority-data: %s}\n"
		 "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
		 "users:\n- name: u\n  user: {client-certificate-data: %s, client-key-data: %s}\n",
		 a, b, c);
	mu_kube_config_t cfg;
	CHECK_EQ_INT(t, mu_kube_config_parse("kc", kc, strlen(kc), NULL, &cfg, err, sizeof err), MU_OK);
	/* the loader decodes the -data fields once */
	CHECK(t, cfg.tls && mu__ktls_has_cas(cfg.tls) && mu__ktls_has_cert(cfg.tls));
	mu_kube_config_release(&cfg);
	CHECK(t, cfg.tls == NULL);
	/* a key that is not the certificate's: no pair (libcurl refuses it) */
	mu_kube_config_t m = {.ca_pem = capem, .cert_pem = cert, .key_pem = okey};
	mu_kube_tls_t *x = mu__ktls_new(&m);
	CHECK(t, x && mu__ktls_has_cas(x) && !mu__ktls_has_cert(x));
	mu__ktls_free(x);
	/* no PEM at all, or insecure: nothing decoded */
	mu_kube_config_t g = {.ca_pem = "-----BEGIN CERTIFICATE-----\nxx\n", .cert_pem = "a",
			      .key_pem = "b"};
	CHECK(t, mu__ktls_new(&g) == NULL);
	mu_kube_config_t ins = {.ca_pem = capem, .insecure = true};
	CHECK(t, mu__ktls_new(&ins) == NULL);
	free(capem);
	free(cert);
	free(key);
	free(okey);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	ca = make("test-ca", NULL, false);
	other = make("other-ca", NULL, false);
	srv = make("server", &ca, true);
	cli = make("client", &ca, false);
	MU_RUN(&t, test_connections);
	MU_RUN(&t, test_resume);
	MU_RUN(&t, test_decode);
	drop(&ca);
	drop(&other);
	drop(&srv);
	drop(&cli);
	return mu_t_done(&t);
}
