/*
 * satoken.c - service account tokens as signed JWTs, as kube-apiserver
 * issues and checks them (pkg/serviceaccount/jwt.go, claims.go,
 * legacy.go; pkg/registry/core/serviceaccount/storage/token.go).
 *
 * muster up signs with one key (DIR/sa.key, kube's sa.key, a P-256 key
 * made at the first start, or --service-account-signing-key-file) and
 * verifies with that key or with the keys listed by
 * --service-account-key-file (mu__sakey_verify_with, kube's flag: several,
 * so that a key can be rotated; PEM public keys, private keys or
 * certificates, as kube's keyutil reads them).  As kube's
 * pkg/serviceaccount/jwt.go, an RSA key signs RS256 (muster takes 2048 to
 * 8192 bits) and an EC key ES256, ES384 or ES512 by its curve (P-256,
 * P-384, P-521); tokens are compact JWS with that alg and the key's id
 * (`kid`, base64url of the SHA-256 of its public key's DER, as kube's
 * keyIDFromPublicKey); a token is checked with the key its kid names, or
 * with each listed key of its alg when none has it.
 *   - The TokenRequest subresource (POST serviceaccounts/NAME/token,
 *     `kubectl create token NAME --duration D --audience A
 *     --bound-object-kind Pod|Secret|Node --bound-object-name N`) issues
 *     a bound token: iss MU__SA_ISSUER, aud the request's audiences
 *     (default: the issuer, kube's --api-audiences default), exp now +
 *     expirationSeconds (default 3600, at least 600, at most 2^32), jti,
 *     and the kubernetes.io claim naming the namespace, the ServiceAccount
 *     and its uid, the Pod (running as that account), Secret or Node it is
 *     bound to, and a bound pod's node (ServiceAccountTokenPodNodeInfo).
 *     It is accepted while its audience includes the issuer, it has not
 *     expired (60 s leeway, as go-jose), and the ServiceAccount and the
 *     bound Secret, Pod or (directly bound) Node exist with those uids and
 *     were not deleted over 60 s ago, as kube's validator: a
 *     ServiceAccount deleted and made again with the same name does not
 *     accept the old tokens.  The user carries the account's uid and
 *     kube's extras (pod-name, pod-uid, node-name, node-uid,
 *     credential-id JTI=jti).
 *   - kubernetes.io/service-account-token Secrets get a legacy token (iss
 *     kubernetes/serviceaccount, no exp), ca.crt and namespace when they
 *     are created for an existing ServiceAccount, as kube-controller-
 *     manager's tokens controller fills them; such a token is accepted
 *     while that Secret holds it and its ServiceAccount exists.
 *   - /.well-known/openid-configuration and /openid/v1/jwks serve the
 *     issuer and every verifying public key (ServiceAccountIssuerDiscovery).
 *
 * Cost: a check is one signature verification (ECDSA P-256 about 1 M
 * instructions; up to
 * one per listed key, at most MU__SA_MAX_KEYS, for a token whose kid no
 * key has) and one store read per object the token names; the token text read is at most
 * 8 KiB.  The last 256 tokens whose signature verified are remembered
 * (the signature of a token cannot change under the same key), so a
 * client that sends the same token again pays a hash and a copy of its
 * claims; its times, audience and objects are checked on every request.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "apiserver/api_int.h"
#include "apiserver/auth.h"
#include "apiserver/proto.h"

#define MAX_TOKEN 8192
#define VCACHE 256 /* tokens whose signature was verified, remembered */

/* A token whose signature verified, and its claims (owned). */
typedef struct vent {
	uint64_t h;
	char *tok;
	json_t *claims;
} vent_t;

/* The JWS algorithms of the keys kube accepts (pkg/serviceaccount/jwt.go:
 * an RSA key signs RS256, an ECDSA key ES256, ES384 or ES512 by its
 * curve), with the curve's name and coordinate size for the JWKS. */
enum { ALG_ES256, ALG_ES384, ALG_ES512, ALG_RS256, ALG_N };
static const struct {
	const char *name, *crv, *group; /* JWS alg, JWK crv, OpenSSL group */
	size_t csz;                     /* coordinate bytes (EC) */
} ALGS[ALG_N] = {
	{"ES256", "P-256", "prime256v1", 32},
	{"ES384", "P-384", "secp384r1", 48},
	{"ES512", "P-521", "secp521r1", 66},
	{"RS256", NULL, NULL, 0},
};
#define RSA_MIN_BITS 2048
#define RSA_MAX_BITS 8192
#define SIG_MAX (RSA_MAX_BITS / 8) /* the longest signature: an RSA key's size */

/* A verifying key, its kid and algorithm. */
typedef struct vkey {
	EVP_PKEY *pk;
	char kid[64];
	int alg;
} vkey_t;

struct mu__sakey {
	EVP_PKEY *pk;               /* the signing key */
	char kid[64];
	int alg;                    /* its JWS algorithm (ALGS) */
	vkey_t keys[MU__SA_MAX_KEYS]; /* the keys tokens are verified with */
	int nkeys;
	bool listed;                /* keys given (mu__sakey_verify_with), not the signing key's */
	pthread_mutex_t mu;         /* guards vc and verifies */
	vent_t vc[VCACHE];          /* by hash of the token, last one wins */
	uint64_t verifies;          /* signatures checked by verify_cached */
};

/* --- base64url --------------------------------------------------------- */

char *mu__b64url(const void *data, size_t n)
{
	char *s = mu__b64enc(data, n);
	if (!s)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '=')
			continue;
		s[k++] = s[i] == '+' ? '-' : s[i] == '/' ? '_' : s[i];
	}
	s[k] = '\0';
	return s;
}

/* Decodes n characters of base64url (no padding, none of '+/=') into out;
 * false when malformed or longer than cap. */
static bool b64url_dec(const char *in, size_t n, char *out, size_t cap, size_t *outlen)
{
	if (n % 4 == 1 || n > MAX_TOKEN)
		return false;
	char buf[MAX_TOKEN + 4];
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return false;
		buf[i] = c;
	}
	size_t m = n;
	while (m % 4)
		buf[m++] = '=';
	buf[m] = '\0';
	return mu__b64dec(buf, out, cap, outlen) == MU_OK;
}

/* --- the key ----------------------------------------------------------- */

/* The algorithm kube signs or verifies with key pk: RS256 for RSA (here
 * 2048 to 8192 bits), ES256/ES384/ES512 for the P-256/P-384/P-521
 * curves; -1 (why set) for any other key. */
