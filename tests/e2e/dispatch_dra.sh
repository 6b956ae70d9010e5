#!/bin/sh
# dispatch_dra.sh - `muster dispatch` sends a hub Job whose pods claim
# devices through DRA (resource.k8s.io/v1beta1) only to a worker where its
# claims allocate, and copies the ResourceClaimTemplate it names there
# before the Job (docs/dispatch.md, round 15).  A hub `muster up` and two
# push-mode workers (a, b: two CPU nodes each), each with its own `muster
# scheduler`; only b has the DeviceClass gpu.example.com and a
# ResourceSlice (two devices on b-1).  The dispatcher runs as the account
# of deploy/dispatch-rbac.yaml.  Checked:
#   - a Job whose pod template names the hub's ResourceClaimTemplate gpu-t
#     goes to b; gpu-t's copy (gpu-t-UID8-1, labelled with the hub uid) is
#     on b and no template is copied to a; b's claim controller makes the
#     pod's claim from it, b's scheduler allocates it on b-1 and binds the
#     pod to b-1;
#   - a Job whose template asks for a device class no worker has waits on
#     the hub (NoClusterFits) and `muster kexplain` gives the allocator's
#     reason for each cluster ("no devices");
#   - a Job whose template is not on the hub waits
#     WaitingForResourceClaimTemplate naming it, and goes to b once the
#     template is created;
#   - deleting the first hub Job deletes its copy and its copied template
#     on b;
#   - a Job whose pod template names the hub's ResourceClaim shared-c
#     (round 16) goes to b with its copy shared-c-UID8-1, allocated on b-1,
#     and its pod is bound there;
#   - round 17: a Job waiting for a device whose template is deleted on
#     the hub is read again when it is chosen for b (not sent with the
#     claims read before): it waits WaitingForResourceClaimTemplate and
#     goes to b once the template is back; one whose template changed to a
#     class no worker has is read again and waits, kexplain naming the
#     class;
#   - round 18: the hub's templates are watched: j5 waits for t5 again on
#     its deletion's event and j6 is read with t6's new class on its
#     events, both while no device is free (neither is chosen);
#   - round 19: a group's late pod whose template's copy is made goes to
#     the group's cluster; one whose copy b refuses (a user's object of
#     that name) is held on the hub with Events (ClaimCopyRefused on the
#     pod, FailedCreate on the group) while the group runs, and is sent
#     once the object is gone and its template changed on the hub; a
#     refusal that leaves a group below its minMember ends it NotAdmitted;
#   - the dispatcher's log holds no 403 and no sanitizer report.
# Usage: sh tests/e2e/dispatch_dra.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-dra: N passed, N failed".
E2E_NAME=dispatch-dra; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

fleet_hub_queue
for n in a b; do
	printf 'apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: cpu}\nspec:\n  count: 2\n  namePrefix: %s-\n  allocatable: {cpu: "16", memory: 64Gi}\n---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n' \
		"$n" >"$T/$n.yaml"
done
start hub; start a; start b
for n in a b; do
	"$M" scheduler --kubeconfig "$T/$n/kubeconfig" --no-leader-elect --min-runtime 0 \
		>"$T/$n.s.out" 2>"$T/$n.s.log" &
	PIDS="$PIDS $!"
