#!/bin/sh
# dispatch_reclaim_kinds.sh - `muster dispatch --reclaim` with a victim
# that is not a batch/v1 Job (docs/dispatch.md, "Reclaim across
# clusters: the leftovers", round 14).  A hub `muster up` and one push
# worker, big (1 x 8 GPUs, its own `muster scheduler`, the JobSet CRD of
# ../shared/data on both); hub Queues team-a and team-b deserve 4 GPUs
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
	w "$n" wait --for=condition=Established crd --all --timeout=60s >/dev/null && ok || bad "CRD on $n"
done
reclaim_wire big push
wait_for big-serves-JobSet 100 serves big JobSet

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

hasnt "no 403" "$T/d.log" "HTTP 403"
hasnt "no sanitizer report" "$T/d.log" "runtime error"
hasnt "no ASan report" "$T/d.log" "AddressSanitizer"
done_
