/*
 * test_load_yaml.c - unit tests of mu_load_yaml(): every kind and field,
 * defaults, NodePool expansion, GPU shares, the batch/v1 Job container
 * rules, Scenario documents, error messages (file:line:col and field path),
 * resource bounds, the bundled examples and the shared k8s fixtures;
 * mu_load_json() (a jansson tree) reads what mu_load_yaml() reads of its
 * text, and refuses what it refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "muster/load.h"

/* Loads text as "t.yaml" into a fresh set s. */
static int load(const char *text, mu_specs_t *s, mu_diag_t *d)
{
	mu_specs_init(s);
	memset(d, 0, sizeof *d);
	return mu_load_yaml("t.yaml", text, strlen(text), s, d);
}

/* Loads text, expects error rc and a message containing sub and sub2 (may
 * be NULL); releases.  line is the caller's, for failures. */
static void err_has(mu_t_t *t, int line, const char *text, int rc,
		    const char *sub, const char *sub2)
{
	mu_specs_t s;
	mu_diag_t d;
	int got = load(text, &s, &d);
	if (got != rc || !strstr(d.msg, sub) || (sub2 && !strstr(d.msg, sub2))) {
		fprintf(stderr, "%s:%d: rc %d (want %d), message: %s\n"
			"  wanted: %s%s%s\n", __FILE__, line, got, rc, d.msg,
			sub, sub2 ? " and " : "", sub2 ? sub2 : "");
		t->cur_failed++;
	}
	mu_specs_release(&s);
}

#define ERR_HAS(t, text, rc, sub) err_has(t, __LINE__, text, rc, sub, NULL)
#define ERR_HAS2(t, text, rc, a, b) err_has(t, __LINE__, text, rc, a, b)

/* The value of label key, or NULL. */
static const char *label(const mu_label_t *l, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, key))
			return l[i].value;
	return NULL;
}

#define WL_HEAD "apiVersion: muster.io/v1alpha1\nkind: Workload\n" \
		"metadata: {name: w}\nspec:\n  queue: q\n"
#define NODE_HEAD "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
#define JOB_HEAD "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n" \
		 "  labels: {muster.io/queue: q}\n"
#define SC_HEAD "apiVersion: muster.io/v1alpha1\nkind: Scenario\n" \
		"metadata: {name: s}\nspec:\n  steps:\n"

/* --- Node ---------------------------------------------------------------- */

/* The arena: a large request gets a block of its own behind the head, so
 * the head keeps its room and the next head is not sized after it. */
static void test_arena_large(mu_t_t *t)
{
	mu_arena_t a;
	mu_arena_init(&a);
	char *p1 = mu_arena_alloc(&a, 100);
	CHECK_EQ_INT(t, mu_arena_bytes(&a), 1024);
	char *big = mu_arena_alloc(&a, 6000);
	CHECK(t, p1 && big && ((uintptr_t)big & 15) == 0);
	CHECK_EQ_INT(t, mu_arena_bytes(&a), 1024 + 6000);
	char *p2 = mu_arena_alloc(&a, 32); /* still in the first block */
	CHECK(t, p2 == p1 + 112);
	CHECK_EQ_INT(t, mu_arena_bytes(&a), 1024 + 6000);
	memset(big, 1, 6000);
	CHECK(t, p2[0] == 0 && p2[31] == 0);
	for (int i = 0; i < 40; i++) /* the head fills, then doubles */
		CHECK(t, mu_arena_alloc(&a, 64) != NULL);
	CHECK_EQ_INT(t, mu_arena_bytes(&a), 1024 + 6000 + 2048);
	mu_arena_release(&a);
	CHECK_EQ_INT(t, mu_arena_bytes(&a), 0);
}

static void test_node_full(mu_t_t *t)
{
	const char *y =
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata:\n"
		"  name: gpu-0\n"
		"  labels:\n"
		"    nvidia.com/gpu.product: A100\n"
		"    muster.io/rack: rack-0\n"
		"    empty: \"\"\n"
		"spec:\n"
		"  unschedulable: true\n"
		"  taints:\n"
		"    - {key: gpu, value: reserved, effect: NoSchedule}\n"
		"    - {key: spot, effect: PreferNoSchedule}\n"
		"    - {key: dying, effect: NoExecute}\n"
		"status:\n"
		"  allocatable:\n"
		"    cpu: \"95500m\"\n"
		"    memory: 1Ti\n"
		"    nvidia.com/gpu: \"8\"\n"
		"    pods: \"200\"\n"
		"    example.com/ib: \"4\"\n"
		"    ephemeral-storage: 100Gi\n"
		"    hugepages-2Mi: 1Gi\n"
		"  capacity: {cpu: \"128\"}\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 1);
	if (s.nnodes == 1) {
		const mu_node_spec_t *n = &s.nodes[0];
		CHECK_STR(t, n->name, "gpu-0");
		CHECK_EQ_INT(t, n->nlabels, 3);
		CHECK_STR(t, label(n->labels, n->nlabels, "muster.io/rack"), "rack-0");
		CHECK_STR(t, label(n->labels, n->nlabels, "empty"), "");
		CHECK(t, n->unschedulable);
		CHECK_EQ_INT(t, n->ntaints, 3);
		CHECK_STR(t, n->taints[0].key, "gpu");
		CHECK_STR(t, n->taints[0].value, "reserved");
		CHECK_EQ_INT(t, n->taints[0].effect, MU_TAINT_NO_SCHEDULE);
		CHECK(t, n->taints[1].value == NULL);
		CHECK_EQ_INT(t, n->taints[1].effect, MU_TAINT_PREFER_NO_SCHEDULE);
		CHECK_EQ_INT(t, n->taints[2].effect, MU_TAINT_NO_EXECUTE);
		CHECK_EQ_INT(t, n->alloc.v[MU_RES_CPU], 95500);
		CHECK_EQ_INT(t, n->alloc.v[MU_RES_MEM], 1LL << 40);
		CHECK_EQ_INT(t, n->alloc.v[MU_RES_GPU], 8);
		CHECK_EQ_INT(t, n->alloc.v[MU_RES_GPU_MILLI], 0);
		CHECK_EQ_INT(t, n->alloc.v[MU_RES_PODS], 200);
		CHECK_EQ_INT(t, n->next, 1);
		if (n->next == 1) {
			CHECK_STR(t, n->ext[0].name, "example.com/ib");
			CHECK_EQ_INT(t, n->ext[0].qty, 4);
		}
		CHECK_STR(t, n->gpu_model, "A100");
	}
	mu_specs_release(&s);
}

static void test_node_defaults(mu_t_t *t)
{
	const char *y =
		NODE_HEAD
		"---\n"
		"apiVersion: v1\nkind: Node\n"
		"metadata: {name: n1, labels: {muster.io/gpu-model: H100}}\n"
		"status:\n  capacity: {cpu: 8, nvidia.com/gpu: 2}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\n"
		"metadata: {name: n2, labels: {nvidia.com/gpu.product: A10}}\n"
		"spec: {taints: []}\n"
		"status:\n  allocatable: {cpu: 4}\n  capacity: {cpu: 8}\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 3);
	if (s.nnodes == 3) {
		CHECK_EQ_INT(t, s.nodes[0].alloc.v[MU_RES_PODS], 110);
		CHECK_EQ_INT(t, s.nodes[0].alloc.v[MU_RES_CPU], 0);
		CHECK(t, !s.nodes[0].unschedulable);
		CHECK(t, s.nodes[0].gpu_model == NULL);
		CHECK_EQ_INT(t, s.nodes[0].ntaints, 0);
		CHECK_EQ_INT(t, s.nodes[1].alloc.v[MU_RES_CPU], 8000);
		CHECK_EQ_INT(t, s.nodes[1].alloc.v[MU_RES_GPU], 2);
		CHECK_STR(t, s.nodes[1].gpu_model, "H100");
		/* allocatable wins over capacity; no GPUs, no model */
		CHECK_EQ_INT(t, s.nodes[2].alloc.v[MU_RES_CPU], 4000);
		CHECK(t, s.nodes[2].gpu_model == NULL);
	}
	mu_specs_release(&s);
}

static void test_node_errors(mu_t_t *t)
{
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {nvidia.com/gpu: 65}\n",
		MU_ERANGE, "t.yaml:5:33: status.allocatable[nvidia.com/gpu]: "
		"expected a whole number of GPU devices from 0 to 64, got \"65\"");
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {nvidia.com/gpu: 1.5}\n",
		MU_ERANGE, "whole number of GPU devices");
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {cpu: lots}\n",
		MU_EPARSE, "status.allocatable.cpu: expected a quantity");
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {memory: -1Gi}\n",
		MU_ERANGE, "status.allocatable.memory: quantity \"-1Gi\" is negative");
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {muster.io/gpu-milli: 5}\n",
		MU_EINVAL, "pod request, not a node resource");
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {pods: 2000000}\n",
		MU_ERANGE, "at most 1000000 pods");
	ERR_HAS(t, NODE_HEAD "status:\n  allocatable: {a: 1, b: 1, c: 1, d: 1, "
		"e: 1, f: 1, g: 1, h: 1, i: 1, j: 1, k: 1, l: 1}\n",
		MU_ELIMIT, "status.allocatable.l: more than 11 extended");
	ERR_HAS(t, NODE_HEAD "spec:\n  taints:\n    - {key: a, effect: Sometimes}\n",
		MU_EINVAL, "t.yaml:6:24: spec.taints[0].effect: expected "
		"NoSchedule, PreferNoSchedule or NoExecute, got \"Sometimes\"");
	ERR_HAS(t, NODE_HEAD "spec:\n  taints:\n    - {effect: NoSchedule}\n",
		MU_EPARSE, "spec.taints[0].key: required field is missing");
	ERR_HAS(t, NODE_HEAD "spec:\n  taints:\n    - {key: a}\n",
		MU_EPARSE, "spec.taints[0].effect: required field is missing");
	ERR_HAS(t, NODE_HEAD "spec:\n  taints: {key: a}\n",
		MU_EPARSE, "spec.taints: expected a list, got a mapping");
	ERR_HAS(t, NODE_HEAD "spec:\n  unschedulable: maybe\n",
		MU_EPARSE, "spec.unschedulable: expected true or false, got \"maybe\"");
	ERR_HAS(t, "apiVersion: v1\nkind: Node\nmetadata: {labels: {}}\n",
		MU_EPARSE, "t.yaml:3:11: metadata.name: required field is missing");
	ERR_HAS(t, "apiVersion: v1\nkind: Node\nmetadata: {name: Bad Name}\n",
		MU_EINVAL, "metadata.name: expected a name");
	ERR_HAS(t, "apiVersion: v1\nkind: Node\n", MU_EPARSE,
		"metadata: required field is missing");
	ERR_HAS(t, NODE_HEAD "metadata:\n  name: x\n", MU_EPARSE, "duplicate key");
}

