#!/bin/sh
# kinds.sh - the workload kinds AI clusters run, end to end (issue 15), with
# the real CustomResourceDefinitions and samples of ../shared/data/k8s/
# workloads, the real kubectl and `muster up`.  muster up runs no controller
# for these kinds, so the test plays each one: it creates the workload
# object (the project's sample, with a queue label or the kind's queue
# field), then the pods the controller would, with its names, labels,
# annotations and owner reference.  For each kind the gang is first one pod
# short of what its object asks for (nothing binds), then complete (every
# pod binds):
#   JobSet (4 workers + 1 driver), LeaderWorkerSet (one group: a leader and
#   3 workers), PyTorchJob (master + worker), MPIJob (launcher + 2 workers),
#   RayJob's RayCluster (head + the small-group's minReplicas 1, then an
#   elastic worker above it, as its autoscaler makes one), Volcano
#   PodGroup (minMember 3, spec.queue) and a Volcano Job's pods through the
#   PodGroup its controller makes (minTaskMember), KAI PodGroup (two
#   SubGroups).
# Suspend until admitted, as Kueue does it: a JobSet created suspended whose
# gang fits (4 pods of 8 GPUs, the whole cluster) is unsuspended by muster
# with an Admitted event; a PyTorchJob created suspended meanwhile stays
# suspended with the reason in a FailedScheduling event, because the
# admitted JobSet holds the room until its pods come; once the JobSet's
# pods (made by this test, playing its controller) have bound and gone,
# the PyTorchJob is admitted in turn.  A RayJob created suspended (its
# head and a worker group of minReplicas 2, 8 GPUs each: 3 nodes) stays
# suspended while the PyTorchJob holds 2 of the 4 nodes; once that goes,
# muster lifts spec.suspend, and the RayCluster the test then makes (as
# KubeRay does, owned by the RayJob) has its pods bound in the held room;
# its submitter Job's pod (K8sJobMode) joins the RayJob's gang and takes
# the place admitted for it though it asks more CPU and memory than its
# template; one that asks more than its node has beside the place gives
# the place up with the reason.
# Re-suspension: when a worker's node is lost (muster node fail), muster
# suspends the RayJob again with an Evicted event and the Evicted condition
# in its annotation muster.io/evicted, as Kueue evicts a workload; the test deletes the RayCluster as KubeRay does, and the RayJob
# is admitted again on the three nodes left.
# Without ../shared/data it prints that it skipped.
# Usage: sh tests/e2e/kinds.sh PATH_TO_MUSTER.  Ends with
# "e2e kinds: N passed, N failed".
E2E_NAME=kinds; . "$(dirname "$0")/lib/common.sh"
W="$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/k8s/workloads"
if [ ! -d "$W/crds" ]; then
	echo "skipped: ../shared/data/k8s/workloads not found (no CRDs or samples)"
	done_
