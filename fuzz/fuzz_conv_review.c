/*
 * fuzz_conv_review.c - libFuzzer target for a conversion webhook's answer
 * (crd_webhook.c), which comes from outside the server: the ConversionReview
 * checks (mu__crd_conv_response) and the converted objects put in place of
 * the originals (mu__crd_conv_merge).  The first byte picks the review
 * version (v1 or v1beta1) and the wanted apiVersion; the rest is the
 * answer.  Invariants: every failure comes with a NUL-terminated message;
 * on success the objects are as many as before, every one in the wanted
 * apiVersion, with the originals' name and uid; nothing crashes or leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/crd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char originals[] =
	"[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Cog\",\"metadata\":{\"name\":\"a\",\"namespace\":\"d\","
	"\"uid\":\"u-a\",\"labels\":{\"x\":\"1\"}},\"spec\":{\"replicas\":1}},"
	"{\"apiVersion\":\"example.com/v2\",\"kind\":\"Cog\",\"metadata\":{\"name\":\"b\",\"namespace\":\"d\"}},"
	"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Cog\",\"metadata\":{\"name\":\"c\",\"namespace\":\"d\","
	"\"uid\":\"u-c\"}}]";

/* Whether the strings at key of a and b are the same (absent as ""). */
static bool same(const json_t *a, const json_t *b, const char *key)
{
	const char *x = mu__jstr(a, key), *y = mu__jstr(b, key);
	return !strcmp(x ? x : "", y ? y : "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *ver = data[0] & 1 ? "v1beta1" : "v1";
	const char *want = data[0] & 2 ? "example.com/v1" : "example.com/v2";
	char err[700];
	memset(err, 0x55, sizeof err);
	json_t *conv = NULL;
	int rc = mu__crd_conv_response((const char *)data + 1, size - 1, ver, "uid-1", &conv, err, sizeof err);
	if (rc != MU_OK) {
		if (conv || !memchr(err, '\0', sizeof err))
			abort();
		return 0;
	}
	if (!json_is_array(conv))
		abort();
	json_t *objs = json_loads(originals, 0, NULL);
	json_t *before = json_deep_copy(objs);
	memset(err, 0x55, sizeof err);
	rc = mu__crd_conv_merge(objs, conv, want, err, sizeof err);
	if (rc != MU_OK && !memchr(err, '\0', sizeof err))
		abort();
	if (rc == MU_OK) {
		if (json_array_size(objs) != json_array_size(before))
			abort();
		for (size_t i = 0; i < json_array_size(objs); i++) {
			const json_t *o = json_array_get(objs, i), *b = json_array_get(before, i);
			if (strcmp(mu__jstr(o, "apiVersion") ? mu__jstr(o, "apiVersion") : "", want) ||
			    !same(o, b, "metadata.name") || !same(o, b, "metadata.uid"))
				abort();
		}
	}
	json_decref(before);
	json_decref(objs);
	json_decref(conv);
	return 0;
}
