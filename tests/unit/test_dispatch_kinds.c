/*
 * test_dispatch_kinds.c - the hub's kinds without suspend (src/dispatch/kinds.c):
 * LeaderWorkerSets, read as a leader and size - 1 workers per replica, and
 * the PodGroups of muster, Volcano and KAI, whose pods are separate objects
 * that name their group (a label or an annotation) and are read as the
 * group's pod sets, copied to a worker without the hub's gate, and end with
 * their pods.  Each case builds the JSON the hub would hold and checks
 * what a worker would be sent and what the fleet would place (through the
 * cluster-file loader, as hub.c reads it).  Also the ninth round's kinds:
 * the coscheduling PodGroup, the Volcano Job (tasks and their
 * minAvailable), the RayCluster, and a KAI PodGroup's sub-groups as parts
 * of its gang, with what each kind's own admission refuses.  Round 23
 * (test_shrink_kinds): which kinds' copies the hub shrinks (a Job, an
 * elastic Worker-only PyTorchJob) and by what field, and that the fleet's
 * reclaim, given the objects as hub.c reads them, shrinks only those.
 */
#include <string.h>

#include "check.h"
#include "dispatch/dispatch_int.h"
#include "fleet_fixture.h"
#include "muster/jpath.h"
#include "muster/load.h"

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *o = json_loads(text, 0, &e);
	if (!o)
		fprintf(stderr, "bad test JSON: %s\n", e.text);
	return o;
}

/* Loads Workload w (owned) as hub.c does; the load's code, specs in *s
 * (released by the caller), the loader's message in msg. */
static int load(json_t *w, mu_specs_t *s, char *msg, size_t len)
{
	char *text = json_dumps(w, JSON_COMPACT);
	json_decref(w);
	mu_diag_t dg = {""};
	mu_specs_init(s);
	int rc = mu_load_yaml("test", text, strlen(text), s, &dg);
	snprintf(msg, len, "%s", dg.msg);
	free(text);
	return rc;
}

static void test_names(mu_t_t *t)
{
	/* unique names for keys, labels and reports; the objects' own kind */
	for (int a = 0; a < MU__DK_COUNT; a++)
		for (int b = a + 1; b < MU__DK_COUNT; b++)
			CHECK(t, strcmp(mu__dkind_name((mu__dkind_t)a), mu__dkind_name((mu__dkind_t)b)));
	CHECK_STR(t, mu__dkind_kind(MU__DK_VOLCANO_PG), "PodGroup");
	CHECK_STR(t, mu__dkind_kind(MU__DK_KAI_PG), "PodGroup");
	CHECK_STR(t, mu__dkind_name(MU__DK_KAI_PG), "KaiPodGroup");
	CHECK_EQ_INT(t, mu__dkind_of("scheduling.volcano.sh/v1beta1", "PodGroup"), MU__DK_VOLCANO_PG);
	CHECK_EQ_INT(t, mu__dkind_of("scheduling.run.ai/v2alpha2", "PodGroup"), MU__DK_KAI_PG);
	CHECK_EQ_INT(t, mu__dkind_of("muster.io/v1alpha1", "PodGroup"), MU__DK_PODGROUP);
	CHECK_EQ_INT(t, mu__dkind_of("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"), MU__DK_LWS);
	CHECK_EQ_INT(t, mu__dkind_of("scheduling.volcano.sh/v1beta1", "VolcanoPodGroup"), -1);
	CHECK(t, mu__dkind_suspends(MU__DK_JOBSET));
	CHECK(t, !mu__dkind_suspends(MU__DK_LWS));
	CHECK(t, !mu__dkind_suspends(MU__DK_KAI_PG));
	CHECK(t, mu__dkind_is_group(MU__DK_PODGROUP) && !mu__dkind_is_group(MU__DK_LWS));
	/* Volcano's CRD has no status subresource */
	CHECK(t, !mu__dkind_status_sub(MU__DK_VOLCANO_PG));
	CHECK(t, mu__dkind_status_sub(MU__DK_KAI_PG) && mu__dkind_status_sub(MU__DK_LWS));
	char p[300];
	CHECK_STR(t, mu__dkind_path(MU__DK_VOLCANO_PG, "ns", "g", "", p, sizeof p),
		  "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/g");
	CHECK_STR(t, mu__dkind_path(MU__DK_LWS, NULL, NULL, "", p, sizeof p),
		  "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets");
	bool on[MU__DK_COUNT];
	mu__dkind_list("VolcanoPodGroup,LeaderWorkerSet,PodGroupX", on);
	CHECK(t, on[MU__DK_VOLCANO_PG] && on[MU__DK_LWS] && !on[MU__DK_KAI_PG] && !on[MU__DK_PODGROUP]);
	/* nothing to suspend; no end of their own */
	json_t *o = J("{\"spec\":{},\"status\":{\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\"}]}}");
	CHECK(t, mu__dkind_ctl(json_object_get(o, "spec"), MU__DK_LWS, true) == NULL);
	CHECK(t, mu__dkind_done(o, MU__DK_LWS) == NULL && mu__dkind_done(o, MU__DK_PODGROUP) == NULL);
	CHECK(t, mu__dkind_managed_by(o, MU__DK_KAI_PG) == NULL);
	json_decref(o);
}

static const char *lws_text =
	"{\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\",\"kind\":\"LeaderWorkerSet\","
	"\"metadata\":{\"name\":\"llm\",\"namespace\":\"default\",\"labels\":{\"muster.io/queue\":\"q\"}},"
	"\"spec\":{\"replicas\":2,\"leaderWorkerTemplate\":{\"size\":4,"
	"\"leaderTemplate\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}},"
	"\"workerTemplate\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"resources\":{\"requests\":"
	"{\"nvidia.com/gpu\":\"8\"},\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}}}}}";

static void test_lws(mu_t_t *t)
{
	json_t *o = J(lws_text);
	mu__dtmpl_t tm[4];
	json_t *spec = json_object_get(o, "spec");
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_LWS, tm, 4), 2);
	CHECK_STR(t, tm[0].part, "leader");
	CHECK_EQ_INT(t, tm[0].count, 2);
	CHECK_STR(t, tm[1].part, "workers");
	CHECK_EQ_INT(t, tm[1].count, 6);
	CHECK(t, tm[0].tmpl == mu__jget(spec, "leaderWorkerTemplate.leaderTemplate"));
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_LWS, tm, 1), MU_ELIMIT);
	/* read as the fleet reads it: one job of 2 leaders and 6 workers */
	mu_specs_t s;
	char msg[512];
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_LWS, NULL), &s, msg, sizeof msg), MU_OK);
	CHECK_EQ_INT(t, s.njobs, 1);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 2);
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 2);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].replicas, 6);
		CHECK_STR(t, s.jobs[0].queue, "q");
	}
	mu_specs_release(&s);
	/* the copy: nothing suspended, every template labelled */
	json_t *c = mu__dcopy(o, MU__DK_LWS, "u1", "LeaderWorkerSet:default/llm", 3);
	CHECK_STR(t, mu__jstr(c, "kind"), "LeaderWorkerSet");
	CHECK(t, mu__jget(c, "spec.suspend") == NULL);
	const json_t *ll = mu__jget(c, "spec.leaderWorkerTemplate.leaderTemplate.metadata.labels");
	CHECK_STR(t, json_string_value(json_object_get(ll, MU__D_HUBUID)), "u1");
	const json_t *wl = mu__jget(c, "spec.leaderWorkerTemplate.workerTemplate.metadata.labels");
	CHECK_STR(t, json_string_value(json_object_get(wl, MU__D_GEN)), "3");
	CHECK_STR(t, json_string_value(json_object_get(wl, MU__D_HUBUID)), "u1");
	json_decref(c);
	/* without a leaderTemplate the leader is made from workerTemplate;
	 * size 1: leaders only */
	json_object_del(json_object_get(spec, "leaderWorkerTemplate"), "leaderTemplate");
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_LWS, tm, 4), 2);
	CHECK(t, tm[0].tmpl == mu__jget(spec, "leaderWorkerTemplate.workerTemplate"));
	json_object_set_new(json_object_get(spec, "leaderWorkerTemplate"), "size", json_integer(1));
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_LWS, tm, 4), 1);
	json_object_set_new(json_object_get(spec, "leaderWorkerTemplate"), "size", json_integer(0));
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_LWS, tm, 4), MU_EINVAL);
	json_decref(o);
}

