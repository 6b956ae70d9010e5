#!/bin/sh
# pools.sh - end-to-end test of node pools (issue 23) through `muster up`
# and `muster scheduler`, driven by the real kubectl:
#   - `muster up` serves NodePool (muster.io/v1alpha1), made from the
#     cluster file's selector pools, and refuses a bad one with a field
#     error (no selector; a selector operator that is not a label selector's);
#   - two pools (h100: 1 node, a100: 2 nodes, 8 GPUs each) and a queue with
#     per-pool quotas (8 H100s, 16 A100s);
#   - pods that name the pools h100 then a100 (muster.io/pools): the first
#     lands on the H100 node, the second falls back to an A100 node;
#   - a pod that fits no pool gives each pool's reason in its condition;
#   - a PriorityClass's muster.io/max-wait and muster.io/escalation apply
#     to the pods that name it (the scheduler watches PriorityClasses);
#   - the Queue's status shows per-pool usage and fair share, and the web
#     UI's queues API each pool's GPUs and the queue's use in it.
# Usage: sh tests/e2e/pools.sh PATH_TO_MUSTER.  Ends with
# "e2e pools: N passed, N failed".  Every wait is a bounded loop and every
# process started here is killed on exit.
E2E_NAME=pools; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
is_bound() { [ -n "$(node_of "$1")" ]; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  count: 1
  namePrefix: h-
  gpuModel: H100
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
  selector: {matchLabels: {nvidia.com/gpu.product: H100}}
---
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: a100-nodes}
spec:
  count: 2
  namePrefix: a-
  gpuModel: A100
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec:
  pools:
    h100: {gpu: {deserved: 8}}
    a100: {gpu: {deserved: 16}}
YAML
up_start "$T/cluster.yaml"

# The h100 pool came from the file; a100 is made over the API, as a user
# would (its nodes come from a generator without a selector).
k get nodepools; has nodepool-served "$T/out" "h100"
has nodepool-selector "$T/out" "nvidia.com/gpu.product=H100"
cat >"$T/a100.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {selector: {matchLabels: {nvidia.com/gpu.product: A100}}}
YAML
k apply -f "$T/a100.yaml"; has nodepool-create "$T/out" "nodepool.muster.io/a100 created"
printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: bad}\nspec: {}\n' >"$T/bad.yaml"
k apply -f "$T/bad.yaml"; has nodepool-no-selector "$T/out" "spec.selector"
printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: bad}\nspec: {selector: {matchExpressions: [{key: a, operator: Gt, values: ["1"]}]}}\n' >"$T/bad2.yaml"
k apply -f "$T/bad2.yaml"; has nodepool-bad-operator "$T/out" "operator"

# A PriorityClass with a class of service (read by the scheduler's watch).
cat >"$T/pc.yaml" <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: short-wait
  annotations: {muster.io/max-wait: 2s, muster.io/escalation: preempt}
value: 100
YAML
k apply -f "$T/pc.yaml"; has priorityclass-create "$T/out" "priorityclass.scheduling.k8s.io/short-wait created"

sched_start p --min-runtime 0 --lease-duration 4 --retry-period 1
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
wait_for scheduler-ready 100 ready

# pod NAME: 8 GPUs in team-a, pools h100 then a100.
pod8() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\n' "$1"
	printf '  annotations: {muster.io/pools: "h100, a100"}\n'
	printf 'spec:\n  schedulerName: muster\n  containers:\n'
	printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
}
pod8 first >"$T/first.yaml"; kc apply -f "$T/first.yaml" >/dev/null
wait_for first-bound 150 is_bound first
[ "$(node_of first)" = h-0 ] && ok || bad "first: on $(node_of first), expected h-0 (its preferred pool)"
pod8 second >"$T/second.yaml"; kc apply -f "$T/second.yaml" >/dev/null
wait_for second-bound 150 is_bound second
case "$(node_of second)" in
a-*) ok ;;
*) bad "second: on $(node_of second), expected an a100 node (the fallback)" ;;
esac

# A pod that fits no pool says why, pool by pool, in its condition.
pod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\n' "$1"
	printf '  annotations: {muster.io/pools: "h100, a100"}\n'
	printf 'spec:\n  schedulerName: muster\n  containers:\n'
	printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "%s"}}}\n' "$2"
}
pod huge 16 >"$T/huge.yaml"; kc apply -f "$T/huge.yaml" >/dev/null
why() { kc get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' 2>/dev/null | grep -q "pool a100:"; }
wait_for huge-says-why 100 why
kc get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' >"$T/out" 2>&1
has huge-pool-h100 "$T/out" "pool h100: 0/3 nodes are available"

# Queue status: per-pool usage and fair share.
qstat() { kc get queue team-a -o jsonpath='{.status.pools.a100.usage.nvidia\.com/gpu}' 2>/dev/null | grep -qx 8; }
wait_for queue-pool-status 100 qstat
k get queue team-a -o jsonpath='{.status.pools}'
has queue-pool-h100 "$T/out" '"h100":{'
has queue-pool-fair "$T/out" '"fairShare":{"nvidia.com/gpu":"8"}'

# The web UI's queues API (its token is in the log line that gives its
# address) has each pool's GPUs and team-a's use in it.
U=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1)
TOKN=$(sed -n 's/.*ui on .*#token=\([0-9a-f]*\).*/\1/p' "$T/sched.log" | tail -n 1)
uipools() {
	curl -s -H "Authorization: Bearer $TOKN" "$U/ui/api/queues" >"$T/uiq.json" 2>&1
	python3 - "$T/uiq.json" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["pools"]
tot = [r for r in rows if r["pool"] == "a100" and r.get("queue") is None]
team = [r for r in rows if r["pool"] == "a100" and r.get("queue") == "team-a"]
assert tot and tot[0]["gpus"] == 16 and tot[0]["nodes"] == 2 and tot[0]["used"] == 8
assert team and team[0]["used"] == 8 and team[0]["deserved"] == 16
PY
}
wait_for ui-pools 100 uipools

# A pod of the class short-wait that fits nowhere: explain gives the
# class's maximum wait and rule, then, after 2 s, its escalation.
pod waiter 16 | sed 's/^spec:/spec:\n  priorityClassName: short-wait/' >"$T/waiter.yaml"
kc apply -f "$T/waiter.yaml" >/dev/null
svc() { curl -s -H "Authorization: Bearer $TOKN" "$U/explain?pod=default/waiter" >"$T/ex.json" 2>&1; grep -q "$1" "$T/ex.json"; }
wait_for pc-max-wait 100 svc 'maximum wait 2s: escalated if it waits longer (rule preempt)\|escalated (preempt)'
wait_for pc-escalated 100 svc 'escalated (preempt): waited more than its maximum wait of 2s'
done_
