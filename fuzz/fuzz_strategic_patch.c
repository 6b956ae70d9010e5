/*
 * fuzz_strategic_patch.c - libFuzzer target for Kubernetes strategic merge
 * patch (mu__strategic_patch) and RFC 7386 merge patch (mu__merge_patch),
 * the two object patch types of PATCH requests.  The input is a patch
 * body, decoded as PATCH bodies are (mu__json_body) and applied to a fixed
 * pod with keyed lists (containers, env, ports), a set list (finalizers)
 * and an atomic one (args).  Invariants: the result code is one the
 * callers answer (MU_OK, MU_EINVAL: 422, MU_ELIMIT: too deep); the target
 * stays an object no deeper than the body limit allows plus the pod's own
 * depth; nothing crashes or leaks; the same patch applied to the copy
 * mu__json_copy_for makes (it shares with the pod what the patch does not
 * name) answers the same and gives the same text, and leaves the pod it
 * shares members with as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base_pod[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\"},"
	"\"finalizers\":[\"x/y\"]},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"args\":[\"x\"],"
	"\"env\":[{\"name\":\"E\",\"value\":\"1\"}],\"ports\":[{\"containerPort\":80}]},{\"name\":\"d\",\"image\":\"j\"}]}}";

static void one(int (*fn)(json_t *, const json_t *), const json_t *patch)
{
	json_t *doc = json_loads(base_pod, 0, NULL);
	json_t *orig = json_loads(base_pod, 0, NULL);
	json_t *shared = orig ? mu__json_copy_for(orig, patch, fn == mu__merge_patch ? "spec" : NULL) : NULL;
	if (!doc || !shared) {
		json_decref(doc);
		json_decref(orig);
		json_decref(shared);
		return;
	}
	int rc = fn(doc, patch);
	if (rc != MU_OK && rc != MU_EINVAL && rc != MU_ELIMIT && rc != MU_ENOMEM)
		abort();
	if (!json_is_object(doc))
		abort();
	if (rc == MU_OK && mu__json_depth(doc, 4 * MU__MAX_DEPTH) > 2 * MU__MAX_DEPTH)
		abort();
	/* the copy that shares what the patch does not name (a status
	 * PATCH's) patches to the same text, and its original is untouched */
	int rs = fn(shared, patch);
	char *a = json_dumps(doc, JSON_COMPACT), *b = json_dumps(shared, JSON_COMPACT);
	char *o = json_dumps(orig, JSON_COMPACT);
	json_t *base = json_loads(base_pod, 0, NULL);
	char *w = json_dumps(base, JSON_COMPACT);
	if (rs != rc || (rc == MU_OK && (!a || !b || strcmp(a, b))) || !o || !w || strcmp(o, w))
		abort();
	free(a);
	free(b);
	free(o);
	free(w);
	json_decref(base);
	json_decref(shared);
	json_decref(orig);
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *patch = mu__json_body((const char *)data, size, 1 << 20, err, sizeof err);
	if (!patch)
		return 0;
	if (json_is_object(patch)) {
		one(mu__strategic_patch, patch);
		one(mu__merge_patch, patch);
	}
	json_decref(patch);
	return 0;
}
