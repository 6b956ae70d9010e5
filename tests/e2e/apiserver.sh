#!/bin/sh
# apiserver.sh - end-to-end tests of `muster up` driven by the real kubectl:
# discovery and tables (get, -o yaml, -o wide), apply to create and to
# change, label and field selectors, the binding, eviction and status calls
# kube-scheduler makes, events and describe, get -w, custom resources, Jobs
# with suspend, error codes (404, 409, 413, 422, 400), node failure, watch
# expiry (410), client compatibility (long names, kind defaulting, JSON
# patch, field validation, depth and size limits, cascade=orphan and
# foreground, future watches, protobuf bodies), ConfigMaps, Secrets,
# ServiceAccounts, PriorityClasses and priority admission, TLS with a bearer token, and crash recovery: kill -9 under write load, restart, and a
# count of every acknowledged object.
# Usage: sh tests/e2e/apiserver.sh PATH_TO_MUSTER.  Ends with
# "e2e apiserver: N passed, N failed".  Every wait is a bounded loop; the
# server is always killed on exit.
E2E_NAME=apiserver; . "$(dirname "$0")/lib/common.sh"
SPID=""
TPID=""
on_exit() {
	[ -n "$SPID" ] && kill -9 "$SPID" 2>/dev/null
	[ -n "$TPID" ] && kill -9 "$TPID" 2>/dev/null
	for p in $(cat "$T"/loader.*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
}
need_kubectl

# code METHOD PATH [CTYPE BODY]: HTTP status of a raw request; body in $T/body.
code() {
	if [ $# -ge 4 ]; then
		curl -s -o "$T/body" -w '%{http_code}' -X "$1" -H "Content-Type: $3" --data-binary "$4" "$S$2"
	else
		curl -s -o "$T/body" -w '%{http_code}' -X "$1" "$S$2"
	fi
}
want() { # want NAME GOT EXPECTED
	if [ "$2" = "$3" ]; then ok; else bad "$1: HTTP $2, expected $3"; head -c 300 "$T/body"; echo; fi
}

# start [PORT]: runs the server on the data dir, waits for /readyz.
start() {
	"$M" up --cluster "$T/cluster.yaml" --listen "127.0.0.1:${1:-0}" --data "$T/data" \
		--watch-cache 64 --no-fsync --quiet >"$T/up.out" 2>"$T/up.err" &
	SPID=$!
	i=0
	while [ "$i" -lt 150 ]; do
		S=$(sed -n 's/.*serving the Kubernetes API on \(http[^ ]*\).*/\1/p' "$T/up.out")
		if [ -n "$S" ] && curl -sfk "$S/readyz" >/dev/null 2>&1; then return 0; fi
		if ! kill -0 "$SPID" 2>/dev/null; then break; fi
		sleep 0.1; i=$((i + 1))
	done
	echo "server did not start:"; cat "$T/up.err"
	bad "start"
	done_
}

cat >"$T/cluster.yaml" <<'EOF'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 4
  namePrefix: gpu-
  gpuModel: A100
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8"}
  topology:
    - {label: muster.io/rack, every: 2, prefix: rack-}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec:
  resources:
    gpu: {deserved: 16}
EOF
start
PORT=${S##*:}
# TLS and authentication are always on: requests check the certificate and
# carry the token that muster up keeps in DATA (curl below is this wrapper;
# `command curl` sends no token)
MUSTER_TOKEN=$(cat "$T/data/token"); export MUSTER_TOKEN
curl() { command curl --cacert "$T/data/tls.crt" -H "Authorization: Bearer $MUSTER_TOKEN" "$@"; }

# --- authentication on loopback ---------------------------------------------
for p in /healthz /readyz /livez /version; do
	want "anonymous-$p" "$(command curl -s --cacert "$T/data/tls.crt" -o "$T/body" -w '%{http_code}' "$S$p")" 200
done
want anonymous-401 "$(command curl -s --cacert "$T/data/tls.crt" -o "$T/body" -w '%{http_code}' "$S/api/v1/pods")" 401
has anonymous-401-status "$T/body" '"reason":"Unauthorized"'
want wrong-token-401 "$(command curl -s --cacert "$T/data/tls.crt" -o "$T/body" -w '%{http_code}' -H 'Authorization: Bearer nope' "$S/api")" 401
has kubeconfig-client-cert "$T/data/kubeconfig" "client-certificate-data: "
# A client whose wall clock is 10 minutes behind still accepts the server's
# certificate: it is valid from an hour before it was made, as client-go's
# self-signed certificates are (the chaos soak's clock jumps found this).
FT=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
if [ -r "$FT" ]; then
	echo "-600" >"$T/clock"
	want client-clock-behind "$(FAKETIME_TIMESTAMP_FILE="$T/clock" DONT_FAKE_MONOTONIC=1 LD_PRELOAD=$FT \
		command curl -s --cacert "$T/data/tls.crt" -o "$T/body" -w '%{http_code}' "$S/version")" 200
else
	echo "skipped client-clock-behind: needs libfaketime (Debian package faketime)"
fi
if [ "$(stat -c %a "$T/data/token")" = 600 ] && [ "$(stat -c %a "$T/data/kubeconfig")" = 600 ] &&
	[ "$(stat -c %a "$T/data/ca.key")" = 600 ] && [ "$(stat -c %a "$T/data/admin.key")" = 600 ]; then ok; else bad "token or key files not 0600"; fi

# --- discovery, nodes, tables ---------------------------------------------
k get nodes; has get-nodes "$T/out" "STATUS"; has get-nodes-ready "$T/out" "gpu-3 .*Ready"
k get nodes -o wide; has get-wide "$T/out" "OS-IMAGE"
k get node gpu-0 -o yaml; has get-yaml "$T/out" "kind: Node"; has node-capacity "$T/out" "nvidia.com/gpu: \"8\""
has node-rack-label "$T/out" "muster.io/rack: rack-0"
k get noderesourcetopologies; has nrt "$T/out" "single-numa-node"
k get topologies.muster.io default -o yaml; has topology "$T/out" "nodeLabel: muster.io/rack"
k get queues.muster.io; has queues "$T/out" "team-a"
k api-resources; has api-resources "$T/out" "podgroups"
k describe node gpu-1; has describe-node "$T/out" "HolderIdentity:  gpu-1"

# --- pods: apply, change, selectors ---------------------------------------
cat >"$T/p1.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels: {app: web}
spec:
  containers:
  - {name: main, image: "busybox:1.36", resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}
EOF
k apply -f "$T/p1.yaml"; has apply-create "$T/out" "pod/p1 created"
sed 's/app: web/app: api/' "$T/p1.yaml" >"$T/p1b.yaml"
k apply -f "$T/p1b.yaml"; has apply-change "$T/out" "pod/p1 configured"
k get pods --show-labels; has labels-changed "$T/out" "app=api"; has pending "$T/out" "Pending"
k get pods -l app=api; has label-eq "$T/out" "p1"
k get pods -l 'app!=api'; hasnt label-ne "$T/out" "p1"
k get pods -l 'app in (web,api)'; has label-in "$T/out" "p1"
k get pods --field-selector spec.nodeName=; has field-unbound "$T/out" "p1"
k get pods -A --field-selector status.phase!=Pending; hasnt field-ne "$T/out" "p1"
k get pods --field-selector spec.schedulerName=default-scheduler,metadata.name=p1; has field-sched "$T/out" "p1"

# --- what kube-scheduler does: events, status, binding ---------------------
UID1=$(curl -s "$S/api/v1/namespaces/default/pods/p1" | sed -n 's/.*"uid":"\([^"]*\)".*/\1/p')
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
want event-create "$(code POST /api/v1/namespaces/default/events application/json \
	"{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"p1.sched1\",\"namespace\":\"default\"},\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"p1\",\"uid\":\"$UID1\",\"apiVersion\":\"v1\"},\"reason\":\"FailedScheduling\",\"message\":\"0/4 nodes are available: 4 insufficient nvidia.com/gpu.\",\"type\":\"Warning\",\"source\":{\"component\":\"muster-scheduler\"},\"firstTimestamp\":\"$now\",\"lastTimestamp\":\"$now\",\"count\":1}")" 201
want status-patch "$(code PATCH /api/v1/namespaces/default/pods/p1/status application/strategic-merge-patch+json \
	"{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes are available\",\"lastTransitionTime\":\"$now\"}]}}")" 200
has status-patch-body "$T/body" "Unschedulable"
k describe pod p1; has describe-events "$T/out" "FailedScheduling"; has describe-cond "$T/out" "PodScheduled"
k get events; has get-events "$T/out" "pod/p1"
want bind-wrong-uid "$(code POST /api/v1/namespaces/default/pods/p1/binding application/json \
	'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1","uid":"00000000-0000-0000-0000-000000000000"},"target":{"kind":"Node","name":"gpu-0"}}')" 409
k create --raw /api/v1/namespaces/default/pods/p1/binding -f - <<EOF
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1","namespace":"default","uid":"$UID1"},"target":{"kind":"Node","name":"gpu-0"}}
EOF
has bind "$T/out" "Success"
want bind-again "$(code POST /api/v1/namespaces/default/pods/p1/binding application/json \
	'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"kind":"Node","name":"gpu-1"}}')" 409
has bind-again-msg "$T/body" "already assigned"
running() { "$KC" --kubeconfig "$T/data/kubeconfig" get pod "$1" 2>&1 | grep -q "$2"; }
wait_for bound-runs 50 running p1 Running
k get pods -o wide; has node-column "$T/out" "gpu-0"
k describe pod p1; has kubelet-event "$T/out" "Started"

# --- get -w ----------------------------------------------------------------
timeout 6 "$KC" --kubeconfig "$T/data/kubeconfig" get pods -w >"$T/watch" 2>&1 &
WPID=$!
sleep 1.5
sed 's/name: p1/name: p2/; s/app: web/app: batch/' "$T/p1.yaml" | sed '/^  labels/a\  annotations: {muster.io/duration: "1s"}' >"$T/p2.yaml"
k apply -f "$T/p2.yaml"; has apply-p2 "$T/out" "created"
k create --raw /api/v1/namespaces/default/pods/p2/binding -f - <<'EOF'
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p2"},"target":{"kind":"Node","name":"gpu-1"}}
EOF
wait_for duration-completes 50 running p2 Completed
wait "$WPID" 2>/dev/null
has watch-added "$T/watch" "p2 .*Pending"
has watch-running "$T/watch" "p2 .*Running"
has watch-completed "$T/watch" "p2 .*Completed"
curl -s -m 2 "$S/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&fieldSelector=metadata.name=p2" >"$T/w2"
has raw-watch "$T/w2" '"type":"ADDED"'

# --- eviction and delete ---------------------------------------------------
want evict "$(code POST /api/v1/namespaces/default/pods/p1/eviction application/json \
	'{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p1","namespace":"default"}}')" 201
