/*
 * test_kube_mfstrip.c - the daemon's cut of metadata.managedFields out of
 * a watch event's or a list's text before parsing (src/kube/mfstrip.c):
 * the member in every position, in every item of a list, names and values that only look like it, text it must
 * leave alone, and the real Pod fixture of ../shared/data/k8s wrapped in a
 * MODIFIED event (its tree must come out equal to the fixture's without
 * managedFields, and smaller); with MU__KSTRIP_POD_STATUS, a pod's status
 * lists the daemon does not read go too, and nothing else; and the cut is
 * linear in the text, however many items a list page holds.  And a watch
 * event's frame read without a parse (mu__kevent_scan, round 17).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

/* Deletes what MU__KSTRIP_POD_STATUS may take from a parsed event or list
 * (each object's status lists the daemon does not read). */
static void drop_status(json_t *j)
{
	static const char *const names[] = {"conditions", "containerStatuses", "initContainerStatuses",
		"ephemeralContainerStatuses"};
	json_t *objs = json_array();
	if (json_object_get(j, "object"))
		json_array_append(objs, json_object_get(j, "object"));
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(j, "items"), i, it)
		json_array_append(objs, it);
	json_array_foreach(objs, i, it)
		for (size_t k = 0; k < sizeof names / sizeof *names; k++)
			json_object_del(json_object_get(it, "status"), names[k]);
	json_decref(objs);
}

/* The pod variant: in a copy of in, both cuts; the result must parse to
 * in's tree without managedFields and those status lists, and be want. */
static void expect_pod(mu_t_t *t, const char *in, const char *want)
{
	size_t len = strlen(in);
	char *s = strdup(in);
	size_t n = mu__kstrip(s, len, MU__KSTRIP_MF | MU__KSTRIP_POD_STATUS);
	CHECK_EQ_INT(t, (long)n, (long)strlen(s));
	CHECK_STR(t, s, want);
	json_t *a = json_loads(in, 0, NULL), *b = json_loadb(s, n, 0, NULL);
	if (a) {
		drop_mf(a);
		drop_status(a);
		CHECK(t, b && json_equal(a, b));
	}
	json_decref(a);
	json_decref(b);
	free(s);
}

static void test_pod_status(mu_t_t *t)
{
	/* every position; phase, startTime and claim statuses stay */
	expect_pod(t, "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":[1]},"
		      "\"status\":{\"conditions\":[{\"type\":\"Ready\"}],\"phase\":\"Running\",\"containerStatuses\":"
		      "[{\"name\":\"c\",\"state\":{\"running\":{}}}],\"startTime\":\"t\",\"resourceClaimStatuses\":[1],"
		      "\"initContainerStatuses\":[],\"ephemeralContainerStatuses\":[]}}}",
		   "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\"},"
		   "\"status\":{\"phase\":\"Running\",\"startTime\":\"t\",\"resourceClaimStatuses\":[1]}}}");
	/* in a list page's items, not in spec, annotations or the list's own status */
	const char *in = "{\"kind\":\"PodList\",\"status\":{\"conditions\":1},\"items\":["
			 "{\"spec\":{\"conditions\":1,\"status\":{\"conditions\":2}},\"status\":{\"conditions\":[]}},"
			 "{\"metadata\":{\"annotations\":{\"conditions\":\"x\"}},\"status\":{\"phase\":\"Pending\","
			 "\"conditions\" : [ ] }}]}";
	expect_pod(t, in, "{\"kind\":\"PodList\",\"status\":{\"conditions\":1},\"items\":["
			  "{\"spec\":{\"conditions\":1,\"status\":{\"conditions\":2}},\"status\":{}},"
			  "{\"metadata\":{\"annotations\":{\"conditions\":\"x\"}},\"status\":{\"phase\":\"Pending\" }}]}");
	/* managedFields alone: the status is left as it was (a node's
	 * conditions are read) */
	const char *node = "{\"object\":{\"status\":{\"conditions\":[{\"type\":\"Ready\"}]}}}";
	char *s = strdup(node);
	CHECK_EQ_INT(t, (long)mu__kstrip_mf(s, strlen(s)), (long)strlen(node));
	CHECK_STR(t, s, node);
	free(s);
}

/* A page of 20,000 items, each with its managedFields: the cut moves what
 * is kept once.  Moving the rest of the page at every cut (as it did)
 * moved about 40 GB here and took tens of seconds of CPU; one pass takes
 * milliseconds, so a second of CPU time is a wide margin on a busy
 * machine. */