static int key_alg(EVP_PKEY *pk, char *why, size_t len)
{
	int id = EVP_PKEY_get_base_id(pk);
	if (id == EVP_PKEY_RSA) {
		int bits = EVP_PKEY_get_bits(pk);
		if (bits >= RSA_MIN_BITS && bits <= RSA_MAX_BITS)
			return ALG_RS256;
		snprintf(why, len, "an RSA key of %d bits (muster takes %d to %d)", bits, RSA_MIN_BITS, RSA_MAX_BITS);
		return -1;
	}
	char group[64] = "";
	size_t gl = 0;
	if (id == EVP_PKEY_EC && EVP_PKEY_get_utf8_string_param(pk, "group", group, sizeof group, &gl) == 1)
		for (int a = 0; a < ALG_N; a++)
			if (ALGS[a].group && !strcmp(group, ALGS[a].group))
				return a;
	if (id == EVP_PKEY_EC)
		snprintf(why, len, "an EC key on curve %s (kube takes P-256, P-384 and P-521)", group[0] ? group : "?");
	else
		snprintf(why, len, "neither an RSA nor an EC key");
	return -1;
}

/* k's kid (kube's keyIDFromPublicKey: base64url of the SHA-256 of the
 * public key's PKIX DER) and algorithm; false (why set) for a key kube
 * does not take. */
static bool key_info(vkey_t *k, char *why, size_t len)
{
	if ((k->alg = key_alg(k->pk, why, len)) < 0)
		return false;
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(k->pk, &der);
	if (n <= 0) {
		snprintf(why, len, "no public key");
		return false;
	}
	unsigned char md[32];
	unsigned int mdl = 0;
	bool ok = EVP_Digest(der, (size_t)n, md, &mdl, EVP_sha256(), NULL) == 1;
	OPENSSL_free(der);
	char *kid = ok ? mu__b64url(md, mdl) : NULL;
	if (kid)
		snprintf(k->kid, sizeof k->kid, "%s", kid);
	free(kid);
	return kid != NULL;
}

/* A private key pk (taken) as Go's crypto/x509 parses it: an EC key's
 * public point computed from its private scalar (ParseECPrivateKey ignores
 * the one the file holds, so a file whose two halves disagree still signs
 * tokens its own key verifies; OpenSSL kept the stored point, and every
 * token it signed failed to verify: found by fuzz_jwt), a scalar of 0 or
 * not below the curve's order refused; any other key checked as a pair
 * (ParsePKCS1PrivateKey's Validate).  NULL when refused; a public key
 * comes back as it is.  O(one scalar multiplication, or the key check). */
static EVP_PKEY *go_private_key(EVP_PKEY *pk)
{
	BIGNUM *d = NULL;
	if (!pk || EVP_PKEY_get_base_id(pk) != EVP_PKEY_EC) {
		EVP_PKEY_CTX *cx = pk ? EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL) : NULL;
		bool priv = pk && EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_D, &d) == 1;
		if (priv && (!cx || EVP_PKEY_pairwise_check(cx) != 1)) {
			EVP_PKEY_free(pk);
			pk = NULL;
		}
		BN_clear_free(d);
		EVP_PKEY_CTX_free(cx);
		return pk;
	}
	if (EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_PRIV_KEY, &d) != 1)
		return pk; /* public only */
	char group[64] = "";
	size_t gl = 0;
	unsigned char pub[200];
	size_t pl = 0;
	EVP_PKEY *out = NULL;
	EC_GROUP *g = NULL;
	EC_POINT *pt = NULL;
	OSSL_PARAM_BLD *b = NULL;
	OSSL_PARAM *ps = NULL;
	EVP_PKEY_CTX *cx = NULL;
	if (EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &gl) == 1 &&
	    (g = EC_GROUP_new_by_curve_name(OBJ_sn2nid(group))) != NULL && !BN_is_zero(d) &&
	    BN_cmp(d, EC_GROUP_get0_order(g)) < 0 && (pt = EC_POINT_new(g)) != NULL &&
	    EC_POINT_mul(g, pt, d, NULL, NULL, NULL) == 1 &&
	    (pl = EC_POINT_point2oct(g, pt, POINT_CONVERSION_UNCOMPRESSED, pub, sizeof pub, NULL)) > 0 &&
	    (b = OSSL_PARAM_BLD_new()) != NULL &&
	    OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) == 1 &&
	    OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, d) == 1 &&
	    OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, pl) == 1 &&
	    (ps = OSSL_PARAM_BLD_to_param(b)) != NULL && (cx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) != NULL &&
	    EVP_PKEY_fromdata_init(cx) == 1 && EVP_PKEY_fromdata(cx, &out, EVP_PKEY_KEYPAIR, ps) != 1)
		out = NULL;
	EVP_PKEY_CTX_free(cx);
	OSSL_PARAM_free(ps);
	OSSL_PARAM_BLD_free(b);
	EC_POINT_free(pt);
	EC_GROUP_free(g);
	BN_clear_free(d);
	EVP_PKEY_free(pk);
	return out;
}

mu__sakey_t *mu__sakey_load(const char *path)
{
	mu__sakey_t *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	pthread_mutex_init(&k->mu, NULL);
	if (path) {
		FILE *f = fopen(path, "r");
		k->pk = f ? go_private_key(PEM_read_PrivateKey(f, NULL, NULL, NULL)) : NULL;
		if (f)
			fclose(f);
	} else {
		k->pk = EVP_EC_gen("P-256");
	}
	vkey_t *v = &k->keys[0];
	v->pk = k->pk;
	char why[160];
	if (!k->pk || !key_info(v, why, sizeof why) || EVP_PKEY_up_ref(k->pk) != 1) {
		v->pk = NULL;
		mu__sakey_free(k);
		return NULL;
	}
	k->nkeys = 1; /* verified with itself until keys are listed */
	memcpy(k->kid, v->kid, sizeof k->kid);
	k->alg = v->alg;
	return k;
}

