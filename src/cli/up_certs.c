/*
 * up_certs.c - the certificates `muster up` makes for itself in its data
 * directory (libcrypto, in process), as kubeadm lays out a control plane's:
 *
 *   DIR/ca.crt, ca.key        its own CA (CN muster-up-ca, CA:TRUE), which
 *                             signs the two below and is the CA the
 *                             kubeconfig trusts and client certificates
 *                             are checked against (--client-ca-file);
 *   DIR/tls.crt, tls.key      the serving certificate (serverAuth, SANs
 *                             127.0.0.1, localhost and the --listen
 *                             address), followed in tls.crt by ca.crt, so
 *                             the file is the whole chain a client needs;
 *   DIR/admin.crt, admin.key  the kubeconfig's client certificate
 *                             (clientAuth, CN admin, O system:masters, the
 *                             user and group kube-apiserver's x509
 *                             authenticator reads from a subject);
 *   DIR/sa.key                the key service account tokens are signed
 *                             with (kubeadm's sa.key; ES256 JWTs).
 *
 * Keys are P-256, files 0600; every certificate is valid from an hour
 * before it was made (as client-go's self-signed ones are, for clients
 * whose clock is a little behind) for ten years.  Made at the first start
 * and reused after; a new CA (none was there) remakes the other two.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "cli/cli.h"

/* Writes PEM text of the n certificates (or, with n 0, the key) to path,
 * made 0600; false on failure. */
static bool pem_write(const char *path, EVP_PKEY *key, X509 *const *crts, int n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return false;
	FILE *f = fdopen(fd, "w");
	BIO *b = f ? BIO_new_fp(f, BIO_NOCLOSE) : NULL;
	bool ok = b != NULL;
	if (ok && !n)
		ok = PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) == 1;
	for (int i = 0; ok && i < n; i++)
		ok = PEM_write_bio_X509(b, crts[i]) == 1;
	BIO_free(b);
	if (f)
		ok = fclose(f) == 0 && ok;
	else
		close(fd);
	return ok;
}

/* Adds the extension nid = value (OpenSSL's config syntax) to x. */
static bool add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	bool ok = e && X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok;
}

/* A random positive 63-bit serial number for x. */
static bool set_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	bool ok = bn && BN_rand(bn, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
		  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok;
}

/* What one certificate says. */
typedef struct spec {
	const char *cn, *org;  /* subject; org may be NULL */
	const char *usage;     /* extendedKeyUsage, NULL for the CA */
	const char *san;       /* subjectAltName or NULL */
} spec_t;

/* A new certificate for pk as sp says, signed by ikey as issuer (both NULL:
 * self-signed, a CA).  The caller owns the result (NULL on failure). */