static void test_linear(mu_t_t *t)
{
	enum { ITEMS = 20000 };
	const char *item = "{\"metadata\":{\"name\":\"p%05d\",\"managedFields\":[{\"manager\":\"m\","
			   "\"fieldsV1\":{\"f:spec\":{\"f:containers\":{}}}}]},\"spec\":{\"nodeName\":\"n\"},"
			   "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\"}]}}";
	size_t cap = (size_t)ITEMS * 300 + 100, len = 0;
	char *s = malloc(cap);
	if (!s) {
		CHECK(t, 0);
		return;
	}
	len += (size_t)snprintf(s + len, cap - len, "{\"kind\":\"PodList\",\"items\":[");
	for (int i = 0; i < ITEMS; i++) {
		if (i)
			s[len++] = ',';
		len += (size_t)snprintf(s + len, cap - len, item, i);
	}
	len += (size_t)snprintf(s + len, cap - len, "]}");
	clock_t c0 = clock();
	size_t n = mu__kstrip(s, len, MU__KSTRIP_MF | MU__KSTRIP_POD_STATUS);
	double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
	CHECK(t, cpu < 1.0);
	json_t *got = json_loadb(s, n, 0, NULL);
	json_t *items = json_object_get(got, "items");
	CHECK_EQ_INT(t, (long)json_array_size(items), ITEMS);
	json_t *last = json_array_get(items, ITEMS - 1);
	CHECK(t, !json_object_get(json_object_get(last, "metadata"), "managedFields"));
	CHECK(t, !json_object_get(json_object_get(last, "status"), "conditions"));
	CHECK_STR(t, mu__kjs(last, "metadata.name"), "p19999");
	CHECK_STR(t, mu__kjs(last, "status.phase"), "Running");
	json_decref(got);
	free(s);
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
	/* the pod variant: the fixture's status lists go too, nothing else */
	json_t *pst = json_deep_copy(pod);
	ev = json_pack("{s:s, s:O}", "type", "MODIFIED", "object", pst);
	s = json_dumps(ev, JSON_COMPACT);
	n = mu__kstrip(s, strlen(s), MU__KSTRIP_MF | MU__KSTRIP_POD_STATUS);
	got = json_loadb(s, n, 0, NULL);
	drop_status(ev);
	CHECK(t, got && json_equal(got, ev));
	json_decref(got);
	free(s);
	json_decref(ev);
	json_decref(pst);
	json_decref(pod);
}

/* mu__kevent_scan: s's frame read without a parse: the fields as
 * (pointer, length) into s, or false. */
static bool scan(const char *s, mu__kevent_t *e)
{
	return mu__kevent_scan(s, strlen(s), e);
}

static bool is(const char *p, size_t n, const char *want)
{
	return p && n == strlen(want) && !memcmp(p, want, n);
}

/* A watch event's frame (round 17): the type, the object's exact text,
 * the key's name and namespace and the version, the last of a repeated
 * member as a parser keeps it; anything not plain is refused, for the
 * parser: another top-level member, the object first, the type or object given twice, an
 * escape in a name or value read, a non-ASCII name, an object without a
 * name, an unclosed text, text after the event, a lowercase type. */
static void test_event_scan(mu_t_t *t)
{
	mu__kevent_t e;
	const char *a = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-1\","
			"\"namespace\":\"ns\",\"resourceVersion\":\"42\",\"labels\":{\"name\":\"x\"}},"
			"\"spec\":{\"metadata\":{\"name\":\"no\"},\"s\":\"}{\\\"\"}}}\n";
	CHECK(t, scan(a, &e));
	CHECK(t, is(e.type, e.type_len, "MODIFIED"));
	CHECK(t, is(e.name, e.name_len, "p-1"));
	CHECK(t, is(e.ns, e.ns_len, "ns"));
	CHECK(t, is(e.rv, e.rv_len, "42"));
	CHECK(t, e.obj && e.obj[0] == '{' && e.obj[e.obj_len - 1] == '}' && e.obj + e.obj_len == strrchr(a, '}'));
	json_t *o = json_loadb(e.obj, e.obj_len, 0, NULL), *ev = json_loads(a, 0, NULL);
	CHECK(t, o && json_equal(o, json_object_get(ev, "object")));
	json_decref(o);
	json_decref(ev);
	/* spaces, a cluster-scoped object, members in another order, a repeated name: its last */
	CHECK(t, scan(" { \"type\" : \"ADDED\" , \"object\" : { \"metadata\" : { \"resourceVersion\" : \"7\" ,"
		      " \"name\" : \"a\" , \"name\" : \"b\" } } } \n", &e));
	CHECK(t, is(e.name, e.name_len, "b") && !e.ns && is(e.rv, e.rv_len, "7") && is(e.type, e.type_len, "ADDED"));
	CHECK(t, scan("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\","
		      "\"resourceVersion\":\"9\"}}}", &e) && e.name_len == 0);
	static const char *const bad[] = {
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}},\"x\":1}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}},\"x\":{}}",
		"{\"object\":{\"metadata\":{\"name\":\"a\"}},\"type\":\"ADDED\"}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},\"metadata\":7}}",
		"{\"type\":\"ADDED\",\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\\u0062\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"n\\u0061me\":\"a\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xc3\xa9\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"a\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":[]}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}} x",
		"{\"type\":\"added\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
		"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}",
		"{\"type\":\"ADDED\",\"object\":[]}",
		"{\"type\":1,\"object\":{\"metadata\":{\"name\":\"a\"}}}",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		bool r = scan(bad[i], &e);
		if (r)
			printf("scanned, should not: %s\n", bad[i]);
		CHECK(t, !r);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_positions);
	MU_RUN(&t, test_lists);
	MU_RUN(&t, test_lookalikes);
	MU_RUN(&t, test_pod_status);
	MU_RUN(&t, test_linear);
	MU_RUN(&t, test_fixture);
	MU_RUN(&t, test_event_scan);
	return mu_t_done(&t);
}
