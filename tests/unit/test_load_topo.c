/*
 * test_load_topo.c - unit tests of the YAML loader's topology and priority
 * parts (a companion of test_load_yaml.c): the Topology kind, job topology
 * requests, alignment and run-time fields of Workloads and batch/v1 Jobs,
 * PriorityClass and the job type's default priorities, NodeResourceTopology
 * (also as the node agent writes it for tests/data/sysfs), NodePool
 * nodeTopology, scenario `devices` expectations, and what
 * mu_specs_validate() settles and checks for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "muster/agent.h"
#include "muster/load.h"

/* Loads text as "t.yaml" into a fresh set s. */
static int load(const char *text, mu_specs_t *s, mu_diag_t *d)
{
	mu_specs_init(s);
	memset(d, 0, sizeof *d);
	return mu_load_yaml("t.yaml", text, strlen(text), s, d);
}

/* Loads text and validates; expects rc from the first that fails (or
 * MU_OK) and, on failure, a message containing sub.  Releases. */
static void expect_rc(mu_t_t *t, int line, const char *text, int rc,
		      const char *sub)
{
	mu_specs_t s;
	mu_diag_t d;
	int got = load(text, &s, &d);
	if (got == MU_OK)
		got = mu_specs_validate(&s, &d);
	if (got != rc || (sub && !strstr(d.msg, sub))) {
		fprintf(stderr, "%s:%d: rc %d (want %d), message: %s\n"
			"  wanted: %s\n", __FILE__, line, got, rc, d.msg,
			sub ? sub : "(any)");
		t->cur_failed++;
	}
	mu_specs_release(&s);
}

#define EXPECT_OK(t, text) expect_rc(t, __LINE__, text, MU_OK, NULL)
#define EXPECT_ERR(t, text, rc, sub) expect_rc(t, __LINE__, text, rc, sub)

#define QUEUE "apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: q}\n---\n"
#define TOPO "apiVersion: muster.io/v1alpha1\nkind: Topology\n" \
	     "metadata: {name: net}\nspec: {levels: [block, rack]}\n---\n"
#define WL_HEAD "apiVersion: muster.io/v1alpha1\nkind: Workload\n" \
		"metadata: {name: w}\nspec:\n  queue: q\n"
#define WL_PODS "  podSets:\n    - {replicas: 4, requests: {cpu: \"2\"}}\n"
#define JOB_HEAD "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n" \
		 "  labels: {muster.io/queue: q}\n"
#define JOB_SPEC "spec:\n  template:\n    spec:\n      containers:\n" \
		 "        - resources: {requests: {cpu: \"4\"}}\n"
#define SC_HEAD "apiVersion: muster.io/v1alpha1\nkind: Scenario\n" \
		"metadata: {name: s}\nspec:\n  steps:\n"

/* --- Topology ------------------------------------------------------------- */

static void test_topology_kind(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(TOPO "apiVersion: muster.io/v1alpha1\nkind: Topology\n"
			     "metadata: {name: power}\nspec:\n  levels:\n"
			     "    - muster.io/pdu\n", &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.ntopologies, 2);
	if (s.ntopologies == 2) {
		CHECK_STR(t, s.topologies[0].name, "net");
		CHECK_EQ_INT(t, s.topologies[0].nlevels, 2);
		CHECK_STR(t, s.topologies[0].levels[0], "block");
		CHECK_STR(t, s.topologies[0].levels[1], "rack");
		CHECK_STR(t, s.topologies[1].levels[0], "muster.io/pdu");
	}
	mu_specs_release(&s);
	const char *h = "apiVersion: muster.io/v1alpha1\nkind: Topology\n"
			"metadata: {name: x}\n";
	char buf[512];
	snprintf(buf, sizeof buf, "%sspec: {levels: []}\n", h);
	EXPECT_ERR(t, buf, MU_ERANGE, "t.yaml:4:16: spec.levels: expected 1 to 8 levels");
	snprintf(buf, sizeof buf, "%sspec: {levels: [a, b, c, d, e, f, g, h, i]}\n", h);
	EXPECT_ERR(t, buf, MU_ERANGE, "got 9");
	snprintf(buf, sizeof buf, "%sspec: {levels: [a, b, a]}\n", h);
	EXPECT_ERR(t, buf, MU_EINVAL, "t.yaml:4:23: spec.levels[2]: the level a is given twice");
	snprintf(buf, sizeof buf, "%sspec: {levels: [a, \"\"]}\n", h);
	EXPECT_ERR(t, buf, MU_EPARSE, "spec.levels[1]: expected a non-empty string");
	snprintf(buf, sizeof buf, "%sspec: {levels: [[a]]}\n", h);
	EXPECT_ERR(t, buf, MU_EPARSE, "spec.levels[0]: expected a string, got a list");
	snprintf(buf, sizeof buf, "%sspec: {}\n", h);
	EXPECT_ERR(t, buf, MU_EPARSE, "spec.levels: required field is missing");
	EXPECT_ERR(t, TOPO TOPO, MU_EEXIST, "topology \"net\" is defined twice");
}

