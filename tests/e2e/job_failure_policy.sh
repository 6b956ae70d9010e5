#!/bin/sh
# job_failure_policy.sh - spec.podFailurePolicy applied by `muster up`'s Job
# controller (round 15), with the real kubectl, as kube-controller-manager's
# Job controller applies it (pkg/controller/job: matchPodFailurePolicy,
# Kubernetes 1.32): the simulated kubelet ends a pod at its muster.io/duration
# with the exit code its muster.io/exit-code annotation gives; a FailJob rule
# on exit code 42 fails the Job at once (FailureTarget, then Failed, reason
# PodFailurePolicy, kube's message) while another exit code is counted and
# retried up to backoffLimit (BackoffLimitExceeded); an Ignore rule on
# DisruptionTarget leaves a pod that failed with that condition (its node
# lost: `muster node fail`) uncounted and replaced, where the same Job
# without the rule fails at backoffLimit 0; a pod evicted through the
# pods/eviction subresource carries DisruptionTarget and is replaced without
# being counted.  The API refuses bad rules with pkg/apis/batch/validation's
# messages, and an Indexed Job is accepted.  Pods are bound by
# hand through the Binding subresource, as a scheduler binds them.
# Usage: sh tests/e2e/job_failure_policy.sh PATH_TO_MUSTER.  Ends with
# "e2e job_failure_policy: N passed, N failed".  Every wait is a bounded loop
# and every process started here is killed on exit.
E2E_NAME=job_failure_policy; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { for p in $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
bind() {
	printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"kind":"Node","name":"%s"}}\n' \
		"$1" "$2" >"$T/binding.json"
	kc create --raw "/api/v1/namespaces/default/pods/$1/binding" -f "$T/binding.json" >/dev/null 2>&1
}
cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 3
  namePrefix: n-
  allocatable: {cpu: "32", memory: 64Gi}
YAML
"$M" up --cluster "$T/cluster.yaml" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
	>"$T/up.out" 2>"$T/up.err" &
UPID=$!
i=0
while [ "$i" -lt 150 ] && ! kc get --raw /readyz >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done

RULES='podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]'
# job NAME BACKOFF EXIT DURATION [RULES]: parallelism 1, completions 2
job() {
	cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  parallelism: 1
  completions: 2
  backoffLimit: $2
  ${5:-}
  template:
    metadata: {annotations: {muster.io/duration: "$4", muster.io/exit-code: "$3"}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "trainer:1"}]
YAML
}
pods_of() { kc get pods -l "batch.kubernetes.io/job-name=$1" -o name 2>/dev/null | sed 's#pod/##'; }
# binds JOB's unbound pods to NODE; true once it has N pods in all
bind_all() {
	for p in $(kc get pods -l "batch.kubernetes.io/job-name=$1" \
		-o 'jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' 2>/dev/null | sed -n 's/=$//p'); do
		bind "$p" "$2"
	done
	[ "$(pods_of "$1" | wc -l)" -ge "$3" ]
}
cond() { kc get job "$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null; }
cond_is() { [ "$(cond "$1" "$2" status)" = True ]; }
failed_is() { [ "$(kc get job "$1" -o 'jsonpath={.status.failed}' 2>/dev/null)" = "$2" ]; }

# --- the API ----------------------------------------------------------------
job defaults 1 0 1h "$RULES" | kc create -f - >"$T/out" 2>&1
has "create a Job with rules" "$T/out" "created"
kc get job defaults -o 'jsonpath={.spec.podFailurePolicy.rules[1].onPodConditions[0].status}' >"$T/out" 2>&1
has "a pattern's status defaults to True" "$T/out" "^True$"
job bad1 1 0 1h 'podFailurePolicy: {rules: [{action: FailJob, onExitCodes: {operator: In, values: [3, 1, 0]}}]}' \
	| kc create -f - >"$T/out" 2>&1
has "0 with In is refused" "$T/out" \
	'spec.podFailurePolicy.rules\[0\].onExitCodes.values\[2\]: Invalid value: 0: must not be 0 for the In operator'
has "unordered values are refused" "$T/out" \
	'spec.podFailurePolicy.rules\[0\].onExitCodes.values: Invalid value: \[\]int32{3, 1, 0}: must be ordered'
job bad2 1 0 1h 'podFailurePolicy: {rules: [{action: FailIndex, onExitCodes: {operator: In, values: [1]}}]}' \
	| kc create -f - >"$T/out" 2>&1
has "FailIndex without backoffLimitPerIndex is refused" "$T/out" \
	'spec.podFailurePolicy.rules\[0\].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set'
job bad3 1 0 1h 'podFailurePolicy: {rules: [{action: Ignore, onExitCodes: {containerName: sidecar, operator: NotIn, values: [1]}}]}' \
	| kc create -f - >"$T/out" 2>&1
has "an unknown containerName is refused" "$T/out" \
	'containerName: Invalid value: "sidecar": must be one of the container or initContainer names in the pod template'
job bad4 1 0 1h "completionMode: Indexed" | kc create -f - >"$T/out" 2>&1
has "completionMode Indexed is accepted (round 16)" "$T/out" "created"
kc delete job bad4 --wait=false >/dev/null 2>&1
cat >"$T/badpod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: badpod, annotations: {muster.io/exit-code: "main=x"}}
spec:
  restartPolicy: Never
  containers: [{name: main, image: "trainer:1"}]
YAML
kc create -f "$T/badpod.yaml" >"$T/out" 2>&1
has "a bad muster.io/exit-code is refused" "$T/out" \
	'metadata.annotations\[muster.io/exit-code\]: must be an exit code'
sed 's/main=x/42/; s/Never/Always/' "$T/badpod.yaml" | kc create -f - >"$T/out" 2>&1
has "muster.io/exit-code needs restartPolicy Never" "$T/out" "needs spec.restartPolicy Never"
kc delete job defaults --wait=false >/dev/null 2>&1

# --- FailJob on exit code 42: the Job fails at once ----------------------------
job fj 6 42 1s "$RULES" | kc create -f - >"$T/out" 2>&1
has "create fj (exit code 42)" "$T/out" "created"
wait_for "fj's pod bound" 50 bind_all fj n-0 1
wait_for "fj has FailureTarget" 60 cond_is fj FailureTarget
wait_for "fj Failed" 60 cond_is fj Failed
cond fj Failed reason >"$T/out"; has "reason PodFailurePolicy" "$T/out" "^PodFailurePolicy$"
POD=$(pods_of fj | head -n 1)
cond fj Failed message >"$T/out"
has "kube's message" "$T/out" "^Container main for pod default/$POD failed with exit code 42 matching FailJob rule at index 0$"
kc get pod "$POD" -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}' >"$T/out"
has "the pod Failed with exit code 42 (reason Error)" "$T/out" "^Failed 42 Error$"
[ "$(pods_of fj | wc -l)" -eq 1 ] && ok || bad "fj made another pod: $(pods_of fj | tr '\n' ' ')"
failed_is fj 1 && ok || bad "fj status.failed $(kc get job fj -o 'jsonpath={.status.failed}')"
kc get events --field-selector involvedObject.name=fj,reason=PodFailurePolicy -o 'jsonpath={.items[0].type}' >"$T/out" 2>&1
has "a Warning Event PodFailurePolicy" "$T/out" "^Warning$"