/* A pod of a Volcano group g, of task task, with gpus GPUs. */
static json_t *vpod(const char *name, const char *task, int gpus)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s},s:{s:s},s:[{s:s}]},"
			 "s:{s:s,s:[{s:s}],s:[{s:s,s:{s:{s:i},s:{s:i}}}]},s:{s:s}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "ml",
			 "annotations", "scheduling.k8s.io/group-name", "g", "volcano.sh/task-spec", task,
			 "labels", "app", "x", "ownerReferences", "uid", "hub-owner",
			 "spec", "nodeName", "hubnode", "schedulingGates", "name", "muster.io/dispatch",
			 "containers", "name", "c", "resources", "requests", "nvidia.com/gpu", gpus,
			 "limits", "nvidia.com/gpu", gpus, "status", "phase", "Pending");
}

static void test_groups(mu_t_t *t)
{
	json_t *pg = J("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
		       "\"metadata\":{\"name\":\"g\",\"namespace\":\"ml\",\"labels\":{\"muster.io/queue\":\"q\"}},"
		       "\"spec\":{\"minMember\":3,\"queue\":\"default\"}}");
	json_t *pods = json_array();
	json_array_append_new(pods, vpod("g-ps-0", "PS", 0));
	json_array_append_new(pods, vpod("g-worker-0", "worker", 4));
	json_array_append_new(pods, vpod("g-worker-1", "worker", 4));
	/* membership, by each kind's own marker */
	json_t *p0 = json_array_get(pods, 0);
	CHECK_STR(t, mu__dkind_pod_group(p0, MU__DK_VOLCANO_PG), "g");
	CHECK(t, mu__dkind_pod_group(p0, MU__DK_KAI_PG) == NULL);
	CHECK(t, mu__dkind_pod_group(p0, MU__DK_PODGROUP) == NULL);
	CHECK(t, mu__dkind_pod_group(p0, MU__DK_JOB) == NULL);
	json_t *kp = J("{\"metadata\":{\"annotations\":{\"pod-group-name\":\"k\"}}}");
	json_t *mp = J("{\"metadata\":{\"labels\":{\"muster.io/pod-group\":\"m\"}}}");
	CHECK_STR(t, mu__dkind_pod_group(kp, MU__DK_KAI_PG), "k");
	CHECK_STR(t, mu__dkind_pod_group(mp, MU__DK_PODGROUP), "m");
	CHECK(t, mu__dkind_pod_group(mp, MU__DK_KAI_PG) == NULL);
	json_decref(kp);
	json_decref(mp);
	CHECK_EQ_INT(t, mu__dkind_group_min(pg), 3);
	/* the group as one job: a pod set per task, its minimum */
	mu_specs_t s;
	char msg[512];
	CHECK_EQ_INT(t, load(mu__dkind_workload(pg, MU__DK_VOLCANO_PG, pods), &s, msg, sizeof msg),
		     MU_OK);
	CHECK_EQ_INT(t, s.njobs, 1);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 2);
		CHECK_STR(t, s.jobs[0].podsets[0].name, "ps");
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 1);
		CHECK_STR(t, s.jobs[0].podsets[1].name, "worker");
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].replicas, 2);
		CHECK_EQ_INT(t, s.jobs[0].min_member, 3);
	}
	mu_specs_release(&s);
	/* a minimum above the pods there are is refused, naming it (hub.c
	 * waits with WaitingForPods before reading it) */
	json_object_set_new(json_object_get(pg, "spec"), "minMember", json_integer(5));
	CHECK(t, load(mu__dkind_workload(pg, MU__DK_VOLCANO_PG, pods), &s, msg, sizeof msg) != MU_OK);
	CHECK(t, strstr(msg, "minMember") != NULL);
	mu_specs_release(&s);
	/* more than 16 parts: refused */
	json_t *many = json_array();
	for (int i = 0; i < 17; i++) {
		char n[16];
		snprintf(n, sizeof n, "t%d", i);
		json_array_append_new(many, vpod(n, n, 1));
	}
	CHECK(t, load(mu__dkind_workload(pg, MU__DK_VOLCANO_PG, many), &s, msg, sizeof msg) != MU_OK);
	mu_specs_release(&s);
	json_decref(many);
	/* the group's own copy: no suspend flag added */
	json_t *c = mu__dcopy(pg, MU__DK_VOLCANO_PG, "u2", "VolcanoPodGroup:ml/g", 1);
	CHECK_STR(t, mu__jstr(c, "apiVersion"), "scheduling.volcano.sh/v1beta1");
	CHECK_STR(t, mu__jstr(c, "kind"), "PodGroup");
	CHECK(t, mu__jget(c, "spec.suspend") == NULL);
	CHECK_STR(t, mu__jstr(c, "spec.queue"), "default");
	json_decref(c);
	/* a pod's copy: labelled with its group's uid and generation, not
	 * bound, no owner (the hub's), no status, the hub's gate gone */
	json_t *pc = mu__dkind_pod_copy(p0, "u2", "VolcanoPodGroup:ml/g", 7);
	CHECK_STR(t, mu__jstr(pc, "metadata.name"), "g-ps-0");
	CHECK_STR(t, mu__jstr(pc, "metadata.namespace"), "ml");
	CHECK_STR(t, mu__jstr(pc, "metadata.labels.app"), "x");
	CHECK_STR(t, json_string_value(json_object_get(mu__jget(pc, "metadata.labels"), MU__D_HUBUID)), "u2");
	CHECK_STR(t, json_string_value(json_object_get(mu__jget(pc, "metadata.labels"), MU__D_GEN)), "7");
	CHECK_STR(t, json_string_value(json_object_get(mu__jget(pc, "metadata.annotations"), MU__D_HUBJOB)),
		  "VolcanoPodGroup:ml/g");
	CHECK_STR(t, mu__dkind_pod_group(pc, MU__DK_VOLCANO_PG), "g");
	CHECK(t, mu__jget(pc, "spec.nodeName") == NULL);
	CHECK(t, mu__jget(pc, "spec.schedulingGates") == NULL);
	CHECK(t, mu__jget(pc, "status") == NULL);
	CHECK(t, mu__jget(pc, "metadata.ownerReferences") == NULL);
	CHECK(t, json_array_size(mu__jget(pc, "spec.containers")) == 1);
	json_decref(pc);
	/* another gate stays */
	json_array_append_new(json_object_get(json_object_get(p0, "spec"), "schedulingGates"),
			      json_pack("{s:s}", "name", "other"));
	pc = mu__dkind_pod_copy(p0, "u2", "VolcanoPodGroup:ml/g", 7);
	CHECK_EQ_INT(t, json_array_size(mu__jget(pc, "spec.schedulingGates")), 1);
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(mu__jget(pc, "spec.schedulingGates"), 0),
						       "name")), "other");
	json_decref(pc);
	json_decref(pods);
	json_decref(pg);
}

