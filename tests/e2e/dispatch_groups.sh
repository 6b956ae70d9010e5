#!/bin/sh
# dispatch_groups.sh - `muster dispatch` (docs/dispatch.md, "Kinds without
# suspend") with LeaderWorkerSets and the PodGroups of muster, Volcano and
# KAI (their CRDs from ../shared/data/k8s/workloads): a hub `muster up` and
# two workers (big: 4 x 8 GPUs, region us, push mode, every CRD; small:
# 2 x 8, region eu, pull mode through its `muster dispatch agent`, only
# KAI's PodGroup CRD), each with its own `muster scheduler`; the
# dispatcher and the agent run as the accounts of deploy/dispatch-rbac.yaml
# and deploy/dispatch-agent-rbac.yaml.  Checked:
#   - a muster PodGroup of minMember 3 waits on the hub (WaitingForPods,
#     saying how many of its pods are there) until its third pod is
#     created; then it goes to big with its pods, which were gated on the
#     hub (schedulingGates muster.io/dispatch) and are not on big: they
#     bind there, run (muster.io/duration) and succeed; the hub PodGroup
#     is Succeeded with succeeded=3, its status is the copy's;
#   - a Volcano PodGroup of two 8-GPU workers goes to big; a third pod
#     created on the hub after it was sent follows it there (and is
#     counted), and the group succeeds with its three pods;
#   - a KAI PodGroup for small goes there in pull mode: its agent creates
#     the group and its pods, reports them and the copy's status (the hub
#     object's status becomes the copy's), and the hub sees Succeeded;
#   - a LeaderWorkerSet (2 groups of size 2) goes to big as one unit: its
#     copy has no suspend flag, its leader and worker templates are
#     labelled; the pods (this test plays the LWS controller, naming them
#     NAME-G and NAME-G-W as it does) bind and the hub says Running with
#     bound=4; deleted on the hub, its copy goes;
#   - a PodGroup deleted on the hub has its copy and its pods deleted on
#     the worker (stale);
#   - `muster kexplain` on the hub says why a group waits and where each
#     kind went (podgroup/, podgroups.scheduling.volcano.sh/NS/, lws/, ...);
#   - the dispatcher's page /ui/ answers 401 without its token (or with a
#     wrong one) and, with it (header or ?token=), lists the clusters and
#     the hub's jobs with their phase and cluster;
#   - neither log holds a 403 or a sanitizer report.
# Without ../shared/data it prints that it skipped.
# Usage: sh tests/e2e/dispatch_groups.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-groups: N passed, N failed".
E2E_NAME=dispatch-groups; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
fleet_needs_crds

# the resources, as kubectl names them (three kinds are called PodGroup)
MPG=podgroups.muster.io; VPG=podgroups.scheduling.volcano.sh; KPG=podgroups.scheduling.run.ai
LWS=leaderworkersets.leaderworkerset.x-k8s.io

fleet_hub_queue
pool small 2 >"$T/small.yaml"; pool big 4 >"$T/big.yaml"
start hub; start small; start big
for f in scheduling.volcano.sh_podgroups scheduling.run.ai_podgroups leaderworkerset.x-k8s.io_leaderworkersets; do
	for n in hub big; do w "$n" create -f "$W/crds/$f.yaml" >/dev/null && ok || bad "CRD $f on $n"; done
done
w small create -f "$W/crds/scheduling.run.ai_podgroups.yaml" >/dev/null && ok || bad "KAI CRD on small"
for n in hub small big; do
	w "$n" wait --for=condition=Established crd --all --timeout=60s >/dev/null && ok || bad "CRDs on $n"
done
fleet_wire
printf 'ui-secret-%s\n' "$$" >"$T/tok"
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 120s --id d1 \
	--no-leader-elect --metrics 127.0.0.1:0 --token-file "$T/tok" >"$T/d.out" 2>"$T/d.log" &
PIDS="$PIDS $!"
fleet_agent_small
for k in PodGroup VolcanoPodGroup KaiPodGroup LeaderWorkerSet; do wait_for "big-serves-$k" 100 serves big "$k"; done
wait_for small-serves-KaiPodGroup 100 serves small KaiPodGroup
grep -q "cluster small: serves VolcanoPodGroup" "$T/d.log" && bad "small serves VolcanoPodGroup" || ok

