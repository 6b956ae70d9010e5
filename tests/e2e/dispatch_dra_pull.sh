#!/bin/sh
# dispatch_dra_pull.sh - DRA claims for a pull-mode worker (docs/dispatch.md,
# round 16): its `muster dispatch agent` reports the worker's
# ResourceSlices, DeviceClasses and allocated ResourceClaims in its
# heartbeat, the hub models them as a push worker's, and the agent copies
# the ResourceClaimTemplates and ResourceClaims a job names before the
# job.  A hub `muster up` and two workers of two CPU nodes each, with
# their own `muster scheduler`: small (pull mode, through its agent; the
# DeviceClass gpu.example.com and a ResourceSlice of four devices on
# small-1) and big (push mode, no devices).  The dispatcher and the agent
# run as the accounts of deploy/dispatch-rbac.yaml and
# deploy/dispatch-agent-rbac.yaml.  Checked:
#   - the heartbeat's data.dra holds small's slice, cut to what the
#     allocator reads (no uid, no managedFields);
#   - a Job whose pod template names the hub's ResourceClaimTemplate gpu-t
#     goes to small (the only cluster with the devices); the agent made
#     gpu-t's copy gpu-t-UID8-1 there, labelled with the hub uid, and the
#     copy's pod template names it; big has no template; small's claim
#     controller makes the pod's claim, its scheduler allocates it on
#     small-1 and binds the pod there;
#   - a Job whose pod template names the hub's ResourceClaim shared-c
#     goes to small with its copy shared-c-UID8-1, which is allocated on
#     small-1 and its pod bound there;
#   - a coscheduling PodGroup whose two pods claim from gpu-t goes to
#     small; each pod sent names the group's copy of gpu-t, and both bind
#     on small-1 with their claims allocated;
#   - deleting the first Job on the hub deletes its copy and its copied
#     template on small; the group's copy of gpu-t stays;
#   - no 403 and no sanitizer report in the dispatcher's or the agent's log.
#   - round 17: a Job whose template's copy name is taken on small by a
#     user's object ends NotAdmitted at once (the agent's refusal,
#     muster.io/dispatch-copy-refused), with the agent's reason, not at
#     --start-timeout (30 minutes here); the user's object is left as
#     it was.
#   - round 21: a coscheduling group's late pod whose template's copy name
#     a user's object takes on small is held, not the group (the agent's
#     muster.io/dispatch-pods-refused, the hub's Events once and its
#     muster.io/dispatch-held), across a kill -9 of the dispatcher, and
#     created once that object is deleted on small;
#   - round 22: across a kill -9 of the agent too (its hold read back from
#     its own entry on the hub: not tried, not logged again), and tried
#     again (once, refused, held) when the hub template it names changes.
#   - round 23: that template deleted on the hub: plg-1 stays held, not
#     tried, not released; made again: tried once, still told once.
# Usage: sh tests/e2e/dispatch_dra_pull.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-dra-pull: N passed, N failed".
E2E_NAME=dispatch-dra-pull; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

fleet_hub_queue
for n in small big; do
	printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: cpu}\nspec:\n  count: 2\n  namePrefix: %s-\n  allocatable: {cpu: "16", memory: 64Gi}\n---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n' \
		"$n" >"$T/$n.yaml"
done
start hub; start small; start big
cat >"$T/dev.yaml" <<'Y'
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: small-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: small-1
  pool: {name: small-1, generation: 1, resourceSliceCount: 1}
  devices:
    - {name: gpu-0, basic: {attributes: {model: {string: A100}}}}
    - {name: gpu-1, basic: {attributes: {model: {string: A100}}}}
    - {name: gpu-2, basic: {attributes: {model: {string: A100}}}}
    - {name: gpu-3, basic: {attributes: {model: {string: A100}}}}