int mu__sakey_verify_with(mu__sakey_t *k, const char *path, char *err, size_t len)
{
	if (!k->listed) {
		for (int i = 0; i < k->nkeys; i++)
			EVP_PKEY_free(k->keys[i].pk);
		memset(k->keys, 0, sizeof k->keys);
		k->nkeys = 0;
		k->listed = true;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, len, "cannot read the service account key file %s", path);
		return MU_EIO;
	}
	int rc = MU_OK, found = 0;
	char *name = NULL, *hdr = NULL;
	unsigned char *data = NULL;
	long dl = 0;
	while (rc == MU_OK && PEM_read(f, &name, &hdr, &data, &dl) == 1) {
		const unsigned char *p = data;
		EVP_PKEY *pk = NULL;
		/* the blocks kube's keyutil.ParsePublicKeysPEM reads */
		if (!strcmp(name, "PUBLIC KEY")) {
			pk = d2i_PUBKEY(NULL, &p, dl);
		} else if (!strcmp(name, "RSA PUBLIC KEY")) {
			pk = d2i_PublicKey(EVP_PKEY_RSA, NULL, &p, dl);
		} else if (!strcmp(name, "PRIVATE KEY") || !strcmp(name, "EC PRIVATE KEY") ||
			   !strcmp(name, "RSA PRIVATE KEY")) {
			pk = go_private_key(d2i_AutoPrivateKey(NULL, &p, dl));
		} else if (!strcmp(name, "CERTIFICATE")) {
			X509 *c = d2i_X509(NULL, &p, dl);
			pk = c ? X509_get_pubkey(c) : NULL;
			X509_free(c);
		}
		char why[160] = "not a key";
		vkey_t *v = &k->keys[k->nkeys < MU__SA_MAX_KEYS ? k->nkeys : 0];
		if (!strcmp(name, "EC PARAMETERS")) {
			/* openssl ecparam -genkey writes these before the key */
		} else if (k->nkeys >= MU__SA_MAX_KEYS) {
			snprintf(err, len, "%s: more than %d service account keys", path, MU__SA_MAX_KEYS);
			rc = MU_ELIMIT;
		} else {
			v->pk = pk;
			if (!pk || !key_info(v, why, sizeof why)) {
				snprintf(err, len, "%s: a %s block that is %s", path, name, why);
				v->pk = NULL;
				rc = MU_EINVAL;
			} else {
				pk = NULL;
				k->nkeys++;
				found++;
			}
		}
		EVP_PKEY_free(pk);
		OPENSSL_free(name);
		OPENSSL_free(hdr);
		OPENSSL_free(data);
		name = hdr = NULL;
		data = NULL;
	}
	fclose(f);
	if (rc == MU_OK && !found) {
		snprintf(err, len, "%s holds no PEM key", path);
		rc = MU_EINVAL;
	}
	return rc;
}

int mu__sakey_count(const mu__sakey_t *k)
{
	return k->nkeys;
}

void mu__sakey_free(mu__sakey_t *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pk);
	for (int i = 0; i < k->nkeys; i++)
		EVP_PKEY_free(k->keys[i].pk);
	for (int i = 0; i < VCACHE; i++) {
		free(k->vc[i].tok);
		json_decref(k->vc[i].claims);
	}
	pthread_mutex_destroy(&k->mu);
	free(k);
}

/* --- signing and verifying --------------------------------------------- */

/* The digest of algorithm alg. */
static const EVP_MD *alg_md(int alg)
{
	return alg == ALG_ES384 ? EVP_sha384() : alg == ALG_ES512 ? EVP_sha512() : EVP_sha256();
}

/* Signs n bytes of in with pk under alg into sig (the JWS form: r||s of
 * the curve's size for ECDSA, the PKCS #1 v1.5 signature for RSA);
 * *sl its length, 0 on failure.  sig holds SIG_MAX bytes. */
static void jws_sign(EVP_PKEY *pk, int alg, const char *in, size_t n, unsigned char *sig, size_t *sl)
{
	unsigned char der[SIG_MAX + 16];
	size_t dl = sizeof der;
	*sl = 0;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = md && EVP_DigestSignInit(md, NULL, alg_md(alg), NULL, pk) == 1 &&
		  EVP_DigestSign(md, der, &dl, (const unsigned char *)in, n) == 1;
	EVP_MD_CTX_free(md);
	if (!ok)
		return;
	if (alg == ALG_RS256) {
		memcpy(sig, der, dl);
		*sl = dl;
		return;
	}
	const unsigned char *p = der;
	ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dl);
	const BIGNUM *r, *s;
	size_t c = ALGS[alg].csz;
	if (es) {
		ECDSA_SIG_get0(es, &r, &s);
		if (BN_bn2binpad(r, sig, (int)c) == (int)c && BN_bn2binpad(s, sig + c, (int)c) == (int)c)
			*sl = 2 * c;
		ECDSA_SIG_free(es);
	}
}

char *mu__jwt_sign(const mu__sakey_t *k, const json_t *claims)
{
	json_t *hdr = json_pack("{s:s, s:s}", "alg", ALGS[k->alg].name, "kid", k->kid);
	char *h = json_dumps(hdr, JSON_COMPACT), *c = json_dumps(claims, JSON_COMPACT);
	json_decref(hdr);
	char *hb = h ? mu__b64url(h, strlen(h)) : NULL, *cb = c ? mu__b64url(c, strlen(c)) : NULL;
	free(h);
	free(c);
	char *out = NULL;
	size_t ln = hb && cb ? strlen(hb) + strlen(cb) + 1 : 0;
	char *input = ln ? malloc(ln + 1) : NULL;
	unsigned char raw[SIG_MAX];
	size_t rl = 0;
	if (input) {
		snprintf(input, ln + 1, "%s.%s", hb, cb);
		jws_sign(k->pk, k->alg, input, ln, raw, &rl);
	}
	char *sb = rl ? mu__b64url(raw, rl) : NULL;
	size_t ol = ln + 1 + (sb ? strlen(sb) : 0) + 1;
	out = sb ? malloc(ol) : NULL;
	if (out)
		snprintf(out, ol, "%s.%s", input, sb);
	free(sb);
	free(input);
	free(hb);
	free(cb);
	return out;
}

/* Whether sig (sl bytes, the JWS form) signs n bytes of in under key v. */
static bool jws_verify(const vkey_t *v, const unsigned char *sig, size_t sl, const char *in, size_t n)
{
	unsigned char *der = NULL;
	int dl = -1;
	if (v->alg == ALG_RS256) {
		if (sl != (size_t)EVP_PKEY_get_size(v->pk))
			return false;
	} else {
		size_t c = ALGS[v->alg].csz;
		if (sl != 2 * c)
			return false;
		ECDSA_SIG *es = ECDSA_SIG_new();
		BIGNUM *r = BN_bin2bn(sig, (int)c, NULL), *s = BN_bin2bn(sig + c, (int)c, NULL);
		if (es && r && s && ECDSA_SIG_set0(es, r, s) == 1) {
			r = s = NULL;
			dl = i2d_ECDSA_SIG(es, &der);
		}
		BN_free(r);
		BN_free(s);
		ECDSA_SIG_free(es);
		if (dl <= 0)
			return false;
	}
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = md && EVP_DigestVerifyInit(md, NULL, alg_md(v->alg), NULL, v->pk) == 1 &&
		  EVP_DigestVerify(md, der ? der : sig, der ? (size_t)dl : sl, (const unsigned char *)in, n) == 1;
	EVP_MD_CTX_free(md);
	OPENSSL_free(der);
	return ok;
}