done
# b's devices: a class and two GPUs on b-1
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
metadata: {name: b-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: b-1
  pool: {name: b-1, generation: 1, resourceSliceCount: 1}
  devices:
    - {name: gpu-0, basic: {attributes: {model: {string: A100}}}}
    - {name: gpu-1, basic: {attributes: {model: {string: A100}}}}
Y
expect "b's devices" 0 w b apply -f "$T/dev.yaml"
h create namespace muster-system
expect "apply deploy/dispatch-rbac.yaml" 0 h apply -f "$ROOT/deploy/dispatch-rbac.yaml"
sa_kc hub muster-dispatch "$T/hub-sa.kc"
for n in a b; do
	h -n muster-system create secret generic "$n-kc" --from-file=kubeconfig="$T/$n/kubeconfig"
done
printf 'apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {tier: private, kubeconfigSecret: {name: a-kc}}\n---\napiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: b}\nspec: {tier: private, kubeconfigSecret: {name: b-kc}}\n' >"$T/cl.yaml"
expect clusters 0 h apply -f "$T/cl.yaml"
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --id d1 --no-leader-elect \
	>"$T/d.out" 2>"$T/d.log" &
DPID=$!
PIDS="$PIDS $!"
for n in a b; do wait_for "ready-$n" 100 state_is "$n"; done

# tpl NAME CLASS: a ResourceClaimTemplate on the hub asking one device
tpl() {
	printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: %s, namespace: default}\nspec:\n  spec:\n    devices:\n      requests: [{name: gpu, deviceClassName: %s}]\n' \
		"$1" "$2" >"$T/t.yaml"
	expect "template $1" 0 h apply -f "$T/t.yaml"
}
# job NAME TEMPLATE: a queue-labelled hub Job of one pod claiming a device
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      resourceClaims: [{name: gpu, resourceClaimTemplateName: %s}]\n      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]\n' \
		"$1" "$2" >"$T/j.yaml"
	expect "hub Job $1" 0 h create -f "$T/j.yaml"
}
uid8() { hget job "$1" '{.metadata.uid}' | cut -c1-8; }
wtpls() { w "$1" get resourceclaimtemplates -o 'jsonpath={.items[*].metadata.name}'; }
has_tpl() { wtpls "$1" | tr ' ' '\n' | grep -qx "$2"; }
# balloc: the devices of b's claims
balloc() { w b get resourceclaims -o 'jsonpath={range .items[*]}{.status.allocation.devices.results[0].device}{"@"}{.status.allocation.devices.results[0].pool}{" "}{end}'; }

# --- a job whose template's class only b has: to b, its template with it ---
tpl gpu-t gpu.example.com
job j1 gpu-t
wait_for j1-to-b 150 ann_is job j1 cluster b || echo "  j1: $(ann job j1 cluster) $(ann job j1 dispatch-reason) $(ann job j1 dispatch-message)"
U1=$(uid8 j1); UID1=$(hget job j1 '{.metadata.uid}')
wait_for j1-template-on-b 100 has_tpl b "gpu-t-$U1-1" || echo "  b: $(wtpls b)"
[ "$(w b get resourceclaimtemplates "gpu-t-$U1-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$UID1" ] && ok || bad "j1's template copy: not labelled with the hub uid"
[ -z "$(wtpls a)" ] && ok || bad "a has templates: $(wtpls a)"
# b's claim controller made the pod's claim from the copy (the pod's
# status names it); b's scheduler allocates it on b-1 before it binds the
# pod there (src/kube/jobs.c, fill_slots and job_dra_counted)
pclaim() { w b get pods -l "muster.io/hub-uid=$1" -o 'jsonpath={.items[0].status.resourceClaimStatuses[0].resourceClaimName}'; }
claim_made() { c=$(pclaim "$UID1"); [ -n "$c" ] && w b get resourceclaims "$c" -o name >/dev/null; }
wait_for j1-claim-made 150 claim_made || echo "  pod's claim: $(pclaim "$UID1"); claims: $(balloc)"
claim_alloc() { c=$(pclaim "$UID1"); [ -n "$c" ] && [ -n "$(w b get resourceclaims "$c" -o 'jsonpath={.status.allocation}')" ]; }
wait_for j1-claim-allocated-on-b 150 claim_alloc || echo "  claims: $(balloc)"
case " $(balloc)" in *"@b-1 "*) ok ;; *) bad "j1's claim not allocated on b-1: $(balloc)" ;; esac
ponb() { w b get pods -l "muster.io/hub-uid=$UID1" -o 'jsonpath={.items[0].spec.nodeName}'; }
pod_on_b1() { [ "$(ponb)" = b-1 ]; }
wait_for j1-pod-on-b-1 150 pod_on_b1 || echo "  j1's pod on: $(ponb)"

