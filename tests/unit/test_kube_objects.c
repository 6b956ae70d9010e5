/*
 * test_kube_objects.c - Kubernetes objects as the daemon reads them: the
 * real Pod, Node, Job, Event, Lease, Status and WatchEvent fixtures of
 * ../shared/data/k8s (every field set, most of them unknown to muster,
 * which must be ignored), pods to engine specs through the shape cache,
 * pod-group labels and Job owners, device annotations and times.  (Pods
 * replayed as bound are the engine's mu_engine_pod_bound(), tested in
 * test_engine_pods.c.)
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kube/daemon_int.h"
#include "muster/engine.h"
#include "muster/jpath.h"
#include "muster/load.h"

#define FIX "../shared/data/k8s/"

static json_t *fixture(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, FIX "%s", name);
	json_t *o = json_load_file(path, 0, NULL);
	if (!o)
		fprintf(stderr, "cannot read %s\n", path);
	return o;
}

/* Replaces every "operator" and "effect" placeholder with valid values
 * (the fixtures fill enums with "operatorValue"), and drops matchFields and
 * namespaceSelector (muster refuses one with labels). */
static void fix_enums(json_t *o)
{
	if (json_is_object(o)) {
		const char *k;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(o, tmp, k, v) {
			if (!strcmp(k, "operator") && json_is_string(v))
				json_object_set_new(o, k, json_string("Exists"));
			else if (!strcmp(k, "effect") && json_is_string(v))
				json_object_set_new(o, k, json_string("NoSchedule"));
			else if (!strcmp(k, "preemptionPolicy") && json_is_string(v))
				json_object_set_new(o, k, json_string("Never"));
			else if (!strcmp(k, "whenUnsatisfiable") && json_is_string(v))
				json_object_set_new(o, k, json_string("DoNotSchedule"));
			else if ((!strcmp(k, "nodeAffinityPolicy") || !strcmp(k, "nodeTaintsPolicy")) &&
				 json_is_string(v))
				json_object_set_new(o, k, json_string("Honor"));
			else if (!strcmp(k, "matchFields") || !strcmp(k, "namespaceSelector"))
				json_object_del(o, k);
			else if (!strcmp(k, "values") && json_is_array(v))
				json_object_del(o, k);
			else if (!strcmp(k, "value") && json_is_string(v))
				json_object_del(o, k);
			else
				fix_enums(v);
		}
	} else if (json_is_array(o)) {
		size_t i;
		json_t *v;
		json_array_foreach(o, i, v)
			fix_enums(v);
	}
}

static void test_pod_fixture(mu_t_t *t)
{
	json_t *pod = fixture("core.v1.Pod.json");
	CHECK(t, pod != NULL);
	if (!pod)
		return;
	mu__kpodinfo_t in;
	CHECK_EQ_INT(t, mu__kpod_info(pod, &in), MU_OK);
	CHECK_STR(t, in.name, "nameValue");
	CHECK_STR(t, in.ns, "namespaceValue");
	CHECK_STR(t, in.node, "nodeNameValue");
	CHECK_STR(t, in.scheduler, "schedulerNameValue");
	CHECK(t, in.deleting && in.gated && !in.terminal);
	CHECK(t, in.owner_job == NULL); /* owner kind is kindValue */
	int64_t ms;
	CHECK_EQ_INT(t, mu__rfc3339_parse("2008-01-01T01:01:01Z", &ms), MU_OK);
	CHECK_EQ_INT(t, in.created_ms, ms);
	/* As is, it uses matchFields, which muster does not read: a clear
	 * error (and its enums are placeholders). */
	mu__kshapes_t c = {0};
	mu__kshape_t *s = mu__kshape_get(&c, pod, false);
	CHECK(t, s && s->err != MU_OK && s->msg && strstr(s->msg, "matchFields"));
	mu__kshape_put(&c, s);
	/* With valid enums, every other field (hundreds) is ignored. */
	fix_enums(pod);
	s = mu__kshape_get(&c, pod, false);
	CHECK(t, s && s->err == MU_OK);
	if (s && s->err)
		fprintf(stderr, "shape: %s\n", s->msg);
	if (s && !s->err) {
		const mu_job_spec_t *j = mu__kshape_job(s);
		CHECK_EQ_INT(t, j->priority, 25); /* spec.priority */
		CHECK_EQ_INT(t, j->podsets[0].nnode_selector, 1);
		CHECK_STR(t, j->podsets[0].node_selector[0].key, "nodeSelectorKey");
		CHECK_EQ_INT(t, j->podsets[0].ntolerations, 1);
		CHECK_EQ_INT(t, j->podsets[0].tolerations[0].op, MU_TOL_EXISTS);
		CHECK_EQ_INT(t, j->podsets[0].naffinity, 1);
		/* Labels, pod (anti-)affinity (required and preferred), spread
		 * and preferred node affinity are read (load_yaml_aff.c). */
		CHECK(t, j->podsets[0].nlabels >= 1);
		CHECK_EQ_INT(t, j->podsets[0].npod_terms, 4);
		CHECK_EQ_INT(t, j->podsets[0].nspread, 1);
		CHECK_EQ_INT(t, j->podsets[0].nnode_pref, 1);
		CHECK(t, j->never_preempt); /* spec.preemptionPolicy: Never */
	}
	mu__kshape_put(&c, s);
	/* A pod without pod affinity keeps no room for its terms: its shape
	 * (the daemon keeps one per gang) holds one small arena block, not
	 * the 15 KB it held with a 6-KB empty term table. */
	json_t *plain = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s,s:[{s:s,s:s,s:{s:{s:s}}}]}}",
				  "apiVersion", "v1", "kind", "Pod", "metadata", "name", "g1-0",
				  "namespace", "default", "labels", "muster.io/pod-group", "g1", "spec",
				  "schedulerName", "muster", "containers", "name", "c", "image", "x",
				  "resources", "limits", "nvidia.com/gpu", "1");
	mu__kshape_t *ps = mu__kshape_get(&c, plain, false);
	CHECK(t, ps && ps->err == MU_OK);
	if (ps && !ps->err) {
		CHECK_EQ_INT(t, mu__kshape_job(ps)->podsets[0].npod_terms, 0);
		CHECK(t, mu_arena_bytes(&ps->specs.arena) <= 2048);
	}
	mu__kshape_put(&c, ps);
	json_decref(plain);
	CHECK_EQ_INT(t, c.n, 0);
	mu__kshapes_release(&c);
	json_decref(pod);
}