gone() { [ "$(code GET "/api/v1/namespaces/default/pods/$1")" = 404 ]; }
wait_for evicted-gone 50 gone p1
k delete pod p2; has delete "$T/out" "deleted"
k get pod p2; has deleted-404 "$T/out" "NotFound"

# --- errors -----------------------------------------------------------------
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n' >"$T/bad.yaml"
k apply -f "$T/bad.yaml"; has invalid-422 "$T/out" "is invalid"
want malformed-400 "$(code POST /api/v1/namespaces/default/pods application/json '{"kind":')" 400
head -c 3200000 /dev/zero | tr '\0' ' ' >"$T/big"
want oversized-413 "$(curl -s -o "$T/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary @"$T/big" "$S/api/v1/namespaces/default/pods")" 413
want notfound-404 "$(code GET /api/v1/namespaces/default/pods/nope)" 404
want nons-404 "$(code POST /api/v1/namespaces/nope/pods application/json \
	'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"a","image":"b"}]}}')" 404
want bad-selector-400 "$(code GET '/api/v1/pods?fieldSelector=spec.nope%3D1')" 400
want unknown-path-404 "$(code GET /apis/nope/v1/things)" 404

# --- leases: the leader election protocol ------------------------------------
want lease-create "$(code POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases application/json \
	'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"muster"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0}}')" 201
