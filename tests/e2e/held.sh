#!/bin/sh
# held.sh - the room held for an admitted workload survives a restart of
# `muster scheduler` (issue 15), with the real kubectl, the real JobSet
# CRD of ../shared/data/k8s/workloads and `muster up` (four 8-GPU nodes):
#   - a JobSet created suspended, naming a queue, of two 8-GPU pods is
#     admitted: muster lifts spec.suspend and records the places it holds
#     in the annotation muster.io/held-places;
#   - the scheduler is killed (kill -9) before the JobSet controller (this
#     test) makes the pods, and started again;
#   - three bare 8-GPU pods arrive: two nodes are free, so one of them must
#     wait, since the JobSet's two places are held again from the
#     annotation (without it, all three would bind and the JobSet's pods
#     would not);
#   - the JobSet's pods then bind on the held nodes, and the annotation is
#     removed;
#   - its user suspends the JobSet again: muster drops the admission, its
#     room goes back (a waiting bare pod takes one of its nodes), it waits
#     suspended while it does not fit, and once a node frees it is admitted
#     again by the same scheduler, without a restart;
#   - its user deactivates it (annotation muster.io/active: "false", as
#     Kueue's Workload spec.active: false): muster suspends it, evicts its
#     pods and records the Evicted condition of reason InactiveWorkload;
#     it stays suspended while room is free, and is admitted again once the
#     annotation goes.
# Without ../shared/data it prints that it skipped.
# Usage: sh tests/e2e/held.sh PATH_TO_MUSTER.  Ends with
# "e2e held: N passed, N failed".
E2E_NAME=held; . "$(dirname "$0")/lib/common.sh"
W="$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/k8s/workloads"
if [ ! -d "$W/crds" ]; then
	echo "skipped: ../shared/data/k8s/workloads not found (no JobSet CRD)"
	done_