static void test_node_fixture(mu_t_t *t)
{
	json_t *node = fixture("core.v1.Node.json");
	CHECK(t, node != NULL);
	if (!node)
		return;
	mu_arena_t a;
	mu_node_spec_t n;
	char msg[256] = "";
	mu_arena_init(&a);
	CHECK(t, mu__knode_spec(node, NULL, &a, &n, msg, sizeof msg) == MU_EPARSE);
	CHECK(t, strstr(msg, "spec.taints[0]") != NULL);
	fix_enums(node);
	CHECK_EQ_INT(t, mu__knode_spec(node, NULL, &a, &n, msg, sizeof msg), MU_OK);
	CHECK_STR(t, n.name, "nameValue");
	CHECK(t, n.unschedulable);
	CHECK_EQ_INT(t, n.nlabels, 1);
	CHECK_EQ_INT(t, n.ntaints, 1);
	CHECK_EQ_INT(t, n.alloc.v[MU_RES_PODS], 110); /* allocatableKey only */
	char *sig = mu__knode_sig(node);
	CHECK(t, sig && strstr(sig, "labelsKey"));
	/* a heartbeat changes nothing the engine sees */
	json_object_set_new(json_array_get(mu__kj(node, "status.conditions"), 0), "lastHeartbeatTime",
			    json_string("2030-01-01T00:00:00Z"));
	char *sig2 = mu__knode_sig(node);
	CHECK(t, sig && sig2 && !strcmp(sig, sig2));
	/* The slim copy the daemon keeps reads the same: signature and spec. */
	json_t *slim = mu__knode_slim(node);
	char *sig3 = mu__knode_sig(slim);
	CHECK(t, sig3 && sig && !strcmp(sig, sig3));
	mu_node_spec_t n2;
	CHECK_EQ_INT(t, mu__knode_spec(slim, NULL, &a, &n2, msg, sizeof msg), MU_OK);
	CHECK_STR(t, n2.name, n.name);
	CHECK(t, n2.unschedulable == n.unschedulable && n2.nlabels == n.nlabels &&
		 n2.ntaints == n.ntaints && !memcmp(&n2.alloc, &n.alloc, sizeof n.alloc));
	CHECK(t, !json_object_get(json_object_get(slim, "metadata"), "annotations"));
	CHECK(t, json_object_get(json_object_get(node, "metadata"), "annotations"));
	json_decref(slim);
	/* ... and so does its text, which the daemon keeps (and compares to
	 * skip heartbeats): parsed back, the same spec and signature */
	char *text = mu__knode_text(node);
	CHECK(t, text && !strstr(text, "annotations") && !strstr(text, "lastHeartbeatTime"));
	json_t *back = mu__knode_parse(text);
	char *sig4 = back ? mu__knode_sig(back) : NULL;
	CHECK(t, sig4 && sig && !strcmp(sig, sig4));
	mu_node_spec_t n3;
	CHECK_EQ_INT(t, back ? mu__knode_spec(back, NULL, &a, &n3, msg, sizeof msg) : MU_ENOMEM, MU_OK);
	CHECK(t, back && n3.unschedulable == n.unschedulable && n3.nlabels == n.nlabels &&
		 n3.ntaints == n.ntaints && !memcmp(&n3.alloc, &n.alloc, sizeof n.alloc));
	json_object_set_new(json_array_get(mu__kj(node, "status.conditions"), 0), "lastHeartbeatTime",
			    json_string("2031-01-01T00:00:00Z"));
	char *text2 = mu__knode_text(node);
	CHECK(t, text && text2 && !strcmp(text, text2)); /* a heartbeat: the same text */
	json_object_set_new(mu__kj(node, "metadata.labels"), "rack", json_string("r9"));
	char *text3 = mu__knode_text(node);
	CHECK(t, text && text3 && strcmp(text, text3)); /* a label: another */
	free(text);
	free(text2);
	free(text3);
	free(sig4);
	json_decref(back);
	free(sig3);
	free(sig);
	free(sig2);
	mu_arena_release(&a);
	json_decref(node);
}