/* --- NodePool ------------------------------------------------------------ */

static void test_nodepool(mu_t_t *t)
{
	const char *y =
		"apiVersion: muster.io/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: h100}\n"
		"spec:\n"
		"  count: 12\n"
		"  gpuModel: H100\n"
		"  labels: {pool: h100}\n"
		"  taints: [{key: gpu, effect: NoSchedule}]\n"
		"  unschedulable: false\n"
		"  allocatable: {cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \"8\", "
		"example.com/ib: 2}\n"
		"  topology:\n"
		"    - {label: muster.io/rack, every: 4, prefix: rack-}\n"
		"    - {label: muster.io/block, every: 8}\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 12);
	if (s.nnodes == 12) {
		const mu_node_spec_t *n0 = &s.nodes[0], *n11 = &s.nodes[11];
		CHECK_STR(t, n0->name, "h100-00");
		CHECK_STR(t, s.nodes[9].name, "h100-09");
		CHECK_STR(t, n11->name, "h100-11");
		CHECK_EQ_INT(t, n0->nlabels, 4);
		CHECK_STR(t, label(n0->labels, n0->nlabels, "pool"), "h100");
		CHECK_STR(t, label(n0->labels, n0->nlabels,
				   "nvidia.com/gpu.product"), "H100");
		CHECK_STR(t, label(n0->labels, n0->nlabels, "muster.io/rack"), "rack-0");
		CHECK_STR(t, label(n0->labels, n0->nlabels, "muster.io/block"), "0");
		CHECK_STR(t, label(s.nodes[3].labels, 4, "muster.io/rack"), "rack-0");
		CHECK_STR(t, label(s.nodes[4].labels, 4, "muster.io/rack"), "rack-1");
		CHECK_STR(t, label(s.nodes[8].labels, 4, "muster.io/rack"), "rack-2");
		CHECK_STR(t, label(s.nodes[7].labels, 4, "muster.io/block"), "0");
		CHECK_STR(t, label(n11->labels, 4, "muster.io/block"), "1");
		CHECK_STR(t, label(n11->labels, 4, "muster.io/rack"), "rack-2");
		CHECK_STR(t, n11->gpu_model, "H100");
		CHECK_EQ_INT(t, n11->alloc.v[MU_RES_GPU], 8);
		CHECK_EQ_INT(t, n11->alloc.v[MU_RES_CPU], 96000);
		CHECK_EQ_INT(t, n11->alloc.v[MU_RES_PODS], 110);
		CHECK_EQ_INT(t, n11->ntaints, 1);
		CHECK_EQ_INT(t, n11->next, 1);
		CHECK(t, !n11->unschedulable);
	}
	mu_specs_release(&s);

	/* namePrefix, one node, no topology, model from the labels */
	CHECK_EQ_INT(t, load("apiVersion: muster.io/v1alpha1\nkind: NodePool\n"
			     "metadata: {name: p}\nspec:\n  count: 1\n"
			     "  namePrefix: cpu-\n"
			     "  labels: {nvidia.com/gpu.product: T4}\n"
			     "  allocatable: {nvidia.com/gpu: 1}\n", &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 1);
	if (s.nnodes == 1) {
		CHECK_STR(t, s.nodes[0].name, "cpu-0");
		CHECK_STR(t, s.nodes[0].gpu_model, "T4");
		CHECK_EQ_INT(t, s.nodes[0].nlabels, 1);
	}
	mu_specs_release(&s);

	/* gpuModel repeating the label is fine; 100 nodes pad to 2 digits */
	CHECK_EQ_INT(t, load("apiVersion: muster.io/v1alpha1\nkind: NodePool\n"
			     "metadata: {name: p}\nspec:\n  count: 100\n"
			     "  gpuModel: T4\n"
			     "  labels: {nvidia.com/gpu.product: T4}\n", &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 100);
	if (s.nnodes == 100) {
		CHECK_STR(t, s.nodes[99].name, "p-99");
		CHECK_EQ_INT(t, s.nodes[5].nlabels, 1);
		CHECK(t, s.nodes[5].gpu_model == NULL); /* no GPUs */
	}
	mu_specs_release(&s);
}

#define POOL_HEAD "apiVersion: muster.io/v1alpha1\nkind: NodePool\n" \
		  "metadata: {name: p}\nspec:\n"

static void test_nodepool_errors(mu_t_t *t)
{
	ERR_HAS(t, POOL_HEAD "  count: 0\n", MU_ERANGE,
		"t.yaml:5:10: spec.count: expected an integer from 1 to 100000, got \"0\"");
	ERR_HAS(t, POOL_HEAD "  count: 100001\n", MU_ERANGE, "spec.count");
	ERR_HAS(t, POOL_HEAD "  labels: {}\n", MU_EPARSE,
		"spec: expected spec.selector (a pool of nodes) or spec.count (nodes to make)");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  topology:\n    - {label: r, every: 1}\n"
		"    - {label: r, every: 2}\n", MU_EINVAL,
		"spec.topology[1].label: the label r is set twice");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  labels: {r: x}\n"
		"  topology: [{label: r, every: 1}]\n", MU_EINVAL,
		"the label r is set twice");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  topology: [{label: r}]\n", MU_EPARSE,
		"spec.topology[0].every: required field is missing");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  topology: [{every: 2}]\n", MU_EPARSE,
		"spec.topology[0].label: required field is missing");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  gpuModel: A100\n"
		"  labels: {nvidia.com/gpu.product: H100}\n", MU_EINVAL,
		"spec.gpuModel: \"A100\" conflicts with the label");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  namePrefix: \"bad prefix \"\n",
		MU_EINVAL, "spec.namePrefix: node names such as \"bad prefix 0\"");
	ERR_HAS(t, POOL_HEAD "  count: 2\n  topology: [{label: a, every: 1}, "
		"{label: b, every: 1}, {label: c, every: 1}, {label: d, every: 1}, "
		"{label: e, every: 1}, {label: f, every: 1}, {label: g, every: 1}, "
		"{label: h, every: 1}, {label: i, every: 1}, {label: j, every: 1}, "
		"{label: k, every: 1}, {label: l, every: 1}, {label: m, every: 1}, "
		"{label: n, every: 1}, {label: o, every: 1}, {label: p, every: 1}, "
		"{label: q, every: 1}]\n", MU_ELIMIT, "at most 16 topology");
	ERR_HAS(t, "apiVersion: muster.io/v1alpha1\nkind: NodePool\n"
		"metadata: {name: p}\n", MU_EPARSE, "spec: required field is missing");
}

/* --- Queue --------------------------------------------------------------- */

static void test_queue(mu_t_t *t)
{
	const char *y =
		"apiVersion: muster.io/v1alpha1\n"
		"kind: Queue\n"
		"metadata: {name: team-a}\n"
		"spec:\n"
		"  parent: research\n"
		"  priority: -5\n"
		"  resources:\n"
		"    gpu: {deserved: 16, limit: 64, overQuotaWeight: 2.5}\n"
		"    cpu: {deserved: \"128\", limit: \"512\"}\n"
		"    memory: {deserved: 1Ti}\n"
		"    pods: {limit: 1000}\n"
		"---\n"
		"apiVersion: muster.io/v1alpha1\n"
		"kind: Queue\n"
		"metadata: {name: research}\n"
		"---\n"
		"apiVersion: muster.io/v1alpha1\n"
		"kind: Queue\n"
		"metadata: {name: tiny}\n"
		"spec:\n"
		"  resources:\n"
		"    nvidia.com/gpu: {deserved: \"0.5\", overQuotaWeight: 0}\n"
		"    cpu:\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nqueues, 3);
	if (s.nqueues == 3) {
		const mu_queue_spec_t *q = &s.queues[0];
		CHECK_STR(t, q->name, "team-a");
		CHECK_STR(t, q->parent, "research");
		CHECK_EQ_INT(t, q->priority, -5);
		CHECK_EQ_INT(t, q->deserved.v[MU_RES_GPU], 16000);
		CHECK_EQ_INT(t, q->limit.v[MU_RES_GPU], 64000);
		CHECK(t, q->weight[MU_RES_GPU] == 2.5);
		CHECK_EQ_INT(t, q->deserved.v[MU_RES_CPU], 128000);
		CHECK_EQ_INT(t, q->limit.v[MU_RES_CPU], 512000);
		CHECK(t, q->weight[MU_RES_CPU] == 1.0);
		CHECK_EQ_INT(t, q->deserved.v[MU_RES_MEM], 1LL << 40);
		CHECK_EQ_INT(t, q->limit.v[MU_RES_MEM], MU_RES_UNLIMITED);
		CHECK_EQ_INT(t, q->deserved.v[MU_RES_PODS], 0);
		CHECK_EQ_INT(t, q->limit.v[MU_RES_PODS], 1000);
		q = &s.queues[1];
		CHECK(t, q->parent == NULL);
		CHECK_EQ_INT(t, q->priority, 0);
		CHECK_EQ_INT(t, q->deserved.v[MU_RES_GPU], 0);
		CHECK_EQ_INT(t, q->limit.v[MU_RES_GPU], MU_RES_UNLIMITED);
		CHECK(t, q->weight[MU_RES_GPU] == 1.0);
		q = &s.queues[2];
		CHECK_EQ_INT(t, q->deserved.v[MU_RES_GPU], 500);
		CHECK(t, q->weight[MU_RES_GPU] == 0.0);
		CHECK_EQ_INT(t, q->limit.v[MU_RES_CPU], MU_RES_UNLIMITED);
	}
	mu_specs_release(&s);
}