fi
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
is_bound() { [ -n "$(node_of "$1")" ]; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 4
  namePrefix: gpu-
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
YAML
up_start "$T/cluster.yaml"
kc create -f "$W/crds/jobset.x-k8s.io_jobsets.yaml" >"$T/out" 2>&1 && ok || bad "JobSet CRD: $(head -c 300 "$T/out")"
kc wait --for=condition=Established crd --all --timeout=60s >/dev/null 2>&1 && ok || bad "CRD not established"
sn=0
sched() {
	sn=$((sn + 1))
	"$M" scheduler --kubeconfig "$T/data/kubeconfig" --id "h$sn" --lease-namespace default \
		--metrics 127.0.0.1:0 --lease-duration 6 --retry-period 1 >"$T/sched$sn.out" 2>"$T/sched$sn.log" &
	SPID=$!
}
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched$sn.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
sched
wait_for scheduler-ready 150 ready

cat >"$T/hjs.yaml" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: hjs
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  suspend: true
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            schedulerName: muster
            containers: [{name: w, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
YAML
uid=$(kc create -f "$T/hjs.yaml" -o jsonpath='{.metadata.uid}') || bad "suspended JobSet not created"
admitted() { [ "$(kc get jobset hjs -o jsonpath='{.spec.suspend}')" = false ]; }
wait_for jobset-admitted 100 admitted
places() { kc get jobset hjs -o jsonpath='{.metadata.annotations.muster\.io/held-places}'; }
recorded() { places | grep -q '"node"'; }
wait_for places-recorded 50 recorded
held=$(places | grep -o '"node":"[^"]*"' | sed 's/"node":"//; s/"//' | sort | tr '\n' ' ')
echo "held: $held"

# --- kill -9, then start again --------------------------------------------
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=""
sched
wait_for scheduler-ready-again 150 ready
heldagain() { grep -q "2 places held again after the restart" "$T/sched$sn.log"; }
wait_for places-held-again 50 heldagain

# --- three bare 8-GPU pods: only two nodes are free -------------------------
for i in 0 1 2; do
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: bare-%s, labels: {app: bare}}\n' "$i"
	printf 'spec:\n  schedulerName: muster\n  containers: [{name: m, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]\n---\n'
done >"$T/bare.yaml"
kc create -f "$T/bare.yaml" >/dev/null
nbare() { kc get pods -l app=bare -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }
two() { [ "$(nbare)" -ge 2 ]; }
wait_for two-bare-bound 100 two
sleep 3
if [ "$(nbare)" -eq 2 ]; then ok; else bad "$(nbare) bare pods bound: the held room was taken"; fi
for b in 0 1 2; do
	x=$(node_of "bare-$b")
	case " $held" in *" $x "*) [ -n "$x" ] && bad "bare-$b bound on $x, a held node";; esac
done

# --- the JobSet controller (this test) makes the pods: they take the places --
# (owned by the JobSet itself: there is no Job hjs-workers-0 here, and the
# garbage collector deletes pods whose owner does not exist, as kube's does)
for i in 0 1; do
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: hjs-workers-0-%s\n' "$i"
	printf '  labels: {jobset.sigs.k8s.io/jobset-name: hjs, jobset.sigs.k8s.io/replicatedjob-name: workers}\n'
	printf '  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: hjs, uid: %s, controller: true}]\n' "$uid"
	printf 'spec:\n  schedulerName: muster\n  containers: [{name: w, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]\n---\n'
done >"$T/pods.yaml"
kc create -f "$T/pods.yaml" >/dev/null
wait_for jobset-pod-0-bound 100 is_bound hjs-workers-0-0
wait_for jobset-pod-1-bound 100 is_bound hjs-workers-0-1
got=$( (node_of hjs-workers-0-0; echo; node_of hjs-workers-0-1; echo) | grep . | sort | tr '\n' ' ')
if [ "$got" = "$held" ]; then ok; else bad "the JobSet's pods on $got, held $held"; fi
cleared() { [ -z "$(places)" ]; }
wait_for places-annotation-removed 50 cleared

# --- its user suspends it again: queued again at once, no restart ----------
# (bare-2 waits; two nodes hold bare pods, two the JobSet's)
kc patch jobset hjs --type merge -p '{"spec":{"suspend":true}}' >/dev/null
requeued() { grep -q "JobSet:default/hjs suspended by its user after muster admitted it" "$T/sched$sn.log"; }
wait_for user-suspension-seen 50 requeued
# the JobSet controller (this test) removes its pods, as it does when suspended
kc delete pod hjs-workers-0-0 hjs-workers-0-1 --wait=false >/dev/null
gone() { ! kc get pod "$1" >/dev/null 2>&1; }
wait_for jobset-pods-gone 75 gone hjs-workers-0-1
# its room went back: the waiting bare pod takes one of its nodes, and the
# JobSet (two nodes) waits, suspended, with the reason
wait_for bare-2-takes-the-released-room 100 is_bound bare-2
susp() { [ "$(kc get jobset hjs -o jsonpath='{.spec.suspend}')" = true ]; }
sleep 2
if susp; then ok; else bad "the JobSet was unsuspended while only one node is free"; fi
kc get events --field-selector involvedObject.name=hjs >"$T/ev" 2>&1
has requeued-event "$T/ev" "suspended by its user after muster admitted it"
# room for it again: admitted again by this same scheduler, no restart
kc delete pod bare-0 --wait=false >/dev/null
wait_for jobset-admitted-again-without-restart 100 admitted
if [ "$(grep -c "metrics on" "$T/sched$sn.log")" = 1 ] && kill -0 "$SPID" 2>/dev/null; then ok; else
	bad "the scheduler restarted"; fi

# --- deactivated, as Kueue's Workload spec.active: false -------------------
# the JobSet controller (this test) makes its pods again; they bind
kc create -f "$T/pods.yaml" >/dev/null
wait_for jobset-pods-bound-again 100 is_bound hjs-workers-0-1
kc annotate jobset hjs muster.io/active=false >/dev/null
wait_for inactive-jobset-suspended 100 susp
kc get jobset hjs -o jsonpath='{.metadata.annotations.muster\.io/evicted}' >"$T/evc" 2>&1
has inactive-evicted-condition "$T/evc" '"type":"Evicted","status":"True","reason":"InactiveWorkload"'
has inactive-evicted-message "$T/evc" '"message":"suspended by muster: The workload is deactivated'
leaving() { ! kc get pod "$1" >/dev/null 2>&1 || [ -n "$(kc get pod "$1" -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
wait_for inactive-jobset-pods-evicted 100 leaving hjs-workers-0-0
kc delete pod hjs-workers-0-0 hjs-workers-0-1 --wait=false >/dev/null 2>&1
wait_for inactive-jobset-pods-gone 75 gone hjs-workers-0-1
# two nodes are free, but it is inactive: it stays suspended
sleep 3
if susp; then ok; else bad "the inactive JobSet was admitted again"; fi
# active again: queued, and admitted at once (it fits)
kc annotate jobset hjs muster.io/active- >/dev/null
wait_for reactivated-jobset-admitted 100 admitted
kc get events --field-selector involvedObject.name=hjs >"$T/ev" 2>&1
has reactivated-event "$T/ev" "The workload was reactivated"
done_