static void test_other_fixtures(mu_t_t *t)
{
	json_t *job = fixture("batch.v1.Job.json"), *ev = fixture("core.v1.Event.json");
	json_t *lease = fixture("coordination.k8s.io.v1.Lease.json");
	json_t *st = fixture("core.v1.Status.json"), *we = fixture("core.v1.WatchEvent.json");
	CHECK(t, job && ev && lease && st && we);
	if (!job || !ev || !lease || !st || !we)
		goto out;
	CHECK_EQ_INT(t, mu__kji(job, "spec.parallelism", 0), 1);
	CHECK(t, json_is_boolean(mu__kj(job, "spec.suspend")));
	CHECK_EQ_INT(t, mu__kji(job, "status.active", 0), 4);
	CHECK(t, mu__kjs(job, "spec.template.spec.schedulerName") != NULL);
	/* without a queue label it is not for muster's admission */
	mu_specs_t s;
	char msg[512];
	mu_specs_init(&s);
	CHECK(t, mu__kjob_spec(job, &s, msg, sizeof msg) != MU_OK && strstr(msg, "muster.io/queue"));
	mu_specs_release(&s);
	CHECK_STR(t, mu__kjs(ev, "involvedObject.name"), "nameValue");
	CHECK_STR(t, mu__kjs(lease, "spec.holderIdentity"), "holderIdentityValue");
	CHECK_EQ_INT(t, mu__kji(lease, "spec.leaseDurationSeconds", 0), 2);
	int64_t ms, base;
	CHECK_EQ_INT(t, mu__rfc3339_parse(mu__kjs(lease, "spec.renewTime"), &ms), MU_OK);
	CHECK_EQ_INT(t, mu__rfc3339_parse("2004-01-01T01:01:01Z", &base), MU_OK);
	CHECK_EQ_INT(t, ms - base, 0); /* microseconds below a millisecond */
	CHECK_EQ_INT(t, mu__kji(st, "code", 0), 6);
	CHECK_STR(t, mu__kjs(st, "reason"), "reasonValue");
	CHECK_STR(t, mu__kjs(we, "type"), "typeValue");
	CHECK(t, json_is_object(mu__kj(we, "object")));
out:
	json_decref(job);
	json_decref(ev);
	json_decref(lease);
	json_decref(st);
	json_decref(we);
}

static json_t *pod_json(const char *text)
{
	json_t *o = json_loads(text, 0, NULL);
	if (!o)
		fprintf(stderr, "bad test JSON: %s\n", text);
	return o;
}

