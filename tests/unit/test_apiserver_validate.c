/*
 * test_apiserver_validate.c - object validation (names, labels, pods,
 * nodes, jobs, leases, events, queues through the cluster-file loader,
 * pod groups, topologies), pod templates, and the defaults filled on
 * create.
 */
#include <stdlib.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/schema.h"
#include "check.h"

/* Validates text as type rt (old may be NULL); returns the cause count
 * and copies the first cause's field into field. */
static int causes(int rt, const char *text, const char *old, char *field, size_t len)
{
	int n;
	const mu__rtype_t *t = &mu__rtypes(&n)[rt];
	json_t *o = json_loads(text, 0, NULL), *ol = old ? json_loads(old, 0, NULL) : NULL;
	mu__verr_t e;
	memset(&e, 0, sizeof e);
	if (!o)
		return -1;
	if (ol && rt == MU__RT_PODS) { /* as stored on create, and as api.c */
		mu__defaults_pod(ol);      /* decodes an update before its check */
		mu__defaults_pod(o);
	}
	mu__validate(t, o, ol, &e);
	snprintf(field, len, "%s", e.n ? e.c[0].field : "");
	json_decref(o);
	json_decref(ol);
	return e.n;
}

#define POD(meta, spec) "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{" meta "},\"spec\":{" spec "}}"
#define OKC "\"containers\":[{\"name\":\"a\",\"image\":\"b\"}]"

static void test_names(mu_t_t *t)
{
	CHECK(t, mu__valid_dns_label("a-1"));
	CHECK(t, !mu__valid_dns_label("A"));
	CHECK(t, !mu__valid_dns_label("-a"));
	CHECK(t, !mu__valid_dns_label("a.b"));
	CHECK(t, mu__valid_dns_subdomain("a.b-c.d"));
	CHECK(t, !mu__valid_dns_subdomain("a..b"));
	CHECK(t, !mu__valid_dns_subdomain(""));
	char f[128];
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"ok\"", OKC), NULL, f, sizeof f), 0);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"Bad\"", OKC), NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "metadata.name");
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"ok\",\"labels\":{\"a/b/c\":\"x\"}", OKC), NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "metadata.labels[a/b/c]");
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"ok\",\"labels\":{\"muster.io/q\":\"-x\"}", OKC), NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"ok\",\"labels\":{\"k\":1}", OKC), NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_NAMESPACES, "{\"metadata\":{\"name\":\"a.b\"}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, "{\"metadata\":1}", NULL, f, sizeof f), 1);
}

static void test_pods(mu_t_t *t)
{
	char f[128];
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", "\"containers\":[]"), NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "spec.containers");
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", "\"containers\":[{\"name\":\"a\"}]"), NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "spec.containers[0].image");
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", "\"containers\":[{\"name\":\"a\",\"image\":\"b\"},{\"name\":\"a\",\"image\":\"b\"}]"), NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", "\"containers\":[{\"name\":\"a\",\"image\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]"), NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "spec.containers[0].resources.requests[cpu]");
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", OKC ",\"restartPolicy\":\"Sometimes\""), NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\",\"annotations\":{\"muster.io/duration\":\"soon\"}", OKC), NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\",\"annotations\":{\"muster.io/duration\":\"1h30m\"}", OKC), NULL, f, sizeof f), 0);
	/* updates may change images, not the rest of the spec */
	const char *old = POD("\"name\":\"p\"", OKC);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", "\"containers\":[{\"name\":\"a\",\"image\":\"c\"}]"), old, f, sizeof f), 0);
	CHECK_EQ_INT(t, causes(MU__RT_PODS, POD("\"name\":\"p\"", OKC ",\"nodeName\":\"n1\""), old, f, sizeof f), 1);
	CHECK_STR(t, f, "spec");
}

