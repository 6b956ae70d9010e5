#!/bin/sh
# dra_preempt.sh - preemption for a DRA device through `muster scheduler`
# against `muster up` and kubectl 1.32.  n0 has one GPU in a ResourceSlice
# and CPUs to spare.  low (priority 0, preemptible) runs with the GPU
# through a claim from a ResourceClaimTemplate; high (priority 100) needs
# the GPU too.  CPUs alone would let both run: only knowing that evicting
# low frees its device lets the engine evict it (muster counts the
# devices of classes that templates ask for as extended resources,
# muster.io/dra-CLASS).  low is evicted, its claim deallocated and
# deleted with it, and high gets gpu-0, as kube-scheduler's DynamicResources
# PostFilter makes room by deallocating (dynamicresources_test.go,
# kubernetes/kubernetes).  tests/scenarios/dra-preempt.yaml is the same in
# the scenario runner.  The scheduler is restarted after low is bound, so
# the one that preempts counts a device it did not allocate.
# Usage: sh tests/e2e/dra_preempt.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=dra_preempt; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

up_start_one_node
sched() {
	"$M" scheduler --kubeconfig "$T/data/kubeconfig" --id "$1" --lease-namespace default \
		--lease-duration 6 --retry-period 1 --metrics 127.0.0.1:0 --min-runtime 0 \
		>"$T/sched-$1.out" 2>"$T/sched-$1.log" &
	SPID=$!
}
sched d1

cat >"$T/dra.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: n0-gpus}
spec:
  driver: gpu.example.com
  nodeName: n0
  pool: {name: n0, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, basic: {}}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, deviceClassName: gpu.example.com}]
---
apiVersion: v1
kind: Pod
metadata:
  name: low
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/priority: "0", muster.io/preemptible: "true"}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
Y
kc apply -f "$T/dra.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the DRA objects"; }
is_bound() { [ -n "$(kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null)" ]; }
wait_for low-bound 60 is_bound low
made=$(kc get pod low -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k get resourceclaim "$made" -o jsonpath='{.status.allocation.devices.results[0].device}'
has low-has-the-gpu "$T/out" "gpu-0"
# A new scheduler finds low bound: it must still know that low's claim
# holds the GPU (the pods it did not place itself count too).
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
sched d2

cat >"$T/high.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata:
  name: high
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/priority: "100"}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
Y
kc apply -f "$T/high.yaml" >/dev/null 2>&1
wait_for high-bound 90 is_bound high
gone() { ! kc get pod low >/dev/null 2>&1 || [ -n "$(kc get pod low -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
wait_for low-evicted 30 gone
hm=$(kc get pod high -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k get resourceclaim "$hm" -o jsonpath='{.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}'
has high-has-the-gpu "$T/out" "gpu-0 high"
k get events --field-selector involvedObject.name=low
has low-preempted-event "$T/out" "Preempted"
done_
