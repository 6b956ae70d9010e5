#!/bin/sh
# mig_live.sh - `muster scheduler --mig-layouts` against `muster up`: the
# scheduler re-plans the MIG layout of an A100 node for its waiting pods
# around the running ones (mu_mig_replan) and writes it on the Node as the
# annotation muster.io/mig-layout.  Node a0 has two GPUs: GPU 0 whole, GPU
# 1 split into two 3g.40gb (NVIDIA's mixed strategy: nvidia.com/gpu 1,
# nvidia.com/mig-3g.40gb 2).  whole takes GPU 0, infer one 3g; small asks
# for a 1g.10gb that does not exist and waits.  The annotation then keeps
# GPU 0 whole (held) and infer's 3g at slice 4 (held), and puts a 1g in
# place of the free 3g: "whole;1g.10gb@3+3g.40gb@4".  When the node then
# advertises that layout (as a MIG manager and the device plugin would
# make it), small binds and the annotation stays as it is.  Without the
# flag nothing is written.
# Usage: sh tests/e2e/mig_live.sh PATH_TO_MUSTER.  Ends with "N passed, N failed".
E2E_NAME=mig_live; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

cat >"$T/cluster.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: a0
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "2",
           nvidia.com/mig.strategy: mixed}
status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "1", nvidia.com/mig-3g.40gb: "2"}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
Y
up_start "$T/cluster.yaml"

# pod NAME RESOURCE: a pod of queue team-a asking for one RESOURCE.
pod() {
	cat <<Y
---
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {muster.io/queue: team-a}}
spec:
  schedulerName: muster
  containers: [{name: main, image: busybox,
                resources: {requests: {cpu: "1", $2: "1"}, limits: {$2: "1"}}}]
Y
}
ann() { kc get node a0 -o jsonpath='{.metadata.annotations.muster\.io/mig-layout}'; }
bound() { [ -n "$(kc get pod "$1" -o jsonpath='{.spec.nodeName}')" ]; }
want='whole;1g.10gb@3+3g.40gb@4'
has_want() { [ "$(ann)" = "$want" ]; }

# without --mig-layouts: the pods bind, small waits, nothing is written
{ pod whole nvidia.com/gpu; pod infer nvidia.com/mig-3g.40gb; pod small nvidia.com/mig-1g.10gb; } >"$T/pods.yaml"
kc apply -f "$T/pods.yaml" >"$T/out" 2>&1 && ok || bad "apply: $(cat "$T/out")"
sched_start plain
wait_for whole-bound 150 bound whole
wait_for infer-bound 150 bound infer
sleep 2
if bound small; then bad "small bound with no 1g.10gb on the node"; else ok; fi
if [ -z "$(ann)" ]; then ok; else bad "annotation written without --mig-layouts: $(ann)"; fi
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""

# with it: the layout around the running pods
sched_start mig --mig-layouts
wait_for annotation 150 has_want
has_want && ok || bad "annotation '$(ann)', expected '$want'"
has log "$T/sched.log" "mig: node a0: layout $want (was as advertised)"

# the MIG manager applies it: the node advertises one 1g.10gb and one 3g.40gb
kc patch node a0 --subresource=status --type=merge \
	-p '{"status":{"allocatable":{"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1g.10gb":"1"}}}' \
	>"$T/out" 2>&1 && ok || bad "patch node status: $(cat "$T/out")"
wait_for small-bound 150 bound small
sleep 2
has_want && ok || bad "annotation changed to '$(ann)' once applied"
n=$(grep -c "mig: node a0" "$T/sched.log")
[ "$n" -eq 1 ] && ok || bad "the layout was written $n times, expected once"
# a clean stop: no sanitizer report (leaks show at exit)
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
hasnt sanitizers "$T/sched.log" "Sanitizer"

done_
