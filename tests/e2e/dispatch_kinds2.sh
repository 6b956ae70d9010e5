#!/bin/sh
# dispatch_kinds2.sh - `muster dispatch` (docs/dispatch.md, "More kinds:
# round 9") with the kinds added in the ninth round: the coscheduling
# PodGroup (scheduling.x-k8s.io, served by `muster up` itself), Volcano
# Jobs (batch.volcano.sh), RayClusters (ray.io), and a KAI PodGroup's
# sub-groups (their CRDs from ../shared/data/k8s/workloads).  A hub
# `muster up` and two workers (big: 4 x 8 GPUs, region us, push mode, the
# Volcano Job, RayCluster and KAI PodGroup CRDs; small: 2 x 8, region eu,
# pull mode through its `muster dispatch agent`, only the RayCluster CRD),
# each with its own `muster scheduler`; the dispatcher and the agent run
# as the accounts of deploy/dispatch-rbac.yaml and
# deploy/dispatch-agent-rbac.yaml.  Checked:
#   - a coscheduling PodGroup of minMember 2 waits for its pods (label
#     scheduling.x-k8s.io/pod-group), then goes to big with them; they
#     bind, run and succeed there, the hub group is Succeeded with
#     succeeded=2 and its status is the copy's;
#   - a Volcano Job (a master task and a worker task of minAvailable 1)
#     goes to big: its hub object is not given a suspend flag, its copy's
#     task templates are labelled; the pods (this test plays Volcano's job
#     controller) bind and the hub says Running; the copy's
#     status.state.phase Completed makes the hub job Succeeded, with the
#     copy's status; another whose copy is Aborted ends Failed on the hub
#     (round 10), with the copy's status;
#   - a RayCluster is held suspended on the hub (spec.suspend patched to
#     true), goes to big unsuspended without managedBy, its head and worker
#     templates labelled; its pods (this test plays KubeRay) bind and the
#     hub says Running; deleted on the hub, its copy goes;
#   - a RayCluster for small goes there in pull mode (its agent makes the
#     copy) and runs;
#   - a KAI PodGroup of minMember 2 with a sub-group of minMember 2 waits
#     while that sub-group has fewer pods ("1 of the 2 pods of sub-group
#     decode"), though the group's minMember is met, then goes to big
#     with all its pods;
#   - bad input, one per kind, each waits InvalidJob with the kind's own
#     refusal and is sent nowhere: a Volcano task's minAvailable above its
#     replicas, a RayCluster worker group's minReplicas above its
#     maxReplicas, a KAI sub-group whose parent does not exist, a
#     coscheduling group's pod naming a ResourceClaim the hub does not
#     have waits WaitingForResourceClaim (round 16: groups' claims are
#     dispatched, tests/e2e/dispatch_dra_pull.sh);
#   - `muster kexplain` on the hub says where each went (vcjob/vj,
#     podgroups.scheduling.x-k8s.io/default/cpg, raycluster/ray);
#   - neither log holds a 403 or a sanitizer report.
# Without ../shared/data it prints that it skipped.
# Usage: sh tests/e2e/dispatch_kinds2.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-kinds2: N passed, N failed".
E2E_NAME=dispatch-kinds2; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
fleet_needs_crds

XPG=podgroups.scheduling.x-k8s.io; KPG=podgroups.scheduling.run.ai
VJ=jobs.batch.volcano.sh; RC=rayclusters.ray.io

fleet_hub_queue
pool small 2 >"$T/small.yaml"; pool big 4 >"$T/big.yaml"
start hub; start small; start big
for f in batch.volcano.sh_jobs ray.io_rayclusters scheduling.run.ai_podgroups; do
	for n in hub big; do w "$n" create -f "$W/crds/$f.yaml" >/dev/null && ok || bad "CRD $f on $n"; done
done
w small create -f "$W/crds/ray.io_rayclusters.yaml" >/dev/null && ok || bad "RayCluster CRD on small"
for n in hub small big; do
	w "$n" wait --for=condition=Established crd --all --timeout=60s >/dev/null && ok || bad "CRDs on $n"
done
fleet_wire
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 120s --id d1 \
	--no-leader-elect >"$T/d.out" 2>"$T/d.log" &
