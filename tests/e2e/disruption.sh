#!/bin/sh
# disruption.sh - PodDisruptionBudgets (policy/v1), their status and the
# Eviction API on `muster up`: the disruption controller writes
# currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed,
# observedGeneration and the DisruptionAllowed condition as
# kube-controller-manager's does (and again when pods or the budget
# change); an eviction the status allows goes and takes one from it (the
# pod noted in disruptedPods until it is deleted), one it does not allow
# gets 429 with kube-apiserver's message and DisruptionBudget cause, a
# Pending pod goes without a budget, a pod under two budgets gets 500,
# maxUnavailable over pods without a controller expects none (429), over a
# Job's pods fails safe (SyncFailed: Jobs have no scale subresource),
# maxUnavailable or a percentage over the pods of a Deployment's
# ReplicaSet, a StatefulSet or a lone ReplicaSet expects their
# controller's scale (apps/v1 objects stored with a /scale subresource,
# which kubectl scale and the Python client change), and a budget with
# both minAvailable and maxUnavailable is invalid.  The
# controller records kube's Events: UnmanagedPods (with Go's print of the
# selector), NoPods (a repeat adds to the same Event's count) and
# CalculateExpectedPodCountFailed.  The Python
# client reads the status and gets the 429 as an ApiException.
# Usage: sh tests/e2e/disruption.sh PATH_TO_MUSTER.  Ends with
# "e2e disruption: N passed, N failed".
E2E_NAME=disruption; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPID=""
on_exit() { [ -n "$UPID" ] && kill "$UPID" 2>/dev/null; wait 2>/dev/null; }
need_kubectl
up_start "$ROOT/examples/cluster-small.yaml"

for i in 1 2 3 4; do
	cat >"$T/p$i.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: web-$i, labels: {app: web}}
spec:
  schedulerName: nobody
  containers: [{name: c, image: x}]
EOF
	expect "create web-$i" 0 k apply -f "$T/p$i.yaml"
done
# three of them run (bound: the simulated kubelet starts them), web-4 stays Pending
for i in 1 2 3; do
	api -s -o /dev/null -X POST -H 'Content-Type: application/json' \
		-d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web-'$i'"},"target":{"kind":"Node","name":"a100-0"}}' \
		"$S/api/v1/namespaces/default/pods/web-$i/binding"
done
running() { k get pods -l app=web --field-selector status.phase=Running -o name && [ "$(wc -l <"$T/out")" -eq 3 ]; }
wait_for "three running" 100 running
cat >"$T/pdb.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
EOF
expect "create the budget" 0 k apply -f "$T/pdb.yaml"
# st NAME: "generation/observed current desired expected allowed type=status reason"
st() { "$KC" --kubeconfig "$T/data/kubeconfig" get pdb "$1" -o jsonpath='{.metadata.generation}/{.status.observedGeneration} {.status.currentHealthy} {.status.desiredHealthy} {.status.expectedPods} {.status.disruptionsAllowed} {.status.conditions[0].type}={.status.conditions[0].status} {.status.conditions[0].reason}'; }
is_st() { [ "$(st "$1")" = "$2" ]; }
# three Ready of the four pods (web-4 is Pending, and counts as expected)
wait_for "status written" 50 is_st web "1/1 3 2 4 1 DisruptionAllowed=True SufficientPods"
expect "get it" 0 k get pdb
has "columns" "$T/out" "web    2               <none>            1"
evict() {
	api -s -o "$T/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-d '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"'$1'","namespace":"default"}}' \
		"$S/api/v1/namespaces/default/pods/$1/eviction" >"$T/code"
}
evict web-1
has "3 healthy, 2 wanted: evicted" "$T/code" "201"
gone() { ! k get pod web-1; }
wait_for "web-1 gone" 100 gone
wait_for "status after the eviction" 50 is_st web "1/1 2 2 3 0 DisruptionAllowed=False InsufficientPods"
expect "no disruptedPods left" 0 k get pdb web -o jsonpath='{.status.disruptedPods}'
[ ! -s "$T/out" ] && ok || bad "disruptedPods kept a deleted pod: $(cat "$T/out")"
evict web-2
has "2 healthy, 2 wanted: 429" "$T/code" "429"
has "429 message" "$T/out" "Cannot evict pod as it would violate the pod's disruption budget."
has "429 cause" "$T/out" '"reason":"DisruptionBudget","message":"The disruption budget web needs 2 healthy pods and has 2 currently"'
expect "web-2 still there" 0 k get pod web-2
evict web-4
has "a pending pod goes whatever the budget" "$T/code" "201"
# a spec change: the controller observes the new generation
expect "lower the budget" 0 k patch pdb web --type=merge -p '{"spec":{"minAvailable":1}}'
wait_for "new generation observed" 50 is_st web "2/2 2 1 2 1 DisruptionAllowed=True SufficientPods"