/* A copy of pod p whose affinity uses matchFields (as DaemonSet pods do). */
static json_t *with_match_fields(json_t *p)
{
	json_t *q = json_deep_copy(p);
	json_t *aff = mu__kj(q, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
	json_t *t0 = json_array_get(json_object_get(aff, "nodeSelectorTerms"), 0);
	/* matchFields, which muster does not read, no longer matters once bound */
	json_object_set_new(t0, "matchFields", json_pack("[{s:s,s:s,s:[s]}]", "key", "metadata.name",
							 "operator", "In", "values", "n0"));
	return q;
}

static void test_pod_requests(mu_t_t *t)
{
	mu__kshapes_t c = {0};
	json_t *p = pod_json("{\"metadata\":{\"name\":\"p\",\"annotations\":{\"muster.io/type\":\"interactive\","
			     "\"other\":\"x\"}},\"spec\":{\"initContainers\":[{\"name\":\"side\","
			     "\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}},"
			     "{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"8\"}}}],"
			     "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\","
			     "\"memory\":\"1Gi\"},\"limits\":{\"nvidia.com/gpu\":\"2\"}}},{\"name\":\"b\","
			     "\"resources\":{\"limits\":{\"cpu\":\"2\"}}}],\"nodeSelector\":{\"pool\":\"a\"},"
			     "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			     "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\","
			     "\"values\":[\"r1\",\"r2\"]}]}]}}},\"unknownField\":{\"deep\":[1,2,3]}}}");
	mu__kshape_t *s = mu__kshape_get(&c, p, false);
	CHECK(t, s && s->err == MU_OK);
	if (s && !s->err) {
		const mu_job_spec_t *j = mu__kshape_job(s);
		const mu_podset_spec_t *ps = &j->podsets[0];
		/* sum 3 + sidecar 0.5 = 3.5 < init 8 + sidecar 0.5 = 8.5 */
		CHECK_EQ_INT(t, ps->req.v[MU_RES_CPU], 8500);
		CHECK_EQ_INT(t, ps->req.v[MU_RES_MEM], 1 << 30);
		CHECK_EQ_INT(t, ps->req.v[MU_RES_GPU], 2);
		CHECK_EQ_INT(t, j->type, MU_JOB_INTERACTIVE);
		CHECK_EQ_INT(t, j->priority, 1000);
		CHECK(t, !j->preemptible);
		CHECK_EQ_INT(t, ps->naffinity, 1);
		CHECK_EQ_INT(t, ps->affinity[0].reqs[0].nvalues, 2);
	}
	/* the same scheduling fields share one shape; names do not matter */
	json_t *q = json_deep_copy(p);
	json_object_set_new(json_object_get(q, "metadata"), "name", json_string("q"));
	json_object_set_new(mu__kj(q, "metadata.annotations"), "other", json_string("y"));
	mu__kshape_t *s2 = mu__kshape_get(&c, q, false);
	CHECK(t, s2 == s && s->refs == 2);
	mu__kshape_put(&c, s2);
	/* a different request is another shape */
	json_object_set_new(mu__kj(json_array_get(mu__kj(q, "spec.containers"), 0), "resources.limits"),
			    "nvidia.com/gpu", json_string("500m"));
	mu__kshape_t *s3 = mu__kshape_get(&c, q, false);
	CHECK(t, s3 && s3 != s && s3->err == MU_OK);
	if (s3 && !s3->err && s && !s->err) {
		CHECK_EQ_INT(t, mu__kshape_job(s3)->podsets[0].req.v[MU_RES_GPU_MILLI], 500);
		CHECK(t, !mu__kpodset_equal(&mu__kshape_job(s)->podsets[0], &mu__kshape_job(s3)->podsets[0]));
		CHECK(t, mu__kpodset_equal(&mu__kshape_job(s)->podsets[0], &mu__kshape_job(s)->podsets[0]));
	}
	/* a bad quantity is an error the pod's condition can carry */
	json_object_set_new(mu__kj(json_array_get(mu__kj(q, "spec.containers"), 0), "resources.limits"),
			    "nvidia.com/gpu", json_string("lots"));
	mu__kshape_t *s4 = mu__kshape_get(&c, q, false);
	CHECK(t, s4 && s4->err != MU_OK && s4->msg && strstr(s4->msg, "nvidia.com/gpu"));
	/* bound by another scheduler: only its resources count */
	json_t *ext = with_match_fields(p);
	mu__kshape_t *s5 = mu__kshape_get(&c, ext, true);
	CHECK(t, s5 && s5->err == MU_OK && s5 != s);
	if (s5 && !s5->err) {
		CHECK_EQ_INT(t, mu__kshape_job(s5)->podsets[0].naffinity, 0);
		CHECK_EQ_INT(t, mu__kshape_job(s5)->podsets[0].req.v[MU_RES_CPU], 8500);
	}
	mu__kshape_put(&c, s5);
	json_decref(ext);
	mu__kshape_put(&c, s);
	mu__kshape_put(&c, s3);
	mu__kshape_put(&c, s4);
	CHECK_EQ_INT(t, c.n, 0);
	mu__kshapes_release(&c);
	json_decref(p);
	json_decref(q);
}

static void test_pod_groups(mu_t_t *t)
{
	mu__kpodinfo_t in;
	json_t *p = pod_json("{\"metadata\":{\"name\":\"w-0\",\"namespace\":\"ml\",\"labels\":{"
			     "\"scheduling.x-k8s.io/pod-group\":\"g1\",\"kueue.x-k8s.io/queue-name\":\"team\"},"
			     "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\","
			     "\"uid\":\"u\",\"controller\":true}],\"creationTimestamp\":\"2024-05-06T07:08:09.5+02:00\"},"
			     "\"spec\":{\"schedulerName\":\"muster\",\"containers\":[{\"name\":\"c\"}]},"
			     "\"status\":{\"phase\":\"Succeeded\"}}");
	CHECK_EQ_INT(t, mu__kpod_info(p, &in), MU_OK);
	CHECK_STR(t, in.xgroup_label, "g1");
	CHECK(t, in.group_label == NULL);
	CHECK_STR(t, in.queue, "team");
	CHECK_STR(t, in.owner_job, "j");
	CHECK(t, in.terminal && !in.deleting && !in.gated && !in.node);
	int64_t ms;
	CHECK_EQ_INT(t, mu__rfc3339_parse("2024-05-06T05:08:09.5Z", &ms), MU_OK);
	CHECK_EQ_INT(t, in.created_ms, ms);
	json_object_set_new(mu__kj(p, "metadata.labels"), "muster.io/pod-group", json_string("m1"));
	json_object_set_new(mu__kj(p, "metadata.labels"), "muster.io/queue", json_string("mine"));
	CHECK_EQ_INT(t, mu__kpod_info(p, &in), MU_OK);
	CHECK_STR(t, in.group_label, "m1");
	CHECK_STR(t, in.queue, "mine");
	json_object_set_new(json_array_get(mu__kj(p, "metadata.ownerReferences"), 0), "controller",
			    json_false());
	CHECK_EQ_INT(t, mu__kpod_info(p, &in), MU_OK);
	CHECK(t, in.owner_job == NULL);
	json_decref(p);
	p = pod_json("{\"metadata\":{\"namespace\":\"x\"}}");
	CHECK_EQ_INT(t, mu__kpod_info(p, &in), MU_EPARSE);
	json_decref(p);
}

static void test_devices_and_times(mu_t_t *t)
{
	mu_decision_t d = {.gpus = 0x0c, .gpu_milli = 0, .numa = 1, .nic = 3};
	memset(&d.cpus, 0, sizeof d.cpus);
	CHECK_EQ_INT(t, mu_cpuset_parse("4-7,64", &d.cpus), MU_OK);
	json_t *an = mu__kdev_annotations(&d);
	CHECK_STR(t, json_string_value(json_object_get(an, "muster.io/gpus")), "2,3");
	CHECK_STR(t, json_string_value(json_object_get(an, "muster.io/cpus")), "4-7,64");
	json_t *pod = json_pack("{s:{s:O}}", "metadata", "annotations", an);
	mu_decision_t back;
	mu__kdev_parse(pod, &back);
	CHECK_EQ_INT(t, back.gpus, 0x0c);
	CHECK_EQ_INT(t, back.numa, 1);
	CHECK_EQ_INT(t, back.nic, 3);
	CHECK_EQ_INT(t, mu_cpuset_count(&back.cpus), 5);
	json_decref(pod);
	json_decref(an);
	mu_decision_t none = {.numa = -1, .nic = -1};
	an = mu__kdev_annotations(&none);
	CHECK_EQ_INT(t, json_object_size(an), 0);
	json_decref(an);
	char buf[64];
	int64_t ms;
	mu__rfc3339_format(1700000000123LL * 1000, true, buf, sizeof buf);
	CHECK_STR(t, buf, "2023-11-14T22:13:20.123000Z");
	CHECK_EQ_INT(t, mu__rfc3339_parse(buf, &ms), MU_OK);
	CHECK_EQ_INT(t, ms, 1700000000123LL);
	CHECK(t, mu__rfc3339_parse("2023-11-14 22:13", &ms) != MU_OK);
	CHECK(t, mu__rfc3339_parse("2023-13-14T22:13:20Z", &ms) != MU_OK);
}

static void test_loader_kinds(mu_t_t *t)
{
	char msg[512];
	mu_specs_t s;
	mu_specs_init(&s);
	json_t *q = pod_json("{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"resources\":{\"gpu\":"
			     "{\"deserved\":16}}},\"status\":{\"anything\":1}}");
	CHECK_EQ_INT(t, mu__kqueue_spec(q, &s, msg, sizeof msg), MU_OK);
	CHECK_EQ_INT(t, s.nqueues, 1);
	CHECK_EQ_INT(t, s.queues[0].deserved.v[MU_RES_GPU], 16000);
	json_decref(q);
	mu_arena_t a;
	mu_arena_init(&a);
	mu_topology_spec_t topo;
	json_t *tp = pod_json("{\"metadata\":{\"name\":\"default\"},\"spec\":{\"levels\":[{\"nodeLabel\":"
			      "\"muster.io/block\"},{\"nodeLabel\":\"muster.io/rack\"}]}}");
	CHECK_EQ_INT(t, mu__ktopo_spec(tp, &a, &topo, msg, sizeof msg), MU_OK);
	CHECK_EQ_INT(t, topo.nlevels, 2);
	CHECK_STR(t, topo.levels[1], "muster.io/rack");
	json_decref(tp);
	json_t *nrt = pod_json("{\"metadata\":{\"name\":\"n0\"},\"zones\":[{\"name\":\"node-0\",\"type\":"
			       "\"Node\",\"attributes\":[{\"name\":\"muster.io/cpus\",\"value\":\"0-7\"},"
			       "{\"name\":\"muster.io/gpus\",\"value\":\"0,1\"}]},{\"name\":\"node-1\","
			       "\"type\":\"Node\",\"attributes\":[{\"name\":\"muster.io/cpus\",\"value\":"
			       "\"8-15\"},{\"name\":\"muster.io/gpus\",\"value\":\"2,3\"}]}]}");
	mu_node_topo_spec_t nt;
	CHECK_EQ_INT(t, mu__knrt_spec(nrt, &a, &nt, msg, sizeof msg), MU_OK);
	CHECK_EQ_INT(t, nt.nnuma, 2);
	CHECK_EQ_INT(t, nt.gpu_numa[3], 1);
	json_decref(nrt);
	/* kept packed: its two NUMA nodes, not eight, and reads back the same */
	nt.nnics = 2;
	nt.nic_numa[0] = 0;
	nt.nic_numa[1] = 1;
	nt.nic_names[0] = "mlx5_0";
	nt.nic_names[1] = "mlx5_1";
	mu__knrt_t *k = mu__knrt_pack(&nt);
	CHECK(t, k != NULL);
	if (k) {
		mu_node_topo_spec_t back;
		mu__knrt_unpack(k, &back);
		CHECK_EQ_INT(t, back.nnuma, 2);
		CHECK(t, !memcmp(back.numa, nt.numa, 2 * sizeof nt.numa[0]));
		CHECK(t, !memcmp(back.gpu_numa, nt.gpu_numa, sizeof nt.gpu_numa));
		CHECK(t, !memcmp(back.gpu_group, nt.gpu_group, sizeof nt.gpu_group));
		CHECK_EQ_INT(t, back.nnics, 2);
		CHECK_EQ_INT(t, back.nic_numa[1], 1);
		CHECK_STR(t, back.nic_names[1], "mlx5_1");
		/* 168 + 2 x 72 + 14: under a third of the spec (1,016 bytes) */
		CHECK(t, mu__knrt_bytes(k) <= 340);
		CHECK(t, mu__knrt_bytes(k) * 3 < sizeof(mu_node_topo_spec_t));
		free(k);
	}
	json_t *job = pod_json("{\"metadata\":{\"name\":\"j\",\"labels\":{\"muster.io/queue\":\"team-a\"},"
			       "\"annotations\":{\"muster.io/min-member\":\"2\"}},\"spec\":{\"parallelism\":4,"
			       "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
			       "{\"nvidia.com/gpu\":\"8\"}}}]}}}}");
	CHECK_EQ_INT(t, mu__kjob_spec(job, &s, msg, sizeof msg), MU_OK);
	CHECK_EQ_INT(t, s.njobs, 1);
	CHECK_EQ_INT(t, s.jobs[0].min_member, 2);
	CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 4);
	CHECK_STR(t, s.jobs[0].queue, "team-a");
	json_decref(job);
	mu_arena_release(&a);
	mu_specs_release(&s);
}