# --- a class no worker has: waits, kexplain says why per cluster ----------
tpl tpu-t tpu.example.com
job j2 tpu-t
wait_for j2-waits 100 ann_is job j2 dispatch-reason NoClusterFits || echo "  j2: $(ann job j2 dispatch-reason) $(ann job j2 dispatch-message)"
expect kexplain-j2 0 "$M" kexplain --kubeconfig "$T/hub/kubeconfig" job/j2
has kexplain-a "$T/out" "a: no devices"
has kexplain-b "$T/out" "b: no devices"
has kexplain-class "$T/out" "tpu.example.com"

# --- a template not on the hub yet: waits, goes once it is there ----------
job j3 late-t
wait_for j3-waits 100 ann_is job j3 dispatch-reason WaitingForResourceClaimTemplate || echo "  j3: $(ann job j3 dispatch-reason)"
ann job j3 dispatch-message >"$T/m"
has j3-why "$T/m" "ResourceClaimTemplate default/late-t not found on the hub"
tpl late-t gpu.example.com
wait_for j3-to-b 150 ann_is job j3 cluster b || echo "  j3: $(ann job j3 cluster) $(ann job j3 dispatch-reason) $(ann job j3 dispatch-message)"
U3=$(uid8 j3)
wait_for j3-template-on-b 100 has_tpl b "late-t-$U3-1" || echo "  b: $(wtpls b)"

# --- the hub job deleted: its copy and its template go -------------------
expect "delete j1" 0 h delete job j1
j1_gone() { ! has_tpl b "gpu-t-$U1-1" && [ -z "$(w b get jobs j1 -o name 2>/dev/null)" ]; }
wait_for j1-copies-gone 150 j1_gone || echo "  b: $(wtpls b); $(w b get jobs -o name)"
has_tpl b "late-t-$U3-1" && ok || bad "j3's template copy went with j1's"