fi
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 4
  namePrefix: gpu-
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {}
YAML
up_start "$T/cluster.yaml"
# create, not apply: the big CRDs do not fit in the last-applied annotation
# (256 KiB), on a real cluster too
for f in "$W"/crds/*.yaml; do
	kc create -f "$f" >"$T/out" 2>&1 || { bad "CRD $(basename "$f"): $(head -c 300 "$T/out")"; }
done
ok
# as on a real cluster: the scheduler starts once the kinds are served
kc wait --for=condition=Established crd --all --timeout=60s >"$T/out" 2>&1 && ok || bad "CRDs not established: $(head -c 300 "$T/out")"
sched_start k --lease-duration 15 --retry-period 2
ready() { u=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | tail -n 1); [ -n "$u" ] && curl -sf "$u/readyz" >/dev/null 2>&1; }
wait_for scheduler-ready 150 ready

# obj FILE: creates a workload object; echoes its uid.
obj() { kc create -f "$1" -o jsonpath='{.metadata.uid}'; }
# pod NAME LABELS ANNOTATIONS API KIND OWNER UID: one 1-GPU pod of ours, as
# the kind's controller makes it.
pod() {
	{
		printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {app: kinds%s}\n' "$1" "${2:+, $2}"
		[ -n "$3" ] && printf '  annotations: {%s}\n' "$3"
		printf '  ownerReferences: [{apiVersion: %s, kind: %s, name: %s, uid: %s, controller: true}]\n' "$4" "$5" "$6" "$7"
		printf 'spec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "%s"}}}\n' "${GPUS:-1}"
	} >"$T/pod.yaml"
	kc create -f "$T/pod.yaml" >"$T/out" 2>&1 || bad "pod $1: $(cat "$T/out")"
}
nbound() { kc get pods -l app=kinds -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }
npods() { kc get pods -l app=kinds -o name | grep -c .; }
allbound() { [ "$(nbound)" -eq "$(npods)" ] && [ "$(npods)" -gt 0 ]; }
none() { [ "$(npods)" -eq 0 ]; }
# check KIND: after the short gang had time, nothing may be bound; then
# LAST (a command creating the last pod) completes it.
short() {
	sleep 2.5
	if [ "$(nbound)" -eq 0 ]; then ok; else bad "$1: $(nbound) pods bound while the gang was one short"; fi
}
done_kind() {
	wait_for "$1-gang-bound" 150 allbound ||
		{ kc get pods -l app=kinds -o wide 2>&1 | head -8; tail -n 5 "$T/sched.log"; }
	kc delete pods -l app=kinds --wait=false >/dev/null 2>&1
	wait_for "$1-cleanup" 100 none
}

# --- JobSet: pods of its Jobs, labelled by the JobSet controller ------------
# (owned by the JobSet itself here: its Jobs do not exist, and the garbage
# collector deletes pods whose owner does not exist, as kube's does)
sed 's/^metadata:$/metadata:\n  labels: {kueue.x-k8s.io\/queue-name: team-a}/' "$W/samples/jobset.yaml" >"$T/js.yaml"
uid=$(obj "$T/js.yaml") || bad "JobSet sample not created"
js() { pod "paralleljobs-$1-0-$2" "jobset.sigs.k8s.io/jobset-name: paralleljobs, jobset.sigs.k8s.io/replicatedjob-name: $1" "" jobset.x-k8s.io/v1alpha2 JobSet paralleljobs "$uid"; }
for i in 0 1 2 3; do js workers "$i"; done
short jobset
js driver 0
done_kind jobset

# --- LeaderWorkerSet: a group is its leader and size-1 workers ---------------
sed 's/^  name: leaderworkerset-sample$/  name: leaderworkerset-sample\n  namespace: default/; s/^metadata:$/metadata:\n  annotations: {}/' "$W/samples/leaderworkerset.yaml" |
	sed 's/^  labels:$/  labels:\n    muster.io\/queue: team-a/' >"$T/lws.yaml"
uid=$(obj "$T/lws.yaml") || bad "LeaderWorkerSet sample not created"
lws() { pod "leaderworkerset-sample-0$1" "leaderworkerset.sigs.k8s.io/name: leaderworkerset-sample, leaderworkerset.sigs.k8s.io/group-index: \"0\", leaderworkerset.sigs.k8s.io/worker-index: \"$2\"" "" leaderworkerset.x-k8s.io/v1 LeaderWorkerSet leaderworkerset-sample "$uid"; }
lws "" 0; lws -1 1; lws -2 2
short lws
lws -3 3
done_kind lws

# --- PyTorchJob ---------------------------------------------------------------
sed 's/^  namespace: kubeflow$/  labels: {muster.io\/queue: team-a}/' "$W/samples/pytorchjob.yaml" >"$T/pt.yaml"
uid=$(obj "$T/pt.yaml") || bad "PyTorchJob sample not created"
pt() { pod "pytorch-simple-$1-0" "training.kubeflow.org/job-name: pytorch-simple, training.kubeflow.org/replica-type: $1" "" kubeflow.org/v1 PyTorchJob pytorch-simple "$uid"; }
pt worker
short pytorchjob
pt master
done_kind pytorchjob

# --- MPIJob: a launcher and its workers ---------------------------------------
sed 's/^metadata:$/metadata:\n  labels: {muster.io\/queue: team-a}/' "$W/samples/mpijob.yaml" >"$T/mpi.yaml"
uid=$(obj "$T/mpi.yaml") || bad "MPIJob sample not created"
mw=$(kc get mpijob tensorflow-mnist -o jsonpath='{.spec.mpiReplicaSpecs.Worker.replicas}')
mpi() { pod "tensorflow-mnist-$1" "training.kubeflow.org/job-name: tensorflow-mnist, training.kubeflow.org/replica-type: $2" "" kubeflow.org/v1 MPIJob tensorflow-mnist "$uid"; }
i=0; while [ "$i" -lt "${mw:-1}" ]; do mpi "worker-$i" worker; i=$((i + 1)); done
short mpijob
mpi launcher launcher
done_kind mpijob

# --- RayJob: the RayCluster it makes (head + worker groups' minReplicas) -----
uid=$(sed 's/^metadata:$/metadata:\n  labels: {muster.io\/queue: team-a}/' "$W/samples/rayjob.yaml" | kc create -f - -o jsonpath='{.metadata.uid}') || bad "RayJob sample not created"
kc get rayjob rayjob-sample -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
rc = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
      "metadata": {"name": "rayjob-sample-raycluster", "labels": {"muster.io/queue": "team-a"},
                   "ownerReferences": [{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "rayjob-sample",
                                        "uid": j["metadata"]["uid"], "controller": True}]},
      "spec": j["spec"]["rayClusterSpec"]}
print(json.dumps(rc))' >"$T/rc.json"
ruid=$(obj "$T/rc.json") || bad "RayCluster not created"
ray() { pod "rayjob-sample-raycluster-$1" "ray.io/cluster: rayjob-sample-raycluster, ray.io/node-type: $2, ray.io/group: $3" "" ray.io/v1 RayCluster rayjob-sample-raycluster "$ruid"; }
ray head head headgroup
short rayjob
ray small-group-worker-a worker small-group
wait_for rayjob-gang-bound 150 allbound
# the autoscaler scales small-group up (minReplicas 1, maxReplicas 5): a
# worker above the minimum is elastic, bound once the gang runs
ray small-group-worker-b worker small-group
done_kind rayjob

# --- Volcano PodGroup, and a Volcano Job through the PodGroup it makes ------
cat >"$T/vpg.yaml" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vpg}
spec: {minMember: 3, queue: team-a}
YAML
uid=$(obj "$T/vpg.yaml") || bad "Volcano PodGroup not created"
vp() { pod "vpg-$1" "" "scheduling.k8s.io/group-name: vpg" scheduling.volcano.sh/v1beta1 PodGroup vpg "$uid"; }
vp 0; vp 1
short volcano-podgroup
vp 2
done_kind volcano-podgroup
cat >"$T/vj.yaml" <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  minAvailable: 3
  schedulerName: muster
  queue: team-a
  tasks:
  - name: ps
    replicas: 1
    template: {spec: {containers: [{name: main, image: busybox}]}}
  - name: worker
    replicas: 2
    template: {spec: {containers: [{name: main, image: busybox}]}}
YAML
juid=$(obj "$T/vj.yaml") || bad "Volcano Job not created"
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: vj-%s\n' "$juid" >"$T/vjpg.yaml"
printf '  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: vj, uid: %s, controller: true}]\n' "$juid" >>"$T/vjpg.yaml"
printf 'spec: {minMember: 3, queue: team-a, minTaskMember: {ps: 1, worker: 2}}\n' >>"$T/vjpg.yaml"
obj "$T/vjpg.yaml" >/dev/null || bad "the Volcano Job's PodGroup not created"
vj() { pod "vj-$1-$2" "volcano.sh/job-name: vj" "scheduling.k8s.io/group-name: vj-$juid, volcano.sh/task-spec: $1" batch.volcano.sh/v1alpha1 Job vj "$juid"; }
vj worker 0; vj worker 1
short volcano-job
vj ps 0
done_kind volcano-job

# --- KAI PodGroup with two SubGroups -------------------------------------------
cat >"$T/kpg.yaml" <<'YAML'
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: kpg}
spec:
  minMember: 3
  queue: team-a
  subGroups:
  - {name: decoders, minMember: 2}
  - {name: prefills, minMember: 1}
YAML
uid=$(obj "$T/kpg.yaml") || bad "KAI PodGroup not created"
kp() { pod "kpg-$1" "kai.scheduler/subgroup-name: $2" "pod-group-name: kpg" scheduling.run.ai/v2alpha2 PodGroup kpg "$uid"; }
kp d0 decoders; kp d1 decoders; kp d2 decoders
short kai-podgroup
kp p0 prefills
done_kind kai-podgroup

# --- suspend until admitted: JobSet, then PyTorchJob ---------------------------
# tmpl GPUS: a pod template of one 8-GPU container (lines of YAML at depth $2).
cat >"$T/sjs.yaml" <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: sjs
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  suspend: true
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 3
        completions: 3
        template:
          spec:
            schedulerName: muster
            containers: [{name: w, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
  - name: driver
    template:
      spec:
        template:
          spec:
            schedulerName: muster
            containers: [{name: d, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
YAML
cat >"$T/spt.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: spt
  labels: {muster.io/queue: team-a}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          schedulerName: muster
          priorityClassName: kinds-low
          containers: [{name: pytorch, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
    Worker:
      replicas: 1
      template:
        spec:
          schedulerName: muster
          priorityClassName: kinds-low
          containers: [{name: pytorch, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
YAML
# The PyTorchJob's templates name a PriorityClass: before any pod exists, its
# gang has the value kube's Priority admission will give its pods.
cat >"$T/pc.yaml" <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: kinds-low}
value: -5
YAML
kc apply -f "$T/pc.yaml" >/dev/null 2>&1 && ok || bad "PriorityClass kinds-low not created"
uid=$(obj "$T/sjs.yaml") || bad "suspended JobSet not created"
jsfree() { [ "$(kc get jobset sjs -o jsonpath='{.spec.suspend}')" = false ]; }
wait_for jobset-admitted-unsuspended 100 jsfree
kc get events --field-selector involvedObject.name=sjs >"$T/ev" 2>&1
has jobset-admitted-event "$T/ev" "admitted by muster"
obj "$T/spt.yaml" >/dev/null || bad "suspended PyTorchJob not created"
ptwhy() { kc get events --field-selector involvedObject.name=spt 2>/dev/null | grep -q "suspended until muster admits it"; }
wait_for pytorchjob-says-why 100 ptwhy
tok=$(sed -n 's/.*ui on \(http:[^ ]*\)\/ui\/#token=\([0-9a-f]*\).*/\2/p' "$T/sched.log" | tail -n 1)
ub=$(sed -n 's/.*ui on \(http:[^ ]*\)\/ui\/#token=.*/\1/p' "$T/sched.log" | tail -n 1)
# (the job API gives the effective priority: under the default LAS order,
# priority x 4 less its attained-service level, 0 to 3: -20 to -17 for -5)
prio5() { curl -sf -H "Authorization: Bearer $tok" "$ub/ui/api/job?key=w:default/PyTorchJob/spt" \
	>"$T/spt.json" && grep -qE '"priority":-(1[7-9]|20),' "$T/spt.json"; }
