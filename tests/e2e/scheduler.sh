#!/bin/sh
# scheduler.sh - end-to-end tests of `muster scheduler` against `muster up`,
# driven by the real kubectl: a 16-pod gang binds all-or-nothing (nothing
# while only 15 fit, then all 16 on 16 nodes); the explain message shows in
# `kubectl describe pod` and `muster kexplain`; reclaim evicts the over-share
# queue's gang (and only it) when a starved queue submits; a suspended Job
# is un-suspended only once admitted; a plain Job becomes a gang through the
# PodGroup controller; killing the scheduler (kill -9) while it binds and
# restarting it binds every pod exactly once and never over-commits a GPU;
# two replicas elect one leader, and the standby takes over on SIGTERM;
# /metrics and /readyz; the deploy/ manifests parse and its examples apply.
# Usage: sh tests/e2e/scheduler.sh PATH_TO_MUSTER.  Ends with
# "e2e scheduler: N passed, N failed".  Every wait is a bounded loop and
# every process started here is killed on exit.
E2E_NAME=scheduler; . "$(dirname "$0")/lib/common.sh"
UPID=""; APID=""; BPID=""
on_exit() { for p in $APID $BPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
need_kubectl
# nodes_of SELECTOR: the node of every pod matching, one per line ("" unbound).
nodes_of() { "$KC" --kubeconfig "$T/data/kubeconfig" get pods -l "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null; }
bound() { nodes_of "$1" | grep -c .; }
npods() { nodes_of "$1" | wc -l; }
is_bound() { [ "$(bound "$1")" -eq "$2" ]; }
is_count() { [ "$(npods "$1")" -eq "$2" ]; }

cat >"$T/cluster.yaml" <<'EOF'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 16
  namePrefix: gpu-
  gpuModel: A100
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
  topology:
    - {label: muster.io/rack, every: 8, prefix: rack-}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {deserved: 64}}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-b}
spec: {resources: {gpu: {deserved: 64}}}
EOF
up_start "$T/cluster.yaml"
# TLS and authentication are always on: requests check the certificate and
# carry the token that muster up keeps in DATA (curl below is this wrapper;
# `command curl` sends no token)
MUSTER_TOKEN=$(cat "$T/data/token"); export MUSTER_TOKEN
curl() { command curl --cacert "$T/data/tls.crt" -H "Authorization: Bearer $MUSTER_TOKEN" "$@"; }

printf 'e2e-token\n' >"$T/token"
# sched NAME ID: starts a replica; its pid in ${NAME}PID, log in $T/NAME.log.
sched() {
	"$M" scheduler --kubeconfig "$T/data/kubeconfig" --id "$2" --lease-namespace default \
		--metrics 127.0.0.1:0 --token-file "$T/token" --min-runtime 0 --lease-duration 6 --retry-period 1 \
		>"$T/$1.out" 2>"$T/$1.log" &
	eval "${1}PID=\$!"
}
# metrics_url NAME: the address a replica's log printed.
murl() { sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/$1.log" | head -n 1; }
ready() { curl -sf "$(murl "$1")/readyz" >/dev/null 2>&1; }

sched A sched-a
wait_for scheduler-ready 100 ready A

# --- a 16-pod gang: nothing while 15 fit, all 16 once 16 do ----------------
cat >"$T/blocker.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: blocker
  labels: {app: blocker, muster.io/queue: team-a}
  annotations: {muster.io/preemptible: "false", muster.io/type: inference}
spec:
  schedulerName: muster
  containers:
  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}
EOF
k apply -f "$T/blocker.yaml"
wait_for blocker-bound 50 is_bound app=blocker 1
{
	printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: big}\nspec: {minMember: 16}\n'
	for i in $(seq 0 15); do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: big-%s\n' "$i"
		printf '  labels: {app: big, muster.io/queue: team-a, scheduling.x-k8s.io/pod-group: big}\n'
		printf 'spec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
	done
} >"$T/big.yaml"
k apply -f "$T/big.yaml"
wait_for gang-pods-created 50 is_count app=big 16
sleep 2
if [ "$(bound app=big)" -eq 0 ]; then ok; else bad "gang: $(bound app=big) of 16 bound while only 15 fit"; fi
k describe pod big-3
has describe-explain "$T/out" "gang needs 16 pods, at most 15 fit"
has describe-event "$T/out" "FailedScheduling"
"$M" kexplain --kubeconfig "$T/data/kubeconfig" big-3 >"$T/out" 2>&1
has kexplain-pod "$T/out" "at most 15 fit"
has kexplain-gang "$T/out" "pod group big"
k delete pod blocker --wait=false
wait_for gang-binds-all 75 is_bound app=big 16
if [ "$(nodes_of app=big | sort -u | grep -c .)" -eq 16 ]; then ok; else bad "gang: not 16 distinct nodes"; fi
pgrunning() { "$KC" --kubeconfig "$T/data/kubeconfig" get podgroups.scheduling.x-k8s.io big -o yaml | grep -q "phase: Running"; }
wait_for podgroup-status 50 pgrunning
k get pod big-0 -o yaml
has gpu-annotation "$T/out" "muster.io/gpus: 0,1,2,3,4,5,6,7"
k delete pods -l app=big --wait=false
wait_for big-gone 75 is_count app=big 0