# the official Python client reads the status and meets a refusal as kube's
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
	k patch pdb web --type=merge -p '{"spec":{"minAvailable":2}}'
	wait_for "back to 2" 50 is_st web "3/3 2 2 2 0 DisruptionAllowed=False InsufficientPods"
	/usr/bin/python3 - "$T/data/kubeconfig" >"$T/py.out" 2>&1 <<'PY'
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
pol, core = client.PolicyV1Api(), client.CoreV1Api()
b = pol.read_namespaced_pod_disruption_budget_status("web", "default")
s = b.status
print("status", s.current_healthy, s.desired_healthy, s.expected_pods, s.disruptions_allowed,
      s.observed_generation, [(c.type, c.status, c.reason) for c in s.conditions])
ev = client.V1Eviction(metadata=client.V1ObjectMeta(name="web-2", namespace="default"))
try:
    core.create_namespaced_pod_eviction("web-2", "default", ev)
    print("evicted")
except client.exceptions.ApiException as e:
    print("refused", e.status, "DisruptionBudget" in e.body)
PY
	has "python reads the status" "$T/py.out" "status 2 2 2 0 3 [('DisruptionAllowed', 'False', 'InsufficientPods')]"
	has "python gets the 429" "$T/py.out" "refused 429 True"
else
	bad "python3-kubernetes is missing (scripts/install-deps.sh installs it)"
fi

cat >"$T/pdb2.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pct}
spec:
  maxUnavailable: "50%"
  selector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
EOF
expect "a second budget" 0 k apply -f "$T/pdb2.yaml"
evict web-3
has "two budgets: 500" "$T/code" "500"
has "two budgets message" "$T/out" "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
expect "drop the first" 0 k delete pdb web
# maxUnavailable counts the controllers' replicas: pods without one count
# for nothing, so no pod is expected and nothing may go
wait_for "unmanaged pods expect none" 50 is_st web-pct "1/1 2 0 0 0 DisruptionAllowed=False InsufficientPods"
evict web-3
has "no expected pods: 429" "$T/code" "429"
has "no expected pods: cause" "$T/out" "The disruption budget web-pct needs 0 healthy pods and has 2 currently"
# ev NAME REASON: the Events of budget NAME with REASON, as
# "type|source|kind|message|count" (each of the controller's syncs records
# them again, its own status writes included, as kube's does)
ev() { k get events --field-selector "involvedObject.name=$1,reason=$2" \
	-o jsonpath='{range .items[*]}{.type}|{.source.component}|{.involvedObject.kind}|{.message}|{.count}{"\n"}{end}'; }
has_ev() { ev "$1" "$2" && [ -s "$T/out" ]; }
wait_for "UnmanagedPods event" 50 has_ev web-pct UnmanagedPods
has "UnmanagedPods: kube's message, Go's selector" "$T/out" 'Warning|controllermanager|PodDisruptionBudget|Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:app,Operator:In,Values:[web],},},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.'

# a budget that selects no pod: NoPods, and a repeat adds to the same Event's count
cat >"$T/none.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: nothing}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: absent}}
EOF
expect "a budget over no pods" 0 k apply -f "$T/none.yaml"
wait_for "NoPods event" 50 has_ev nothing NoPods
has "NoPods: Normal, kube's message" "$T/out" "Normal|controllermanager|PodDisruptionBudget|No matching pods found|"
sleep 0.5; ev nothing NoPods; c1=$(sed 's/.*|//' "$T/out")
expect "touch the budget" 0 k label pdb nothing touched=yes
counted() { ev nothing NoPods && [ "$(wc -l <"$T/out")" -eq 1 ] && [ "$(sed 's/.*|//' "$T/out")" -gt "$c1" ]; }
wait_for "a repeat adds to the count of the same Event" 50 counted