#define Q_HEAD "apiVersion: muster.io/v1alpha1\nkind: Queue\n" \
	       "metadata: {name: q}\nspec:\n"

static void test_queue_errors(mu_t_t *t)
{
	ERR_HAS(t, Q_HEAD "  resources:\n    gpu: {deserved: 16, limit: 8}\n",
		MU_ERANGE, "t.yaml:6:32: spec.resources.gpu.limit: limit 8 is "
		"below deserved 16");
	ERR_HAS(t, Q_HEAD "  resources:\n    example.com/ib: {limit: 8}\n",
		MU_EINVAL, "spec.resources[example.com/ib]: extended resources "
		"in queues are not supported yet");
	ERR_HAS(t, Q_HEAD "  resources:\n    gpu: {limit: 8}\n"
		"    nvidia.com/gpu: {limit: 8}\n", MU_EINVAL, "given twice");
	ERR_HAS(t, Q_HEAD "  resources:\n    gpu: {overQuotaWeight: -1}\n",
		MU_ERANGE, "spec.resources.gpu.overQuotaWeight: expected a number");
	ERR_HAS(t, Q_HEAD "  resources:\n    gpu: {overQuotaWeight: heavy}\n",
		MU_EPARSE, "overQuotaWeight");
	ERR_HAS(t, Q_HEAD "  resources:\n    gpu: {deserved: [1]}\n",
		MU_EPARSE, "spec.resources.gpu.deserved: expected a string, got a list");
	ERR_HAS(t, Q_HEAD "  resources:\n    gpu: 8\n",
		MU_EPARSE, "spec.resources.gpu: expected a mapping, got \"8\"");
	ERR_HAS(t, Q_HEAD "  parent: q\n", MU_EINVAL, "its own parent");
	ERR_HAS(t, Q_HEAD "  priority: 3000000000\n", MU_ERANGE, "spec.priority");
	ERR_HAS(t, Q_HEAD "  resources: [gpu]\n", MU_EPARSE,
		"spec.resources: expected a mapping, got a list");
}

/* --- Workload ------------------------------------------------------------ */

static void test_workload_full(mu_t_t *t)
{
	const char *y =
		WL_HEAD
		"  priority: 100\n"
		"  type: inference\n"
		"  preemptible: true\n"
		"  minMember: 3\n"
		"  submitTime: 30m\n"
		"  duration: 1h30m\n"
		"  podSets:\n"
		"    - name: worker\n"
		"      replicas: 2\n"
		"      requests: {cpu: \"32\", memory: 256Gi, nvidia.com/gpu: \"8\", "
		"example.com/ib: 1, ephemeral-storage: 1Gi}\n"
		"      nodeSelector: {muster.io/pool: a100, zone: \"1\"}\n"
		"      affinity:\n"
		"        nodeAffinity:\n"
		"          requiredDuringSchedulingIgnoredDuringExecution:\n"
		"            nodeSelectorTerms:\n"
		"              - matchExpressions:\n"
		"                  - {key: rack, operator: In, values: [r0, r1]}\n"
		"                  - {key: bad, operator: DoesNotExist}\n"
		"              - matchExpressions:\n"
		"                  - {key: gen, operator: Gt, values: [\"3\"]}\n"
		"                  - {key: gen, operator: Lt, values: [\"9\"]}\n"
		"                  - {key: x, operator: NotIn, values: [\"\"]}\n"
		"                  - {key: y, operator: Exists, values: []}\n"
		"          preferredDuringSchedulingIgnoredDuringExecution: []\n"
		"      tolerations:\n"
		"        - {key: gpu, operator: Equal, value: reserved, effect: NoSchedule}\n"
		"        - {operator: Exists}\n"
		"        - {key: spot, operator: Exists, effect: NoExecute, "
		"tolerationSeconds: 30}\n"
		"        - {key: k}\n"
		"      gpuModels: [A100, H100]\n"
		"    - replicas: 1\n"
		"    - {}\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.njobs, 1);
	if (s.njobs != 1) {
		fprintf(stderr, "  %s\n", d.msg);
		mu_specs_release(&s);
		return;
	}
	const mu_job_spec_t *j = &s.jobs[0];
	CHECK_STR(t, j->name, "w");
	CHECK_STR(t, j->queue, "q");
	CHECK_EQ_INT(t, j->priority, 100);
	CHECK_EQ_INT(t, j->type, MU_JOB_INFERENCE);
	CHECK(t, j->preemptible);
	CHECK_EQ_INT(t, j->min_member, 3);
	CHECK_EQ_INT(t, j->submit, 30 * 60000);
	CHECK_EQ_INT(t, j->duration, 90 * 60000);
	CHECK_EQ_INT(t, j->npodsets, 3);
	CHECK_EQ_INT(t, mu_job_spec_pods(j), 4);
	const mu_podset_spec_t *p = &j->podsets[0];
	CHECK_STR(t, p->name, "worker");
	CHECK_EQ_INT(t, p->replicas, 2);
	CHECK_EQ_INT(t, p->req.v[MU_RES_CPU], 32000);
	CHECK_EQ_INT(t, p->req.v[MU_RES_MEM], 256LL << 30);
	CHECK_EQ_INT(t, p->req.v[MU_RES_GPU], 8);
	CHECK_EQ_INT(t, p->req.v[MU_RES_GPU_MILLI], 0);
	CHECK_EQ_INT(t, p->next, 1);
	CHECK_STR(t, p->ext[0].name, "example.com/ib");
	CHECK_EQ_INT(t, p->ext[0].qty, 1);
	CHECK_EQ_INT(t, p->nnode_selector, 2);
	CHECK_STR(t, label(p->node_selector, p->nnode_selector, "zone"), "1");
	CHECK_EQ_INT(t, p->naffinity, 2);
	CHECK_EQ_INT(t, p->affinity[0].nreqs, 2);
	CHECK_STR(t, p->affinity[0].reqs[0].key, "rack");
	CHECK_EQ_INT(t, p->affinity[0].reqs[0].op, MU_SEL_IN);
	CHECK_EQ_INT(t, p->affinity[0].reqs[0].nvalues, 2);
	CHECK_STR(t, p->affinity[0].reqs[0].values[1], "r1");
	CHECK_EQ_INT(t, p->affinity[0].reqs[1].op, MU_SEL_DOES_NOT_EXIST);
	CHECK_EQ_INT(t, p->affinity[0].reqs[1].nvalues, 0);
	CHECK_EQ_INT(t, p->affinity[1].nreqs, 4);
	CHECK_EQ_INT(t, p->affinity[1].reqs[0].op, MU_SEL_GT);
	CHECK_STR(t, p->affinity[1].reqs[0].values[0], "3");
	CHECK_EQ_INT(t, p->affinity[1].reqs[1].op, MU_SEL_LT);
	CHECK_EQ_INT(t, p->affinity[1].reqs[2].op, MU_SEL_NOT_IN);
	CHECK_STR(t, p->affinity[1].reqs[2].values[0], "");
	CHECK_EQ_INT(t, p->affinity[1].reqs[3].op, MU_SEL_EXISTS);
	CHECK_EQ_INT(t, p->ntolerations, 4);
	CHECK_STR(t, p->tolerations[0].key, "gpu");
	CHECK_STR(t, p->tolerations[0].value, "reserved");
	CHECK_EQ_INT(t, p->tolerations[0].op, MU_TOL_EQUAL);
	CHECK_EQ_INT(t, p->tolerations[0].effect, MU_TAINT_NO_SCHEDULE);
	CHECK(t, p->tolerations[1].key == NULL);
	CHECK_EQ_INT(t, p->tolerations[1].op, MU_TOL_EXISTS);
	CHECK_EQ_INT(t, p->tolerations[1].effect, -1);
	CHECK_EQ_INT(t, p->tolerations[2].effect, MU_TAINT_NO_EXECUTE);
	CHECK_EQ_INT(t, p->tolerations[3].op, MU_TOL_EQUAL);
	CHECK_STR(t, p->tolerations[3].value, "");
	CHECK_EQ_INT(t, p->ngpu_models, 2);
	CHECK_STR(t, p->gpu_models[1], "H100");
	CHECK_STR(t, j->podsets[1].name, "main-1");
	CHECK_EQ_INT(t, j->podsets[1].req.v[MU_RES_CPU], 0);
	CHECK_EQ_INT(t, j->podsets[1].naffinity, 0);
	CHECK_STR(t, j->podsets[2].name, "main-2");
	CHECK_EQ_INT(t, j->podsets[2].replicas, 1);
	mu_specs_release(&s);
}

static void test_workload_defaults(mu_t_t *t)
{
	/* prio: the type's default priority (none given) */
	static const struct { const char *type; int want; bool pre; int prio; } types[] = {
		{"", MU_JOB_TRAIN, true, 0},
		{"  type: train\n", MU_JOB_TRAIN, true, 0},
		{"  type: batch\n", MU_JOB_BATCH, true, 0},
		{"  type: inference\n", MU_JOB_INFERENCE, false, 100},
		{"  type: interactive\n", MU_JOB_INTERACTIVE, false, 1000},
		{"  type: train\n  preemptible: false\n", MU_JOB_TRAIN, false, 0},
	};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		char y[512];
		snprintf(y, sizeof y, "%s%s  podSets: [{requests: {cpu: 1}}]\n",
			 WL_HEAD, types[i].type);
		mu_specs_t s;
		mu_diag_t d;
		CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
		CHECK_EQ_INT(t, s.njobs, 1);
		if (s.njobs == 1) {
			const mu_job_spec_t *j = &s.jobs[0];
			CHECK_EQ_INT(t, j->type, types[i].want);
			CHECK_EQ_INT(t, j->preemptible, types[i].pre);
			CHECK_EQ_INT(t, j->priority, types[i].prio);
			CHECK_EQ_INT(t, j->min_member, 0);
			CHECK_EQ_INT(t, j->submit, 0);
			CHECK_EQ_INT(t, j->duration, 0);
			CHECK_STR(t, j->podsets[0].name, "main");
			CHECK_EQ_INT(t, j->podsets[0].replicas, 1);
			CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_CPU], 1000);
			CHECK_EQ_INT(t, j->podsets[0].ngpu_models, 0);
			CHECK_EQ_INT(t, j->podsets[0].ntolerations, 0);
		}
		mu_specs_release(&s);
	}
}