static void test_group_end(mu_t_t *t)
{
	CHECK_STR(t, mu__dkind_group_end(3, 0, 3), "Succeeded");
	CHECK_STR(t, mu__dkind_group_end(2, 1, 3), "Failed");
	CHECK(t, mu__dkind_group_end(2, 0, 3) == NULL);
	CHECK(t, mu__dkind_group_end(1, 1, 3) == NULL);
	CHECK(t, mu__dkind_group_end(0, 0, 0) == NULL);
	CHECK(t, mu__dkind_group_end(-1, 0, 1) == NULL);
}

static void test_pod_counts(mu_t_t *t)
{
	json_t *l = J("{\"items\":["
		      "{\"metadata\":{\"labels\":{\"muster.io/hub-uid\":\"u\",\"muster.io/dispatch-generation\":\"2\"}},"
		      "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Succeeded\"}},"
		      "{\"metadata\":{\"labels\":{\"muster.io/hub-uid\":\"u\",\"muster.io/dispatch-generation\":\"2\"}},"
		      "\"spec\":{},\"status\":{\"phase\":\"Pending\"}},"
		      "{\"metadata\":{\"labels\":{\"muster.io/hub-uid\":\"u\",\"muster.io/dispatch-generation\":\"1\"}},"
		      "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Failed\"}}]}");
	json_t *m = mu__dpods_count(l);
	int64_t c[5];
	mu__dpods_of(m, "u", 2, c);
	CHECK(t, c[0] == 1 && c[1] == 0 && c[2] == 1 && c[3] == 0 && c[4] == 2);
	mu__dpods_of(m, "u", 1, c);
	CHECK(t, c[3] == 1 && c[4] == 1);
	mu__dpods_of(m, "v", 1, c);
	CHECK(t, c[4] == 0);
	char line[96];
	CHECK(t, mu__dpods_line(m, "u", 2, line, sizeof line));
	CHECK_STR(t, line, "bound=1,running=0,succeeded=1,failed=0");
	json_decref(m);
	json_decref(l);
}

/* The kinds of the ninth round: the coscheduling PodGroup (a group kind,
 * its pods by label), the Volcano Job (tasks as parts, no suspend flag)
 * and the RayCluster (suspendable, runs until deleted). */
static void test_kinds9(mu_t_t *t)
{
	CHECK_EQ_INT(t, mu__dkind_of("scheduling.x-k8s.io/v1alpha1", "PodGroup"), MU__DK_COSCHED_PG);
	CHECK_EQ_INT(t, mu__dkind_of("batch.volcano.sh/v1alpha1", "Job"), MU__DK_VOLCANO_JOB);
	CHECK_EQ_INT(t, mu__dkind_of("batch/v1", "Job"), MU__DK_JOB);
	CHECK_EQ_INT(t, mu__dkind_of("ray.io/v1", "RayCluster"), MU__DK_RAYCLUSTER);
	CHECK(t, mu__dkind_is_group(MU__DK_COSCHED_PG) && !mu__dkind_suspends(MU__DK_COSCHED_PG));
	CHECK(t, !mu__dkind_is_group(MU__DK_VOLCANO_JOB) && !mu__dkind_suspends(MU__DK_VOLCANO_JOB));
	CHECK(t, mu__dkind_suspends(MU__DK_RAYCLUSTER) && mu__dkind_status_sub(MU__DK_RAYCLUSTER));
	char p[300];
	CHECK_STR(t, mu__dkind_path(MU__DK_VOLCANO_JOB, "ns", "v", "/status", p, sizeof p),
		  "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/v/status");
	CHECK_STR(t, mu__dkind_path(MU__DK_COSCHED_PG, NULL, NULL, "", p, sizeof p),
		  "/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
	bool on[MU__DK_COUNT];
	mu__dkind_list("RayCluster,CoschedulingPodGroup", on);
	CHECK(t, on[MU__DK_RAYCLUSTER] && on[MU__DK_COSCHED_PG] && !on[MU__DK_VOLCANO_JOB]);

	/* coscheduling: pods by the label scheduling.x-k8s.io/pod-group */
	json_t *cp = J("{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
		       "\"metadata\":{\"name\":\"c\",\"namespace\":\"ml\",\"labels\":{\"muster.io/queue\":\"q\"}},"
		       "\"spec\":{\"minMember\":2,\"scheduleTimeoutSeconds\":10}}");
	json_t *pod = J("{\"metadata\":{\"name\":\"c-0\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"c\"}},"
			"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":2}}}]}}");
	CHECK_STR(t, mu__dkind_pod_group(pod, MU__DK_COSCHED_PG), "c");
	CHECK(t, mu__dkind_pod_group(pod, MU__DK_PODGROUP) == NULL);
	json_t *pods = json_array();
	json_array_append(pods, pod);
	char msg[512];
	CHECK(t, mu__dkind_group_waits(cp, MU__DK_COSCHED_PG, pods, msg, sizeof msg));
	CHECK(t, strstr(msg, "1 of the 2 pods of spec.minMember") != NULL);
	json_array_append(pods, pod);
	CHECK(t, !mu__dkind_group_waits(cp, MU__DK_COSCHED_PG, pods, msg, sizeof msg));
	mu_specs_t s;
	CHECK_EQ_INT(t, load(mu__dkind_workload(cp, MU__DK_COSCHED_PG, pods), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 1);
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 2);
		CHECK_EQ_INT(t, s.jobs[0].min_member, 2);
	}
	mu_specs_release(&s);
	CHECK(t, mu__dkind_done(cp, MU__DK_COSCHED_PG) == NULL);
	json_decref(pods);
	json_decref(pod);
	json_decref(cp);
}

static const char *vcjob_text =
	"{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
	"\"metadata\":{\"name\":\"vj\",\"namespace\":\"ml\",\"labels\":{\"muster.io/queue\":\"q\"}},"
	"\"spec\":{\"schedulerName\":\"volcano\",\"queue\":\"default\",\"tasks\":["
	"{\"name\":\"master\",\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"m\","
	"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},"
	"{\"name\":\"worker\",\"replicas\":4,\"minAvailable\":2,\"template\":{\"spec\":{\"containers\":"
	"[{\"name\":\"w\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":8}}}]}}}]}}";