json_t *mu__jwt_verify(const mu__sakey_t *k, const char *tok)
{
	size_t n = strnlen(tok, MAX_TOKEN + 1);
	const char *d1 = memchr(tok, '.', n);
	const char *d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - tok)) : NULL;
	if (n > MAX_TOKEN || !d1 || !d2 || memchr(d2 + 1, '.', n - (size_t)(d2 + 1 - tok)))
		return NULL;
	char hb[1024];
	unsigned char sig[SIG_MAX + 4];
	size_t hl, sl;
	if (!b64url_dec(tok, (size_t)(d1 - tok), hb, sizeof hb - 1, &hl) ||
	    !b64url_dec(d2 + 1, n - (size_t)(d2 + 1 - tok), (char *)sig, sizeof sig, &sl))
		return NULL;
	json_t *hdr = json_loadb(hb, hl, JSON_REJECT_DUPLICATES, NULL);
	const char *alg = json_string_value(json_object_get(hdr, "alg"));
	const json_t *kid = json_object_get(hdr, "kid");
	int want = -1;
	for (int a = 0; alg && a < ALG_N; a++)
		if (!strcmp(alg, ALGS[a].name))
			want = a;
	bool ok = json_is_object(hdr) && want >= 0 && (!kid || json_is_string(kid));
	int pick = -1; /* the key the kid names; else each key is tried, as kube's */
	for (int i = 0; ok && kid && i < k->nkeys && pick < 0; i++)
		if (!strcmp(json_string_value(kid), k->keys[i].kid))
			pick = i;
	json_decref(hdr);
	if (!ok)
		return NULL;
	ok = false; /* a key verifies only tokens of its own algorithm, as go-jose */
	for (int i = pick < 0 ? 0 : pick; !ok && i < (pick < 0 ? k->nkeys : pick + 1); i++)
		ok = k->keys[i].alg == want && jws_verify(&k->keys[i], sig, sl, tok, (size_t)(d2 - tok));
	if (!ok)
		return NULL;
	char *pb = malloc(MAX_TOKEN);
	size_t pl;
	json_t *claims = NULL;
	if (pb && b64url_dec(d1 + 1, (size_t)(d2 - d1 - 1), pb, MAX_TOKEN, &pl))
		claims = json_loadb(pb, pl, JSON_REJECT_DUPLICATES, NULL);
	free(pb);
	if (!json_is_object(claims)) {
		json_decref(claims);
		return NULL;
	}
	return claims;
}

/* FNV-1a of the token's text. */
static uint64_t tok_hash(const char *t)
{
	uint64_t h = 14695981039346656037ull;
	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * 1099511628211ull;
	return h;
}

json_t *mu__jwt_verify_cached(mu__sakey_t *k, const char *tok)
{
	if (strnlen(tok, MAX_TOKEN + 1) > MAX_TOKEN)
		return NULL;
	uint64_t h = tok_hash(tok);
	vent_t *e = &k->vc[h % VCACHE];
	json_t *c = NULL;
	pthread_mutex_lock(&k->mu);
	if (e->tok && e->h == h && !strcmp(e->tok, tok))
		c = json_deep_copy(e->claims);
	pthread_mutex_unlock(&k->mu);
	if (c)
		return c;
	pthread_mutex_lock(&k->mu);
	k->verifies++;
	pthread_mutex_unlock(&k->mu);
	if (!(c = mu__jwt_verify(k, tok)))
		return NULL;
	char *t = strdup(tok);
	json_t *keep = json_deep_copy(c);
	if (t && keep) {
		pthread_mutex_lock(&k->mu);
		free(e->tok);
		json_decref(e->claims);
		*e = (vent_t){h, t, keep};
		pthread_mutex_unlock(&k->mu);
	} else {
		free(t);
		json_decref(keep);
	}
	return c;
}

uint64_t mu__sakey_verifies(mu__sakey_t *k)
{
	pthread_mutex_lock(&k->mu);
	uint64_t n = k->verifies;
	pthread_mutex_unlock(&k->mu);
	return n;
}

/* A NumericDate claim (a JSON number); -1 when missing or not one. */
static int64_t num_claim(const json_t *c, const char *k)
{
	const json_t *v = json_object_get(c, k);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : json_is_real(v) ? (int64_t)json_real_value(v) : -1;
}

bool mu__jwt_check_times(const json_t *claims, int64_t now, char *why, size_t len)
{
	const int64_t leeway = 60; /* go-jose's DefaultLeeway */
	int64_t exp = num_claim(claims, "exp"), nbf = num_claim(claims, "nbf"), iat = num_claim(claims, "iat");
	if (json_object_get(claims, "exp") && (exp < 0 || now > exp + leeway)) {
		snprintf(why, len, "square/go-jose/jwt: validation failed, token is expired (exp)");
		return false;
	}
	if (json_object_get(claims, "nbf") && (nbf < 0 || now < nbf - leeway)) {
		snprintf(why, len, "square/go-jose/jwt: validation failed, token not valid yet (nbf)");
		return false;
	}
	if (json_object_get(claims, "iat") && (iat < 0 || now < iat - leeway)) {
		snprintf(why, len, "square/go-jose/jwt: validation field, token issued in the future (iat)");
		return false;
	}
	return true;
}

/* --- discovery ---------------------------------------------------------- */

/* The JWK of verifying key v as kube's JWKS lists it: kty, kid, alg
 * and the public numbers (n, e for RSA; crv, x, y for EC).  New object
 * or NULL. */
static json_t *jwk(const vkey_t *v)
{
	bool rsa = v->alg == ALG_RS256;
	BIGNUM *a = NULL, *b = NULL;
	if (EVP_PKEY_get_bn_param(v->pk, rsa ? "n" : "qx", &a) != 1 ||
	    EVP_PKEY_get_bn_param(v->pk, rsa ? "e" : "qy", &b) != 1) {
		BN_free(a);
		BN_free(b);
		return NULL;
	}
	unsigned char ab[SIG_MAX], bb[SIG_MAX];
	int al = rsa ? BN_bn2bin(a, ab) : BN_bn2binpad(a, ab, (int)ALGS[v->alg].csz);
	int bl = rsa ? BN_bn2bin(b, bb) : BN_bn2binpad(b, bb, (int)ALGS[v->alg].csz);
	BN_free(a);
	BN_free(b);
	char *as = al > 0 ? mu__b64url(ab, (size_t)al) : NULL, *bs = bl > 0 ? mu__b64url(bb, (size_t)bl) : NULL;
	json_t *j = NULL;
	if (as && bs && rsa)
		j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "use", "sig", "kty", "RSA", "kid", v->kid, "alg", "RS256",
			      "n", as, "e", bs);
	else if (as && bs)
		j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "use", "sig", "kty", "EC", "kid", v->kid, "crv",
			      ALGS[v->alg].crv, "alg", ALGS[v->alg].name, "x", as, "y", bs);
	free(as);
	free(bs);
	return j;
}

