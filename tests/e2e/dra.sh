#!/bin/sh
# dra.sh - Dynamic Resource Allocation end to end, through kubectl 1.32
# against `muster up` and `muster scheduler`: a DeviceClass, a
# ResourceSlice with two GPUs on one node, ResourceClaims and pods that
# name them.  The claim is allocated (status.allocation names the device
# its CEL selector picks, on the slice's node) and reserved for the pod,
# and the pod is bound to that node; a claim that no free device matches
# waits with the reason; a selector outside muster's CEL subset is refused
# with the reason in the pod's message; a second pod naming the same claim
# shares it; deleting the pods deallocates the claim and the waiting pod
# gets the device; a ResourceClaimTemplate gives a pod its own claim, which
# goes with the pod.  An allocated claim carries kube-scheduler's
# resource.kubernetes.io/delete-protection finalizer until it is
# deallocated.  Modelled on TestPlugin of kube-scheduler's
# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go
# (kubernetes/kubernetes), whose case "good-topology" puts the pod in an
# allocated claim's reservedFor on the claim's node, here with structured
# parameters (v1beta1) and the allocation muster makes itself.
# Usage: sh tests/e2e/dra.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=dra; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

cat >"$T/cluster.yaml" <<'Y'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec:
  count: 3
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
metadata: {name: node-2-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-2
  pool: {name: node-2, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
      basic:
        attributes: {model: {string: A100}, index: {int: 0}}
        capacity: {memory: {value: 40Gi}}
    - name: gpu-1
      basic:
        attributes: {model: {string: H100}, index: {int: 1}}
        capacity: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: big-gpu}
spec:
  devices:
    requests:
      - name: gpu
        deviceClassName: gpu.example.com
        selectors:
          - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0 && device.attributes["gpu.example.com"].model == "H100"'}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimName: big-gpu}]
  containers:
    - name: main
      image: busybox
      resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}
Y
kc apply -f "$T/dra.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the DRA objects"; }
is_bound() { [ -n "$(kc get pod "$1" -o jsonpath='{.spec.nodeName}')" ]; }
wait_for trainer-bound 150 is_bound trainer
k get pod trainer -o jsonpath='{.spec.nodeName}'
has trainer-on-slice-node "$T/out" "node-2"
k get resourceclaim big-gpu -o jsonpath='{.status.allocation.devices.results[0].device} {.status.allocation.devices.results[0].pool} {.status.allocation.devices.results[0].request} {.status.reservedFor[0].name}'
has claim-allocated "$T/out" "gpu-1 node-2 gpu trainer"
k get resourceclaim big-gpu -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]}'
has claim-node "$T/out" "node-2"
# kube-scheduler's DynamicResources plugin protects a claim it allocates
k get resourceclaim big-gpu -o jsonpath='{.metadata.finalizers}'
has claim-delete-protection "$T/out" "resource.kubernetes.io/delete-protection"
k get resourceclaims
has claim-state "$T/out" "allocated,reserved"

# A second pod that names the same claim shares its device: it goes where
# the claim is allocated, and both pods are in reservedFor.
cat >"$T/sharer.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: sharer, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimName: big-gpu}]
  containers: [{name: main, image: busybox}]
Y
kc apply -f "$T/sharer.yaml" >/dev/null
wait_for sharer-bound 150 is_bound sharer
k get pod sharer -o jsonpath='{.spec.nodeName}'
has sharer-on-claim-node "$T/out" "node-2"
k get resourceclaim big-gpu -o jsonpath='{range .status.reservedFor[*]}{.name} {end}|{.status.allocation.devices.results[*].device}'
has claim-reserved-for-both "$T/out" "trainer sharer |gpu-1"

# A second claim for an H100: the only one is taken, so the pod waits.
cat >"$T/more.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: another-h100}
spec:
  devices:
    requests:
      - name: gpu
        deviceClassName: gpu.example.com
        selectors:
          - cel: {expression: 'device.attributes["gpu.example.com"].model == "H100"'}
---
apiVersion: v1
kind: Pod
metadata: {name: waiter, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimName: another-h100}]
  containers: [{name: main, image: busybox}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: fancy}
spec:
  devices:
    requests:
      - name: gpu
        deviceClassName: gpu.example.com
        selectors:
          - cel: {expression: 'device.attributes["gpu.example.com"].model.startsWith("H")'}