static void test_volcano_job(mu_t_t *t)
{
	json_t *o = J(vcjob_text);
	json_t *spec = json_object_get(o, "spec");
	mu__dtmpl_t tm[4];
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_VOLCANO_JOB, tm, 4), 2);
	CHECK_STR(t, tm[1].part, "worker");
	CHECK_EQ_INT(t, tm[1].count, 4);
	CHECK_EQ_INT(t, tm[1].min, 2);
	CHECK_EQ_INT(t, tm[0].min, 1); /* the webhook's default: all its replicas */
	char msg[512];
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_VOLCANO_JOB, msg, sizeof msg), MU_OK);
	/* no minAvailable: the sum of the tasks', each task's its own */
	mu_specs_t s;
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_VOLCANO_JOB, NULL), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 2);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].replicas, 4);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].min_member, 2);
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].min_member, 1);
		CHECK_EQ_INT(t, s.jobs[0].min_member, 3);
	}
	mu_specs_release(&s);
	/* a job minimum above the tasks' sum: it, with the parts */
	json_object_set_new(spec, "minAvailable", json_integer(4));
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_VOLCANO_JOB, NULL), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].min_member, 4);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].min_member, 2);
	}
	mu_specs_release(&s);
	/* below the sum: the job's alone (Volcano's readiness) */
	json_object_set_new(spec, "minAvailable", json_integer(2));
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_VOLCANO_JOB, NULL), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].min_member, 2);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].min_member, 0);
	}
	mu_specs_release(&s);
	/* the copy: no suspend flag, templates labelled */
	json_t *c = mu__dcopy(o, MU__DK_VOLCANO_JOB, "u9", "VolcanoJob:ml/vj", 2);
	CHECK_STR(t, mu__jstr(c, "apiVersion"), "batch.volcano.sh/v1alpha1");
	CHECK_STR(t, mu__jstr(c, "kind"), "Job");
	CHECK(t, mu__jget(c, "spec.suspend") == NULL);
	const json_t *tl = mu__jget(json_array_get(mu__jget(c, "spec.tasks"), 1), "template.metadata.labels");
	CHECK_STR(t, json_string_value(json_object_get(tl, MU__D_HUBUID)), "u9");
	json_decref(c);
	/* its end: state.phase as Volcano's job controller writes it */
	json_t *st = J("{\"status\":{\"state\":{\"phase\":\"Completed\"}}}");
	CHECK_STR(t, mu__dkind_done(st, MU__DK_VOLCANO_JOB), "Succeeded");
	json_object_set_new(mu__jget(st, "status.state") ? (json_t *)mu__jget(st, "status.state") : st,
			    "phase", json_string("Terminated"));
	CHECK_STR(t, mu__dkind_done(st, MU__DK_VOLCANO_JOB), "Failed");
	/* Aborted (by a user or the error handling: its pods released) and
	 * Failed are ends too; the phases on their way to one are not */
	json_object_set_new((json_t *)mu__jget(st, "status.state"), "phase", json_string("Aborted"));
	CHECK_STR(t, mu__dkind_done(st, MU__DK_VOLCANO_JOB), "Failed");
	json_object_set_new((json_t *)mu__jget(st, "status.state"), "phase", json_string("Failed"));
	CHECK_STR(t, mu__dkind_done(st, MU__DK_VOLCANO_JOB), "Failed");
	static const char *const going[] = {"Aborting", "Terminating", "Completing", "Restarting",
					    "Pending"};
	for (size_t g = 0; g < sizeof going / sizeof going[0]; g++) {
		json_object_set_new((json_t *)mu__jget(st, "status.state"), "phase", json_string(going[g]));
		CHECK(t, mu__dkind_done(st, MU__DK_VOLCANO_JOB) == NULL);
	}
	json_object_set_new((json_t *)mu__jget(st, "status.state"), "phase", json_string("Running"));
	CHECK(t, mu__dkind_done(st, MU__DK_VOLCANO_JOB) == NULL);
	json_decref(st);
	/* what Volcano's admission refuses, named */
	json_object_set_new(spec, "minAvailable", json_integer(6));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_VOLCANO_JOB, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "spec.minAvailable 6 must be within the 5 replicas") != NULL);
	json_object_del(spec, "minAvailable");
	json_object_set_new(json_array_get(json_object_get(spec, "tasks"), 1), "minAvailable",
			    json_integer(5));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_VOLCANO_JOB, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "spec.tasks[worker]: minAvailable 5") != NULL);
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_VOLCANO_JOB, tm, 4), MU_EINVAL);
	json_object_set_new(json_array_get(json_object_get(spec, "tasks"), 1), "name", json_string("master"));
	json_object_del(json_array_get(json_object_get(spec, "tasks"), 1), "minAvailable");
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_VOLCANO_JOB, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "master is used twice") != NULL);
	json_object_set_new(spec, "tasks", json_array());
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_VOLCANO_JOB, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "at least one task") != NULL);
	json_decref(o);
}

static const char *raycluster_text =
	"{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\","
	"\"metadata\":{\"name\":\"rc\",\"namespace\":\"ml\",\"labels\":{\"muster.io/queue\":\"q\"}},"
	"\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\",\"headGroupSpec\":{\"template\":{\"spec\":"
	"{\"containers\":[{\"name\":\"h\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}},"
	"\"workerGroupSpecs\":[{\"groupName\":\"gpu\",\"minReplicas\":2,\"maxReplicas\":4,\"numOfHosts\":2,"
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"resources\":{\"limits\":"
	"{\"nvidia.com/gpu\":4}}}]}}},"
	"{\"groupName\":\"off\",\"minReplicas\":3,\"maxReplicas\":3,\"suspend\":true,"
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"o\"}]}}}]}}";

static void test_raycluster(mu_t_t *t)
{
	json_t *o = J(raycluster_text);
	json_t *spec = json_object_get(o, "spec");
	mu__dtmpl_t tm[4];
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_RAYCLUSTER, tm, 4), 3);
	CHECK_STR(t, tm[0].part, "head");
	CHECK_EQ_INT(t, tm[1].count, 4); /* minReplicas x numOfHosts */
	CHECK_EQ_INT(t, tm[2].count, 0); /* a suspended group has no pods */
	CHECK_EQ_INT(t, mu__dkind_templates(spec, MU__DK_RAYCLUSTER, tm, 2), MU_ELIMIT);
	mu_specs_t s;
	char msg[512];
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_RAYCLUSTER, NULL), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 2);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].replicas, 4);
	}
	mu_specs_release(&s);
	/* held and sent as a RayJob is: spec.suspend; the copy without it
	 * and without managedBy */
	CHECK(t, mu__dkind_ctl(spec, MU__DK_RAYCLUSTER, false) == spec);
	CHECK_STR(t, mu__dkind_managed_by(o, MU__DK_RAYCLUSTER), "kueue.x-k8s.io/multikueue");
	json_t *c = mu__dcopy(o, MU__DK_RAYCLUSTER, "u8", "RayCluster:ml/rc", 1);
	CHECK(t, json_is_false(mu__jget(c, "spec.suspend")));
	CHECK(t, mu__jget(c, "spec.managedBy") == NULL);
	const json_t *hl = mu__jget(c, "spec.headGroupSpec.template.metadata.labels");
	CHECK_STR(t, json_string_value(json_object_get(hl, MU__D_HUBUID)), "u8");
	json_decref(c);
	/* it runs until deleted: no end, whatever its state */
	json_t *st = J("{\"status\":{\"state\":\"ready\",\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}}");
	CHECK(t, mu__dkind_done(st, MU__DK_RAYCLUSTER) == NULL);
	json_decref(st);
	/* KubeRay's validation: minReplicas within maxReplicas */
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_RAYCLUSTER, msg, sizeof msg), MU_OK);
	json_object_set_new(json_array_get(json_object_get(spec, "workerGroupSpecs"), 0), "maxReplicas",
			    json_integer(1));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_RAYCLUSTER, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "workerGroupSpecs[gpu]: minReplicas 2 must be within 0 and its maxReplicas 1")
	      != NULL);
	json_decref(o);
}