json_t *mu__sakey_jwks(const mu__sakey_t *k)
{
	json_t *keys = json_array();
	for (int i = 0; i < k->nkeys; i++) {
		json_t *j = jwk(&k->keys[i]);
		if (j)
			json_array_append_new(keys, j);
	}
	return json_pack("{s:o}", "keys", keys);
}

json_t *mu__sa_openid_config(const mu__sakey_t *k)
{
	json_t *algs = json_array(); /* kube: the keys' algorithms, sorted, once each */
	for (int a = 0; a < ALG_N; a++) {
		static const int order[ALG_N] = {ALG_ES256, ALG_ES384, ALG_ES512, ALG_RS256}; /* sorted by name */
		bool any = false;
		for (int i = 0; i < k->nkeys; i++)
			any = any || k->keys[i].alg == order[a];
		if (any)
			json_array_append_new(algs, json_string(ALGS[order[a]].name));
	}
	return json_pack("{s:s, s:s, s:[s], s:[s], s:o}", "issuer", MU__SA_ISSUER, "jwks_uri",
			 MU__SA_ISSUER "/openid/v1/jwks", "response_types_supported", "id_token",
			 "subject_types_supported", "public", "id_token_signing_alg_values_supported", algs);
}

/* --- authentication ------------------------------------------------------ */

/* kube's validator on one object the token names: rt ns/name exists, is
 * not being deleted since before now - 60 s (go-jose's leeway: an object
 * whose deletion is under way, or whose grace ended less than a minute
 * ago, still counts) and has uid (when uid is given and not empty). */
static bool live(mu_apiserver_t *s, int rt, const char *ns, const char *name, const char *uid)
{
	if (!name || !*name)
		return false;
	mu__obj_t *o = mu__store_get(s->store, rt, ns, name);
	bool ok = o && (!uid || !*uid || (o->uid[0] && !strcmp(o->uid, uid)));
	if (ok && o->deleting) {
		json_t *j = mu__obj_parse(o);
		const char *ts = mu__jstr(j, "metadata.deletionTimestamp");
		int64_t at = ts ? mu__parse_rfc3339(ts) : -1;
		ok = at >= 0 && at >= mu__now_s() - 60;
		json_decref(j);
	}
	mu__obj_unref(o);
	return ok;
}

/* kube's ServiceAccountInfo.UserInfo: the user, its two groups and the
 * account's uid. */
static void sa_user(mu__user_t *u, const char *ns, const char *name, const char *uid)
{
	memset(u, 0, sizeof *u);
	snprintf(u->name, sizeof u->name, "system:serviceaccount:%s:%s", ns, name);
	snprintf(u->uid, sizeof u->uid, "%s", uid ? uid : "");
	snprintf(u->groups[0], sizeof u->groups[0], "system:serviceaccounts");
	snprintf(u->groups[1], sizeof u->groups[1], "system:serviceaccounts:%.100s", ns);
	u->ngroups = 2;
}

/* kube's legacy validator: the Secret named in the token holds it, and
 * the ServiceAccount exists (with the uid in the token, when there is
 * one). */
static bool legacy_ok(mu_apiserver_t *s, const json_t *c, const char *bearer, mu__user_t *u)
{
	const char *ns = json_string_value(json_object_get(c, "kubernetes.io/serviceaccount/namespace"));
	const char *sec = json_string_value(json_object_get(c, "kubernetes.io/serviceaccount/secret.name"));
	const char *sa = json_string_value(json_object_get(c, "kubernetes.io/serviceaccount/service-account.name"));
	const char *uid = json_string_value(json_object_get(c, "kubernetes.io/serviceaccount/service-account.uid"));
	if (!ns || !sec || !sa || !*ns || !live(s, MU__RT_SERVICEACCOUNTS, ns, sa, uid))
		return false;
	mu__obj_t *o = mu__store_get(s->store, MU__RT_SECRETS, ns, sec);
	json_t *j = o && !o->deleting ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	const char *tok = json_string_value(json_object_get(json_object_get(j, "data"), "token"));
	char *raw = malloc(MAX_TOKEN + 1);
	size_t n = 0;
	bool ok = tok && raw && mu__b64dec(tok, raw, MAX_TOKEN, &n) == MU_OK;
	if (ok) {
		raw[n] = '\0';
		ok = !strcmp(raw, bearer);
	}
	free(raw);
	json_decref(j);
	if (ok)
		sa_user(u, ns, sa, uid);
	return ok;
}

/* The name and uid of ref (a {name, uid} claim), "" when missing. */
static const char *ref_str(const json_t *ref, const char *k)
{
	const char *v = json_string_value(json_object_get(ref, k));
	return v ? v : "";
}

/* kube's bound token validator (pkg/serviceaccount/claims.go): an
 * audience the server accepts, the ServiceAccount and the bound Secret
 * and Pod alive with the token's uids, and a Node bound directly (not the
 * node of a bound pod, which is only informational) alive with its uid;
 * the user's extra as kube's ServiceAccountInfo.UserInfo: pod-name and
 * pod-uid, node-name (and node-uid when known), credential-id JTI=jti. */
static bool has_aud(const json_t *a, const char *v)
{
	if (json_is_string(a))
		return !strcmp(json_string_value(a), v);
	size_t i;
	json_t *x;
	json_array_foreach(a, i, x)
		if (json_is_string(x) && !strcmp(json_string_value(x), v))
			return true;
	return false;
}

/* kube's audience check of a token whose audiences are a (a string or an
 * array): those of a that want also holds (NULL: the API audiences, the
 * issuer), in a's order, appended to got (may be NULL); true when there
 * is one.  O(|a| x |want|). */
static bool aud_match(const json_t *a, const json_t *want, json_t *got)
{
	json_t *one = json_is_string(a) ? json_pack("[O]", a) : NULL;
	const json_t *list = one ? one : a;
	bool any = false;
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x) {
		const char *v = json_string_value(x);
		if (!v || !(want ? has_aud(want, v) : !strcmp(v, MU__SA_ISSUER)))
			continue;
		any = true;
		if (got)
			json_array_append_new(got, json_string(v));
	}
	json_decref(one);
	return any;
}

