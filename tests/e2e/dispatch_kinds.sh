#!/bin/sh
# dispatch_kinds.sh - `muster dispatch` (docs/dispatch.md, "Kinds") with
# the suspendable kinds of ../shared/data/k8s/workloads, as MultiKueue
# dispatches its supported kinds: a hub `muster up` and two workers (small:
# 2 x 8 GPUs, region eu, with only the JobSet CRD, in pull mode through its
# `muster dispatch agent`; big: 4 x 8, region us, with the JobSet,
# PyTorchJob, MPIJob and RayJob CRDs, push mode), each with its own
# `muster scheduler`; the dispatcher and the agent run as the accounts of
# deploy/dispatch-rbac.yaml and deploy/dispatch-agent-rbac.yaml.  Checked:
#   - the kinds each worker serves are found before anything is sent
#     (big by discovery of its API groups, small from its agent's report);
#   - a JobSet of 4 x 8-GPU pods (managedBy muster.io/dispatch) stays
#     suspended on the hub and goes as one unit to big, the only cluster
#     it fits: its copy is unsuspended, without managedBy, its pod
#     templates labelled with the hub uid and generation; the pods (this
#     test plays the JobSet controller) bind there, the hub says Running
#     with their counts, and once the copy is Completed the hub JobSet is
#     Succeeded with the copy's status;
#   - a PyTorchJob and an MPIJob go to big and complete there (the
#     training operator's Succeeded condition, played by this test);
#   - a PyTorchJob that only small may take (small has no such CRD) is
#     never sent: it waits NoMatchingCluster, saying that no cluster that
#     serves PyTorchJob matches it, with no copy and no generation;
#   - a JobSet for small goes there in pull mode: its agent creates the
#     copy (unsuspended, templates labelled), reports the pods back, and
#     the copy's Completed makes the hub JobSet Succeeded;
#   - a RayJob goes to big, and deleting it on the hub deletes its copy;
#   - a Job's record (its cluster) and its condition Dispatched come in
#     one write: no version of it has the one without the other;
#   - the LeaderWorkerSet CRD, installed on the hub and big after the
#     dispatcher started (round 13: it watches only the kinds discovery
#     shows served), is found by its probe of /apis and watched, and an
#     LWS goes to big; deleted on the hub, its copy goes;
#   - idle, the dispatcher makes almost no request: the hub's Clusters,
#     Queues and Secrets are watched (muster_dispatch_requests_total);
#   - a watch cut by a kill -9 of the hub (the dispatcher paused, the hub
#     restarted, 2 Jobs created) is resumed from the last version seen,
#     without a list, as client-go's reflector does, and both Jobs done;
#   - the hub keeps 20 changes of watch cache; the dispatcher, paused
#     past the end of its watches while 25 Jobs are created, resumes from
#     an expired version, gets 410 Gone, lists again, and dispatches all 25.
# Without ../shared/data it prints that it skipped.  It took about 75 s,
# 31 s of it a pause that is now a restart of the hub (a few seconds; not
# timed again on a quiet machine: 3.5 to 4 minutes with ASan at load 35).
# Usage: sh tests/e2e/dispatch_kinds.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-kinds: N passed, N failed".
E2E_NAME=dispatch-kinds; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
fleet_needs_crds


fleet_hub_queue
pool small 2 >"$T/small.yaml"; pool big 4 >"$T/big.yaml"
# the hub keeps only the last 20 changes for watches: a watch resumed
# after more than that gets 410 Gone (below)
start hub --watch-cache 20; HUBPID=$!; start small; start big
# the CRDs (create: the big ones exceed apply's annotation): all four on
# the hub and on big, only JobSet's on small
for f in jobset.x-k8s.io_jobsets kubeflow.org_pytorchjobs kubeflow.org_mpijobs ray.io_rayjobs; do
	for n in hub big; do w "$n" create -f "$W/crds/$f.yaml" >/dev/null && ok || bad "CRD $f on $n"; done
done
w small create -f "$W/crds/jobset.x-k8s.io_jobsets.yaml" >/dev/null && ok || bad "CRD jobset on small"
for n in hub small big; do
	w "$n" wait --for=condition=Established crd --all --timeout=60s >/dev/null && ok || bad "CRDs on $n"
done
fleet_wire
# (no lease: it is paused for longer than one below)
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 60s --id d1 \
	--no-leader-elect --metrics 127.0.0.1:0 >"$T/d.out" 2>"$T/d.log" &