/* Loads a one-pod-set Workload with requests r; returns the request. */
static int gpu_req(const char *r, mu_res_t *out, mu_diag_t *d)
{
	char y[512];
	mu_specs_t s;
	snprintf(y, sizeof y, "%s  podSets: [{requests: {%s}}]\n", WL_HEAD, r);
	int rc = load(y, &s, d);
	if (rc == MU_OK)
		*out = s.jobs[0].podsets[0].req;
	mu_specs_release(&s);
	return rc;
}

static void test_workload_gpu(mu_t_t *t)
{
	static const struct { const char *r; int rc; int64_t gpu, milli; } c[] = {
		{"nvidia.com/gpu: \"0.5\"", MU_OK, 0, 500},
		{"nvidia.com/gpu: 500m", MU_OK, 0, 500},
		{"nvidia.com/gpu: 0.25", MU_OK, 0, 250},
		{"nvidia.com/gpu: 1", MU_OK, 1, 0},
		{"nvidia.com/gpu: 1000m", MU_OK, 1, 0},
		{"nvidia.com/gpu: 2", MU_OK, 2, 0},
		{"nvidia.com/gpu: 64", MU_OK, 64, 0},
		{"nvidia.com/gpu: 0", MU_OK, 0, 0},
		{"muster.io/gpu-milli: 250", MU_OK, 0, 250},
		{"muster.io/gpu-milli: 999", MU_OK, 0, 999},
		{"nvidia.com/gpu: 1.5", MU_ERANGE, 0, 0},
		{"nvidia.com/gpu: 65", MU_ERANGE, 0, 0},
		{"muster.io/gpu-milli: 1000", MU_ERANGE, 0, 0},
		{"muster.io/gpu-milli: 0", MU_ERANGE, 0, 0},
		{"muster.io/gpu-milli: 0.5", MU_EPARSE, 0, 0},
		{"nvidia.com/gpu: 1, muster.io/gpu-milli: 5", MU_EINVAL, 0, 0},
		{"nvidia.com/gpu: lots", MU_EPARSE, 0, 0},
		{"pods: 1", MU_EINVAL, 0, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		mu_res_t r;
		mu_diag_t d;
		int rc = gpu_req(c[i].r, &r, &d);
		if (rc != c[i].rc)
			fprintf(stderr, "  {%s}: rc %d: %s\n", c[i].r, rc, d.msg);
		CHECK_EQ_INT(t, rc, c[i].rc);
		if (rc == MU_OK && c[i].rc == MU_OK) {
			CHECK_EQ_INT(t, r.v[MU_RES_GPU], c[i].gpu);
			CHECK_EQ_INT(t, r.v[MU_RES_GPU_MILLI], c[i].milli);
		}
	}
	ERR_HAS(t, WL_HEAD "  podSets:\n    - requests: {nvidia.com/gpu: 1.5}\n",
		MU_ERANGE, "t.yaml:7:34: spec.podSets[0].requests[nvidia.com/gpu]: "
		"expected a share of one GPU between 0 and 1, or whole GPUs up "
		"to 64, got \"1.5\"");
}

static void test_workload_template(mu_t_t *t)
{
	const char *y =
		WL_HEAD
		"  podSets:\n"
		"    - name: driver\n"
		"      gpuModels: [A100]\n"
		"      template:\n"
		"        metadata: {labels: {app: x}}\n"
		"        spec:\n"
		"          nodeSelector: {pool: a}\n"
		"          tolerations: [{operator: Exists}]\n"
		"          containers:\n"
		"            - resources: {requests: {cpu: 1, memory: 1Gi}}\n"
		"            - resources: {limits: {cpu: 2, nvidia.com/gpu: 1}}\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	if (s.njobs == 1) {
		const mu_podset_spec_t *p = &s.jobs[0].podsets[0];
		CHECK_STR(t, p->name, "driver");
		CHECK_EQ_INT(t, p->req.v[MU_RES_CPU], 3000);
		CHECK_EQ_INT(t, p->req.v[MU_RES_MEM], 1LL << 30);
		CHECK_EQ_INT(t, p->req.v[MU_RES_GPU], 1);
		CHECK_EQ_INT(t, p->nnode_selector, 1);
		CHECK_EQ_INT(t, p->ntolerations, 1);
		CHECK_EQ_INT(t, p->ngpu_models, 1);
	}
	mu_specs_release(&s);
	ERR_HAS(t, WL_HEAD "  podSets:\n    - template: {spec: {containers: []}}\n"
		"      requests: {cpu: 1}\n", MU_EPARSE,
		"spec.podSets[0].requests: give either template or requests");
	ERR_HAS(t, WL_HEAD "  podSets:\n    - template: {spec: {containers: []}}\n",
		MU_EPARSE, "spec.podSets[0].template.spec.containers: a pod needs "
		"at least one container");
	ERR_HAS(t, WL_HEAD "  podSets:\n    - template: {metadata: {}}\n",
		MU_EPARSE, "spec.podSets[0].template.spec: required field is missing");
}

static void test_workload_errors(mu_t_t *t)
{
	ERR_HAS(t, WL_HEAD "  podSets:\n    - name: a\n      replicas: -3\n",
		MU_ERANGE, "t.yaml:8:17: spec.podSets[0].replicas: expected an "
		"integer from 1 to 1000000, got \"-3\"");
	ERR_HAS(t, WL_HEAD "  podSets:\n    - replicas: 1000001\n", MU_ERANGE,
		"spec.podSets[0].replicas");
	ERR_HAS(t, WL_HEAD "  podSets:\n    - replicas: two\n", MU_EPARSE,
		"got \"two\"");
	ERR_HAS(t, WL_HEAD "  minMember: 5\n  podSets: [{replicas: 4}]\n",
		MU_ERANGE, "t.yaml:6:14: spec.minMember: 5 is more than the job's 4 pods");
	ERR_HAS(t, WL_HEAD "  podSets: [{replicas: 2, minMember: 3}]\n",
		MU_ERANGE, "spec.podSets[0].minMember: 3 is more than the pod set's 2 replicas");
	ERR_HAS(t, WL_HEAD "  podSets: [{replicas: 2, minMember: -1}]\n",
		MU_ERANGE, "spec.podSets[0].minMember: expected an integer");
	ERR_HAS(t, WL_HEAD "  minMember: 2\n  podSets: [{name: a, replicas: 2, minMember: 2},"
		" {name: b, replicas: 2, minMember: 1}]\n", MU_ERANGE,
		"spec.minMember: 2 is less than the 3 its pod sets' own minMember need together");
	ERR_HAS(t, "apiVersion: muster.io/v1alpha1\nkind: Workload\n"
		"metadata: {name: w}\nspec:\n  podSets: [{}]\n", MU_EPARSE,
		"t.yaml:5:3: spec.queue: required field is missing");
	ERR_HAS(t, WL_HEAD "  priority: 1\n", MU_EPARSE,
		"spec.podSets: required field is missing");
	ERR_HAS(t, WL_HEAD "  podSets: []\n", MU_EPARSE, "expected 1 to 1000 pod sets");
	ERR_HAS(t, WL_HEAD "  podSets: {a: 1}\n", MU_EPARSE,
		"spec.podSets: expected a list, got a mapping");
	ERR_HAS(t, WL_HEAD "  podSets: [x]\n", MU_EPARSE,
		"spec.podSets[0]: expected a mapping, got \"x\"");
	ERR_HAS(t, WL_HEAD "  type: training\n  podSets: [{}]\n", MU_EINVAL,
		"spec.type: expected train, inference, interactive or batch, "
		"got \"training\"");
	ERR_HAS(t, WL_HEAD "  submitTime: yesterday\n  podSets: [{}]\n", MU_EPARSE,
		"spec.submitTime: expected a duration");
	ERR_HAS(t, WL_HEAD "  duration: -5m\n  podSets: [{}]\n", MU_ERANGE,
		"spec.duration: expected a duration");
	ERR_HAS(t, WL_HEAD "  preemptible: sometimes\n  podSets: [{}]\n", MU_EPARSE,
		"spec.preemptible: expected true or false");
	ERR_HAS(t, WL_HEAD "  queue2: x\n  podSets: [{name: a}, {name: a}]\n",
		MU_EINVAL, "spec.podSets[1].name: two pod sets are named \"a\"");
	ERR_HAS(t, WL_HEAD "  podSets: [{}, {name: main}]\n", MU_EINVAL,
		"spec.podSets[1].name: two pod sets are named \"main\"");
	ERR_HAS(t, WL_HEAD "  podSets: [{gpuModels: A100}]\n", MU_EPARSE,
		"spec.podSets[0].gpuModels: expected a list");
	ERR_HAS(t, WL_HEAD "  podSets: [{gpuModels: [\"\"]}]\n", MU_EPARSE,
		"spec.podSets[0].gpuModels[0]: expected a non-empty string");
	ERR_HAS(t, WL_HEAD "  podSets: [{nodeSelector: {a: {b: c}}}]\n", MU_EPARSE,
		"spec.podSets[0].nodeSelector.a: expected a string, got a mapping");
}

#define AFF(x) WL_HEAD "  podSets:\n    - affinity:\n        nodeAffinity:\n" \
	"          requiredDuringSchedulingIgnoredDuringExecution:\n" x
#define TERM(e) AFF("            nodeSelectorTerms:\n" \
		    "              - matchExpressions:\n" \
		    "                  - " e "\n")