static void test_workload_topology(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(QUEUE TOPO WL_HEAD
			     "  topology:\n    name: net\n    required: block\n"
			     "    preferred: rack\n    slice: {size: 2, level: rack}\n"
			     WL_PODS, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	if (s.njobs == 1) {
		const mu_topo_req_t *q = &s.jobs[0].topo;
		CHECK_STR(t, q->topology, "net");
		CHECK_STR(t, q->required, "block");
		CHECK_STR(t, q->preferred, "rack");
		CHECK_EQ_INT(t, q->slice_size, 2);
		CHECK_STR(t, q->slice_level, "rack");
	}
	mu_specs_release(&s);
	/* No name: the first topology; no topology at all: zeroed. */
	EXPECT_OK(t, QUEUE TOPO WL_HEAD "  topology: {required: rack}\n" WL_PODS);
	CHECK_EQ_INT(t, load(QUEUE WL_HEAD WL_PODS, &s, &d), MU_OK);
	CHECK(t, s.njobs == 1 && !s.jobs[0].topo.required &&
		 !s.jobs[0].topo.topology && s.jobs[0].topo.slice_size == 0);
	mu_specs_release(&s);
	/* Errors the loader sees. */
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {slice: {size: 2}}\n" WL_PODS,
		   MU_EPARSE, "spec.topology.slice.level: a slice needs a level");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {slice: {level: rack}}\n" WL_PODS,
		   MU_EPARSE, "spec.topology.slice.size: a slice needs a size");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {slice: {size: 0, level: rack}}\n"
		   WL_PODS, MU_ERANGE, "spec.topology.slice.size: expected an integer from 1");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {required: \"\"}\n" WL_PODS,
		   MU_EPARSE, "spec.topology.required: expected a level");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: rack\n" WL_PODS,
		   MU_EPARSE, "spec.topology: expected a mapping, got \"rack\"");
	/* Errors only validation sees. */
	EXPECT_ERR(t, QUEUE WL_HEAD "  topology: {required: rack}\n" WL_PODS,
		   MU_ENOENT, "job \"w\": topology \"(the default, the first one "
		   "defined)\" is not defined (kind: Topology); no topologies are defined");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {name: power, required: rack}\n"
		   WL_PODS, MU_ENOENT, "topology \"power\" is not defined (kind: "
		   "Topology); defined topologies: net");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {preferred: zone}\n" WL_PODS,
		   MU_ENOENT, "job \"w\": topology preferred level \"zone\" is not a "
		   "level of topology \"net\"; defined levels: block, rack");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD
		   "  topology: {required: rack, slice: {size: 2, level: block}}\n"
		   WL_PODS, MU_EINVAL, "the slice level \"block\" is outside the "
		   "required level \"rack\"");
	EXPECT_ERR(t, QUEUE TOPO WL_HEAD "  topology: {name: net}\n" WL_PODS
		   "---\n" WL_HEAD WL_PODS, MU_EEXIST, "job \"w\" is defined twice");
}

