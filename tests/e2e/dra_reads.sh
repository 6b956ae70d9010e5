#!/bin/sh
# dra_reads.sh - guards what `muster scheduler` reads for DRA: binds
# allocate from the shared view of the lists (src/kube/dra.c), with the
# claim's resourceVersion as precondition on the status write, instead of
# reading every ResourceSlice, class, claim and rule again per bind.  40
# pods, each naming its own claim for one GPU, on 5 nodes of 8 GPUs, all
# created before the scheduler starts; every pod must bind, and the
# scheduler's DRA list reads (muster_dra_list_reads_total) must stay below
# 4 per pod: a bind that read afresh costs 5 lists (slices, classes,
# claims, rules, and templates or nodes), 200 and more for these pods (581
# in all when binds read afresh, 75 from the shared view, on a loaded
# machine: the view is read again at most once a second while pods wait,
# so the bound leaves room for a slow run).
# Usage: sh tests/e2e/dra_reads.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=dra_reads; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
PODS=40

printf '%s\n' 'apiVersion: muster.io/v1alpha1' 'kind: NodePool' 'metadata: {name: n}' \
	'spec: {count: 5, namePrefix: node-, allocatable: {cpu: "64", memory: 512Gi}}' '---' \
	'apiVersion: muster.io/v1alpha1' 'kind: Queue' 'metadata: {name: q}' 'spec: {}' >"$T/cluster.yaml"
up_start "$T/cluster.yaml"
{
	printf '%s\n' 'apiVersion: resource.k8s.io/v1beta1' 'kind: DeviceClass' \
		'metadata: {name: gpu.example.com}' \
		"spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}"
	for n in $(kc get nodes -o jsonpath='{.items[*].metadata.name}'); do
		printf '%s\n' '---' 'apiVersion: resource.k8s.io/v1beta1' 'kind: ResourceSlice' \
			"metadata: {name: $n-gpus}" 'spec:' '  driver: gpu.example.com' "  nodeName: $n" \
			"  pool: {name: $n, generation: 1, resourceSliceCount: 1}" \
			'  devices: [{name: gpu-0, basic: {}}, {name: gpu-1, basic: {}}, {name: gpu-2, basic: {}},' \
			'            {name: gpu-3, basic: {}}, {name: gpu-4, basic: {}}, {name: gpu-5, basic: {}},' \
			'            {name: gpu-6, basic: {}}, {name: gpu-7, basic: {}}]'
	done
	i=0
	while [ "$i" -lt "$PODS" ]; do
		printf '%s\n' '---' 'apiVersion: resource.k8s.io/v1beta1' 'kind: ResourceClaim' \
			"metadata: {name: c-$i, namespace: default}" \
			'spec: {devices: {requests: [{name: gpu, deviceClassName: gpu.example.com}]}}' '---' \
			'apiVersion: v1' 'kind: Pod' "metadata: {name: p-$i, namespace: default, labels: {muster.io/queue: q}}" \
			'spec:' '  schedulerName: muster' "  resourceClaims: [{name: gpu, resourceClaimName: c-$i}]" \
			'  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]'
		i=$((i + 1))
	done
} >"$T/objs.yaml"
kc create -f "$T/objs.yaml" >"$T/out" 2>&1 && ok || { bad "create: $(tail -3 "$T/out")"; done_; }
sched_start r --min-runtime 0
murl=""
metric() { sed -n "s/^$1 //p" "$T/m"; }
all_bound() {
	[ -n "$murl" ] || murl=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1)
	[ -n "$murl" ] && curl -sf "$murl/metrics" >"$T/m" && [ "$(metric muster_binds_total)" -ge "$PODS" ]
}
wait_for all-bound 900 all_bound
reads=$(metric muster_dra_list_reads_total)
echo "dra_reads: $PODS pods, $reads list reads, $(metric muster_dra_list_objects_total) objects"
[ "${reads:-999999}" -lt $((PODS * 4)) ] && ok || bad "$reads DRA list reads for $PODS pods, expected fewer than $((PODS * 4))"
n=$(kc get resourceclaims -o jsonpath='{range .items[*]}{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}{"\n"}{end}' | sort -u | grep -c /)
[ "$n" -eq "$PODS" ] && ok || bad "$n distinct devices allocated to $PODS claims"

done_