/* A KAI pod of sub-group sg. */
static json_t *kpod(const char *name, const char *sg)
{
	return json_pack("{s:{s:s,s:{s:s},s:{s:s}},s:{s:[{s:s,s:{s:{s:i}}}]}}", "metadata", "name", name,
			 "annotations", "pod-group-name", "k", "labels", "kai.scheduler/subgroup-name", sg,
			 "spec", "containers", "name", "c", "resources", "limits", "nvidia.com/gpu", 1);
}

static void test_kai_subgroups(mu_t_t *t)
{
	json_t *o = J("{\"apiVersion\":\"scheduling.run.ai/v2alpha2\",\"kind\":\"PodGroup\","
		      "\"metadata\":{\"name\":\"k\",\"namespace\":\"ml\",\"labels\":{\"muster.io/queue\":\"q\"}},"
		      "\"spec\":{\"minMember\":2,\"subGroups\":[{\"name\":\"all\",\"minMember\":1},"
		      "{\"name\":\"decode\",\"minMember\":3,\"parent\":\"all\"},"
		      "{\"name\":\"prefill\",\"minMember\":1,\"parent\":\"all\"}]}}");
	json_t *pods = json_array();
	json_array_append_new(pods, kpod("k-p0", "prefill"));
	json_array_append_new(pods, kpod("k-d0", "decode"));
	json_array_append_new(pods, kpod("k-d1", "decode"));
	char msg[512];
	/* minMember 2 is met, decode's 3 is not: the group waits */
	CHECK(t, mu__dkind_group_waits(o, MU__DK_KAI_PG, pods, msg, sizeof msg));
	CHECK(t, strstr(msg, "2 of the 3 pods of sub-group decode") != NULL);
	json_array_append_new(pods, kpod("k-d2", "decode"));
	json_array_append_new(pods, kpod("k-d3", "decode"));
	CHECK(t, !mu__dkind_group_waits(o, MU__DK_KAI_PG, pods, msg, sizeof msg));
	/* the leaves' minimums are parts of the gang, which is their sum
	 * when larger than the group's minMember (the parent "all" is no
	 * part: pods name leaves) */
	mu_specs_t s;
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_KAI_PG, pods), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 2);
		CHECK_STR(t, s.jobs[0].podsets[0].name, "prefill");
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].min_member, 1);
		CHECK_STR(t, s.jobs[0].podsets[1].name, "decode");
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].replicas, 4);
		CHECK_EQ_INT(t, s.jobs[0].podsets[1].min_member, 3);
		CHECK_EQ_INT(t, s.jobs[0].min_member, 4);
	}
	mu_specs_release(&s);
	/* a parent's minMember is not read, as KAI's scheduler reads none
	 * (a sub-group with children gets no minimum of its own: its
	 * children's are what must be ready) */
	json_object_set_new(json_array_get(mu__jget(o, "spec.subGroups"), 0), "minMember",
			    json_integer(40));
	CHECK(t, !mu__dkind_group_waits(o, MU__DK_KAI_PG, pods, msg, sizeof msg));
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_KAI_PG, pods), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1)
		CHECK_EQ_INT(t, s.jobs[0].min_member, 4);
	mu_specs_release(&s);
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_OK);
	/* what KAI refuses: a name twice, a parent that is not there */
	json_t *subs = (json_t *)mu__jget(o, "spec.subGroups");
	json_object_set_new(json_array_get(subs, 2), "parent", json_string("none"));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "its parent none is no other sub-group") != NULL);
	json_object_set_new(json_array_get(subs, 2), "parent", json_string("Prefill")); /* itself */
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_EINVAL);
	json_object_set_new(json_array_get(subs, 2), "name", json_string("decode"));
	json_object_del(json_array_get(subs, 2), "parent");
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "sub-group decode is named twice") != NULL);
	/* KAI's webhook: names in lower case, and parents without a cycle */
	json_object_set_new(json_array_get(subs, 2), "name", json_string("Prefill"));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "spec.subGroups[Prefill]: a sub-group's name must be lower case") != NULL);
	json_object_set_new(json_array_get(subs, 2), "name", json_string("prefill"));
	json_object_set_new(json_array_get(subs, 2), "parent", json_string("decode"));
	json_object_set_new(json_array_get(subs, 0), "parent", json_string("prefill"));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "its parents make a cycle") != NULL);
	json_object_del(json_array_get(subs, 0), "parent");
	json_object_del(json_array_get(subs, 2), "parent");
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_KAI_PG, msg, sizeof msg), MU_OK);
	json_decref(pods);
	json_decref(o);
}

/* Capacity from pods (podcap.c): a pod's effective request as
 * Kubernetes' PodRequests sums it (containers, sidecars, the largest init
 * container, overhead; limits where no request), and per node the pods
 * that are bound, not ended and not the hub's copies. */
static void test_podcap(mu_t_t *t)
{
	json_t *p = J("{\"spec\":{\"nodeName\":\"n1\",\"containers\":["
		      "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"
		      "\"limits\":{\"nvidia.com/gpu\":\"2\"}}},"
		      "{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
		      "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"4\"}}},"
		      "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"250m\"}}}],"
		      "\"overhead\":{\"cpu\":\"100m\"}}}");
	mu_res_t r;
	mu__dpod_request(p, &r);
	/* containers 1.5 + sidecar 0.25 = 1.75 < init 4: 4, + overhead 0.1 */
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 4100);
	CHECK_EQ_INT(t, r.v[MU_RES_MEM], 1024LL * 1024 * 1024);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 2);
	CHECK_EQ_INT(t, r.v[MU_RES_PODS], 1);
	json_decref(p);
	json_t *l = J("{\"items\":["
		      "{\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\",\"cpu\":\"1\"}}}]}},"
		      "{\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}},"
		      "{\"metadata\":{\"labels\":{\"muster.io/hub-uid\":\"u1\"}},"
		      "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}},"
		      "{\"spec\":{\"nodeName\":\"n3\",\"containers\":[{}]},\"status\":{\"phase\":\"Succeeded\"}},"
		      "{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}}}]}}]}");
	json_t *u = mu__dpods_used(l);
	CHECK_EQ_INT(t, json_object_size(u), 1); /* not the copy, the ended or the unbound */
	CHECK_STR(t, json_string_value(json_object_get(u, "n1")),
		  "cpu=3000m,memory=0,nvidia.com/gpu=8,pods=2");
	CHECK_EQ_INT(t, mu__dused_parse(json_string_value(json_object_get(u, "n1")), &r), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 3000);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 8);
	CHECK_EQ_INT(t, r.v[MU_RES_PODS], 2);
	CHECK_EQ_INT(t, mu__dused_parse("cpu=-1m,memory=0,nvidia.com/gpu=0,pods=0", &r), MU_EPARSE);
	CHECK_EQ_INT(t, mu__dused_parse("bogus", &r), MU_EPARSE);
	json_decref(u);
	json_decref(l);
}

