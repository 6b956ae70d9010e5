#!/bin/sh
# dispatch_reclaim_kinds.sh - `muster dispatch --reclaim` with a victim
# that is not a batch/v1 Job (docs/dispatch.md, "Reclaim across
# clusters: the leftovers", round 14).  A hub `muster up` and one push
# worker, big (1 x 8 GPUs, its own `muster scheduler`, the JobSet and
# PyTorchJob CRDs of ../shared/data on both); hub Queues team-a and team-b deserve 4 GPUs
# each; the dispatcher runs with --reclaim --min-runtime 3s as the account
# of deploy/dispatch-rbac.yaml.  Checked:
#   - team-a's JobSet js (managedBy muster.io/dispatch, one 8-GPU pod)
#     goes to big;
#   - team-b's Job b (2 GPUs) fits nowhere; js is withdrawn for it: the
#     hub JobSet gets the Warning Event Preempted, the records
#     muster.io/dispatch-preempted and -preempted-for, and in its status
#     (the hub's, managedBy) the condition Preempted, True, reason
#     InCohortReclamation, with a message naming b and a
#     lastTransitionTime (metav1.Condition's required fields); its copy on
#     big is deleted before it is back on the hub (Queued, requeued);
#   - b goes to big; js (8 GPUs) then waits, still Preempted True;
#   - (round 23) js deleted, team-a's elastic PyTorchJob pt (only a Worker
#     replica type, six 1-GPU workers, elasticPolicy minReplicas 2) goes to
#     big; team-b's 2-GPU Job b2 shrinks pt's copy there (its Worker
#     replicas 6 to 4, the field the training operator scales by) instead
#     of taking it whole: the Event Shrunk and the record
#     muster.io/dispatch-shrunk on pt, pt still on big and not Preempted,
#     its intent cleared, no other withdrawal, b2 to big;
#   - the log holds no 403 or sanitizer report.
# Without ../shared/data it prints that it skipped.
# Usage: sh tests/e2e/dispatch_reclaim_kinds.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-reclaim-kinds: N passed, N failed".
E2E_NAME=dispatch-reclaim-kinds; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
. "$(dirname "$0")/lib/reclaim.sh"
fleet_needs_crds

reclaim_start big
for n in hub big; do
	w "$n" create -f "$W/crds/jobset.x-k8s.io_jobsets.yaml" >/dev/null && ok || bad "JobSet CRD on $n"
	w "$n" create -f "$W/crds/kubeflow.org_pytorchjobs.yaml" >/dev/null && ok || bad "PyTorchJob CRD on $n"
	w "$n" wait --for=condition=Established crd --all --timeout=60s >/dev/null && ok || bad "CRD on $n"
done
reclaim_wire big push
wait_for big-serves-JobSet 100 serves big JobSet
wait_for big-serves-PyTorchJob 100 serves big PyTorchJob

# --- team-a's JobSet fills big ------------------------------------------------
cat >"$T/js.yaml" <<JS
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/duration: 600s}
spec:
  managedBy: muster.io/dispatch
  suspend: true
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        template:
          spec:
            schedulerName: muster
            restartPolicy: Never
            containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "8"}}}]
JS
expect "JobSet js on the hub" 0 h create -f "$T/js.yaml"
wait_for js-to-big 100 ann_is jobset js cluster big
has_copy() { [ -n "$(w big get jobset js -o name)" ]; }
wait_for js-copy 100 has_copy
sleep 3 # past the minimum runtime

# --- team-b's Job b takes the room back from js ------------------------------
job b team-b 2 600s >"$T/b.yaml"
expect "team-b's job b" 0 h apply -f "$T/b.yaml"
cond() { hget jobset js "{.status.conditions[?(@.type==\"Preempted\")].$1}"; }
pre() { [ "$(cond reason)" = InCohortReclamation ]; }
wait_for js-preempted 150 pre || echo "  js: status $(hget jobset js '{.status}')"
[ "$(cond status)" = True ] && ok || bad "Preempted status '$(cond status)', not True"
cond message | grep -q "to make room for default/b of queue team-b" && ok || bad "message: $(cond message)"
[ -n "$(cond lastTransitionTime)" ] && ok || bad "no lastTransitionTime"
ann jobset js dispatch-preempted | grep -q "^InCohortReclamation	Preempted on cluster big" && ok ||
	bad "record: $(ann jobset js dispatch-preempted)"