static void test_kinds(mu_t_t *t)
{
	char f[128];
	CHECK_EQ_INT(t, causes(MU__RT_NODES, "{\"metadata\":{\"name\":\"n\"},\"status\":{\"capacity\":{\"cpu\":\"x\"}}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_NODES, "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":\"Never\"}]}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_LEASES, "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"leaseDurationSeconds\":0}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_LEASES, "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"renewTime\":\"2024-01-01T00:00:00.123456Z\"}}", NULL, f, sizeof f), 0);
	CHECK_EQ_INT(t, causes(MU__RT_LEASES, "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"renewTime\":\"yesterday\"}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_EVENTS, "{\"metadata\":{\"name\":\"e\",\"namespace\":\"a\"},\"involvedObject\":{\"namespace\":\"b\"}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_EVENTS, "{\"metadata\":{\"name\":\"e\"}}", NULL, f, sizeof f), 1);
	const char *job = "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Always\"," OKC "}}}}";
	CHECK_EQ_INT(t, causes(MU__RT_JOBS, job, NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "spec.template.spec.restartPolicy");
	CHECK_EQ_INT(t, causes(MU__RT_QUEUES, "{\"apiVersion\":\"muster.io/v1alpha1\",\"kind\":\"Queue\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"resources\":{\"gpu\":{\"deserved\":8,\"limit\":4}}}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_QUEUES, "{\"apiVersion\":\"muster.io/v1alpha1\",\"kind\":\"Queue\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"resources\":{\"gpu\":{\"deserved\":8}}}}", NULL, f, sizeof f), 0);
	CHECK_EQ_INT(t, causes(MU__RT_XPODGROUPS, "{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":-1}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_TOPOLOGIES, "{\"metadata\":{\"name\":\"t\"},\"spec\":{\"levels\":[{\"nodeLabel\":\"a\"},{\"nodeLabel\":\"a\"}]}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_TOPOLOGIES, "{\"metadata\":{\"name\":\"t\"},\"spec\":{}}", NULL, f, sizeof f), 1);
	CHECK_EQ_INT(t, causes(MU__RT_NRTS, "{\"metadata\":{\"name\":\"n\"},\"zones\":[{\"name\":\"z\",\"resources\":[{\"name\":\"cpu\",\"capacity\":\"-1\"}]}]}", NULL, f, sizeof f), 1);
	/* Cluster (the hub's workers): tier, mode, the push-mode Secret, price */
	CHECK_EQ_INT(t, causes(MU__RT_CLUSTERS, "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"tier\":\"private\",\"kubeconfigSecret\":{\"name\":\"s\"}}}", NULL, f, sizeof f), 0);
	CHECK_EQ_INT(t, causes(MU__RT_CLUSTERS, "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"tier\":\"edge\",\"mode\":\"pull\"}}", NULL, f, sizeof f), 0);
	CHECK_EQ_INT(t, causes(MU__RT_CLUSTERS, "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"tier\":\"private\"}}", NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "spec.kubeconfigSecret.name");
	CHECK_EQ_INT(t, causes(MU__RT_CLUSTERS, "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"tier\":\"moon\",\"mode\":\"pull\",\"costPerGPUHour\":-2}}", NULL, f, sizeof f), 2);
	CHECK_EQ_INT(t, causes(MU__RT_CLUSTERS, "{\"metadata\":{\"name\":\"c\"}}", NULL, f, sizeof f), 1);
	CHECK_STR(t, f, "spec");
}

static void test_defaults(mu_t_t *t)
{
	json_t *p = json_loads(POD("\"name\":\"p\"", "\"containers\":[{\"name\":\"a\",\"image\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"500m\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]"), 0, NULL);
	mu__defaults_pod(p);
	CHECK_STR(t, mu__jstr(p, "spec.schedulerName"), "default-scheduler");
	CHECK_STR(t, mu__jstr(p, "status.phase"), "Pending");
	CHECK_STR(t, mu__jstr(p, "status.qosClass"), "Burstable");
	json_decref(p);
	json_t *j = json_loads("{\"metadata\":{\"name\":\"j\",\"uid\":\"u1\"},\"spec\":{\"template\":{\"spec\":{}}}}", 0, NULL);
	mu__defaults_job(j);
	CHECK_EQ_INT(t, json_integer_value(mu__jget(j, "spec.parallelism")), 1);
	CHECK_EQ_INT(t, json_integer_value(mu__jget(j, "spec.backoffLimit")), 6);
	CHECK_STR(t, json_string_value(json_object_get(mu__jget(j, "spec.selector.matchLabels"), "batch.kubernetes.io/controller-uid")), "u1");
	CHECK_STR(t, json_string_value(json_object_get(mu__jget(j, "spec.template.metadata.labels"), "job-name")), "j");
	json_decref(j);
	char buf[32];
	mu__age(30, buf, sizeof buf);
	CHECK_STR(t, buf, "30s");
	mu__age(400, buf, sizeof buf);
	CHECK_STR(t, buf, "6m40s");
	mu__age(3 * 86400 + 7200, buf, sizeof buf);
	CHECK_STR(t, buf, "3d2h");
	CHECK_EQ_INT(t, mu__parse_rfc3339("1970-01-02T00:00:01Z"), 86401);
	CHECK_EQ_INT(t, mu__parse_rfc3339("1970-01-01T01:00:00+01:00"), 0);
	CHECK_EQ_INT(t, mu__parse_rfc3339("1970-01-01"), -1);
	char b64[64];
	size_t n;
	char *enc = mu__b64enc("hello!?", 7);
	CHECK_STR(t, enc, "aGVsbG8hPw==");
	CHECK_EQ_INT(t, mu__b64dec(enc, b64, sizeof b64, &n), MU_OK);
	CHECK_STR(t, b64, "hello!?");
	free(enc);
	CHECK_EQ_INT(t, mu__b64dec("a$", b64, sizeof b64, &n), MU_EPARSE);
}

#define DEPLOY(tspec) "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"}," \
	"\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}}," \
	"\"spec\":{" tspec "}}}}"

/* Pod templates (mu__validate_pod_template through the apps kinds and Jobs)
 * and their defaults. */
static void test_templates(mu_t_t *t)
{
	char f[128];
	CHECK(t, causes(MU__RT_DEPLOYMENTS, DEPLOY(OKC), NULL, f, sizeof f) == 0);
	CHECK(t, causes(MU__RT_DEPLOYMENTS, DEPLOY("\"containers\":[{\"image\":\"b\"}]"), NULL, f, sizeof f) == 1);
	CHECK(t, !strcmp(f, "spec.template.spec.containers[0].name"));
	CHECK(t, causes(MU__RT_DEPLOYMENTS, DEPLOY("\"containers\":[]"), NULL, f, sizeof f) == 1);
	CHECK(t, !strcmp(f, "spec.template.spec.containers"));
	CHECK(t, causes(MU__RT_DEPLOYMENTS, DEPLOY("\"restartPolicy\":\"Never\"," OKC), NULL, f, sizeof f) == 1);
	CHECK(t, !strcmp(f, "spec.template.spec.restartPolicy"));
	CHECK(t, causes(MU__RT_DEPLOYMENTS, DEPLOY("\"activeDeadlineSeconds\":5," OKC), NULL, f, sizeof f) == 1);
	CHECK(t, !strcmp(f, "spec.template.spec.activeDeadlineSeconds"));
	CHECK(t, causes(MU__RT_DEPLOYMENTS, DEPLOY("\"restartPolicy\":\"Always\"," OKC), NULL, f, sizeof f) == 0);
	/* a Job's template allows only OnFailure and Never, and a deadline */
	const char *job = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},\"spec\":"
			  "{\"template\":{\"spec\":{\"restartPolicy\":\"Always\"," OKC "}}}}";
	CHECK(t, causes(MU__RT_JOBS, job, NULL, f, sizeof f) == 1);
	CHECK(t, !strcmp(f, "spec.template.spec.restartPolicy"));
	/* defaults: the template's pod spec, not a pod's status or priority */
	json_t *o = json_loads(DEPLOY(OKC), 0, NULL);
	mu__defaults_apps(o);
	CHECK(t, !strcmp(mu__jstr(o, "spec.template.spec.restartPolicy"), "Always"));
	CHECK(t, !strcmp(mu__jstr(o, "spec.template.spec.dnsPolicy"), "ClusterFirst"));
	CHECK(t, !strcmp(mu__jstr(o, "spec.template.spec.schedulerName"), "default-scheduler"));
	CHECK(t, json_integer_value(mu__jget(o, "spec.template.spec.terminationGracePeriodSeconds")) == 30);
	CHECK(t, mu__jget(o, "spec.template.spec.priority") == NULL);
	CHECK(t, mu__jget(o, "spec.template.status") == NULL);
	json_decref(o);
}

/* A running Job's template is immutable (ValidateJobSpecUpdate): a
 * changed one is refused, one that differs from the stored one only by
 * the defaults (stored before templates were defaulted) is not, nor the
 * same one, nor a changed one of a suspended Job.  (validate.c compares
 * the templates as stored first and copies and defaults the stored one
 * only when they differ: the same answers.) */
static void test_job_template_update(mu_t_t *t)
{
	char f[128];
#define JOB(susp, tpl) "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"}," \
		       "\"spec\":{\"suspend\":" susp ",\"completions\":1,\"selector\":{\"matchLabels\":{\"u\":\"1\"}},\"template\":{" \
		       "\"metadata\":{\"labels\":{\"u\":\"1\"}},\"spec\":{\"restartPolicy\":\"Never\"," tpl "}}}}"
#define BARE "\"containers\":[{\"name\":\"a\",\"image\":\"b\"}]"
#define OTHER "\"containers\":[{\"name\":\"a\",\"image\":\"c\"}]"
	/* the stored template with its defaults, as a create stores it */
	json_t *d = json_loads(JOB("false", BARE), 0, NULL);
	mu__defaults_pod_spec(mu__jget(d, "spec.template.spec"));
	char *dt = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	CHECK(t, causes(MU__RT_JOBS, JOB("false", OTHER), JOB("false", BARE), f, sizeof f) == 1);
	CHECK(t, !strcmp(f, "spec.template"));
	CHECK(t, causes(MU__RT_JOBS, dt, JOB("false", BARE), f, sizeof f) == 0); /* the defaults only */
	CHECK(t, causes(MU__RT_JOBS, dt, dt, f, sizeof f) == 0);
	CHECK(t, causes(MU__RT_JOBS, JOB("false", OTHER), JOB("true", BARE), f, sizeof f) == 0);
	free(dt);
	/* a status write keeps the stored spec, the same tree: not validated
	 * again (ValidateJobUpdateStatus), even one that would not pass now;
	 * an equal spec that is not the stored tree is */
	mu__verr_t e = {0};
	json_t *old = json_loads(JOB("false", BARE), 0, NULL);
	json_object_set_new(json_object_get(old, "spec"), "parallelism", json_integer(-1));
	json_t *nw = json_copy(old);
	json_object_set_new(nw, "status", json_pack("{s:i}", "active", 1));
	mu__validate_job(nw, old, &e);
	CHECK(t, e.n == 0);
	json_object_set_new(nw, "spec", json_deep_copy(json_object_get(old, "spec")));
	mu__validate_job(nw, old, &e);
	CHECK(t, e.n == 1);
	json_decref(nw);
	json_decref(old);
#undef JOB
#undef BARE
#undef OTHER
}

/* Field validation of an update (mu__schema_check_changed): an unknown
 * field in a member that changed is found and pruned, wherever it is; a
 * known member the same as stored is not walked; an unknown top-level
 * member is found even when stored too; without old, all of it. */
static void test_schema_changed(mu_t_t *t)
{
	int model = mu__schema_model("batch", "Job");
	CHECK(t, model >= 0);
	const char *old = "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"suspend\":true,\"bogus\":1},\"zz\":1}";
	json_t *o = json_loads(old, 0, NULL);
	/* the status changed and holds an unknown field; the spec did not */
	json_t *nw = json_loads("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"suspend\":true,\"bogus\":1},"
				"\"status\":{\"active\":1,\"nope\":2},\"zz\":1}", 0, NULL);
	mu__unknown_t u;
	mu__schema_check_changed(nw, o, model, true, &u);
	CHECK(t, u.n == 2);
	CHECK(t, strstr(u.text, "unknown field \"status.nope\"") && strstr(u.text, "unknown field \"zz\""));
	CHECK(t, !strstr(u.text, "spec.bogus"));
	CHECK(t, !mu__jget(nw, "status.nope") && !json_object_get(nw, "zz") && mu__jget(nw, "spec.bogus"));
	json_decref(nw);
	/* the spec changed: its unknown field is found */
	nw = json_loads("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"suspend\":false,\"bogus\":1}}", 0, NULL);
	mu__schema_check_changed(nw, o, model, false, &u);
	CHECK(t, u.n == 1 && strstr(u.text, "unknown field \"spec.bogus\""));
	CHECK(t, mu__jget(nw, "spec.bogus")); /* not pruned */
	/* no old: the whole object, as mu__schema_check */
	mu__schema_check_changed(o, NULL, model, false, &u);
	CHECK(t, u.n == 2);
	json_decref(nw);
	json_decref(o);
	/* one level down: in a metadata and a status that changed, their
	 * changed members are walked, their unchanged ones not */
	o = json_loads("{\"metadata\":{\"name\":\"j\",\"labels\":{\"a\":\"b\"}},\"status\":{\"active\":0,"
		       "\"ready\":0}}", 0, NULL);
	nw = json_loads("{\"metadata\":{\"name\":\"j\",\"labels\":{\"a\":\"b\"},\"oops\":1,"
			"\"annotations\":{\"x\":\"y\"}},\"status\":{\"active\":1,\"ready\":0,\"nope\":{\"z\":1}}}",
			0, NULL);
	mu__schema_check_changed(nw, o, model, true, &u);
	CHECK(t, u.n == 2 && strstr(u.text, "unknown field \"metadata.oops\"") &&
		 strstr(u.text, "unknown field \"status.nope\""));
	CHECK(t, !mu__jget(nw, "metadata.oops") && !mu__jget(nw, "status.nope") && mu__jget(nw, "metadata.annotations"));
	json_decref(nw);
	json_decref(o);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_names);
	MU_RUN(&t, test_pods);
	MU_RUN(&t, test_kinds);
	MU_RUN(&t, test_defaults);
	MU_RUN(&t, test_templates);
	MU_RUN(&t, test_job_template_update);
	MU_RUN(&t, test_schema_changed);
	return mu_t_done(&t);
}