static void test_job_annotations(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(QUEUE TOPO JOB_HEAD "  annotations:\n"
			     "    muster.io/topology: net\n"
			     "    muster.io/topology-required: block\n"
			     "    muster.io/topology-preferred: rack\n"
			     "    muster.io/topology-slice-size: \"2\"\n"
			     "    muster.io/topology-slice-level: rack\n"
			     "    muster.io/align: link\n"
			     "    muster.io/nic: \"true\"\n"
			     "    muster.io/pin-cpus: \"true\"\n"
			     "    muster.io/runtime-estimate: 2h\n"
			     "    muster.io/runtime-limit: 3h\n"
			     "    muster.io/speedup-exp: \"0.5\"\n"
			     "spec:\n  activeDeadlineSeconds: 7200\n  template:\n"
			     "    spec:\n      containers:\n"
			     "        - resources: {requests: {cpu: \"4\"}}\n",
			     &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	if (s.njobs == 1) {
		const mu_job_spec_t *j = &s.jobs[0];
		CHECK_STR(t, j->topo.topology, "net");
		CHECK_STR(t, j->topo.required, "block");
		CHECK_STR(t, j->topo.preferred, "rack");
		CHECK_EQ_INT(t, j->topo.slice_size, 2);
		CHECK_STR(t, j->topo.slice_level, "rack");
		CHECK_EQ_INT(t, j->podsets[0].align, MU_ALIGN_LINK);
		CHECK(t, j->podsets[0].want_nic && j->podsets[0].pin_cpus);
		CHECK_EQ_INT(t, j->runtime_estimate, 7200000);
		/* activeDeadlineSeconds (2h) is below the annotation's 3h */
		CHECK_EQ_INT(t, j->runtime_limit, 7200000);
		CHECK(t, j->speedup_exp == 0.5);
	}
	mu_specs_release(&s);
	/* activeDeadlineSeconds alone, and a smaller annotation winning. */
	CHECK_EQ_INT(t, load(QUEUE JOB_HEAD "spec:\n  activeDeadlineSeconds: 60\n"
			     "  template:\n    spec:\n      containers: [{}]\n",
			     &s, &d), MU_OK);
	CHECK(t, s.njobs == 1 && s.jobs[0].runtime_limit == 60000);
	mu_specs_release(&s);
	CHECK_EQ_INT(t, load(QUEUE JOB_HEAD "  annotations: {muster.io/runtime-limit: 30s}\n"
			     "spec:\n  activeDeadlineSeconds: 60\n"
			     "  template:\n    spec:\n      containers: [{}]\n",
			     &s, &d), MU_OK);
	CHECK(t, s.njobs == 1 && s.jobs[0].runtime_limit == 30000);
	mu_specs_release(&s);
	EXPECT_ERR(t, QUEUE JOB_HEAD "  annotations: {muster.io/align: gpu}\n" JOB_SPEC,
		   MU_EINVAL, "metadata.annotations[muster.io/align]: expected none, "
		   "numa or link, got \"gpu\"");
	EXPECT_ERR(t, QUEUE JOB_HEAD "  annotations: {muster.io/topology-slice-size: \"4\"}\n"
		   JOB_SPEC, MU_EPARSE, "metadata.annotations[muster.io/topology-"
		   "slice-level]: a slice needs a level");
	EXPECT_ERR(t, QUEUE JOB_HEAD "spec:\n  activeDeadlineSeconds: 0\n"
		   "  template:\n    spec:\n      containers: [{}]\n", MU_ERANGE,
		   "spec.activeDeadlineSeconds: expected an integer from 1 to 3153600000");
	EXPECT_ERR(t, QUEUE JOB_HEAD "  annotations: {muster.io/pin-cpus: \"yes\"}\n"
		   "spec:\n  template:\n    spec:\n      containers:\n"
		   "        - resources: {requests: {cpu: 500m}}\n", MU_EINVAL,
		   "metadata.annotations[muster.io/pin-cpus]: pinned CPUs are whole "
		   "CPUs, but the pod asks for 0.500; ask for a multiple of 1000m");
}

static void test_podset_alignment(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(QUEUE WL_HEAD "  podSets:\n"
			     "    - {name: a, requests: {cpu: \"8\", nvidia.com/gpu: \"2\"},\n"
			     "       align: numa, nic: true, pinCPUs: true}\n"
			     "    - {name: b, align: link}\n"
			     "    - name: c\n      align: none\n      pinCPUs: false\n"
			     "      template:\n        spec:\n          containers:\n"
			     "            - resources: {requests: {cpu: 1500m}}\n"
			     "    - name: d\n      pinCPUs: true\n"
			     "      template:\n        spec:\n          containers:\n"
			     "            - resources: {requests: {cpu: \"2\"}}\n",
			     &s, &d), MU_OK);
	if (s.njobs == 1 && s.jobs[0].npodsets == 4) {
		const mu_podset_spec_t *p = s.jobs[0].podsets;
		CHECK_EQ_INT(t, p[0].align, MU_ALIGN_NUMA);
		CHECK(t, p[0].want_nic && p[0].pin_cpus);
		CHECK_EQ_INT(t, p[1].align, MU_ALIGN_LINK);
		CHECK(t, !p[1].want_nic && !p[1].pin_cpus);
		CHECK_EQ_INT(t, p[2].align, MU_ALIGN_NONE);
		CHECK(t, !p[2].pin_cpus);
		CHECK(t, p[3].pin_cpus);
	} else {
		CHECK(t, false);
		fprintf(stderr, "  %s\n", d.msg);
	}
	mu_specs_release(&s);
	EXPECT_ERR(t, QUEUE WL_HEAD "  podSets:\n    - {requests: {cpu: 2500m}, pinCPUs: true}\n",
		   MU_EINVAL, "t.yaml:11:41: spec.podSets[0].pinCPUs: pinned CPUs are "
		   "whole CPUs, but the pod asks for 2.500");
	EXPECT_ERR(t, QUEUE WL_HEAD "  podSets:\n    - {pinCPUs: true}\n", MU_EINVAL,
		   "spec.podSets[0].pinCPUs: pinned CPUs need a cpu request of whole "
		   "CPUs; the pod asks for none");
	EXPECT_ERR(t, QUEUE WL_HEAD "  podSets:\n    - {requests: {cpu: \"513\"}, pinCPUs: true}\n",
		   MU_ERANGE, "at most 512 pinned CPUs, the pod asks for 513");
	EXPECT_ERR(t, QUEUE WL_HEAD "  podSets:\n    - {align: NUMA}\n", MU_EINVAL,
		   "spec.podSets[0].align: expected none, numa or link, got \"NUMA\"");
	EXPECT_ERR(t, QUEUE WL_HEAD "  podSets:\n    - {nic: 2}\n", MU_EPARSE,
		   "spec.podSets[0].nic: expected true or false, got \"2\"");
}

static void test_runtime_fields(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(QUEUE WL_HEAD "  runtimeEstimate: 1h30m\n"
			     "  runtimeLimit: 2h\n  speedupExp: 0.7\n" WL_PODS,
			     &s, &d), MU_OK);
	if (s.njobs == 1) {
		CHECK_EQ_INT(t, s.jobs[0].runtime_estimate, 5400000);
		CHECK_EQ_INT(t, s.jobs[0].runtime_limit, 7200000);
		CHECK(t, s.jobs[0].speedup_exp == 0.7);
	}
	mu_specs_release(&s);
	CHECK_EQ_INT(t, load(QUEUE WL_HEAD WL_PODS, &s, &d), MU_OK);
	CHECK(t, s.njobs == 1 && s.jobs[0].runtime_estimate == 0 &&
		 s.jobs[0].runtime_limit == 0 && s.jobs[0].speedup_exp == 0);
	mu_specs_release(&s);
	EXPECT_ERR(t, QUEUE WL_HEAD "  speedupExp: 5\n" WL_PODS, MU_ERANGE,
		   "spec.speedupExp: expected a number from 0 to 4, got \"5\"");
	EXPECT_ERR(t, QUEUE WL_HEAD "  runtimeLimit: -1h\n" WL_PODS, MU_ERANGE,
		   "spec.runtimeLimit: expected a duration");
	EXPECT_ERR(t, QUEUE WL_HEAD "  runtimeEstimate: soon\n" WL_PODS, MU_EPARSE,
		   "spec.runtimeEstimate: expected a duration");
}