ann_is jobset js dispatch-preempted-for default/b && ok || bad "preempted-for: $(ann jobset js dispatch-preempted-for)"
ev() { h get events -n default -o jsonpath='{range .items[?(@.reason=="Preempted")]}{.involvedObject.kind}/{.involvedObject.name}{"\n"}{end}' && grep -qx JobSet/js "$T/out"; }
wait_for js-preempted-event 50 ev || echo "  events: $(cat "$T/out")"
back() { grep -q "job JobSet:default/js: back to the hub (Preempted)" "$T/d.log"; }
wait_for js-back 150 back
gone() { [ -z "$(w big get jobset js -o name)" ]; }
wait_for js-copy-gone 100 gone
wait_for b-to-big 150 ann_is job b cluster big || echo "  b: $(ann job b dispatch-reason): $(ann job b dispatch-message)"
# js waits (8 GPUs, 6 free): still Preempted True, on the hub only
queued() { ann_is jobset js dispatch-phase Queued; }
wait_for js-queued 100 queued || echo "  js: $(ann jobset js dispatch-phase)"
sleep 1
[ "$(cond status)" = True ] && ok || bad "Preempted status after the requeue '$(cond status)'"
gone && ok || bad "a copy of js on big while it waits"
[ "$(grep -c 'Preempted on cluster' "$T/d.log")" -eq 1 ] && ok || bad "withdrawals: $(grep -c 'Preempted on cluster' "$T/d.log")"

# --- round 23: an elastic PyTorchJob's surplus workers, not the job ---------
# js off the hub; team-a's PyTorchJob pt (elasticPolicy minReplicas 2, only
# a Worker replica type of six 1-GPU pods) takes big's six free GPUs; then
# team-b's 2-GPU b2 takes two of pt's workers back: the copy's Worker
# replicas lowered from 6 to 4 (the field the training operator scales
# by), pt still on big and not Preempted, the Event Shrunk, the record.
expect "js off the hub" 0 h delete jobset js
cat >"$T/pt.yaml" <<PT
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/duration: 600s}
spec:
  runPolicy: {suspend: true}
  elasticPolicy: {rdzvBackend: c10d, minReplicas: 2, maxReplicas: 6}
  pytorchReplicaSpecs:
    Worker:
      replicas: 6
      restartPolicy: OnFailure
      template:
        spec:
          schedulerName: muster
          containers: [{name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
PT
expect "PyTorchJob pt on the hub" 0 h create -f "$T/pt.yaml"
wait_for pt-to-big 150 ann_is pytorchjob pt cluster big || echo "  pt: $(ann pytorchjob pt dispatch-reason): $(ann pytorchjob pt dispatch-message)"
ptw() { w big get pytorchjob pt -o 'jsonpath={.spec.pytorchReplicaSpecs.Worker.replicas}'; }
pt6() { [ "$(ptw)" = 6 ]; }
wait_for pt-copy 100 pt6
sleep 3 # past the minimum runtime
job b2 team-b 2 600s >"$T/b2.yaml"
expect "team-b's job b2" 0 h apply -f "$T/b2.yaml"
pt4() { [ "$(ptw)" = 4 ]; }
wait_for pt-shrunk-to-4 150 pt4 || echo "  pt's workers on big: '$(ptw)'"
case "$(ann pytorchjob pt dispatch-shrunk)" in *"	2	InCohortReclamation	Shrunk on cluster big from 6 to 4 pods"*"team-b"*) ok ;;
*) bad "pt's record: '$(ann pytorchjob pt dispatch-shrunk)'" ;; esac
ptev() { h get events -n default -o jsonpath='{range .items[?(@.reason=="Shrunk")]}{.involvedObject.kind}/{.involvedObject.name}{"\n"}{end}' && grep -qx PyTorchJob/pt "$T/out"; }
wait_for pt-shrunk-event 50 ptev || echo "  events: $(cat "$T/out")"
wait_for b2-to-big 150 ann_is job b2 cluster big || echo "  b2: $(ann job b2 dispatch-reason): $(ann job b2 dispatch-message)"
ann_is pytorchjob pt cluster big && ok || bad "pt not on big: '$(ann pytorchjob pt cluster)'"
[ -z "$(ann pytorchjob pt dispatch-preempted)" ] && ok || bad "pt preempted: $(ann pytorchjob pt dispatch-preempted)"
[ "$(grep -c 'Preempted on cluster' "$T/d.log")" -eq 1 ] && ok || bad "withdrawals after pt: $(grep -c 'Preempted on cluster' "$T/d.log")"
[ -z "$(ann pytorchjob pt dispatch-shrinking)" ] && ok || bad "pt's intent left: '$(ann pytorchjob pt dispatch-shrinking)'"

hasnt "no 403" "$T/d.log" "HTTP 403"
hasnt "no sanitizer report" "$T/d.log" "runtime error"
hasnt "no ASan report" "$T/d.log" "AddressSanitizer"
done_