static bool bound_ok(mu_apiserver_t *s, const json_t *c, const json_t *want, json_t *got, mu__user_t *u)
{
	bool aud = aud_match(json_object_get(c, "aud"), want, got);
	char why[120];
	if (!aud || !json_object_get(c, "exp") || !mu__jwt_check_times(c, mu__now_s(), why, sizeof why))
		return false;
	const json_t *k = json_object_get(c, "kubernetes.io");
	const char *ns = json_string_value(json_object_get(k, "namespace"));
	const json_t *sa = json_object_get(k, "serviceaccount"), *pod = json_object_get(k, "pod"),
		     *sec = json_object_get(k, "secret"), *node = json_object_get(k, "node");
	const char *name = json_string_value(json_object_get(sa, "name"));
	const char *uid = json_string_value(json_object_get(sa, "uid"));
	if (!ns || !*ns || !uid || !*uid || !live(s, MU__RT_SERVICEACCOUNTS, ns, name, uid))
		return false;
	if (sec && !live(s, MU__RT_SECRETS, ns, ref_str(sec, "name"), ref_str(sec, "uid")))
		return false;
	if (pod && !live(s, MU__RT_PODS, ns, ref_str(pod, "name"), ref_str(pod, "uid")))
		return false;
	if (node && !pod && !live(s, MU__RT_NODES, NULL, ref_str(node, "name"), ref_str(node, "uid")))
		return false;
	sa_user(u, ns, name, uid);
	bool room = true;
	if (pod && *ref_str(pod, "name") && *ref_str(pod, "uid")) {
		room = mu__user_add_extra(u, "authentication.kubernetes.io/pod-name", ref_str(pod, "name")) &&
		       mu__user_add_extra(u, "authentication.kubernetes.io/pod-uid", ref_str(pod, "uid"));
	}
	const char *jti = json_string_value(json_object_get(c, "jti"));
	if (room && jti && *jti) {
		char cred[160];
		snprintf(cred, sizeof cred, "JTI=%s", jti);
		room = mu__user_add_extra(u, "authentication.kubernetes.io/credential-id", cred);
	}
	if (room && node && *ref_str(node, "name")) {
		room = mu__user_add_extra(u, "authentication.kubernetes.io/node-name", ref_str(node, "name"));
		if (room && *ref_str(node, "uid"))
			room = mu__user_add_extra(u, "authentication.kubernetes.io/node-uid", ref_str(node, "uid"));
	}
	return room; /* a token whose extra does not fit names nobody, rather than part of itself */
}

bool mu__sa_authn(mu_apiserver_t *s, const char *bearer, mu__user_t *u)
{
	return mu__sa_authn_aud(s, bearer, NULL, NULL, u, NULL, 0);
}

/* Go's %q of a string list (a string counts as a list of one):
 * ["a" "b"], into out.  Bounded by cap. */
static void go_strs(char *out, size_t cap, const json_t *a)
{
	json_t *one = json_is_string(a) ? json_pack("[O]", a) : NULL;
	const json_t *l = one ? one : a;
	size_t n = (size_t)snprintf(out, cap, "[");
	for (size_t i = 0; i < json_array_size(l) && n + 4 < cap; i++) {
		const char *v = json_string_value(json_array_get(l, i));
		n += (size_t)snprintf(out + n, cap - n, "%s\"", i ? " " : "");
		for (const char *p = v ? v : ""; *p && n + 4 < cap; p++) {
			if (*p == '"' || *p == '\\')
				out[n++] = '\\';
			out[n++] = *p;
		}
		n += (size_t)snprintf(out + n, cap - n, "\"");
	}
	if (n + 1 < cap)
		snprintf(out + n, cap - n, "]");
	json_decref(one);
}

bool mu__sa_authn_aud(mu_apiserver_t *s, const char *bearer, const json_t *want, json_t *got, mu__user_t *u,
		      char *why, size_t wlen)
{
	if (!s->sakey || strncmp(bearer, "eyJ", 3)) /* a JWT's header begins {" */
		return false;
	json_t *c = mu__jwt_verify_cached(s->sakey, bearer);
	const char *iss = json_string_value(json_object_get(c, "iss"));
	bool legacy = iss && !strcmp(iss, MU__SA_LEGACY_ISSUER), bound = iss && !strcmp(iss, MU__SA_ISSUER);
	/* legacy tokens are audience-agnostic: the API audiences implied (the
	 * list is made only for them, or for a message) */
	json_t *api = legacy ? json_pack("[s]", MU__SA_ISSUER) : NULL;
	const json_t *toks = legacy ? api : json_object_get(c, "aud");
	bool ok = false;
	if ((legacy || bound) && !aud_match(toks, want, NULL)) {
		if (why && wlen) { /* kube's jwtTokenAuthenticator message */
			char ta[512], wa[512];
			json_t *dflt = want ? NULL : json_pack("[s]", MU__SA_ISSUER);
			go_strs(ta, sizeof ta, toks);
			go_strs(wa, sizeof wa, want ? want : dflt);
			json_decref(dflt);
			snprintf(why, wlen, "token audiences %s is invalid for the target audiences %s", ta, wa);
		}
	} else if (legacy) {
		ok = legacy_ok(s, c, bearer, u) && aud_match(api, want, got);
	} else if (bound) {
		ok = bound_ok(s, c, want, got, u);
	}
	json_decref(api);
	json_decref(c);
	return ok;
}

/* --- the tokens controller and TokenRequest ------------------------------ */

void mu__sa_secret_fill(mu_apiserver_t *s, json_t *secret)
{
	const char *type = mu__jstr(secret, "type");
	json_t *ann = mu__jget(secret, "metadata.annotations");
	const char *sa = json_string_value(json_object_get(ann, "kubernetes.io/service-account.name"));
	const char *ns = mu__jstr(secret, "metadata.namespace"), *name = mu__jstr(secret, "metadata.name");
	json_t *data = json_object_get(secret, "data");
	if (!s->sakey || !type || strcmp(type, "kubernetes.io/service-account-token") || !sa || !ns || !name ||
	    (data && json_object_get(data, "token")))
		return;
	mu__obj_t *o = mu__store_get(s->store, MU__RT_SERVICEACCOUNTS, ns, sa);
	if (!o)
		return; /* kube's controller deletes such a Secret; here it stays empty */
	char uid[64];
	snprintf(uid, sizeof uid, "%s", o->uid);
	mu__obj_unref(o);
	json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "iss", MU__SA_LEGACY_ISSUER,
			      "kubernetes.io/serviceaccount/namespace", ns, "kubernetes.io/serviceaccount/secret.name",
			      name, "kubernetes.io/serviceaccount/service-account.name", sa,
			      "kubernetes.io/serviceaccount/service-account.uid", uid, "sub", "");
	char sub[600];
	snprintf(sub, sizeof sub, "system:serviceaccount:%s:%s", ns, sa);
	json_object_set_new(c, "sub", json_string(sub));
	char *tok = mu__jwt_sign(s->sakey, c);
	json_decref(c);
	if (!tok)
		return;
	if (!json_is_object(data)) {
		data = json_object();
		json_object_set_new(secret, "data", data);
	}
	char *b = mu__b64enc(tok, strlen(tok)), *nb = mu__b64enc(ns, strlen(ns));
	char *ca = s->client_ca_pem ? mu__b64enc(s->client_ca_pem, strlen(s->client_ca_pem)) : NULL;
	if (b)
		json_object_set_new(data, "token", json_string(b));
	if (nb)
		json_object_set_new(data, "namespace", json_string(nb));
	if (ca)
		json_object_set_new(data, "ca.crt", json_string(ca));
	json_object_set_new(ann, "kubernetes.io/service-account.uid", json_string(uid));
	free(b);
	free(nb);
	free(ca);
	free(tok);
}