DPID=$!; PIDS="$PIDS $DPID"
# small is in pull mode: its agent calls the hub
fleet_agent_small
# what each serves, found before anything is sent
for k in JobSet PyTorchJob MPIJob RayJob; do wait_for "big-serves-$k" 100 serves big "$k"; done
wait_for small-serves-JobSet 100 serves small JobSet
grep -q "cluster small: serves PyTorchJob" "$T/d.log" && bad "small serves PyTorchJob" || ok

# tmpl GPUS [INDENT]: a pod template's spec (one container), at depth
# INDENT (10 by default).
tmpl() {
	printf 'spec:\n  schedulerName: muster\n  restartPolicy: Never\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n' "$1" |
		sed "s/^/$(printf "%${2:-10}s" "")/"
}

# --- a JobSet that fits only big: one unit, held on the hub --------------------
cat >"$T/js.yaml" <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  labels: {muster.io/queue: team-a}
spec:
  managedBy: muster.io/dispatch
  suspend: true
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 3
        completions: 3
        template:
$(tmpl 8)
  - name: driver
    template:
      spec:
        template:
$(tmpl 8)
EOF
expect "JobSet on the hub" 0 h create -f "$T/js.yaml"
wait_for js-to-big 100 ann_is jobset js cluster big
[ "$(hget jobset js '{.spec.suspend}')" = true ] && ok || bad "hub JobSet not held suspended"
juid=$(hget jobset js '{.metadata.uid}')
has_copy() { [ "$(w big get jobset js -o jsonpath='{.spec.suspend}')" = false ]; }
wait_for js-copy-unsuspended 100 has_copy
[ -z "$(w big get jobset js -o jsonpath='{.spec.managedBy}')" ] && ok || bad "copy kept managedBy"
[ -z "$(w small get jobset js -o name)" ] && ok || bad "a copy of js on small"
l=$(w big get jobset js -o jsonpath='{.spec.replicatedJobs[1].template.spec.template.metadata.labels.muster\.io/hub-uid}')
[ "$l" = "$juid" ] && ok || bad "driver template label: '$l', not '$juid'"
# the JobSet controller (this test) makes the copy's pods, as it labels them
cuid=$(w big get jobset js -o jsonpath='{.metadata.uid}')
pod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/hub-uid: "%s", muster.io/dispatch-generation: "1", jobset.sigs.k8s.io/jobset-name: js, jobset.sigs.k8s.io/replicatedjob-name: %s}\n  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js, uid: "%s", controller: true}]\nspec:\n  schedulerName: muster\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "8"}}}]\n' \
		"$1" "$juid" "$2" "$cuid" >"$T/pod.yaml"
	w big create -f "$T/pod.yaml" >/dev/null && ok || bad "pod $1"
}
for i in 0 1 2; do pod "js-workers-0-$i" workers; done
pod js-driver-0-0 driver
runs() { ann_is jobset js dispatch-phase Running && ann jobset js dispatch-pods | grep -q "^bound=4,"; }
wait_for js-running-on-hub 150 runs || echo "  js: $(ann jobset js dispatch-phase) $(ann jobset js dispatch-pods)"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
w big patch jobset js --subresource=status --type=merge -p \
	"{\"status\":{\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\",\"reason\":\"AllJobsCompleted\",\"message\":\"jobset completed successfully\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null &&
	ok || bad "status of the copy"
wait_for js-succeeded 100 ann_is jobset js dispatch-phase Succeeded
st() { [ "$(hget jobset js '{.status.conditions[0].type}')" = Completed ]; }
wait_for js-status-back 50 st

# --- PyTorchJob and MPIJob: to big, their end from the operator's condition ---
cat >"$T/pt.yaml" <<EOF
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
$(tmpl 1 8)
    Worker:
      replicas: 2
      template:
$(tmpl 1 8)
---
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: mpi
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  runPolicy: {suspend: true}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
$(tmpl 1 8)
    Worker:
      replicas: 2
      template:
$(tmpl 2 8)
EOF
expect "PyTorchJob and MPIJob on the hub" 0 h create -f "$T/pt.yaml"
wait_for pt-to-big 100 ann_is pytorchjob pt cluster big
wait_for mpi-dispatched 100 ann_is mpijob mpi dispatch-phase Dispatched
ptc() { [ "$(w big get pytorchjob pt -o jsonpath='{.spec.runPolicy.suspend}')" = false ]; }
wait_for pt-copy-unsuspended 100 ptc
w big patch pytorchjob pt --subresource=status --type=merge -p \
	'{"status":{"conditions":[{"type":"Succeeded","status":"True","reason":"PyTorchJobSucceeded"}]}}' >/dev/null && ok || bad "pt status"