static X509 *make(const spec_t *sp, EVP_PKEY *pk, X509 *issuer, EVP_PKEY *ikey)
{
	X509 *x = X509_new();
	bool ok = x && X509_set_version(x, 2) && set_serial(x) &&
		  X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
		  X509_gmtime_adj(X509_getm_notAfter(x), 3650L * 86400) && X509_set_pubkey(x, pk);
	X509_NAME *nm = ok ? X509_get_subject_name(x) : NULL;
	ok = ok && nm &&
	     X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)sp->cn, -1, -1, 0) &&
	     (!sp->org ||
	      X509_NAME_add_entry_by_txt(nm, "O", MBSTRING_ASC, (const unsigned char *)sp->org, -1, -1, 0)) &&
	     X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : nm) &&
	     add_ext(x, issuer, NID_subject_key_identifier, "hash");
	if (ok && !issuer)
		ok = add_ext(x, NULL, NID_basic_constraints, "critical,CA:TRUE") &&
		     add_ext(x, NULL, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
	else if (ok)
		ok = add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") &&
		     add_ext(x, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
		     add_ext(x, issuer, NID_ext_key_usage, sp->usage) &&
		     add_ext(x, issuer, NID_authority_key_identifier, "keyid:always") &&
		     (!sp->san || add_ext(x, issuer, NID_subject_alt_name, sp->san));
	ok = ok && X509_sign(x, ikey ? ikey : pk, EVP_sha256()) > 0;
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Makes a key and a certificate signed by the CA and writes them to
 * DIR/NAME.crt (followed by the CA when chain) and DIR/NAME.key. */
static bool make_leaf(const char *dir, const char *name, const spec_t *sp, X509 *ca, EVP_PKEY *cakey, bool chain)
{
	char crt[4096], key[4096];
	snprintf(crt, sizeof crt, "%s/%s.crt", dir, name);
	snprintf(key, sizeof key, "%s/%s.key", dir, name);
	EVP_PKEY *pk = EVP_EC_gen("P-256");
	X509 *x = pk ? make(sp, pk, ca, cakey) : NULL;
	X509 *both[2] = {x, ca};
	bool ok = x && pem_write(key, pk, NULL, 0) && pem_write(crt, NULL, both, chain ? 2 : 1);
	X509_free(x);
	EVP_PKEY_free(pk);
	return ok;
}

/* Reads DIR/ca.crt and DIR/ca.key, or makes and writes them (*made set). */
static bool load_or_make_ca(const char *dir, X509 **ca, EVP_PKEY **key, bool *made)
{
	char crt[4096], kp[4096];
	snprintf(crt, sizeof crt, "%s/ca.crt", dir);
	snprintf(kp, sizeof kp, "%s/ca.key", dir);
	FILE *f = fopen(crt, "r"), *g = fopen(kp, "r");
	*ca = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	*key = g ? PEM_read_PrivateKey(g, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	*made = false;
	if (*ca && *key)
		return true;
	X509_free(*ca);
	EVP_PKEY_free(*key);
	*key = EVP_EC_gen("P-256");
	spec_t sp = {"muster-up-ca", NULL, NULL, NULL};
	*ca = *key ? make(&sp, *key, NULL, NULL) : NULL;
	*made = true;
	return *ca && pem_write(kp, *key, NULL, 0) && pem_write(crt, NULL, ca, 1);
}

/* Whether DIR/NAME.crt and DIR/NAME.key are both there. */
static bool have(const char *dir, const char *name)
{
	char crt[4096], key[4096];
	snprintf(crt, sizeof crt, "%s/%s.crt", dir, name);
	snprintf(key, sizeof key, "%s/%s.key", dir, name);
	return access(crt, R_OK) == 0 && access(key, R_OK) == 0;
}

int mu__cli_up_certs(const char *dir, const char *listen, bool serving, mu__up_certs_t *p)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "muster up: cannot create %s: %s\n", dir, strerror(errno));
		return MU_EXIT_FAIL;
	}
	snprintf(p->ca, sizeof p->ca, "%s/ca.crt", dir);
	snprintf(p->ca_key, sizeof p->ca_key, "%s/ca.key", dir);
	snprintf(p->tls_crt, sizeof p->tls_crt, "%s/tls.crt", dir);
	snprintf(p->tls_key, sizeof p->tls_key, "%s/tls.key", dir);
	snprintf(p->admin_crt, sizeof p->admin_crt, "%s/admin.crt", dir);
	snprintf(p->admin_key, sizeof p->admin_key, "%s/admin.key", dir);
	snprintf(p->sa_key, sizeof p->sa_key, "%s/sa.key", dir);
	char host[64] = "127.0.0.1", san[160];
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	if (colon && (size_t)(colon - listen) < sizeof host && colon > listen)
		snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
	bool extra = strcmp(host, "127.0.0.1") && strcmp(host, "0.0.0.0") && strcmp(host, "localhost");
	snprintf(san, sizeof san, "IP:127.0.0.1,DNS:localhost%s%s", extra ? ",IP:" : "", extra ? host : "");
	X509 *ca;
	EVP_PKEY *key;
	bool made;
	bool ok = load_or_make_ca(dir, &ca, &key, &made);
	spec_t srv = {"muster-up", NULL, "serverAuth", san};
	spec_t adm = {"admin", "system:masters", "clientAuth", NULL};
	if (ok && serving && (made || !have(dir, "tls")))
		ok = make_leaf(dir, "tls", &srv, ca, key, true);
	if (ok && (made || !have(dir, "admin")))
		ok = make_leaf(dir, "admin", &adm, ca, key, false);
	X509_free(ca);
	EVP_PKEY_free(key);
	if (ok && access(p->sa_key, R_OK) != 0) { /* service account tokens' key, as kubeadm's sa.key */
		EVP_PKEY *sk = EVP_EC_gen("P-256");
		ok = sk && pem_write(p->sa_key, sk, NULL, 0);
		EVP_PKEY_free(sk);
	}
	if (!ok) {
		fprintf(stderr, "muster up: cannot make the certificates (CA, serving for %s, client) in %s "
				"(pass --tls-cert and --tls-key, or fix the directory)\n", san, dir);
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}