# --- reclaim: team-b (below its share) takes its GPUs back from team-a ----
# team-a runs 4 gangs of 4 pods (all 128 GPUs, twice its 64 deserved);
# team-b asks for 64: two whole team-a gangs go, two stay, team-b starts.
{
	for g in 0 1 2 3; do
		printf -- '---\napiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: a%s}\nspec: {minMember: 4, queue: team-a}\n' "$g"
		for i in 0 1 2 3; do
			printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a%s-%s\n' "$g" "$i"
			printf '  labels: {app: a, gang: a%s, muster.io/pod-group: a%s}\n' "$g" "$g"
			printf 'spec:\n  schedulerName: muster\n  containers:\n'
			printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
		done
	done
} >"$T/a.yaml"
k apply -f "$T/a.yaml"
wait_for team-a-fills 75 is_bound app=a 16
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: small}\nspec: {minMember: 8, queue: team-b}\n'
	for i in $(seq 0 7); do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: small-%s\n' "$i"
		printf '  labels: {app: small, muster.io/pod-group: small}\n'
		printf 'spec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
	done
} >"$T/small.yaml"
k apply -f "$T/small.yaml"
wait_for reclaim-binds 100 is_bound app=small 8
wait_for reclaim-evicts-two-gangs 75 is_count app=a 8
whole=0
for g in 0 1 2 3; do n=$(npods gang=a$g); [ "$n" -eq 0 ] || [ "$n" -eq 4 ] || whole=1; done
if [ "$whole" -eq 0 ]; then ok; else bad "reclaim split a gang"; fi
k get events
has preempted-event "$T/out" "Preempted"
if grep "Preempted" "$T/out" | grep -q "small-"; then bad "reclaim evicted team-b's own pods"; else ok; fi
k delete pods -l app=small --wait=false
k delete pods -l app=a --wait=false
wait_for a-gone 75 is_count app=a 0

# --- a suspended Job waits until it is admitted ------------------------------
{
	printf 'apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: hold}\nspec: {minMember: 16, queue: team-a}\n'
	for i in $(seq 0 15); do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: hold-%s\n' "$i"
		printf '  labels: {app: hold, muster.io/pod-group: hold}\n'
		printf 'spec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}\n'
	done
} >"$T/hold.yaml"
wait_for small-gone 75 is_count app=small 0
k apply -f "$T/hold.yaml"
wait_for hold-binds 75 is_bound app=hold 16
cat >"$T/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {muster.io/queue: team-a}
spec:
  suspend: true
  parallelism: 2
  completions: 2
  template:
    metadata: {labels: {app: train}}
    spec:
      schedulerName: muster
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}
EOF
k apply -f "$T/job.yaml"
sleep 2
suspended() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get job train -o jsonpath='{.spec.suspend}')" = "$1" ]; }
if suspended true && [ "$(npods app=train)" -eq 0 ]; then ok; else bad "job: un-suspended or pods exist before admission"; fi
"$M" kexplain --kubeconfig "$T/data/kubeconfig" --scheduler "$(murl A)" job/train >"$T/out" 2>&1
has kexplain-live-needs-token "$T/out" "needs the scheduler's token"
"$M" kexplain --kubeconfig "$T/data/kubeconfig" --scheduler "$(murl A)" --token-file "$T/token" job/train >"$T/out" 2>&1
has kexplain-job "$T/out" "admitted:   no"
has kexplain-job-why "$T/out" "FailedScheduling"
has kexplain-live "$T/out" "state:      pending, 0 of 2 pods bound"
want_code() { [ "$(command curl -s -o /dev/null -w '%{http_code}' "$@")" = "$WANT" ]; }
WANT=401 wait_for explain-no-token-401 1 want_code "$(murl A)/explain?job=default/train"
WANT=401 wait_for explain-bad-token-401 1 want_code -H "Authorization: Bearer nope" "$(murl A)/explain?job=default/train"
"$M" kexplain --kubeconfig "$T/data/kubeconfig" --scheduler "$(murl A)" --token-file "$T/token" job/train >"$T/out" 2>&1
has kexplain-live-queue "$T/out" "queue:      team-a"
has kexplain-live-order "$T/out" "order:      jct order"
printf 'wrong\n' >"$T/wrong-token"
"$M" kexplain --kubeconfig "$T/data/kubeconfig" --scheduler "$(murl A)" --token-file "$T/wrong-token" job/train >"$T/out" 2>&1
has kexplain-wrong-token "$T/out" "needs the scheduler's token"
k delete pod hold-0 hold-1 --wait=false
wait_for job-admitted 75 suspended false
wait_for job-pods-bound 75 is_bound app=train 2
k describe job train
has job-admitted-event "$T/out" "Admitted"

