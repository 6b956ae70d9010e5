#!/bin/sh
# consolidate.sh - consolidation on Kubernetes (issue 15), with the real
# kubectl against `muster up` and `muster scheduler --consolidate`:
#   - a fragmented cluster (three 4-GPU nodes, one 1-GPU pod of a
#     StatefulSet on one node and one bare 1-GPU pod on another) and a gang
#     of two 4-GPU pods that fits only once one of them moves;
#   - muster moves the StatefulSet's pod, never the bare one (even though
#     the bare one is younger, which the victim order would pick first);
#   - this test plays the StatefulSet controller (muster up runs none):
#     once the evicted pod w-1 is gone it scales up (w-2, same owner and
#     template, another ordinal: it must not take the place held for
#     ordinal 1), then makes w-1 again (same name, new UID), which lands on
#     the node muster held for it, and the gang binds on the two nodes
#     cleared for it;
#   - the place is held: a pod that arrives before the replacement and
#     would fit there waits;
#   - the moved pod's eviction event says it was moved;
#   - the place is recorded before the eviction goes: with the fault
#     point MUSTER_FAULT=move-stall the first scheduler records the place
#     on the node and stops short of the eviction; it is killed (kill -9)
#     there: w-1 is still bound, the next start gives the recorded place up
#     ("never evicted") and moves w-1 again (with the eviction sent first,
#     as before, the kill would leave w-1 evicted and its place unrecorded);
#   - the scheduler is killed (kill -9) after the eviction and before the
#     replacement exists: the place is in the node's annotation
#     muster.io/held-places, the next start holds it again (the intruder
#     below still waits), and the annotation goes once the place is taken;
#   - the same with a batch/v1 Job's pod, whose replacement muster up's
#     own Job controller makes (a new name): it lands on the planned node
#     and a second gang binds;
#   - places of ReplicaSets (no index) read back after a restart: the one
#     whose replacement (same owner and requests, made after the move) is
#     bound is given up at once, the one with only an older pod is held.
# Usage: sh tests/e2e/consolidate.sh PATH_TO_MUSTER.  Ends with
# "e2e consolidate: N passed, N failed".  Every wait is a bounded loop and
# every process started here is killed on exit.
E2E_NAME=consolidate; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
is_bound() { [ -n "$(node_of "$1")" ]; }
gone() { ! kc get pod "$1" >/dev/null 2>&1; }
leaving() { gone "$1" || [ -n "$(kc get pod "$1" -o jsonpath='{.metadata.deletionTimestamp}')" ]; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 3
  namePrefix: gpu-
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "4"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
YAML
up_start "$T/cluster.yaml"

# pod NAME GPUS [OWNER_UID]: a pod of ours in team-a; with OWNER_UID it is
# controlled by the StatefulSet w (which this test plays).
pod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n' "$1"
	printf '  labels: {muster.io/queue: team-a, app: %s}\n' "$([ -n "${3:-}" ] && echo w || echo "$1")"
	printf '  annotations: {muster.io/preemptible: "true"}\n'
	[ -n "${3:-}" ] && printf '  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: w, uid: %s, controller: true}]\n' "$3"
	printf 'spec:\n  schedulerName: muster\n  terminationGracePeriodSeconds: 1\n  containers:\n'
	printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "%s", cpu: "1"}}}\n' "$2"
}

sched() {
	sched_start c --min-runtime 0 --lease-duration 15 --retry-period 2 --consolidate --move-hold 60s
}
export MUSTER_FAULT=move-stall # the first scheduler stops between a place's record and the eviction
sched
unset MUSTER_FAULT
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
wait_for scheduler-ready 300 ready # up to 60 s on a loaded machine

# --- fragment: w-1 (StatefulSet) on one node, the younger bare pod on another
# the StatefulSet itself: muster up stores it (no controller), and the
# garbage collector would delete pods whose owner does not exist
cat >"$T/sts.yaml" <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: w}
spec:
  replicas: 1
  serviceName: w
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec: {schedulerName: muster, containers: [{name: main, image: busybox}]}
YAML
kc apply -f "$T/sts.yaml" >/dev/null
RS=$(kc get sts w -o jsonpath='{.metadata.uid}')
pod w-1 1 "$RS" >"$T/w1.yaml"; kc apply -f "$T/w1.yaml" >/dev/null
wait_for w1-bound 50 is_bound w-1
pod fill 3 >"$T/fill.yaml"; kc apply -f "$T/fill.yaml" >/dev/null
wait_for fill-bound 50 is_bound fill
sleep 1.1 # the bare pod is the younger
pod bare 1 >"$T/bare.yaml"; kc apply -f "$T/bare.yaml" >/dev/null
wait_for bare-bound 50 is_bound bare
wnode=$(node_of w-1); bnode=$(node_of bare); buid=$(kc get pod bare -o jsonpath='{.metadata.uid}')
if [ "$(node_of fill)" = "$wnode" ] && [ "$bnode" != "$wnode" ]; then ok; else
	bad "setup: w-1 on $wnode, fill on $(node_of fill), bare on $bnode"; fi