/* --- Priorities ----------------------------------------------------------- */

#define PC(name, value) "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n" \
	"metadata: {name: " name "}\nvalue: " value "\n"

/* The priority of job `name` in s, or -12345. */
static int32_t prio_of(const mu_specs_t *s, const char *name)
{
	for (size_t i = 0; i < s->njobs; i++)
		if (!strcmp(s->jobs[i].name, name))
			return s->jobs[i].priority;
	return -12345;
}

static void test_type_default_priority(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	static const char *y =
		QUEUE
		"apiVersion: muster.io/v1alpha1\nkind: Workload\nmetadata: {name: tr}\n"
		"spec: {queue: q, podSets: [{}]}\n---\n"
		"apiVersion: muster.io/v1alpha1\nkind: Workload\nmetadata: {name: ba}\n"
		"spec: {queue: q, type: batch, podSets: [{}]}\n---\n"
		"apiVersion: muster.io/v1alpha1\nkind: Workload\nmetadata: {name: in}\n"
		"spec: {queue: q, type: inference, podSets: [{}]}\n---\n"
		"apiVersion: muster.io/v1alpha1\nkind: Workload\nmetadata: {name: ia}\n"
		"spec: {queue: q, type: interactive, podSets: [{}]}\n---\n"
		"apiVersion: muster.io/v1alpha1\nkind: Workload\nmetadata: {name: ex}\n"
		"spec: {queue: q, type: interactive, priority: 0, podSets: [{}]}\n---\n"
		"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: jb\n"
		"  labels: {muster.io/queue: q}\n"
		"  annotations: {muster.io/type: inference}\n"
		"spec: {template: {spec: {containers: [{}]}}}\n";
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	/* Set at load time already, and kept by validation. */
	CHECK_EQ_INT(t, prio_of(&s, "in"), 100);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	CHECK_EQ_INT(t, prio_of(&s, "tr"), 0);
	CHECK_EQ_INT(t, prio_of(&s, "ba"), 0);
	CHECK_EQ_INT(t, prio_of(&s, "in"), 100);
	CHECK_EQ_INT(t, prio_of(&s, "ia"), 1000);
	CHECK_EQ_INT(t, prio_of(&s, "ex"), 0);
	CHECK_EQ_INT(t, prio_of(&s, "jb"), 100);
	mu_specs_release(&s);
	/* The compact CSV trace: an empty priority takes the type's. */
	static const char *csv = "name,queue,submit_s,pods,priority,type\n"
				 "a,q,0,1,,interactive\nb,q,0,1,5,interactive\n"
				 "c,q,0,1,,inference\n";
	mu_specs_init(&s);
	CHECK_EQ_INT(t, mu_load_buffer("t.csv", csv, strlen(csv), NULL, &s, &d),
		     MU_OK);
	CHECK_EQ_INT(t, prio_of(&s, "a"), 1000);
	CHECK_EQ_INT(t, prio_of(&s, "b"), 5);
	CHECK_EQ_INT(t, prio_of(&s, "c"), 100);
	mu_specs_release(&s);
}

static void test_priority_class(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	/* The class comes after the job, in another file. */
	static const char *jobs =
		QUEUE WL_HEAD "  type: interactive\n  priorityClassName: low\n" WL_PODS
		"---\n" JOB_HEAD "spec:\n  template:\n    spec:\n"
		"      priorityClassName: high\n      containers: [{}]\n";
	static const char *classes = PC("high", "1000000") "description: x\n"
				     "preemptionPolicy: Never\n---\n" PC("low", "-5");
	CHECK_EQ_INT(t, load(jobs, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_yaml("c.yaml", classes, strlen(classes), &s, &d),
		     MU_OK);
	CHECK_EQ_INT(t, s.npclasses, 2);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	CHECK_EQ_INT(t, prio_of(&s, "w"), -5);
	CHECK_EQ_INT(t, prio_of(&s, "j"), 1000000);
	/* Validating again changes nothing. */
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	CHECK_EQ_INT(t, prio_of(&s, "w"), -5);
	mu_specs_release(&s);
	EXPECT_ERR(t, QUEUE PC("high", "10") "---\n" WL_HEAD
		   "  priorityClassName: urgent\n" WL_PODS, MU_ENOENT,
		   "t.yaml:15:22: job \"w\": priority class \"urgent\" is not defined "
		   "(kind: PriorityClass, apiVersion: scheduling.k8s.io/v1); defined "
		   "priority classes: high");
	EXPECT_ERR(t, QUEUE PC("high", "10") "---\n" WL_HEAD "  priority: 3\n"
		   "  priorityClassName: high\n" WL_PODS, MU_EINVAL,
		   "spec.priorityClassName: give a priority or a priority class, not both");
	EXPECT_ERR(t, PC("high", "1") "---\n" PC("high", "2"), MU_EEXIST,
		   "priority class \"high\" is defined twice");
	EXPECT_ERR(t, PC("x", "3000000000"), MU_ERANGE,
		   "t.yaml:4:8: value: expected an integer from -2147483648 to 2147483647");
	EXPECT_ERR(t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		   "metadata: {name: x}\n", MU_EPARSE, "value: required field is missing");
	EXPECT_ERR(t, QUEUE WL_HEAD "  priorityClassName: \"Not A Name\"\n" WL_PODS,
		   MU_EINVAL, "spec.priorityClassName: expected a name");
}

static void test_priority_global_default(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	static const char *y =
		QUEUE WL_HEAD "  type: inference\n" WL_PODS
		"---\napiVersion: muster.io/v1alpha1\nkind: Workload\n"
		"metadata: {name: given}\nspec: {queue: q, priority: 7, podSets: [{}]}\n"
		"---\n" PC("std", "50") "globalDefault: true\n---\n" PC("other", "9");
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	CHECK_EQ_INT(t, prio_of(&s, "w"), 50);      /* not the type's 100 */
	CHECK_EQ_INT(t, prio_of(&s, "given"), 7);
	mu_specs_release(&s);
	EXPECT_ERR(t, PC("a", "1") "globalDefault: true\n---\n" PC("b", "2")
		   "globalDefault: true\n", MU_EINVAL, "priority classes \"a\" and "
		   "\"b\" are both globalDefault; at most one may be");
}

/* --- NodeResourceTopology ------------------------------------------------- */

/* The agent's YAML for a recorded sysfs tree, malloc'ed; NULL on failure. */
static char *agent_yaml(const char *root, const char *node)
{
	mu_topo_t topo;
	mu_diag_t d;
	char *buf = NULL;
	size_t len = 0;
	mu_topo_init(&topo);
	if (mu_topo_discover(root, &topo, &d) != MU_OK) {
		fprintf(stderr, "  discover %s: %s\n", root, d.msg);
		return NULL;
	}
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		if (mu_topo_write(&topo, node, MU_TOPO_YAML, f) != MU_OK) {
			fclose(f);
			free(buf);
			buf = NULL;
		} else {
			fclose(f);
		}
	}
	mu_topo_release(&topo);
	return buf;
}