wait_for pytorchjob-class-priority 50 prio5 || head -c 400 "$T/spt.json"
if [ "$(kc get pytorchjob spt -o jsonpath='{.spec.runPolicy.suspend}')" = true ]; then ok; else
	bad "the PyTorchJob was admitted while the admitted JobSet held the room"; fi
# the JobSet controller (this test) makes its pods: the gang binds
sjs() { GPUS=8 pod "sjs-$1-0-$2" "jobset.sigs.k8s.io/jobset-name: sjs, jobset.sigs.k8s.io/replicatedjob-name: $1" "" jobset.x-k8s.io/v1alpha2 JobSet sjs "$uid"; }
sjs workers 0; sjs workers 1; sjs workers 2; sjs driver 0
done_kind suspended-jobset
kc delete jobset sjs >/dev/null 2>&1
ptfree() { [ "$(kc get pytorchjob spt -o jsonpath='{.spec.runPolicy.suspend}')" = false ]; }
wait_for pytorchjob-admitted-once-room 100 ptfree

# --- a RayJob as a whole: its RayCluster's head and workers' minimum ---------
cat >"$T/srj.yaml" <<'YAML'
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: srj
  labels: {muster.io/queue: team-a}
spec:
  suspend: true
  entrypoint: python -c 'print(1)'
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          schedulerName: muster
          containers: [{name: ray-head, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      minReplicas: 2
      maxReplicas: 4
      rayStartParams: {}
      template:
        spec:
          schedulerName: muster
          containers: [{name: ray-worker, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}]
YAML
ruid=$(obj "$T/srj.yaml") || bad "suspended RayJob not created"
rjwhy() { kc get events --field-selector involvedObject.name=srj 2>/dev/null | grep -q "suspended until muster admits it"; }
wait_for rayjob-says-why 100 rjwhy
if [ "$(kc get rayjob srj -o jsonpath='{.spec.suspend}')" = true ]; then ok; else
	bad "the RayJob was admitted while the admitted PyTorchJob held half the cluster"; fi
kc delete pytorchjob spt >/dev/null 2>&1
rjfree() { [ "$(kc get rayjob srj -o jsonpath='{.spec.suspend}')" = false ]; }
wait_for rayjob-admitted-unsuspended 100 rjfree
kc get events --field-selector involvedObject.name=srj >"$T/ev" 2>&1
has rayjob-admitted-event "$T/ev" "gang of 3 pods fits"
# KubeRay (this test) makes the RayCluster, owned by the RayJob, then its pods
kc get rayjob srj -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(json.dumps({"apiVersion": "ray.io/v1", "kind": "RayCluster",
      "metadata": {"name": "srj-raycluster-x7k2p", "labels": {"ray.io/originated-from-crd": "RayJob",
                   "ray.io/originated-from-cr-name": "srj"},
                   "ownerReferences": [{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "srj",
                                        "uid": j["metadata"]["uid"], "controller": True}]},
      "spec": j["spec"]["rayClusterSpec"]}))' >"$T/src.json"
cuid=$(obj "$T/src.json") || bad "the RayJob's RayCluster not created"
srj() { GPUS=8 pod "srj-raycluster-x7k2p-$1" "ray.io/cluster: srj-raycluster-x7k2p, ray.io/node-type: $2, ray.io/group: $3" "" ray.io/v1 RayCluster srj-raycluster-x7k2p "$cuid"; }
srj head head headgroup; srj gpu-worker-a worker gpu; srj gpu-worker-b worker gpu
wait_for rayjob-pods-bound 150 allbound
# KubeRay (this test) makes the submitter Job (K8sJobMode, the default)
# once the cluster is up: a batch/v1 Job named as the RayJob, owned by it;
# muster up's Job controller makes its pod, which joins the RayJob's gang
# (its part "submitter"), as Kueue counts it in the RayJob's pod sets.
# Its pod asks 1 CPU and 512Mi, not the 500m and 200Mi of KubeRay's default
# template that muster admitted: it still takes the place (its node has the
# difference free), matched by its owner Job.
# sub CPU MEM: the submitter Job's manifest, into $T/sub.yaml
sub() { cat >"$T/sub.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: srj
  labels: {ray.io/originated-from-crd: RayJob, ray.io/originated-from-cr-name: srj}
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayJob, name: srj, uid: $ruid, controller: true}]
spec:
  backoffLimit: 0
  template:
    metadata: {labels: {app: kinds}}
    spec:
      schedulerName: muster
      restartPolicy: Never
      containers: [{name: ray-job-submitter, image: rayproject/ray, resources: {requests: {cpu: "$1", memory: $2}, limits: {cpu: "$1", memory: 1Gi}}}]
YAML
}
sub 1 512Mi
kc create -f "$T/sub.yaml" >"$T/out" 2>&1 && ok || bad "submitter Job: $(head -c 300 "$T/out")"
subpod() { kc get pods -l job-name=srj -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }
subbound() { [ -n "$(subpod)" ] && [ -n "$(node_of "$(subpod)")" ]; }
node_of() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
wait_for submitter-pod-bound 100 subbound
# the place admitted for it was held until it came, and it took it
has submitter-place-held "$T/sched.log" "admitted for the pod Job/srj makes next is held until it comes"
has submitter-took-its-place "$T/sched.log" "pod default/$(subpod) takes the place held on"
tok=$(sed -n 's/.*ui on \(http:[^ ]*\)\/ui\/#token=\([0-9a-f]*\).*/\2/p' "$T/sched.log" | tail -n 1)
ub=$(sed -n 's/.*ui on \(http:[^ ]*\)\/ui\/#token=.*/\1/p' "$T/sched.log" | tail -n 1)
ingang() { curl -sf -H "Authorization: Bearer $tok" "$ub/ui/api/job?key=w:default/RayJob/srj" >"$T/rj.json" &&
	grep -q "\"name\":\"$(subpod)\"" "$T/rj.json"; }