kc delete pod fill --wait=false >/dev/null
wait_for fill-gone 75 gone fill

# --- the gang: two 4-GPU pods, which fit only once a 1-GPU pod moves -------
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 2, queue: team-a}\n'
	for i in 0 1; do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: g-%s\n' "$i"
		printf '  labels: {muster.io/pod-group: g}\nspec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "4", cpu: "1"}}}\n'
	done
} >"$T/g.yaml"
kc apply -f "$T/g.yaml" >/dev/null
# --- kill -9 between the place's record and the eviction (the fault point)
stalled() { grep -q "fault move-stall: PATCH /api/v1/nodes/" "$T/sched.log"; }
wait_for stalled-before-the-eviction 100 stalled
ann() { kc get node "$1" -o jsonpath='{.metadata.annotations.muster\.io/held-places}' 2>/dev/null; }
snode=$(sed -n 's/.*fault move-stall: PATCH \/api\/v1\/nodes\/\(gpu-[0-9]*\) done.*/\1/p' "$T/sched.log" | head -n 1)
if ann "$snode" | grep -q '"pod":"default/w-1"'; then ok; else bad "no place recorded on $snode before the eviction: $(ann "$snode")"; fi
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=""
if leaving w-1; then bad "w-1 was evicted before its place was recorded"; else ok; fi
sched
wait_for scheduler-ready-after-stall 300 ready
stale() { grep -q "read back for the replacement of default/w-1 (StatefulSet/w) is given up: that pod was never evicted" "$T/sched.log"; }
wait_for stale-place-given-up 200 stale # 5 s after the read-back at the least
wait_for recreatable-pod-moved 100 leaving w-1
if leaving bare; then bad "the bare pod was evicted"; else ok; fi
held() { grep -q "pod default/w-1: moved to gpu-" "$T/sched.log"; }
wait_for place-held 50 held
planned=$(sed -n 's/.*pod default\/w-1: moved to \(gpu-[0-9]*\);.*/\1/p' "$T/sched.log" | tail -n 1)
if [ "$planned" = "$bnode" ]; then ok; else bad "planned node $planned, expected $bnode (beside the bare pod)"; fi
kc get events --field-selector involvedObject.name=w-1 >"$T/ev" 2>&1
has eviction-says-moved "$T/ev" "moved by muster"

# --- the StatefulSet controller (this test) makes the replacement ---------
wait_for w1-gone 75 gone w-1
# --- kill -9 between the eviction and the replacement's bind: the place is
# kept in the planned node's annotation and held again by the next start
noted() { ann "$planned" | grep -q '"pod":"default/w-1"'; }
wait_for place-noted-on-node 50 noted
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=""
echo "annotation at the kill: $(ann "$planned" | head -c 300)"
shape=$(ann "$planned" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[0]["shape"]))')
sched
wait_for scheduler-ready-again 300 ready
has place-held-again "$T/sched.log" "pod default/w-1: the place on $planned held for the pod StatefulSet/w makes next is held again"
# a 3-GPU pod arriving now would fit where w-1 is to go, were the place
# not held: it must wait
pod intruder 3 >"$T/in.yaml"; kc apply -f "$T/in.yaml" >/dev/null
sleep 1
if is_bound intruder; then bad "the place held for w-1's replacement went to intruder, on $(node_of intruder)"; else ok; fi
# a scale-up meanwhile: ordinal 2 is not the replacement of ordinal 1
pod w-2 1 "$RS" >"$T/w2.yaml"; kc apply -f "$T/w2.yaml" >/dev/null
sleep 2
if grep -q "pod default/w-2 takes the place" "$T/sched.log"; then
	bad "w-2 (ordinal 2) took the place held for w-1's replacement"; else ok; fi
