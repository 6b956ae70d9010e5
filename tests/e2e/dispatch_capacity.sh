#!/bin/sh
# dispatch_capacity.sh - `muster dispatch` places from real capacity
# (docs/dispatch.md, "Capacity from pods: round 10"): pods that reach a
# worker some other way than through the hub count in the hub's model of
# that worker, node by node.  A hub `muster up` and two workers (big: 2 x 8
# GPUs, region us, push mode; small: 3 x 8, region eu, pull mode through
# its `muster dispatch agent`), each with its own `muster scheduler`; the
# dispatcher and the agent run as the accounts of deploy/dispatch-rbac.yaml
# and deploy/dispatch-agent-rbac.yaml.  Checked:
#   - a pod created on big directly (kubectl against big, 8 GPUs on
#     big-0) leaves big 8 free GPUs in its Cluster status;
#   - a hub Job of 2 x 8 GPUs, which big would take as the tighter fit,
#     goes to small; one that may use only big (region=us) waits
#     NoClusterFits, saying "big: no fit";
#   - a hub Job of 1 x 4 GPUs goes to big, and once its pod is bound there
#     big still has 4 free GPUs (its pod is not counted twice);
#   - in pull mode, a pod created on small directly on the node its hub
#     Job left free is in the agent's report (data.used) and fills small:
#     a 1 x 8 hub Job for small waits; the report does not name the nodes
#     where only the hub's copies run; the pod deleted, the Job goes;
#   - the pod on big deleted (and the 1 x 4 Job), the waiting gang goes
#     to big;
#   - a hub Job whose PriorityClass exists on the hub but not on big: big's
#     Job controller cannot create its pods (its Warning Event
#     FailedCreate, which `muster up` records as Kubernetes' does); the
#     hub Job says FailedCreate with big's message (annotation, condition
#     Dispatched), and after --start-timeout (40 s) it ends NotAdmitted,
#     its copy deleted, never sent again (generation 1); the same in pull
#     mode on small (round 11): its agent reports the Event on the copy
#     (muster.io/dispatch-copy-failed), the hub Job says FailedCreate with
#     small's message and ends NotAdmitted at generation 1;
#   - a coscheduling PodGroup whose minResources (40 GPUs) are above every
#     cluster's free capacity in aggregate waits MinResourcesNotFree;
#   - round 13: big filled by pods made there directly, one of them half
#     a GPU on big-0's device 0 (muster.io/gpus, muster.io/gpu-milli as
#     muster's scheduler records a share): a hub Job of half a GPU goes
#     to big and is bound there, a second waits NoClusterFits ("big: no
#     fit"), and goes once the share pod is deleted;
#   - round 13: the hub Queue team-a's status has fairShare, usage,
#     pendingJobs and runningJobs (muster scheduler's fields); half-2
#     deleted, runningJobs drops by one and the GPU usage by 0.5; the
#     condition Active stays;
#   - neither log holds a 403 or a sanitizer report.
# Usage: sh tests/e2e/dispatch_capacity.sh PATH_TO_MUSTER.  Ends with
# "e2e dispatch-capacity: N passed, N failed".
E2E_NAME=dispatch-capacity; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/fleet.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_kubectl

fleet_hub_queue
pool small 3 >"$T/small.yaml"; pool big 2 >"$T/big.yaml"
start hub; start small; start big
fleet_wire
"$M" dispatch --kubeconfig "$T/hub-sa.kc" --interval 100ms --start-timeout 40s --id d1 \
	--no-leader-elect >"$T/d.out" 2>"$T/d.log" &
PIDS="$PIDS $!"
fleet_agent_small