PIDS="$PIDS $!"
fleet_agent_small
for k in CoschedulingPodGroup VolcanoJob RayCluster KaiPodGroup; do wait_for "big-serves-$k" 100 serves big "$k"; done
for k in CoschedulingPodGroup RayCluster; do wait_for "small-serves-$k" 100 serves small "$k"; done
grep -q "cluster small: serves VolcanoJob" "$T/d.log" && bad "small serves VolcanoJob" || ok

# gpod NAME GPUS DUR ANNOTATIONS LABELS: a pod on the hub, gated
gpod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations: {muster.io/duration: "%s"%s}\n  labels: {app: t%s}\nspec:\n  schedulerName: muster\n  restartPolicy: Never\n  schedulingGates: [{name: muster.io/dispatch}]\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n' \
		"$1" "$3" "$4" "$5" "$2"
}
npods() { [ "$(w "$1" get pods -l "muster.io/hub-uid=$2" -o name | wc -l)" -eq "$3" ]; }
# wpod CLUSTER NAME UID LABELS GPUS: a pod a worker's controller makes
wpod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/hub-uid: "%s", muster.io/dispatch-generation: "1"%s}\nspec:\n  schedulerName: muster\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n' \
		"$2" "$3" "$4" "$5" >"$T/pod.yaml"
	w "$1" create -f "$T/pod.yaml" >/dev/null && ok || bad "pod $2 on $1"
}
invalid() { ann_is "$1" "$2" dispatch-reason InvalidJob && ann "$1" "$2" dispatch-message | grep -q "$3"; }

# --- the coscheduling PodGroup: its pods by label, its minMember ----------------
printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: cpg\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: region=us}\nspec: {minMember: 2, scheduleTimeoutSeconds: 10}\n' >"$T/cpg.yaml"
expect "coscheduling PodGroup on the hub" 0 h create -f "$T/cpg.yaml"
gpod cpg-0 2 4s "" ", scheduling.x-k8s.io/pod-group: cpg" >"$T/p.yaml"
expect "cpg pod 0" 0 h create -f "$T/p.yaml"
c1() { ann_is "$XPG" cpg dispatch-reason WaitingForPods && ann "$XPG" cpg dispatch-message | grep -q "^1 of the 2 pods"; }
wait_for cpg-waits-1-of-2 100 c1
gpod cpg-1 2 4s "" ", scheduling.x-k8s.io/pod-group: cpg" >"$T/p.yaml"
expect "cpg pod 1" 0 h create -f "$T/p.yaml"
wait_for cpg-to-big 100 ann_is "$XPG" cpg cluster big
cuid=$(hget "$XPG" cpg '{.metadata.uid}')
wait_for cpg-2-pods-on-big 100 npods big "$cuid" 2
[ -z "$(hget pod cpg-0 '{.spec.nodeName}')" ] && ok || bad "cpg-0 bound on the hub"
wait_for cpg-succeeded 300 ann_is "$XPG" cpg dispatch-phase Succeeded
ann "$XPG" cpg dispatch-pods | grep -q "succeeded=2" && ok || bad "cpg pods: $(ann "$XPG" cpg dispatch-pods)"
cst() { p=$(w big get "$XPG" cpg -o 'jsonpath={.status.phase}'); [ -n "$p" ] && [ "$(hget "$XPG" cpg '{.status.phase}')" = "$p" ]; }
wait_for cpg-status-back 100 cst || echo "  cpg status: hub '$(hget "$XPG" cpg '{.status}')', big '$(w big get "$XPG" cpg -o 'jsonpath={.status}')'"

# --- a Volcano Job: no suspend flag; its tasks are the gang -------------------
cat >"$T/vj.yaml" <<'EOF'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vj
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  schedulerName: volcano
  queue: default
  tasks:
    - name: master
      replicas: 1
      template:
        spec:
          containers: [{name: m, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
    - name: worker
      replicas: 2
      minAvailable: 1
      template:
        spec:
          containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: "8"}}}]