pod w-1 1 "$RS" >"$T/w1.yaml"; kc apply -f "$T/w1.yaml" >/dev/null
wait_for replacement-bound 100 is_bound w-1
if [ "$(node_of w-1)" = "$planned" ]; then ok; else bad "the new w-1 on $(node_of w-1), planned $planned"; fi
has replacement-took-the-place "$T/sched.log" "pod default/w-1 takes the place held on $planned"
unnoted() { [ -z "$(ann "$planned")" ]; }
wait_for annotation-removed-once-taken 50 unnoted
wait_for gang-bound-0 100 is_bound g-0
wait_for gang-bound-1 100 is_bound g-1
n0=$(node_of g-0); n1=$(node_of g-1)
if [ "$n0" != "$n1" ] && [ "$n0" != "$planned" ] && [ "$n1" != "$planned" ]; then ok; else
	bad "gang on $n0 and $n1, the moved pod on $planned"; fi
if is_bound intruder; then bad "intruder bound on $(node_of intruder)"; else ok; fi
if [ "$(kc get pod bare -o jsonpath='{.metadata.uid}:{.spec.nodeName}')" = "$buid:$bnode" ]; then ok; else
	bad "the bare pod moved or was replaced"; fi

# --- a Job's pod: muster up's Job controller makes the replacement ---------
kc delete pod intruder g-0 g-1 w-2 --wait=false >/dev/null 2>&1
kc delete podgroup g >/dev/null 2>&1
for x in intruder g-0 g-1 w-2; do wait_for "$x-gone" 75 gone "$x"; done
pod f3 3 >"$T/f3.yaml"; kc apply -f "$T/f3.yaml" >/dev/null
wait_for f3-bound 50 is_bound f3
cat >"$T/jb.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: jb}
spec:
  template:
    metadata: {annotations: {muster.io/preemptible: "true"}}
    spec:
      schedulerName: muster
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1", cpu: "1"}}}]
YAML
kc apply -f "$T/jb.yaml" >/dev/null
jbpod() { kc get pods -l job-name=jb -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.metadata.deletionTimestamp}{"\n"}{end}' 2>/dev/null; }
jb1() { jbpod | awk 'NF == 2' | grep -q .; }
wait_for job-pod-bound 100 jb1
jfirst=$(jbpod | awk 'NF == 2 {print $1; exit}'); jnode=$(node_of "$jfirst")
if [ "$jnode" = "$(node_of f3)" ]; then ok; else bad "setup: jb's pod on $jnode, f3 on $(node_of f3)"; fi
kc delete pod f3 --wait=false >/dev/null
wait_for f3-gone 75 gone f3
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g2}\nspec: {minMember: 2, queue: team-a}\n'
	for i in 0 1; do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: g2-%s\n' "$i"
		printf '  labels: {muster.io/pod-group: g2}\nspec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "4", cpu: "1"}}}\n'
	done
} >"$T/g2.yaml"
kc apply -f "$T/g2.yaml" >/dev/null
wait_for job-pod-moved 100 leaving "$jfirst"
jplanned() { grep -q "pod default/$jfirst: moved to gpu-" "$T/sched.log"; }
wait_for job-place-held 50 jplanned
jp=$(sed -n "s/.*pod default\/$jfirst: moved to \(gpu-[0-9]*\);.*/\1/p" "$T/sched.log" | head -n 1)
jnew() { jbpod | awk -v f="$jfirst" 'NF == 2 && $1 != f' | grep -q .; }
wait_for job-replacement-bound 150 jnew
jsecond=$(jbpod | awk -v f="$jfirst" 'NF == 2 && $1 != f {print $1; exit}')
if [ -n "$jp" ] && [ "$(node_of "$jsecond")" = "$jp" ]; then ok; else bad "the Job's new pod $jsecond on $(node_of "$jsecond"), planned $jp"; fi
wait_for gang2-bound-0 100 is_bound g2-0
wait_for gang2-bound-1 100 is_bound g2-1
if [ "$(kc get pod bare -o jsonpath='{.metadata.uid}:{.spec.nodeName}')" = "$buid:$bnode" ]; then ok; else
	bad "the bare pod moved or was replaced"; fi

