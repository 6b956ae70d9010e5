/*
 * test_apiserver_auth.c - RBAC's escalation check (kube's Covers and the
 * text of its missing rules, rbac_escalate.c), service account JWTs
 * (ES256 signing and verification, the time checks, satoken.c) and the
 * protobuf TokenRequest that `kubectl create token` sends, and the
 * bootstrapsigner's detached JWS, and the user impersonation makes (its
 * uid and extras kept), the user record's extra, and signing key rotation
 * (several verifying keys, the JWKS listing each), and round 12's key
 * types (RSA RS256, P-384 ES384, P-521 ES512; weak keys refused).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "apiserver/auth.h"
#include "check.h"

static json_t *J(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	if (!j)
		fprintf(stderr, "bad test JSON: %s\n", text);
	return j;
}

/* The missing-rules text of owner against servant. */
static char *missing(const char *owner, const char *servant)
{
	json_t *o = J(owner), *s = J(servant);
	json_t *m = mu__rbac_uncovered(o, s);
	char *buf = malloc(4096);
	mu__rbac_missing_text(m, buf, 4096);
	json_decref(o);
	json_decref(s);
	json_decref(m);
	return buf;
}

#define MISSING(t, owner, servant, want)            \
	do {                                        \
		char *got_ = missing(owner, servant); \
		CHECK_STR(t, got_, want);           \
		free(got_);                         \
	} while (0)

static void test_covers(mu_t_t *t)
{
	const char *pods_read = "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\",\"list\"]}]";
	/* the same rules, and a subset, are covered */
	MISSING(t, pods_read, pods_read, "");
	MISSING(t, pods_read, "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]", "");
	/* a verb more, one line per resource with its verbs merged (CompactRules) */
	MISSING(t, pods_read,
		"[{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"secrets\"],\"verbs\":[\"get\",\"list\",\"delete\"]}]",
		"{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}\n"
		"{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\" \"delete\"]}");
	/* stars cover everything of their field */
	MISSING(t, "[{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}]",
		"[{\"apiGroups\":[\"apps\"],\"resources\":[\"deployments/scale\"],\"verbs\":[\"patch\"],"
		"\"resourceNames\":[\"x\"]}]", "");
	/* a star granted is only covered by a star held */
	MISSING(t, pods_read, "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"*\"]}]",
		"{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"*\"]}");
	/* resourceNames: a named owner rule covers only those names; an
	 * unnamed servant rule needs an unnamed owner rule */
	const char *named = "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"get\"],"
			    "\"resourceNames\":[\"a\"]}]";
	MISSING(t, named, named, "");
	MISSING(t, named,
		"[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"get\"],\"resourceNames\":[\"a\",\"b\"]}]",
		"{APIGroups:[\"\"], Resources:[\"configmaps\"], ResourceNames:[\"b\"], Verbs:[\"get\"]}");
	MISSING(t, named, "[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"get\"]}]",
		"{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"get\"]}");
	/* non-resource URLs: a trailing star is a prefix */
	MISSING(t, "[{\"nonResourceURLs\":[\"/apis/*\"],\"verbs\":[\"get\"]}]",
		"[{\"nonResourceURLs\":[\"/apis/x\",\"/healthz\"],\"verbs\":[\"get\"]}]",
		"{NonResourceURLs:[\"/healthz\"], Verbs:[\"get\"]}");
	/* a group the owner does not have */
	MISSING(t, pods_read, "[{\"apiGroups\":[\"batch\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]",
		"{APIGroups:[\"batch\"], Resources:[\"pods\"], Verbs:[\"get\"]}");
	/* nothing held covers nothing; lines come sorted */
	MISSING(t, "[]", "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\",\"configmaps\"],\"verbs\":[\"get\"]}]",
		"{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"get\"]}\n"
		"{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}");
}

/* The payload of a compact JWS, replaced by text (signature kept). */
static char *swap_payload(const char *tok, const char *text)
{
	const char *d1 = strchr(tok, '.'), *d2 = strrchr(tok, '.');
	char *p = mu__b64enc(text, strlen(text));
	for (char *q = p; *q; q++)
		*q = *q == '+' ? '-' : *q == '/' ? '_' : *q;
	char *eq = strchr(p, '=');
	if (eq)
		*eq = '\0';
	size_t n = (size_t)(d1 - tok) + strlen(p) + strlen(d2) + 2;
	char *out = malloc(n);
	snprintf(out, n, "%.*s.%s%s", (int)(d1 - tok), tok, p, d2);
	free(p);
	return out;
}

