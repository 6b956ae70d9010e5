/*
 * test_jparse.c - the daemon's JSON parser (src/util/jparse.c) against
 * json_loadb: every kind of value, escape, surrogate pair, UTF-8 and
 * number it takes gives json_loadb's tree; every error json_loadb finds
 * it refuses too (and mu__json_loadb then gives json_loadb's NULL); what it
 * leaves to json_loadb (deep nesting, an integer out of range) still
 * comes back equal; and the real Pod fixture of ../shared/data/k8s, as a
 * list page and as a watch event, parses to the same tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/jpath.h"

/* Whether s (n bytes) parses to json_loadb's tree, by the single pass
 * (fast) or else to NULL as json_loadb does. */
static void same(mu_t_t *t, const char *s, size_t n, bool fast)
{
	json_t *want = json_loadb(s, n, 0, NULL), *got = mu__json_fast(s, n), *all = mu__json_loadb(s, n);
	if (fast) {
		CHECK(t, got != NULL);
		CHECK(t, want && got && json_equal(want, got));
		if (want && got) { /* members in the same order */
			char *a = json_dumps(want, JSON_COMPACT), *b = json_dumps(got, JSON_COMPACT);
			CHECK_STR(t, b, a);
			free(a);
			free(b);
		}
	} else {
		CHECK(t, got == NULL);
	}
	CHECK(t, (!want && !all) || (want && all && json_equal(want, all)));
	if (t->cur_failed)
		printf("  input: %.*s\n", (int)n, s);
	json_decref(want);
	json_decref(got);
	json_decref(all);
}

static void test_valid(mu_t_t *t)
{
	const char *ok[] = {
		"{}", "[]", " \t\r\n{ } \n", "[1,-1,0,-0,123456789012345678,-9223372036854775808,9223372036854775807]",
		"[0.5,-0.0,1e3,1E+3,2e-3,1.25e2,1e-400,6.02214076e23]",
		"[true,false,null,\"\",\"a\"]",
		"{\"a\":{\"b\":[{\"c\":null}]},\"d\":[[],[[]],{}]}",
		"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\"]",
		"[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\"]",
		"{\"k\\\"ey\":1,\"\":2,\"\\u00e9\":3}",
		"{\"dup\":1,\"x\":2,\"dup\":3}", /* the last value, in the first place */
		"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
		"\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],\"priority\":0}}}",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		same(t, ok[i], strlen(ok[i]), true);
	/* a long key (off the stack) and a long escaped string */
	char big[4000] = "{\"";
	for (int i = 0; i < 1000; i++)
		strcat(big, "k");
	strcat(big, "\":\"");
	for (int i = 0; i < 300; i++)
		strcat(big, "\\n\\u00e9");
	strcat(big, "\"}");
	same(t, big, strlen(big), true);
	/* bytes past n are not read: no NUL needed */
	same(t, "[1,2]xyz", 5, true);
}

static void test_errors(mu_t_t *t)
{
	const char *bad[] = {
		"", " ", "1", "\"s\"", "null", "{", "[", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[01]", "[-]",
		"[1.]", "[.5]", "[1e]", "[1e+]", "[+1]", "[1x]", "[tru]", "[truex]", "[nul]", "[1 2]", "{} {}",
		"[\"\\u0000\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\\uZZZZ\"]", "[\"\\x\"]",
		"[\"a\x01\"]", "[\"\x80\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]",
		"[\"\xe2\x82\"]", "[\"abc", "[1e400]", "{\"a\":}", "[,1]", "]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		same(t, bad[i], strlen(bad[i]), false);
	same(t, "[\"a\0b\"]", 7, false); /* a NUL in the text */
}

/* What the single pass leaves to json_loadb still comes back right. */
static void test_fallback(mu_t_t *t)
{
	same(t, "[9223372036854775808]", 21, false); /* json_loadb refuses it too */
	char deep[2 * 600 + 1];
	for (int i = 0; i < 600; i++) {
		deep[i] = '[';
		deep[600 + i] = ']';
	}
	same(t, deep, 1200, false); /* json_loadb's tree */
	json_t *v = mu__json_loadb(deep, 1200);
	CHECK(t, v != NULL);
	json_decref(v);
}

/* The strict pass (request bodies) refuses a repeated name at any depth,
 * as json_loadb does with JSON_REJECT_DUPLICATES, and reads the rest as
 * the plain pass does. */
static void test_strict(mu_t_t *t)
{
	const char *dup[] = {"{\"dup\":1,\"x\":2,\"dup\":3}", "[{\"a\":{\"b\":1,\"b\":1}}]", "{\"\":1,\"\":2}"};
	for (size_t i = 0; i < sizeof dup / sizeof *dup; i++) {
		json_t *v = mu__json_fast_strict(dup[i], strlen(dup[i]));
		CHECK(t, v == NULL);
		json_decref(v);
		json_t *w = json_loadb(dup[i], strlen(dup[i]), JSON_REJECT_DUPLICATES, NULL);
		CHECK(t, w == NULL);
		json_decref(w);
	}
	const char *ok = "{\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\"},\"target\":{\"name\":\"n\"},"
			 "\"l\":[{\"a\":1},{\"a\":2}]}";
	json_t *a = mu__json_fast_strict(ok, strlen(ok)), *b = json_loadb(ok, strlen(ok), JSON_REJECT_DUPLICATES, NULL);
	char *x = a ? json_dumps(a, JSON_COMPACT) : NULL, *y = b ? json_dumps(b, JSON_COMPACT) : NULL;
	CHECK(t, x && y && !strcmp(x, y));
	free(x);
	free(y);
	json_decref(a);
	json_decref(b);
}

static void test_fixture(mu_t_t *t)
{
	json_t *pod = json_load_file("../shared/data/k8s/core.v1.Pod.json", 0, NULL);
	if (!pod) {
		printf("skipped: ../shared/data not found (fixture test)\n");
		return;
	}
	json_t *list = json_pack("{s:s,s:{s:s},s:[O,O]}", "kind", "PodList", "metadata", "resourceVersion", "7",
				 "items", pod, pod);
	json_t *ev = json_pack("{s:s,s:O}", "type", "MODIFIED", "object", pod);
	char *a = json_dumps(list, JSON_COMPACT), *b = json_dumps(ev, 0); /* indented too */
	same(t, a, strlen(a), true);
	same(t, b, strlen(b), true);
	free(a);
	free(b);
	json_decref(ev);
	json_decref(list);
	json_decref(pod);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_valid);
	MU_RUN(&t, test_errors);
	MU_RUN(&t, test_fallback);
	MU_RUN(&t, test_strict);
	MU_RUN(&t, test_fixture);
	return mu_t_done(&t);
}