# --- places of a ReplicaSet (no index) read back after a restart ----------
# As a scheduler killed after it bound a replacement and before it wrote the
# annotation without that place would leave them: two places recorded on an
# empty node for the next pods of the ReplicaSets rs-a and rs-b.  rs-a has
# only a pod older than its move (not its replacement): its place is held
# again; rs-b's replacement (created after the move, same requests) is
# bound: its place is given up at once, not after --move-hold.  (The
# pods bound here carry no muster.io/gpus: the engine gives them GPUs 0
# and 1, so the places name 3 and 2.)
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=""
kc delete pod g2-0 g2-1 w-1 --wait=false >/dev/null 2>&1
kc delete podgroup g2 >/dev/null 2>&1
kc delete job jb --wait=false >/dev/null 2>&1
for x in g2-0 g2-1 w-1; do wait_for "$x-gone-for-rs" 75 gone "$x"; done
rnode=""
for n in gpu-0 gpu-1 gpu-2; do [ "$n" != "$bnode" ] && [ -z "$(ann "$n")" ] && { rnode=$n; break; }; done
# the ReplicaSets themselves, stored (no controller): the garbage collector
# deletes pods whose owner does not exist, as kube's does
for r in rs-a rs-b; do
	cat >"$T/$r.yaml" <<YAML
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: $r}
spec:
  replicas: 1
  selector: {matchLabels: {app: $r}}
  template:
    metadata: {labels: {app: $r}}
    spec: {schedulerName: muster, containers: [{name: main, image: busybox}]}
YAML
	kc apply -f "$T/$r.yaml" >/dev/null || bad "ReplicaSet $r not created"
done
rspod() { # NAME RS_NAME: a 1-GPU pod of the ReplicaSet, already on $rnode
	ruid=$(kc get replicaset "$2" -o jsonpath='{.metadata.uid}')
	pod "$1" 1 >"$T/$1.yaml"
	sed -i "s/ownerReferences: .*//; s/^  labels: .*/  labels: {muster.io\/queue: team-a, app: $2}\n  ownerReferences: [{apiVersion: apps\/v1, kind: ReplicaSet, name: $2, uid: $ruid, controller: true}]/; s/^spec:/spec:\n  nodeName: $rnode/" "$T/$1.yaml"
	kc apply -f "$T/$1.yaml" >/dev/null
}
rspod ra-old rs-a
sleep 1.2 # the moves below come after ra-old was made
at=$(($(date +%s) * 1000)); until=$((at + 60000))
place() { printf '{"pod":"default/%s","uid":"%s-uid","ns":"default","ctrl":"ReplicaSet/%s","queue":"team-a","shape":%s,"dev":{"muster.io/gpus":"%s"},"until":%s,"at":%s}' "$1" "$1" "$2" "$shape" "$3" "$until" "$at"; }
kc annotate node "$rnode" --overwrite "muster.io/held-places=[$(place ra-gone rs-a 3),$(place rb-gone rs-b 2)]" >/dev/null
sleep 1.1
rspod rb-new rs-b
sched
wait_for scheduler-ready-for-rs 300 ready
rs_held() { grep -q "pod default/ra-gone: the place on $rnode held for the pod ReplicaSet/rs-a makes next is held again" "$T/sched.log"; }
wait_for rs-a-place-held-again 50 rs_held
rb_given_up() { grep -q "held for the replacement of default/rb-gone (ReplicaSet/rs-b) is given up: its replacement is bound" "$T/sched.log"; }
wait_for rs-b-place-given-up 50 rb_given_up
only_a() { a=$(ann "$rnode"); echo "$a" | grep -q ra-gone && ! echo "$a" | grep -q rb-gone; }
wait_for rs-b-place-gone-from-node 50 only_a
if grep -q "the replacement of default/ra-gone (ReplicaSet/rs-a) is given up" "$T/sched.log"; then
	bad "rs-a's place was given up for a pod older than its move"; else ok; fi

# --- budgets: with --move-ratio and --move-gpus-per-hour refused ----------
expect bad-ratio 2 "$M" scheduler --consolidate --move-ratio 0
has bad-ratio-says "$T/err" "move-ratio: expected a number above 0"
expect bad-hold 2 "$M" scheduler --move-hold soon
has bad-hold-says "$T/err" "move-hold: expected a duration"
"$M" scheduler --help >"$T/help"
has help-consolidate "$T/help" "--consolidate"
has help-gpus-per-hour "$T/help" "--move-gpus-per-hour"
# KEEP_LOG=FILE keeps the scheduler's log for a look after the run
[ -n "${KEEP_LOG:-}" ] && cp "$T/sched.log" "$KEEP_LOG"
done_
