/*
 * test_apiserver_podgate.c - muster up drops the fields of kube 1.32's
 * disabled feature gates as kube's strategies do (dropDisabledFields of
 * pkg/api/pod/util.go, called from PrepareForCreate and PrepareForUpdate
 * with the stored spec): spec.hostUsers (UserNamespacesSupport, off) and
 * the pod-level spec.resources (PodLevelResources, off) are dropped from a
 * Pod's or a template's spec on create, and on update unless the stored
 * spec already has them (hostUsersInUse: set; podLevelResourcesInUse:
 * requests or limits not empty), in which case they are kept and the
 * update is not refused as a change of the spec (round 13).  Requests go
 * through the API's own update and patch handlers (mu__do_update,
 * mu__do_patch) on a store of the test's, as muster up runs them, without
 * a server thread; the stored objects with the fields are put in the
 * store directly, as an earlier muster (or a kube with the gates on)
 * would have stored them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "check.h"

static char dir[64];

/* Puts ctx (a JSON object, borrowed) as it is. */
static int put_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	(void)cur;
	*out = json_deep_copy(ctx);
	return MU__MUT_PUT;
}

static void put(mu_t_t *t, mu_apiserver_t *s, int rt, const char *name, const char *text)
{
	json_t *o = json_loads(text, 0, NULL);
	CHECK(t, o != NULL);
	if (o)
		CHECK(t, mu__store_mutate(s->store, rt, "default", name, put_fn, o, false, NULL) >= 0);
	json_decref(o);
}

/* The stored object's field at path as compact text, or "(none)"
 * (owned by buf). */