wait_for pt-succeeded 100 ann_is pytorchjob pt dispatch-phase Succeeded
mc=$(ann mpijob mpi cluster)
[ -n "$mc" ] && w "$mc" get mpijob mpi -o name | grep -q . && ok || bad "no MPIJob copy on '$mc'"

# --- a worker without the kind's CRD: found before sending, nothing sent -------
sed -e 's/name: pt$/name: pteu/' -e 's/region=us/region=eu/' "$T/pt.yaml" | sed '/^---$/,$d' >"$T/pteu.yaml"
expect "PyTorchJob for small" 0 h create -f "$T/pteu.yaml"
wait_for pteu-waits 100 ann_is pytorchjob pteu dispatch-reason NoMatchingCluster
ann pytorchjob pteu dispatch-message >"$T/m"
has pteu-why "$T/m" "no cluster serves PyTorchJob (kubeflow.org/v1) and matches its selector"
sleep 1
[ -z "$(ann pytorchjob pteu dispatch-generation)" ] && ok || bad "pteu was sent"
[ "$(ann pytorchjob pteu dispatch-phase)" = Queued ] && ok || bad "pteu: $(ann pytorchjob pteu dispatch-phase)"

# --- a JobSet in pull mode: small's agent makes the copy ------------------------
cat >"$T/jseu.yaml" <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: jseu
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=eu}
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
$(tmpl 4)
EOF
expect "JobSet for small" 0 h create -f "$T/jseu.yaml"
wait_for jseu-to-small 100 ann_is jobset jseu cluster small
jeuc() { [ "$(w small get jobset jseu -o jsonpath='{.spec.suspend}')" = false ]; }
wait_for jseu-copy-by-agent 100 jeuc
euid=$(hget jobset jseu '{.metadata.uid}')
l=$(w small get jobset jseu -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.metadata.labels.muster\.io/hub-uid}')
[ "$l" = "$euid" ] && ok || bad "jseu template label: '$l', not '$euid'"
[ -z "$(w big get jobset jseu -o name)" ] && ok || bad "a copy of jseu on big"
ecuid=$(w small get jobset jseu -o jsonpath='{.metadata.uid}')
for i in 0 1; do
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: jseu-workers-0-%s\n  labels: {muster.io/hub-uid: "%s", muster.io/dispatch-generation: "1"}\n  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: jseu, uid: "%s", controller: true}]\nspec:\n  schedulerName: muster\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]\n' \
		"$i" "$euid" "$ecuid" >"$T/pod.yaml"
	w small create -f "$T/pod.yaml" >/dev/null && ok || bad "jseu pod $i"
done
eruns() { ann_is jobset jseu dispatch-phase Running && ann jobset jseu dispatch-pods | grep -q "^bound=2,"; }
wait_for jseu-running-on-hub 150 eruns || echo "  jseu: $(ann jobset jseu dispatch-phase) $(ann jobset jseu dispatch-pods)"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
w small patch jobset jseu --subresource=status --type=merge -p \
	"{\"status\":{\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\",\"reason\":\"AllJobsCompleted\",\"message\":\"done\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null &&
	ok || bad "status of jseu's copy"
wait_for jseu-succeeded 100 ann_is jobset jseu dispatch-phase Succeeded

# --- RayJob: to big; deleted on the hub, its copy goes ------------------------
cat >"$T/rj.yaml" <<EOF
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  suspend: true
  entrypoint: python -c 'print(1)'
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: head, image: rayproject/ray, resources: {limits: {cpu: "1"}}}]
    workerGroupSpecs:
    - groupName: gpus
      replicas: 2
      minReplicas: 2
      maxReplicas: 2
      rayStartParams: {}
      template:
        spec:
          containers: [{name: w, image: rayproject/ray, resources: {limits: {nvidia.com/gpu: "8"}}}]
EOF
expect "RayJob on the hub" 0 h create -f "$T/rj.yaml"
wait_for rj-dispatched 100 ann_is rayjob rj dispatch-phase Dispatched
rc=$(ann rayjob rj cluster)
rjc() { [ "$(w "$rc" get rayjob rj -o jsonpath='{.spec.suspend}')" = false ]; }
wait_for rj-copy-unsuspended 100 rjc
expect "RayJob deleted on the hub" 0 h delete rayjob rj
rjgone() { ! w "$rc" get rayjob rj -o name | grep -q .; }
wait_for rj-copy-deleted 100 rjgone