static void test_jwt(mu_t_t *t)
{
	mu__sakey_t *k = mu__sakey_load(NULL), *other = mu__sakey_load(NULL);
	CHECK(t, k && other);
	if (!k || !other)
		return;
	json_t *c = J("{\"iss\":\"" MU__SA_ISSUER "\",\"sub\":\"system:serviceaccount:a:b\",\"exp\":2000,\"nbf\":1000,"
		      "\"iat\":1000,\"aud\":[\"" MU__SA_ISSUER "\"]}");
	char *tok = mu__jwt_sign(k, c);
	CHECK(t, tok && !strncmp(tok, "eyJ", 3));
	json_t *back = tok ? mu__jwt_verify(k, tok) : NULL;
	CHECK(t, back && json_equal(back, c));
	/* another key, a changed payload, a cut signature: refused */
	json_t *x = tok ? mu__jwt_verify(other, tok) : NULL;
	CHECK(t, x == NULL);
	json_decref(x);
	char *forged = tok ? swap_payload(tok, "{\"iss\":\"" MU__SA_ISSUER "\",\"sub\":\"system:masters\"}") : NULL;
	x = forged ? mu__jwt_verify(k, forged) : NULL;
	CHECK(t, forged && x == NULL);
	json_decref(x);
	if (tok) {
		tok[strlen(tok) - 2] = '\0';
		x = mu__jwt_verify(k, tok);
		CHECK(t, x == NULL);
		json_decref(x);
	}
	/* alg none (an unsigned token) is refused */
	x = mu__jwt_verify(k, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.");
	CHECK(t, x == NULL);
	json_decref(x);
	/* the times, with 60 s of leeway */
	char why[120];
	CHECK(t, mu__jwt_check_times(c, 1500, why, sizeof why));
	CHECK(t, mu__jwt_check_times(c, 2060, why, sizeof why));
	CHECK(t, !mu__jwt_check_times(c, 2061, why, sizeof why) && strstr(why, "expired"));
	CHECK(t, mu__jwt_check_times(c, 940, why, sizeof why));
	CHECK(t, !mu__jwt_check_times(c, 939, why, sizeof why));
	/* the JWKS names the key by the kid the tokens carry */
	json_t *jwks = mu__sakey_jwks(k);
	const char *kid = json_string_value(json_object_get(json_array_get(json_object_get(jwks, "keys"), 0), "kid"));
	CHECK(t, kid && strlen(kid) == 43);
	json_decref(jwks);
	free(forged);
	free(tok);
	json_decref(back);
	json_decref(c);
	mu__sakey_free(k);
	mu__sakey_free(other);
}

/* The verified-token memory: a token seen again is not verified again
 * and gives the same claims; a forged or cut token is never taken from
 * it; 300 other tokens push it out, and it is verified once more. */
static void test_jwt_cache(mu_t_t *t)
{
	mu__sakey_t *k = mu__sakey_load(NULL);
	CHECK(t, k != NULL);
	if (!k)
		return;
	json_t *c = J("{\"iss\":\"" MU__SA_ISSUER "\",\"sub\":\"a\",\"exp\":2000}");
	char *tok = mu__jwt_sign(k, c);
	json_t *a = tok ? mu__jwt_verify_cached(k, tok) : NULL, *b = tok ? mu__jwt_verify_cached(k, tok) : NULL;
	CHECK(t, a && b && a != b && json_equal(a, c) && json_equal(b, c));
	CHECK_EQ_INT(t, (int)mu__sakey_verifies(k), 1);
	char *forged = tok ? swap_payload(tok, "{\"iss\":\"" MU__SA_ISSUER "\",\"sub\":\"root\"}") : NULL;
	json_t *x = forged ? mu__jwt_verify_cached(k, forged) : NULL;
	CHECK(t, forged && !x);
	json_decref(x);
	x = forged ? mu__jwt_verify_cached(k, forged) : NULL; /* not remembered */
	CHECK(t, !x);
	CHECK_EQ_INT(t, (int)mu__sakey_verifies(k), 3);
	for (int i = 0; i < 300; i++) {
		json_t *ci = json_pack("{s:s,s:i}", "iss", MU__SA_ISSUER, "n", i);
		char *ti = mu__jwt_sign(k, ci);
		json_t *vi = ti ? mu__jwt_verify_cached(k, ti) : NULL;
		CHECK(t, vi && json_equal(vi, ci));
		json_decref(vi);
		json_decref(ci);
		free(ti);
	}
	CHECK_EQ_INT(t, (int)mu__sakey_verifies(k), 303);
	x = tok ? mu__jwt_verify_cached(k, tok) : NULL;
	CHECK(t, x && json_equal(x, c));
	CHECK(t, mu__sakey_verifies(k) >= 303);
	json_decref(x);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	free(forged);
	free(tok);
	mu__sakey_free(k);
}

static void test_token_request_proto(mu_t_t *t)
{
	/* k8s\0 + Unknown{typeMeta, raw = TokenRequest{spec{audiences "a",
	 * "bb", boundObjectRef{kind Pod, name p}, expirationSeconds 1200}}} */
	static const unsigned char body[] = {
		'k', '8', 's', 0,
		0x0a, 0x02, 0x0a, 0x00,             /* typeMeta (empty apiVersion) */
		0x12, 0x18,                         /* raw, 24 bytes */
		0x12, 0x16,                         /* spec, 22 bytes */
		0x0a, 0x01, 'a',                    /* audiences */
		0x0a, 0x02, 'b', 'b',               /* audiences */
		0x1a, 0x0a, 0x0a, 0x03, 'P', 'o', 'd', 0x1a, 0x01, 'p', 0x22, 0x00, /* boundObjectRef */
		0x20, 0xb0, 0x09,                   /* expirationSeconds 1200 */
	};
	char err[200];
	json_t *j = mu__token_request_proto(body, sizeof body, err, sizeof err);
	CHECK(t, j != NULL);
	CHECK_EQ_INT(t, json_integer_value(mu__jget(j, "spec.expirationSeconds")), 1200);
	CHECK_STR(t, json_string_value(json_array_get(mu__jget(j, "spec.audiences"), 1)), "bb");
	CHECK_STR(t, mu__jstr(j, "spec.boundObjectRef.kind"), "Pod");
	CHECK_STR(t, mu__jstr(j, "spec.boundObjectRef.name"), "p");
	json_decref(j);
	/* cut short anywhere: refused, never read past the end */
	for (size_t n = 4; n < sizeof body; n++) {
		j = mu__token_request_proto(body, n, err, sizeof err);
		CHECK(t, j == NULL);
		json_decref(j);
	}
	j = mu__token_request_proto("{}", 2, err, sizeof err);
	CHECK(t, j == NULL);
}

/* kube's ComputeDetachedSignature: HS256 keyed by "ID.SECRET", the
 * payload left out (the value computed with python3's hmac and base64) */
static void test_jws_detached(mu_t_t *t)
{
	char *sig = mu__jws_detached("hello", "abcdef", "0123456789abcdef");
	CHECK_STR(t, sig, "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..1YKZyvDPfBemGGAy4I6fY-EuFZM-D15UJNRd-3NRdho");
	free(sig);
}

/* kube's WithImpersonation: the groups the new user gets (the requester
 * is in system:masters, so RBAC is not asked and no server is needed). */
static void test_impersonate(mu_t_t *t)
{
	mu__user_t admin;
	memset(&admin, 0, sizeof admin);
	snprintf(admin.name, sizeof admin.name, "admin");
	admin.admin = true;
	char msg[300];
	mu__user_t u = admin;
	mu__hdr_t h1[] = {{"Impersonate-User", "bob"}, {"Impersonate-Group", "viewers"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h1, 2, &u, msg, sizeof msg), 0);
	CHECK_STR(t, u.name, "bob");
	CHECK_EQ_INT(t, u.ngroups, 2);
	CHECK_STR(t, u.groups[0], "viewers");
	CHECK_STR(t, u.groups[1], "system:authenticated");
	CHECK(t, !u.admin);
	u = admin;
	mu__hdr_t h2[] = {{"impersonate-user", "system:serviceaccount:ns1:bot"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h2, 1, &u, msg, sizeof msg), 0);
	CHECK_EQ_INT(t, u.ngroups, 3);
	CHECK_STR(t, u.groups[1], "system:serviceaccounts:ns1");
	CHECK_STR(t, u.groups[2], "system:authenticated");
	u = admin;
	mu__hdr_t h3[] = {{"Impersonate-User", "system:anonymous"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h3, 1, &u, msg, sizeof msg), 0);
	CHECK_EQ_INT(t, u.ngroups, 1);
	CHECK_STR(t, u.groups[0], "system:unauthenticated");
	u = admin;
	mu__hdr_t h4[] = {{"Impersonate-User", "x"}, {"Impersonate-Group", "system:masters"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h4, 2, &u, msg, sizeof msg), 0);
	CHECK(t, u.admin);
	u = admin;
	mu__hdr_t h5[] = {{"Impersonate-Group", "g"}, {"Impersonate-Extra-Scopes", "a"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h5, 2, &u, msg, sizeof msg), 500);
	CHECK(t, strstr(msg, "without impersonating a user") != NULL);
	CHECK_STR(t, u.name, "admin");
	mu__hdr_t h6[] = {{"Accept", "x"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h6, 1, &u, msg, sizeof msg), 0);
	CHECK_STR(t, u.name, "admin");
}

/* The uid and extras asked for are the new user's: a key's %-escapes
 * undone after lower-casing, a key repeated gives two values; the first
 * Impersonate-Uid wins. */
static void test_impersonate_uid_extra(mu_t_t *t)
{
	mu__user_t u;
	memset(&u, 0, sizeof u);
	snprintf(u.name, sizeof u.name, "admin");
	u.admin = true;
	char msg[300];
	mu__hdr_t h[] = {{"Impersonate-User", "bob"},          {"Impersonate-Uid", "u-1"},
			 {"Impersonate-Extra-Scopes", "read"},   {"impersonate-extra-scopes", "write"},
			 {"Impersonate-Extra-Example.com%2FTeam", "ML"}, {"Impersonate-Uid", "u-2"}};
	CHECK_EQ_INT(t, mu__impersonate(NULL, h, 6, &u, msg, sizeof msg), 0);
	CHECK_STR(t, u.name, "bob");
	CHECK_STR(t, u.uid, "u-1");
	CHECK_EQ_INT(t, u.nextra, 3);
	json_t *info = mu__user_info_json(&u);
	json_t *want = J("{\"username\":\"bob\",\"uid\":\"u-1\",\"groups\":[\"system:authenticated\"],"
			 "\"extra\":{\"scopes\":[\"read\",\"write\"],\"example.com/team\":[\"ML\"]}}");
	CHECK(t, json_equal(info, want));
	json_decref(info);
	json_decref(want);
	/* a user without uid or extra shows neither (omitempty) */
	mu__user_t v;
	memset(&v, 0, sizeof v);
	snprintf(v.name, sizeof v.name, "carol");
	info = mu__user_info_json(&v);
	CHECK(t, !json_object_get(info, "uid") && !json_object_get(info, "extra"));
	json_decref(info);
	/* the extra is bounded: a value that does not fit is refused whole */
	char big[MU__USER_EXTRA];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK(t, !mu__user_add_extra(&v, "k", big));
	CHECK_EQ_INT(t, v.nextra, 0);
	CHECK(t, mu__user_add_extra(&v, "k", "v"));
	CHECK_EQ_INT(t, v.nextra, 1);
}

/* Writes a new P-256 key to a temporary PEM file (private, or its public
 * half); the path into path.  false on failure. */
static bool key_file(char *path, size_t len, bool pub, EVP_PKEY **keep)
{
	snprintf(path, len, "/tmp/mu-test-sakey-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return false;
	FILE *f = fdopen(fd, "w");
	EVP_PKEY *pk = *keep ? *keep : EVP_EC_gen("P-256");
	bool ok = f && pk && (pub ? PEM_write_PUBKEY(f, pk) : PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL));
	if (f)
		fclose(f);
	*keep = pk;
	return ok;
}

/* Rotation: tokens of the old key verify while it is listed among the
 * verifying keys, which the JWKS lists by kid; taken out, they do not. */
static void test_jwt_rotation(mu_t_t *t)
{
	char oldp[64], newp[64], newpub[64], bad[64];
	EVP_PKEY *o = NULL, *n = NULL;
	CHECK(t, key_file(oldp, sizeof oldp, false, &o) && key_file(newp, sizeof newp, false, &n) &&
		 key_file(newpub, sizeof newpub, true, &n));
	mu__sakey_t *ko = mu__sakey_load(oldp), *kn = mu__sakey_load(newp);
	CHECK(t, ko && kn);
	if (!ko || !kn)
		goto out;
	json_t *c = J("{\"iss\":\"x\"}");
	char *told = mu__jwt_sign(ko, c), *tnew = mu__jwt_sign(kn, c);
	json_t *x = mu__jwt_verify(kn, told);
	CHECK(t, x == NULL); /* the new key alone does not take the old token */
	json_decref(x);
	char err[300];
	CHECK_EQ_INT(t, mu__sakey_verify_with(kn, oldp, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu__sakey_count(kn), 1); /* listed keys replace the signing key's own */
	x = mu__jwt_verify(kn, tnew);
	CHECK(t, x == NULL);
	json_decref(x);
	CHECK_EQ_INT(t, mu__sakey_verify_with(kn, newpub, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu__sakey_count(kn), 2);
	json_t *a = mu__jwt_verify(kn, told), *b = mu__jwt_verify(kn, tnew);
	CHECK(t, a && b && json_equal(a, c) && json_equal(b, c));
	json_decref(a);
	json_decref(b);
	json_t *jwks = mu__sakey_jwks(kn);
	json_t *keys = json_object_get(jwks, "keys");
	CHECK_EQ_INT(t, (int)json_array_size(keys), 2);
	json_t *jo = mu__sakey_jwks(ko);
	const char *kid_old = json_string_value(json_object_get(json_array_get(json_object_get(jo, "keys"), 0), "kid"));
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(keys, 0), "kid")), kid_old);
	CHECK(t, strcmp(json_string_value(json_object_get(json_array_get(keys, 1), "kid")), kid_old) != 0);
	json_decref(jo);
	json_decref(jwks);
	/* a file with no key, or not a P-256 one, is refused with the reason */
	snprintf(bad, sizeof bad, "/tmp/mu-test-sakey-XXXXXX");
	int fd = mkstemp(bad);
	if (fd >= 0) {
		CHECK(t, write(fd, "not a key\n", 10) == 10);
		close(fd);
	}
	CHECK(t, mu__sakey_verify_with(kn, bad, err, sizeof err) != MU_OK && strstr(err, "holds no PEM key"));
	unlink(bad);
	free(told);
	free(tnew);
	json_decref(c);
out:
	mu__sakey_free(ko);
	mu__sakey_free(kn);
	EVP_PKEY_free(o);
	EVP_PKEY_free(n);
	unlink(oldp);
	unlink(newp);
	unlink(newpub);
}