wait_for submitter-in-the-rayjob-gang 50 ingang || head -c 600 "$T/rj.json"
gen0=$(kc get rayjob srj -o jsonpath='{.metadata.generation}')

# --- re-suspension: a worker's node is lost; the RayJob goes back to its queue
wnode=$(kc get pod srj-raycluster-x7k2p-gpu-worker-a -o jsonpath='{.spec.nodeName}')
"$M" node fail "$wnode" --kubeconfig "$T/data/kubeconfig" >/dev/null 2>&1 && ok || bad "muster node fail $wnode"
# (the suspension may be short: muster queues the RayJob again once its pods
# are gone, and here the evicted ones go at once; so the event, and two
# more spec changes, suspend and unsuspend, are what is checked)
rjevicted() { kc get events --field-selector involvedObject.name=srj 2>/dev/null | grep -q "suspended again by muster and requeued"; }
wait_for rayjob-suspended-again-event 100 rjevicted
# ... and the Evicted condition in the annotation muster.io/evicted (the
# RayJob's status belongs to KubeRay and has no conditions)
kc get rayjob srj -o jsonpath='{.metadata.annotations.muster\.io/evicted}' >"$T/evc" 2>&1
has rayjob-evicted-condition "$T/evc" '"type":"Evicted","status":"True","reason":"GangRestart"'
has rayjob-evicted-condition-message "$T/evc" '"message":"suspended again by muster and requeued: '
has rayjob-evicted-condition-time "$T/evc" '"lastTransitionTime":"20'
# KubeRay (this test) deletes the RayCluster and the submitter Job of a
# suspended RayJob
kc delete raycluster srj-raycluster-x7k2p >/dev/null 2>&1
kc delete job srj >/dev/null 2>&1
kc delete pods -l app=kinds --wait=false >/dev/null 2>&1
wait_for rayjob-pods-gone 100 none
# three nodes are left: the gang fits again and is admitted again
rjagain() { rjfree && [ "$(kc get rayjob srj -o jsonpath='{.metadata.generation}')" -ge $((gen0 + 2)) ]; }
wait_for rayjob-suspended-and-admitted-again 100 rjagain
# KubeRay (this test) makes its cluster again, and a submitter whose pod asks
# 100 CPUs, more than its node has beside the place: the place is given up
# with the reason (log and a Warning event on the pod), not silently taken
cuid=$(obj "$T/src.json") || bad "the RayJob's RayCluster not created again"
srj head head headgroup; srj gpu-worker-a worker gpu; srj gpu-worker-b worker gpu
wait_for rayjob-pods-bound-again 150 allbound
sub 100 200Mi
kc create -f "$T/sub.yaml" >"$T/out" 2>&1 && ok || bad "submitter Job: $(head -c 300 "$T/out")"
refused() { grep -q "is not taken by this pod: it asks 100000 CPU (millicores) where its template asked 500" "$T/sched.log"; }
wait_for submitter-place-refused-with-reason 100 refused
subev() { kc get events --field-selector "involvedObject.name=$(subpod)" 2>/dev/null | grep -q HeldPlaceRefused; }
wait_for submitter-refusal-event 50 subev
if subbound; then bad "the 100-CPU submitter pod was bound on $(node_of "$(subpod)")"; else ok; fi
done_
