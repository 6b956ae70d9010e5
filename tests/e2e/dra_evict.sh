#!/bin/sh
# dra_evict.sh - NoExecute device taints evict, end to end through kubectl
# 1.32 against `muster up` (which plays kube-controller-manager's device
# taint eviction controller, src/apiserver/devtaint.c) and `muster
# scheduler`.  Three pods hold one GPU each through claims: plain
# tolerates nothing, patient tolerates the taint for 6 s
# (tolerationSeconds), stoic tolerates it for ever.  A DeviceTaintRule
# with effect NoExecute on every GPU evicts plain at once (the
# DisruptionTarget condition, reason DeletionByDeviceTaintManager, and the
# Event DeviceTaintManagerEviction "Marking for deletion", as the real
# controller writes them), patient only after its 6 s, and stoic never.
# The rule's status condition EvictionInProgress says that one pod waits
# (PodsPendingEviction) while patient's 6 s run, then Completed, as the
# controller of Kubernetes 1.35 writes it.  Then the rule goes, a new pod takes a freed GPU, and a NoExecute taint
# written on that device of the ResourceSlice itself (without timeAdded,
# which muster up stamps) evicts it too.  Last, a pod that tolerates that
# taint for 600 s takes the device, the taint is removed, and the Event
# DeviceTaintManagerEviction "Cancelling deletion" is recorded for it.  Cases modelled on
# "evict-pod-rule", "evict-pod-rule-later" and
# "evict-pod-resourceclaim" of pkg/controller/devicetainteviction/
# device_taint_eviction_test.go (kubernetes/kubernetes).
# Usage: sh tests/e2e/dra_evict.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=dra_evict; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

up_start_one_node
sched_start d --min-runtime 0

# claim NAME INDEX TOLERATIONS: a claim for the GPU of that index, and a
# pod of the same name that uses it.
claim() {
	cat <<Y
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: $1}
spec:
  devices:
    requests:
      - name: gpu
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].index == $2'}}]
        tolerations: $3
---
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  resourceClaims: [{name: gpu, resourceClaimName: $1}]
  containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
Y
}
{
	cat <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: n0-gpus}
spec:
  driver: gpu.example.com
  nodeName: n0
  pool: {name: n0, generation: 1, resourceSliceCount: 1}
  devices:
    - {name: gpu-0, basic: {attributes: {index: {int: 0}}}}
    - {name: gpu-1, basic: {attributes: {index: {int: 1}}}}
    - {name: gpu-2, basic: {attributes: {index: {int: 2}}}}
Y
	claim plain 0 '[]'
	claim patient 1 '[{key: example.com/broken, operator: Exists, effect: NoExecute, tolerationSeconds: 6}]'
	claim stoic 2 '[{key: example.com/broken, operator: Exists, effect: NoExecute}]'
} >"$T/dra.yaml"
kc apply -f "$T/dra.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the DRA objects"; }
is_bound() { [ -n "$(kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null)" ]; }
wait_for plain-bound 100 is_bound plain
wait_for patient-bound 100 is_bound patient
wait_for stoic-bound 100 is_bound stoic
k get resourceclaim patient -o jsonpath='{.status.allocation.devices.results[0].device} {.status.allocation.devices.results[0].tolerations[0].tolerationSeconds}'
has result-carries-tolerations "$T/out" "gpu-1 6"

cat >"$T/rule.yaml" <<'Y'
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: broken}
spec:
  deviceSelector: {driver: gpu.example.com}
  taint: {key: example.com/broken, value: "true", effect: NoExecute}
