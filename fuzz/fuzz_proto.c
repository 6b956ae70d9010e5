/*
 * fuzz_proto.c - libFuzzer target for protobuf request bodies
 * (mu__proto_decode): arbitrary bytes, usually after the "k8s\0" magic.
 * Invariants: either a JSON object with apiVersion and kind, or NULL with a
 * NUL-terminated message; nothing crashes, reads out of bounds or leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	memset(err, 0x55, sizeof err);
	json_t *o = mu__proto_decode(data, size, err, sizeof err);
	if (!o) {
		if (!memchr(err, '\0', sizeof err))
			abort();
		return 0;
	}
	if (!json_is_object(o) || !json_is_string(json_object_get(o, "kind")) ||
	    !json_is_string(json_object_get(o, "apiVersion")))
		abort();
	char *s = json_dumps(o, JSON_COMPACT);
	free(s);
	json_decref(o);
	return 0;
}