/* Capacity from pods that share GPUs (round 11): on n1, two pods with
 * half a GPU each on device 3 (muster.io/gpus, as muster's scheduler
 * writes it) take that one device, a gpu-memory pod on device 5 another,
 * and a muster.io/gpu-milli pod on device 5 no more; on n2 a share pod
 * that names no device takes one of its own, beside a whole GPU. */
static void test_podcap_shares(mu_t_t *t)
{
	json_t *l = J("{\"items\":["
		      "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpu-fraction\":\"0.5\",\"muster.io/gpus\":\"3\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}},"
		      "{\"metadata\":{\"name\":\"b\",\"annotations\":{\"gpu-fraction\":\"0.5\",\"muster.io/gpus\":\"3\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{}]}},"
		      "{\"metadata\":{\"name\":\"c\",\"annotations\":{\"gpu-memory\":\"4096\",\"muster.io/gpus\":\"5\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{}]}},"
		      "{\"metadata\":{\"name\":\"d\",\"annotations\":{\"muster.io/gpus\":\"5\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"muster.io/gpu-milli\":\"250\"}}}]}},"
		      "{\"metadata\":{\"name\":\"e\",\"annotations\":{\"muster.io/gpu-memory\":\"1024\"}},"
		      "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{}]}},"
		      "{\"metadata\":{\"name\":\"f\"},"
		      "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}]}");
	json_t *u = mu__dpods_used(l);
	CHECK_STR(t, json_string_value(json_object_get(u, "n1")),
		  "cpu=1000m,memory=0,nvidia.com/gpu=2,pods=4");
	CHECK_STR(t, json_string_value(json_object_get(u, "n2")),
		  "cpu=0m,memory=0,nvidia.com/gpu=2,pods=2");
	json_decref(u);
	json_decref(l);
}

/* The coscheduling PodGroup's minResources in accounting units, refused
 * when a value is not a quantity; other kinds have none. */
static void test_min_resources(mu_t_t *t)
{
	json_t *o = J("{\"spec\":{\"minMember\":2,\"minResources\":{\"cpu\":\"3\",\"memory\":\"2Gi\","
		      "\"nvidia.com/gpu\":\"16\",\"example.com/foo\":\"1\"}}}");
	mu_res_t r;
	char msg[200] = "";
	CHECK_EQ_INT(t, mu__dkind_min_resources(o, MU__DK_COSCHED_PG, &r, msg, sizeof msg), 1);
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 3000);
	CHECK_EQ_INT(t, r.v[MU_RES_MEM], 2LL * 1024 * 1024 * 1024);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 16000);
	CHECK_EQ_INT(t, mu__dkind_min_resources(o, MU__DK_VOLCANO_PG, &r, msg, sizeof msg), 0);
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_COSCHED_PG, msg, sizeof msg), MU_OK);
	json_object_set_new((json_t *)mu__jget(o, "spec.minResources"), "cpu", json_string("lots"));
	CHECK_EQ_INT(t, mu__dkind_check(o, MU__DK_COSCHED_PG, msg, sizeof msg), MU_EINVAL);
	CHECK(t, strstr(msg, "spec.minResources[cpu]: not a quantity") != NULL);
	json_decref(o);
	o = J("{\"spec\":{\"minMember\":2}}");
	CHECK_EQ_INT(t, mu__dkind_min_resources(o, MU__DK_COSCHED_PG, &r, msg, sizeof msg), 0);
	json_decref(o);
}

/* Round 14: a reclaim's victim of another kind gets the condition
 * Preempted in the status the hub writes (its copy's) where the kind's
 * schema takes any condition type (JobSet, LeaderWorkerSet, RayCluster:
 * metav1.Condition with its lastTransitionTime; muster's PodGroup), the
 * copy's own conditions kept and an older Preempted replaced; nothing
 * where the schema names its types (Kubeflow's JobCondition, Volcano's,
 * KAI's) or has none (RayJob, coscheduling). */
static void test_preempted_kinds(mu_t_t *t)
{
	mu__djob_t j;
	memset(&j, 0, sizeof j);
	char rec[] = "InCohortReclamation\tPreempted on cluster big to make room for default/b";
	j.preempted = rec;
	j.kind = MU__DK_JOBSET;
	json_t *st = J("{\"conditions\":[{\"type\":\"StartupPolicyCompleted\",\"status\":\"True\"},"
		       "{\"type\":\"Preempted\",\"status\":\"True\",\"reason\":\"Old\"}],\"restarts\":0}");
	mu__dreclaim_kind_cond(&j, st, false, "2026-11-27T22:00:00Z");
	CHECK_EQ_INT(t, (long)json_array_size(json_object_get(st, "conditions")), 2);
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 0), "type")), "StartupPolicyCompleted");
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 1), "type")), "Preempted");
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 1), "status")), "True");
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 1), "reason")), "InCohortReclamation");
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 1), "message")),
		  "Preempted on cluster big to make room for default/b");
	CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 1), "lastTransitionTime")),
		  "2026-11-27T22:00:00Z");
	CHECK_EQ_INT(t, json_integer_value(json_object_get(st, "restarts")), 0);
	json_decref(st);
	static const mu__dkind_t yes[] = {MU__DK_LWS, MU__DK_RAYCLUSTER, MU__DK_PODGROUP};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		j.kind = yes[i];
		st = json_object(); /* waiting on the hub: no copy's status */
		mu__dreclaim_kind_cond(&j, st, true, NULL);
		CHECK_STR(t, json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 0), "status")), "False");
		CHECK(t, json_object_get(json_array_get(json_object_get(st, "conditions"), 0), "lastTransitionTime") == NULL);
		json_decref(st);
	}
	static const mu__dkind_t no[] = {MU__DK_PYTORCH, MU__DK_MPI, MU__DK_RAYJOB, MU__DK_VOLCANO_PG,
					 MU__DK_KAI_PG, MU__DK_COSCHED_PG, MU__DK_VOLCANO_JOB};
	for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
		j.kind = no[i];
		st = J("{\"conditions\":[{\"type\":\"Running\",\"status\":\"True\"}]}");
		mu__dreclaim_kind_cond(&j, st, false, "2026-11-27T22:00:00Z");
		CHECK_EQ_INT(t, (long)json_array_size(json_object_get(st, "conditions")), 1);
		json_decref(st);
	}
	j.kind = MU__DK_JOBSET; /* never preempted: untouched */
	j.preempted = NULL;
	st = json_object();
	mu__dreclaim_kind_cond(&j, st, false, NULL);
	CHECK(t, json_object_size(st) == 0);
	json_decref(st);
}

