#!/bin/sh
# admitted_copy.sh - a Job admitted elsewhere (a hub's copy: created
# unsuspended and annotated muster.io/admitted, as `muster dispatch` creates
# it) on `muster up` with `muster scheduler`: its pods, which may arrive
# before the scheduler's next cycle placed the Job, are bound without
# being told first that they wait "for a slot of its Job" (a PodScheduled
# False condition and a FailedScheduling Event: kube-scheduler writes them
# only after an attempt failed); a copy that fits no
# node has its pod say the engine's reason, not "waiting for a slot of its
# Job"; a copy's pod is bound when the scheduler sees it, between its
# cycles, once a cycle planned the Job's slots.
# Usage: sh tests/e2e/admitted_copy.sh PATH_TO_MUSTER.  Ends with
# "e2e admitted_copy: N passed, N failed".  Every wait is a bounded loop
# and every process started here is killed on exit.
E2E_NAME=admitted_copy; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 4
  namePrefix: gpu-
  gpuModel: A100
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {deserved: 64}}}
YAML
up_start "$T/cluster.yaml"
"$M" scheduler --kubeconfig "$T/data/kubeconfig" --no-leader-elect --min-runtime 0 \
	>"$T/s.out" 2>"$T/s.log" &
SPID=$!
# job NAME GPUS: a copy as the dispatcher creates it
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a, app: copy}\n  annotations: {muster.io/admitted: "true"}\nspec:\n  template:\n    metadata: {labels: {app: copy}}\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n---\n' "$1" "$2"
}
i=0
while [ "$i" -lt 24 ]; do job "c-$i" 1; i=$((i + 1)); done >"$T/jobs.yaml"
# the scheduler has listed the nodes before the copies arrive
wait_for scheduler-ready 150 grep -q "every resource listed" "$T/s.log"
expect create-copies 0 k create -f "$T/jobs.yaml"
all_bound() {
	k get pods -l app=copy -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'
	[ "$(grep -c . "$T/out")" -eq 24 ]
}
wait_for copies-bound 300 all_bound
sleep 1 # the scheduler's writes after its binds
k get events -o jsonpath='{range .items[*]}{.reason} {.message}{"\n"}{end}'
cp "$T/out" "$T/events"
# (a pod seen before its Job waits silently since round 16, as a pod a
# PreEnqueue plugin holds back: that race is the scheduler's watches')
hasnt no-slot-wait "$T/events" "waiting for a slot"
k get pods -l app=copy -o jsonpath='{range .items[*]}{range .status.conditions[?(@.type=="PodScheduled")]}{.status} {.message}{end}{"\n"}{end}'
hasnt no-slot-condition "$T/out" "waiting for a slot"
[ "$(grep -c "^Scheduled " "$T/events")" -eq 24 ] && ok || bad "scheduled-events: $(grep -c "^Scheduled " "$T/events") of 24"

# a copy that fits no node (16 GPUs in one pod, nodes of 8): its pod says why
job big 16 | sed 's/app: copy/app: big/g' >"$T/big.yaml"
expect create-big 0 k create -f "$T/big.yaml"
big_says() {
	k get pods -l app=big -o jsonpath='{range .items[*].status.conditions[?(@.type=="PodScheduled")]}{.status} {.reason}: {.message}{end}'
	grep -q "^False Unschedulable: " "$T/out"
}
wait_for big-unschedulable 150 big_says
cp "$T/out" "$T/big"
hasnt big-not-slot "$T/big" "waiting for a slot"
has big-engine-reason "$T/big" "nvidia.com/gpu"
k get pods -l app=big -o jsonpath='{.items[0].spec.nodeName}'
[ ! -s "$T/out" ] && ok || bad "big-unbound: bound to $(cat "$T/out")"
# a copy's pod is bound when it is seen, not at the scheduler's next
# cycle: with cycles at most every 4 s (--cycle-ms 4000), a running copy's
# pod deleted three times is replaced by its Job controller (a second
# later, its batch period), and the new pod takes the slot the old one
# freed within 1 s of its creation each time, on a pods watch (before the
# between-cycle sync it waited for the next cycle, up to 4 s;
# kube-scheduler takes a pod at once)
k delete job big --wait=false
kill "$SPID"; wait "$SPID" 2>/dev/null
"$M" scheduler --kubeconfig "$T/data/kubeconfig" --no-leader-elect --min-runtime 0 --cycle-ms 4000 \
	>"$T/s2.out" 2>"$T/s2.log" &
SPID=$!
wait_for scheduler2-ready 150 grep -q "every resource listed" "$T/s2.log"
job fast 1 | sed 's/app: copy/app: fast/g' >"$T/fast.yaml"
expect create-fast 0 k create -f "$T/fast.yaml"
fast_bound() {
	k get pods -l app=fast -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}'
	grep -q . "$T/out"
}
wait_for fast-bound 150 fast_bound
# the pods' changes as they come, each stamped with the time it came (ms)
"$KC" --kubeconfig "$T/data/kubeconfig" get pods -l app=fast -w --output-watch-events \
	-o jsonpath='{.type} {.object.metadata.name} {.object.spec.nodeName} {.object.metadata.deletionTimestamp}{"\n"}' |
	while read -r l; do echo "$(($(date +%s%N) / 1000000)) $l"; done >"$T/fastw" 2>/dev/null &
WPID=$!
SPID="$SPID $WPID"
sleep 2
for n in 1 2 3; do
	k get pods -l app=fast -o jsonpath='{.items[0].metadata.name}'
	old=$(cat "$T/out")
	n0=$(grep -c . "$T/fastw")
	expect "delete-fast-$n" 0 k delete pod "$old" --wait=false
	sleep 4.5 # a cycle (every 4 s) has run since, bound or not
	# from the replacement's first change (its creation: the Job controller
	# makes it about a second after the deletion, its batch period) to its
	# first change with a node
	td=$(awk -v o="$old" -v n0="$n0" 'NR > n0 && $3 != o {print $1; exit}' "$T/fastw")
	tb=$(awk -v o="$old" -v n0="$n0" 'NR > n0 && $3 != o && NF >= 4 {print $1; exit}' "$T/fastw")
	[ -n "$td" ] && [ -n "$tb" ] && [ $((tb - td)) -lt 1000 ] && ok ||
		bad "fast-rebound-$n: the replacement of $old bound $((${tb:-0} - ${td:-0})) ms after it was created (cycles every 4 s)"
done
done_