EOF
expect "Volcano Job on the hub" 0 h create -f "$T/vj.yaml"
wait_for vj-to-big 100 ann_is "$VJ" vj cluster big
vuid=$(hget "$VJ" vj '{.metadata.uid}')
vcopy() { w big get "$VJ" vj -o name | grep -q .; }
wait_for vj-copy 100 vcopy
[ -z "$(hget "$VJ" vj '{.spec.suspend}')" ] && ok || bad "vj on the hub given a suspend flag"
l=$(w big get "$VJ" vj -o 'jsonpath={.spec.tasks[1].template.metadata.labels.muster\.io/hub-uid}')
[ "$l" = "$vuid" ] && ok || bad "vj worker template label: '$l', not '$vuid'"
wpod big vj-master-0 "$vuid" ", volcano.sh/job-name: vj, volcano.sh/task-spec: master" 1
for i in 0 1; do wpod big "vj-worker-$i" "$vuid" ", volcano.sh/job-name: vj, volcano.sh/task-spec: worker" 8; done
vruns() { ann_is "$VJ" vj dispatch-phase Running && ann "$VJ" vj dispatch-pods | grep -q "^bound=3,"; }
wait_for vj-running-on-hub 150 vruns || echo "  vj: $(ann "$VJ" vj dispatch-phase) $(ann "$VJ" vj dispatch-pods)"
w big patch "$VJ" vj --subresource=status --type=merge \
	-p '{"status":{"state":{"phase":"Completed"},"succeeded":3}}' >/dev/null && ok || bad "vj copy status"
wait_for vj-succeeded 150 ann_is "$VJ" vj dispatch-phase Succeeded
vst() { [ "$(hget "$VJ" vj '{.status.state.phase}')" = Completed ]; }
wait_for vj-status-back 100 vst || echo "  vj status on the hub: $(hget "$VJ" vj '{.status}')"
# a Volcano Job whose copy is Aborted (by a user or the error handling on
# the worker: its pods released) has ended on the hub: Failed, its
# status the copy's
sed -e 's/name: vj$/name: vja/' "$T/vj.yaml" >"$T/vja.yaml"
expect "Volcano Job vja on the hub" 0 h create -f "$T/vja.yaml"
wait_for vja-to-big 100 ann_is "$VJ" vja cluster big
vacopy() { w big get "$VJ" vja -o name | grep -q .; }
wait_for vja-copy 100 vacopy
w big patch "$VJ" vja --subresource=status --type=merge \
	-p '{"status":{"state":{"phase":"Aborted","reason":"user","message":"aborted by vcctl"}}}' >/dev/null &&
	ok || bad "vja copy status"
wait_for vja-aborted-is-an-end 150 ann_is "$VJ" vja dispatch-phase Failed ||
	echo "  vja: $(ann "$VJ" vja dispatch-phase)"
vast() { [ "$(hget "$VJ" vja '{.status.state.phase}')" = Aborted ]; }
wait_for vja-status-back 100 vast || echo "  vja status on the hub: $(hget "$VJ" vja '{.status}')"
KX() { "$M" kexplain --kubeconfig "$T/hub/kubeconfig" "$@" >"$T/kx" 2>&1; }
KX vcjob/vj
has kexplain-vj "$T/kx" "Job (batch.volcano.sh) default/vj"
has kexplain-vj-held "$T/kx" "suspended:  (the kind has no suspend: a hub holds it unsent)"
has kexplain-vj-where "$T/kx" "hub:        Succeeded on cluster big"
KX podgroups.scheduling.x-k8s.io/default/cpg
has kexplain-cpg "$T/kx" "Succeeded on cluster big"

