/*
 * test_apiserver_patch.c - JSON merge patch (the RFC 7386 examples),
 * strategic merge patch (keyed lists, directives, kubectl's apply patch),
 * and body decoding limits.
 */
#include <stdlib.h>

#include "apiserver/apiserver_int.h"
#include "check.h"

/* Applies patch text to target text; returns the result text (free) or
 * NULL when the patch fails.  Every patch is also applied to the copy
 * mu__json_copy_for makes of the target (a PATCH of a status; for the
 * merge patches, of a main resource: the spec copied whole), which
 * must answer the same, give the same text in the same key order, and
 * leave the target it shares members with as it was. */
static char *apply_t(mu_t_t *tt, const char *target, const char *patch, bool strategic)
{
	json_t *t = json_loads(target, 0, NULL), *p = json_loads(patch, 0, NULL);
	json_t *orig = json_loads(target, 0, NULL), *shared = mu__json_copy_for(orig, p, strategic ? NULL : "spec");
	int rc = strategic ? mu__strategic_patch(t, p) : mu__merge_patch(t, p);
	int rs = !shared ? MU_ENOMEM : strategic ? mu__strategic_patch(shared, p) : mu__merge_patch(shared, p);
	CHECK(tt, shared != NULL);
	CHECK(tt, rs == rc);
	char *a = json_dumps(t, JSON_COMPACT), *b = json_dumps(shared, JSON_COMPACT);
	if (rc == MU_OK)
		CHECK_STR(tt, b, a);
	char *o = json_dumps(orig, JSON_COMPACT), *want = NULL;
	json_t *again = json_loads(target, 0, NULL);
	want = json_dumps(again, JSON_COMPACT);
	CHECK_STR(tt, o, want); /* the shared copy's target is unchanged */
	free(a);
	free(b);
	free(o);
	free(want);
	json_decref(again);
	json_decref(orig);
	json_decref(shared);
	char *out = rc == MU_OK ? json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(t);
	json_decref(p);
	return out;
}

#define PATCH(t, target, patch, strategic, want)                         \
	do {                                                              \
		char *got_ = apply_t(t, target, patch, strategic);        \
		CHECK_STR(t, got_, want);                                 \
		free(got_);                                               \
	} while (0)

static void test_merge(mu_t_t *t)
{
	PATCH(t, "{\"a\":\"b\"}", "{\"a\":\"c\"}", false, "{\"a\":\"c\"}");
	PATCH(t, "{\"a\":\"b\"}", "{\"b\":\"c\"}", false, "{\"a\":\"b\",\"b\":\"c\"}");
	PATCH(t, "{\"a\":\"b\"}", "{\"a\":null}", false, "{}");
	PATCH(t, "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", false, "{\"a\":[1]}");
	PATCH(t, "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", false, "{\"a\":{\"bb\":{}}}");
	PATCH(t, "{\"a\":\"foo\"}", "{\"a\":{\"b\":1}}", false, "{\"a\":{\"b\":1}}");
	PATCH(t, "{\"spec\":{\"suspend\":true,\"parallelism\":2}}", "{\"spec\":{\"suspend\":false}}", false,
	      "{\"spec\":{\"parallelism\":2,\"suspend\":false}}");
	/* depth bound */
	char deep[4096] = "";
	for (int i = 0; i < 100; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "1");
	for (int i = 0; i < 100; i++)
		strcat(deep, "}");
	char *r = apply_t(t, "{}", deep, false);
	CHECK(t, r == NULL);
	free(r);
}

