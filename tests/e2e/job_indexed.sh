#!/bin/sh
# job_indexed.sh - Indexed Jobs and the job-tracking finalizer in `muster
# up`'s Job controller (round 16), with the real kubectl, as
# kube-controller-manager's Job controller runs them (pkg/controller/job,
# Kubernetes 1.31+): an Indexed Job of 4 completions and parallelism 2
# runs its indexes two at a time and completes with completedIndexes
# "0-3", each pod carrying the completion index as an annotation and a
# label, spec.hostname JOB-IX, the JOB_COMPLETION_INDEX variable and the
# batch.kubernetes.io/job-tracking finalizer (gone once counted); an
# index failing past backoffLimitPerIndex 0 is in failedIndexes and the
# Job fails with reason FailedIndexes; a successPolicy met (index 1)
# ends the Job Complete with reason SuccessPolicy, its other pods deleted;
# a pod deleted mid-run is counted failed and replaced.  Pods are bound
# by hand through the Binding subresource, as a scheduler binds them.
# Usage: sh tests/e2e/job_indexed.sh PATH_TO_MUSTER.  Ends with
# "e2e job_indexed: N passed, N failed".  Every wait is a bounded loop and
# every process started here is killed on exit.
E2E_NAME=job_indexed; . "$(dirname "$0")/lib/common.sh"
UPID=""
on_exit() { for p in $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
kc() { "$KC" --kubeconfig "$T/data/kubeconfig" "$@"; }
bind() {
	printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"kind":"Node","name":"n-0"}}\n' \
		"$1" >"$T/binding.json"
	kc create --raw "/api/v1/namespaces/default/pods/$1/binding" -f "$T/binding.json" >/dev/null 2>&1
}
# binds every unbound pod of job $1; true (always)
bind_all() {
	for p in $(kc get pods -l "batch.kubernetes.io/job-name=$1" \
		-o 'jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' 2>/dev/null | sed -n 's/=$//p'); do
		bind "$p"
	done
	true
}
cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec:
  count: 1
  namePrefix: n-
  allocatable: {cpu: "64", memory: 64Gi}
YAML
"$M" up --cluster "$T/cluster.yaml" --listen 127.0.0.1:0 --data "$T/data" --no-fsync --quiet \
	>"$T/up.out" 2>"$T/up.err" &