want lease-exists "$(code POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases application/json \
	'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"muster"},"spec":{"holderIdentity":"b"}}')" 409
RV=$(curl -s "$S/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/muster" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p')
LEASE='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"muster","resourceVersion":"RV"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":1}}'
want lease-renew "$(code PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/muster application/json \
	"$(echo "$LEASE" | sed "s/RV/$RV/")")" 200
want lease-stale-409 "$(code PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/muster application/json \
	"$(echo "$LEASE" | sed "s/RV/$RV/")")" 409

# --- custom resources ----------------------------------------------------------
cat >"$T/cr.yaml" <<'EOF'
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang}
spec: {minMember: 4, scheduleTimeoutSeconds: 60}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-b}
spec:
  parent: team-a
  resources: {gpu: {deserved: 8, limit: 16}}
---
apiVersion: muster.io/v1alpha1
kind: PodGroup
metadata: {name: gang2}
spec: {queue: team-b, minMember: 2}
EOF
k apply -f "$T/cr.yaml"; has cr-create "$T/out" "podgroup.scheduling.x-k8s.io/gang created"
k get podgroups.scheduling.x-k8s.io; has cr-get "$T/out" "gang"
k patch podgroups.scheduling.x-k8s.io gang --type=merge -p '{"spec":{"minMember":8}}'; has cr-patch "$T/out" "patched"
k get podgroups.scheduling.x-k8s.io gang -o yaml; has cr-patched "$T/out" "minMember: 8"
sed 's/minMember: 4/minMember: 6/' "$T/cr.yaml" >"$T/cr2.yaml"
k apply -f "$T/cr2.yaml"; has cr-apply-change "$T/out" "gang configured"
k get queues.muster.io team-b; has cr-queue "$T/out" "team-a"
printf 'apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: bad-q}\nspec:\n  resources: {gpu: {deserved: 8, limit: 4}}\n' >"$T/badq.yaml"
k apply -f "$T/badq.yaml"; has cr-invalid "$T/out" "is invalid"
want cr-strategic-415 "$(code PATCH /apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/gang \
	application/strategic-merge-patch+json '{"spec":{"minMember":1}}')" 415