# --- a plain Job becomes a gang (PodGroup controller) ------------------------
k delete pods -l app=hold --wait=false
wait_for hold-gone 75 is_count app=hold 0
cat >"$T/pjob.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: plain}
spec:
  parallelism: 4
  completions: 4
  template:
    metadata: {labels: {app: plain}}
    spec:
      schedulerName: muster
      restartPolicy: Never
      containers:
      - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "4"}}}
EOF
k apply -f "$T/pjob.yaml"
wait_for plain-job-gang 75 is_bound app=plain 4
k get podgroups.muster.io plain -o yaml
has pgctl-podgroup "$T/out" "minMember: 4"
k delete job train plain

# --- kill -9 while binding, restart: every pod bound once, no GPU twice ----
# (gpu-00 is taken by a pod another scheduler bound: muster must count it)
wait_for jobs-gone 75 is_count app=plain 0
cat >"$T/ext.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: ext, labels: {app: ext}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [gpu-00]}]}]
  containers:
  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}
EOF
k apply -f "$T/ext.yaml"
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "$S/api/v1/namespaces/default/pods/ext/binding" \
	--data-binary '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"ext"},"target":{"kind":"Node","name":"gpu-00"}}'
wait_for external-bound 50 is_bound app=ext 1
{
	for i in $(seq 0 119); do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: one-%s\n' "$i"
		printf '  labels: {app: one}\nspec:\n  schedulerName: muster\n  containers:\n'
		printf '  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}\n'
	done
} >"$T/one.yaml"
"$KC" --kubeconfig "$T/data/kubeconfig" apply -f "$T/one.yaml" >"$T/apply.out" 2>&1 &
LPID=$!
fastbound() { curl -s "$S/api/v1/namespaces/default/pods?labelSelector=app%3Done" | grep -o '"nodeName":"[^"]' | wc -l; }
i=0; while [ "$i" -lt 400 ] && [ "$(fastbound)" -lt 1 ]; do sleep 0.01; i=$((i + 1)); done
kill -9 "$APID"; wait "$APID" 2>/dev/null; APID=""
before=$(bound app=one)
wait "$LPID"
if [ "$(npods app=one)" -eq 120 ]; then ok; else bad "restart: $(npods app=one) of 120 pods created"; fi
sched A sched-a
wait_for restart-binds-all 150 is_bound app=one 120
echo "restart: $before of 120 pods bound before kill -9"
over=$("$KC" --kubeconfig "$T/data/kubeconfig" get pods -l app=one -o \
	jsonpath='{range .items[*]}{.spec.nodeName}{" "}{.metadata.annotations.muster\.io/gpus}{"\n"}{end}' |
	sort | uniq -d | grep -c .)
if [ "$over" -eq 0 ]; then ok; else bad "restart: $over GPUs given to two pods"; fi
per=$("$KC" --kubeconfig "$T/data/kubeconfig" get pods -l app=one -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
	sort | uniq -c | awk '$1 > 8' | grep -c .)