Y
expect "small's devices" 0 w small apply -f "$T/dev.yaml"
fleet_wire
# (--start-timeout 30m: a refusal must not wait for it, round 17)
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 30m --id d1 --no-leader-elect \
	>"$T/d.out" 2>"$T/d.log" &
DPID=$!
PIDS="$PIDS $!"
fleet_agent_small

# the heartbeat's DRA report: small's slice, cut
hb() { "$KC" --kubeconfig "$T/hub/kubeconfig" -n muster-system get configmap muster-cluster-small -o 'jsonpath={.data.dra}' 2>/dev/null; }
hb_has_slice() { hb | grep -q '"small-1-gpus"'; }
wait_for heartbeat-dra 150 hb_has_slice || echo "  data.dra: $(hb | cut -c1-300)"
hb | grep -q '"uid"\|managedFields' && bad "data.dra not cut: $(hb | cut -c1-300)" || ok
echo "  data.dra: $(hb | wc -c) bytes (one slice of four devices, one class, no claim)"

tpl() {
	printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: %s, namespace: default}\nspec:\n  spec:\n    devices:\n      requests: [{name: gpu, deviceClassName: %s}]\n' \
		"$1" "$2" >"$T/t.yaml"
	expect "template $1" 0 h apply -f "$T/t.yaml"
}
# job NAME FIELD OBJECT: a hub Job of one pod whose claim gpu names OBJECT
# (FIELD: resourceClaimTemplateName or resourceClaimName)
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      resourceClaims: [{name: gpu, %s: %s}]\n      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]\n' \
		"$1" "$2" "$3" >"$T/j.yaml"
	expect "hub Job $1" 0 h create -f "$T/j.yaml"
}
uid8() { hget "$1" "$2" '{.metadata.uid}' | cut -c1-8; }
wtpls() { w "$1" get resourceclaimtemplates -o 'jsonpath={.items[*].metadata.name}'; }
has_tpl() { wtpls "$1" | tr ' ' '\n' | grep -qx "$2"; }
# salloc: the device and pool of each of small's allocated claims
salloc() { w small get resourceclaims -o 'jsonpath={range .items[*]}{.metadata.name}={.status.allocation.devices.results[0].device}@{.status.allocation.devices.results[0].pool}{" "}{end}'; }
# pclaim UID: the claim small's first pod of hub uid UID got
pclaim() { w small get pods -l "muster.io/hub-uid=$1" -o 'jsonpath={.items[0].status.resourceClaimStatuses[0].resourceClaimName}'; }
allocated() { [ -n "$1" ] && w small get resourceclaims "$1" -o 'jsonpath={.status.allocation.devices.results[0].pool}' | grep -qx small-1; }
pods_on() { w small get pods -l "muster.io/hub-uid=$1" -o 'jsonpath={range .items[*]}{.spec.nodeName}{" "}{end}'; }