/* The event queue is bounded: a full queue refuses once asked to stop;
 * the map keeps what was put. */
static void test_queue_and_map(mu_t_t *t)
{
	mu__kq_t q;
	atomic_int stop;
	atomic_init(&stop, 0);
	CHECK_EQ_INT(t, mu__kq_init(&q, 4), MU_OK);
	for (int i = 0; i < 4; i++)
		CHECK(t, mu__kq_push(&q, (mu__kev_t){MU__KR_PODS, MU__KE_ADDED, json_integer(i)}, &stop));
	atomic_store(&stop, 1);
	CHECK(t, !mu__kq_push(&q, (mu__kev_t){MU__KR_PODS, MU__KE_ADDED, json_integer(9)}, &stop));
	mu__kev_t out[8];
	size_t n = mu__kq_pop(&q, out, 3, 0);
	CHECK_EQ_INT(t, n, 3);
	CHECK_EQ_INT(t, json_integer_value(out[0].obj), 0);
	CHECK_EQ_INT(t, json_integer_value(out[2].obj), 2);
	for (size_t i = 0; i < n; i++)
		json_decref(out[i].obj);
	CHECK_EQ_INT(t, mu__kq_pop(&q, out, 8, 10), 1);
	json_decref(out[0].obj);
	CHECK_EQ_INT(t, mu__kq_pop(&q, out, 8, 10), 0);
	mu__kq_release(&q);
	mu__kmap_t m = {0};
	char keys[300][16];
	for (int i = 0; i < 300; i++) {
		snprintf(keys[i], sizeof keys[i], "k%d", i);
		CHECK_EQ_INT(t, mu__kmap_put(&m, keys[i], keys[i]), MU_OK);
	}
	CHECK_EQ_INT(t, m.n, 300);
	CHECK(t, mu__kmap_get(&m, "k123") == keys[123]);
	CHECK(t, mu__kmap_del(&m, "k5") == keys[5]);
	CHECK(t, mu__kmap_get(&m, "k5") == NULL && m.n == 299);
	mu__kmap_release(&m);
}

/* PDB label selectors: matchLabels and the four operators; a null
 * selector matches nothing, an empty one everything (policy/v1). */