static void test_selector_errors(mu_t_t *t)
{
	const char *path = "spec.podSets[0].affinity.nodeAffinity."
			   "requiredDuringSchedulingIgnoredDuringExecution."
			   "nodeSelectorTerms[0].matchExpressions[0]";
	ERR_HAS2(t, TERM("{key: a, operator: Near, values: [x]}"), MU_EINVAL,
		 path, "operator: expected In, NotIn, Exists, DoesNotExist, Gt "
		 "or Lt, got \"Near\"");
	ERR_HAS2(t, TERM("{key: a, operator: In}"), MU_EINVAL, path,
		 ".values: In needs at least one value");
	ERR_HAS2(t, TERM("{key: a, operator: Exists, values: [x]}"), MU_EINVAL,
		 path, "Exists takes no values");
	ERR_HAS(t, TERM("{key: a, operator: Gt, values: [x]}"), MU_EINVAL,
		"Gt needs exactly one integer value");
	ERR_HAS(t, TERM("{key: a, operator: Lt, values: [\"1\", \"2\"]}"),
		MU_EINVAL, "Lt needs exactly one integer value");
	ERR_HAS(t, TERM("{operator: Exists}"), MU_EPARSE,
		"matchExpressions[0].key: required field is missing");
	ERR_HAS(t, TERM("{key: a}"), MU_EPARSE,
		"matchExpressions[0].operator: required field is missing");
	ERR_HAS(t, AFF("            nodeSelectorTerms:\n"
		       "              - matchFields: [{key: metadata.name, "
		       "operator: In, values: [n]}]\n"),
		MU_EINVAL, "matchFields is not supported");
	ERR_HAS(t, AFF("            nodeSelectorTerms: [{matchExpressions: []}]\n"),
		MU_EINVAL, "a term needs at least one expression");
	ERR_HAS(t, AFF("            other: 1\n"), MU_EPARSE,
		"nodeSelectorTerms: required field is missing");
	ERR_HAS(t, WL_HEAD "  podSets: [{tolerations: [{operator: Equal, "
		"value: x}]}]\n", MU_EINVAL,
		"spec.podSets[0].tolerations[0].key: operator Equal needs a key");
	ERR_HAS(t, WL_HEAD "  podSets: [{tolerations: [{key: a, operator: Exists, "
		"value: x}]}]\n", MU_EINVAL, "operator Exists takes no value");
	ERR_HAS(t, WL_HEAD "  podSets: [{tolerations: [{key: a, operator: Like}]}]\n",
		MU_EINVAL, "tolerations[0].operator: expected Equal or Exists");
	ERR_HAS(t, WL_HEAD "  podSets: [{tolerations: [{key: a, effect: Never}]}]\n",
		MU_EINVAL, "tolerations[0].effect: expected NoSchedule");
}

/* --- batch/v1 Job -------------------------------------------------------- */

static void test_job(mu_t_t *t)
{
	const char *y =
		"apiVersion: batch/v1\n"
		"kind: Job\n"
		"metadata:\n"
		"  name: resnet50\n"
		"  labels:\n"
		"    muster.io/queue: team-b\n"
		"  annotations:\n"
		"    muster.io/priority: \"50\"\n"
		"    muster.io/type: interactive\n"
		"    muster.io/preemptible: \"true\"\n"
		"    muster.io/min-member: \"4\"\n"
		"    muster.io/submit-time: 10m\n"
		"    muster.io/duration: 1h\n"
		"    muster.io/gpu-models: \"A100, H100,L4\"\n"
		"    other: ignored\n"
		"spec:\n"
		"  parallelism: 4\n"
		"  completions: 8\n"
		"  template:\n"
		"    spec:\n"
		"      nodeSelector: {pool: a}\n"
		"      affinity: {}\n"
		"      tolerations: []\n"
		"      containers:\n"
		"        - name: train\n"
		"          resources:\n"
		"            requests: {cpu: \"8\", memory: 64Gi}\n"
		"            limits: {cpu: \"16\", nvidia.com/gpu: \"2\", example.com/x: 3}\n"
		"        - name: side\n"
		"          resources: {requests: {cpu: 500m, example.com/x: 1}}\n"
		"      initContainers:\n"
		"        - name: big-init\n"
		"          resources: {requests: {cpu: \"20\", memory: 1Gi}}\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.njobs, 1);
	if (s.njobs != 1) {
		fprintf(stderr, "  %s\n", d.msg);
		mu_specs_release(&s);
		return;
	}
	const mu_job_spec_t *j = &s.jobs[0];
	CHECK_STR(t, j->name, "resnet50");
	CHECK_STR(t, j->queue, "team-b");
	CHECK_EQ_INT(t, j->priority, 50);
	CHECK_EQ_INT(t, j->type, MU_JOB_INTERACTIVE);
	CHECK(t, j->preemptible);
	CHECK_EQ_INT(t, j->min_member, 4);
	CHECK_EQ_INT(t, j->submit, 600000);
	CHECK_EQ_INT(t, j->duration, 3600000);
	CHECK_EQ_INT(t, j->npodsets, 1);
	const mu_podset_spec_t *p = &j->podsets[0];
	CHECK_STR(t, p->name, "main");
	CHECK_EQ_INT(t, p->replicas, 4);
	/* max(init 20, 8 + 0.5) = 20 CPUs; memory max(1Gi, 64Gi) */
	CHECK_EQ_INT(t, p->req.v[MU_RES_CPU], 20000);
	CHECK_EQ_INT(t, p->req.v[MU_RES_MEM], 64LL << 30);
	CHECK_EQ_INT(t, p->req.v[MU_RES_GPU], 2); /* from the limit */
	CHECK_EQ_INT(t, p->next, 1);
	if (p->next == 1) {
		CHECK_STR(t, p->ext[0].name, "example.com/x");
		CHECK_EQ_INT(t, p->ext[0].qty, 4); /* limit 3 + request 1 */
	}
	CHECK_EQ_INT(t, p->nnode_selector, 1);
	CHECK_EQ_INT(t, p->naffinity, 0);
	CHECK_EQ_INT(t, p->ngpu_models, 3);
	if (p->ngpu_models == 3) {
		CHECK_STR(t, p->gpu_models[0], "A100");
		CHECK_STR(t, p->gpu_models[1], "H100");
		CHECK_STR(t, p->gpu_models[2], "L4");
	}
	mu_specs_release(&s);
}

/* A JSON document read by mu_load_json (its tree) and mu_load_yaml (its
 * text): the same return code, the same jobs (the fields the dispatcher
 * reads), and a refusal's message the same after its place. */
static void json_same(mu_t_t *t, int line, const char *text)
{
	json_t *doc = json_loads(text, 0, NULL);
	mu_specs_t a, b;
	mu_diag_t da, db;
	CHECK(t, doc != NULL);
	int ra = load(text, &a, &da);
	mu_specs_init(&b);
	memset(&db, 0, sizeof db);
	int rb = doc ? mu_load_json("t.yaml", doc, &b, &db) : MU_ENOMEM;
	json_decref(doc);
	bool same = ra == rb && a.njobs == b.njobs;
	for (size_t i = 0; same && i < a.njobs; i++) {
		const mu_job_spec_t *x = &a.jobs[i], *y = &b.jobs[i];
		same = !strcmp(x->name, y->name) && !strcmp(x->queue ? x->queue : "", y->queue ? y->queue : "") &&
		       x->priority == y->priority && x->type == y->type && x->preemptible == y->preemptible &&
		       x->min_member == y->min_member && x->duration == y->duration && x->npodsets == y->npodsets;
		for (size_t k = 0; same && k < x->npodsets; k++) {
			const mu_podset_spec_t *p = &x->podsets[k], *q = &y->podsets[k];
			same = !strcmp(p->name, q->name) && p->replicas == q->replicas &&
			       !memcmp(&p->req, &q->req, sizeof p->req) && p->next == q->next &&
			       p->nnode_selector == q->nnode_selector && p->ngpu_models == q->ngpu_models &&
			       p->ntolerations == q->ntolerations;
			for (size_t e = 0; same && e < p->next; e++)
				same = !strcmp(p->ext[e].name, q->ext[e].name) && p->ext[e].qty == q->ext[e].qty;
		}
	}
	/* "t.yaml:L:C: what": the same what */
	const char *wa = ra ? strstr(da.msg, ": ") : "", *wb = rb ? strstr(db.msg, ": ") : "";
	if (ra && wa && wb && (wa = strchr(wa + 2, ' ')) && (wb = strchr(wb + 2, ' ')))
		same = same && !strcmp(wa, wb);
	if (!same) {
		fprintf(stderr, "%s:%d: yaml rc %d (%s), json rc %d (%s)\n", __FILE__, line, ra, da.msg, rb, db.msg);
		t->cur_failed++;
	}
	mu_specs_release(&a);
	mu_specs_release(&b);
}