if [ "$per" -eq 0 ]; then ok; else bad "restart: a node got more than 8 one-GPU pods"; fi
if nodes_of app=one | grep -q '^gpu-00$'; then bad "restart: a pod on gpu-00, which another scheduler's pod fills"; else ok; fi
errs=$(curl -s "$(murl A)/metrics" | sed -n 's/^muster_bind_errors_total \([0-9]*\)$/\1/p')
if [ "${errs:-x}" = 0 ]; then ok; else bad "restart: bind errors (double binds?): ${errs:-none}"; fi

# --- two replicas: one leader; the standby takes over on SIGTERM -------------
sched B sched-b
i=0; while [ "$i" -lt 50 ] && [ -z "$(murl B)" ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
if ready B; then bad "two leaders: the standby is ready"; else ok; fi
curl -s "$(murl B)/metrics" >"$T/out"
has standby-not-leader "$T/out" "muster_leader 0"
curl -s "$(murl A)/metrics" >"$T/out"
has leader-metrics "$T/out" "muster_leader 1"
has queue-metrics "$T/out" 'muster_queue_usage{queue="default",resource="nvidia.com/gpu"} 120'
has cycle-metrics "$T/out" "muster_cycle_duration_seconds_bucket"
kill -TERM "$APID"
i=0; while kill -0 "$APID" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$APID" 2>/dev/null; then bad "scheduler did not stop on SIGTERM"; else ok; APID=""; fi
wait_for standby-takes-over 75 ready B
k get lease muster-scheduler -o yaml
has lease-holder "$T/out" "holderIdentity: sched-b"
k delete pods -l app=one --wait=false

# --- a failed node takes no pods until it recovers ----------------------------
"$M" node fail gpu-15 --kubeconfig "$T/data/kubeconfig" >"$T/out" 2>&1
cat >"$T/nf.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: nf, labels: {app: nf}}
spec:
  schedulerName: muster
  nodeSelector: {kubernetes.io/hostname: gpu-15}
  containers:
  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
EOF
k apply -f "$T/nf.yaml"
nfwaits() { "$KC" --kubeconfig "$T/data/kubeconfig" describe pod nf | grep -q FailedScheduling; }
wait_for failed-node-refused 50 nfwaits
if [ "$(bound app=nf)" -eq 0 ]; then ok; else bad "a pod was bound to a failed node"; fi
"$M" node recover gpu-15 --kubeconfig "$T/data/kubeconfig" >"$T/out" 2>&1
wait_for recovered-node-takes-pod 75 is_bound app=nf 1

# --- the API server restarts: watches back off, re-list, scheduling goes on --
PORT=${S##*:}
kill -TERM "$UPID"; wait "$UPID" 2>/dev/null
"$M" up --cluster "$T/cluster.yaml" --listen "127.0.0.1:$PORT" --data "$T/data" --no-fsync --quiet \
	>"$T/up2.out" 2>"$T/up2.err" &
UPID=$!
upready() { curl -sfk "$S/readyz" >/dev/null 2>&1; }
wait_for apiserver-restarts 100 upready
cat >"$T/after.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: after, labels: {app: after}}
spec:
  schedulerName: muster
  containers:
  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
EOF
k apply -f "$T/after.yaml"
wait_for rebinds-after-apiserver-restart 150 is_bound app=after 1

# --- deploy/: every manifest parses; the examples apply -----------------------
D=$(dirname "$0")/../../deploy
if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
	if python3 -c 'import sys, yaml
for f in sys.argv[1:]:
    docs = [d for d in yaml.safe_load_all(open(f)) if d]
    assert docs, f
    for d in docs:
        assert d.get("apiVersion") and d.get("kind"), f' "$D"/*.yaml "$D"/crds/*.yaml "$D"/examples/*.yaml 2>"$T/out"; then
		ok
	else
		bad "deploy: a manifest does not parse"; cat "$T/out"
	fi
fi
for f in "$D"/examples/*.yaml; do
	k apply -f "$f"
	if grep -qE "created|configured" "$T/out"; then ok; else bad "example $(basename "$f") does not apply"; cat "$T/out"; fi
done

# --- a clean stop, and no sanitizer or leak report in any replica's log ------
kill -TERM "$BPID"
i=0; while kill -0 "$BPID" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$BPID" 2>/dev/null; then bad "standby did not stop on SIGTERM"; else ok; BPID=""; fi
if grep -lE "AddressSanitizer|LeakSanitizer|runtime error" "$T"/A.log "$T"/B.log; then
	bad "sanitizer report in a scheduler log"; grep -hE -A12 "Sanitizer|runtime error" "$T"/A.log "$T"/B.log | head -40
else
	ok
fi
done_
