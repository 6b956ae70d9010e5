/*
 * fuzz_json_patch.c - libFuzzer target for RFC 6902 JSON patches
 * (mu__json_patch).  The input is a patch body; it is decoded as PATCH
 * bodies are (mu__json_body) and applied to a fixed pod.  Invariants: a
 * malformed patch (MU_EPARSE) or a failing operation (MU_EINVAL) comes with
 * a NUL-terminated message; on success the document still exists; nothing
 * crashes or leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base_pod[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a/b\":\"1\",\"~t\":\"2\"}},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"args\":[\"x\",\"y\"]}],\"n\":1.0}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *ops = mu__json_body((const char *)data, size, 1 << 20, err, sizeof err);
	if (!ops)
		return 0;
	json_t *doc = json_loads(base_pod, 0, NULL);
	memset(err, 0x55, sizeof err);
	int rc = mu__json_patch(&doc, ops, err, sizeof err);
	if (rc != MU_OK && rc != MU_EPARSE && rc != MU_EINVAL && rc != MU_ENOMEM)
		abort();
	if (rc != MU_OK && !memchr(err, '\0', sizeof err))
		abort();
	if (rc == MU_OK && !doc)
		abort();
	if (doc && mu__json_depth(doc, 1000) < 0)
		abort();
	json_decref(doc);
	json_decref(ops);
	return 0;
}