#define NODE(name, gpus) "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" \
	"status: {allocatable: {cpu: \"128\", nvidia.com/gpu: \"" gpus "\"}}\n"

/* The node called name in s, or NULL. */
static const mu_node_spec_t *node_of(const mu_specs_t *s, const char *name)
{
	for (size_t i = 0; i < s->nnodes; i++)
		if (!strcmp(s->nodes[i].name, name))
			return &s->nodes[i];
	return NULL;
}

static void test_nrt_from_agent_dgx8(mu_t_t *t)
{
	char *nrt = agent_yaml("tests/data/sysfs/dgx8", "dgx-01");
	CHECK(t, nrt != NULL);
	if (!nrt)
		return;
	mu_specs_t s;
	mu_diag_t d;
	/* The NRT first, its node after it in another file. */
	CHECK_EQ_INT(t, load(nrt, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_yaml("n.yaml", NODE("dgx-01", "8"),
				     strlen(NODE("dgx-01", "8")), &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	const mu_node_spec_t *n = node_of(&s, "dgx-01");
	const mu_node_topo_spec_t *tp = n ? n->topo : NULL;
	CHECK(t, tp != NULL);
	if (tp) {
		char cpus[128];
		CHECK_EQ_INT(t, tp->nnuma, 2);
		mu_cpuset_format(&tp->numa[0].cpus, cpus, sizeof cpus);
		CHECK_STR(t, cpus, "0-31,64-95");
		mu_cpuset_format(&tp->numa[1].cpus, cpus, sizeof cpus);
		CHECK_STR(t, cpus, "32-63,96-127");
		CHECK_EQ_INT(t, tp->numa[1].memory, 512LL << 30);
		for (int g = 0; g < 8; g++) {
			CHECK_EQ_INT(t, tp->gpu_numa[g], g / 4);
			CHECK_EQ_INT(t, tp->gpu_group[g], 0); /* one NVLink island */
		}
		CHECK_EQ_INT(t, tp->gpu_numa[8], -1);
		CHECK_EQ_INT(t, tp->nnics, 8);
		CHECK_STR(t, tp->nic_names[0], "ibp5s0");
		CHECK_EQ_INT(t, tp->nic_numa[3], 0);
		CHECK_STR(t, tp->nic_names[4], "ibp133s0");
		CHECK_EQ_INT(t, tp->nic_numa[4], 1);
	}
	mu_specs_release(&s);
	free(nrt);
}

static void test_nrt_from_agent_pcie4(mu_t_t *t)
{
	char *nrt = agent_yaml("tests/data/sysfs/pcie4", "p4");
	CHECK(t, nrt != NULL);
	if (!nrt)
		return;
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(nrt, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_yaml("n.yaml", NODE("p4", "4"),
				     strlen(NODE("p4", "4")), &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	const mu_node_spec_t *n = node_of(&s, "p4");
	const mu_node_topo_spec_t *tp = n ? n->topo : NULL;
	CHECK(t, tp != NULL);
	if (tp) {
		CHECK_EQ_INT(t, tp->nnuma, 1);
		CHECK_EQ_INT(t, tp->numa[0].memory, 256LL << 30);
		static const int group[4] = {0, 0, 1, 1}; /* two PCIe switches */
		for (int g = 0; g < 4; g++) {
			CHECK_EQ_INT(t, tp->gpu_numa[g], 0);
			CHECK_EQ_INT(t, tp->gpu_group[g], group[g]);
		}
		CHECK_EQ_INT(t, tp->nnics, 2);
		CHECK_STR(t, tp->nic_names[1], "enp33s0f1");
	}
	mu_specs_release(&s);
	/* The node has 8 GPUs, the report 4: an error naming both. */
	CHECK_EQ_INT(t, load(nrt, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_yaml("n.yaml", NODE("p4", "8"),
				     strlen(NODE("p4", "8")), &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_EINVAL);
	CHECK(t, strstr(d.msg, "t.yaml:4:9: NodeResourceTopology \"p4\" lists 4 "
			"GPUs, but the node has 8") != NULL);
	mu_specs_release(&s);
	free(nrt);
}

#define NRT_HEAD "apiVersion: topology.node.k8s.io/v1alpha2\n" \
		 "kind: NodeResourceTopology\nmetadata: {name: n0}\nzones:\n"
/* A zone node-ID with the given muster.io attributes' values. */
#define ZONE(id, cpus, gpus, groups, nics)                                   \
	"  - name: node-" id "\n    type: Node\n    attributes:\n"             \
	"      - {name: muster.io/cpus, value: \"" cpus "\"}\n"               \
	"      - {name: muster.io/gpus, value: \"" gpus "\"}\n"               \
	"      - {name: muster.io/gpu-link-groups, value: \"" groups "\"}\n"  \
	"      - {name: muster.io/nics, value: \"" nics "\"}\n"               \
	"    resources:\n      - {name: cpu, capacity: \"4\"}\n"              \
	"      - {name: memory, capacity: 64Gi, allocatable: 60Gi}\n"

static void test_nrt_handwritten(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	/* Zones out of order and sparse ids; node-4's GPUs have the lower
	 * addresses, so they are GPUs 0 and 1. */
	static const char *y =
		NODE("n0", "4") "---\n" NRT_HEAD
		"  - {name: socket-0, type: Socket}\n"
		ZONE("4", "4-7", "0000:03:00.0,0000:04:00.0", "pcie9:0000:03:00.0|0000:04:00.0",
		     "mlx5_0@0000:05:00.0")
		ZONE("0", "0-3", "0000:83:00.0,0000:84:00.0", "nv:0000:83:00.0;pcie1:0000:84:00.0",
		     "0000:85:00.0,eth1@0000:86:00.0");
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	const mu_node_topo_spec_t *tp = s.nnodes ? s.nodes[0].topo : NULL;
	CHECK(t, tp != NULL);
	if (tp) {
		char cpus[64];
		CHECK_EQ_INT(t, tp->nnuma, 2);
		mu_cpuset_format(&tp->numa[0].cpus, cpus, sizeof cpus);
		CHECK_STR(t, cpus, "0-3"); /* node-0 is NUMA node 0 */
		CHECK_EQ_INT(t, tp->numa[0].memory, 60LL << 30); /* allocatable */
		CHECK_EQ_INT(t, tp->gpu_numa[0], 1);
		CHECK_EQ_INT(t, tp->gpu_numa[1], 1);
		CHECK_EQ_INT(t, tp->gpu_numa[2], 0);
		CHECK_EQ_INT(t, tp->gpu_numa[3], 0);
		/* groups numbered as they first claim a GPU, zone by zone */
		CHECK_EQ_INT(t, tp->gpu_group[2], 0);
		CHECK_EQ_INT(t, tp->gpu_group[3], 1);
		CHECK_EQ_INT(t, tp->gpu_group[0], 2);
		CHECK_EQ_INT(t, tp->gpu_group[1], 2);
		CHECK_EQ_INT(t, tp->nnics, 3);
		CHECK_STR(t, tp->nic_names[0], "0000:85:00.0");
		CHECK_STR(t, tp->nic_names[1], "eth1");
		CHECK_STR(t, tp->nic_names[2], "mlx5_0");
		CHECK_EQ_INT(t, tp->nic_numa[2], 1);
	}
	mu_specs_release(&s);
	/* GPUs by index. */
	CHECK_EQ_INT(t, load(NODE("n0", "4") "---\n" NRT_HEAD
			     ZONE("0", "0-3", "1,0", "g:0|1", "")
			     ZONE("1", "4-7", "3, 2", "g:2|3", ""), &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	tp = s.nnodes ? s.nodes[0].topo : NULL;
	CHECK(t, tp && tp->gpu_numa[1] == 0 && tp->gpu_numa[2] == 1 &&
		 tp->gpu_group[3] == 0 && tp->nnics == 0);
	mu_specs_release(&s);
}

static void test_nrt_errors(mu_t_t *t)
{
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "", "", ""), MU_ENOENT,
		   "t.yaml:3:18: NodeResourceTopology \"n0\": no node of that name "
		   "is defined (a Node, or a node of a NodePool)");
	EXPECT_ERR(t, NODE("n0", "0") "---\n" NRT_HEAD ZONE("0", "0-3", "", "", "")
		   "---\n" NRT_HEAD ZONE("0", "0-3", "", "", ""), MU_EEXIST,
		   "NodeResourceTopology \"n0\" is given twice");
	EXPECT_ERR(t, NRT_HEAD "  - {name: numa0, type: Node}\n", MU_EINVAL,
		   "t.yaml:5:12: zones[0].name: a zone of type Node must be named "
		   "node-N, N from 0 to 1023, got \"numa0\"");
	EXPECT_ERR(t, NRT_HEAD "  - {name: node-0, type: Node}\n"
		   "  - {name: node-0, type: Node}\n", MU_EINVAL,
		   "zones[1].name: two zones are named node-0");
	EXPECT_ERR(t, NRT_HEAD "  - {name: c0, type: Core}\n", MU_EINVAL,
		   "zones: no zone of type Node");
	EXPECT_ERR(t, NRT_HEAD "  - {name: node-0, type: Node}\n"
		   "  - {name: node-1, type: Node}\n  - {name: node-2, type: Node}\n"
		   "  - {name: node-3, type: Node}\n  - {name: node-4, type: Node}\n"
		   "  - {name: node-5, type: Node}\n  - {name: node-6, type: Node}\n"
		   "  - {name: node-7, type: Node}\n  - {name: node-8, type: Node}\n",
		   MU_ELIMIT, "zones[8]: more than 8 NUMA zones");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "", "", "") ZONE("1", "3-5", "", "", ""),
		   MU_EINVAL, "zones[1].attributes[0].value: a CPU is in two NUMA zones");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3,x", "", "", ""), MU_EPARSE,
		   "zones[0].attributes[0].value: expected a cpulist such as "
		   "0-31,64-95 of CPUs 0 to 511, got \"0-3,x\"");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "0000:03:00.0,07:00.0", "", ""),
		   MU_EPARSE, "zones[0].attributes[1].value: expected PCI addresses "
		   "such as 0000:07:00.0 separated by commas, got \"07:00.0\"");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "0,0000:03:00.0", "", ""),
		   MU_EPARSE, "expected GPU indices 0 to 63 separated by commas, "
		   "got \"0000:03:00.0\"");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "0,2", "", ""), MU_EINVAL,
		   "GPU indices must be 0 to 1, each once; 1 is missing");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "0,1", "", "") ZONE("1", "4", "1", "", ""),
		   MU_EPARSE, "zones[1].attributes[1].value: expected each GPU "
		   "once, got \"1\"");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "0,1", "g:0|2", ""), MU_EPARSE,
		   "zones[0].attributes[2].value: expected a GPU of the node's "
		   "muster.io/gpus, got \"2\"");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "0,1", "0|1", ""), MU_EPARSE,
		   "expected GROUP:GPU|GPU... entries separated by ';'");
	EXPECT_ERR(t, NRT_HEAD ZONE("0", "0-3", "", "", "eth0"), MU_EPARSE,
		   "expected NICs as IFNAME@ADDRESS or ADDRESS separated by commas, "
		   "got \"eth0\"");
	EXPECT_ERR(t, NRT_HEAD "  - name: node-0\n    type: Node\n    attributes:\n"
		   "      - {name: muster.io/cpus, value: \"0\"}\n"
		   "      - {name: muster.io/cpus, value: \"1\"}\n", MU_EINVAL,
		   "zones[0].attributes[1].name: the attribute muster.io/cpus is "
		   "given twice");
	EXPECT_ERR(t, NRT_HEAD "  - name: node-0\n    type: Node\n    resources:\n"
		   "      - {name: memory, capacity: lots}\n", MU_EPARSE,
		   "zones[0].resources[0].capacity: expected a quantity");
	EXPECT_ERR(t, "apiVersion: topology.node.k8s.io/v1alpha1\n"
		   "kind: NodeResourceTopology\nmetadata: {name: n0}\nzones: []\n",
		   MU_EINVAL, "unknown kind \"NodeResourceTopology\" (apiVersion "
		   "\"topology.node.k8s.io/v1alpha1\")");
}