# a Job's pods: Jobs have no scale subresource, the budget fails safe
cat >"$T/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      schedulerName: nobody
      containers: [{name: c, image: x}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: batch}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {job-name: batch}}
EOF
expect "a Job and its budget" 0 k apply -f "$T/job.yaml"
jobpods() { k get pods -l job-name=batch -o name && [ "$(wc -l <"$T/out")" -eq 2 ]; }
wait_for "the Job's pods" 50 jobpods
wait_for "fails safe" 50 is_st batch "1/    0 DisruptionAllowed=False SyncFailed"
expect "its message" 0 k get pdb batch -o jsonpath='{.status.conditions[0].message}'
has "no scale subresource" "$T/out" "jobs.batch does not implement the scale subresource"
wait_for "CalculateExpectedPodCountFailed event" 50 has_ev batch CalculateExpectedPodCountFailed
has "CalculateExpectedPodCountFailed: Warning, kube's message" "$T/out" "Warning|controllermanager|PodDisruptionBudget|Failed to calculate the number of expected pods: jobs.batch does not implement the scale subresource"

# --- the scale of Deployments, ReplicaSets and StatefulSets (apps/v1, stored:
# no controller makes their pods here, so the pods are made by hand with
# their controller references, as the ReplicaSet and StatefulSet controllers
# would make them).  kube's finders: a ReplicaSet's Deployment's scale, a
# ReplicaSet's own when no Deployment controls it, a StatefulSet's
cat >"$T/apps.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: front}
spec:
  replicas: 4
  selector: {matchLabels: {app: front}}
  template:
    metadata: {labels: {app: front}}
    spec: {schedulerName: nobody, containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {schedulerName: nobody, containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: solo}
spec:
  replicas: 5
  selector: {matchLabels: {app: solo}}
  template:
    metadata: {labels: {app: solo}}
    spec: {schedulerName: nobody, containers: [{name: c, image: x}]}
EOF
expect "a Deployment, a StatefulSet, a ReplicaSet" 0 k apply -f "$T/apps.yaml"
uid() { "$KC" --kubeconfig "$T/data/kubeconfig" get "$1" "$2" -o jsonpath='{.metadata.uid}'; }
DUID=$(uid deploy front); SUID=$(uid sts db); RUID=$(uid rs solo)
cat >"$T/rs.yaml" <<EOF
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: front-7d4
  labels: {app: front}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: front, uid: $DUID, controller: true}]
spec:
  replicas: 2
  selector: {matchLabels: {app: front}}
  template:
    metadata: {labels: {app: front}}
    spec: {schedulerName: nobody, containers: [{name: c, image: x}]}
EOF
expect "the Deployment's ReplicaSet" 0 k apply -f "$T/rs.yaml"
FUID=$(uid rs front-7d4)
# pod NAME APP KIND OWNER UID
pod() {
	cat >"$T/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: $2}
  ownerReferences: [{apiVersion: apps/v1, kind: $3, name: $4, uid: "$5", controller: true}]
spec: {schedulerName: nobody, containers: [{name: c, image: x}]}
EOF
	expect "pod $1" 0 k apply -f "$T/pod.yaml"
}
pod front-a front ReplicaSet front-7d4 "$FUID"; pod front-b front ReplicaSet front-7d4 "$FUID"
pod db-0 db StatefulSet db "$SUID"
pod solo-a solo ReplicaSet solo "$RUID"
cat >"$T/pdbs.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: front}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: front}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec: {maxUnavailable: "50%", selector: {matchLabels: {app: db}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: solo}
spec: {minAvailable: "40%", selector: {matchLabels: {app: solo}}}
EOF
expect "their budgets" 0 k apply -f "$T/pdbs.yaml"
wait_for "Deployment's scale (4, not the ReplicaSet's 2)" 50 is_st front "1/1 0 3 4 0 DisruptionAllowed=False InsufficientPods"
wait_for "StatefulSet's scale, 50% rounded up" 50 is_st db "1/1 0 1 3 0 DisruptionAllowed=False InsufficientPods"
wait_for "a lone ReplicaSet's own scale" 50 is_st solo "1/1 0 2 5 0 DisruptionAllowed=False InsufficientPods"
# the scale subresource: GET, kubectl scale (a merge PATCH of it), 422, 409
expect "GET scale" 0 k get --raw /apis/apps/v1/namespaces/default/deployments/front/scale
has "Scale" "$T/out" '"kind":"Scale","apiVersion":"autoscaling/v1"'
has "Scale: spec and status" "$T/out" '"spec":{"replicas":4},"status":{"replicas":0,"selector":"app=front"}'
cat >"$T/sel.yaml" <<'EOF'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sel}
spec:
  selector:
    matchLabels: {app: sel}
    matchExpressions: [{key: tier, operator: In, values: [b, a]}, {key: gone, operator: DoesNotExist}]
  template:
    metadata: {labels: {app: sel, tier: a}}
    spec: {containers: [{name: c, image: x}]}
