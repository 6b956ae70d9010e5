/*
 * fuzz_kevent.c - libFuzzer target for the watch cache's read of a watch
 * event's frame without a parse (src/kube/mfstrip.c mu__kevent_scan,
 * round 18).  The input is one line of a watch as a server (a worker
 * cluster: untrusted) sends it, after the managedFields cut.  The scan
 * must never read out of bounds, and it must agree with a full jansson
 * parse of the same text (what the watch cache did before, and still does
 * when the scan refuses):
 *  - what it accepts, jansson parses to an object of exactly "type" and
 *    "object" whose type, metadata.name, metadata.namespace and
 *    metadata.resourceVersion are the scan's bytes (absent where the scan
 *    found none), and whose object is the tree of the object's text the
 *    scan kept (the text the cache parses later);
 *  - what jansson refuses, the scan may accept (it does not check the
 *    object's members), but then jansson refuses the kept object's text
 *    alone too, so that the later parse refuses it (and the cache lists
 *    again) rather than keep something the server never sent whole.
 * The one exception is nesting: an object exactly at jansson's depth limit
 * parses alone but not inside the event; that is allowed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the scan's field (p, n) is within s[0..size) and names the
 * same string as j (a JSON string), or both are absent. */
static bool same(const char *s, size_t size, const char *p, size_t n, const json_t *j)
{
	if (!p)
		return j == NULL;
	if (p < s || p + n > s + size || !json_is_string(j))
		return false;
	return json_string_length(j) == n && !memcmp(json_string_value(j), p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	mu__kevent_t e;
	if (!mu__kevent_scan(s, size, &e))
		return 0;
	if (!e.obj || e.obj < s || e.obj + e.obj_len > s + size || !e.type || !e.name)
		abort();
	for (size_t i = 0; i < e.type_len; i++)
		if (e.type[i] < 'A' || e.type[i] > 'Z')
			abort();
	json_error_t err;
	json_t *whole = json_loadb(s, size, 0, &err);
	json_t *obj = json_loadb(e.obj, e.obj_len, 0, NULL);
	if (!whole) {
		/* the kept text must be refused too (but for the depth limit) */
		if (obj && !strstr(err.text, "depth"))
			abort();
		json_decref(obj);
		return 0;
	}
	json_t *o = json_object_get(whole, "object");
	json_t *md = json_object_get(o, "metadata");
	if (json_object_size(whole) != 2 || !same(s, size, e.type, e.type_len, json_object_get(whole, "type")) ||
	    !json_is_object(o) || !obj || !json_equal(obj, o) || !json_is_object(md) ||
	    !same(s, size, e.name, e.name_len, json_object_get(md, "name")) ||
	    !same(s, size, e.ns, e.ns_len, json_object_get(md, "namespace")) ||
	    !same(s, size, e.rv, e.rv_len, json_object_get(md, "resourceVersion")))
		abort();
	json_decref(obj);
	json_decref(whole);
	return 0;
}
