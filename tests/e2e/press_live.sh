#!/bin/sh
# press_live.sh - `muster scheduler --policy muster` scores with the demand
# of the pods pending and running on the cluster as its mix (the twenty-first
# round), so that muster's press_over works in the live scheduler's plain
# policy: against `muster up` with two 8-GPU nodes, a-0 (model A) and b-0
# (model B),
#   - six one-GPU pods tied to model A (annotation muster.io/gpu-models) bind
#     on a-0;
#   - a one-GPU pod that may use any model then binds on b-0: model A carries
#     6 of the 7 GPUs asked, a pressure of 6000/8 x 16/7000 = 1.71 above
#     press_over (1.5), so a pod free to go anywhere keeps off it (without a
#     mix, as before this round, muster packs it on a-0, the busier node);
#   - after a restart the scheduler builds the demand again from the pods it
#     lists: a second free pod binds on b-0 too;
#   - after the A pods are deleted, the demand has no pressure: a third free
#     pod binds as muster places without one (a-0, the lower node).
# Usage: sh tests/e2e/press_live.sh PATH_TO_MUSTER.  Ends with
# "e2e press_live: N passed, N failed".
E2E_NAME=press_live; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
cat >"$T/cluster.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: a-0, labels: {nvidia.com/gpu.product: A}}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b-0, labels: {nvidia.com/gpu.product: B}}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
Y
up_start "$T/cluster.yaml"
# pod NAME [MODELS]: a one-GPU pod of queue team-a, tied to MODELS if given.
pod() {
	an=""
	[ $# -gt 1 ] && an="annotations: {muster.io/gpu-models: \"$2\"}, "
	cat <<Y
---
apiVersion: v1
kind: Pod
metadata: {name: $1, ${an}labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  containers: [{name: main, image: busybox,
                resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]
Y
}
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound() { [ -n "$(node_of "$1")" ]; }
on_node() { # CHECK POD NODE
	n=$(node_of "$2")
	[ "$n" = "$3" ] && ok || bad "$1: pod $2 on '$n', expected $3"
}

sched_start s1 --policy muster -v
for i in 1 2 3 4 5 6; do pod "a-$i" A; done >"$T/a.yaml"
kc apply -f "$T/a.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
wait_for a-bound 300 bound a-6
for i in 1 2 3 4 5 6; do on_node "a-$i-on-a" "a-$i" a-0; done
pod free-1 >"$T/f1.yaml"
kc apply -f "$T/f1.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
wait_for free-1-bound 300 bound free-1
on_node pressure-keeps-off-a free-1 b-0
has mix-logged "$T/sched.log" "muster: the mix is now 2 pod shapes (7 pods pending and running)"

# a restart: the demand is built again from the pods listed
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
hasnt sanitizers-1 "$T/sched.log" "Sanitizer"
sched_start s2 --policy muster -v
pod free-2 >"$T/f2.yaml"
kc apply -f "$T/f2.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
wait_for free-2-bound 300 bound free-2
on_node restart-keeps-the-pressure free-2 b-0
has mix-relisted "$T/sched.log" "muster: the mix is now 2 pod shapes (8 pods pending and running)"

# the A pods gone: no pressure, muster places as without a mix
kc delete pod a-1 a-2 a-3 a-4 a-5 a-6 --wait=false >"$T/out" 2>&1 && ok || bad "delete: $(head -c 300 "$T/out")"
gone() { [ -z "$(kc get pods -o name 2>/dev/null | grep 'pod/a-')" ]; }
wait_for a-gone 300 gone
mix_two() { grep -qF "muster: the mix is now 1 pod shapes (2 pods pending and running)" "$T/sched.log"; }
wait_for mix-without-a 300 mix_two
pod free-3 >"$T/f3.yaml"
kc apply -f "$T/f3.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(head -c 300 "$T/out")"
wait_for free-3-bound 300 bound free-3
on_node no-pressure-places-as-before free-3 a-0
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
hasnt sanitizers-2 "$T/sched.log" "Sanitizer"
done_