Y
kc apply -f "$T/rule.yaml" >"$T/out" 2>&1 || { cat "$T/out"; bad "kubectl apply of the rule"; }
start=$(date +%s)
k get devicetaintrule broken -o jsonpath='{.spec.taint.timeAdded}'
if grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$T/out"; then ok; else bad "rule timeAdded not stamped: $(cat "$T/out")"; fi
gone_or_going() { ! is_bound "$1" || [ -n "$(kc get pod "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; }
wait_for plain-evicted 50 gone_or_going plain
if gone_or_going patient; then bad "patient evicted before its 6 s (after $(( $(date +%s) - start )) s)"; else ok; fi
ev() { kc get events --field-selector "involvedObject.name=$1" -o jsonpath='{range .items[*]}{.reason}|{.message}|{.source.component}{"\n"}{end}' 2>/dev/null | grep -q "DeviceTaintManagerEviction|Marking for deletion|device-taint-eviction"; }
wait_for plain-event 25 ev plain
# the rule's status, as Kubernetes 1.35's controller writes it: patient waits
rcond() { kc get devicetaintrule broken -o jsonpath='{.status.conditions[?(@.type=="EvictionInProgress")].status}|{.status.conditions[?(@.type=="EvictionInProgress")].reason}|{.status.conditions[?(@.type=="EvictionInProgress")].message}' 2>/dev/null; }
pending_cond() { rcond | grep -qxF "True|PodsPendingEviction|1 pod needs to be evicted in 1 namespace. 1 pod evicted since starting the controller."; }
wait_for rule-status-pending 25 pending_cond || rcond
wait_for patient-evicted-later 75 gone_or_going patient
took=$(( $(date +%s) - start ))
if [ "$took" -ge 5 ]; then ok; else bad "patient evicted after $took s, expected about 6"; fi
sleep 1
if gone_or_going stoic; then bad "stoic evicted, though it tolerates the taint for ever"; else ok; fi
done_cond() { rcond | grep -qxF "False|Completed|2 pods evicted since starting the controller."; }
wait_for rule-status-completed 50 done_cond || rcond
kc wait --for=condition=EvictionInProgress=false devicetaintrule/broken --timeout=10s >"$T/out" 2>&1 && ok || bad "kubectl wait for EvictionInProgress=false: $(cat "$T/out")"
# the condition, while the pod is still there (deleted gracefully)
cond() { kc get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="DisruptionTarget")].reason}' 2>/dev/null | grep -q DeletionByDeviceTaintManager; }
if kc get pod patient >/dev/null 2>&1; then
	if cond patient; then ok; else bad "patient has no DisruptionTarget condition"; kc get pod patient -o yaml | sed -n '/conditions/,$p' | head -20; fi
else ok; fi

# the slice's own taint: the rule goes, a new pod takes gpu-0, the slice
# taints gpu-0
kc delete devicetaintrule broken >/dev/null 2>&1
kc delete pod plain patient --wait=false >/dev/null 2>&1
gone() { ! kc get pod "$1" >/dev/null 2>&1; }
wait_for plain-gone 150 gone plain
claim again 0 '[]' >"$T/again.yaml"
kc apply -f "$T/again.yaml" >/dev/null 2>&1
wait_for again-bound 150 is_bound again
k get resourceclaim again -o jsonpath='{.status.allocation.devices.results[0].device}'
has again-on-gpu-0 "$T/out" "gpu-0"
kc patch resourceslice n0-gpus --type=json -p '[{"op":"add","path":"/spec/devices/0/basic/taints","value":[{"key":"example.com/broken","effect":"NoExecute"}]}]' >"$T/out" 2>&1 || { cat "$T/out"; bad "patching the slice"; }
k get resourceslice n0-gpus -o jsonpath='{.spec.devices[0].basic.taints[0].timeAdded}'
if grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$T/out"; then ok; else bad "slice taint timeAdded not stamped: $(cat "$T/out")"; fi
wait_for again-evicted-by-slice-taint 50 gone_or_going again
if gone_or_going stoic; then bad "stoic evicted by the slice taint of another device"; else ok; fi

# a pod due later whose taint then goes: waiter tolerates the slice's taint
# for 600 s and takes gpu-0 once again is gone; the taint is removed, and
# the controller records "Cancelling deletion" (and evicts nothing)
kc delete pod again --wait=false >/dev/null 2>&1
wait_for again-gone 150 gone again
claim waiter 0 '[{key: example.com/broken, operator: Exists, effect: NoExecute, tolerationSeconds: 600}]' >"$T/waiter.yaml"
kc apply -f "$T/waiter.yaml" >/dev/null 2>&1
wait_for waiter-bound 150 is_bound waiter
kc patch resourceslice n0-gpus --type=json -p '[{"op":"remove","path":"/spec/devices/0/basic/taints"}]' >"$T/out" 2>&1 || { cat "$T/out"; bad "untainting the slice"; }
cancelled() { kc get events --field-selector involvedObject.name=waiter -o jsonpath='{range .items[*]}{.reason}|{.message}|{.source.component}{"\n"}{end}' 2>/dev/null | grep -q "DeviceTaintManagerEviction|Cancelling deletion|device-taint-eviction"; }
wait_for waiter-cancelled 50 cancelled
if gone_or_going waiter; then bad "waiter evicted though its taint went"; else ok; fi

done_