k delete podgroups.scheduling.x-k8s.io gang; has cr-delete "$T/out" "deleted"

# --- Jobs with suspend ---------------------------------------------------------
cat >"$T/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {muster.io/queue: team-a}
spec:
  parallelism: 2
  completions: 2
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: w, image: "trainer:1"}]
EOF
k apply -f "$T/job.yaml"; has job-create "$T/out" "created"
sleep 0.5
k get pods -l batch.kubernetes.io/job-name=train; has job-suspended-no-pods "$T/out" "No resources"
k patch job train --type=merge -p '{"spec":{"suspend":false}}'; has job-admit "$T/out" "patched"
jobpods() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get pods -l job-name=train --no-headers 2>/dev/null | wc -l)" -eq 2 ]; }
wait_for job-pods 50 jobpods
k get job train; has job-running "$T/out" "Running"
k patch job train --type=merge -p '{"spec":{"suspend":true}}'
nojobpods() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get pods -l job-name=train --no-headers 2>/dev/null | wc -l)" -eq 0 ]; }
wait_for job-suspend-deletes 50 nojobpods
# kube's Job controller Events on train (round 12), each on its transition,
# once: Suspended when created suspended and when suspended again, Resumed
# once, and SuccessfulDelete "Deleted pod: POD" for each pod the suspend deleted
jobev() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get events --no-headers \
	--field-selector "involvedObject.name=train,involvedObject.kind=Job,reason=$1" 2>/dev/null | grep -c "$2")" -eq "$3" ]; }
# the second Suspended raises the first one's count, as client-go's event
# correlator writes it (round 13): one Event, count 2
wait_for job-event-suspended 50 jobev Suspended "Job suspended" 1
jobevcount() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get events \
	--field-selector "involvedObject.name=train,involvedObject.kind=Job,reason=$1" \
	-o 'jsonpath={.items[*].count}' 2>/dev/null)" = "$2" ]; }
wait_for job-event-suspended-count 50 jobevcount Suspended 2
wait_for job-event-resumed 50 jobev Resumed "Job resumed" 1
wait_for job-event-deleted 50 jobev SuccessfulDelete "Deleted pod: train-" 2
wait_for job-event-created 50 jobev SuccessfulCreate "Created pod: train-" 2

# spec.activeDeadlineSeconds (round 13), as kube's Job controller enforces it:
# two seconds after its start the Job fails with reason DeadlineExceeded, its
# active pod deleted and counted as failed, and a Warning Event of that reason
cat >"$T/dljob.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: dl}
spec:
  activeDeadlineSeconds: 2
  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: w, image: "trainer:1"}]
EOF
k apply -f "$T/dljob.yaml"; has dl-create "$T/out" "created"
dlfailed() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get job dl \
	-o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}/{.status.failed}/{.status.active}' 2>/dev/null)" = "DeadlineExceeded/1/0" ]; }
wait_for dl-failed 100 dlfailed
k get job dl -o 'jsonpath={.status.conditions[?(@.type=="FailureTarget")].message}'
has dl-message "$T/out" "Job was active longer than specified deadline"
k get events --field-selector involvedObject.name=dl,involvedObject.kind=Job,reason=DeadlineExceeded --no-headers
has dl-event "$T/out" "Warning"
k get pods -l job-name=dl --no-headers; has dl-no-pods "$T/out" "No resources"