# --- a CRD installed after the dispatcher started: watched from then on -----
# No LeaderWorkerSet CRD anywhere yet: the dispatcher watches no LWS (it
# watches only the kinds discovery shows served); the CRD on the hub and
# on big, its next probe of /apis (5 s) sees the group, the kind is
# watched on both, and an LWS goes to big as one unit.
LWS=leaderworkersets.leaderworkerset.x-k8s.io
grep -q "serves LeaderWorkerSet" "$T/d.log" && bad "LeaderWorkerSet served before its CRD" || ok
for n in hub big; do
	w "$n" create -f "$W/crds/leaderworkerset.x-k8s.io_leaderworkersets.yaml" >/dev/null && ok || bad "LWS CRD on $n"
	w "$n" wait --for=condition=Established crd/$LWS --timeout=60s >/dev/null && ok || bad "LWS CRD on $n"
done
hub_lws() { grep -q "hub: serves LeaderWorkerSet " "$T/d.log"; }
wait_for hub-serves-LWS-later 150 hub_lws
wait_for big-serves-LWS-later 150 serves big LeaderWorkerSet
cat >"$T/lws.yaml" <<'EOF2'
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lws
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        schedulerName: muster
        containers: [{name: l, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
    workerTemplate:
      spec:
        schedulerName: muster
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
EOF2
expect "LeaderWorkerSet on the hub" 0 h create -f "$T/lws.yaml"
wait_for lws-to-big-later 100 ann_is "$LWS" lws cluster big
lcopy() { w big get "$LWS" lws -o name | grep -q .; }
wait_for lws-copy-later 100 lcopy
expect "LWS deleted on the hub" 0 h delete "$LWS" lws
lgone() { ! w big get "$LWS" lws -o name 2>/dev/null | grep -q .; }
wait_for lws-copy-gone 100 lgone

# --- idle: Clusters, Queues and Secrets are watched, not read each pass ----
murl=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/d.log" | tail -n 1)
reqs() { command curl -sf "$murl/metrics" | sed -n 's/^muster_dispatch_requests_total //p'; }
r0=$(reqs); p0=$(command curl -sf "$murl/metrics" | sed -n 's/^muster_dispatch_passes_total //p')
sleep 3
r1=$(reqs); p1=$(command curl -sf "$murl/metrics" | sed -n 's/^muster_dispatch_passes_total //p')
echo "  idle: $((r1 - r0)) requests in $((p1 - p0)) passes"
# at most a PriorityClass list a second and a Cluster status write: not
# four reads a pass (Clusters, Queues, two Secrets) as before
[ "$((p1 - p0))" -ge 5 ] && [ "$((r1 - r0))" -le 12 ] && ok ||
	bad "idle: $((r1 - r0)) requests in $((p1 - p0)) passes"

# --- a Job's record and its condition Dispatched: one write ------------------
# Every version of the hub Job a watch shows with a cluster recorded also
# has Dispatched True: the record and the condition are one patch of
# /status (two writes would show the record without the condition).
"$KC" --kubeconfig "$T/hub/kubeconfig" get jobs --watch-only -o \
	'jsonpath={.metadata.name} {.metadata.annotations.muster\.io/cluster} {.status.conditions[?(@.type=="Dispatched")].status}{"\n"}' \
	>"$T/rec.watch" 2>/dev/null &
RW=$!
sleep 1
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: rec\n  labels: {muster.io/queue: team-a}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n' >"$T/rec.yaml"
expect "Job rec on the hub" 0 h create -f "$T/rec.yaml"
rec_sent() { [ -n "$(ann job rec cluster)" ]; }
wait_for rec-dispatched 100 rec_sent
sleep 1 # (the condition would follow the record in the same pass)
kill "$RW" 2>/dev/null; wait "$RW" 2>/dev/null
grep '^rec [a-z]' "$T/rec.watch" | grep -q . && ok || bad "rec: the watch showed no record: $(head -5 "$T/rec.watch")"
grep '^rec [a-z]' "$T/rec.watch" | grep -v ' True$' >"$T/rec.bad"
[ -s "$T/rec.bad" ] && bad "rec: recorded without Dispatched True: $(head -3 "$T/rec.bad")" || ok

# --- a cut watch resumes from its last version: no list, no 410 ---------
# The dispatcher is paused (SIGSTOP), the hub killed with -9 (its watches
# are cut mid-stream, not ended) and started again on the same port, and 2
# Jobs created meanwhile, fewer than the hub's 20 changes of watch cache.
# As client-go's reflector does, the dispatcher watches again from the last
# version it saw: after SIGCONT, the first thing it says of the hub's Jobs
# watch is that it resumed, it does not list them again, and both Jobs are
# dispatched and done (the old code listed again after any failure).
# mark: remembers how many lines d.log has; since: the lines after them.
mark() { wc -l <"$T/d.log" | tr -d ' ' >"$T/mark"; }
since() { tail -n +"$(($(cat "$T/mark") + 1))" "$T/d.log"; }
jobs_said() { since | grep "hub Jobs: their watch" >"$T/said"; [ -s "$T/said" ]; }
# A watch behind the hub's last Job change when the hub restarts gets 410
# (the restarted hub's ring starts at its open), as from a restarted
# kube-apiserver's watch cache: first wait until no hub Job changed for 2 s.
last_job_rv() { "$KC" --kubeconfig "$T/hub/kubeconfig" get jobs -o 'jsonpath={range .items[*]}{.metadata.resourceVersion}{"\n"}{end}' | sort -n | tail -n 1; }
jobs_quiet() { a=$(last_job_rv); sleep 2; [ "$a" = "$(last_job_rv)" ]; }
wait_for jobs-quiet-before-cut 15 jobs_quiet
sleep 1 # (for the last change's event to reach the dispatcher)
kill -STOP "$DPID"
hport=$(sed -n 's/.*serving the Kubernetes API on https*:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/hub.up.out" | head -n 1)
kill -9 "$HUBPID"; wait "$HUBPID" 2>/dev/null
LPORT=$hport start hub --watch-cache 20; HUBPID=$!
: >"$T/r.yaml"
for i in 1 2; do
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: r-%s\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/duration: 1s}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n---\n' "$i" >>"$T/r.yaml"
done
expect "2 Jobs while the dispatcher is paused and the hub restarted" 0 h create -f "$T/r.yaml"
mark
kill -CONT "$DPID"
wait_for said-after-cut 300 jobs_said
head -n 1 "$T/said" | grep -q "hub Jobs: their watch was cut or not answered: resumed from the last version seen" &&
	ok || bad "after a cut, the Jobs watch did not resume first: $(head -n 3 "$T/said")"
rdone() { [ "$("$KC" --kubeconfig "$T/hub/kubeconfig" get jobs r-1 r-2 -o 'jsonpath={range .items[*]}{.metadata.annotations.muster\.io/dispatch-phase}{"\n"}{end}' | grep -c '^Succeeded$')" -eq 2 ]; }
wait_for converged-after-cut 300 rdone
since | grep "hub Jobs: their watch's version expired" >"$T/said410"
[ -s "$T/said410" ] && bad "a cut watch listed again: $(head -n 2 "$T/said410")" || ok

# --- 410 Gone: a watch resumed from an expired version lists again -------
# The dispatcher is paused and the hub restarted on the same port (its
# watches end at once, where waiting for the server to end them took
# 30 s); 25 Jobs are created meanwhile, more than the hub's 20 changes of
# watch cache, so the watches resume from a version the hub no longer
# has: 410, a new list, and every one of them is dispatched and done.
kill -STOP "$DPID"
hport=$(sed -n 's/.*serving the Kubernetes API on https*:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/hub.up.out" | head -n 1)
kill "$HUBPID"; wait "$HUBPID" 2>/dev/null
LPORT=$hport start hub --watch-cache 20
: >"$T/g.yaml"
i=1
while [ "$i" -le 25 ]; do
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: g-%s\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/duration: 1s}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n---\n' "$i" >>"$T/g.yaml"
	i=$((i + 1))
done
expect "25 Jobs while the dispatcher is paused" 0 h create -f "$T/g.yaml"
mark
kill -CONT "$DPID"
relisted() { since | grep -q "hub Jobs: their watch's version expired (410 Gone): listed again"; }
wait_for relisted-after-410 300 relisted
gdone() { [ "$("$KC" --kubeconfig "$T/hub/kubeconfig" get jobs -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.annotations.muster\.io/dispatch-phase}{"\n"}{end}' | grep -c '^g-[0-9]* Succeeded$')" -eq 25 ]; }
wait_for converged-after-410 300 gdone

grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" && bad "sanitizer" || ok
hasnt "no 403 for the dispatcher" "$T/d.log" "HTTP 403"
hasnt "no 403 for the agent" "$T/agent.log" "HTTP 403"
done_