# --- a RayCluster: held suspended, one unit, runs until deleted ---------------
rc() { # rc NAME SELECTOR MINREPLICAS MAXREPLICAS
	printf 'apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: %s}\nspec:\n  headGroupSpec:\n    rayStartParams: {}\n    template:\n      spec:\n        schedulerName: muster\n        containers: [{name: head, image: x, resources: {limits: {cpu: "2"}}}]\n  workerGroupSpecs:\n    - groupName: gpu\n      minReplicas: %s\n      maxReplicas: %s\n      rayStartParams: {}\n      template:\n        spec:\n          schedulerName: muster\n          containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: "8"}}}]\n' \
		"$1" "$2" "$3" "$4"
}
rc ray region=us 2 4 >"$T/rc.yaml"
expect "RayCluster on the hub" 0 h create -f "$T/rc.yaml"
wait_for ray-to-big 100 ann_is "$RC" ray cluster big
[ "$(hget "$RC" ray '{.spec.suspend}')" = true ] && ok || bad "ray not held suspended on the hub"
ruid=$(hget "$RC" ray '{.metadata.uid}')
rcopy() { w big get "$RC" ray -o name | grep -q .; }
wait_for ray-copy 100 rcopy
[ "$(w big get "$RC" ray -o 'jsonpath={.spec.suspend}')" = false ] && ok || bad "ray copy suspended"
for p in headGroupSpec workerGroupSpecs[0]; do
	l=$(w big get "$RC" ray -o "jsonpath={.spec.$p.template.metadata.labels.muster\.io/hub-uid}")
	[ "$l" = "$ruid" ] && ok || bad "ray $p label: '$l', not '$ruid'"
done
wpod big ray-head "$ruid" ", ray.io/cluster: ray, ray.io/node-type: head" 0
for i in 0 1; do wpod big "ray-gpu-$i" "$ruid" ", ray.io/cluster: ray, ray.io/node-type: worker, ray.io/group: gpu" 8; done
rruns() { ann_is "$RC" ray dispatch-phase Running && ann "$RC" ray dispatch-pods | grep -q "^bound=3,"; }
wait_for ray-running-on-hub 150 rruns || echo "  ray: $(ann "$RC" ray dispatch-phase) $(ann "$RC" ray dispatch-pods)"
KX raycluster/ray
has kexplain-ray "$T/kx" "RayCluster default/ray"
has kexplain-ray-where "$T/kx" "hub:        Running on cluster big"
# a RayCluster has no end of its own (its state "ready" is no end)
w big patch "$RC" ray --subresource=status --type=merge -p '{"status":{"state":"ready"}}' >/dev/null
sleep 1
ann_is "$RC" ray dispatch-phase Running && ok || bad "ray: $(ann "$RC" ray dispatch-phase) after its state ready"
expect "RayCluster deleted on the hub" 0 h delete "$RC" ray
rgone() { ! w big get "$RC" ray -o name | grep -q .; }
wait_for ray-copy-deleted 100 rgone

# --- a RayCluster in pull mode: small's agent makes the copy -------------------
rc rayeu region=eu 1 1 >"$T/rc.yaml"
expect "RayCluster for small" 0 h create -f "$T/rc.yaml"
wait_for rayeu-to-small 100 ann_is "$RC" rayeu cluster small
euid=$(hget "$RC" rayeu '{.metadata.uid}')
ecopy() { w small get "$RC" rayeu -o name | grep -q .; }
wait_for rayeu-copy-by-agent 150 ecopy
[ "$(w small get "$RC" rayeu -o 'jsonpath={.spec.suspend}')" = false ] && ok || bad "rayeu copy suspended"
wpod small rayeu-head "$euid" ", ray.io/cluster: rayeu, ray.io/node-type: head" 0
wpod small rayeu-gpu-0 "$euid" ", ray.io/cluster: rayeu, ray.io/node-type: worker, ray.io/group: gpu" 8
eruns() { ann_is "$RC" rayeu dispatch-phase Running && ann "$RC" rayeu dispatch-pods | grep -q "^bound=2,"; }
wait_for rayeu-running-on-hub 200 eruns || echo "  rayeu: $(ann "$RC" rayeu dispatch-phase) $(ann "$RC" rayeu dispatch-pods)"

# --- a KAI PodGroup's sub-group minimum is part of its gang --------------------
cat >"$T/kpg.yaml" <<'EOF'
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: kpg
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  minMember: 2
  queue: team-a
  subGroups:
    - {name: prefill, minMember: 1}
    - {name: decode, minMember: 2}