# --- node failure ----------------------------------------------------------------
sed 's/name: p1/name: p3/' "$T/p1.yaml" >"$T/p3.yaml"
k apply -f "$T/p3.yaml"
k create --raw /api/v1/namespaces/default/pods/p3/binding -f - <<'EOF'
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p3"},"target":{"kind":"Node","name":"gpu-2"}}
EOF
wait_for p3-runs 50 running p3 Running
"$M" node fail gpu-2 --kubeconfig "$T/data/kubeconfig" >"$T/out" 2>&1; has node-fail "$T/out" "failed"
notready() { "$KC" --kubeconfig "$T/data/kubeconfig" get node gpu-2 2>&1 | grep -q NotReady; }
wait_for node-notready 50 notready
wait_for node-pods-fail 50 running p3 NodeLost
"$M" node recover gpu-2 --kubeconfig "$T/data/kubeconfig" >/dev/null 2>&1
ready() { "$KC" --kubeconfig "$T/data/kubeconfig" get node gpu-2 2>&1 | grep -q ' Ready'; }
wait_for node-recovers 50 ready

# --- crash recovery: kill -9 under write load --------------------------------------
want ns-create "$(code POST /api/v1/namespaces application/json \
	'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"load"}}')" 201
listrv() { curl -s "$S$1" | sed -n 's/^{"kind":"[A-Za-z]*List","apiVersion":"[^"]*","metadata":{"resourceVersion":"\([0-9]*\)".*/\1/p'; }
RV0=$(listrv /api/v1/pods)
# Each loader is one curl sending up to 20000 creates on a kept-alive connection;
# every answer it got (a created object, with its generated name) was
# acknowledged after its commit.
URL="$S/apis/coordination.k8s.io/v1/namespaces/load/leases"
for w in 1 2 3 4; do
	printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"generateName":"l-%s-"},"spec":{"holderIdentity":"w%s"}}' "$w" "$w" >"$T/lease.$w"
	yes "url = \"$URL\"" | head -n 20000 >"$T/urls.$w"
	curl -s -m 20 -X POST -H 'Content-Type: application/json' --data-binary @"$T/lease.$w" \
		-K "$T/urls.$w" >"$T/acked.$w" 2>/dev/null &
	echo $! >"$T/loader.$w.pid"
done
sleep 1.5
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=""
for w in 1 2 3 4; do wait "$(cat "$T/loader.$w.pid")" 2>/dev/null; done
rm -f "$T"/loader.*.pid
cat "$T"/acked.* 2>/dev/null | tr '{' '\n' | sed -n 's/.*"name":"\(l-[0-9]-[a-z0-9]*\)".*/\1/p' | sort -u >"$T/acked"
NACK=$(wc -l <"$T/acked")
if [ "$NACK" -gt 20 ]; then ok; else bad "crash: only $NACK writes acknowledged before kill -9"; fi
start "$PORT"
curl -s "$S/apis/coordination.k8s.io/v1/namespaces/load/leases" | tr '{' '\n' | \
	sed -n 's/.*"name":"\(l-[0-9]-[a-z0-9]*\)".*/\1/p' | sort -u >"$T/present"
NPRES=$(wc -l <"$T/present")
MISSING=$(comm -23 "$T/acked" "$T/present" | wc -l)
if [ "$MISSING" -eq 0 ]; then ok; else bad "crash: $MISSING of $NACK acknowledged leases lost"; fi
if [ "$NPRES" -ge "$NACK" ]; then ok; else bad "crash: $NPRES present < $NACK acknowledged"; fi
echo "crash recovery: $NACK acknowledged, $NPRES present after kill -9 and restart"
k get nodes; has restart-nodes "$T/out" "gpu-0"
k get queues.muster.io; has restart-crs "$T/out" "team-b"
k get job train; has restart-jobs "$T/out" "train"
# jobs/status keeps all but the spec, metadata included, as kube's
# jobStatusStrategy (muster dispatch writes its record and its condition
# in one such patch); a spec change through it is dropped
want job-status-meta "$(code PATCH /apis/batch/v1/namespaces/default/jobs/train/status application/strategic-merge-patch+json \
	'{"metadata":{"annotations":{"x.example/rec":"g1"}},"spec":{"parallelism":7},"status":{"conditions":[{"type":"Dispatched","status":"True","reason":"Dispatched","message":"m"}]}}')" 200
