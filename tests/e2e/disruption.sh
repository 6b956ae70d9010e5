#!/bin/sh
# disruption.sh - PodDisruptionBudgets (policy/v1) and the Eviction API on
# `muster up`: an eviction that would leave fewer healthy pods than a budget
# wants gets 429 with kube-apiserver's message and DisruptionBudget cause,
# one that keeps the budget goes through, a pod under two budgets gets 500,
# a pod that is not healthy may go while the budget holds, percentages round
# up, and a budget with both minAvailable and maxUnavailable is invalid.
# Usage: sh tests/e2e/disruption.sh PATH_TO_MUSTER.  Ends with
# "e2e disruption: N passed, N failed".
E2E_NAME=disruption; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""
on_exit() { [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
up_start "$ROOT/examples/cluster-small.yaml"

for i in 1 2 3 4; do
	cat >"$T/p$i.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: web-$i, labels: {app: web}}
spec:
  schedulerName: nobody
  containers: [{name: c, image: x}]
EOF
	expect "create web-$i" 0 k apply -f "$T/p$i.yaml"
done
# three of them run (bound: the simulated kubelet starts them), web-4 stays Pending
for i in 1 2 3; do
	api -s -o /dev/null -X POST -H 'Content-Type: application/json' \
		-d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web-'$i'"},"target":{"kind":"Node","name":"a100-0"}}' \
		"$S/api/v1/namespaces/default/pods/web-$i/binding"
done
running() { k get pods -l app=web --field-selector status.phase=Running -o name && [ "$(wc -l <"$T/out")" -eq 3 ]; }
wait_for "three running" 100 running
cat >"$T/pdb.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
EOF
expect "create the budget" 0 k apply -f "$T/pdb.yaml"
expect "get it" 0 k get pdb
has "columns" "$T/out" "web    2               <none>"
evict() {
	api -s -o "$T/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-d '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"'$1'","namespace":"default"}}' \
		"$S/api/v1/namespaces/default/pods/$1/eviction" >"$T/code"
}
evict web-1
has "3 healthy, 2 wanted: evicted" "$T/code" "201"
gone() { ! k get pod web-1; }
wait_for "web-1 gone" 100 gone
evict web-2
has "2 healthy, 2 wanted: 429" "$T/code" "429"
has "429 message" "$T/out" "Cannot evict pod as it would violate the pod's disruption budget."
has "429 cause" "$T/out" '"reason":"DisruptionBudget","message":"The disruption budget web needs 2 healthy pods and has 2 currently"'
expect "web-2 still there" 0 k get pod web-2
evict web-4
has "a pending pod may go while the budget holds" "$T/code" "201"

cat >"$T/pdb2.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pct}
spec:
  maxUnavailable: "50%"
  selector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
EOF
expect "a second budget" 0 k apply -f "$T/pdb2.yaml"
evict web-3
has "two budgets: 500" "$T/code" "500"
has "two budgets message" "$T/out" "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
expect "drop the first" 0 k delete pdb web
evict web-3
has "50% of 2 rounds up to 1: evicted" "$T/code" "201"
evict web-2
has "50% of 1 rounds up to 1 too: evicted" "$T/code" "201"

cat >"$T/bad.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bad}
spec: {minAvailable: 1, maxUnavailable: 1, selector: {}}
EOF
expect "both set" 1 k apply -f "$T/bad.yaml"
has "422" "$T/out" "minAvailable and maxUnavailable cannot be both set"
done_