static void test_strategic(mu_t_t *t)
{
	const char *pod = "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x:1\"},{\"name\":\"b\",\"image\":\"y:1\"}]},"
			  "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}";
	/* containers merge by name */
	PATCH(t, pod, "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"y:2\"}]}}", true,
	      "{\"spec\":{\"containers\":[{\"image\":\"x:1\",\"name\":\"a\"},{\"image\":\"y:2\",\"name\":\"b\"}]},"
	      "\"status\":{\"conditions\":[{\"status\":\"True\",\"type\":\"Ready\"},{\"status\":\"True\",\"type\":\"PodScheduled\"}]}}");
	/* conditions merge by type; a new one is appended */
	PATCH(t, pod, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"},{\"type\":\"X\",\"status\":\"True\"}]}}", true,
	      "{\"spec\":{\"containers\":[{\"image\":\"x:1\",\"name\":\"a\"},{\"image\":\"y:1\",\"name\":\"b\"}]},"
	      "\"status\":{\"conditions\":[{\"status\":\"True\",\"type\":\"Ready\"},{\"reason\":\"Unschedulable\",\"status\":\"False\",\"type\":\"PodScheduled\"},{\"status\":\"True\",\"type\":\"X\"}]}}");
	/* a merge patch would have replaced the list */
	PATCH(t, "{\"c\":[{\"type\":\"A\"},{\"type\":\"B\"}]}", "{\"c\":[{\"type\":\"B\",\"s\":1}]}", false,
	      "{\"c\":[{\"s\":1,\"type\":\"B\"}]}");
	/* $patch: delete removes an element, $patch: replace a list */
	PATCH(t, pod, "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":\"delete\"}]},\"status\":null}", true,
	      "{\"spec\":{\"containers\":[{\"image\":\"y:1\",\"name\":\"b\"}]}}");
	PATCH(t, pod, "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"z\"},{\"$patch\":\"replace\"}]},\"status\":null}", true,
	      "{\"spec\":{\"containers\":[{\"image\":\"z\",\"name\":\"c\"}]}}");
	/* $setElementOrder, as kubectl apply sends it */
	PATCH(t, pod, "{\"$setElementOrder/containers\":[{\"name\":\"b\"},{\"name\":\"a\"}],\"status\":null}", true,
	      "{\"spec\":{\"containers\":[{\"image\":\"x:1\",\"name\":\"a\"},{\"image\":\"y:1\",\"name\":\"b\"}]}}");
	PATCH(t, pod, "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"b\"},{\"name\":\"a\"}]},\"status\":null}", true,
	      "{\"spec\":{\"containers\":[{\"image\":\"y:1\",\"name\":\"b\"},{\"image\":\"x:1\",\"name\":\"a\"}]}}");
	/* finalizers merge as a set; $deleteFromPrimitiveList removes */
	PATCH(t, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}", "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}", true,
	      "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}");
	PATCH(t, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}", "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}", true,
	      "{\"metadata\":{\"finalizers\":[\"b\"]}}");
	/* $retainKeys */
	PATCH(t, "{\"s\":{\"a\":1,\"b\":2}}", "{\"s\":{\"$retainKeys\":[\"b\"],\"b\":3}}", true, "{\"s\":{\"b\":3}}");
	/* lists without a merge key are replaced; maps merge; null deletes */
	PATCH(t, "{\"spec\":{\"tolerations\":[{\"key\":\"a\"}],\"m\":{\"x\":1}}}", "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}],\"m\":{\"y\":2,\"x\":null}}}", true,
	      "{\"spec\":{\"m\":{\"y\":2},\"tolerations\":[{\"key\":\"b\"}]}}");
	/* bad directives */
	char *r = apply_t(t, "{}", "{\"$patch\":\"delete\"}", true);
	CHECK(t, r == NULL);
	free(r);
	r = apply_t(t, "{\"a\":{}}", "{\"a\":{\"$bogus\":1}}", true);
	CHECK(t, r == NULL);
	free(r);
	r = apply_t(t, "{\"containers\":[]}", "{\"containers\":[1]}", true);
	CHECK(t, r == NULL);
	free(r);
}

static void test_body(mu_t_t *t)
{
	char err[256];
	json_t *o = mu__json_body("{\"a\":1}", 7, 100, err, sizeof err);
	CHECK(t, o != NULL);
	json_decref(o);
	CHECK(t, mu__json_body("{\"a\":1}", 7, 5, err, sizeof err) == NULL);
	CHECK(t, strstr(err, "larger") != NULL);
	CHECK(t, mu__json_body("1", 1, 100, err, sizeof err) == NULL);
	o = mu__json_body("[1]", 3, 100, err, sizeof err); /* a JSON patch */
	CHECK(t, json_is_array(o));
	json_decref(o);
	char deep[600];
	memset(deep, '[', 300);
	memset(deep + 300, ']', 300);
	CHECK(t, mu__json_body(deep, 600, 1000, err, sizeof err) == NULL);
	CHECK(t, strstr(err, "levels deep") != NULL);
	CHECK(t, mu__json_body("{\"a\":1,\"a\":2}", 13, 100, err, sizeof err) == NULL);
	CHECK(t, mu__json_body("{\"a\":", 5, 100, err, sizeof err) == NULL);
	CHECK(t, strstr(err, "not valid JSON") != NULL);
	CHECK(t, mu__json_body("", 0, 100, err, sizeof err) == NULL);
	CHECK(t, mu__json_body("{\"a\":\"\\u0000\"}", 14, 100, err, sizeof err) == NULL);
}