has job-status-meta-ann "$T/body" '"x.example/rec":"g1"'
# ... and its field manager owns the annotation it set, as kube records it
has job-status-meta-owner "$T/body" '"f:x.example/rec"'
has job-status-meta-cond "$T/body" '"type":"Dispatched"'
hasnt job-status-meta-spec "$T/body" '"parallelism":7'
RV1=$(listrv /api/v1/pods)
want watch-410 "$(code GET "/api/v1/pods?watch=1&resourceVersion=1&timeoutSeconds=1")" 200
has watch-410-event "$T/body" '"code":410'
if [ "$RV1" -gt "$RV0" ]; then ok; else bad "resourceVersion went back: $RV1 <= $RV0"; fi
curl -s -m 3 "$S/api/v1/pods?watch=1&resourceVersion=$RV0&timeoutSeconds=1" >"$T/w3"
if grep -q '"code":410' "$T/w3" || [ ! -s "$T/w3" ] || grep -q '"type"' "$T/w3"; then ok; else bad "watch after restart"; fi
curl -s -m 3 "$S/api/v1/pods?watch=1&resourceVersion=$RV1&timeoutSeconds=1" >"$T/w4"
hasnt watch-resume-current "$T/w4" '"code":410'

# --- client compatibility: names, defaulting, JSON patch, field validation,
# limits, propagation, future watches, protobuf bodies ------------------------
LONG=$(printf 'l%.0s' $(seq 1 200))
cat >"$T/long.yaml" <<EOT
apiVersion: v1
kind: Pod
metadata: {name: $LONG}
spec: {containers: [{name: c, image: x}]}
EOT
k apply -f "$T/long.yaml"; has name-200-chars "$T/out" "created"
k run Bad_Name --image=x; has name-invalid-422 "$T/out" 'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
want name-254-422 "$(code POST /api/v1/namespaces/default/pods application/json \
	"{\"metadata\":{\"name\":\"${LONG}${LONG}\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}")" 422
has name-254-cause "$T/body" '"field":"metadata.name"'
k create namespace bad.ns; has ns-label-rule "$T/out" "RFC 1123 label"
want no-kind-201 "$(code POST /api/v1/namespaces/default/pods application/json \
	'{"metadata":{"generateName":"gen-"},"spec":{"containers":[{"name":"c","image":"x"}]}}')" 201
has no-kind-defaulted "$T/body" '"kind":"Pod","apiVersion":"v1"'
has generate-name "$T/body" '"name":"gen-'
k patch pod "$LONG" --type=json -p '[{"op":"add","path":"/metadata/labels","value":{"a/b":"1"}},{"op":"replace","path":"/metadata/labels/a~1b","value":"2"},{"op":"copy","from":"/metadata/labels/a~1b","path":"/metadata/labels/c"},{"op":"move","from":"/metadata/labels/c","path":"/metadata/labels/d"},{"op":"test","path":"/spec/containers/0/image","value":"x"}]'
has json-patch "$T/out" "patched"
k get pod "$LONG" -o jsonpath='{.metadata.labels}'; has json-patch-result "$T/out" '{"a/b":"2","d":"2"}'
k patch pod "$LONG" --type=json -p '[{"op":"test","path":"/spec/containers/0/image","value":"y"}]'
has json-patch-test-fails "$T/out" "test: the value"
k patch pod "$LONG" --type=json -p '[{"op":"remove","path":"/metadata/labels/nope"}]'; has json-patch-remove-missing "$T/out" "does not exist"
want json-patch-not-array "$(code PATCH "/api/v1/namespaces/default/pods/$LONG" application/json-patch+json '{"op":"add"}')" 400
want json-patch-cr "$(code PATCH /apis/muster.io/v1alpha1/queues/team-a application/json-patch+json \
	'[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]')" 200
cat >"$T/typo.yaml" <<'EOT'
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec: {schedulername: x, containers: [{name: c, image: x}]}
EOT
k create -f "$T/typo.yaml"; has strict-default "$T/out" 'strict decoding error: unknown field "spec.schedulername"'
k create -f "$T/typo.yaml" --validate=warn; has warn-created "$T/out" "pod/typo created"
has warn-header "$T/out" 'Warning: unknown field "spec.schedulername"'
k get pod typo -o yaml; hasnt warn-pruned "$T/out" "schedulername"
want ignore-201 "$(code POST '/api/v1/namespaces/default/pods?fieldValidation=Ignore' application/json \
	'{"metadata":{"name":"typo2"},"spec":{"bogus":1,"containers":[{"name":"c","image":"x"}]}}')" 201
