#!/bin/sh
# pdb.sh - PodDisruptionBudgets end to end (issue 15), with the real
# kubectl against `muster up`:
#   - muster up serves policy/v1 PodDisruptionBudgets, keeps their status as
#     kube-controller-manager's disruption controller does, and its
#     Eviction API meets them as kube-apiserver's does: 429 when
#     status.disruptionsAllowed is 0, else the allowance is taken;
#   - `muster scheduler` reads the budgets and chooses a victim its budget
#     allows before one its budget forbids: of two equal victims, the one
#     the engine would pick otherwise (the younger) is protected, and the
#     other goes.
# Usage: sh tests/e2e/pdb.sh PATH_TO_MUSTER.  Ends with
# "e2e pdb: N passed, N failed".  Every wait is a bounded loop and every
# process started here is killed on exit.
E2E_NAME=pdb; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
is_bound() { [ -n "$(node_of "$1")" ]; }
leaving() { ! kc get pod "$1" >/dev/null 2>&1 || [ -n "$(kc get pod "$1" -o jsonpath='{.metadata.deletionTimestamp}')" ]; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 2
  namePrefix: gpu-
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
YAML
up_start "$T/cluster.yaml"

# pod NAME PRIORITY: an 8-GPU pod of ours in team-a, labelled app=NAME.
pod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a, app: %s}\n' "$1" "$1"
	printf '  annotations: {muster.io/priority: "%s"}\n' "$2"
	printf 'spec:\n  schedulerName: muster\n  containers:\n'
	printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
}
# pdb NAME APP ALLOWED: a budget over the one running pod app=APP that
# allows ALLOWED (0 or 1) disruptions (minAvailable 1 - ALLOWED); waits
# until muster up's disruption controller has written that status.
pdb() {
	printf 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: %s}\n' "$1" >"$T/$1.yaml"
	printf 'spec:\n  minAvailable: %s\n  selector: {matchLabels: {app: %s}}\n' $((1 - $3)) "$2" >>"$T/$1.yaml"
	kc apply -f "$T/$1.yaml" >/dev/null || return 1
	i=0
	while [ "$i" -lt 50 ]; do
		[ "$(kc get pdb "$1" -o jsonpath='{.status.observedGeneration}/{.status.disruptionsAllowed}')" = "$(kc get pdb "$1" -o jsonpath='{.metadata.generation}')/$3" ] && return 0
		sleep 0.2; i=$((i + 1))
	done
	return 1
}
allowed() { kc get pdb "$1" -o jsonpath='{.status.disruptionsAllowed}'; }

# --- muster up: the Eviction API meets budgets ------------------------------
pod x 1 | sed 's/^spec:$/spec:\n  nodeName: gpu-0/' >"$T/x.yaml"
kc apply -f "$T/x.yaml" >/dev/null
pdb pdb-x x 0 && ok || bad "could not create pdb-x and write its status"
kc get pdb >"$T/out" 2>&1
has get-pdb-columns "$T/out" "ALLOWED DISRUPTIONS"
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"x"}}\n' >"$T/ev.json"
kc create --raw /api/v1/namespaces/default/pods/x/eviction -f "$T/ev.json" >"$T/out" 2>&1
has eviction-refused "$T/out" "disruption budget"
if kc get pod x >/dev/null 2>&1 && [ -z "$(kc get pod x -o jsonpath='{.metadata.deletionTimestamp}')" ]; then ok; else bad "a refused eviction deleted the pod"; fi
pdb pdb-x x 1 && ok || bad "the controller did not allow a disruption once minAvailable was 0"
kc create --raw /api/v1/namespaces/default/pods/x/eviction -f "$T/ev.json" >"$T/out" 2>&1 && ok || bad "eviction within budget refused: $(cat "$T/out")"
if [ "$(allowed pdb-x)" = 0 ]; then ok; else bad "the eviction did not take the allowance: $(allowed pdb-x)"; fi
printf 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: bad}\nspec: {minAvailable: 1, maxUnavailable: 1}\n' >"$T/bad.yaml"
kc apply -f "$T/bad.yaml" >"$T/out" 2>&1 && bad "a PDB with both minAvailable and maxUnavailable was accepted" || ok
has bad-pdb-says-why "$T/out" "cannot be both set"
kc delete pdb pdb-x >/dev/null 2>&1
xgone() { ! kc get pod x >/dev/null 2>&1; }
wait_for evicted-pod-gone 75 xgone

# --- the scheduler: the victim within budget goes first --------------------
sched_start p --min-runtime 0 --lease-duration 4 --retry-period 1
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
wait_for scheduler-ready 100 ready
# old first, young a second later: without budgets the younger would go.
pod old 1 >"$T/old.yaml"; kc apply -f "$T/old.yaml" >/dev/null
wait_for old-bound 50 is_bound old
sleep 1.2
pod young 1 >"$T/young.yaml"; kc apply -f "$T/young.yaml" >/dev/null
wait_for young-bound 50 is_bound young
pdb pdb-young young 0 && pdb pdb-old old 1 && ok || bad "could not create the budgets"
sleep 1.5 # the scheduler sees them
oldnode=$(node_of old)
pod hi 100 >"$T/hi.yaml"; kc apply -f "$T/hi.yaml" >/dev/null
wait_for victim-within-budget-leaves 75 leaving old
if leaving young; then bad "the victim its budget forbids was evicted"; else ok; fi
wait_for claimant-bound 100 is_bound hi
if [ "$(node_of hi)" = "$oldnode" ]; then ok; else bad "hi on $(node_of hi), expected $oldnode"; fi
if [ "$(allowed pdb-old)" = 0 ]; then ok; else bad "the scheduler's eviction did not take pdb-old's allowance"; fi
done_
