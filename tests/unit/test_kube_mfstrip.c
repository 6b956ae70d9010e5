/*
 * test_kube_mfstrip.c - the daemon's cut of metadata.managedFields out of
 * a watch event's or a list's text before parsing (src/kube/mfstrip.c):
 * the member in every position, in every item of a list, names and values that only look like it, text it must
 * leave alone, and the real Pod fixture of ../shared/data/k8s wrapped in a
 * MODIFIED event (its tree must come out equal to the fixture's without
 * managedFields, and smaller).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kube/kube_int.h"

/* Deletes object.metadata.managedFields and items[*].metadata.managedFields
 * of a parsed event or list. */
static void drop_mf(json_t *j)
{
	json_object_del(json_object_get(json_object_get(j, "object"), "metadata"), "managedFields");
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(j, "items"), i, it)
		json_object_del(json_object_get(it, "metadata"), "managedFields");
}

/* Cuts in a copy of in; checks that the result parses to in's tree
 * without those managedFields, and that it is want bytes. */
static void expect(mu_t_t *t, const char *in, const char *want)
{
	size_t len = strlen(in);
	char *s = strdup(in);
	size_t n = mu__kstrip_mf(s, len);
	CHECK_EQ_INT(t, (long)n, (long)strlen(s));
	CHECK_STR(t, s, want);
	json_t *a = json_loads(in, 0, NULL), *b = json_loadb(s, n, 0, NULL);
	if (a) {
		drop_mf(a);
		CHECK(t, b && json_equal(a, b));
	}
	json_decref(a);
	json_decref(b);
	free(s);
}