static const char *field(mu_apiserver_t *s, int rt, const char *name, const char *path, char *buf, size_t len)
{
	mu__obj_t *o = mu__store_get(s->store, rt, "default", name);
	json_t *j = o ? mu__obj_parse(o) : NULL;
	mu__obj_unref(o);
	char *txt = mu__jget(j, path) ? json_dumps(mu__jget(j, path), JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
	snprintf(buf, len, "%s", txt ? txt : "(none)");
	free(txt);
	json_decref(j);
	return buf;
}

/* Sends a request to rt's handler: a merge patch (patch true) or a
 * replace of name with body; answers the HTTP code. */
static int send(mu_apiserver_t *s, int rt, const char *name, bool patch, const char *body, char *msg, size_t len)
{
	mu__req_t rq;
	memset(&rq, 0, sizeof rq);
	rq.method = patch ? "PATCH" : "PUT";
	rq.ctype = patch ? "application/merge-patch+json" : "application/json";
	rq.body = body;
	rq.body_len = strlen(body);
	snprintf(rq.route.ns, sizeof rq.route.ns, "default");
	snprintf(rq.route.name, sizeof rq.route.name, "%s", name);
	rq.route.kind = rt;
	mu__resp_t rs;
	memset(&rs, 0, sizeof rs);
	json_t *b = json_loads(body, 0, NULL);
	if (patch)
		mu__do_patch(s, &rq, &rs, rt, b);
	else
		mu__do_update(s, &rq, &rs, rt, b);
	json_decref(b);
	snprintf(msg, len, "%.*s", (int)(rs.body ? rs.len : 0), rs.body ? rs.body : "");
	free(rs.body);
	return rs.code;
}

#define POD_GATED                                                                                                   \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"u-%s\"," \
	"\"resourceVersion\":\"1\"},\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}"

static void test_pod_update(mu_t_t *t)
{
	mu_apiserver_t s;
	memset(&s, 0, sizeof s);
	CHECK_EQ_INT(t, mu__types_new(&s.types), MU_OK);
	char err[256], path[96], buf[512], msg[4096], text[1024];
	int code;
	snprintf(path, sizeof path, "%s/pods", dir);
	mu__store_opts_t so = {.dir = path, .ring = 1000, .types = s.types};
	CHECK_EQ_INT(t, mu__store_open(&so, &s.store, err, sizeof err), MU_OK);
	pthread_mutex_init(&s.rnd_mu, NULL);
	if (!s.store)
		return;

	/* stored with both: a label patched in keeps them */
	snprintf(text, sizeof text, POD_GATED, "kept", "kept",
		 "\"hostUsers\":false,\"resources\":{\"requests\":{\"cpu\":\"1\"}},");
	put(t, &s, MU__RT_PODS, "kept", text);
	CHECK_EQ_INT(t, send(&s, MU__RT_PODS, "kept", true, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", msg, sizeof msg),
		     200);
	CHECK_STR(t, field(&s, MU__RT_PODS, "kept", "metadata.labels", buf, sizeof buf), "{\"a\":\"b\"}");
	CHECK_STR(t, field(&s, MU__RT_PODS, "kept", "spec.hostUsers", buf, sizeof buf), "false");
	CHECK_STR(t, field(&s, MU__RT_PODS, "kept", "spec.resources", buf, sizeof buf), "{\"requests\":{\"cpu\":\"1\"}}");
	/* and a replace with them (as kubectl replace sends it back) is no
	 * change of the spec */
	snprintf(text, sizeof text, POD_GATED, "kept", "kept",
		 "\"hostUsers\":false,\"resources\":{\"requests\":{\"cpu\":\"1\"}},");
	char *rv = strstr(text, ",\"resourceVersion\":\"1\"");
	if (rv)
		memmove(rv, rv + 22, strlen(rv + 22) + 1);
	CHECK_EQ_INT(t, send(&s, MU__RT_PODS, "kept", false, text, msg, sizeof msg), 200);
	CHECK_STR(t, field(&s, MU__RT_PODS, "kept", "spec.hostUsers", buf, sizeof buf), "false");

	/* stored without: a patch adding them has them dropped, no change */
	snprintf(text, sizeof text, POD_GATED, "plain", "plain", "");
	put(t, &s, MU__RT_PODS, "plain", text);
	CHECK_EQ_INT(t, send(&s, MU__RT_PODS, "plain", true,
			     "{\"spec\":{\"hostUsers\":false,\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}}", msg,
			     sizeof msg),
		     200);
	CHECK_STR(t, field(&s, MU__RT_PODS, "plain", "spec.hostUsers", buf, sizeof buf), "(none)");
	CHECK_STR(t, field(&s, MU__RT_PODS, "plain", "spec.resources", buf, sizeof buf), "(none)");

	/* a Job's template: kept on update when stored */
	put(t, &s, MU__RT_JOBS, "j",
	    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"namespace\":\"default\","
	    "\"uid\":\"u-j\",\"resourceVersion\":\"1\",\"generation\":1},\"spec\":{\"parallelism\":1,\"completions\":1,"
	    "\"backoffLimit\":6,\"suspend\":true,\"completionMode\":\"NonIndexed\",\"manualSelector\":true,"
	    "\"selector\":{\"matchLabels\":{\"app\":\"j\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"j\"}},"
	    "\"spec\":{\"hostUsers\":false,\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}");
	code = send(&s, MU__RT_JOBS, "j", true, "{\"spec\":{\"parallelism\":2}}", msg, sizeof msg);
	CHECK_EQ_INT(t, code, 200);
	if (code != 200)
		fprintf(stderr, "%s\n", msg);
	CHECK_STR(t, field(&s, MU__RT_JOBS, "j", "spec.template.spec.hostUsers", buf, sizeof buf), "false");
	CHECK_STR(t, field(&s, MU__RT_JOBS, "j", "spec.parallelism", buf, sizeof buf), "2");

	mu__store_close(s.store);
	mu__types_free(s.types);
	pthread_mutex_destroy(&s.rnd_mu);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	snprintf(dir, sizeof dir, "/tmp/mu-podgate-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	MU_RUN(&t, test_pod_update);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return mu_t_done(&t);
}