UPID=$!
i=0
while [ "$i" -lt 150 ] && ! kc get --raw /readyz >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
jget() { kc get job "$1" -o "jsonpath=$2" 2>/dev/null; }
cond_is() { [ "$(jget "$1" "{.status.conditions[?(@.type==\"$2\")].status}")" = True ]; }

# --- an Indexed Job of 4 completions, 2 at a time -----------------------------
cat >"$T/ix.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: ix}
spec:
  completions: 4
  parallelism: 2
  completionMode: Indexed
  template:
    metadata: {annotations: {muster.io/duration: "2s"}}
    spec:
      restartPolicy: Never
      initContainers: [{name: init, image: "busybox"}]
      containers: [{name: main, image: "trainer:1"}]
YAML
kc create -f "$T/ix.yaml" >"$T/out" 2>&1
has "an Indexed Job is accepted" "$T/out" "created"
two() { [ "$(kc get pods -l batch.kubernetes.io/job-name=ix -o name | wc -l)" -ge 2 ]; }
wait_for "two pods made" 100 two
kc get pods -l batch.kubernetes.io/job-name=ix -o json >"$T/pods.json"
kc get pods -l batch.kubernetes.io/job-name=ix --sort-by=.metadata.name -o \
	'jsonpath={range .items[*]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}|{.metadata.labels.batch\.kubernetes\.io/job-completion-index}|{.spec.hostname}|{.metadata.generateName}|{.metadata.finalizers[0]}{"\n"}{end}' >"$T/out"
has "index 0: annotation, label, hostname, generateName, finalizer" "$T/out" "^0|0|ix-0|ix-0-|batch.kubernetes.io/job-tracking$"
has "index 1 likewise" "$T/out" "^1|1|ix-1|ix-1-|batch.kubernetes.io/job-tracking$"
has "JOB_COMPLETION_INDEX from the index label" "$T/pods.json" \
	"metadata.labels\['batch.kubernetes.io/job-completion-index'\]"
e2e_n=$(grep -c JOB_COMPLETION_INDEX "$T/pods.json")
[ "$e2e_n" -ge 4 ] && ok || bad "JOB_COMPLETION_INDEX in every container and init container: $e2e_n"
all_done() { bind_all ix; cond_is ix Complete; }
wait_for "the Indexed Job completes" 300 all_done
jget ix '{.status.completedIndexes} {.status.succeeded} {.status.failed}' >"$T/out"
has "completedIndexes 0-3, succeeded 4" "$T/out" "^0-3 4 0$"
kc get pods -l batch.kubernetes.io/job-name=ix -o 'jsonpath={.items[*].metadata.finalizers}' >"$T/out"
hasnt "no counted pod keeps the finalizer" "$T/out" "job-tracking"

# --- backoffLimitPerIndex: index 1 fails, the Job fails with FailedIndexes ----
cat >"$T/bl.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: bl}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  backoffLimitPerIndex: 0
  template:
    metadata: {annotations: {muster.io/duration: "1s"}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "trainer:1"}]
YAML
kc create -f "$T/bl.yaml" >/dev/null 2>&1
fail_ix1() {
	p=$(kc get pods -l batch.kubernetes.io/job-name=bl,batch.kubernetes.io/job-completion-index=1 -o name | head -1)
	[ -n "$p" ] && kc annotate "$p" muster.io/exit-code=3 --overwrite >/dev/null 2>&1
}
wait_for "index 1's pod is there" 100 fail_ix1
bl_failed() { bind_all bl; cond_is bl Failed; }
wait_for "the Job fails" 300 bl_failed
jget bl '{.status.failedIndexes} {.status.completedIndexes} {.status.conditions[?(@.type=="Failed")].reason}' >"$T/out"
has "failedIndexes 1, completedIndexes 0, reason FailedIndexes" "$T/out" "^1 0 FailedIndexes$"
kc get pods -l batch.kubernetes.io/job-name=bl -o 'jsonpath={.items[*].metadata.annotations.batch\.kubernetes\.io/job-index-failure-count}' >"$T/out"
has "pods carry the index failure count" "$T/out" "0"

# --- successPolicy: index 1 succeeded is enough ------------------------------
cat >"$T/sp.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: sp}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  successPolicy: {rules: [{succeededIndexes: "1"}]}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "trainer:1"}]
YAML
kc create -f "$T/sp.yaml" >/dev/null 2>&1
short_ix1() {
	p=$(kc get pods -l batch.kubernetes.io/job-name=sp,batch.kubernetes.io/job-completion-index=1 -o name | head -1)
	[ -n "$p" ] && kc annotate "$p" muster.io/duration=1s --overwrite >/dev/null 2>&1
}
wait_for "index 1's pod is there" 100 short_ix1
sp_done() { bind_all sp; cond_is sp Complete; }
wait_for "the Job completes by its successPolicy" 300 sp_done
jget sp '{.status.conditions[?(@.type=="SuccessCriteriaMet")].reason}|{.status.conditions[?(@.type=="Complete")].reason}|{.status.conditions[?(@.type=="Complete")].message}|{.status.completedIndexes}' >"$T/out"
has "SuccessCriteriaMet then Complete, reason SuccessPolicy" "$T/out" "^SuccessPolicy|SuccessPolicy|Matched rules at index 0|1$"
gone() { [ "$(kc get pods -l batch.kubernetes.io/job-name=sp -o name | wc -l)" -le 1 ]; }
wait_for "the other indexes' pods are deleted" 150 gone

# --- a pod deleted mid-run is counted failed and replaced -----------------------
cat >"$T/del.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: del}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "trainer:1"}]
YAML
kc create -f "$T/del.yaml" >/dev/null 2>&1
running() { bind_all del; [ "$(jget del '{.status.ready}')" = 1 ]; }
wait_for "the pod runs" 150 running
first=$(kc get pods -l batch.kubernetes.io/job-name=del -o name | head -1)
kc delete "$first" --wait=false >/dev/null 2>&1
counted() { [ "$(jget del '{.status.failed}')" = 1 ]; }
wait_for "the deleted pod is counted failed" 100 counted
replaced() { [ "$(kc get pods -l batch.kubernetes.io/job-name=del -o name | grep -vc "^$first$")" -ge 1 ]; }
wait_for "and replaced" 100 replaced
done_