static void test_positions(mu_t_t *t)
{
	expect(t, "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":[{\"m\":\"k\"}],"
		  "\"uid\":\"u\"},\"spec\":{}}}",
	       "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{}}}");
	expect(t, "{\"object\":{\"metadata\":{\"managedFields\":[], \"name\":\"p\"}}}",
	       "{\"object\":{\"metadata\":{ \"name\":\"p\"}}}");
	expect(t, "{\"object\":{\"metadata\":{\"name\":\"p\" , \"managedFields\" : [ {\"a\":\"]}\\\"\"} ] }}}",
	       "{\"object\":{\"metadata\":{\"name\":\"p\"  }}}");
	expect(t, "{\"object\":{\"metadata\":{\"managedFields\":{\"a\":[1,{\"b\":\"}\"}]}}}}",
	       "{\"object\":{\"metadata\":{}}}");
	expect(t, "{\"object\":{\"metadata\":{\"managedFields\":null}}}", "{\"object\":{\"metadata\":{}}}");
	/* a repeated name (the parser keeps the last): both go */
	expect(t, "{\"object\":{\"metadata\":{\"managedFields\":1,\"a\":2,\"managedFields\":[3]}}}",
	       "{\"object\":{\"metadata\":{\"a\":2}}}");
}

static void test_lists(mu_t_t *t)
{
	expect(t, "{\"kind\":\"PodList\",\"metadata\":{\"managedFields\":1,\"resourceVersion\":\"9\"},"
		  "\"items\":[{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"m\":1}]},\"spec\":{}},"
		  "{\"metadata\":{\"managedFields\":[],\"name\":\"b\"}},{\"metadata\":{\"name\":\"c\"}},"
		  "{\"spec\":{\"metadata\":{\"managedFields\":1}}}]}",
	       "{\"kind\":\"PodList\",\"metadata\":{\"managedFields\":1,\"resourceVersion\":\"9\"},"
	       "\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{}},"
	       "{\"metadata\":{\"name\":\"b\"}},{\"metadata\":{\"name\":\"c\"}},"
	       "{\"spec\":{\"metadata\":{\"managedFields\":1}}}]}");
	/* items nested anywhere but at the top are left alone */
	const char *keep = "{\"x\":{\"items\":[{\"metadata\":{\"managedFields\":1}}]},\"items\":{\"metadata\":"
			   "{\"managedFields\":1}}}";
	expect(t, keep, keep);
}

static void test_lookalikes(mu_t_t *t)
{
	/* in spec, in annotations, as a value, outside the event's object,
	 * after an escaped quote: all kept */
	const char *keep[] = {
		"{\"object\":{\"spec\":{\"managedFields\":1},\"metadata\":{\"annotations\":{\"managedFields\":"
		"\"managedFields\"},\"name\":\"managedFields\"}}}",
		"{\"metadata\":{\"managedFields\":[1]},\"other\":{\"metadata\":{\"managedFields\":[1]}}}",
		"{\"object\":{\"metadata\":{\"name\":\"\\\",\\\"managedFields\\\":[1]\"}}}",
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}",
		"[{\"object\":{\"metadata\":{\"managedFields\":[1]}}}]",
	};
	for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
		expect(t, keep[i], keep[i]);
	/* text that does not end is left as it was */
	const char *bad[] = {"{\"object\":{\"metadata\":{\"managedFields\":[1",
			     "{\"object\":{\"metadata\":{\"managedFields\":[\"]",
			     "{\"object\":{\"metadata\":{\"managedFields\"", "}}}", "{\"object\":{\"metadata\":{\"n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *s = strdup(bad[i]);
		CHECK_EQ_INT(t, (long)mu__kstrip_mf(s, strlen(s)), (long)strlen(bad[i]));
		CHECK_STR(t, s, bad[i]);
		free(s);
	}
	/* nesting deeper than the scanner's bitmap before the member */
	char deep[600] = "{\"object\":{\"metadata\":{\"x\":";
	for (int i = 0; i < 80; i++)
		strcat(deep, "[");
	for (int i = 0; i < 80; i++)
		strcat(deep, "]");
	strcat(deep, ",\"managedFields\":[]}}}");
	char want[600];
	snprintf(want, sizeof want, "%.*s}}}", (int)(strstr(deep, ",\"managedFields\"") - deep), deep);
	expect(t, deep, want);
}

static void test_fixture(mu_t_t *t)
{
	json_t *pod = json_load_file("../shared/data/k8s/core.v1.Pod.json", 0, NULL);
	if (!pod) {
		printf("skipped: ../shared/data not found (fixture test)\n");
		return;
	}
	CHECK(t, json_array_size(json_object_get(json_object_get(pod, "metadata"), "managedFields")) > 0);
	json_t *ev = json_pack("{s:s, s:O}", "type", "MODIFIED", "object", pod);
	char *s = json_dumps(ev, JSON_COMPACT);
	size_t len = strlen(s), n = mu__kstrip_mf(s, len);
	CHECK(t, n < len);
	json_t *got = json_loadb(s, n, 0, NULL);
	json_object_del(json_object_get(pod, "metadata"), "managedFields");
	CHECK(t, got && json_equal(json_object_get(got, "object"), pod));
	json_decref(got);
	free(s);
	json_decref(ev);
	/* a page of two of them */
	json_t *list = json_pack("{s:s, s:{s:s}, s:[O, O]}", "kind", "PodList", "metadata", "resourceVersion", "7",
				 "items", pod, pod);
	json_t *full = json_load_file("../shared/data/k8s/core.v1.Pod.json", 0, NULL);
	json_array_set(json_object_get(list, "items"), 0, full);
	s = json_dumps(list, JSON_COMPACT);
	len = strlen(s);
	n = mu__kstrip_mf(s, len);
	CHECK(t, n < len);
	got = json_loadb(s, n, 0, NULL);
	CHECK(t, got && json_equal(json_array_get(json_object_get(got, "items"), 0), pod) &&
		 json_equal(json_array_get(json_object_get(got, "items"), 1), pod));
	json_decref(got);
	free(s);
	json_decref(full);
	json_decref(list);
	json_decref(pod);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_positions);
	MU_RUN(&t, test_lists);
	MU_RUN(&t, test_lookalikes);
	MU_RUN(&t, test_fixture);
	return mu_t_done(&t);
}