static void test_load_json(mu_t_t *t)
{
	json_same(t, __LINE__,
		  "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"r\","
		  "\"namespace\":\"ns\",\"labels\":{\"muster.io/queue\":\"team-b\"},"
		  "\"annotations\":{\"muster.io/priority\":\"50\",\"muster.io/type\":\"interactive\","
		  "\"muster.io/preemptible\":\"true\",\"muster.io/min-member\":\"4\",\"muster.io/duration\":\"1h\","
		  "\"muster.io/gpu-models\":\"A100, H100,L4\"}},"
		  "\"spec\":{\"suspend\":true,\"parallelism\":4,\"completions\":8,\"backoffLimit\":null,"
		  "\"template\":{\"spec\":{\"nodeSelector\":{\"pool\":\"a\"},\"affinity\":null,\"tolerations\":"
		  "[{\"key\":\"k\",\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"train\",\"resources\":"
		  "{\"requests\":{\"cpu\":0.5,\"memory\":\"64Gi\"},\"limits\":{\"cpu\":16,\"nvidia.com/gpu\":\"2\","
		  "\"example.com/x\":3}}},{\"name\":\"side\",\"resources\":{\"requests\":{\"example.com/x\":1}}}]}}}}");
	/* a workload of two pod sets */
	json_same(t, __LINE__,
		  "{\"apiVersion\":\"muster.io/v1alpha1\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\"},"
		  "\"spec\":{\"queue\":\"q\",\"podSets\":[{\"name\":\"a\",\"count\":2,\"template\":{\"spec\":"
		  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":8}}}]}}},"
		  "{\"name\":\"b\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
		  "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]}}");
	/* refusals: a quantity that is not one, a string where a number is */
	json_same(t, __LINE__,
		  "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"bad\"},\"spec\":"
		  "{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		  "{\"cpu\":\"lots\"}}}]}}}}");
	json_same(t, __LINE__,
		  "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"bad\"},\"spec\":"
		  "{\"parallelism\":\"4\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}");
	json_same(t, __LINE__, "{\"apiVersion\":\"v9\",\"kind\":\"Nope\"}");
	json_same(t, __LINE__, "[1, 2]");
}

/* Loads a Job whose pod spec is body; returns podsets[0].req. */
static int job_req(const char *body, mu_res_t *out, mu_diag_t *d)
{
	char y[2048];
	mu_specs_t s;
	snprintf(y, sizeof y, "%sspec:\n  template:\n    spec:\n%s", JOB_HEAD, body);
	int rc = load(y, &s, d);
	if (rc == MU_OK)
		*out = s.jobs[0].podsets[0].req;
	mu_specs_release(&s);
	return rc;
}

static void test_job_containers(mu_t_t *t)
{
	mu_res_t r;
	mu_diag_t d;
	/* containers add up; an init container larger than the sum wins */
	CHECK_EQ_INT(t, job_req("      containers:\n"
				"        - resources: {requests: {cpu: 1, memory: 1Gi}}\n"
				"        - resources: {requests: {cpu: 2, memory: 1Gi}}\n"
				"      initContainers:\n"
				"        - resources: {requests: {cpu: 2, memory: 3Gi}}\n"
				"        - resources: {requests: {cpu: 4}}\n",
				&r, &d), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 4000);
	CHECK_EQ_INT(t, r.v[MU_RES_MEM], 3LL << 30);
	/* a sidecar (restartPolicy Always) adds to the containers and to
	 * the init containers after it */
	CHECK_EQ_INT(t, job_req("      containers:\n"
				"        - resources: {requests: {cpu: 1}}\n"
				"      initContainers:\n"
				"        - restartPolicy: Always\n"
				"          resources: {requests: {cpu: 1, memory: 1Gi}}\n"
				"        - resources: {requests: {cpu: 3}}\n",
				&r, &d), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 4000);
	CHECK_EQ_INT(t, r.v[MU_RES_MEM], 1LL << 30);
	/* a limit without a request is the request; a request wins */
	CHECK_EQ_INT(t, job_req("      containers:\n"
				"        - resources:\n"
				"            requests: {cpu: 1}\n"
				"            limits: {cpu: 4, memory: 2Gi}\n",
				&r, &d), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 1000);
	CHECK_EQ_INT(t, r.v[MU_RES_MEM], 2LL << 30);
	/* two half GPUs make one whole GPU */
	CHECK_EQ_INT(t, job_req("      containers:\n"
				"        - resources: {requests: {nvidia.com/gpu: 0.5}}\n"
				"        - resources: {requests: {nvidia.com/gpu: 500m}}\n",
				&r, &d), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 1);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU_MILLI], 0);
	/* a container without resources asks for nothing */
	CHECK_EQ_INT(t, job_req("      containers: [{name: a}]\n", &r, &d), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_CPU], 0);
	/* a half GPU plus a whole one is 1.5: not allowed */
	CHECK_EQ_INT(t, job_req("      containers:\n"
				"        - resources: {requests: {nvidia.com/gpu: 0.5}}\n"
				"        - resources: {requests: {nvidia.com/gpu: 1}}\n",
				&r, &d), MU_ERANGE);
	CHECK(t, strstr(d.msg, "t.yaml:9:7: spec.template.spec: the containers "
			"ask for 1.500 GPUs in all") != NULL);
	/* a sidecar's GPUs count once in the pod, not also per init */
	CHECK_EQ_INT(t, job_req("      containers:\n"
				"        - resources: {requests: {memory: 1}}\n"
				"      initContainers:\n"
				"        - restartPolicy: Always\n"
				"          resources: {limits: {nvidia.com/gpu: 1}}\n",
				&r, &d), MU_OK);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 1);
}

static void test_job_defaults_and_errors(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load("apiVersion: batch/v1\nkind: Job\nmetadata:\n"
			     "  name: j\n  labels: {kueue.x-k8s.io/queue-name: lq}\n"
			     "spec:\n  template:\n    spec:\n"
			     "      containers: [{name: c}]\n", &s, &d), MU_OK);
	if (s.njobs == 1) {
		CHECK_STR(t, s.jobs[0].queue, "lq");
		CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 1);
		CHECK_EQ_INT(t, s.jobs[0].type, MU_JOB_TRAIN);
		CHECK(t, s.jobs[0].preemptible);
		CHECK_EQ_INT(t, s.jobs[0].priority, 0);
	}
	mu_specs_release(&s);
	CHECK_EQ_INT(t, load(JOB_HEAD "  annotations:\n"
			     "    muster.io/type: inference\n"
			     "spec:\n  template: {spec: {containers: [{}]}}\n",
			     &s, &d), MU_OK);
	if (s.njobs == 1)
		CHECK(t, !s.jobs[0].preemptible);
	mu_specs_release(&s);

	ERR_HAS(t, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
		"spec: {}\n", MU_EPARSE, "t.yaml:4:3: metadata.labels: the label "
		"muster.io/queue (or kueue.x-k8s.io/queue-name)");
	ERR_HAS(t, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
		"  labels: {app: x}\n", MU_EPARSE, "t.yaml:5:11: metadata.labels: "
		"the label muster.io/queue");
	ERR_HAS(t, JOB_HEAD "spec:\n  parallelism: 0\n  template: {}\n", MU_ERANGE,
		"spec.parallelism: expected an integer from 1 to 1000000, got \"0\"");
	ERR_HAS(t, JOB_HEAD "spec: {}\n", MU_EPARSE,
		"spec.template: required field is missing");
	ERR_HAS(t, JOB_HEAD "spec:\n  template: {spec: {}}\n", MU_EPARSE,
		"spec.template.spec.containers: required field is missing");
	ERR_HAS(t, JOB_HEAD "  annotations: {muster.io/priority: high}\n",
		MU_EPARSE, "metadata.annotations[muster.io/priority]: expected an "
		"integer");
	ERR_HAS(t, JOB_HEAD "  annotations: {muster.io/gpu-models: \"A100,,B\"}\n",
		MU_EPARSE, "expected GPU models separated by commas");
	ERR_HAS(t, JOB_HEAD "  annotations: {muster.io/min-member: \"9\"}\n"
		"spec:\n  parallelism: 2\n  template: {spec: {containers: [{}]}}\n",
		MU_ERANGE, "metadata.annotations[muster.io/min-member]: 9 is more "
		"than the job's 2 pods");
	ERR_HAS(t, JOB_HEAD "spec:\n  template:\n    spec:\n      containers:\n"
		"        - resources: {requests: {cpu: [1]}}\n", MU_EPARSE,
		"spec.template.spec.containers[0].resources.requests.cpu: expected "
		"a string, got a list");
	ERR_HAS(t, JOB_HEAD "spec:\n  template:\n    spec:\n      containers:\n"
		"        - resources: {limits: {nvidia.com/gpu: 2.5}}\n", MU_ERANGE,
		"containers[0].resources.limits[nvidia.com/gpu]");
}

/* --- Scenario ------------------------------------------------------------ */

static void test_scenario(mu_t_t *t)
{
	const char *y =
		"apiVersion: muster.io/v1alpha1\n"
		"kind: Scenario\n"
		"metadata: {name: gang-basic}\n"
		"spec:\n"
		"  description: a gang waits for room\n"
		"  policy: spread\n"
		"  steps:\n"
		"    - expect:\n"
		"        big: {bound: 0, pending: Gang, message: \"needs 4\"}\n"
		"        small: {bound: 2, nodes: [n0, n0], pending: false}\n"
		"        other:\n"
		"    - at: 10m\n"
		"      cycles: 3\n"
		"      finish: [small]\n"
		"      removeNodes: [n1]\n"
		"      expect:\n"
		"        big: {nodes: [], evicted: 0, pending: QueueLimit}\n"
		"        blocked: {pending: Blocked}\n"
		"    - finish: []\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK(t, s.scenario != NULL);
	if (!s.scenario) {
		fprintf(stderr, "  %s\n", d.msg);
		mu_specs_release(&s);
		return;
	}
	const mu_scenario_spec_t *sc = s.scenario;
	CHECK_STR(t, sc->name, "gang-basic");
	CHECK_STR(t, sc->description, "a gang waits for room");
	CHECK_STR(t, sc->policy, "spread");
	CHECK_EQ_INT(t, sc->nsteps, 3);
	const mu_scenario_step_t *st = &sc->steps[0];
	CHECK_EQ_INT(t, st->at, 0);
	CHECK_EQ_INT(t, st->cycles, 1);
	CHECK_EQ_INT(t, st->nfinish, 0);
	CHECK_EQ_INT(t, st->nexpect, 3);
	const mu_expect_job_t *e = &st->expect[0];
	CHECK_STR(t, e->job, "big");
	CHECK_EQ_INT(t, e->bound, 0);
	CHECK_STR(t, e->pending, "Gang");
	CHECK_STR(t, e->message, "needs 4");
	CHECK_EQ_INT(t, e->evicted, -1);
	CHECK(t, !e->check_nodes);
	e = &st->expect[1];
	CHECK_EQ_INT(t, e->bound, 2);
	CHECK(t, e->check_nodes);
	CHECK_EQ_INT(t, e->nnodes, 2);
	CHECK_STR(t, e->nodes[1], "n0");
	CHECK_STR(t, e->pending, "");
	CHECK(t, e->message == NULL);
	e = &st->expect[2];
	CHECK_STR(t, e->job, "other");
	CHECK_EQ_INT(t, e->bound, -1);
	CHECK(t, e->pending == NULL);
	CHECK(t, !e->check_nodes);
	st = &sc->steps[1];
	CHECK_EQ_INT(t, st->at, 600000);
	CHECK_EQ_INT(t, st->cycles, 3);
	CHECK_EQ_INT(t, st->nfinish, 1);
	CHECK_STR(t, st->finish[0], "small");
	CHECK_EQ_INT(t, st->nremove_nodes, 1);
	CHECK_STR(t, st->remove_nodes[0], "n1");
	CHECK_EQ_INT(t, st->nexpect, 2);
	CHECK_STR(t, st->expect[1].pending, "Blocked");
	e = &st->expect[0];
	CHECK(t, e->check_nodes);
	CHECK_EQ_INT(t, e->nnodes, 0);
	CHECK_EQ_INT(t, e->evicted, 0);
	CHECK_STR(t, e->pending, "QueueLimit");
	/* a step without `at` happens at the previous step's time */
	CHECK_EQ_INT(t, sc->steps[2].at, 600000);
	CHECK_EQ_INT(t, sc->steps[2].nexpect, 0);
	mu_specs_release(&s);
}