EOF
expect "a StatefulSet with selector expressions" 0 k apply -f "$T/sel.yaml"
expect "its scale" 0 k get --raw /apis/apps/v1/namespaces/default/statefulsets/sel/scale
has "status.selector as kube prints it (by key, values sorted)" "$T/out" '"selector":"app=sel,!gone,tier in (a,b)"'
expect "kubectl scale" 0 k scale deployment front --replicas=6
has "scaled" "$T/out" "deployment.apps/front scaled"
expect "spec.replicas and generation" 0 k get deploy front -o jsonpath='{.spec.replicas} {.metadata.generation}'
has "replicas 6, generation 2" "$T/out" "6 2"
expect "touch the budget" 0 k label pdb front touched=yes
wait_for "the budget follows the new scale" 50 is_st front "1/1 0 5 6 0 DisruptionAllowed=False InsufficientPods"
expect "managedFields: the scale subresource" 0 k get deploy front --show-managed-fields -o jsonpath='{.metadata.managedFields[*].subresource}'
has "subresource scale" "$T/out" "scale"
expect "negative replicas" 1 k patch deploy front --subresource=scale --type=merge -p '{"spec":{"replicas":-1}}'
has "422 as kube's" "$T/out" 'The Scale "front" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
code=$(api -s -o "$T/out" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
	-d '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"front","namespace":"default","resourceVersion":"1"},"spec":{"replicas":2}}' \
	"$S/apis/apps/v1/namespaces/default/deployments/front/scale")
[ "$code" = 409 ] && ok || bad "a stale resourceVersion on /scale gave $code"
expect "sts scale" 0 k scale sts db --replicas=1
expect "discovery lists the scale subresources" 0 k get --raw /apis/apps/v1
has "deployments/scale" "$T/out" '"name":"deployments/scale","singularName":"","namespaced":true,"kind":"Scale"'
expect "kubectl get deploy" 0 k get deploy front
has "deploy columns" "$T/out" "front   0/6     0            0"
cat >"$T/badsel.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: badsel}
spec:
  selector: {matchLabels: {app: one}}
  template:
    metadata: {labels: {app: two}}
    spec: {containers: [{name: c, image: x}]}
EOF
expect "selector must match the template" 1 k apply -f "$T/badsel.yaml"
has "kube's message" "$T/out" 'spec.template.metadata.labels: Invalid value: map[string]string{"app":"two"}: `selector` does not match template `labels`'
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
	/usr/bin/python3 - "$T/data/kubeconfig" >"$T/out" 2>&1 <<'EOF'
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
apps = client.AppsV1Api()
print("scale", apps.read_namespaced_stateful_set_scale("db", "default").spec.replicas)
apps.patch_namespaced_replica_set_scale("solo", "default", {"spec": {"replicas": 7}})
print("rs", apps.read_namespaced_replica_set("solo", "default").spec.replicas)
EOF
	has "python: read a StatefulSet's scale" "$T/out" "scale 1"
	has "python: patch a ReplicaSet's scale" "$T/out" "rs 7"
fi

cat >"$T/bad.yaml" <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bad}
spec: {minAvailable: 1, maxUnavailable: 1, selector: {}}
EOF
expect "both set" 1 k apply -f "$T/bad.yaml"
has "422" "$T/out" "minAvailable and maxUnavailable cannot be both set"
done_
