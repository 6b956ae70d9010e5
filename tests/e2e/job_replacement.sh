#!/bin/sh
# job_replacement.sh - a Job's status.terminating and spec.podReplacementPolicy
# (round 15) with the real kubectl against `muster up`, as kube-controller-
# manager's Job controller has them since 1.29 (JobPodReplacementPolicy, on
# by default): the API server defaults the policy (TerminatingOrFailed, or
# Failed with a podFailurePolicy) and refuses another value, with
# pkg/apis/batch/validation's message; the controller counts the pods being
# deleted and not finished in status.terminating, and replaces a deleted pod
# at once under TerminatingOrFailed but only once it is gone (its simulated
# containers stopped, muster.io/stop-after) under Failed.  The pods are bound
# by hand through the Binding subresource, as a scheduler binds them (a bound
# pod's delete is graceful: it stays, terminating, until its kubelet stops it).
# Usage: sh tests/e2e/job_replacement.sh PATH_TO_MUSTER.  Ends with
# "e2e job_replacement: N passed, N failed".  Every wait is a bounded loop
# and every process started here is killed on exit.
E2E_NAME=job_replacement; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { for p in $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
bind() {
	printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"kind":"Node","name":"%s"}}\n' \
		"$1" "$2" >"$T/binding.json"
	kc create --raw "/api/v1/namespaces/default/pods/$1/binding" -f "$T/binding.json" >/dev/null
}
cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 1
  namePrefix: n-
  allocatable: {cpu: "32", memory: 64Gi}
YAML
"$M" up --cluster "$T/cluster.yaml" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
	>"$T/up.out" 2>"$T/up.err" &
UPID=$!
i=0
while [ "$i" -lt 150 ] && ! kc get --raw /readyz >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done

# job NAME [POLICY_LINE]: parallelism 2, pods that take 6 s to stop
job() {
	cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  parallelism: 2
  completions: 4
  ${2:-}
  template:
    metadata: {annotations: {muster.io/stop-after: "6s"}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
      containers: [{name: w, image: "trainer:1"}]
YAML
}
pods_of() { kc get pods -l "batch.kubernetes.io/job-name=$1" -o name 2>/dev/null | sed 's#pod/##'; }
npods() { [ "$(pods_of "$1" | wc -l)" -eq "$2" ]; }
st() { kc get job "$1" -o "jsonpath={.status.active}/{.status.terminating}" 2>/dev/null; }
status_is() { [ "$(st "$1")" = "$2" ]; }

# --- the API: defaults and validation ---------------------------------------
job dflt | kc create -f - >"$T/out" 2>&1; has "create a Job without a policy" "$T/out" "created"
kc get job dflt -o 'jsonpath={.spec.podReplacementPolicy}' >"$T/out" 2>&1
has "defaulted to TerminatingOrFailed" "$T/out" "^TerminatingOrFailed$"
job pfp "podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]}" \
	| kc create -f - >"$T/out" 2>&1
has "create a Job with a podFailurePolicy" "$T/out" "created"
kc get job pfp -o 'jsonpath={.spec.podReplacementPolicy}' >"$T/out" 2>&1
has "defaulted to Failed with a podFailurePolicy" "$T/out" "^Failed$"
job bad1 "podReplacementPolicy: Sometimes" | kc create -f - >"$T/out" 2>&1
has "an unknown policy is refused" "$T/out" \
	'spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", "TerminatingOrFailed"'
job bad2 "podReplacementPolicy: TerminatingOrFailed
  podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]}" \
	| kc create -f - >"$T/out" 2>&1
has "TerminatingOrFailed with a podFailurePolicy is refused" "$T/out" \
	'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"'
kc delete job dflt pfp --wait=false >/dev/null 2>&1

# --- the controller -----------------------------------------------------------
job tof "podReplacementPolicy: TerminatingOrFailed" | kc create -f - >"$T/out" 2>&1
has "create tof" "$T/out" "created"
job onlyf "podReplacementPolicy: Failed" | kc create -f - >"$T/out" 2>&1
has "create onlyf" "$T/out" "created"
wait_for "tof has 2 pods" 50 npods tof 2
wait_for "onlyf has 2 pods" 50 npods onlyf 2
for p in $(pods_of tof) $(pods_of onlyf); do bind "$p" n-0; done
wait_for "tof: 2 active, 0 terminating" 50 status_is tof 2/0
wait_for "onlyf: 2 active, 0 terminating" 50 status_is onlyf 2/0
kc delete pod "$(pods_of tof | head -n 1)" --wait=false >/dev/null 2>&1
kc delete pod "$(pods_of onlyf | head -n 1)" --wait=false >/dev/null 2>&1
# TerminatingOrFailed: a replacement at once, beside the terminating pod
wait_for "tof: 2 active, 1 terminating" 25 status_is tof 2/1
wait_for "tof: 3 pods (one terminating)" 25 npods tof 3
# Failed: none while the deleted pod terminates
wait_for "onlyf: 1 active, 1 terminating" 25 status_is onlyf 1/1
sleep 2
npods onlyf 2 && ok || bad "onlyf made a replacement while its pod terminates: $(pods_of onlyf | tr '\n' ' ')"
st onlyf >"$T/out"; has "onlyf still 1 active, 1 terminating" "$T/out" "^1/1$"
# the deleted pods gone (6 s): onlyf replaces its pod, terminating back to 0
wait_for "onlyf: 2 active, 0 terminating once the pod is gone" 60 status_is onlyf 2/0
wait_for "tof: 0 terminating once the pod is gone" 60 status_is tof 2/0
npods onlyf 2 && ok || bad "onlyf: $(pods_of onlyf | wc -l) pods, expected 2"
kc get job onlyf -o yaml >"$T/out" 2>&1
has "status.terminating is written as 0" "$T/out" "terminating: 0"
done_