hasnt ignore-pruned "$T/body" "bogus"
want fv-bad-400 "$(code POST '/api/v1/namespaces/default/pods?fieldValidation=Loose' application/json '{}')" 400
python3 -c "
n = 2040
print('{\"apiVersion\":\"muster.io/v1alpha1\",\"kind\":\"Topology\",\"metadata\":{\"name\":\"deep\"},\"spec\":' + '{\"x\":' * n + '{}' + '}' * n + '}')" >"$T/deep.json"
want deep-400 "$(code POST /apis/muster.io/v1alpha1/topologies application/json "$(cat "$T/deep.json")")" 400
has deep-msg "$T/body" "nests more than 128 levels"
python3 -c "
import json
env = [{'name': 'E%d' % i, 'value': 'x' * 200000} for i in range(9)]
print(json.dumps({'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'big'}, 'spec': {'containers': [{'name': 'c', 'image': 'x', 'env': env}]}}))" >"$T/big.json"
curl -s -o "$T/body" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary @"$T/big.json" \
	"$S/api/v1/namespaces/default/pods" >"$T/code"
want big-413 "$(cat "$T/code")" 413
cat >"$T/job2.yaml" <<'EOT'
apiVersion: batch/v1
kind: Job
metadata: {name: orph}
spec: {parallelism: 2, template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}
EOT
jobpods() { [ "$("$KC" --kubeconfig "$T/data/kubeconfig" get pods -l job-name="$1" --no-headers 2>/dev/null | wc -l)" -eq "$2" ]; }
k apply -f "$T/job2.yaml"; wait_for orphan-job-pods 50 jobpods orph 2
k delete job orph --cascade=orphan; has orphan-deleted "$T/out" "deleted"
sleep 1
k get pods -l job-name=orph -o jsonpath='{.items[*].metadata.ownerReferences}'; hasnt orphan-no-owner "$T/out" "Job"
wait_for orphan-pods-kept 5 jobpods orph 2
k delete pods -l job-name=orph
k apply -f "$T/job2.yaml"; wait_for fg-job-pods 50 jobpods orph 2
k delete job orph --cascade=foreground; wait_for foreground-pods-gone 50 jobpods orph 0
k apply -f "$T/job2.yaml"; wait_for raw-job-pods 50 jobpods orph 2
curl -s -D "$T/hdr" -o /dev/null -X DELETE "$S/apis/batch/v1/namespaces/default/jobs/orph"
has job-default-orphan-warning "$T/hdr" "child pods are preserved by default"
want propagation-bad-422 "$(code DELETE '/api/v1/namespaces/default/pods/typo?propagationPolicy=Sideways')" 422
curl -s -m 8 "$S/api/v1/pods?watch=1&resourceVersion=99999999" >"$T/wf"
has watch-future-504 "$T/wf" '"code":504'
has watch-future-msg "$T/wf" "Too large resource version: 99999999"
k create namespace proto-ns; has protobuf-namespace "$T/out" "namespace/proto-ns created"
k create job proto-job --image=busybox -- sleep 1; has protobuf-job "$T/out" "job.batch/proto-job created"
k get job proto-job -o jsonpath='{.spec.template.spec.containers[0].command}'; has protobuf-job-command "$T/out" '\["sleep","1"\]'
k get nodes -o jsonpath='{.items[0].status.nodeInfo.bootID} {.items[0].status.nodeInfo.systemUUID}'
has node-info-ids "$T/out" '^[0-9a-f-]\{36\} [0-9a-f-]\{36\}$'

# --- ConfigMap, Secret, ServiceAccount, PriorityClass and priority admission -
k create configmap cm1 --from-literal=a=b; has configmap-create "$T/out" "configmap/cm1 created"
k get cm cm1; has configmap-table "$T/out" "cm1 .*1"
want configmap-bad-key-422 "$(code POST /api/v1/namespaces/default/configmaps application/json \
	'{"metadata":{"name":"cm2"},"data":{"a b":"x"}}')" 422
k create secret generic s1 --from-literal=pw=hunter2; has secret-create "$T/out" "secret/s1 created"
k get secret s1 -o jsonpath='{.type} {.data.pw}'; has secret-data "$T/out" "Opaque aHVudGVyMg=="
want secret-stringdata "$(code POST /api/v1/namespaces/default/secrets application/json \
	'{"metadata":{"name":"s2"},"stringData":{"k":"v"}}')" 201
has secret-stringdata-folded "$T/body" '"data":{"k":"dg=="}'
k create serviceaccount robot; has sa-create "$T/out" "serviceaccount/robot created"
k create priorityclass high --value=1000; has pc-create "$T/out" "created"
k create priorityclass low-default --value=5 --global-default --preemption-policy=Never; has pc-default "$T/out" "created"
k create priorityclass second-default --value=6 --global-default; has pc-one-default "$T/out" "Only one default can exist"
k patch priorityclass high --type=merge -p '{"value":7}'; has pc-value-immutable "$T/out" "may not be changed"
k run prio-hi --image=x --overrides='{"spec":{"priorityClassName":"high"}}'
k run prio-none --image=x
k get pod prio-hi prio-none -o 'jsonpath={range .items[*]}{.spec.priority}/{.spec.priorityClassName}/{.spec.preemptionPolicy} {end}'
has priority-admission "$T/out" "1000/high/PreemptLowerPriority 5/low-default/Never"
k run prio-bad --image=x --overrides='{"spec":{"priorityClassName":"nope"}}'; has priority-missing-403 "$T/out" 'forbidden: no PriorityClass with name nope was found'
k run prio-sys --image=x --overrides='{"spec":{"priorityClassName":"system-node-critical","priority":5}}'
has priority-given-403 "$T/out" "computed 2000001000 from the given PriorityClass name"
k delete priorityclass low-default

# --- deletecollection: DELETE on a collection (client-go's DeleteCollection) ---
# kubectl delete --all deletes one by one; the Python client's
# delete_collection_namespaced_pod and controllers send this request.
k create namespace dc
for i in 1 2 3 4 5; do k run "dc-a$i" -n dc --image=x --labels=app=a; done
for i in 1 2; do k run "dc-b$i" -n dc --image=x --labels=app=b; done
k run dc-other --image=x --labels=app=a
api -s -X DELETE -o "$T/body" "$S/api/v1/namespaces/dc/pods?labelSelector=app%3Da&dryRun=All"
k get pods -n dc --no-headers; want dc-dry-run-keeps "$(grep -c '^dc-' "$T/out")" 7
api -s -X DELETE -o "$T/body" "$S/api/v1/namespaces/dc/pods?labelSelector=app%3Da"
has dc-status "$T/body" '"status":"Success"'
k get pods -n dc -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"|"}{end}'
tr '|' '\n' <"$T/out" | grep -v '^$' | awk 'NF==1{print $1}' | sort | tr '\n' ' ' >"$T/left"
want dc-selector-only "$(cat "$T/left")" "dc-b1 dc-b2 "
k get pod dc-other -o 'jsonpath={.metadata.name}'; want dc-namespace-only "$(cat "$T/out")" dc-other
api -s -X DELETE -o "$T/body" "$S/api/v1/namespaces/dc/pods?gracePeriodSeconds=0"
k get pods -n dc --no-headers; want dc-all-gone "$(grep -c '^dc-' "$T/out")" 0
k delete pod dc-other --grace-period=0 --force

# --- TLS with a bearer token (a second server) --------------------------------
if command -v openssl >/dev/null 2>&1 && openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" \
	-out "$T/cert.pem" -days 2 -subj /CN=muster -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
	"$M" up --listen 127.0.0.1:0 --data "$T/tls" --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" \
		--quiet >"$T/tls.out" 2>"$T/tls.err" &
	TPID=$!
	i=0
	while [ "$i" -lt 100 ] && ! grep -q https "$T/tls.out" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
	TS=$(sed -n 's/.*on \(https[^ ]*\).*/\1/p' "$T/tls.out")
	"$KC" --kubeconfig "$T/tls/kubeconfig" get namespaces >"$T/out" 2>&1; has tls-kubectl "$T/out" "kube-system"
	want tls-no-token-401 "$(curl -sk -o "$T/body" -w '%{http_code}' "$TS/api/v1/pods")" 401
	kill -TERM "$TPID"; wait "$TPID" 2>/dev/null; TPID=""
else
	echo "apiserver.sh: openssl cannot make a certificate; TLS not tested"
fi

kill -TERM "$SPID"
i=0
while kill -0 "$SPID" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$SPID" 2>/dev/null; then bad "server did not stop on SIGTERM"; else ok; SPID=""; fi
if grep -qE 'ERROR: AddressSanitizer|runtime error|LeakSanitizer' "$T/up.err"; then bad "sanitizer report"; cat "$T/up.err"; else ok; fi
done_
