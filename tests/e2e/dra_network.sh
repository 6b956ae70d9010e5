#!/bin/sh
# dra_network.sh - DRA devices that serve several nodes, and device taint
# rules, end to end through kubectl 1.32 against `muster up` and `muster
# scheduler`.  A ResourceSlice with a nodeSelector (zone a) offers two
# network-attached NICs; a DeviceTaintRule (resource.k8s.io/v1alpha3)
# taints nic-1.  A pod that needs 8 CPUs and a NIC runs on the one zone-a
# node with room (a0 is too small, b0 is in zone b); its claim gets nic-0
# (nic-1 is listed first but tainted) with the slice's selector as the
# allocation's nodeSelector, as kube's structured allocator writes it
# ("network-attached-device" of allocator_test.go, kubernetes/kubernetes).
# A claim whose request tolerates the taint gets nic-1; a third waits
# with the reason.  muster up refuses a DeviceTaintRule without a valid
# effect, and a slice whose nodeSelector has two terms, naming the field.
# Usage: sh tests/e2e/dra_network.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=dra_network; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

cat >"$T/cluster.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: a0, labels: {zone: a}}
status: {allocatable: {cpu: "4", memory: 64Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {zone: a}}
status: {allocatable: {cpu: "16", memory: 64Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: b0, labels: {zone: b}}
status: {allocatable: {cpu: "16", memory: 64Gi}}
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
metadata: {name: nic.example.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "net.example.com"'}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: fabric-a}
spec:
  driver: net.example.com
  nodeSelector:
    nodeSelectorTerms:
      - matchExpressions: [{key: zone, operator: In, values: [a]}]
  pool: {name: fabric-a, generation: 1, resourceSliceCount: 1}
  devices:
    - {name: nic-1, basic: {}}
    - {name: nic-0, basic: {}}
---
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: nic-1-maintenance}
spec:
  deviceSelector: {driver: net.example.com, pool: fabric-a, device: nic-1}
  taint: {key: example.com/maintenance, value: "true", effect: NoSchedule}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: nic}
spec:
  devices:
    requests: [{name: nic, deviceClassName: nic.example.com}]
---
apiVersion: v1
kind: Pod
metadata: {name: big, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: nic, resourceClaimName: nic}]
  containers:
    - name: main
      image: busybox
      resources: {requests: {cpu: "8"}, claims: [{name: nic}]}
Y
kc apply -f "$T/dra.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the DRA objects"; }
is_bound() { [ -n "$(kc get pod "$1" -o jsonpath='{.spec.nodeName}')" ]; }
wait_for big-bound 60 is_bound big
k get pod big -o jsonpath='{.spec.nodeName}'
has big-on-the-zone-a-node-with-room "$T/out" "a1"
k get resourceclaim nic -o jsonpath='{.status.allocation.devices.results[0].device} {.status.reservedFor[0].name}'
has untainted-nic "$T/out" "nic-0 big"
k get resourceclaim nic -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].key}={.status.allocation.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]}|{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields}'
has selector-of-the-slice "$T/out" "zone=a|"
k get devicetaintrules
has rule-listed "$T/out" "nic-1-maintenance"

cat >"$T/more.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: tolerant}
spec:
  devices:
    requests:
      - name: nic
        deviceClassName: nic.example.com
        tolerations: [{key: example.com/maintenance, operator: Exists, effect: NoSchedule}]
---
apiVersion: v1
kind: Pod
metadata: {name: tolerant, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: nic, resourceClaimName: tolerant}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
Y
kc apply -f "$T/more.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the tolerant claim"; }
wait_for tolerant-bound 60 is_bound tolerant
k get resourceclaim tolerant -o jsonpath='{.status.allocation.devices.results[0].device}'
has tolerated-nic "$T/out" "nic-1"
k get pod tolerant -o jsonpath='{.spec.nodeName}'
if grep -qE '^a[01]$' "$T/out"; then ok; else bad "tolerant on $(cat "$T/out"), expected a zone-a node"; fi

cat >"$T/third.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: third}
spec:
  devices:
    requests: [{name: nic, deviceClassName: nic.example.com}]
---
apiVersion: v1
kind: Pod
metadata: {name: third, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: nic, resourceClaimName: third}]
  containers: [{name: main, image: busybox}]
Y
kc apply -f "$T/third.yaml" >/dev/null 2>&1
msg_has() { kc get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' | grep -qF -- "$2"; }
wait_for third-says-why 60 msg_has third "0 of 1 matching devices free on"
if is_bound third; then bad "third was bound without a NIC"; else ok; fi

cat >"$T/bad-rule.yaml" <<'Y'
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: bad}
spec:
  deviceSelector: {driver: net.example.com}
  taint: {key: k, effect: Sometimes}
Y
expect bad-rule 1 "$KC" --kubeconfig "$T/data/kubeconfig" apply -f "$T/bad-rule.yaml"
has bad-rule "$T/err" "spec.taint.effect: Unsupported value"

# kube-apiserver's DRA validation: a slice's nodeSelector has one term
cat >"$T/bad-slice.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: two-terms}
spec:
  driver: net.example.com
  nodeSelector:
    nodeSelectorTerms:
      - matchExpressions: [{key: zone, operator: In, values: [a]}]
      - matchExpressions: [{key: zone, operator: In, values: [b]}]
  pool: {name: two-terms, generation: 1, resourceSliceCount: 1}
  devices: [{name: nic-0, basic: {}}]
Y
expect two-term-slice 1 "$KC" --kubeconfig "$T/data/kubeconfig" apply -f "$T/bad-slice.yaml"
has two-term-slice "$T/err" "spec.nodeSelector.nodeSelectorTerms: Invalid value"

done_