/* The uid of object rt ns/name into uid (cut to cap); false when there
 * is none. */
static bool uid_of(mu_apiserver_t *s, int rt, const char *ns, const char *name, char *uid, size_t cap)
{
	mu__obj_t *o = name && *name ? mu__store_get(s->store, rt, ns, name) : NULL;
	if (o)
		snprintf(uid, cap, "%s", o->uid);
	mu__obj_unref(o);
	return o != NULL;
}

/* The bound object of a TokenRequest for ServiceAccount sa, as kube's
 * token REST (pkg/registry/core/serviceaccount/storage/token.go): a Pod
 * of the namespace running as sa (and, as ServiceAccountTokenPodNodeInfo,
 * the node it is bound to: name and uid, or the name alone when that Node
 * is gone), a Secret of the namespace, or a Node.  Its claims go into k8s
 * (pod, secret, node); 0, or an HTTP code with kube's message. */
static int bound_object(mu_apiserver_t *s, const char *ns, const char *sa, const json_t *ref, json_t *k8s,
			char *msg, size_t len)
{
	if (!json_is_object(ref))
		return 0;
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uid = json_string_value(json_object_get(ref, "uid"));
	bool core = !av || !strchr(av, '/'); /* gvk.Group == "" */
	int rt = !core || !kind ? -1 : !strcmp(kind, "Pod") ? MU__RT_PODS : !strcmp(kind, "Secret") ? MU__RT_SECRETS
		 : !strcmp(kind, "Node") ? MU__RT_NODES : -1;
	if (rt < 0) {
		const char *sl = av ? strchr(av, '/') : NULL; /* schema.GroupVersionKind.String() */
		snprintf(msg, len, "cannot bind token to object of type %.*s/%s, Kind=%s", sl ? (int)(sl - av) : 0,
			 av ? av : "", sl ? sl + 1 : av ? av : "", kind ? kind : "");
		return 400;
	}
	const char *plural = rt == MU__RT_PODS ? "pods" : rt == MU__RT_SECRETS ? "secrets" : "nodes";
	mu__obj_t *o = name ? mu__store_get(s->store, rt, rt == MU__RT_NODES ? NULL : ns, name) : NULL;
	if (!o) {
		snprintf(msg, len, "%s \"%s\" not found", plural, name ? name : "");
		return 404;
	}
	char ouid[64], node[256] = "";
	snprintf(ouid, sizeof ouid, "%s", o->uid);
	json_t *j = rt == MU__RT_PODS ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	if (rt == MU__RT_PODS) {
		const char *pod_sa = mu__jstr(j, "spec.serviceAccountName");
		if (!pod_sa || !*pod_sa)
			pod_sa = "default"; /* what ServiceAccount admission sets */
		bool same = !strcmp(pod_sa, sa);
		snprintf(node, sizeof node, "%s", mu__jstr(j, "spec.nodeName") ? mu__jstr(j, "spec.nodeName") : "");
		json_decref(j);
		if (!same) {
			snprintf(msg, len, "cannot bind token for serviceaccount \"%s\" to pod running with different "
					   "serviceaccount name.", sa);
			return 400;
		}
	}
	if (uid && *uid && strcmp(uid, ouid)) {
		snprintf(msg, len, "Operation cannot be fulfilled on %s \"%s\": the UID in the bound object reference "
				   "(%s) does not match the UID in record. The object might have been deleted and then "
				   "recreated", kind, name, uid);
		return 409;
	}
	json_object_set_new(k8s, rt == MU__RT_PODS ? "pod" : rt == MU__RT_SECRETS ? "secret" : "node",
			    json_pack("{s:s, s:s}", "name", name, "uid", ouid));
	char nuid[64];
	if (node[0] && uid_of(s, MU__RT_NODES, NULL, node, nuid, sizeof nuid))
		json_object_set_new(k8s, "node", json_pack("{s:s, s:s}", "name", node, "uid", nuid));
	else if (node[0])
		json_object_set_new(k8s, "node", json_pack("{s:s}", "name", node));
	return 0;
}