/* Round 14: the budgets of a worker's copies' pods, as src/kube/pdb.c
 * tells the engine: per hub uid the least disruptionsAllowed of the
 * budgets of the pod's namespace whose selector matches it (0 when not
 * written yet), an empty selector matching every pod of its namespace, a
 * missing one none; a budget of another namespace counts for nothing. */
static void test_pdb_allowances(mu_t_t *t)
{
	json_t *pdbs = J("["
		"{\"metadata\":{\"namespace\":\"default\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"x\"}}},"
		"\"status\":{\"disruptionsAllowed\":2}},"
		"{\"metadata\":{\"namespace\":\"default\"},\"spec\":{\"selector\":{\"matchExpressions\":"
		"[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"gold\"]}]}},\"status\":{}},"
		"{\"metadata\":{\"namespace\":\"other\"},\"spec\":{\"selector\":{}},"
		"\"status\":{\"disruptionsAllowed\":0}},"
		"{\"metadata\":{\"namespace\":\"default\"},\"spec\":{},\"status\":{\"disruptionsAllowed\":0}}]");
	json_t *pods = J("["
		"{\"metadata\":{\"namespace\":\"default\",\"labels\":{\"muster.io/hub-uid\":\"u1\",\"app\":\"x\"}}},"
		"{\"metadata\":{\"namespace\":\"default\",\"labels\":{\"muster.io/hub-uid\":\"u1\",\"app\":\"x\",\"tier\":\"gold\"}}},"
		"{\"metadata\":{\"namespace\":\"default\",\"labels\":{\"muster.io/hub-uid\":\"u2\",\"app\":\"x\"}}},"
		"{\"metadata\":{\"namespace\":\"default\",\"labels\":{\"muster.io/hub-uid\":\"u3\"}}},"
		"{\"metadata\":{\"namespace\":\"other\",\"labels\":{\"muster.io/hub-uid\":\"u4\"}}},"
		"{\"metadata\":{\"namespace\":\"default\",\"labels\":{\"app\":\"x\"}}}]");
	json_t *a = mu__dpdb_allowances(pdbs, pods);
	CHECK_EQ_INT(t, (long)json_object_size(a), 3);
	CHECK_EQ_INT(t, json_integer_value(json_object_get(a, "u1")), 0); /* gold: not written */
	CHECK_EQ_INT(t, json_integer_value(json_object_get(a, "u2")), 2);
	CHECK(t, json_object_get(a, "u3") == NULL);
	CHECK_EQ_INT(t, json_integer_value(json_object_get(a, "u4")), 0); /* empty: all */
	json_decref(a);
	a = mu__dpdb_allowances(json_array_get(pdbs, 99), pods); /* no budgets */
	CHECK(t, a && json_object_size(a) == 0);
	json_decref(a);
	json_decref(pdbs);
	json_decref(pods);
}

/* Round 23: an elastic PyTorchJob (kubeflow.org/v1): only a Worker
 * replica type (its key spelt as the user wrote it), `replicas` workers
 * of one GPU, spec.elasticPolicy `ep` ("" none). */
static json_t *ptjob(const char *key, int replicas, const char *ep, bool master)
{
	char text[1400];
	const char *tmpl = "{\"spec\":{\"containers\":[{\"name\":\"w\",\"resources\":{\"limits\":"
			   "{\"nvidia.com/gpu\":1}}}]}}";
	snprintf(text, sizeof text,
		 "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{\"name\":\"pt\","
		 "\"namespace\":\"ml\",\"labels\":{\"muster.io/queue\":\"A\"}},\"spec\":{%s%s%s"
		 "\"runPolicy\":{\"suspend\":true},\"pytorchReplicaSpecs\":{%s%s%s\"%s\":{\"replicas\":%d,"
		 "\"template\":%s}}}}", *ep ? "\"elasticPolicy\":" : "", ep, *ep ? "," : "",
		 master ? "\"Master\":{\"replicas\":1,\"template\":" : "", master ? tmpl : "",
		 master ? "}," : "", key, replicas, tmpl);
	return J(text);
}

/* The fleet's reclaim for B's 2-GPU claimant on one 8-GPU cluster that
 * A fills with PyTorchJob o (read as hub.c reads it: its Workload through
 * the loader, shrinkable as mu__dkind_shrinks says) and 1-GPU jobs: the
 * pods the fleet takes off o's copy (0: none; -1: o whole). */
static int reclaim_of(mu_t_t *t, json_t *o)
{
	mu_specs_t s;
	char msg[512];
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_PYTORCH, NULL), &s, msg, sizeof msg), MU_OK);
	if (s.njobs != 1) {
		mu_specs_release(&s);
		return -2;
	}
	mu_fleet_config_t fc;
	mu_fleet_config_defaults(&fc);
	mu_fleet_t *f = NULL;
	CHECK_EQ_INT(t, mu_fleet_new(&fc, &f), MU_OK);
	mu_queue_spec_t qa, qb;
	queue_of(&qa, "A", 4);
	queue_of(&qb, "B", 4);
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &qa), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &qb), MU_OK);
	mu_cluster_spec_t cs = {.name = "big", .tier = MU_TIER_PRIVATE};
	int32_t cid;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &cs, &cid), MU_OK);
	mu_node_spec_t n = node_of("n1", 8);
	CHECK_EQ_INT(t, mu_fleet_node_upsert(f, cid, &n), MU_OK);
	mu_job_spec_t *pt = &s.jobs[0];
	pt->preemptible = true;
	int32_t pods = 0;
	for (size_t i = 0; i < pt->npodsets; i++)
		pods += pt->podsets[i].replicas;
	mu_fleet_job_spec_t fs = {.job = pt, .shrinkable = mu__dkind_shrinks(o, MU__DK_PYTORCH)};
	mu_id_t ptid, id;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs, 0, &ptid), MU_OK);
	/* the rest of the node: 1-GPU jobs of A, one a minute; then B's
	 * 2-GPU claimant, an hour later */
	mu_podset_spec_t ps[2] = {{.name = "main", .replicas = 1}, {.name = "main", .replicas = 2}};
	ps[0].req.v[MU_RES_CPU] = ps[1].req.v[MU_RES_CPU] = 1000;
	ps[0].req.v[MU_RES_GPU] = ps[1].req.v[MU_RES_GPU] = 1;
	mu_job_spec_t one[9];
	char names[9][16];
	for (int i = 0; i <= 8 - pods && i < 9; i++) {
		bool claim = i == 8 - pods;
		mu_time_t at = claim ? HOUR : i * MIN;
		mu_fleet_decisions_t fd;
		mu_fleet_decisions_init(&fd);
		CHECK_EQ_INT(t, mu_fleet_dispatch(f, at, &fd), MU_OK);
		CHECK_EQ_INT(t, (int)fd.n, 1); /* the one submitted before */
		mu_fleet_decisions_release(&fd);
		snprintf(names[i], sizeof names[i], "o%d", i);
		one[i] = (mu_job_spec_t){.name = names[i], .queue = claim ? "B" : "A",
			.podsets = &ps[claim], .npodsets = 1, .preemptible = true, .submit = at,
			.runtime_estimate = 10 * HOUR};
		mu_fleet_job_spec_t os = {.job = &one[i]};
		CHECK_EQ_INT(t, mu_fleet_job_submit(f, &os, at, &id), MU_OK);
	}
	mu_fleet_decisions_t fd;
	mu_fleet_decisions_init(&fd);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, HOUR, &fd), MU_OK);
	CHECK_EQ_INT(t, (int)fd.n, 0); /* the node is full */
	mu_fleet_decisions_release(&fd);
	mu_fleet_reclaims_t rc = {0};
	CHECK_EQ_INT(t, mu_fleet_reclaim(f, HOUR, &rc), MU_OK);
	int got = 0;
	for (size_t k = 0; k < rc.n; k++)
		if (rc.v[k].victim == ptid)
			got = rc.v[k].pods > 0 ? rc.v[k].pods : -1;
	CHECK(t, rc.n > 0);
	mu_fleet_reclaims_release(&rc);
	mu_fleet_free(f);
	mu_specs_release(&s);
	return got;
}

