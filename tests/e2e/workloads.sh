#!/bin/sh
# workloads.sh - end-to-end tests of `muster scheduler` against `muster up`
# for what real workload controllers do (issue 15), driven by the real
# kubectl:
#   - same-name recreate: a pod, a PodGroup with its pods, and a batch/v1
#     Job deleted and made again under the same names are new objects (new
#     UIDs) and are scheduled at once;
#   - stranded partial gangs: a gang with 2 of its minMember 4 pods bound
#     (as after a crash mid-gang) while other pods hold the rest of the
#     room is rolled back after --gang-rollback: its bound pods are evicted
#     with a GangRolledBack event, and no GPU stays held;
#   - a gang one of whose pods has already finished is never rolled back
#     (KAI-Scheduler issue #1968);
#   - releasing: a pod that preempts another is bound only once its victim
#     (which takes 4 s to shut down, muster.io/stop-after) is gone;
#   - a pod with preemptionPolicy: Never evicts no one, however high its
#     priority;
#   - gang restart: a gang that loses a pod to a failed node has its other
#     pods stopped so that it restarts together, unless its PodGroup says
#     muster.io/on-pod-failure: ignore.
# Usage: sh tests/e2e/workloads.sh PATH_TO_MUSTER.  Ends with
# "e2e workloads: N passed, N failed".  Every wait is a bounded loop and
# every process started here is killed on exit.
E2E_NAME=workloads; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
is_bound() { [ -n "$(node_of "$1")" ]; }
uid_of() { kc get "$1" "$2" -o jsonpath='{.metadata.uid}' 2>/dev/null; }
gone() { ! kc get pod "$1" >/dev/null 2>&1; }
# bind POD NODE: binds a pod through the Binding subresource, as a
# scheduler does (here: as the killed scheduler did before it died).
bind() {
	printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"kind":"Node","name":"%s"}}\n' \
		"$1" "$2" >"$T/binding.json"
	kc create --raw "/api/v1/namespaces/default/pods/$1/binding" -f "$T/binding.json" >/dev/null
}

cat >"$T/cluster.yaml" <<'EOF'
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
spec: {resources: {gpu: {deserved: 32}}}
EOF
up_start "$T/cluster.yaml"

# sched [ARGS...]: (re)starts the scheduler; its log in $T/sched.log.
sched() {
	[ -n "$SPID" ] && kill -9 "$SPID" 2>/dev/null
	sched_start w --min-runtime 0 --lease-duration 4 --retry-period 1 "$@"
}
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
sched --gang-rollback 3s
wait_for scheduler-ready 100 ready

# pod NAME GPUS [LABELS] [ANNOTATIONS]: a pod of ours in team-a.
pod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a%s}\n' "$1" "${3:+, $3}"
	[ -n "${4:-}" ] && printf '  annotations: {%s}\n' "$4"
	printf 'spec:\n  schedulerName: muster\n  containers:\n'
	printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "%s"}}}\n' "$2"
}

# --- same-name recreate: a pod ---------------------------------------------
pod solo 1 >"$T/solo.yaml"
kc apply -f "$T/solo.yaml" >/dev/null
wait_for pod-bound 50 is_bound solo
u1=$(uid_of pod solo)
kc delete pod solo --wait=false >/dev/null
wait_for pod-deleted 50 gone solo
kc create -f "$T/solo.yaml" >/dev/null
u2=$(uid_of pod solo)
if [ -n "$u2" ] && [ "$u1" != "$u2" ]; then ok; else bad "recreated pod kept uid $u1"; fi
wait_for recreated-pod-bound 50 is_bound solo
kc get pod solo -o jsonpath='{.status.conditions}' >"$T/out" 2>&1
hasnt recreated-pod-no-error "$T/out" "already exists"
kc delete pod solo --wait=false >/dev/null

# --- same-name recreate: a PodGroup and its pods ---------------------------
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 2, queue: team-a}\n'
	for i in 0 1; do printf -- '---\n'; pod "g-$i" 2 "muster.io/pod-group: g, app: g"; done
} >"$T/g.yaml"
gbound() { [ "$(kc get pods -l app=g -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" -eq 2 ]; }
gnone() { [ "$(kc get pods -l app=g -o name | grep -c .)" -eq 0 ]; }
kc apply -f "$T/g.yaml" >/dev/null
wait_for gang-bound 50 gbound
kc delete -f "$T/g.yaml" --wait=false >/dev/null
wait_for gang-deleted 50 gnone
kc create -f "$T/g.yaml" >/dev/null
wait_for recreated-gang-bound 50 gbound
kc delete -f "$T/g.yaml" --wait=false >/dev/null
wait_for gang-deleted-again 50 gnone