# --- a named claim (round 16): its copy on b, allocated there ---------------
# (j1's device is free again)
printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: shared-c, namespace: default}\nspec:\n  devices:\n    requests: [{name: gpu, deviceClassName: gpu.example.com}]\n' >"$T/c.yaml"
expect "hub claim shared-c" 0 h apply -f "$T/c.yaml"
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j4\n  labels: {muster.io/queue: team-a}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      resourceClaims: [{name: gpu, resourceClaimName: shared-c}]\n      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]\n' >"$T/j.yaml"
expect "hub Job j4" 0 h create -f "$T/j.yaml"
wait_for j4-to-b 150 ann_is job j4 cluster b || echo "  j4: $(ann job j4 cluster) $(ann job j4 dispatch-reason) $(ann job j4 dispatch-message)"
U4=$(uid8 j4); UID4=$(hget job j4 '{.metadata.uid}')
c4_alloc() { [ "$(w b get resourceclaims "shared-c-$U4-1" -o 'jsonpath={.status.allocation.devices.results[0].pool}')" = b-1 ]; }
wait_for j4-claim-copy-allocated-on-b-1 150 c4_alloc || echo "  claims: $(balloc)"
[ "$(w b get resourceclaims "shared-c-$U4-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$UID4" ] && ok ||
	bad "j4's claim copy: not labelled with the hub uid"
[ -z "$(w a get resourceclaims -o name)" ] && ok || bad "a has claims: $(w a get resourceclaims -o name)"
j4_bound() { [ "$(w b get pods -l "muster.io/hub-uid=$UID4" -o 'jsonpath={.items[0].spec.nodeName}')" = b-1 ]; }
wait_for j4-pod-on-b-1 150 j4_bound

# --- round 17: read again at dispatch -------------------------------------
# b's two devices are j3's and j4's: j5 waits for one (NoClusterFits) with
# its template t5 read.  t5 deleted on the hub, then j4 (a device free):
# j5 is not sent with the claims read before; it waits
# WaitingForResourceClaimTemplate as a job whose template was never there,
# and goes to b once t5 is back
tpl t5 gpu.example.com
job j5 t5
wait_for j5-waits-for-a-device 100 ann_is job j5 dispatch-reason NoClusterFits || echo "  j5: $(ann job j5 cluster) $(ann job j5 dispatch-reason)"
expect "delete t5 on the hub" 0 h delete resourceclaimtemplate t5
# round 18: the hub's templates are watched: j5 waits for t5 again on its
# deletion's event, before any device is free (not chosen for b)
wait_for j5-waits-for-t5-watched 150 ann_is job j5 dispatch-reason WaitingForResourceClaimTemplate || echo "  j5: $(ann job j5 cluster) $(ann job j5 dispatch-reason) $(ann job j5 dispatch-message)"
has j5-read-on-the-event "$T/d.log" "job default/j5: ResourceClaimTemplate default/t5 is no longer on the hub (watched): read again"
expect "delete j4" 0 h delete job j4
wait_for j5-waits-for-t5 150 ann_is job j5 dispatch-reason WaitingForResourceClaimTemplate || echo "  j5: $(ann job j5 cluster) $(ann job j5 dispatch-reason) $(ann job j5 dispatch-message)"
[ -z "$(ann job j5 cluster)" ] && ok || bad "j5 was sent to $(ann job j5 cluster)"
tpl t5 gpu.example.com
wait_for j5-to-b 150 ann_is job j5 cluster b || echo "  j5: $(ann job j5 cluster) $(ann job j5 dispatch-reason) $(ann job j5 dispatch-message)"
# j6 waits for a device (j3's and j5's) with template t6 read; t6 made
# again on the hub with a class no worker has, then j3 deleted: j6 is read again at
# dispatch and placed with the class it asks now (none has it: it waits,
# kexplain names the class)
tpl t6 gpu.example.com
job j6 t6
wait_for j6-waits-for-a-device 100 ann_is job j6 dispatch-reason NoClusterFits || echo "  j6: $(ann job j6 cluster) $(ann job j6 dispatch-reason)"
# (a template's spec cannot change in place, as in Kubernetes: made again)
expect "delete t6 on the hub" 0 h delete resourceclaimtemplate t6
tpl t6 tpu.example.com
# round 18: read again on the template's events, with no device free (not
# chosen): kexplain names the class it asks now before j3 goes
j6_tpu() { "$M" kexplain --kubeconfig "$T/hub/kubeconfig" job/j6 2>&1 | grep -q tpu.example.com; }
wait_for j6-read-on-the-events 150 j6_tpu || echo "  j6: $(ann job j6 dispatch-reason) $(ann job j6 dispatch-message)"
has j6-watched "$T/d.log" "job default/j6: ResourceClaimTemplate default/t6"
expect "delete j3" 0 h delete job j3
sleep 3
[ -z "$(ann job j6 cluster)" ] && ok || bad "j6 was sent to $(ann job j6 cluster) with its old claims"
expect kexplain-j6 0 "$M" kexplain --kubeconfig "$T/hub/kubeconfig" job/j6
has kexplain-j6-class "$T/out" "tpu.example.com"

# --- round 19: a group's late pods, accepted and refused ------------------
# lg (a muster PodGroup, minMember 1) goes to b with lg-0, which claims
# from t7 (the device j3 left free).  lg-1, created after, names t8: its
# copy is made on b and the pod sent.  lg-2 names t9, whose copy's name a
# user's object on b has: lg-2 is held on the hub (Events ClaimCopyRefused
# on it and FailedCreate on lg), not the group; round 20: the hold is
# recorded on lg and kept across a restart of the dispatcher; once that
# object is gone from b, lg-2 is sent.  mm (minMember 2, pods
# mm-0 and mm-1 without claims) runs; mm-1 deleted on the hub, its late
# pod mm-2 refused leaves one pod: mm ends NotAdmitted, naming its minimum
MPG=podgroups.muster.io
# gpod NAME GROUP [TEMPLATE]: a gated pod of GROUP on the hub
gpod() {
	cl=""
	[ -n "${3:-}" ] && cl=", claims: [{name: gpu}]"
	{ printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/pod-group: %s}\nspec:\n  schedulerName: muster\n  restartPolicy: Never\n  schedulingGates: [{name: muster.io/dispatch}]\n' "$1" "$2"
	  [ -n "${3:-}" ] && printf '  resourceClaims: [{name: gpu, resourceClaimTemplateName: %s}]\n' "$3"
	  printf '  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}%s}}]\n' "$cl"
	} >"$T/p.yaml"
	expect "hub pod $1" 0 h create -f "$T/p.yaml"
}
pg() {
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\nspec: {minMember: %s, queue: team-a}\n' "$1" "$2" >"$T/pg.yaml"
	expect "PodGroup $1" 0 h create -f "$T/pg.yaml"
}
wpod() { w "$1" get pod "$2" -o name >/dev/null 2>&1; }
hev() { "$KC" --kubeconfig "$T/hub/kubeconfig" get events -o 'jsonpath={range .items[*]}{.involvedObject.name} {.reason} {.message}{"\n"}{end}' 2>/dev/null | grep -q "^$1 $2 "; }
tpl t7 gpu.example.com
tpl t8 gpu.example.com
tpl t9 gpu.example.com
pg lg 1
gpod lg-0 lg t7
wait_for lg-to-b 150 ann_is "$MPG" lg cluster b || echo "  lg: $(ann "$MPG" lg cluster) $(ann "$MPG" lg dispatch-reason) $(ann "$MPG" lg dispatch-message)"
UL=$(hget "$MPG" lg '{.metadata.uid}' | cut -c1-8)
wait_for lg-0-on-b 150 wpod b lg-0
gpod lg-1 lg t8
wait_for lg-1-template-on-b 150 has_tpl b "t8-$UL-1" || echo "  b: $(wtpls b)"
wait_for lg-1-on-b 150 wpod b lg-1
[ "$(w b get pod lg-1 -o 'jsonpath={.spec.resourceClaims[0].resourceClaimTemplateName}')" = "t8-$UL-1" ] && ok ||
	bad "lg-1 on b names $(w b get pod lg-1 -o 'jsonpath={.spec.resourceClaims[0].resourceClaimTemplateName}')"