/* The JWS header's alg of token tok, into out. */
static void header_alg(const char *tok, char *out, size_t cap)
{
	out[0] = '\0';
	const char *dot = tok ? strchr(tok, '.') : NULL;
	if (!dot)
		return;
	char b64[512];
	size_t n = (size_t)(dot - tok), k = 0;
	for (size_t i = 0; i < n && k + 4 < sizeof b64; i++)
		b64[k++] = tok[i] == '-' ? '+' : tok[i] == '_' ? '/' : tok[i];
	while (k % 4)
		b64[k++] = '=';
	b64[k] = '\0';
	char raw[512];
	size_t rl = 0;
	if (mu__b64dec(b64, raw, sizeof raw - 1, &rl) != MU_OK)
		return;
	raw[rl] = '\0';
	json_t *h = json_loads(raw, 0, NULL);
	snprintf(out, cap, "%s", json_string_value(json_object_get(h, "alg")) ? json_string_value(json_object_get(h, "alg")) : "");
	json_decref(h);
}

/* Round 12: kube's key types.  An RSA key signs RS256, a P-384 key ES384,
 * a P-521 key ES512; each token verifies back to its claims under its
 * own key, not under another algorithm's; the JWKS gives each key's kty,
 * crv and alg, the OpenID configuration the algorithms sorted; a 1024-bit
 * RSA key and a secp256k1 key are refused with the reason. */