---
apiVersion: v1
kind: Pod
metadata: {name: fancy, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimName: fancy}]
  containers: [{name: main, image: busybox}]
Y
kc apply -f "$T/more.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the second claims"; }
msg_has() { kc get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' | grep -qF -- "$2"; }
wait_for waiter-says-why 150 msg_has waiter "0 of 1 matching devices free on node-2"
wait_for fancy-refused 150 msg_has fancy "startsWith() is not supported"
if is_bound waiter || is_bound fancy; then bad "a pod whose claim cannot be allocated was bound"; else ok; fi
k get resourceclaim another-h100 -o jsonpath='{.status.allocation}'
if [ -s "$T/out" ]; then bad "another-h100 allocated: $(cat "$T/out")"; else ok; fi

# Release: when the pods that reserved a claim are gone, muster up's claim
# controller (as kube-controller-manager's resourceclaim controller) drops
# them from reservedFor and deallocates the claim, and the scheduler tries
# the waiting pod again: it gets the freed H100.
kc delete pod trainer sharer --grace-period=0 --force >/dev/null 2>&1
claim_free() { [ -z "$(kc get resourceclaim big-gpu -o jsonpath='{.status.allocation}{.status.reservedFor}')" ]; }
wait_for claim-deallocated 60 claim_free
# and the controller takes the protection off when it deallocates
k get resourceclaim big-gpu -o jsonpath='{.metadata.finalizers}'
hasnt claim-unprotected "$T/out" "delete-protection"
wait_for waiter-bound-after-release 60 is_bound waiter
k get resourceclaim another-h100 -o jsonpath='{.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}'
has freed-device-reused "$T/out" "gpu-1 waiter"

# A claim from a ResourceClaimTemplate: the controller makes POD-CLAIM-xxxxx
# with the pod as controlling owner and records it in the pod's
# status.resourceClaimStatuses; the pod is bound with it; when the pod is
# gone, the claim is deleted.
cat >"$T/tpl.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: a100}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          deviceClassName: gpu.example.com
          selectors:
            - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
---
apiVersion: v1
kind: Pod
metadata: {name: templated, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: accel, resourceClaimTemplateName: a100}]
  containers: [{name: main, image: busybox, resources: {claims: [{name: accel}]}}]
Y
kc apply -f "$T/tpl.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the template and its pod"; }
wait_for templated-bound 60 is_bound templated
k get pod templated -o jsonpath='{.status.resourceClaimStatuses[0].name} {.status.resourceClaimStatuses[0].resourceClaimName}'
has claim-status-recorded "$T/out" "accel templated-accel-"
made=$(kc get pod templated -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
k get resourceclaim "$made" -o jsonpath='{.metadata.annotations.resource\.kubernetes\.io/pod-claim-name} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller} {.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}'
has made-claim "$T/out" "accel Pod templated true gpu-0 templated"
n=$(kc get resourceclaims -o name | grep -c "templated-accel-")
if [ "$n" = 1 ]; then ok; else bad "expected one claim made for the pod, got $n"; fi
kc delete pod templated --grace-period=0 --force >/dev/null 2>&1
made_gone() { ! kc get resourceclaim "$made" >/dev/null 2>&1; }
wait_for made-claim-deleted 60 made_gone

# Bad input: muster up refuses what kube-apiserver refuses, naming the field.
cat >"$T/bad-slice.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: no-driver}
spec:
  nodeName: node-0
  pool: {name: p, resourceSliceCount: 1}
Y
expect bad-slice 1 "$KC" --kubeconfig "$T/data/kubeconfig" apply -f "$T/bad-slice.yaml"
has bad-slice "$T/err" "spec.driver: Required value"
cat >"$T/bad-claim.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: no-class}
spec:
  devices:
    requests: [{name: gpu}]
Y
expect bad-claim 1 "$KC" --kubeconfig "$T/data/kubeconfig" apply -f "$T/bad-claim.yaml"
has bad-claim "$T/err" "spec.devices.requests[0].deviceClassName: Required value"
cat >"$T/claim-edit.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: big-gpu}
spec:
  devices:
    requests: [{name: other, deviceClassName: gpu.example.com}]
Y
expect claim-spec-immutable 1 "$KC" --kubeconfig "$T/data/kubeconfig" apply -f "$T/claim-edit.yaml"
has claim-spec-immutable "$T/err" "field is immutable"

done_