/* DRA documents are kept as JSON, a pod's resourceClaims too; YAML
 * scalars become what a Kubernetes API server would read. */
static void test_dra_docs(mu_t_t *t)
{
	const char *y =
		"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
		"spec: {driver: d, nodeName: n0, pool: {name: p, generation: 1, resourceSliceCount: 1},\n"
		"  devices: [{name: g0, basic: {attributes: {a: {int: 7}, b: {bool: true}, c: {string: \"7\"}}}}]}\n"
		"---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j, labels: {muster.io/queue: q}}\n"
		"spec:\n  template:\n    spec:\n      resourceClaims: [{name: g, resourceClaimName: c}]\n"
		"      containers: [{name: m, image: x}]\n";
	mu_specs_t s;
	mu_diag_t d;
	CHECK_EQ_INT(t, load(y, &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.ndra, 1);
	if (s.ndra == 1)
		CHECK(t, strstr(s.dra[0], "\"attributes\":{\"a\":{\"int\":7},\"b\":{\"bool\":true},"
			  "\"c\":{\"string\":\"7\"}}") != NULL);
	CHECK_EQ_INT(t, s.njobs, 1);
	if (s.njobs == 1)
		CHECK_STR(t, s.jobs[0].podsets[0].dra_claims ? s.jobs[0].podsets[0].dra_claims : "",
			  "[{\"name\":\"g\",\"resourceClaimName\":\"c\"}]");
	mu_specs_release(&s);
}

static void test_scenario_errors(mu_t_t *t)
{
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {draDevices: [n0]}\n", MU_EINVAL,
		"t.yaml:7:26: spec.steps[0].expect.a.draDevices[0]: expected \"NODE:DRIVER/POOL/DEVICE\", got \"n0\"");
	ERR_HAS(t, "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: x}\n"
		"spec: {}\n", MU_EPARSE, "spec.spec: required field is missing");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {boundd: 1}\n", MU_EINVAL,
		"t.yaml:7:21: spec.steps[0].expect.a.boundd: unknown expectation; "
		"expected bound, nodes, devices, draDevices, pending, message, evicted, pool or escalated");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {pending: true}\n", MU_EINVAL,
		"spec.steps[0].expect.a.pending: expected a reason (Unschedulable, "
		"Gang, QueueLimit, ");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {pending: Waiting}\n",
		MU_EINVAL, "got \"Waiting\"");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {pending: None}\n",
		MU_EINVAL, "got \"None\"");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {pending: \"false\"}\n",
		MU_EINVAL, "got \"false\"");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {bound: -1}\n", MU_ERANGE,
		"expect.a.bound: expected an integer from 0 to 10000000");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: {nodes: n0}\n", MU_EPARSE,
		"expect.a.nodes: expected a list");
	ERR_HAS(t, SC_HEAD "    - expect:\n        a: 3\n", MU_EPARSE,
		"spec.steps[0].expect.a: expected a mapping, got \"3\"");
	ERR_HAS(t, SC_HEAD "    - expect:\n        \"bad name\": {bound: 1}\n",
		MU_EINVAL, "spec.steps[0].expect[bad name]: the key must be a job name");
	ERR_HAS(t, SC_HEAD "    - expect: [a]\n", MU_EPARSE,
		"spec.steps[0].expect: expected a mapping, got a list");
	ERR_HAS(t, SC_HEAD "    - cycles: 0\n", MU_ERANGE,
		"spec.steps[0].cycles: expected an integer from 1 to 1000");
	ERR_HAS(t, SC_HEAD "    - cycles: 1001\n", MU_ERANGE, "1 to 1000");
	ERR_HAS(t, SC_HEAD "    - at: 5m\n    - at: 1m\n", MU_ERANGE,
		"t.yaml:7:11: spec.steps[1].at: steps must be in time order");
	ERR_HAS(t, SC_HEAD "    - finish: [\"a b\"]\n", MU_EINVAL,
		"spec.steps[0].finish[0]: expected a name");
	ERR_HAS(t, SC_HEAD "    - disruptionsAllowed: {a: -2}\n", MU_ERANGE,
		"spec.steps[0].disruptionsAllowed.a: expected an integer from -1 to 10000000");
	ERR_HAS(t, SC_HEAD "    - disruptionsAllowed: [a]\n", MU_EPARSE,
		"spec.steps[0].disruptionsAllowed: expected a mapping");
	ERR_HAS(t, SC_HEAD "    - disruptionsAllowed: {\"a b\": 1}\n", MU_EINVAL,
		"the key must be a job name");
	ERR_HAS(t, "apiVersion: muster.io/v1alpha1\nkind: Scenario\n"
		"metadata: {name: s}\nspec:\n  steps: []\n", MU_EPARSE,
		"spec.steps: a scenario needs at least one step");
	ERR_HAS(t, "apiVersion: muster.io/v1alpha1\nkind: Scenario\n"
		"metadata: {name: s}\nspec: {}\n", MU_EPARSE,
		"spec.steps: required field is missing");
	ERR_HAS(t, SC_HEAD "    - {}\n---\n" SC_HEAD "    - {}\n", MU_EEXIST,
		"t.yaml:10:11: metadata.name: only one Scenario per load; "
		"\"s\" came first");
}

/* --- YAML-level errors and the document layer ---------------------------- */

static void test_yaml_errors(mu_t_t *t)
{
	ERR_HAS2(t, "apiVersion: v1\nkind: Node\nmetadata: {name: [a\n",
		 MU_EPARSE, "t.yaml:4:1: YAML syntax error", "flow");
	ERR_HAS(t, "a: b\n\tc: d\n", MU_EPARSE, "t.yaml:2:1: YAML syntax error");
	ERR_HAS(t, "key: \"unterminated\n", MU_EPARSE, "YAML syntax error");
	ERR_HAS(t, "a: 1\nb: \xff\xfe\n", MU_EPARSE, "t.yaml:2:4: invalid YAML text");
	ERR_HAS(t, "apiVersion: v1\nmetadata: {name: x}\n", MU_EPARSE,
		"t.yaml:1:1: the document has no kind");
	ERR_HAS(t, NODE_HEAD "---\n\n\napiVersion: v1\nmetadata: {name: x}\n",
		MU_EPARSE, "t.yaml:7:1: the document has no kind");
	ERR_HAS(t, "apiVersion: bar/v1\nkind: Foo\n", MU_EINVAL,
		"t.yaml:2:7: unknown kind \"Foo\" (apiVersion \"bar/v1\"); expected "
		"one of: Node, NodePool, Queue, Workload, Job (batch/v1), Scenario");
	ERR_HAS(t, "apiVersion: muster.io/v1alpha1\nkind: Node\n", MU_EINVAL,
		"unknown kind \"Node\" (apiVersion \"muster.io/v1alpha1\")");
	ERR_HAS(t, "kind: Job\n", MU_EINVAL, "(apiVersion \"\")");
	ERR_HAS(t, "kind: {a: b}\n", MU_EPARSE, "kind: expected a string, got a mapping");
	ERR_HAS(t, "- a\n- b\n", MU_EPARSE, "t.yaml:1:1: a document must be a mapping");
	ERR_HAS(t, "just text\n", MU_EPARSE, "a document must be a mapping");
	ERR_HAS(t, NODE_HEAD "spec: [1, 2]\n", MU_EPARSE,
		"t.yaml:4:7: spec: expected a mapping, got a list");
	ERR_HAS(t, NODE_HEAD "spec: text\n", MU_EPARSE,
		"spec: expected a mapping, got \"text\"");
	ERR_HAS(t, "apiVersion: v1\nkind: Node\nkind: Node\n", MU_EPARSE,
		"t.yaml:3:7: kind: duplicate key (first given at line 2)");
	ERR_HAS(t, "apiVersion: v1\nkind: Node\nmetadata: &m {name: a}\n"
		"spec: *m\n", MU_EPARSE, "t.yaml:4:7: YAML aliases");
	ERR_HAS(t, "? [a]\n: b\n", MU_EPARSE, "a mapping key must be a string");
	ERR_HAS(t, "a: \"x\\0y\"\n", MU_EPARSE, "NUL character");
	/* a billion laughs stops at the first alias */
	ERR_HAS(t, "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a]\n"
		"c: &c [*b, *b, *b, *b]\n", MU_EPARSE, "t.yaml:2:8: YAML aliases");
	/* deep nesting is cut off */
	char deep[400];
	memset(deep, '[', 300);
	strcpy(deep + 300, "\n");
	ERR_HAS(t, deep, MU_ELIMIT, "t.yaml:1:65: nesting deeper than 64 levels");
	ERR_HAS(t, "a: {b: {c: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
		"[[[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
		"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}\n", MU_ELIMIT, "nesting deeper");
}

