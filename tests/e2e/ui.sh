#!/bin/sh
# ui.sh - end-to-end tests of the live web UI served by `muster scheduler`
# against `muster up`: the listener's token (401 without it on /explain
# and /ui/api/, health and static files open), bad input to the JSON
# endpoints (unknown job or node, bad filters, huge page sizes, unknown
# endpoints), and a real browser (Debian's chromium, driven over the
# DevTools protocol by tests/e2e/ui_browser.js) that checks the queue names
# and job counts on the page against the Kubernetes API, a pending job's
# reason against /explain, and that no console error happened; it saves
# screenshots in build/ui-test/.
# Usage: sh tests/e2e/ui.sh PATH_TO_MUSTER.  Ends with "e2e ui: N passed,
# N failed".  Every wait is bounded; every process started is killed.
E2E_NAME=ui; E2E_FIXED=1; . "$(dirname "$0")/lib/common.sh"
UPID=""; SPID=""
on_exit() { for p in $SPID $UPID; do kill -9 "$p" 2>/dev/null; done; }
command -v curl >/dev/null 2>&1 || { bad "curl missing (scripts/install-deps.sh)"; done_; }

cat >"$T/cluster.yaml" <<'YAML'
apiVersion: muster.io/v1alpha1
kind: NodePool
metadata: {name: gpu}
spec:
  count: 4
  namePrefix: gpu-
  gpuModel: A100
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}
  topology:
    - {label: muster.io/rack, every: 2, prefix: rack-}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {deserved: 16}}}
---
apiVersion: muster.io/v1alpha1
kind: Queue
metadata: {name: team-b}
spec: {resources: {gpu: {deserved: 16}}}
YAML
up_start "$T/cluster.yaml"

# job NAME QUEUE PODS GPUS_PER_POD TYPE: a queue-labelled, suspended batch/v1 Job.
job() {
	api -sf -X POST -H 'Content-Type: application/json' "$S/apis/batch/v1/namespaces/default/jobs" -d "{
	  \"apiVersion\":\"batch/v1\",\"kind\":\"Job\",
	  \"metadata\":{\"name\":\"$1\",\"labels\":{\"muster.io/queue\":\"$2\"},\"annotations\":{\"muster.io/type\":\"$5\"}},
	  \"spec\":{\"suspend\":true,\"parallelism\":$3,\"completions\":$3,\"template\":{\"spec\":{
	    \"schedulerName\":\"muster\",\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"main\",\"image\":\"x\",
	    \"resources\":{\"requests\":{\"cpu\":\"2\"},\"limits\":{\"nvidia.com/gpu\":\"$4\"}}}]}}}}" >/dev/null
}
job train-a team-a 2 8 train
job infer-b team-b 1 4 inference
job small-b team-b 1 1 interactive
job huge-a team-a 8 8 train   # 64 GPUs of 32: waits

printf 'sekret-token-19\n' >"$T/token"
expect bad-token-file 2 "$M" scheduler --kubeconfig "$T/data/kubeconfig" --token-file "$T/nope"
has bad-token-file-msg "$T/err" "--token-file $T/nope"
"$M" scheduler --kubeconfig "$T/data/kubeconfig" --no-leader-elect --metrics :0 --token-file "$T/token" \
	--ui-history-step 1 --min-runtime 0 >"$T/sched.out" 2>"$T/sched.log" &
SPID=$!
U=""
i=0
while [ "$i" -lt 100 ] && [ -z "$U" ]; do
	U=$(sed -n 's/.*metrics on \(http:[^ ]*\)\/metrics.*/\1/p' "$T/sched.log" | head -n 1); sleep 0.1; i=$((i + 1))
done
case "$U" in http://127.0.0.1:*) ok ;; *) bad "the listener should bind 127.0.0.1 when no host is given: $U" ;; esac
wait_for scheduler-ready 100 curl -sf "$U/readyz"
has ui-address-logged "$T/sched.log" "ui on $U/ui/"
hasnt token-not-logged "$T/sched.log" "sekret-token-19"
TOK="Authorization: Bearer sekret-token-19"
# code NAME WANT PATH [CURL ARGS...]: the HTTP status of GET $U/PATH; body in $T/body.
code() {
	name=$1; want=$2; p=$3; shift 3
	got=$(curl -s -o "$T/body" -w '%{http_code}' "$@" "$U$p")
	[ "$got" = "$want" ] && ok || { bad "$name: $p answered $got, expected $want"; head -c 300 "$T/body"; echo; }
}
code healthz-open 200 /healthz
code metrics-open 200 /metrics
code ui-page-open 200 /ui/
has ui-page-html "$T/body" '<script src="/ui/app.js">'
code ui-js-open 200 /ui/app.js
code explain-needs-token 401 "/explain?job=default/huge-a"
code explain-wrong-token 401 "/explain?job=default/huge-a" -H "Authorization: Bearer nope"
code api-needs-token 401 /ui/api/summary
code api-wrong-scheme 401 /ui/api/summary -H "Authorization: Basic c2VrcmV0"
# every job known and placed, the big one waiting
jobs_in() { curl -sf -H "$TOK" "$U/ui/api/jobs?state=$1" | grep -q "\"total\":$2,"; }
wait_for three-running 150 jobs_in running 3
wait_for one-pending 50 jobs_in pending 1
code explain-with-token 200 "/explain?job=default/huge-a" -H "$TOK"
has explain-pending "$T/body" '"state":"pending"'