# gpod NAME GPUS DUR META: a pod on the hub, gated, with metadata lines META
gpod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations: {muster.io/duration: "%s"%s}\n  labels: {app: t%s}\nspec:\n  schedulerName: muster\n  restartPolicy: Never\n  schedulingGates: [{name: muster.io/dispatch}]\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n' \
		"$1" "$3" "$4" "$5" "$2"
}

# --- a muster PodGroup: waits for its pods, then goes with them -----------------
printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: mpg\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: region=us}\nspec: {minMember: 3, queue: team-a}\n' >"$T/mpg.yaml"
expect "muster PodGroup on the hub" 0 h create -f "$T/mpg.yaml"
wait_for mpg-waits 100 ann_is "$MPG" mpg dispatch-reason WaitingForPods
for i in 0 1; do
	gpod "mpg-$i" 1 4s "" ", muster.io/pod-group: mpg" >"$T/p.yaml"
	expect "mpg pod $i" 0 h create -f "$T/p.yaml"
done
m2() { ann "$MPG" mpg dispatch-message | grep -q "^2 of the 3 pods"; }
wait_for mpg-says-2-of-3 100 m2
"$M" kexplain --kubeconfig "$T/hub/kubeconfig" podgroup/mpg >"$T/kx" 2>&1
has kexplain-mpg "$T/kx" "PodGroup default/mpg"
has kexplain-mpg-waits "$T/kx" "waits:      WaitingForPods: 2 of the 3 pods"
sleep 1
[ -z "$(ann "$MPG" mpg cluster)" ] && ok || bad "mpg sent with 2 of its 3 pods"
[ -z "$(w big get "$MPG" mpg -o name)" ] && ok || bad "a copy of mpg before its pods"
gpod mpg-2 1 4s "" ", muster.io/pod-group: mpg" >"$T/p.yaml"
expect "mpg pod 2" 0 h create -f "$T/p.yaml"
wait_for mpg-to-big 100 ann_is "$MPG" mpg cluster big
muid=$(hget "$MPG" mpg '{.metadata.uid}')
mcopy() { [ "$(w big get "$MPG" mpg -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$muid" ]; }
wait_for mpg-copy 100 mcopy
npods() { [ "$(w "$1" get pods -l "muster.io/hub-uid=$2" -o name | wc -l)" -eq "$3" ]; }
wait_for mpg-3-pods-on-big 100 npods big "$muid" 3
[ -z "$(w big get pod mpg-0 -o 'jsonpath={.spec.schedulingGates}')" ] && ok || bad "mpg-0 kept its gate on big"
[ -z "$(w small get pod mpg-0 -o name)" ] && ok || bad "mpg-0 on small"
[ -z "$(hget pod mpg-0 '{.spec.nodeName}')" ] && ok || bad "mpg-0 bound on the hub"
[ "$(hget pod mpg-0 '{.spec.schedulingGates[0].name}')" = muster.io/dispatch ] && ok || bad "mpg-0 not gated on the hub"
wait_for mpg-succeeded 300 ann_is "$MPG" mpg dispatch-phase Succeeded
ann "$MPG" mpg dispatch-pods | grep -q "succeeded=3" && ok || bad "mpg pods: $(ann "$MPG" mpg dispatch-pods)"
# its status is the copy's (the worker's muster writes the group's phase)
wst=$(w big get "$MPG" mpg -o 'jsonpath={.status.phase}')
mst() { [ -n "$wst" ] && [ "$(hget "$MPG" mpg '{.status.phase}')" = "$(w big get "$MPG" mpg -o 'jsonpath={.status.phase}')" ]; }
wait_for mpg-status-back 100 mst || echo "  mpg status: hub '$(hget "$MPG" mpg '{.status.phase}')', big '$wst'"

# --- a Volcano PodGroup; a pod that comes after it was sent follows it ---------
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: vpg\n  labels: {muster.io/queue: team-a}\nspec: {minMember: 2, queue: default}\n' >"$T/vpg.yaml"
expect "Volcano PodGroup on the hub" 0 h create -f "$T/vpg.yaml"
for i in 0 1; do
	gpod "vpg-worker-$i" 8 20s ", scheduling.k8s.io/group-name: vpg, volcano.sh/task-spec: worker" "" >"$T/p.yaml"
	expect "vpg pod $i" 0 h create -f "$T/p.yaml"