# --- another exit code: counted and retried, then BackoffLimitExceeded --------
job retry 1 3 1s "$RULES" | kc create -f - >"$T/out" 2>&1
has "create retry (exit code 3, backoffLimit 1)" "$T/out" "created"
wait_for "retry's first pod bound" 50 bind_all retry n-0 1
wait_for "retry counts one failure" 60 failed_is retry 1
cond retry FailureTarget status >"$T/out"; hasnt "not failed after one" "$T/out" "True"
wait_for "retry makes a second pod (bound)" 60 bind_all retry n-0 2
wait_for "retry Failed" 60 cond_is retry Failed
cond retry Failed reason >"$T/out"; has "reason BackoffLimitExceeded" "$T/out" "^BackoffLimitExceeded$"
failed_is retry 2 && ok || bad "retry status.failed $(kc get job retry -o 'jsonpath={.status.failed}')"

# --- Ignore on DisruptionTarget: a pod lost with its node ----------------------
job ign 0 0 1h "$RULES" | kc create -f - >"$T/out" 2>&1
has "create ign (backoffLimit 0, the rules)" "$T/out" "created"
job noign 0 0 1h | kc create -f - >"$T/out" 2>&1
has "create noign (backoffLimit 0, no rules)" "$T/out" "created"
wait_for "ign bound to n-1" 50 bind_all ign n-1 1
wait_for "noign bound to n-1" 50 bind_all noign n-1 1
running() { [ "$(kc get pods -l "batch.kubernetes.io/job-name=$1" -o 'jsonpath={.items[0].status.phase}' 2>/dev/null)" = Running ]; }
wait_for "ign's pod runs" 50 running ign
wait_for "noign's pod runs" 50 running noign
"$M" node fail n-1 --kubeconfig "$T/data/kubeconfig" >"$T/out" 2>&1; has "node n-1 fails" "$T/out" "failed"
wait_for "noign Failed (its pod counted)" 60 cond_is noign Failed
wait_for "ign replaces its pod (bound to n-2)" 60 bind_all ign n-2 2
failed_is ign 0 && ok || bad "ign status.failed $(kc get job ign -o 'jsonpath={.status.failed}')"
cond ign FailureTarget status >"$T/out"; hasnt "ign not failing" "$T/out" "True"
kc get pods -l batch.kubernetes.io/job-name=ign -o 'jsonpath={.items[*].status.conditions[?(@.type=="DisruptionTarget")].reason}' >"$T/out"
has "the lost pod has DisruptionTarget (NodeLost)" "$T/out" "NodeLost"

# --- an evicted pod (pods/eviction) ------------------------------------------
job ev 0 0 1h "$RULES" | kc create -f - >"$T/out" 2>&1
has "create ev" "$T/out" "created"
wait_for "ev bound to n-2" 50 bind_all ev n-2 1
wait_for "ev's pod runs" 50 running ev
POD=$(pods_of ev | head -n 1)
printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"default"}}\n' "$POD" >"$T/ev.json"
kc create --raw "/api/v1/namespaces/default/pods/$POD/eviction" -f "$T/ev.json" >"$T/out" 2>&1
has "the eviction is accepted" "$T/out" "Success"
wait_for "ev replaces the evicted pod" 60 sh -c \
	"'$KC' --kubeconfig '$T/data/kubeconfig' get pods -l batch.kubernetes.io/job-name=ev -o name | grep -v '$POD' | grep -q ."
failed_is ev 0 && ok || bad "ev status.failed $(kc get job ev -o 'jsonpath={.status.failed}')"
cond ev FailureTarget status >"$T/out"; hasnt "ev not failing" "$T/out" "True"
done_