# job NAME PODS GPUS [SELECTOR]: a queue-labelled hub Job, held suspended
job() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: "%s"}\nspec:\n  suspend: true\n  parallelism: %s\n  completions: %s\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s"}}}]\n' \
		"$1" "${4:-}" "$2" "$2" "$3" >"$T/j.yaml"
	expect "hub Job $1" 0 h create -f "$T/j.yaml"
}
# lpod CLUSTER NAME NODE GPUS: a pod made on the worker directly, bound
lpod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  nodeName: %s\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "%s", cpu: "1"}}}]\n' \
		"$2" "$3" "$4" >"$T/lp.yaml"
	w "$1" create -f "$T/lp.yaml" >/dev/null && ok || bad "pod $2 on $1"
}
free_is() { [ "$(hget cluster "$1" '{.status.freeGPUs}')" = "$2" ]; }
bound() { ann job "$1" dispatch-pods | grep -q "^bound=$2,"; }

# --- push: a pod made on big directly fills big-0 -----------------------------
wait_for big-16-free 100 free_is big 16
lpod big local-0 big-0 8
wait_for big-8-free 100 free_is big 8 || echo "  big: $(hget cluster big '{.status}')"
job g1 2 8
wait_for g1-to-small 100 ann_is job g1 cluster small || echo "  g1: $(ann job g1 cluster) $(ann job g1 dispatch-reason)"
job g2 2 8 region=us
g2w() { ann_is job g2 dispatch-reason NoClusterFits && ann job g2 dispatch-message | grep -q "big: no fit"; }
wait_for g2-waits-no-fit 100 g2w || echo "  g2: $(ann job g2 dispatch-reason): $(ann job g2 dispatch-message)"
[ -z "$(ann job g2 cluster)" ] && ok || bad "g2 sent to $(ann job g2 cluster)"
# the hub's own copies are not counted twice
job h4 1 4 region=us
wait_for h4-to-big 100 ann_is job h4 cluster big
wait_for h4-bound 150 bound h4 1 || echo "  h4: $(ann job h4 dispatch-pods)"
sleep 2
free_is big 4 && ok || bad "big free GPUs with h4 bound: $(hget cluster big '{.status.freeGPUs}'), not 4"

# --- pull: small's agent reports the pods beside the copies ---------------------
wait_for g1-bound 150 bound g1 2 || echo "  g1: $(ann job g1 dispatch-pods)"
used=$(w small get pods -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)
freen=""
for n in small-0 small-1 small-2; do echo "$used" | grep -qx "$n" || freen=$n; done
[ -n "$freen" ] && ok || bad "no node of small left free by g1 ($used)"
lpod small local-s "$freen" 8
hused() { "$KC" --kubeconfig "$T/hub/kubeconfig" -n muster-system get cm muster-cluster-small \
	-o 'jsonpath={.data.used}' 2>/dev/null; }
rep() { hused | grep -q "\"$freen\":\"cpu=1000m,memory=0,nvidia.com/gpu=8,pods=1\""; }
wait_for small-reports-local-s 100 rep || echo "  used: $(hused)"
n=$(hused | grep -o '"small-[0-9]"' | wc -l)
[ "$n" -eq 1 ] && ok || bad "small reports $n nodes used beside the copies: $(hused)"
wait_for small-0-free 100 free_is small 0 || echo "  small: $(hget cluster small '{.status}')"
job g3 1 8 region=eu
g3w() { ann_is job g3 dispatch-reason NoClusterFits; }
wait_for g3-waits 100 g3w || echo "  g3: $(ann job g3 dispatch-reason): $(ann job g3 dispatch-message)"
w small delete pod local-s --wait=false >/dev/null && ok || bad "delete local-s"
wait_for g3-to-small 150 ann_is job g3 cluster small

# --- push: the pod on big gone, the waiting gang goes -----------------------------
expect "h4 deleted on the hub" 0 h delete job h4
w big delete pod local-0 --wait=false >/dev/null && ok || bad "delete local-0"
wait_for g2-to-big 150 ann_is job g2 cluster big || echo "  g2: $(ann job g2 dispatch-reason): $(ann job g2 dispatch-message)"

