/*
 * fuzz_jwt.c - libFuzzer target for what muster up parses of a bearer
 * token before trusting it (src/apiserver/satoken.c): the compact JWS of
 * a service account token (base64url, the header's JSON, the ES256
 * signature, the claims) and the protobuf TokenRequest body of `kubectl
 * create token`.  The input is tried as a token, as a token whose
 * signature is replaced by a valid one of its first two parts (so the
 * claims parser is reached), and as a TokenRequest body.  A token this
 * key signed must verify to the claims it was made from; nothing may
 * crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	mu__sakey_free(k);
	free(tok);
	return 0;
}
