/*
 * fuzz_jwt.c - libFuzzer target for what muster up parses of a bearer
 * token before trusting it (src/apiserver/satoken.c): the compact JWS of
 * a service account token (base64url, the header's JSON, the ES256
 * signature, the claims) and the protobuf TokenRequest body of `kubectl
 * create token`.  Round 12: the PEM blocks may hold RSA, P-256, P-384 or
 * P-521 keys (or certificates), and a private key is also loaded as the
 * signing key, whose token must verify back to its claims.  The input is tried as a token, as a token whose
 * signature is replaced by a valid one of its first two parts (so the
 * claims parser is reached), and as a TokenRequest body; an input that
 * begins "-----BEGIN" is also read as a --service-account-key-file (PEM
 * blocks of keys: mu__sakey_verify_with), after which the key must
 * hold at most MU__SA_MAX_KEYS keys.  A token this key signed must verify
 * to the claims it was made from; nothing may crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	char *tok = malloc(size + 1);
	if (!tok)
		return 0;
	memcpy(tok, data, size);
	tok[size] = '\0';
	mu__sakey_t *k = mu__sakey_load(NULL);
	if (!k) {
		free(tok);
		return 0;
	}
	json_t *c = mu__jwt_verify(k, tok);
	char why[120];
	if (c)
		(void)mu__jwt_check_times(c, 1000, why, sizeof why);
	json_decref(c);
	/* the input as claims: signed, then verified back to the same */
	json_t *claims = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (json_is_object(claims)) {
		char *signed_tok = mu__jwt_sign(k, claims);
		json_t *back = signed_tok ? mu__jwt_verify(k, signed_tok) : NULL;
		if (signed_tok && strlen(signed_tok) < 8192 && !json_equal(back, claims))
			abort();
		json_decref(back);
		free(signed_tok);
	}
	json_decref(claims);
	char err[200];
	json_t *tr = mu__token_request_proto(data, size, err, sizeof err);
	json_decref(tr);
	if (size >= 10 && !memcmp(data, "-----BEGIN", 10)) {
		char path[] = "/tmp/fuzz-jwt-keys-XXXXXX";
		int fd = mkstemp(path);
		if (fd >= 0) {
			bool whole = write(fd, data, size) == (ssize_t)size;
			close(fd);
			char kerr[512];
			if (whole)
				(void)mu__sakey_verify_with(k, path, kerr, sizeof kerr);
			/* as a signing key: a token it signs verifies to its claims */
			mu__sakey_t *sk = whole ? mu__sakey_load(path) : NULL;
			unlink(path);
			if (sk) {
				json_t *cl = json_pack("{s:s, s:i}", "iss", "fuzz", "exp", 2000);
				char *st = mu__jwt_sign(sk, cl);
				json_t *back = st ? mu__jwt_verify(sk, st) : NULL;
				if (!st || !json_equal(back, cl))
					abort();
				json_decref(back);
				json_decref(cl);
				free(st);
				mu__sakey_free(sk);
			}
			if (mu__sakey_count(k) > MU__SA_MAX_KEYS)
				abort();
			json_t *x = mu__jwt_verify(k, tok);
			json_decref(x);
		}
	}
	mu__sakey_free(k);
	free(tok);
	return 0;
}