done
wait_for vpg-to-big 100 ann_is "$VPG" vpg cluster big
vuid=$(hget "$VPG" vpg '{.metadata.uid}')
wait_for vpg-2-pods-on-big 100 npods big "$vuid" 2
gpod vpg-late 1 10s ", scheduling.k8s.io/group-name: vpg, volcano.sh/task-spec: late" "" >"$T/p.yaml"
expect "vpg late pod" 0 h create -f "$T/p.yaml"
wait_for vpg-late-on-big 100 npods big "$vuid" 3
[ "$(w big get pod vpg-late -o 'jsonpath={.metadata.labels.muster\.io/dispatch-generation}')" = \
	"$(ann "$VPG" vpg dispatch-generation)" ] && ok || bad "vpg-late: not of the group's generation"
wait_for vpg-succeeded 300 ann_is "$VPG" vpg dispatch-phase Succeeded
ann "$VPG" vpg dispatch-pods | grep -q "succeeded=3" && ok || bad "vpg pods: $(ann "$VPG" vpg dispatch-pods)"
"$M" kexplain --kubeconfig "$T/hub/kubeconfig" podgroups.scheduling.volcano.sh/default/vpg >"$T/kx" 2>&1
has kexplain-vpg "$T/kx" "hub:        Succeeded on cluster big (dispatch generation 1)"
has kexplain-vpg-pods "$T/kx" "succeeded=3"

# --- the web page /ui/: behind the token, the clusters and the hub's jobs -------
murl=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/d.log" | tail -n 1)
code() { command curl -s -o "$T/ui.html" -w '%{http_code}' "$@"; }
[ "$(code "$murl/ui/")" = 401 ] && ok || bad "/ui/ without the token: not 401"
[ "$(code "$murl/ui/?token=wrong")" = 401 ] && ok || bad "/ui/ with a wrong token: not 401"
[ "$(code "$murl/metrics")" = 200 ] && ok || bad "/metrics needs no token"
[ "$(code -H "Authorization: Bearer $(cat "$T/tok")" "$murl/ui/")" = 200 ] && ok || bad "/ui/ with the token"
has ui-big "$T/ui.html" "<tr><td>big</td><td>private</td><td>push</td><td>Ready</td><td class=\"num\">32</td>"
has ui-small "$T/ui.html" "<tr><td>small</td><td>private</td><td>pull</td><td>Ready</td>"
has ui-vpg "$T/ui.html" "<tr><td>VolcanoPodGroup:default/vpg</td><td>team-a</td><td>Succeeded</td><td>big</td>"
[ "$(code "$murl/ui/?token=$(cat "$T/tok")")" = 200 ] && ok || bad "/ui/?token="
has ui-mpg "$T/ui.html" "PodGroup:default/mpg"

# --- a KAI PodGroup in pull mode: small's agent makes the group and its pods ---
printf 'apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: kpg\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: region=eu}\nspec: {minMember: 2, queue: team-a}\n' >"$T/kpg.yaml"
expect "KAI PodGroup on the hub" 0 h create -f "$T/kpg.yaml"
for i in 0 1; do
	gpod "kpg-$i" 4 4s ", pod-group-name: kpg" "" >"$T/p.yaml"
	expect "kpg pod $i" 0 h create -f "$T/p.yaml"
done
wait_for kpg-to-small 100 ann_is "$KPG" kpg cluster small
kuid=$(hget "$KPG" kpg '{.metadata.uid}')
kcopy() { w small get "$KPG" kpg -o name | grep -q .; }
wait_for kpg-copy-by-agent 100 kcopy
wait_for kpg-2-pods-on-small 150 npods small "$kuid" 2
[ -z "$(w big get pod kpg-0 -o name)" ] && ok || bad "kpg-0 on big"
# the copy's status comes back through the agent (pull mode)
w small patch "$KPG" kpg --subresource=status --type=merge -p '{"status":{"phase":"Running","running":2}}' >/dev/null &&
	ok || bad "status of kpg's copy"