# --- a template claim: to small, its template copied there by the agent -----
tpl gpu-t gpu.example.com
job j1 resourceClaimTemplateName gpu-t
wait_for j1-to-small 150 ann_is job j1 cluster small || echo "  j1: $(ann job j1 cluster) $(ann job j1 dispatch-reason) $(ann job j1 dispatch-message)"
U1=$(uid8 job j1); UID1=$(hget job j1 '{.metadata.uid}')
wait_for j1-template-on-small 100 has_tpl small "gpu-t-$U1-1" || echo "  small: $(wtpls small)"
[ "$(w small get resourceclaimtemplates "gpu-t-$U1-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$UID1" ] && ok ||
	bad "j1's template copy: not labelled with the hub uid"
[ "$(w small get job j1 -o 'jsonpath={.spec.template.spec.resourceClaims[0].resourceClaimTemplateName}')" = "gpu-t-$U1-1" ] && ok ||
	bad "j1's copy names $(w small get job j1 -o 'jsonpath={.spec.template.spec.resourceClaims[0].resourceClaimTemplateName}')"
[ -z "$(wtpls big)" ] && ok || bad "big has templates: $(wtpls big)"
j1_alloc() { allocated "$(pclaim "$UID1")"; }
wait_for j1-claim-allocated-on-small-1 150 j1_alloc || echo "  claims: $(salloc)"
j1_bound() { [ "$(pods_on "$UID1")" = "small-1 " ]; }
wait_for j1-pod-on-small-1 150 j1_bound || echo "  j1's pod on: $(pods_on "$UID1")"

# --- a named claim: its copy on small, allocated there --------------------------
printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: shared-c, namespace: default}\nspec:\n  devices:\n    requests: [{name: gpu, deviceClassName: gpu.example.com}]\n' >"$T/c.yaml"
expect "hub claim shared-c" 0 h apply -f "$T/c.yaml"
job j2 resourceClaimName shared-c
wait_for j2-to-small 150 ann_is job j2 cluster small || echo "  j2: $(ann job j2 cluster) $(ann job j2 dispatch-reason) $(ann job j2 dispatch-message)"
U2=$(uid8 job j2); UID2=$(hget job j2 '{.metadata.uid}')
c2_there() { [ -n "$(w small get resourceclaims "shared-c-$U2-1" -o name)" ]; }
wait_for j2-claim-copy-on-small 100 c2_there || echo "  claims: $(salloc)"
[ "$(w small get resourceclaims "shared-c-$U2-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$UID2" ] && ok ||
	bad "j2's claim copy: not labelled with the hub uid"
j2_alloc() { allocated "shared-c-$U2-1"; }
wait_for j2-claim-allocated-on-small-1 150 j2_alloc || echo "  claims: $(salloc)"
j2_bound() { [ "$(pods_on "$UID2")" = "small-1 " ]; }
wait_for j2-pod-on-small-1 150 j2_bound || echo "  j2's pod on: $(pods_on "$UID2")"
[ -z "$(hget resourceclaim shared-c '{.status.allocation}')" ] && ok || bad "the hub's shared-c was allocated"

# --- a coscheduling PodGroup whose pods claim devices ---------------------------
XPG=podgroups.scheduling.x-k8s.io
printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: cpg\n  labels: {muster.io/queue: team-a}\nspec: {minMember: 2}\n' >"$T/cpg.yaml"
expect "PodGroup cpg on the hub" 0 h create -f "$T/cpg.yaml"
for i in 0 1; do
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: cpg-%s\n  labels: {scheduling.x-k8s.io/pod-group: cpg}\nspec:\n  schedulerName: muster\n  restartPolicy: Never\n  schedulingGates: [{name: muster.io/dispatch}]\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-t}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]\n' \
		"$i" >"$T/p.yaml"
	expect "cpg pod $i" 0 h create -f "$T/p.yaml"
done
wait_for cpg-to-small 150 ann_is "$XPG" cpg cluster small || echo "  cpg: $(ann "$XPG" cpg cluster) $(ann "$XPG" cpg dispatch-reason) $(ann "$XPG" cpg dispatch-message)"
UC=$(uid8 "$XPG" cpg); UIDC=$(hget "$XPG" cpg '{.metadata.uid}')
wait_for cpg-template-on-small 100 has_tpl small "gpu-t-$UC-1" || echo "  small: $(wtpls small)"
cpg_names() { w small get pods -l "muster.io/hub-uid=$UIDC" -o 'jsonpath={range .items[*]}{.spec.resourceClaims[0].resourceClaimTemplateName}{" "}{end}'; }
cpg_two() { [ "$(cpg_names)" = "gpu-t-$UC-1 gpu-t-$UC-1 " ]; }
wait_for cpg-pods-name-the-copy 100 cpg_two || echo "  cpg's pods name: $(cpg_names)"
cpg_bound() { [ "$(pods_on "$UIDC")" = "small-1 small-1 " ]; }
wait_for cpg-pods-on-small-1 150 cpg_bound || echo "  cpg's pods on: $(pods_on "$UIDC"); claims: $(salloc)"
n_alloc() { salloc | tr ' ' '\n' | grep -c '@small-1$'; }
four() { [ "$(n_alloc)" -eq 4 ]; }
wait_for four-claims-allocated 100 four || echo "  claims: $(salloc)"