/* --- NodePool nodeTopology ------------------------------------------------ */

#define POOL_HEAD "apiVersion: muster.io/v1alpha1\nkind: NodePool\n" \
		  "metadata: {name: p}\nspec:\n  count: 3\n" \
		  "  allocatable: {cpu: \"16\", nvidia.com/gpu: \"4\"}\n"

static void test_nodepool_topology(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(POOL_HEAD "  nodeTopology:\n"
			     "    numa:\n      - {cpus: \"0-7\", memory: 64Gi}\n"
			     "      - {cpus: \"8-15\", memory: 64Gi}\n"
			     "    gpus: [{numa: 0, group: 0}, {numa: 0, group: 0},\n"
			     "           {numa: 1, group: 1}, {numa: 1}]\n"
			     "    nics: [{numa: 0, name: mlx5_0}, {numa: 1}]\n",
			     &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 3);
	if (s.nnodes == 3) {
		const mu_node_topo_spec_t *tp = s.nodes[2].topo;
		CHECK(t, tp != NULL && tp == s.nodes[0].topo);
		if (tp) {
			char cpus[64];
			CHECK_EQ_INT(t, tp->nnuma, 2);
			mu_cpuset_format(&tp->numa[1].cpus, cpus, sizeof cpus);
			CHECK_STR(t, cpus, "8-15");
			CHECK_EQ_INT(t, tp->numa[0].memory, 64LL << 30);
			CHECK_EQ_INT(t, tp->gpu_numa[2], 1);
			CHECK_EQ_INT(t, tp->gpu_group[2], 1);
			CHECK_EQ_INT(t, tp->gpu_group[3], -1);
			CHECK_EQ_INT(t, tp->gpu_numa[4], -1);
			CHECK_EQ_INT(t, tp->nnics, 2);
			CHECK_STR(t, tp->nic_names[0], "mlx5_0");
			CHECK(t, tp->nic_names[1] == NULL);
			CHECK_EQ_INT(t, tp->nic_numa[1], 1);
		}
	}
	mu_specs_release(&s);
	/* An NRT for one node of the pool replaces the pool's. */
	CHECK_EQ_INT(t, load(POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0-15\"}]}\n"
			     "---\napiVersion: topology.node.k8s.io/v1alpha2\n"
			     "kind: NodeResourceTopology\nmetadata: {name: p-1}\n"
			     "zones: [{name: node-0, type: Node}, {name: node-1, type: Node}]\n",
			     &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	CHECK(t, s.nnodes == 3 && s.nodes[0].topo->nnuma == 1 &&
		 s.nodes[1].topo->nnuma == 2);
	mu_specs_release(&s);
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0-7\"}], gpus: [{numa: 0}]}\n",
		   MU_EINVAL, "spec.nodeTopology.gpus: expected one entry per GPU "
		   "of the node (4), got 1");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0-7\"}], nics: [{numa: 1}]}\n",
		   MU_ERANGE, "spec.nodeTopology.nics[0].numa: expected an integer "
		   "from 0 to 0, got \"1\"");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0-7\"}], nics: [{name: x}]}\n",
		   MU_EPARSE, "spec.nodeTopology.nics[0].numa: required field is missing");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0-7\"}, {cpus: \"7-9\"}]}\n",
		   MU_EINVAL, "spec.nodeTopology.numa[1].cpus: a CPU is in two NUMA nodes");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0-600\"}]}\n",
		   MU_ERANGE, "spec.nodeTopology.numa[0].cpus: expected a cpulist");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: []}\n", MU_ERANGE,
		   "spec.nodeTopology.numa: expected 1 to 8 NUMA nodes, got 0");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {gpus: []}\n", MU_EPARSE,
		   "spec.nodeTopology.numa: required field is missing");
	EXPECT_ERR(t, POOL_HEAD "  nodeTopology: {numa: [{cpus: \"0\"}], gpus: "
		   "[{numa: 0, group: 64}, {numa: 0}, {numa: 0}, {numa: 0}]}\n",
		   MU_ERANGE, "spec.nodeTopology.gpus[0].group: expected an integer "
		   "from 0 to 63");
}