/* mu__json_copy_for shares what the patch does not name: a status
 * write's patch of a Job copies the metadata (always), the annotations
 * and the conditions, and shares the spec and the template; the lists a
 * directive names are copied. */
static void test_copy_for(mu_t_t *t)
{
	json_t *job = json_loads("{\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"annotations\":{\"a\":\"1\"},"
				 "\"labels\":{\"l\":\"1\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}},"
				 "\"status\":{\"active\":1,\"conditions\":[{\"type\":\"A\",\"status\":\"True\"}]}}",
				 0, NULL);
	json_t *p = json_loads("{\"metadata\":{\"annotations\":{\"b\":\"2\"}},\"status\":{\"conditions\":"
			       "[{\"type\":\"B\",\"status\":\"True\"}]}}", 0, NULL);
	json_t *c = mu__json_copy_for(job, p, NULL);
	CHECK(t, c != NULL);
	CHECK(t, json_object_get(c, "spec") == json_object_get(job, "spec"));
	CHECK(t, mu__jget(c, "metadata") != mu__jget(job, "metadata"));
	CHECK(t, mu__jget(c, "metadata.annotations") != mu__jget(job, "metadata.annotations"));
	CHECK(t, mu__jget(c, "metadata.labels") == mu__jget(job, "metadata.labels"));
	CHECK(t, mu__jget(c, "status") != mu__jget(job, "status"));
	CHECK(t, mu__jget(c, "status.conditions") != mu__jget(job, "status.conditions"));
	CHECK(t, json_equal(c, job));
	CHECK(t, mu__strategic_patch(c, p) == MU_OK);
	CHECK(t, json_array_size(mu__jget(job, "status.conditions")) == 1);
	CHECK(t, json_array_size(mu__jget(c, "status.conditions")) == 2);
	CHECK(t, json_object_size(mu__jget(job, "metadata.annotations")) == 1);
	json_decref(c);
	/* a main resource's write: the spec copied whole */
	c = mu__json_copy_for(job, p, "spec");
	CHECK(t, c && json_object_get(c, "spec") != json_object_get(job, "spec"));
	CHECK(t, c && mu__jget(c, "spec.template") != mu__jget(job, "spec.template"));
	CHECK(t, c && json_equal(c, job));
	CHECK(t, c && mu__jget(c, "metadata.labels") == mu__jget(job, "metadata.labels"));
	json_decref(c);
	/* no patch: only the metadata is new */
	c = mu__json_copy_for(job, NULL, NULL);
	CHECK(t, c && json_object_get(c, "status") == json_object_get(job, "status"));
	CHECK(t, c && json_object_get(c, "metadata") != json_object_get(job, "metadata"));
	json_decref(c);
	/* a directive's list is copied though the patch does not name it */
	json_t *d = json_loads("{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"x\"]}}", 0, NULL);
	json_object_set_new(json_object_get(job, "metadata"), "finalizers", json_pack("[s,s]", "x", "y"));
	c = mu__json_copy_for(job, d, NULL);
	CHECK(t, c && mu__jget(c, "metadata.finalizers") != mu__jget(job, "metadata.finalizers"));
	CHECK(t, mu__strategic_patch(c, d) == MU_OK);
	CHECK(t, json_array_size(mu__jget(c, "metadata.finalizers")) == 1);
	CHECK(t, json_array_size(mu__jget(job, "metadata.finalizers")) == 2);
	json_t *arr = json_array();
	CHECK(t, mu__json_copy_for(arr, d, NULL) == NULL);
	json_decref(arr);
	json_decref(c);
	json_decref(d);
	json_decref(p);
	json_decref(job);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_merge);
	MU_RUN(&t, test_strategic);
	MU_RUN(&t, test_body);
	MU_RUN(&t, test_copy_for);
	return mu_t_done(&t);
}