# --- the hub Job deleted: its copy and its template go, the group's stay ------
expect "delete j1" 0 h delete job j1
j1_gone() { ! has_tpl small "gpu-t-$U1-1" && [ -z "$(w small get jobs j1 -o name 2>/dev/null)" ]; }
wait_for j1-copies-gone 150 j1_gone || echo "  small: $(wtpls small); $(w small get jobs -o name)"
has_tpl small "gpu-t-$UC-1" && ok || bad "cpg's template copy went with j1's"
grep -q "stale ResourceClaimTemplate default/gpu-t-$U1-1 (generation 1) deleted" "$T/agent.log" && ok ||
	bad "the agent did not say it deleted gpu-t-$U1-1"

# --- round 17: a refusal by the agent ends the job NotAdmitted at once ---------
# j3 names template rt, not on the hub yet: it waits; a user's template of
# the name its copy will have (rt-UID8-1) is put on small first; rt made on
# the hub, j3 goes to small (a device is free again), the agent does not
# overwrite the user's object and reports it; the hub ends j3 NotAdmitted
# with the agent's reason, not at --start-timeout (30 minutes here)
job j3 resourceClaimTemplateName rt
wait_for j3-waits 100 ann_is job j3 dispatch-reason WaitingForResourceClaimTemplate || echo "  j3: $(ann job j3 dispatch-reason)"
U3=$(uid8 job j3)
printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: rt-%s-1, namespace: default}\nspec:\n  spec:\n    devices:\n      requests: [{name: gpu, deviceClassName: gpu.example.com}]\n' \
	"$U3" >"$T/ut.yaml"
expect "a user's rt-$U3-1 on small" 0 w small create -f "$T/ut.yaml"
tpl rt gpu.example.com
wait_for j3-to-small 150 ann_is job j3 cluster small || echo "  j3: $(ann job j3 cluster) $(ann job j3 dispatch-reason) $(ann job j3 dispatch-message)"
wait_for j3-not-admitted 150 ann_is job j3 dispatch-phase NotAdmitted || echo "  j3: $(ann job j3 dispatch-phase) $(ann job j3 dispatch-reason) $(ann job j3 dispatch-message)"
ann job j3 dispatch-message >"$T/m3"
has j3-why "$T/m3" "cluster small has a ResourceClaimTemplate default/rt-$U3-1 that the dispatcher did not make for this dispatch: not overwritten"
[ -z "$(w small get resourceclaimtemplates "rt-$U3-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" ] && ok ||
	bad "the user's rt-$U3-1 was overwritten"
[ -z "$(w small get jobs j3 -o name 2>/dev/null)" ] && ok || bad "j3's copy was made on small"

# --- round 21: a pull group's late pod refused is held, not the group --------
# plg (a coscheduling PodGroup, minMember 1) goes to small with plg-0,
# which claims from gpu-t (the device j1 left).  plg-1, created after,
# names lt, whose copy's name (lt-UID8-1) a user's template on small has:
# the agent does not create plg-1 and reports it in
# muster.io/dispatch-pods-refused; the hub holds it (Events
# ClaimCopyRefused on plg-1 and FailedCreate on plg, once), plg stays on
# small, not NotAdmitted.  The dispatcher killed (-9) and started again:
# no second telling.  The user's object deleted on small (nothing changed
# on the hub): the agent drops its entry, creates plg-1, and the hub's
# hold and record go.
printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: plg\n  labels: {muster.io/queue: team-a}\nspec: {minMember: 1}\n' >"$T/plg.yaml"
expect "PodGroup plg on the hub" 0 h create -f "$T/plg.yaml"
# ppod NAME TEMPLATE: a gated pod of plg on the hub claiming from TEMPLATE
ppod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {scheduling.x-k8s.io/pod-group: plg}\nspec:\n  schedulerName: muster\n  restartPolicy: Never\n  schedulingGates: [{name: muster.io/dispatch}]\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: %s}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]\n' \
		"$1" "$2" >"$T/p.yaml"
	expect "plg pod $1" 0 h create -f "$T/p.yaml"
}
wpod() { w small get pod "$1" -o name >/dev/null 2>&1; }
# hevn OBJECT REASON: the hub's Events of that reason about OBJECT (their counts)
hevn() { "$KC" --kubeconfig "$T/hub/kubeconfig" get events -o 'jsonpath={range .items[*]}{.involvedObject.name} {.reason} {.count}{"\n"}{end}' 2>/dev/null |
	awk -v o="$1" -v r="$2" '$1 == o && $2 == r { n += ($3 == "" ? 1 : $3) } END { print n + 0 }'; }