/* --- Scenario devices ----------------------------------------------------- */

static void test_expect_devices(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(SC_HEAD "    - expect:\n        a:\n          devices:\n"
			     "            - \"n0:cpus=3,0-2;nic=1;gpus=1,0;numa=0\"\n"
			     "            - n1\n            - \"n2:gpus=5\"\n"
			     "        b: {devices: []}\n", &s, &d), MU_OK);
	const mu_expect_job_t *x = s.scenario ? s.scenario->steps[0].expect : NULL;
	CHECK(t, x != NULL);
	if (x) {
		CHECK(t, x[0].check_devices);
		CHECK_EQ_INT(t, x[0].ndevices, 3);
		CHECK_STR(t, x[0].devices[0], "n0:gpus=0-1;numa=0;nic=1;cpus=0-3");
		CHECK_STR(t, x[0].devnodes[0], "n0");
		CHECK_STR(t, x[0].devices[1], "n1");
		CHECK_STR(t, x[0].devices[2], "n2:gpus=5");
		CHECK(t, x[1].check_devices && x[1].ndevices == 0);
		CHECK(t, !x[0].check_nodes);
	}
	mu_specs_release(&s);
	static const struct {
		const char *dev, *want;
	} bad[] = {
		{"n0:gpus=0;gpus=1", "a field is given twice"},
		{"n0:gpu=0", "unknown field; expected gpus, numa, nic or cpus"},
		{"n0:gpus=64", "gpus: expected device indices 0 to 63"},
		{"n0:numa=8", "numa: expected an integer from 0 to 7"},
		{"n0:nic=x", "nic: expected an integer from 0 to 31"},
		{"n0:cpus=0-", "cpus: expected a cpulist"},
		{"n0:gpus", "expected key=value fields separated by ';'"},
		{":gpus=0", "expected NODE or NODE:field=value"},
		{"n 0", "the part before ':' must be a node name"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char y[512], want[256];
		snprintf(y, sizeof y, SC_HEAD "    - expect:\n        a: {devices: [\"%s\"]}\n",
			 bad[i].dev);
		snprintf(want, sizeof want, "spec.steps[0].expect.a.devices[0]: %s",
			 bad[i].want);
		EXPECT_ERR(t, y, MU_EPARSE, want);
	}
	EXPECT_ERR(t, QUEUE WL_HEAD WL_PODS "---\n" SC_HEAD
		   "    - expect:\n        w: {devices: [\"nx:gpus=0\"]}\n", MU_ENOENT,
		   "scenario step 1: expect devices: node \"nx\" is not defined");
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_topology_kind);
	MU_RUN(&t, test_workload_topology);
	MU_RUN(&t, test_job_annotations);
	MU_RUN(&t, test_podset_alignment);
	MU_RUN(&t, test_runtime_fields);
	MU_RUN(&t, test_type_default_priority);
	MU_RUN(&t, test_priority_class);
	MU_RUN(&t, test_priority_global_default);
	MU_RUN(&t, test_nrt_from_agent_dgx8);
	MU_RUN(&t, test_nrt_from_agent_pcie4);
	MU_RUN(&t, test_nrt_handwritten);
	MU_RUN(&t, test_nrt_errors);
	MU_RUN(&t, test_nodepool_topology);
	MU_RUN(&t, test_expect_devices);
	return mu_t_done(&t);
}