static void test_selector(mu_t_t *t)
{
	json_t *l = json_pack("{s:s,s:s}", "app", "train", "tier", "gpu");
	json_t *sel = json_loads("{\"matchLabels\":{\"app\":\"train\"},"
				 "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\","
				 "\"values\":[\"gpu\",\"cpu\"]},{\"key\":\"x\",\"operator\":"
				 "\"DoesNotExist\"}]}", 0, NULL);
	CHECK(t, mu_label_selector_match(sel, l));
	json_object_set_new(l, "x", json_string("1"));
	CHECK(t, !mu_label_selector_match(sel, l)); /* DoesNotExist fails */
	json_decref(sel);
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"NotIn\","
			 "\"values\":[\"gpu\"]}]}", 0, NULL);
	CHECK(t, !mu_label_selector_match(sel, l));
	json_decref(sel);
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Exists\"}],"
			 "\"matchLabels\":{\"app\":\"serve\"}}", 0, NULL);
	CHECK(t, !mu_label_selector_match(sel, l)); /* matchLabels differ */
	json_decref(sel);
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Gt\","
			 "\"values\":[\"0\"]}]}", 0, NULL);
	CHECK(t, !mu_label_selector_match(sel, l)); /* not a label selector operator */
	json_decref(sel);
	sel = json_object();
	CHECK(t, mu_label_selector_match(sel, l));
	CHECK(t, mu_label_selector_match(sel, NULL));
	CHECK(t, !mu_label_selector_match(NULL, l));
	json_decref(sel);
	json_decref(l);
}

/* The workload kinds (kinds.c): the group, object and part of a pod from
 * what each controller writes, and the minimums and queue of each object
 * (shaped as the samples of ../shared/data/k8s/workloads). */