kst() { [ "$(hget "$KPG" kpg '{.status.running}')" = 2 ] && [ "$(hget "$KPG" kpg '{.status.phase}')" = Running ]; }
wait_for kpg-status-back-pull 150 kst || echo "  kpg status on the hub: $(hget "$KPG" kpg '{.status}')"
wait_for kpg-succeeded 300 ann_is "$KPG" kpg dispatch-phase Succeeded

# --- a LeaderWorkerSet: one unit; this test plays the LWS controller -----------
cat >"$T/lws.yaml" <<'EOF'
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lws
  labels: {muster.io/queue: team-a}
  annotations: {muster.io/cluster-selector: region=us}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        schedulerName: muster
        containers: [{name: l, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]
    workerTemplate:
      spec:
        schedulerName: muster
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]
EOF
expect "LeaderWorkerSet on the hub" 0 h create -f "$T/lws.yaml"
wait_for lws-to-big 100 ann_is "$LWS" lws cluster big
luid=$(hget "$LWS" lws '{.metadata.uid}')
lcopy() { w big get "$LWS" lws -o name | grep -q .; }
wait_for lws-copy 100 lcopy
[ -z "$(w big get "$LWS" lws -o 'jsonpath={.spec.suspend}')" ] && ok || bad "lws copy has a suspend flag"
for t in leaderTemplate workerTemplate; do
	l=$(w big get "$LWS" lws -o "jsonpath={.spec.leaderWorkerTemplate.$t.metadata.labels.muster\.io/hub-uid}")
	[ "$l" = "$luid" ] && ok || bad "lws $t label: '$l', not '$luid'"
done
# the LWS controller's pods: NAME-G (leader of group G) and NAME-G-W
lcuid=$(w big get "$LWS" lws -o 'jsonpath={.metadata.uid}')
lpod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/hub-uid: "%s", muster.io/dispatch-generation: "1", leaderworkerset.sigs.k8s.io/name: lws, leaderworkerset.sigs.k8s.io/group-index: "%s", leaderworkerset.sigs.k8s.io/worker-index: "%s"}\n  ownerReferences: [{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: lws, uid: "%s", controller: true}]\nspec:\n  schedulerName: muster\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]\n' \
		"$1" "$luid" "$2" "$3" "$lcuid" >"$T/pod.yaml"
	w big create -f "$T/pod.yaml" >/dev/null && ok || bad "lws pod $1"
}
for g in 0 1; do lpod "lws-$g" "$g" 0; lpod "lws-$g-1" "$g" 1; done
lruns() { ann_is "$LWS" lws dispatch-phase Running && ann "$LWS" lws dispatch-pods | grep -q "^bound=4,"; }
wait_for lws-running-on-hub 150 lruns || echo "  lws: $(ann "$LWS" lws dispatch-phase) $(ann "$LWS" lws dispatch-pods)"
"$M" kexplain --kubeconfig "$T/hub/kubeconfig" lws/lws >"$T/kx" 2>&1
has kexplain-lws "$T/kx" "LeaderWorkerSet default/lws"
has kexplain-lws-where "$T/kx" "hub:        Running on cluster big"
"$M" kexplain --kubeconfig "$T/hub/kubeconfig" podgroup.scheduling.run.ai/kpg >"$T/kx" 2>&1
has kexplain-kpg "$T/kx" "Succeeded on cluster small"
expect "LeaderWorkerSet deleted on the hub" 0 h delete "$LWS" lws
lgone() { ! w big get "$LWS" lws -o name | grep -q .; }
wait_for lws-copy-deleted 100 lgone

# --- a group deleted on the hub: its copy and its pods go ----------------------
expect "mpg deleted on the hub" 0 h delete "$MPG" mpg
mgone() { ! w big get "$MPG" mpg -o name | grep -q . && npods big "$muid" 0; }
wait_for mpg-copy-and-pods-deleted 150 mgone

grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" "$T/agent.log" && bad "sanitizer" || ok
hasnt "no 403 for the dispatcher" "$T/d.log" "HTTP 403"
hasnt "no 403 for the agent" "$T/agent.log" "HTTP 403"
done_
