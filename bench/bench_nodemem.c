/*
 * bench_nodemem.c - what the scheduler daemon holds per listed Node: the
 * heap (mu__heap_stats: jemalloc's or glibc's count) of N Node objects as jansson values, whole as
 * listed, and of the slim copies the daemon keeps (mu__knode_slim()) once
 * the whole ones are dropped.
 *
 * The Nodes are synthetic but shaped like a GPU cloud node as a real API
 * server lists it: 30 labels, 8 annotations, 4 managedFields entries,
 * 5 conditions, 2 addresses, nodeInfo, and 50 container images with two
 * names each (kubelet reports up to 50).  Usage: bench_nodemem [N]
 * (default 5,000).  Prints one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kube/kube_int.h"

static size_t heap_used(void)
{
	size_t in_use, held;
	mu__heap_stats(&in_use, &held);
	return in_use;
}

/* One synthetic Node, i-th of its list. */
static json_t *node_new(int i)
{
	char name[32], s[160];
	snprintf(name, sizeof name, "node-%05d", i);
	json_t *labels = json_pack("{s:s,s:s,s:s,s:s,s:s}", "kubernetes.io/hostname", name,
				   "kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64",
				   "nvidia.com/gpu.product", "A100-SXM4-40GB",
				   "topology.kubernetes.io/zone", "zone-a");
	for (int k = 0; k < 25; k++) {
		snprintf(s, sizeof s, "feature.node.kubernetes.io/cpu-cpuid.FEATURE%02d", k);
		json_object_set_new(labels, s, json_string("true"));
	}
	json_t *ann = json_object(), *mf = json_array(), *conds = json_array();
	json_t *imgs = json_array();
	for (int k = 0; k < 8; k++) {
		snprintf(s, sizeof s, "annotation.example.com/key-%d", k);
		json_object_set_new(ann, s, json_string("a-forty-character-annotation-value-xxxxx"));
	}
	static const char *const mgr[] = {"kubelet", "kube-controller-manager",
					  "nvidia-device-plugin", "node-feature-discovery"};
	for (int k = 0; k < 4; k++)
		json_array_append_new(mf, json_pack(
			"{s:s,s:s,s:s,s:{s:{s:{s:{},s:{}},s:{s:{}}},s:{s:{s:{s:{},s:{}}}}}}",
			"manager", mgr[k], "operation", "Update", "time", "2026-11-25T10:00:00Z",
			"fieldsV1", "f:metadata", "f:annotations", ".", "f:ttl", "f:labels",
			"f:kubernetes.io/hostname", "f:status", "f:conditions",
			"k:{\"type\":\"Ready\"}", "f:lastHeartbeatTime", "f:status"));
	static const char *const ct[] = {"MemoryPressure", "DiskPressure", "PIDPressure",
					 "NetworkUnavailable", "Ready"};
	for (int k = 0; k < 5; k++)
		json_array_append_new(conds, json_pack(
			"{s:s,s:s,s:s,s:s,s:s,s:s}", "type", ct[k], "status", k == 4 ? "True" : "False",
			"lastHeartbeatTime", "2026-11-25T10:00:00Z",
			"lastTransitionTime", "2026-11-20T10:00:00Z", "reason", "KubeletReady",
			"message", "kubelet has sufficient resources available"));
	for (int k = 0; k < 50; k++) {
		char a[160], b[120];
		snprintf(a, sizeof a, "registry.example.com/team%d/image%d@sha256:"
			 "%016x%016x%016x%016x", k, k, i, k, i * 7 + k, k * 13 + 5);
		snprintf(b, sizeof b, "registry.example.com/team%d/image%d:v1.%d.0", k, k, k);
		json_array_append_new(imgs, json_pack("{s:[s,s],s:I}", "names", a, b,
						      "sizeBytes", (json_int_t)(1 + k) * 10000000));
	}
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:o,s:o},s:{s:s},s:{s:{s:s,s:s,s:s,s:s},"
			 "s:{s:s,s:s,s:s,s:s},s:o,s:[{s:s,s:s},{s:s,s:s}],s:{s:s,s:s,s:s},s:o}}",
			 "apiVersion", "v1", "kind", "Node",
			 "metadata", "name", name, "uid", "6f1c3a1e-2b44-4c1e-9a7e-0123456789ab",
			 "labels", labels, "annotations", ann, "managedFields", mf,
			 "spec", "providerID", "cloud:///zone-a/instance",
			 "status", "capacity", "cpu", "96", "memory", "1152Gi", "nvidia.com/gpu", "8",
			 "pods", "110", "allocatable", "cpu", "95", "memory", "1100Gi",
			 "nvidia.com/gpu", "8", "pods", "110", "conditions", conds,
			 "addresses", "type", "InternalIP", "address", "10.0.0.1", "type",
			 "Hostname", "address", name, "nodeInfo", "kubeletVersion", "v1.29.0",
			 "osImage", "Ubuntu 22.04", "containerRuntimeVersion", "containerd://1.7.2",
			 "images", imgs);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5000;
	if (n <= 0)
		n = 5000;
	json_t **whole = calloc((size_t)n, sizeof *whole), **slim = calloc((size_t)n, sizeof *slim);
	if (!whole || !slim)
		return 1;
	size_t u0 = heap_used();
	for (int i = 0; i < n; i++)
		whole[i] = node_new(i);
	size_t u1 = heap_used();
	for (int i = 0; i < n; i++)
		slim[i] = mu__knode_slim(whole[i]);
	for (int i = 0; i < n; i++)
		json_decref(whole[i]);
	size_t u2 = heap_used();
	printf("{\"shape\": \"nodemem\", \"nodes\": %d, \"whole_mb\": %.1f, \"slim_mb\": %.1f, "
	       "\"whole_kb_per_node\": %.1f, \"slim_kb_per_node\": %.1f}\n", n,
	       (double)(u1 - u0) / 1e6, (double)(u2 - u0) / 1e6,
	       (double)(u1 - u0) / 1e3 / n, (double)(u2 - u0) / 1e3 / n);
	for (int i = 0; i < n; i++)
		json_decref(slim[i]);
	free(whole);
	free(slim);
	return 0;
}
