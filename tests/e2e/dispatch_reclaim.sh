#!/bin/sh
# dispatch_reclaim.sh - `muster dispatch --reclaim` (docs/dispatch.md,
# "Hub queues: the engine's whole semantics", round 12): a hub queue below
# its deserved quota takes back room from another queue's jobs above
# theirs, across the fleet, through the exactly-once withdrawal.  A hub
# `muster up` and one push worker, big (1 x 8 GPUs, its own `muster
# scheduler`); hub Queues team-a and team-b deserve 4 GPUs each; the
# dispatcher runs with --reclaim --min-runtime 3s as the account of
# deploy/dispatch-rbac.yaml.  Checked:
#   - team-a's eight 1-GPU Jobs (10 min each) all go to big and are bound;
#   - team-b's Job b (one pod, 2 GPUs, 5 s) fits nowhere at first; exactly
#     two of team-a's Jobs are withdrawn for it: each gets a Warning Event
#     Preempted and the condition Preempted (reason InCohortReclamation:
#     team-b stays within its deserved quota), its copy on big is deleted
#     and only then is it back on the hub (the log says "back to the hub
#     (Preempted)"; no copy of it is on big meanwhile);
#   - b then goes to big and succeeds; the two victims are sent again
#     (generation 2) and bound, one copy each on big;
#   - the other six of team-a's Jobs never left (generation 1), and no
#     third job was withdrawn;
#   - a restart in the middle of the withdrawal remembers the claimant
#     (round 13: muster.io/dispatch-preempted-for, written with the
#     withdraw): team-a's copies on big hold a finalizer, so the victims'
#     copies stay (deleting) and they stay Withdrawing; the dispatcher is
#     killed (-9) and started again; the new one goes on with both
#     withdrawals (push: the copy deleted again), counts both victims as
#     leaving for b, and withdraws no third job past the minimum runtime;
#     once the finalizers are gone the victims are back and b goes;
#   - capacity from pods, named extended resources: a pod made on big
#     directly takes 3 of big-0's 4 example.com/fpga; a hub Job asking 2
#     waits NoClusterFits (nothing is withdrawn for it: no victim frees
#     FPGAs); the pod deleted, it goes to big;
#   - the log holds no 403 or sanitizer report.
# Usage: sh tests/e2e/dispatch_reclaim.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-reclaim: N passed, N failed".
E2E_NAME=dispatch-reclaim; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
. "$(dirname "$0")/lib/reclaim.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

pool big 1 | sed 's|nvidia.com/gpu: "8"}|nvidia.com/gpu: "8", example.com/fpga: "4"}|' >"$T/big.yaml"
reclaim_start big
reclaim_wire big push

# --- team-a fills the cluster; team-b's job b takes back two GPUs ------------
# (team-a's copies hold a finalizer: the victims' withdrawal waits for it)
hold_copies() {
	for i in 0 1 2 3 4 5 6 7; do
		w big patch job "a-$i" --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' \
			>/dev/null && ok || bad "finalizer on a-$i's copy"
	done
}
BEFORE_CLAIM=hold_copies
fill_and_claim

# --- a restart in the middle of the withdrawal remembers the claimant ---------
sleep 1
for v in $V; do ann_is job "$v" dispatch-phase Withdrawing && ok || bad "$v: $(ann job "$v" dispatch-phase), not Withdrawing"; done
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
reclaim_dispatcher
linked() { [ "$(grep -c 'leaving for default/b after the restart$' "$T/d.log")" -eq 2 ]; }
wait_for victims-linked-after-restart 150 linked || grep 'after the restart' "$T/d.log"
[ "$(grep -c 'its withdrawal for reclaim goes on after a restart' "$T/d.log")" -eq 2 ] && ok ||
	bad "withdrawals resumed: $(grep -c 'goes on after a restart' "$T/d.log")"
sleep 5 # past the minimum runtime of the adopted jobs: b claims no more
[ "$(preempted | wc -l)" -eq 2 ] && ok || bad "preempted after the restart: $(preempted | tr '\n' ' ')"
for i in 0 1 2 3 4 5 6 7; do
	w big patch job "a-$i" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