/* Round 23: the kinds the hub shrinks (kinds.c's shrink_ops) and those
 * it takes whole, as the fleet sees them. */
static void test_shrink_kinds(mu_t_t *t)
{
	/* a Job: spec.parallelism, its floor the loader's min-member */
	json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"spec\":{\"parallelism\":4}}");
	CHECK(t, mu__dkind_shrinks(job, MU__DK_JOB));
	CHECK_EQ_INT(t, (int)mu__dkind_size(job, MU__DK_JOB), 4);
	CHECK_EQ_INT(t, (int)mu__dkind_shrink_floor(job, MU__DK_JOB), 0);
	json_t *p = mu__dkind_size_patch(job, MU__DK_JOB, 2);
	char *txt = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(t, txt, "{\"spec\":{\"parallelism\":2}}");
	free(txt);
	json_decref(p);
	json_decref(job);

	/* an elastic PyTorchJob: the Worker's replicas (its scale
	 * subresource's specReplicasPath), its floor minReplicas */
	json_t *o = ptjob("Worker", 6, "{\"minReplicas\":2,\"maxReplicas\":6}", false);
	CHECK(t, mu__dkind_shrinks(o, MU__DK_PYTORCH));
	CHECK_EQ_INT(t, (int)mu__dkind_size(o, MU__DK_PYTORCH), 6);
	CHECK_EQ_INT(t, (int)mu__dkind_shrink_floor(o, MU__DK_PYTORCH), 2);
	p = mu__dkind_size_patch(o, MU__DK_PYTORCH, 4);
	txt = json_dumps(p, JSON_COMPACT);
	CHECK_STR(t, txt, "{\"spec\":{\"pytorchReplicaSpecs\":{\"Worker\":{\"replicas\":4}}}}");
	free(txt);
	json_decref(p);
	/* the fleet's gang and floor: minReplicas (one pod set of six) */
	mu_specs_t s;
	char msg[512];
	CHECK_EQ_INT(t, load(mu__dkind_workload(o, MU__DK_PYTORCH, NULL), &s, msg, sizeof msg), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].min_member, 2);
		CHECK_EQ_INT(t, s.jobs[0].npodsets, 1);
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 6);
	}
	mu_specs_release(&s);
	/* B's claimant takes two of its surplus workers, nothing whole */
	CHECK_EQ_INT(t, reclaim_of(t, o), 2);
	json_decref(o);
	/* the key as the user spelt it (before the operator's defaulting) */
	o = ptjob("worker", 6, "{\"minReplicas\":2}", false);
	p = mu__dkind_size_patch(o, MU__DK_PYTORCH, 3);
	txt = json_dumps(p, JSON_COMPACT);
	CHECK_STR(t, txt, "{\"spec\":{\"pytorchReplicaSpecs\":{\"worker\":{\"replicas\":3}}}}");
	free(txt);
	json_decref(p);
	json_decref(o);
	/* the operator's defaults: maxReplicas, else the replicas */
	o = ptjob("Worker", 6, "{\"maxReplicas\":5}", false);
	CHECK_EQ_INT(t, (int)mu__dkind_shrink_floor(o, MU__DK_PYTORCH), 5);
	json_decref(o);
	o = ptjob("Worker", 6, "{\"rdzvBackend\":\"c10d\"}", false);
	CHECK_EQ_INT(t, (int)mu__dkind_shrink_floor(o, MU__DK_PYTORCH), 6);
	CHECK(t, reclaim_of(t, o) < 1); /* no surplus: never a shrink */
	json_decref(o);

	/* whole: without elasticPolicy, or with a Master (two pod sets) */
	o = ptjob("Worker", 6, "", false);
	CHECK(t, !mu__dkind_shrinks(o, MU__DK_PYTORCH));
	CHECK(t, mu__dkind_size_patch(o, MU__DK_PYTORCH, 2) == NULL);
	json_decref(o);
	o = ptjob("Worker", 5, "{\"minReplicas\":2}", true);
	CHECK(t, !mu__dkind_shrinks(o, MU__DK_PYTORCH));
	CHECK_EQ_INT(t, (int)mu__dkind_size(o, MU__DK_PYTORCH), 0);
	CHECK(t, reclaim_of(t, o) <= 0); /* never a shrink */
	json_decref(o);
	/* the other kinds: whole, whatever their fields */
	const struct {
		mu__dkind_t k;
		const char *text;
	} whole[] = {
		{MU__DK_MPI, "{\"spec\":{\"mpiReplicaSpecs\":{\"Worker\":{\"replicas\":4}}}}"},
		{MU__DK_RAYCLUSTER, raycluster_text},
		{MU__DK_VOLCANO_JOB, vcjob_text},
		{MU__DK_LWS, lws_text},
		{MU__DK_JOBSET, "{\"spec\":{\"replicatedJobs\":[{\"name\":\"w\",\"replicas\":2}]}}"},
		{MU__DK_PODGROUP, "{\"spec\":{\"minMember\":1}}"},
	};
	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
		o = J(whole[i].text);
		CHECK(t, !mu__dkind_shrinks(o, whole[i].k));
		CHECK(t, mu__dkind_size_patch(o, whole[i].k, 1) == NULL);
		json_decref(o);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_names);
	MU_RUN(&t, test_lws);
	MU_RUN(&t, test_groups);
	MU_RUN(&t, test_group_end);
	MU_RUN(&t, test_pod_counts);
	MU_RUN(&t, test_kinds9);
	MU_RUN(&t, test_volcano_job);
	MU_RUN(&t, test_raycluster);
	MU_RUN(&t, test_kai_subgroups);
	MU_RUN(&t, test_podcap);
	MU_RUN(&t, test_podcap_shares);
	MU_RUN(&t, test_min_resources);
	MU_RUN(&t, test_preempted_kinds);
	MU_RUN(&t, test_pdb_allowances);
	MU_RUN(&t, test_shrink_kinds);
	return mu_t_done(&t);
}