# --- bad input ------------------------------------------------------------
code unknown-job 404 "/ui/api/job?key=j:default/nope" -H "$TOK"
has unknown-job-msg "$T/body" "no job j:default/nope"
code job-no-key 400 "/ui/api/job" -H "$TOK"
code bad-state 400 "/ui/api/jobs?state=sleeping" -H "$TOK"
has bad-state-msg "$T/body" 'state: expected one of pending, running, finished, got \"sleeping\"'
code bad-sort 400 "/ui/api/jobs?sort=colour" -H "$TOK"
code bad-order 400 "/ui/api/jobs?order=up" -H "$TOK"
code huge-page 400 "/ui/api/jobs?limit=1000000" -H "$TOK"
has huge-page-msg "$T/body" "limit: expected an integer from 1 to 500"
code zero-page 400 "/ui/api/jobs?limit=0" -H "$TOK"
code text-page 400 "/ui/api/jobs?limit=ten" -H "$TOK"
code negative-offset 400 "/ui/api/jobs?offset=-1" -H "$TOK"
code overflow-offset 400 "/ui/api/jobs?offset=99999999999999999999" -H "$TOK"
code far-offset 200 "/ui/api/jobs?offset=1000" -H "$TOK"
has far-offset-empty "$T/body" '"items":[]'
code long-filter 400 "/ui/api/jobs?queue=$(printf 'q%.0s' $(seq 300))" -H "$TOK"
code unknown-queue-filter 200 "/ui/api/jobs?queue=nobody" -H "$TOK"
has unknown-queue-empty "$T/body" '"total":0,'
code bad-resource 400 "/ui/api/queues?res=gold" -H "$TOK"
code unknown-node 404 "/ui/api/node?name=gpu-99" -H "$TOK"
code huge-nodes-page 400 "/ui/api/nodes?limit=501" -H "$TOK"
code bad-events-limit 400 "/ui/api/events?limit=100000" -H "$TOK"
code unknown-endpoint 404 "/ui/api/secrets" -H "$TOK"
code unknown-asset 404 "/ui/../../etc/passwd" --path-as-is -H "$TOK"
code post-refused 405 "/ui/api/jobs" -X POST -H "$TOK"
code fleet-none 200 "/ui/api/fleet" -H "$TOK"
has fleet-none-msg "$T/body" '"fleet":false'
code paged 200 "/ui/api/jobs?limit=2&sort=name&order=asc" -H "$TOK"
has paged-first "$T/body" '"total":4,"offset":0,"limit":2,"items":[{"key":"j:default/huge-a"'
# the Job's pods appear once its controller made them and they were bound
devices_shown() { curl -sf -H "$TOK" "$U/ui/api/job?key=j:default/train-a" | grep -qF '"gpus":[0,1,2,3,4,5,6,7]'; }
wait_for job-devices-gpus 100 devices_shown
code stream 200 "/ui/api/stream" -H "$TOK" --max-time 2
has stream-tick "$T/body" "event: tick"

# --- a real browser -----------------------------------------------------------
if ! command -v node >/dev/null 2>&1; then
	bad "node missing: the browser test needs it (and chromium, from scripts/install-deps.sh)"
else
	mkdir -p build/ui-test
	if NODE_EXTRA_CA_CERTS="$T/data/tls.crt" node tests/e2e/ui_browser.js "$U" sekret-token-19 "$S" build/ui-test \
		"$(cat "$T/data/token")" >"$T/browser.out" 2>&1; then :; fi
	cat "$T/browser.out"
	P=$((P + $(grep -c '^ok ' "$T/browser.out")))
	F=$((F + $(grep -c '^FAIL ' "$T/browser.out")))
	grep -q '^browser done' "$T/browser.out" || bad "the browser test did not finish"
fi
kill "$SPID" 2>/dev/null
i=0; while [ "$i" -lt 100 ] && kill -0 "$SPID" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kill -0 "$SPID" 2>/dev/null && bad "the scheduler did not stop on SIGTERM (an open event stream?)" || ok
SPID=""
done_