static void test_kinds(mu_t_t *t)
{
	mu__kwpod_t wp;
	mu__kwinfo_t w;
	json_t *o = json_loads("{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"labels\":{"
			       "\"leaderworkerset.sigs.k8s.io/name\":\"l\",\"leaderworkerset.sigs.k8s.io/"
			       "group-index\":\"2\",\"leaderworkerset.sigs.k8s.io/worker-index\":\"3\"}}}",
			       0, NULL);
	CHECK(t, mu__kw_pod(o, &wp) && wp.kind == MU__WL_LWS);
	CHECK_STR(t, wp.group, "w:ns/LeaderWorkerSet/l/2");
	CHECK_STR(t, wp.wl, "LeaderWorkerSet:ns/l");
	CHECK_STR(t, wp.part, "workers");
	json_decref(o);
	/* a Kubeflow label without a Kubeflow owner is no workload's */
	o = json_loads("{\"metadata\":{\"name\":\"p\",\"labels\":{\"training.kubeflow.org/job-name\":"
		       "\"j\",\"training.kubeflow.org/replica-type\":\"Master\"}}}", 0, NULL);
	CHECK(t, !mu__kw_pod(o, &wp));
	json_object_set_new(json_object_get(o, "metadata"), "ownerReferences",
			    json_loads("[{\"kind\":\"PyTorchJob\",\"name\":\"j\"}]", 0, NULL));
	CHECK(t, mu__kw_pod(o, &wp) && wp.kind == MU__WL_PYTORCH);
	CHECK_STR(t, wp.group, "w:default/PyTorchJob/j");
	CHECK_STR(t, wp.part, "master");
	json_decref(o);
	/* PyTorchJob (samples/pytorchjob.yaml): Master 1 + Worker 1 */
	o = json_loads("{\"metadata\":{\"name\":\"j\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\"}},"
		       "\"spec\":{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1},\"Worker\":{}}}}",
		       0, NULL);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_PYTORCH, &w), MU_OK);
	CHECK_EQ_INT(t, w.min_member, 2);
	CHECK_EQ_INT(t, w.nparts, 2);
	CHECK_STR(t, w.queue, "q");
	json_decref(o);
	/* JobSet (samples/jobset.yaml): workers 4 in parallel + driver 1 */
	o = json_loads("{\"spec\":{\"replicatedJobs\":[{\"name\":\"workers\",\"template\":{\"spec\":"
		       "{\"parallelism\":4}}},{\"name\":\"driver\",\"replicas\":2}]}}", 0, NULL);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_JOBSET, &w), MU_OK);
	CHECK_EQ_INT(t, w.min_member, 6);
	CHECK_STR(t, w.parts[0].name, "workers");
	CHECK_EQ_INT(t, w.parts[0].min, 4);
	CHECK_STR(t, w.queue, "");
	json_decref(o);
	/* RayCluster: the head and each group's minReplicas (elastic above) */
	o = json_loads("{\"spec\":{\"workerGroupSpecs\":[{\"groupName\":\"small\",\"minReplicas\":1,"
		       "\"maxReplicas\":5}]}}", 0, NULL);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_RAY, &w), MU_OK);
	CHECK_EQ_INT(t, w.min_member, 2);
	json_decref(o);
	/* KAI PodGroup: minMember below its SubGroups' sum is raised to it;
	 * the queue is spec.queue */
	o = json_loads("{\"spec\":{\"minMember\":1,\"queue\":\"k\",\"subGroups\":[{\"name\":\"a\","
		       "\"minMember\":2},{\"name\":\"b\",\"minMember\":1}]}}", 0, NULL);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_KAI_PG, &w), MU_OK);
	CHECK_EQ_INT(t, w.min_member, 3);
	CHECK_STR(t, w.queue, "k");
	json_decref(o);
	/* a JobSet without replicated jobs cannot be read */
	o = json_loads("{\"spec\":{}}", 0, NULL);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_JOBSET, &w), MU_EINVAL);
	json_decref(o);
	/* RayJob: its rayClusterSpec's head and minReplicas x numOfHosts, a
	 * gang of templates when suspended; its label names the queue */
	o = json_loads("{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"r\"}},\"spec\":"
		       "{\"suspend\":true,\"rayClusterSpec\":{\"headGroupSpec\":{\"template\":{\"spec\":{}}},"
		       "\"workerGroupSpecs\":[{\"groupName\":\"TPU\",\"minReplicas\":2,\"numOfHosts\":4,"
		       "\"template\":{\"spec\":{}}}]}}}", 0, NULL);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_RAYJOB, &w), MU_OK);
	CHECK_EQ_INT(t, w.min_member, 9);
	CHECK_STR(t, w.parts[1].name, "tpu");
	CHECK_STR(t, w.queue, "r");
	CHECK(t, mu__kw_suspendable(MU__WL_RAYJOB) && mu__kw_suspended(o, MU__WL_RAYJOB));
	mu__kwtmpl_t tm[4];
	/* submissionMode unset is the CRD's default, K8sJobMode: the
	 * submitter Job's pod is a part of minimum 0, counted at admission
	 * with KubeRay's default template */
	CHECK_EQ_INT(t, mu__kw_templates(o, MU__WL_RAYJOB, tm, 4), 3);
	CHECK_STR(t, tm[0].part, "head");
	CHECK_EQ_INT(t, (int)tm[1].count, 8);
	CHECK_STR(t, tm[2].part, "submitter");
	CHECK_EQ_INT(t, (int)tm[2].count, 1);
	CHECK(t, tm[2].submitter_default && !tm[2].tmpl);
	CHECK_EQ_INT(t, w.nparts, 3);
	CHECK_STR(t, w.parts[2].name, "submitter");
	CHECK_EQ_INT(t, w.parts[2].min, 0);
	json_t *sp = mu__kw_submitter_spec();
	CHECK_STR(t, mu__kjs(sp, "restartPolicy"), "Never");
	json_decref(sp);
	/* HTTPMode: no submitter Job */
	json_object_set_new(json_object_get(o, "spec"), "submissionMode", json_string("HTTPMode"));
	CHECK_EQ_INT(t, mu__kw_templates(o, MU__WL_RAYJOB, tm, 4), 2);
	CHECK_EQ_INT(t, mu__kw_read(o, MU__WL_RAYJOB, &w), MU_OK);
	CHECK_EQ_INT(t, w.nparts, 2);
	/* its own submitterPodTemplate */
	json_object_set_new(json_object_get(o, "spec"), "submissionMode", json_string("K8sJobMode"));
	json_object_set_new(json_object_get(o, "spec"), "submitterPodTemplate", json_pack("{s:{}}", "spec"));
	CHECK_EQ_INT(t, mu__kw_templates(o, MU__WL_RAYJOB, tm, 4), 3);
	CHECK(t, !tm[2].submitter_default && json_is_object(tm[2].tmpl));
	CHECK_EQ_INT(t, mu__kw_templates(o, MU__WL_RAYJOB, tm, 2), MU_ELIMIT);
	CHECK_STR(t, mu__kw_plural(MU__WL_RAYJOB), "rayjobs");
	json_decref(o);
	/* a RayCluster its RayJob controls */
	o = json_loads("{\"metadata\":{\"ownerReferences\":[{\"kind\":\"RayJob\",\"name\":\"rj\","
		       "\"controller\":true}]}}", 0, NULL);
	char rj[64];
	CHECK(t, mu__kw_rayjob_of(o, rj, sizeof rj));
	CHECK_STR(t, rj, "rj");
	json_decref(o);
	/* the index a recreating controller gives a pod (move.c) */
	static const struct { const char *pod, *want; } ix[] = {
		{"{\"metadata\":{\"name\":\"w-12\",\"ownerReferences\":[{\"apiVersion\":\"v\",\"kind\":\"StatefulSet\","
		 "\"name\":\"w\",\"controller\":true}]}}", "12"},
		{"{\"metadata\":{\"name\":\"j-x1\",\"labels\":{\"batch.kubernetes.io/job-completion-index\":"
		 "\"3\"},\"ownerReferences\":[{\"apiVersion\":\"v\",\"kind\":\"Job\",\"name\":\"j\","
		 "\"controller\":true}]}}", "3"},
		{"{\"metadata\":{\"name\":\"p-worker-1\",\"labels\":{\"training.kubeflow.org/replica-type\":"
		 "\"worker\",\"training.kubeflow.org/replica-index\":\"1\"},\"ownerReferences\":"
		 "[{\"apiVersion\":\"v\",\"kind\":\"PyTorchJob\",\"name\":\"p\",\"controller\":true}]}}", "worker/1"},
		{"{\"metadata\":{\"name\":\"r-abcde\",\"ownerReferences\":[{\"apiVersion\":\"v\",\"kind\":\"ReplicaSet\","
		 "\"name\":\"r\",\"controller\":true}]}}", NULL},
	};
	for (size_t i = 0; i < sizeof ix / sizeof *ix; i++) {
		mu__kpodinfo_t in;
		char buf[64];
		o = json_loads(ix[i].pod, 0, NULL);
		CHECK_EQ_INT(t, mu__kpod_info(o, &in), MU_OK);
		bool has = mu__kd_move_index(o, &in, buf, sizeof buf);
		CHECK(t, has == (ix[i].want != NULL));
		if (has && ix[i].want)
			CHECK_STR(t, buf, ix[i].want);
		json_decref(o);
	}
}

/* A Job through the daemon's loader (mu__kjob_spec, which reads the tree
 * since round 12) reads as its compact text through the YAML loader
 * reads: the same job, pod sets and queue, and a refusal with the same
 * message (the text's, read again). */
