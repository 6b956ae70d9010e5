#!/bin/sh
# dra_job.sh - a queue-labelled batch/v1 Job whose pod template names a
# ResourceClaimTemplate, through kubectl against `muster up` and `muster
# scheduler`: two nodes, a DeviceClass and a ResourceSlice with one device
# on node-1.  The Job's slots are planned only on the node with the device
# (its template's claims counted at admission, src/kube/jobs.c), the pod's
# claim (made by muster up's claim controller) is allocated and reserved
# for it before the bind, and the pod is bound to node-1; a second Job
# asking for the same class while the device is taken is not admitted and
# its pod is never bound.  Before round 15's dra2 fix the admitted Job's
# pods were bound into their slots without DRA: on any node, claim
# unallocated.  Round 16: a slot whose node lost its device between the
# admission and the bind is planned again (below).  Usage: sh
# tests/e2e/dra_job.sh PATH_TO_MUSTER.
E2E_NAME=dra_job; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

cat >"$T/cluster.yaml" <<'Y'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec:
  count: 2
  namePrefix: node-
  allocatable: {cpu: "16", memory: 64Gi}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
Y
up_start "$T/cluster.yaml"
sched_start d --min-runtime 0

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
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
      basic:
        attributes: {model: {string: A100}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, deviceClassName: gpu.example.com}]
Y
kc apply -f "$T/dra.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the DRA objects"; }
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\nspec:\n  parallelism: 1\n  completions: 1\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n%s      restartPolicy: Never\n      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]\n' "$1" "${2:-}" >"$T/$1.yaml"
	kc apply -f "$T/$1.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of job $1"; }
}
podof() { kc get pods -l "job-name=$1" -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null; }
bound() { p=$(podof "$1"); [ -n "$p" ] && [ -n "$(kc get pod "$p" -o 'jsonpath={.spec.nodeName}')" ]; }

job j1
wait_for j1-pod-bound 150 bound j1
P1=$(podof j1)
k get pod "$P1" -o 'jsonpath={.spec.nodeName}'
has j1-on-device-node "$T/out" "node-1"
C1=$(kc get pod "$P1" -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')
k get resourceclaim "$C1" -o 'jsonpath={.status.allocation.devices.results[0].device} {.status.allocation.devices.results[0].pool} {.status.reservedFor[0].name}'
has j1-claim-allocated "$T/out" "gpu-0 node-1 $P1"

# the only device is taken: a second Job's pod is never bound
job j2
sleep 8
if bound j2; then bad "j2's pod was bound with its claim unallocatable"; else ok; fi
P2=$(podof j2)
if [ -n "$P2" ]; then
	C2=$(kc get pod "$P2" -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')
	[ -z "$C2" ] || [ -z "$(kc get resourceclaim "$C2" -o 'jsonpath={.status.allocation}')" ] && ok ||
		bad "j2's claim allocated with the device taken"
else
	ok
fi
# round 16: a device taken between admission and bind.  j1 and j2 go;
# j3 is admitted into a slot on node-1 (the only node with a device), its
# pod held by a scheduling gate; meanwhile another scheduler's pod takes
# gpu-0 (a named claim allocated to it, which muster's engine does not
# count) and node-0 gets a device.  Once the gate is lifted, the slot is
# re-planned (not waiting for node-1's device forever): j3's pod is bound
# to node-0 with its claim allocated there.
kc delete job j1 j2 --wait=false >"$T/out" 2>&1 || { cat "$T/out"; bad "delete j1 j2"; }
gone() { [ -z "$(kc get resourceclaims -o 'jsonpath={range .items[*]}{.status.allocation.devices.results[0].device}{end}')" ]; }
wait_for j1-claim-freed 60 gone
job j3 '      schedulingGates: [{name: e2e.muster.io/hold}]
'
admitted() { [ "$(kc get job j3 -o 'jsonpath={.metadata.annotations.muster\.io/admitted}')" = true ] && [ -n "$(podof j3)" ]; }
wait_for j3-admitted 60 admitted
cat >"$T/squat.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: squat}
spec:
  devices:
    requests: [{name: gpu, deviceClassName: gpu.example.com}]
---
apiVersion: v1
kind: Pod
metadata: {name: squat}
spec:
  schedulerName: someone-else
  nodeName: node-1
  resourceClaims: [{name: gpu, resourceClaimName: squat}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-0-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
      basic:
        attributes: {model: {string: A100}}
Y
kc apply -f "$T/squat.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the squatter"; }
SU=$(kc get pod squat -o 'jsonpath={.metadata.uid}')
kc patch resourceclaim squat --subresource=status --type=merge -p "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\",\"device\":\"gpu-0\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-1\"]}]}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"squat\",\"uid\":\"$SU\"}]}}" >"$T/out" 2>&1 ||
	{ cat "$T/out"; bad "allocating the squatter's claim"; }
k get resourceclaim squat -o 'jsonpath={.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}'
has squat-allocated "$T/out" "gpu-0 squat"
sleep 5 # the scheduler's device counts are read every 2 s
P3=$(podof j3)
kc patch pod "$P3" --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]' >"$T/out" 2>&1 ||
	{ cat "$T/out"; bad "lifting j3's gate"; }
wait_for j3-pod-bound 60 bound j3
k get pod "$P3" -o 'jsonpath={.spec.nodeName}'
has j3-on-node-0 "$T/out" "node-0"
C3=$(kc get pod "$P3" -o 'jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}')
k get resourceclaim "$C3" -o 'jsonpath={.status.allocation.devices.results[0].device} {.status.allocation.devices.results[0].pool} {.status.reservedFor[0].name}'
has j3-claim-on-node-0 "$T/out" "gpu-0 node-0 $P3"
has j3-slot-re-planned "$T/sched.log" "slot 0 on node-1 re-planned"
hasnt no-asan "$T/sched.log" "AddressSanitizer"
hasnt no-ubsan "$T/sched.log" "runtime error"
done_