hev() { [ "$(hevn "$1" "$2")" -ge 1 ]; }
ppod plg-0 gpu-t
wait_for plg-to-small 150 ann_is "$XPG" plg cluster small || echo "  plg: $(ann "$XPG" plg cluster) $(ann "$XPG" plg dispatch-reason) $(ann "$XPG" plg dispatch-message)"
UP=$(uid8 "$XPG" plg)
wait_for plg-0-on-small 150 wpod plg-0
printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: lt-%s-1, namespace: default}\nspec:\n  spec:\n    devices:\n      requests: [{name: gpu, deviceClassName: gpu.example.com}]\n' \
	"$UP" >"$T/ul.yaml"
expect "a user's lt-$UP-1 on small" 0 w small create -f "$T/ul.yaml"
tpl lt gpu.example.com
ppod plg-1 lt
prf() { ann "$XPG" plg dispatch-pods-refused | grep -q '"plg-1"'; }
wait_for plg-1-reported 150 prf || echo "  plg: $(ann "$XPG" plg dispatch-pods-refused)"
wait_for plg-1-event 150 hev plg-1 ClaimCopyRefused
wait_for plg-failed-create-event 100 hev plg FailedCreate
has plg-1-held-log "$T/d.log" "pod plg-1 not created on cluster small: cluster small has a ResourceClaimTemplate default/lt-$UP-1 that the dispatcher did not make for this dispatch: not overwritten"
held_rec() { ann "$XPG" plg dispatch-held | grep -q '"plg-1"'; }
wait_for plg-held-record 100 held_rec || echo "  plg: $(ann "$XPG" plg dispatch-held)"
sleep 2
wpod plg-1 && bad "plg-1 created on small" || ok
[ "$(ann "$XPG" plg dispatch-phase)" != NotAdmitted ] && ok || bad "plg ended NotAdmitted: $(ann "$XPG" plg dispatch-message)"
[ "$(ann "$XPG" plg cluster)" = small ] && ok || bad "plg left small: $(ann "$XPG" plg cluster)"
wpod plg-0 && ok || bad "plg-0 gone from small"
[ -z "$(w small get resourceclaimtemplates "lt-$UP-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" ] && ok || bad "the user's lt-$UP-1 was taken over"
[ "$(hevn plg-1 ClaimCopyRefused)" = 1 ] && ok || bad "plg-1's ClaimCopyRefused Events: $(hevn plg-1 ClaimCopyRefused)"
[ "$(hevn plg FailedCreate)" = 1 ] && ok || bad "plg's FailedCreate Events: $(hevn plg FailedCreate)"
[ "$(grep -c "not created (held)" "$T/agent.log")" = 1 ] && ok || bad "the agent tried plg-1 $(grep -c "not created (held)" "$T/agent.log") times"
# the dispatcher killed and started again: plg-1 stays held, not told again
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 30m --id d1 --no-leader-elect \
	>"$T/d2.out" 2>"$T/d2.log" &
DPID=$!
PIDS="$PIDS $!"
adopted() { grep -q "cluster small" "$T/d2.log" && sleep 3; }
wait_for restarted 100 adopted
hasnt plg-1-not-told-after-restart "$T/d2.log" "pod plg-1 not created"
wpod plg-1 && bad "plg-1 created on small after the restart" || ok
[ "$(ann "$XPG" plg cluster)" = small ] && ok || bad "plg left small after the restart: $(ann "$XPG" plg cluster)"
[ "$(ann "$XPG" plg dispatch-phase)" != NotAdmitted ] && ok || bad "plg ended NotAdmitted after the restart: $(ann "$XPG" plg dispatch-message)"
[ "$(hevn plg-1 ClaimCopyRefused)" = 1 ] && ok || bad "plg-1's ClaimCopyRefused Events after the restart: $(hevn plg-1 ClaimCopyRefused)"
[ "$(hevn plg FailedCreate)" = 1 ] && ok || bad "plg's FailedCreate Events after the restart: $(hevn plg FailedCreate)"
# round 22: the agent killed (-9) and started again: plg-1's hold read back
# from its own entry on the hub group, not tried (nor logged) again
kill -9 "$APID"; wait "$APID" 2>/dev/null
"$M" dispatch agent --hub-kubeconfig "$T/hub-agent.kc" --kubeconfig "$T/small-agent.kc" \
	--cluster small --interval 100ms >"$T/agent2.out" 2>"$T/agent2.log" &
APID=$!
PIDS="$PIDS $!"
restored() { grep -q "pod default/plg-1 of .*: held as before the restart" "$T/agent2.log"; }
wait_for plg-1-held-after-agent-restart 100 restored || tail -5 "$T/agent2.log"
sleep 2
hasnt plg-1-not-tried-after-agent-restart "$T/agent2.log" "not created (held)"
wpod plg-1 && bad "plg-1 created on small after the agent's restart" || ok
prf && ok || bad "plg-1's entry gone after the agent's restart: $(ann "$XPG" plg dispatch-pods-refused)"
[ "$(hevn plg-1 ClaimCopyRefused)" = 1 ] && ok || bad "plg-1's ClaimCopyRefused Events after the agent's restart: $(hevn plg-1 ClaimCopyRefused)"
# round 22: the hub template lt changed (a label: a new resourceVersion;
# its spec is immutable): the hub moves its hold's record, the agent tries
# plg-1 again (the user's object still on small: refused, held again in
# the same pass, the hub not told twice)
expect "hub template lt changed" 0 h label resourceclaimtemplate lt round=22
tried() { grep -q "pod default/plg-1 of .*: an object its claims name changed on the hub: tried again" "$T/agent2.log"; }
wait_for plg-1-tried-after-template-change 100 tried || tail -5 "$T/agent2.log"
has plg-1-template-change-hub-log "$T/d2.log" "pod plg-1: ResourceClaimTemplate default/lt changed on the hub (watched): cluster small's agent tries it again"
refused2() { [ "$(grep -c "not created (held)" "$T/agent2.log")" = 1 ]; }
wait_for plg-1-refused-again 100 refused2 || echo "  the agent's tries: $(grep -c "not created (held)" "$T/agent2.log")"
sleep 2
[ "$(grep -c "not created (held)" "$T/agent2.log")" = 1 ] && ok || bad "the agent tried plg-1 $(grep -c "not created (held)" "$T/agent2.log") times after the template change"
wpod plg-1 && bad "plg-1 created on small after the template change" || ok
[ "$(hevn plg-1 ClaimCopyRefused)" = 1 ] && ok || bad "plg-1's ClaimCopyRefused Events after the template change: $(hevn plg-1 ClaimCopyRefused)"
# round 23: the hub template lt deleted: the hub keeps the hold ("held
# until it is made again"), the agent does not try plg-1 while it is gone
# (nothing to copy; round 22 tried it, dropped its entry, and the hub
# released and later told it again); made again (a new version): one try,
# refused again, still one ClaimCopyRefused
expect "hub template lt deleted" 0 h delete resourceclaimtemplate lt
lt_gone() { grep -q "pod plg-1: ResourceClaimTemplate default/lt deleted on the hub (watched): held until it is made again" "$T/d2.log"; }
wait_for plg-1-held-while-lt-gone 100 lt_gone || grep 'plg-1' "$T/d2.log" | tail -3
sleep 2
hasnt plg-1-not-tried-while-lt-gone "$T/agent2.log" "create pod default/plg-1 of"
hasnt plg-1-not-released-while-lt-gone "$T/d2.log" "pod plg-1: cluster small's agent dropped its refusal"
prf && ok || bad "plg-1's entry gone while lt is: $(ann "$XPG" plg dispatch-pods-refused)"
tpl lt gpu.example.com
tried2() { [ "$(grep -c "pod default/plg-1 of .*: an object its claims name changed on the hub: tried again" "$T/agent2.log")" = 2 ]; }
wait_for plg-1-tried-after-lt-made-again 100 tried2 || tail -5 "$T/agent2.log"
refused3() { [ "$(grep -c "not created (held)" "$T/agent2.log")" = 2 ]; }
wait_for plg-1-refused-after-lt-made-again 100 refused3
sleep 2
[ "$(grep -c "not created (held)" "$T/agent2.log")" = 2 ] && ok || bad "the agent tried plg-1 $(grep -c "not created (held)" "$T/agent2.log") times by the time lt was made again"
wpod plg-1 && bad "plg-1 created on small after lt was made again" || ok
[ "$(hevn plg-1 ClaimCopyRefused)" = 1 ] && ok || bad "plg-1's ClaimCopyRefused Events after lt was made again: $(hevn plg-1 ClaimCopyRefused)"
# the user's object deleted on small: plg-1 created there, naming its copy
expect "delete the user's lt-$UP-1" 0 w small delete resourceclaimtemplate "lt-$UP-1"
wait_for plg-1-on-small-after-users-object-gone 150 wpod plg-1 || { echo "  agent:"; grep 'plg-1\|lt-' "$T/agent.log" | tail -5; }
has plg-1-dropped-agent-log "$T/agent2.log" "pod default/plg-1 of $(hget "$XPG" plg '{.metadata.uid}'): the object of its copy's name is gone: created again"
[ "$(w small get pod plg-1 -o 'jsonpath={.spec.resourceClaims[0].resourceClaimTemplateName}')" = "lt-$UP-1" ] && ok ||
	bad "plg-1 on small names $(w small get pod plg-1 -o 'jsonpath={.spec.resourceClaims[0].resourceClaimTemplateName}')"
[ "$(w small get resourceclaimtemplates "lt-$UP-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$(hget "$XPG" plg '{.metadata.uid}')" ] && ok ||
	bad "lt-$UP-1 on small is not plg's copy"
no_prf() { [ -z "$(ann "$XPG" plg dispatch-pods-refused)" ] && [ -z "$(ann "$XPG" plg dispatch-held)" ]; }
wait_for plg-entry-and-record-gone 100 no_prf || echo "  plg: $(ann "$XPG" plg dispatch-pods-refused) / $(ann "$XPG" plg dispatch-held)"
has plg-1-released-log "$T/d2.log" "pod plg-1: cluster small's agent dropped its refusal"
hasnt no-403-after-restart "$T/d2.log" " 403"
grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d2.log" && bad "sanitizer after the restart" || ok

hasnt no-403 "$T/d.log" " 403"
hasnt no-403-agent "$T/agent.log" " 403"
grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" "$T/agent.log" "$T/agent2.log" && bad "sanitizer" || ok
hasnt no-403-agent-after-restart "$T/agent2.log" " 403"
done_