# a user's object with the name t9's copy would have on b
printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: t9-%s-1, namespace: default}\nspec:\n  spec:\n    devices:\n      requests: [{name: gpu, deviceClassName: gpu.example.com}]\n' "$UL" >"$T/u.yaml"
expect "user's t9-$UL-1 on b" 0 w b create -f "$T/u.yaml"
gpod lg-2 lg t9
wait_for lg-2-event 150 hev lg-2 ClaimCopyRefused
wait_for lg-failed-create-event 100 hev lg FailedCreate
has lg-2-held-log "$T/d.log" "job PodGroup:default/lg: pod lg-2 not created on cluster b: cluster b has a ResourceClaimTemplate default/t9-$UL-1 that the dispatcher did not make for this dispatch: not overwritten; it stays Pending here"
sleep 2
wpod b lg-2 && bad "lg-2 sent to b" || ok
[ "$(ann "$MPG" lg dispatch-phase)" != NotAdmitted ] && ok || bad "lg ended NotAdmitted: $(ann "$MPG" lg dispatch-message)"
[ "$(ann "$MPG" lg cluster)" = b ] && ok || bad "lg left b: $(ann "$MPG" lg cluster)"
wpod b lg-0 && ok || bad "lg-0 gone from b"
[ -z "$(w b get resourceclaimtemplates "t9-$UL-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" ] && ok || bad "the user's t9-$UL-1 was taken over"
# round 20: the hold recorded on lg; the dispatcher restarted: lg-2 stays
# held, not tried again and not told again (no log line of either)
held_rec() { ann "$MPG" lg dispatch-held | grep -q '"lg-2"'; }
wait_for lg-held-record 100 held_rec || echo "  lg: $(ann "$MPG" lg dispatch-held)"
kill "$DPID"; wait "$DPID" 2>/dev/null
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --id d1 --no-leader-elect \
	>"$T/d2.out" 2>"$T/d2.log" &
DPID=$!
PIDS="$PIDS $!"
adopted() { grep -q "cluster b" "$T/d2.log" && sleep 3; }
wait_for restarted 100 adopted
hasnt lg-2-not-tried-after-restart "$T/d2.log" "pod default/lg-2 of PodGroup:default/lg not sent"
hasnt lg-2-not-told-after-restart "$T/d2.log" "pod lg-2 not created"
wpod b lg-2 && bad "lg-2 sent to b after the restart" || ok
[ "$(ann "$MPG" lg cluster)" = b ] && ok || bad "lg left b after the restart: $(ann "$MPG" lg cluster)"
# the user's object deleted on b, nothing changed on the hub: lg-2 is sent
# (the worker's template watch, round 20), and the record goes
expect "delete the user's t9-$UL-1" 0 w b delete resourceclaimtemplate "t9-$UL-1"
wait_for lg-2-on-b-after-users-object-gone 150 wpod b lg-2 || { echo "  log:"; grep 'lg-2\|t9' "$T/d2.log" | tail -5; }
has lg-2-released-log "$T/d2.log" "job PodGroup:default/lg: pod lg-2: the object of its copy's name that cluster b had is gone: sent again"
no_rec() { [ -z "$(ann "$MPG" lg dispatch-held)" ]; }
wait_for lg-held-record-gone 100 no_rec
[ "$(w b get resourceclaimtemplates "t9-$UL-1" -o 'jsonpath={.metadata.labels.muster\.io/hub-uid}')" = "$(hget "$MPG" lg '{.metadata.uid}')" ] && ok ||
	bad "t9-$UL-1 on b is not lg's copy"
# below its minimum: the group ends
pg mm 2
gpod mm-0 mm
gpod mm-1 mm
mm_sent() { [ -n "$(ann "$MPG" mm cluster)" ]; }
wait_for mm-sent 150 mm_sent || echo "  mm: $(ann "$MPG" mm dispatch-reason) $(ann "$MPG" mm dispatch-message)"
CM=$(ann "$MPG" mm cluster); UM=$(hget "$MPG" mm '{.metadata.uid}' | cut -c1-8)
wait_for mm-1-on-its-cluster 150 wpod "$CM" mm-1
expect "delete mm-1 on the hub" 0 h delete pod mm-1
tpl tm gpu.example.com
sed "s/name: t9-$UL-1/name: tm-$UM-1/" "$T/u.yaml" >"$T/um.yaml"
expect "user's tm-$UM-1 on $CM" 0 w "$CM" create -f "$T/um.yaml"
gpod mm-2 mm tm
wait_for mm-not-admitted 150 ann_is "$MPG" mm dispatch-phase NotAdmitted || echo "  mm: $(ann "$MPG" mm dispatch-phase) $(ann "$MPG" mm dispatch-message)"
ann "$MPG" mm dispatch-message >"$T/m"
has mm-why "$T/m" "pod mm-2: cluster $CM has a ResourceClaimTemplate default/tm-$UM-1 that the dispatcher did not make for this dispatch: not overwritten; without the pods whose copies cluster $CM refused, the group can no longer meet its minimum: 1 of the 2 pods of spec.minMember are on the hub"
mm_gone() { ! w "$CM" get "$MPG" mm -o name >/dev/null 2>&1; }
wait_for mm-copy-deleted 150 mm_gone

hasnt no-403 "$T/d.log" " 403 "
hasnt no-asan "$T/d.log" "AddressSanitizer"
hasnt no-ubsan "$T/d.log" "runtime error"
hasnt no-403-after-restart "$T/d2.log" " 403 "
hasnt no-asan-after-restart "$T/d2.log" "AddressSanitizer"
hasnt no-ubsan-after-restart "$T/d2.log" "runtime error"
done_