done
for v in $V; do
	r=$(hget job "$v" '{.status.conditions[?(@.type=="Preempted")].reason}')
	[ "$r" = InCohortReclamation ] && ok || bad "$v: Preempted reason $r"
	hget job "$v" '{.status.conditions[?(@.type=="Preempted")].message}' | grep -q "to make room for default/b of queue team-b" &&
		ok || bad "$v: message $(hget job "$v" '{.status.conditions[?(@.type=="Preempted")].message}')"
done
ev() { h get events -n default -o jsonpath='{range .items[?(@.reason=="Preempted")]}{.involvedObject.name}{"\n"}{end}' && [ "$(sort -u "$T/out" | wc -l)" -eq 2 ]; }
wait_for preempted-events 50 ev || echo "  events: $(cat "$T/out")"
backs() { for v in $V; do grep -q "job default/$v: back to the hub (Preempted)" "$T/d.log" || return 1; done; }
wait_for victims-back 150 backs
# the copy was gone before the job was back: no copy while it is queued
victims_gone big

# --- b runs, then the victims run again, once each -------------------------------
wait_for b-to-big 150 ann_is job b cluster big || echo "  b: $(ann job b dispatch-reason): $(ann job b dispatch-message)"
wait_for b-succeeded 300 ann_is job b dispatch-phase Succeeded || echo "  b: $(ann job b dispatch-phase)"
for v in $V; do
	wait_for "$v-sent-again" 150 ann_is job "$v" dispatch-generation 2 || echo "  $v: $(ann job "$v" dispatch-generation) $(ann job "$v" dispatch-reason)"
	wait_for "$v-bound-again" 150 bound "$v"
	n=$(w big get jobs -o name | grep -c "^job.batch/$v\$")
	[ "$n" -eq 1 ] && ok || bad "$v: $n copies on big"
	g=$(w big get job "$v" -o 'jsonpath={.metadata.annotations.muster\.io/dispatch-generation}')
	[ "$g" = 2 ] && ok || bad "$v: copy of generation $g on big"
done
# the others were never withdrawn, and no third job was
for i in 0 1 2 3 4 5 6 7; do
	case " $V " in *" a-$i "*) continue ;; esac
	ann_is job "a-$i" dispatch-generation 1 && ok || bad "a-$i: generation $(ann job "a-$i" dispatch-generation)"
done
[ "$(grep -c 'back to the hub (Preempted)' "$T/d.log")" -eq 2 ] && ok ||
	bad "$(grep -c 'back to the hub (Preempted)' "$T/d.log") jobs preempted, not 2"

# --- named extended resources of big's other pods (podcap.c) ----------------------
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: local-f}\nspec:\n  nodeName: big-0\n  containers: [{name: c, image: x, resources: {limits: {example.com/fpga: "3"}}}]\n' >"$T/lf.yaml"
w big create -f "$T/lf.yaml" >/dev/null && ok || bad "pod local-f on big"
sleep 2
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: f\n  labels: {muster.io/queue: team-b}\n  annotations: {muster.io/duration: 5s}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {example.com/fpga: "2"}}}]\n' >"$T/f.yaml"
expect "hub Job f (2 FPGAs)" 0 h create -f "$T/f.yaml"
fw() { ann_is job f dispatch-reason NoClusterFits && ann job f dispatch-message | grep -q "insufficient extended resources"; }
wait_for f-waits-fpga 100 fw || echo "  f: $(ann job f cluster) $(ann job f dispatch-reason): $(ann job f dispatch-message)"
w big delete pod local-f --wait=false >/dev/null && ok || bad "delete local-f"
wait_for f-to-big 150 ann_is job f cluster big || echo "  f: $(ann job f dispatch-reason): $(ann job f dispatch-message)"
[ "$(grep -c 'back to the hub (Preempted)' "$T/d.log")" -eq 2 ] && ok || bad "more preempted for f"

grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" && bad "sanitizer" || ok
hasnt "no 403 for the dispatcher" "$T/d.log" "HTTP 403"
done_