EOF
expect "KAI PodGroup with sub-groups" 0 h create -f "$T/kpg.yaml"
gpod kpg-p0 1 4s ", pod-group-name: kpg" ", kai.scheduler/subgroup-name: prefill" >"$T/p.yaml"
expect "kpg prefill pod" 0 h create -f "$T/p.yaml"
gpod kpg-d0 1 4s ", pod-group-name: kpg" ", kai.scheduler/subgroup-name: decode" >"$T/p.yaml"
expect "kpg decode pod 0" 0 h create -f "$T/p.yaml"
k1() { ann_is "$KPG" kpg dispatch-reason WaitingForPods && ann "$KPG" kpg dispatch-message | grep -q "^1 of the 2 pods of sub-group decode"; }
wait_for kpg-waits-for-decode 100 k1 || echo "  kpg: $(ann "$KPG" kpg dispatch-reason): $(ann "$KPG" kpg dispatch-message)"
[ -z "$(ann "$KPG" kpg cluster)" ] && ok || bad "kpg sent with 1 of decode's 2 pods"
gpod kpg-d1 1 4s ", pod-group-name: kpg" ", kai.scheduler/subgroup-name: decode" >"$T/p.yaml"
expect "kpg decode pod 1" 0 h create -f "$T/p.yaml"
wait_for kpg-to-big 100 ann_is "$KPG" kpg cluster big
kuid=$(hget "$KPG" kpg '{.metadata.uid}')
wait_for kpg-3-pods-on-big 100 npods big "$kuid" 3

# --- bad input, one per kind: its own refusal, sent nowhere --------------------
sed -e 's/name: vj$/name: vjbad/' -e 's/minAvailable: 1/minAvailable: 3/' "$T/vj.yaml" >"$T/vjbad.yaml"
expect "bad Volcano Job on the hub" 0 h create -f "$T/vjbad.yaml"
wait_for vjbad-invalid 100 invalid "$VJ" vjbad "VolcanoJob: spec.tasks\[worker\]: minAvailable 3 must be within its 2 replicas"
rc raybad region=us 3 1 >"$T/rc.yaml"
expect "bad RayCluster on the hub" 0 h create -f "$T/rc.yaml"
wait_for raybad-invalid 100 invalid "$RC" raybad "RayCluster: workerGroupSpecs\[gpu\]: minReplicas 3 must be within 0 and its maxReplicas 1"
sed -e 's/name: kpg$/name: kpgbad/' -e 's/{name: decode, minMember: 2}/{name: decode, minMember: 2, parent: nowhere}/' "$T/kpg.yaml" >"$T/kpgbad.yaml"
expect "bad KAI PodGroup on the hub" 0 h create -f "$T/kpgbad.yaml"
wait_for kpgbad-invalid 100 invalid "$KPG" kpgbad "KaiPodGroup: spec.subGroups\[decode\]: its parent nowhere is no other sub-group"
printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: cpgbad\n  labels: {muster.io/queue: team-a}\nspec: {minMember: 1}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: cpgbad-0\n  labels: {scheduling.x-k8s.io/pod-group: cpgbad}\nspec:\n  schedulerName: muster\n  schedulingGates: [{name: muster.io/dispatch}]\n  resourceClaims: [{name: gpu, resourceClaimName: some-claim}]\n  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]\n' >"$T/cpgbad.yaml"
expect "bad coscheduling group on the hub" 0 h create -f "$T/cpgbad.yaml"
# its pod's claim (round 16: groups' pods with claims are dispatched) is
# not on the hub: it waits for it, and is sent nowhere
cpgw() { ann_is "$XPG" cpgbad dispatch-reason WaitingForResourceClaim && ann "$XPG" cpgbad dispatch-message | grep -q "ResourceClaim default/some-claim not found on the hub"; }
wait_for cpgbad-waits-for-its-claim 100 cpgw
sleep 1
for o in "$VJ vjbad" "$RC raybad" "$KPG kpgbad" "$XPG cpgbad"; do
	set -- $o
	[ -z "$(ann "$1" "$2" cluster)" ] && ok || bad "$2 sent to $(ann "$1" "$2" cluster)"
	[ -z "$(w big get "$1" "$2" -o name)" ] && ok || bad "$2 has a copy on big"
done

grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" "$T/agent.log" && bad "sanitizer" || ok
hasnt "no 403 for the dispatcher" "$T/d.log" "HTTP 403"
hasnt "no 403 for the agent" "$T/agent.log" "HTTP 403"
done_