# --- a copy whose pods its worker refuses: FailedCreate, then NotAdmitted -------
printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hub-only}\nvalue: 1000\n' >"$T/pc.yaml"
expect "PriorityClass hub-only on the hub only" 0 h create -f "$T/pc.yaml"
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: fc\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: region=us}\nspec:\n  suspend: true\n  template:\n    spec:\n      schedulerName: muster\n      priorityClassName: hub-only\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {cpu: "1"}}}]\n' >"$T/fc.yaml"
expect "hub Job fc" 0 h create -f "$T/fc.yaml"
# the same in pull mode (round 11): fcp may use only small, whose agent
# reports its copy's FailedCreate Event to the hub
sed 's/name: fc$/name: fcp/; s/region=us/region=eu/' "$T/fc.yaml" >"$T/fcp.yaml"
expect "hub Job fcp" 0 h create -f "$T/fcp.yaml"
wait_for fc-to-big 100 ann_is job fc cluster big
wait_for fcp-to-small 100 ann_is job fcp cluster small
fcw() { ann_is job fc dispatch-reason FailedCreate && ann job fc dispatch-message | grep -q "cluster big cannot create its pods: Error creating: .*no PriorityClass with name hub-only was found"; }
wait_for fc-says-failed-create 150 fcw || echo "  fc: $(ann job fc dispatch-reason): $(ann job fc dispatch-message)"
fcpw() { ann_is job fcp dispatch-reason FailedCreate && ann job fcp dispatch-message | grep -q "cluster small cannot create its pods: Error creating: .*no PriorityClass with name hub-only was found"; }
wait_for fcp-says-failed-create 100 fcpw || echo "  fcp: $(ann job fcp dispatch-reason): $(ann job fcp dispatch-message)"
[ "$(hget job fc '{.status.conditions[?(@.type=="Dispatched")].reason}')" = FailedCreate ] && ok ||
	bad "fc condition: $(hget job fc '{.status.conditions}')"
w big get events --field-selector reason=FailedCreate -o name | grep -q . && ok || bad "no FailedCreate Event on big"
wait_for fc-not-admitted 400 ann_is job fc dispatch-phase NotAdmitted || echo "  fc: $(ann job fc dispatch-phase) $(ann job fc dispatch-reason)"
ann_is job fc dispatch-generation 1 && ok || bad "fc sent again: generation $(ann job fc dispatch-generation)"
fcgone() { ! w big get job fc -o name | grep -q .; }
wait_for fc-copy-deleted 100 fcgone
sleep 2
ann_is job fc dispatch-generation 1 && ok || bad "fc sent again later: generation $(ann job fc dispatch-generation)"
wait_for fcp-not-admitted 300 ann_is job fcp dispatch-phase NotAdmitted || echo "  fcp: $(ann job fcp dispatch-phase) $(ann job fcp dispatch-reason)"
ann_is job fcp dispatch-generation 1 && ok || bad "fcp sent again: generation $(ann job fcp dispatch-generation)"
fcpgone() { ! w small get job fcp -o name | grep -q .; }
wait_for fcp-copy-deleted 100 fcpgone

# --- the coscheduling minResources, in aggregate -------------------------------
printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: mr\n  labels: {muster.io/queue: team-a}\nspec:\n  minMember: 1\n  minResources: {nvidia.com/gpu: "40"}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: mr-0\n  labels: {scheduling.x-k8s.io/pod-group: mr}\nspec:\n  schedulerName: muster\n  schedulingGates: [{name: muster.io/dispatch}]\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]\n' >"$T/mr.yaml"
expect "coscheduling group with minResources" 0 h create -f "$T/mr.yaml"
XPG=podgroups.scheduling.x-k8s.io
mrw() { ann_is "$XPG" mr dispatch-reason MinResourcesNotFree && ann "$XPG" mr dispatch-message | grep -q "min resources not free"; }
wait_for mr-waits-min-resources 100 mrw || echo "  mr: $(ann "$XPG" mr dispatch-reason): $(ann "$XPG" mr dispatch-message)"
[ -z "$(ann "$XPG" mr cluster)" ] && ok || bad "mr sent to $(ann "$XPG" mr cluster)"