static void test_documents(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	/* empty documents, comments only, nothing at all */
	CHECK_EQ_INT(t, load("", &s, &d), MU_OK);
	mu_specs_release(&s);
	CHECK_EQ_INT(t, load("# nothing\n---\n---\n...\n---\n~\n", &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes + s.nqueues + s.njobs, 0);
	mu_specs_release(&s);
	/* unknown fields are ignored, nulls are absent */
	CHECK_EQ_INT(t, load(NODE_HEAD "extra: {deep: [1, 2]}\nspec:\n"
			     "  podCIDR: x\n  taints: ~\nstatus: null\n", &s, &d),
		     MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 1);
	mu_specs_release(&s);
	/* an error in the third document names its line in the file */
	ERR_HAS(t, NODE_HEAD "---\n" Q_HEAD "  priority: 1\n---\n"
		"apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
		"status: {allocatable: {cpu: x}}\n", MU_EPARSE,
		"t.yaml:14:29: status.allocatable.cpu: expected a quantity");
	/* documents before an error stay loaded, the set stays valid */
	CHECK_EQ_INT(t, load(NODE_HEAD "---\n" Q_HEAD "  priority: x\n", &s, &d),
		     MU_EPARSE);
	CHECK_EQ_INT(t, s.nnodes, 1);
	CHECK_EQ_INT(t, s.nqueues, 0);
	mu_specs_release(&s);
	/* loading appends to what the set holds */
	mu_specs_init(&s);
	CHECK_EQ_INT(t, mu_load_yaml("a.yaml", NODE_HEAD, strlen(NODE_HEAD), &s,
				     &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_yaml("b.yaml", NODE_HEAD, strlen(NODE_HEAD), &s,
				     NULL), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 2);
	/* a NULL diag is fine on errors too */
	CHECK_EQ_INT(t, mu_load_yaml("c.yaml", "kind: [", 7, &s, NULL), MU_EPARSE);
	/* the length is honoured: no NUL needed */
	CHECK_EQ_INT(t, mu_load_yaml("d.yaml", "kind: Job\n\x01", 10, &s, &d),
		     MU_EINVAL);
	mu_specs_release(&s);
}

static void test_limits(mu_t_t *t)
{
	/* 10,000,000 pods in a set at most */
	mu_specs_t s;
	mu_diag_t d;
	const char *big = WL_HEAD "  podSets: [{replicas: 1000000}, "
		"{replicas: 1000000}, {replicas: 1000000}, {replicas: 1000000}, "
		"{replicas: 1000000}, {replicas: 1000000}, {replicas: 1000000}, "
		"{replicas: 1000000}, {replicas: 1000000}, {replicas: 999999}]\n";
	CHECK_EQ_INT(t, load(big, &s, &d), MU_OK);
	CHECK_EQ_INT(t, mu_load_yaml("t.yaml", "apiVersion: muster.io/v1alpha1\n"
				     "kind: Workload\nmetadata: {name: w2}\n"
				     "spec: {queue: q, podSets: [{replicas: 2}]}\n",
				     strlen("apiVersion: muster.io/v1alpha1\n"
					    "kind: Workload\nmetadata: {name: w2}\n"
					    "spec: {queue: q, podSets: [{replicas: 2}]}\n"),
				     &s, &d), MU_ELIMIT);
	CHECK(t, strstr(d.msg, "t.yaml:3:11: metadata: more than 10000000 pods")
		 != NULL);
	CHECK_EQ_INT(t, s.njobs, 1);
	mu_specs_release(&s);
	/* NodePool labels: 100000 nodes x 161 labels is over the budget,
	 * refused before anything is made */
	char y[8192];
	strcpy(y, POOL_HEAD "  count: 100000\n  topology: [{label: r, every: 10}]\n"
	       "  labels:\n");
	for (int i = 0; i < 160; i++)
		snprintf(y + strlen(y), sizeof y - strlen(y), "    l%d: v\n", i);
	ERR_HAS(t, y, MU_ELIMIT, "NodePools would make more than 16000000 node labels");
	/* nodes per set */
	CHECK_EQ_INT(t, load(POOL_HEAD "  count: 100000\n", &s, &d), MU_OK);
	CHECK_EQ_INT(t, s.nnodes, 100000);
	if (s.nnodes == 100000)
		CHECK_STR(t, s.nodes[99999].name, "p-99999");
	mu_specs_release(&s);
}

/* --- Files: examples and the shared fixtures ----------------------------- */

/* Reads a whole file into a malloc'ed, NUL-terminated buffer; NULL if it
 * cannot. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap - 1)
			break;
		char *nb = realloc(buf, cap *= 2);
		if (!nb)
			free(buf);
		buf = nb;
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static void test_examples(mu_t_t *t)
{
	static const char *files[] = {"examples/cluster-small.yaml",
				      "examples/workload-small.yaml"};
	mu_specs_t s;
	mu_diag_t d = {{0}};
	mu_specs_init(&s);
	for (size_t i = 0; i < 2; i++) {
		size_t len;
		char *buf = slurp(files[i], &len);
		CHECK(t, buf != NULL);
		if (!buf)
			continue;
		int rc = mu_load_yaml(files[i], buf, len, &s, &d);
		if (rc != MU_OK)
			fprintf(stderr, "  %s\n", d.msg);
		CHECK_EQ_INT(t, rc, MU_OK);
		free(buf);
	}
	CHECK_EQ_INT(t, s.nnodes, 8);
	CHECK_EQ_INT(t, s.nqueues, 2);
	CHECK_EQ_INT(t, s.njobs, 4);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_OK);
	if (s.nnodes == 8) {
		CHECK_STR(t, label(s.nodes[7].labels, s.nodes[7].nlabels,
				   "muster.io/rack"), "rack-1");
		CHECK_STR(t, s.nodes[0].gpu_model, "A100");
	}
	mu_specs_release(&s);
}

/* A malloc'ed copy of buf with the first `from` replaced by `to`; NULL if
 * from is absent. */
static char *replace1(const char *buf, const char *from, const char *to)
{
	const char *p = strstr(buf, from);
	if (!p)
		return NULL;
	size_t o = (size_t)(p - buf), lf = strlen(from), lt = strlen(to);
	char *r = malloc(strlen(buf) - lf + lt + 1);
	if (!r)
		return NULL;
	memcpy(r, buf, o);
	memcpy(r + o, to, lt);
	strcpy(r + o + lt, p + lf);
	return r;
}

/* Loads text as file; returns the error and fills d and s. */
static int load_as(const char *file, const char *text, mu_specs_t *s,
		   mu_diag_t *d)
{
	mu_specs_init(s);
	memset(d, 0, sizeof *d);
	return mu_load_yaml(file, text, strlen(text), s, d);
}

/* The fixtures carry placeholder values ("effectValue", no muster.io
 * labels): they must fail, with a message naming the field.  With the
 * placeholders replaced they load. */
static void test_fixtures(mu_t_t *t)
{
	static const struct {
		const char *file, *want;
		int rc;
		const char *from, *to;
	} fx[] = {
		{"../shared/data/k8s/core.v1.Node.yaml",
		 "core.v1.Node.yaml:52:13: spec.taints[0].effect: expected "
		 "NoSchedule, PreferNoSchedule or NoExecute, got \"effectValue\"",
		 MU_EINVAL, "effect: effectValue", "effect: NoSchedule"},
		{"../shared/data/k8s/batch.v1.Job.yaml",
		 "batch.v1.Job.yaml:14:5: metadata.labels: the label "
		 "muster.io/queue (or kueue.x-k8s.io/queue-name) naming the "
		 "job's queue is missing", MU_EPARSE,
		 "labelsKey: labelsValue", "muster.io/queue: q"},
	};
	for (size_t i = 0; i < 2; i++) {
		size_t len;
		char *buf = slurp(fx[i].file, &len);
		if (!buf) {
			printf("skipped: ../shared/data not found (%s)\n", fx[i].file);
			continue;
		}
		mu_specs_t s;
		mu_diag_t d;
		CHECK_EQ_INT(t, load_as(fx[i].file, buf, &s, &d), fx[i].rc);
		if (!strstr(d.msg, fx[i].want))
			fprintf(stderr, "  got: %s\n", d.msg);
		CHECK(t, strstr(d.msg, fx[i].want) != NULL);
		mu_specs_release(&s);
		char *fixed = replace1(buf, fx[i].from, fx[i].to);
		CHECK(t, fixed != NULL);
		if (fixed && i == 0) {
			CHECK_EQ_INT(t, load_as("node", fixed, &s, &d), MU_OK);
			CHECK_EQ_INT(t, s.nnodes, 1);
			if (s.nnodes == 1) {
				CHECK_STR(t, s.nodes[0].name, "nameValue");
				CHECK(t, s.nodes[0].unschedulable);
				CHECK_EQ_INT(t, s.nodes[0].next, 1);
				CHECK_STR(t, s.nodes[0].ext[0].name, "allocatableKey");
			}
			mu_specs_release(&s);
		} else if (fixed) {
			/* then the Job fails on what muster does not support */
			CHECK_EQ_INT(t, load_as("job", fixed, &s, &d), MU_EINVAL);
			CHECK(t, strstr(d.msg, "job:143:15: spec.template.spec.affinity."
					"nodeAffinity.requiredDuringSchedulingIgnored"
					"DuringExecution.nodeSelectorTerms[0]."
					"matchFields: matchFields is not supported")
				 != NULL);
			mu_specs_release(&s);
		}
		free(fixed);
		free(buf);
	}
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_arena_large);
	MU_RUN(&t, test_node_full);
	MU_RUN(&t, test_node_defaults);
	MU_RUN(&t, test_node_errors);
	MU_RUN(&t, test_nodepool);
	MU_RUN(&t, test_nodepool_errors);
	MU_RUN(&t, test_queue);
	MU_RUN(&t, test_queue_errors);
	MU_RUN(&t, test_workload_full);
	MU_RUN(&t, test_workload_defaults);
	MU_RUN(&t, test_workload_gpu);
	MU_RUN(&t, test_workload_template);
	MU_RUN(&t, test_workload_errors);
	MU_RUN(&t, test_selector_errors);
	MU_RUN(&t, test_job);
	MU_RUN(&t, test_load_json);
	MU_RUN(&t, test_job_containers);
	MU_RUN(&t, test_job_defaults_and_errors);
	MU_RUN(&t, test_scenario);
	MU_RUN(&t, test_scenario_errors);
	MU_RUN(&t, test_dra_docs);
	MU_RUN(&t, test_yaml_errors);
	MU_RUN(&t, test_documents);
	MU_RUN(&t, test_limits);
	MU_RUN(&t, test_examples);
	MU_RUN(&t, test_fixtures);
	return mu_t_done(&t);
}