# --- same-name recreate: a queue-labelled batch/v1 Job ---------------------
cat >"$T/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: train, labels: {muster.io/queue: team-a}}
spec:
  parallelism: 2
  completions: 2
  suspend: true
  template:
    metadata: {labels: {app: train}}
    spec:
      schedulerName: muster
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
EOF
jrun() { [ "$(kc get pods -l app=train -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" -eq 2 ]; }
jnone() { ! kc get job train >/dev/null 2>&1 && [ "$(kc get pods -l app=train -o name | grep -c .)" -eq 0 ]; }
kc apply -f "$T/job.yaml" >/dev/null
wait_for job-runs 75 jrun
kc delete job train --cascade=foreground --wait=false >/dev/null 2>&1 || kc delete job train --wait=false >/dev/null
kc delete pods -l app=train --wait=false >/dev/null 2>&1
wait_for job-deleted 75 jnone
kc create -f "$T/job.yaml" >/dev/null
wait_for recreated-job-runs 75 jrun
kc delete job train --wait=false >/dev/null
kc delete pods -l app=train --wait=false >/dev/null 2>&1
wait_for job-deleted-again 75 jnone

# --- stranded partial gang: rolled back ------------------------------------
# The scheduler is stopped, as if killed after binding 2 of a gang's 4
# pods; other pods (bound by another scheduler) take the rest of the room.
kill -9 "$SPID" 2>/dev/null; SPID=""
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: s}\nspec: {minMember: 4, queue: team-a}\n'
	for i in 0 1 2 3; do printf -- '---\n'; pod "s-$i" 8 "muster.io/pod-group: s, app: s"; done
	for n in 2 3; do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: other-%s, labels: {app: other}}\n' "$n"
		printf 'spec:\n  nodeName: gpu-%s\n  containers:\n' "$n"
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
	done
} >"$T/s.yaml"
kc apply -f "$T/s.yaml" >/dev/null
bind s-0 gpu-0 && bind s-1 gpu-1 && ok || bad "could not bind s-0 and s-1 by hand"
sched --gang-rollback 3s
wait_for scheduler-ready-again 100 ready
sleep 1
if is_bound s-0 && is_bound s-1; then ok; else bad "the partial gang was rolled back before its grace"; fi
wait_for stranded-gang-rolled-back 100 gone s-0
wait_for stranded-gang-rolled-back-2 50 gone s-1
kc get events --field-selector involvedObject.name=s >"$T/out" 2>&1
has rollback-event "$T/out" "GangRolledBack"
grep -c 'minMember 4 pods bound' "$T/sched.log" >/dev/null && ok || bad "no rollback line in the log"
kc delete -f "$T/s.yaml" --wait=false >/dev/null 2>&1

# --- a completing gang is never rolled back --------------------------------
kill -9 "$SPID" 2>/dev/null; SPID=""
snone() { [ "$(kc get pods -l app=s -o name | grep -c .)" -eq 0 ] && [ "$(kc get pods -l app=other -o name | grep -c .)" -eq 0 ]; }
wait_for stranded-cleanup 75 snone
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: c}\nspec: {minMember: 3, queue: team-a}\n'
	printf -- '---\n'; pod c-0 8 "muster.io/pod-group: c, app: c" 'muster.io/duration: "1s"'
	for i in 1 2; do printf -- '---\n'; pod "c-$i" 8 "muster.io/pod-group: c, app: c"; done
	for n in 2 3; do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: other-%s, labels: {app: other}}\n' "$n"
		printf 'spec:\n  nodeName: gpu-%s\n  containers:\n' "$n"
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
	done
} >"$T/c.yaml"
kc apply -f "$T/c.yaml" >/dev/null
bind c-0 gpu-0 && bind c-1 gpu-1 && ok || bad "could not bind c-0 and c-1 by hand"
succeeded() { [ "$(kc get pod c-0 -o jsonpath='{.status.phase}')" = Succeeded ]; }
wait_for first-pod-succeeds 50 succeeded
sched --gang-rollback 2s
wait_for scheduler-ready-third 100 ready
sleep 6
if is_bound c-1; then ok; else bad "a gang with a finished pod was rolled back"; fi
hasnt no-rollback-of-completing "$T/sched.log" "gang default/c had"
kc delete -f "$T/c.yaml" --wait=false >/dev/null 2>&1
cnone() { [ "$(kc get pods -l app=c -o name | grep -c .)" -eq 0 ] && [ "$(kc get pods -l app=other -o name | grep -c .)" -eq 0 ]; }
wait_for completing-cleanup 75 cnone