static void test_job_tree_as_text(mu_t_t *t)
{
	static const char *const jobs[] = {
		"{\"metadata\":{\"name\":\"j\",\"labels\":{\"muster.io/queue\":\"team-a\"},"
		"\"annotations\":{\"muster.io/min-member\":\"2\",\"x\":\"1e3\"}},\"spec\":{\"parallelism\":3,"
		"\"completions\":3,\"suspend\":false,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
		"\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\","
		"\"cpu\":\"1500m\",\"memory\":\"2Gi\"}}}]}}},\"status\":{\"active\":3}}",
		"{\"metadata\":{\"name\":\"k\",\"labels\":{\"muster.io/queue\":\"q\"}},\"spec\":{\"parallelism\":\"two\","
		"\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}",
		"{\"metadata\":{\"name\":\"m\",\"labels\":{\"muster.io/queue\":\"q\"}},\"spec\":{\"template\":{\"spec\":"
		"{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{\"cpu\":\"lots\"}}}]}}}}",
	};
	for (size_t k = 0; k < sizeof jobs / sizeof *jobs; k++) {
		json_t *job = pod_json(jobs[k]);
		mu_specs_t a, b;
		mu_specs_init(&a);
		mu_specs_init(&b);
		char msg[512] = "", want[sizeof ((mu_diag_t *)0)->msg] = "";
		int ra = mu__kjob_spec(job, &a, msg, sizeof msg);
		json_t *c = json_copy(job);
		json_object_set_new(c, "apiVersion", json_string("batch/v1"));
		json_object_set_new(c, "kind", json_string("Job"));
		json_object_del(c, "status");
		char *text = json_dumps(c, JSON_COMPACT);
		mu_diag_t d = {""};
		int rb = text ? mu_load_yaml("Job", text, strlen(text), &b, &d) : MU_ENOMEM;
		const char *p = strchr(d.msg, ' ');
		snprintf(want, sizeof want, "%s", p && p[-1] == ':' ? p + 1 : d.msg);
		CHECK_EQ_INT(t, ra, rb);
		CHECK_EQ_INT(t, k == 0 ? ra : ra != MU_OK, k == 0 ? MU_OK : 1);
		if (ra != MU_OK) {
			CHECK_STR(t, msg, want);
		} else {
			CHECK_EQ_INT(t, (int)a.njobs, (int)b.njobs);
			CHECK_EQ_INT(t, a.jobs[0].min_member, b.jobs[0].min_member);
			CHECK_EQ_INT(t, (int)a.jobs[0].npodsets, (int)b.jobs[0].npodsets);
			CHECK_EQ_INT(t, a.jobs[0].podsets[0].replicas, b.jobs[0].podsets[0].replicas);
			CHECK(t, !memcmp(&a.jobs[0].podsets[0].req, &b.jobs[0].podsets[0].req,
					 sizeof a.jobs[0].podsets[0].req));
			CHECK_STR(t, a.jobs[0].queue, b.jobs[0].queue);
		}
		free(text);
		json_decref(c);
		json_decref(job);
		mu_specs_release(&a);
		mu_specs_release(&b);
	}
	/* pods' shapes too (shape_new reads its key's tree): the same pod
	 * set as the key's text through the YAML loader, and the same
	 * message for a pod it refuses */
	static const char *const pods[] = {
		"{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\",\"job-name\":\"j\"},"
		"\"annotations\":{\"muster.io/priority\":\"5\"}},\"spec\":{\"nodeSelector\":{\"x\":\"y\"},"
		"\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],"
		"\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
		"{\"cpu\":\"250m\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"}}}]}}",
		"{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\","
		"\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]}}",
	};
	mu__kshapes_t c = {0};
	for (size_t k = 0; k < sizeof pods / sizeof *pods; k++) {
		json_t *p = pod_json(pods[k]);
		mu__kshape_t *sh = p ? mu__kshape_get(&c, p, false) : NULL;
		CHECK(t, sh != NULL);
		if (sh) {
			mu_specs_t b;
			mu_specs_init(&b);
			mu_diag_t d = {""};
			int rb = mu_load_yaml("pod", sh->key, strlen(sh->key), &b, &d);
			CHECK_EQ_INT(t, sh->err, rb);
			CHECK_EQ_INT(t, k == 0 ? sh->err : sh->err != MU_OK, k == 0 ? MU_OK : 1);
			if (sh->err == MU_OK) {
				CHECK_EQ_INT(t, (int)sh->specs.njobs, 1);
				CHECK(t, !memcmp(&sh->specs.jobs[0].podsets[0].req, &b.jobs[0].podsets[0].req,
						 sizeof b.jobs[0].podsets[0].req));
				CHECK_EQ_INT(t, sh->specs.jobs[0].priority, b.jobs[0].priority);
				CHECK_EQ_INT(t, (int)sh->specs.jobs[0].podsets[0].ntolerations,
					     (int)b.jobs[0].podsets[0].ntolerations);
			} else {
				CHECK(t, sh->msg && strstr(d.msg, sh->msg));
			}
			mu_specs_release(&b);
		}
		mu__kshape_put(&c, sh);
		json_decref(p);
	}
	mu__kshapes_release(&c);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	FILE *probe = fopen(FIX "core.v1.Pod.json", "r");
	if (probe) {
		fclose(probe);
		MU_RUN(&t, test_pod_fixture);
		MU_RUN(&t, test_node_fixture);
		MU_RUN(&t, test_other_fixtures);
	} else {
		printf("skipped: ../shared/data not found (fixture tests)\n");
	}
	MU_RUN(&t, test_pod_requests);
	MU_RUN(&t, test_pod_groups);
	MU_RUN(&t, test_devices_and_times);
	MU_RUN(&t, test_loader_kinds);
	MU_RUN(&t, test_job_tree_as_text);
	MU_RUN(&t, test_queue_and_map);
	MU_RUN(&t, test_selector);
	MU_RUN(&t, test_kinds);
	return mu_t_done(&t);
}