static void test_jwt_algs(mu_t_t *t)
{
	static const char *const want_alg[] = {"RS256", "ES384", "ES512"};
	static const char *const want_kty[] = {"RSA", "EC", "EC"};
	EVP_PKEY *pk[3] = {EVP_RSA_gen(2048), EVP_EC_gen("P-384"), EVP_EC_gen("P-521")};
	char path[3][64];
	mu__sakey_t *k[3] = {NULL, NULL, NULL};
	char *tok[3] = {NULL, NULL, NULL};
	json_t *c = J("{\"iss\":\"x\",\"sub\":\"y\"}");
	for (int i = 0; i < 3; i++) {
		CHECK(t, pk[i] && key_file(path[i], sizeof path[i], false, &pk[i]));
		k[i] = mu__sakey_load(path[i]);
		CHECK(t, k[i] != NULL);
		if (!k[i])
			continue;
		tok[i] = mu__jwt_sign(k[i], c);
		char alg[32];
		header_alg(tok[i], alg, sizeof alg);
		CHECK_STR(t, alg, want_alg[i]);
		json_t *back = tok[i] ? mu__jwt_verify(k[i], tok[i]) : NULL;
		CHECK(t, back && json_equal(back, c));
		json_decref(back);
		json_t *jwks = mu__sakey_jwks(k[i]);
		json_t *key = json_array_get(json_object_get(jwks, "keys"), 0);
		CHECK_STR(t, json_string_value(json_object_get(key, "kty")), want_kty[i]);
		CHECK_STR(t, json_string_value(json_object_get(key, "alg")), want_alg[i]);
		if (i == 0)
			CHECK_STR(t, json_string_value(json_object_get(key, "e")), "AQAB");
		else
			CHECK_STR(t, json_string_value(json_object_get(key, "crv")), i == 1 ? "P-384" : "P-521");
		json_decref(jwks);
	}
	if (k[0] && k[1] && tok[0] && tok[1]) {
		/* a key checks only tokens of its own algorithm */
		json_t *x = mu__jwt_verify(k[1], tok[0]);
		CHECK(t, x == NULL);
		json_decref(x);
		char err[300];
		CHECK_EQ_INT(t, mu__sakey_verify_with(k[1], path[0], err, sizeof err), MU_OK);
		x = mu__jwt_verify(k[1], tok[0]);
		CHECK(t, x && json_equal(x, c));
		json_decref(x);
		json_t *oc = mu__sa_openid_config(k[1]);
		json_t *algs = json_object_get(oc, "id_token_signing_alg_values_supported");
		CHECK_EQ_INT(t, (int)json_array_size(algs), 1); /* listed keys replace the signing key's own */
		CHECK_STR(t, json_string_value(json_array_get(algs, 0)), "RS256");
		json_decref(oc);
		CHECK_EQ_INT(t, mu__sakey_verify_with(k[1], path[1], err, sizeof err), MU_OK);
		oc = mu__sa_openid_config(k[1]);
		algs = json_object_get(oc, "id_token_signing_alg_values_supported");
		CHECK_EQ_INT(t, (int)json_array_size(algs), 2);
		CHECK_STR(t, json_string_value(json_array_get(algs, 0)), "ES384");
		CHECK_STR(t, json_string_value(json_array_get(algs, 1)), "RS256");
		json_decref(oc);
	}
	EVP_PKEY *weak[2] = {EVP_RSA_gen(1024), EVP_EC_gen("secp256k1")};
	static const char *const why[] = {"an RSA key of 1024 bits (muster takes 2048 to 8192)",
					  "an EC key on curve secp256k1 (kube takes P-256, P-384 and P-521)"};
	for (int i = 0; i < 2; i++) {
		char wp[64], err[300] = "";
		CHECK(t, weak[i] && key_file(wp, sizeof wp, false, &weak[i]));
		mu__sakey_t *w = mu__sakey_load(wp);
		CHECK(t, w == NULL);
		mu__sakey_free(w);
		if (k[0]) {
			CHECK(t, mu__sakey_verify_with(k[0], wp, err, sizeof err) != MU_OK);
			CHECK(t, strstr(err, why[i]) != NULL);
		}
		unlink(wp);
		EVP_PKEY_free(weak[i]);
	}
	for (int i = 0; i < 3; i++) {
		free(tok[i]);
		mu__sakey_free(k[i]);
		EVP_PKEY_free(pk[i]);
		unlink(path[i]);
	}
	json_decref(c);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_covers);
	MU_RUN(&t, test_jwt);
	MU_RUN(&t, test_jwt_cache);
	MU_RUN(&t, test_token_request_proto);
	MU_RUN(&t, test_jws_detached);
	MU_RUN(&t, test_impersonate);
	MU_RUN(&t, test_impersonate_uid_extra);
	MU_RUN(&t, test_jwt_rotation);
	MU_RUN(&t, test_jwt_algs);
	return mu_t_done(&t);
}