void mu__do_token_request(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body)
{
	const char *ns = rq->route.ns, *sa = rq->route.name;
	json_t *spec = json_object_get(body, "spec");
	const json_t *ex = json_object_get(spec, "expirationSeconds");
	json_int_t secs = json_is_integer(ex) ? json_integer_value(ex) : 3600;
	if (secs < 600 || secs > ((json_int_t)1 << 32)) {
		mu__resp_status(rs, 422, "Invalid", "TokenRequest.authentication.k8s.io \"%s\" is invalid: "
				"spec.expirationSeconds: Invalid value: %lld: %s", sa, (long long)secs,
				secs < 600 ? "may not specify a duration less than 10 minutes"
					   : "may not specify a duration larger than 2^32 seconds");
		return;
	}
	mu__obj_t *acct = mu__store_get(s->store, MU__RT_SERVICEACCOUNTS, ns, sa);
	if (!acct || acct->deleting || !s->sakey) {
		mu__obj_unref(acct);
		mu__resp_status(rs, 404, "NotFound", "serviceaccounts \"%s\" not found", sa);
		return;
	}
	char uid[64];
	snprintf(uid, sizeof uid, "%s", acct->uid);
	mu__obj_unref(acct);
	json_t *k8s = json_pack("{s:s, s:{s:s, s:s}}", "namespace", ns, "serviceaccount", "name", sa, "uid", uid);
	char msg[600];
	int code = bound_object(s, ns, sa, json_object_get(spec, "boundObjectRef"), k8s, msg, sizeof msg);
	if (code) {
		json_decref(k8s);
		mu__resp_status(rs, code, code == 404 ? "NotFound" : code == 409 ? "Conflict" : "BadRequest", "%s", msg);
		return;
	}
	json_t *aud = json_object_get(spec, "audiences");
	aud = json_array_size(aud) ? json_deep_copy(aud) : json_pack("[s]", MU__SA_ISSUER);
	if (s->o.sa_max_exp_s > 0 && secs > s->o.sa_max_exp_s) { /* kube's TokenREST, with its warning */
		snprintf(rs->warning, sizeof rs->warning, "requested expiration of %lld seconds shortened to %lld seconds",
			 (long long)secs, (long long)s->o.sa_max_exp_s);
		secs = s->o.sa_max_exp_s;
	}
	int64_t now = mu__now_s();
	/* kube's safe transition (--service-account-extend-token-expiration,
	 * on by default): a pod-bound token asked for 3607 s for the API
	 * audiences, as the kubelet asks for a projected volume, lives a
	 * year and carries warnafter at the time asked for */
	json_int_t life = secs;
	bool api_aud = json_array_size(aud) > 0;
	for (size_t i = 0; i < json_array_size(aud); i++)
		api_aud = api_aud && !strcmp(json_string_value(json_array_get(aud, i)) ? json_string_value(json_array_get(aud, i)) : "",
					     MU__SA_ISSUER);
	if (secs == MU__SA_WARN_ONLY_S && json_object_get(k8s, "pod") && api_aud) {
		life = MU__SA_EXTENDED_S;
		json_object_set_new(k8s, "warnafter", json_integer((json_int_t)(now + secs)));
	}
	char jti[37], sub[600];
	mu__uid(s, jti);
	snprintf(sub, sizeof sub, "system:serviceaccount:%s:%s", ns, sa);
	json_t *c = json_pack("{s:O, s:I, s:I, s:s, s:s, s:o, s:I, s:s}", "aud", aud, "exp", (json_int_t)(now + life),
			      "iat", (json_int_t)now, "iss", MU__SA_ISSUER, "jti", jti, "kubernetes.io", k8s, "nbf",
			      (json_int_t)now, "sub", sub);
	char *tok = c ? mu__jwt_sign(s->sakey, c) : NULL;
	json_decref(c);
	if (!tok) {
		json_decref(aud);
		mu__resp_status(rs, 500, "InternalError", "cannot sign the token");
		return;
	}
	json_t *out = json_is_object(body) ? json_deep_copy(body) : json_object();
	json_object_set_new(out, "kind", json_string("TokenRequest"));
	json_object_set_new(out, "apiVersion", json_string("authentication.k8s.io/v1"));
	json_t *md = json_object_get(out, "metadata");
	if (!json_is_object(md))
		json_object_set_new(out, "metadata", md = json_object());
	json_object_set_new(md, "name", json_string(sa));
	json_object_set_new(md, "namespace", json_string(ns));
	json_t *os = json_object_get(out, "spec");
	if (!json_is_object(os))
		json_object_set_new(out, "spec", os = json_object());
	json_object_set_new(os, "audiences", aud);
	json_object_set_new(os, "expirationSeconds", json_integer(secs));
	char exp[40];
	mu__rfc3339_format((now + secs) * 1000000, false, exp, sizeof exp);
	json_object_set_new(out, "status", json_pack("{s:s, s:s}", "token", tok, "expirationTimestamp", exp));
	free(tok);
	mu__resp_json(rs, 201, out);
}

/* --- a TokenRequest in protobuf ----------------------------------------- */

/* A protobuf reader over [p, end). */
typedef struct pb {
	const unsigned char *p, *end;
} pb_t;

static bool pb_varint(pb_t *b, uint64_t *v)
{
	*v = 0;
	for (int sh = 0; sh < 64 && b->p < b->end; sh += 7) {
		unsigned char c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* The next field: its number and wire type; a length-delimited one's
 * bytes in *sub.  false at the end or when malformed (*bad set). */
static bool pb_next(pb_t *b, unsigned *num, pb_t *sub, uint64_t *val, bool *bad)
{
	uint64_t key;
	if (b->p >= b->end)
		return false;
	if (!pb_varint(b, &key) || key >> 3 == 0 || key >> 3 > 0xffff) {
		*bad = true;
		return false;
	}
	*num = (unsigned)(key >> 3);
	sub->p = sub->end = NULL;
	switch (key & 7) {
	case 0:
		if (!pb_varint(b, val))
			break;
		return true;
	case 1:
	case 5: {
		size_t n = (key & 7) == 1 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			break;
		b->p += n;
		*val = 0;
		return true;
	}
	case 2: {
		uint64_t n;
		if (!pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
			break;
		sub->p = b->p;
		sub->end = b->p + n;
		b->p += n;
		return true;
	}
	default:
		break;
	}
	*bad = true;
	return false;
}

static json_t *pb_str(const pb_t *f)
{
	return f->p ? json_stringn((const char *)f->p, (size_t)(f->end - f->p)) : NULL;
}

/* Sets obj[k] to the string field f (when it is valid UTF-8); false if not
 * a string field. */
static bool pb_set_str(json_t *obj, const char *k, const pb_t *f)
{
	json_t *v = pb_str(f);
	if (!v)
		return false;
	json_object_set_new(obj, k, v);
	return true;
}

json_t *mu__token_request_proto(const void *body, size_t len, char *err, size_t errlen)
{
	pb_t top = {body, (const unsigned char *)body + len}, f, raw = {NULL, NULL};
	unsigned num;
	uint64_t v;
	bool bad = false;
	if (len < 4 || memcmp(body, "k8s\0", 4)) {
		snprintf(err, errlen, "the protobuf body lacks the k8s envelope");
		return NULL;
	}
	top.p += 4;
	while (pb_next(&top, &num, &f, &v, &bad))
		if (num == 2 && f.p)
			raw = f; /* runtime.Unknown's raw: the TokenRequest */
	json_t *out = json_object(), *spec = json_object();
	json_object_set_new(out, "spec", spec);
	pb_t tr = raw, g, h;
	while (!bad && raw.p && pb_next(&tr, &num, &f, &v, &bad)) {
		if (num != 2 || !f.p)
			continue; /* metadata and status are not read */
		while (!bad && pb_next(&f, &num, &g, &v, &bad)) {
			if (num == 1 && g.p) {
				json_t *a = json_object_get(spec, "audiences");
				if (!a)
					json_object_set_new(spec, "audiences", a = json_array());
				json_t *x = pb_str(&g);
				bad = bad || !x;
				if (x)
					json_array_append_new(a, x);
			} else if (num == 4 && !g.p) {
				json_object_set_new(spec, "expirationSeconds", json_integer((json_int_t)v));
			} else if (num == 3 && g.p) {
				json_t *ref = json_object();
				json_object_set_new(spec, "boundObjectRef", ref);
				static const char *const k[] = {NULL, "kind", "apiVersion", "name", "uid"};
				while (!bad && pb_next(&g, &num, &h, &v, &bad))
					if (num >= 1 && num <= 4)
						bad = !pb_set_str(ref, k[num], &h);
			}
		}
	}
	if (bad || !raw.p) {
		snprintf(err, errlen, "the protobuf TokenRequest is malformed");
		json_decref(out);
		return NULL;
	}
	return out;
}