# --- round 13: the room left on a shared device ---------------------------------
# g2 gone, big is filled again by pods made there directly: big-0 holds
# half a GPU on device 0 (as muster's scheduler records a share at the
# bind) and 7 whole GPUs, big-1 8; the half left on device 0 takes a hub
# Job of half a GPU, and a second one waits
expect "g2 deleted on the hub" 0 h delete job g2
wait_for big-16-free-again 150 free_is big 16
# spod NAME NODE ANNOTATIONS GPUS: a pod made on big directly, bound
spod() {
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations: {%s}\nspec:\n  nodeName: %s\n  containers: [{name: c, image: x, resources: {limits: {cpu: "1"%s}}}]\n' \
		"$1" "$3" "$2" "$4" >"$T/sp.yaml"
	w big create -f "$T/sp.yaml" >/dev/null && ok || bad "pod $1 on big"
}
spod share-0 big-0 '"gpu-fraction": "0.5", "muster.io/gpus": "0", "muster.io/gpu-milli": "500"' ''
spod whole-7 big-0 '"muster.io/gpus": "1,2,3,4,5,6,7"' ', nvidia.com/gpu: "7"'
spod whole-8 big-1 '"muster.io/gpus": "0,1,2,3,4,5,6,7"' ', nvidia.com/gpu: "8"'
wait_for big-0-free 100 free_is big 0 || echo "  big: $(hget cluster big '{.status}')"
# hjob NAME: a hub Job of one pod with half a GPU, for big only
hjob() {
	printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: team-a}\n  annotations: {muster.io/cluster-selector: region=us}\nspec:\n  suspend: true\n  template:\n    metadata: {annotations: {gpu-fraction: "0.5"}}\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {limits: {cpu: "1"}}}]\n' \
		"$1" >"$T/hj.yaml"
	expect "hub Job $1 (half a GPU)" 0 h create -f "$T/hj.yaml"
}
hjob half-1
wait_for half-1-to-big 100 ann_is job half-1 cluster big || echo "  half-1: $(ann job half-1 dispatch-reason): $(ann job half-1 dispatch-message)"
wait_for half-1-bound 150 bound half-1 1 || echo "  half-1: $(ann job half-1 dispatch-pods)"
hjob half-2
h2w() { ann_is job half-2 dispatch-reason NoClusterFits && ann job half-2 dispatch-message | grep -q "big: no fit"; }
wait_for half-2-waits 100 h2w || echo "  half-2: $(ann job half-2 dispatch-reason): $(ann job half-2 dispatch-message)"
w big delete pod share-0 --wait=false >/dev/null && ok || bad "delete share-0"
wait_for half-2-to-big 150 ann_is job half-2 cluster big || echo "  half-2: $(ann job half-2 dispatch-reason): $(ann job half-2 dispatch-message)"

# --- round 13: the hub Queue's status, as muster scheduler writes its own ------
qf() { hget queues.muster.io team-a "{.status.$1}"; }
qhas() { [ -n "$(qf 'fairShare.nvidia\.com/gpu')" ] && [ -n "$(qf runningJobs)" ] && [ -n "$(qf pendingJobs)" ] &&
	[ -n "$(qf 'usage.cpu')" ]; }
wait_for queue-status 100 qhas || echo "  team-a: $(hget queues.muster.io team-a '{.status}')"
sleep 2
r1=$(qf runningJobs); u1=$(qf 'usage.nvidia\.com/gpu')
expect "half-2 deleted on the hub" 0 h delete job half-2
qless() { [ "$(qf runningJobs)" = "$((r1 - 1))" ] && awk "BEGIN{exit !($(qf 'usage.nvidia\.com/gpu') == $u1 - 0.5)}"; }
wait_for queue-status-follows 100 qless || echo "  team-a: $r1 $u1 -> $(hget queues.muster.io team-a '{.status}')"
[ "$(qf 'conditions[?(@.type=="Active")].status')" = True ] && ok ||
	bad "team-a's condition Active: $(qf conditions)"

grep -i "runtime error\|AddressSanitizer\|LeakSanitizer" "$T/d.log" "$T/agent.log" && bad "sanitizer" || ok
hasnt "no 403 for the dispatcher" "$T/d.log" "HTTP 403"
hasnt "no 403 for the agent" "$T/agent.log" "HTTP 403"
done_