# --- releasing: a claimant waits for its victim to leave -------------------
# "lo" takes all 8 GPUs of every node and needs 4 s to shut down; "hi"
# preempts one of them and is bound only once that one is gone.
{
	for n in 0 1 2 3; do printf -- '---
'; pod "lo-$n" 8 "app: lo" 'muster.io/priority: "1", muster.io/stop-after: "4s"'; done
} >"$T/lo.yaml"
lobound() { [ "$(kc get pods -l app=lo -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" -eq 4 ]; }
kc apply -f "$T/lo.yaml" >/dev/null
wait_for victims-bound 75 lobound
pod hi 8 "app: hi" 'muster.io/priority: "100"' >"$T/hi.yaml"
kc apply -f "$T/hi.yaml" >/dev/null
leaving() { [ -n "$(kc get pods -l app=lo -o jsonpath='{.items[*].metadata.deletionTimestamp}')" ]; }
wait_for victim-leaving 50 leaving
if is_bound hi; then bad "the claimant was bound while its victim still held the GPUs"; else ok; fi
kc get pod hi -o jsonpath='{.status.conditions}' >"$T/out" 2>&1
has claimant-says-why "$T/out" "waiting for default/lo-"
wait_for claimant-bound-after-release 75 is_bound hi
lo_left=$(kc get pods -l app=lo -o name | grep -c .)
if [ "$lo_left" -eq 3 ]; then ok; else bad "releasing: $lo_left victims left, expected 3 (one evicted)"; fi
# preemptionPolicy: Never: higher priority, but it evicts no one.
pod np 8 "app: np" 'muster.io/priority: "100"' | sed 's/^spec:$/spec:\n  preemptionPolicy: Never/' >"$T/np.yaml"
kc apply -f "$T/np.yaml" >/dev/null
sleep 3
if is_bound np; then bad "a pod with preemptionPolicy Never was bound on a full cluster"; else ok; fi
lo_leaving=$(kc get pods -l app=lo -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}' | grep -c .)
if [ "$lo_leaving" -eq 0 ]; then ok; else bad "preemptionPolicy Never: $lo_leaving pods evicted for it"; fi
kc delete -f "$T/lo.yaml" -f "$T/hi.yaml" -f "$T/np.yaml" --wait=false >/dev/null 2>&1
lhnone() { [ "$(kc get pods -l 'app in (lo,hi,np)' -o name | grep -c .)" -eq 0 ]; }
wait_for releasing-cleanup 75 lhnone

# --- gang restart: a lost pod stops its gang; "ignore" keeps it -----------
# gang r (2 pods, 8 GPUs each) and gang k (2 pods, annotated ignore) share
# the 4 nodes; gpu-0 and gpu-1 then fail, each taking one pod of each gang
# or two of one: either way a gang that lost a pod is restarted, unless it
# says ignore.  (The scheduler runs with the default --gang-rollback of
# 60 s here: the "ignore" gang, left below its minMember, would otherwise
# be rolled back as a stale gang.)
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: r}\nspec: {minMember: 2, queue: team-a}\n'
	printf -- '---\napiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: k\n'
	printf '  annotations: {muster.io/on-pod-failure: ignore}\nspec: {minMember: 2, queue: team-a}\n'
	for i in 0 1; do printf -- '---\n'; pod "r-$i" 8 "muster.io/pod-group: r, app: r"; done
	for i in 0 1; do printf -- '---\n'; pod "k-$i" 8 "muster.io/pod-group: k, app: k"; done
} >"$T/r.yaml"
sched
wait_for scheduler-ready-fourth 100 ready
allbound() { [ "$(kc get pods -l 'app in (r,k)' -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" -eq 4 ]; }
kc apply -f "$T/r.yaml" >/dev/null
wait_for restart-gangs-bound 75 allbound
rnode=$(node_of r-0); knode=$(node_of k-0)
"$M" node fail "$rnode" --kubeconfig "$T/data/kubeconfig" >/dev/null 2>&1 && ok || bad "muster node fail $rnode"
[ "$knode" != "$rnode" ] && { "$M" node fail "$knode" --kubeconfig "$T/data/kubeconfig" >/dev/null 2>&1 && ok || bad "muster node fail $knode"; }
failed_r0() { [ "$(kc get pod r-0 -o jsonpath='{.status.phase}')" = Failed ]; }
wait_for lost-pod-failed 75 failed_r0
r1gone() { gone r-1 || [ -n "$(kc get pod r-1 -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
wait_for gang-restarted 75 r1gone
kc get events --field-selector involvedObject.name=r >"$T/out" 2>&1
has restart-event "$T/out" "GangRestart"
sleep 2
if is_bound k-1 && ! gone k-1 && [ -z "$(kc get pod k-1 -o jsonpath='{.metadata.deletionTimestamp}')" ]; then ok; else bad "the gang annotated ignore was restarted"; fi
done_
